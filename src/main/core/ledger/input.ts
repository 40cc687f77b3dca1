/**
 * Validation of what callers hand to `Ledger.append`, and the bounding and
 * redaction of a receipt's free-form `detail`. A bad input throws
 * LedgerInputError naming the field: receipts come from our own code (broker,
 * bridge, console), so a bad one is a bug to surface, not data to guess at.
 */
import { canonicalJson } from '../../../shared/canonical';
import { cursorParts, type CursorKind } from '../../../shared/cursor';
import { LIMITS } from '../../../shared/limits';
import { FACULTIES, RECEIPT_EVENTS, type Actor, type Faculty, type ReceiptEvent, type ReceiptInput } from '../../../shared/receipt';
import { redact } from '../../../shared/redact';

/** Thrown for a malformed receipt input, query, cursor or checkpoint. `code` is stable. */
export class LedgerInputError extends Error {
  readonly code = 'invalid-receipt';
  constructor(message: string) {
    super(message);
    this.name = 'LedgerInputError';
  }
}

/**
 * The (time, seq) a page cursor of `kind` names (the codec: src/shared/cursor.ts).
 * @throws LedgerInputError `<what> is not one this ledger issued` for anything else (another
 *   kind's cursor, a non-string, a seq below 1, numbers past 2^53).
 */
export function decodeCursor(kind: CursorKind, cursor: unknown, what: string): { time: number; seq: number } {
  const parts = cursorParts(kind, cursor);
  if (!parts) throw new LedgerInputError(`${what} is not one this ledger issued`);
  return parts;
}

/** Longest accepted string field (requestId, origin, documentId, toolName), in UTF-16 code units. */
export const MAX_FIELD_CHARS = 2048;
/** Longest accepted actor name or version, in UTF-16 code units. */
export const MAX_ACTOR_CHARS = 256;

const FACULTY_SET: ReadonlySet<string> = new Set<string>(FACULTIES);
const EVENT_SET: ReadonlySet<string> = new Set(RECEIPT_EVENTS);
const ACTOR_KINDS: Record<Actor['kind'], true> = { agent: true, person: true, extension: true, console: true };
const INPUT_KEYS: ReadonlySet<string> = new Set<keyof ReceiptInput>([
  'requestId', 'event', 'faculty', 'origin', 'tabId', 'frameId', 'documentId', 'toolName',
  'descriptorHash', 'argumentsHash', 'operation', 'subjectHash', 'actor', 'detail',
]);
const HASH_RE = /^[0-9a-f]{64}$/;
/** A receipt's `operation`: 1 to 64 characters of [a-z0-9-] ('invoke', 'discover', 'click', …). */
export const OPERATION_RE = /^[a-z0-9-]{1,64}$/;
// Buffer.byteLength counts without encoding into a new array (limits.ts's utf8Bytes does; this is per append).
const utf8Bytes = (s: string): number => Buffer.byteLength(s, 'utf8');

/** Whether `e` is one of RECEIPT_EVENTS. */
export function isReceiptEvent(e: unknown): e is ReceiptEvent {
  return typeof e === 'string' && EVENT_SET.has(e);
}

/** A validated input, ready to be chained: strings well-formed, absent values null, actor and detail as canonical JSON text. */
export interface NormalisedInput {
  requestId: string | null;
  event: ReceiptEvent;
  faculty: Faculty;
  origin: string | null;
  tabId: number | null;
  frameId: number | null;
  documentId: string | null;
  toolName: string | null;
  descriptorHash: string | null;
  argumentsHash: string | null;
  operation: string | null;
  subjectHash: string | null;
  actorJson: string;
  detailJson: string;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
}

// SQLite stores text as UTF-8, which cannot hold a lone surrogate: it would come
// back as U+FFFD and no longer match its hash. Replace it before hashing, so the
// stored text is the hashed text (and `canonicalize` refuses lone surrogates anyway).
// (String.prototype.toWellFormed exists in Node 20 but not in this project's ES2023 lib.)
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
function wellFormed(s: string): string {
  LONE_SURROGATE.lastIndex = 0;
  return LONE_SURROGATE.test(s) ? s.replace(LONE_SURROGATE, '\uFFFD') : s;
}

function optString(input: Record<string, unknown>, key: string, max = MAX_FIELD_CHARS): string | null {
  const v = input[key];
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string') throw new LedgerInputError(`receipt ${key} must be a string or null, got ${typeof v}`);
  if (v.length > max) throw new LedgerInputError(`receipt ${key} is ${v.length} characters, more than ${max}`);
  return wellFormed(v);
}

function optInt(input: Record<string, unknown>, key: string): number | null {
  const v = input[key];
  if (v === undefined || v === null) return null;
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw new LedgerInputError(`receipt ${key} must be an integer or null, got ${String(v)}`);
  return v;
}

function optHash(input: Record<string, unknown>, key: string): string | null {
  const v = input[key];
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string' || !HASH_RE.test(v)) throw new LedgerInputError(`receipt ${key} must be 64 lowercase hex characters or null`);
  return v;
}

function optOperation(input: Record<string, unknown>): string | null {
  const v = input.operation;
  if (v === undefined || v === null) return null;
  if (typeof v !== 'string' || !OPERATION_RE.test(v)) {
    throw new LedgerInputError('receipt operation must be 1 to 64 characters of [a-z0-9-] or null');
  }
  return v;
}

/** An actor's fields (src/shared/receipt.ts Actor); an agent's carry its token's id and its self-declared client name (issue 9 item 2). */
const ACTOR_FIELDS: ReadonlySet<string> = new Set(['kind', 'name', 'version', 'tokenId', 'clientName']);

// Actors repeat (a few agents, the person, the console): reuse their canonical text.
const actorCache = new Map<string, string>();
const ACTOR_CACHE_MAX = 256;

function actorJson(v: unknown): string {
  if (!isPlainObject(v)) throw new LedgerInputError('receipt actor must be an object {kind, name?, version?, tokenId?, clientName?}');
  for (const k of Object.keys(v)) {
    if (!ACTOR_FIELDS.has(k)) throw new LedgerInputError(`receipt actor has an unknown field "${k}"`);
  }
  if (typeof v.kind !== 'string' || !Object.hasOwn(ACTOR_KINDS, v.kind)) {
    throw new LedgerInputError(`receipt actor.kind must be one of ${Object.keys(ACTOR_KINDS).join(', ')}`);
  }
  const actor: Actor = { kind: v.kind as Actor['kind'] };
  for (const k of ['name', 'version', 'tokenId', 'clientName'] as const) {
    const s = optString(v, k, MAX_ACTOR_CHARS);
    if (s !== null) actor[k] = s;
  }
  const key = JSON.stringify([actor.kind, actor.name ?? null, actor.version ?? null, actor.tokenId ?? null, actor.clientName ?? null]); // injective, unlike a joined string
  let json = actorCache.get(key);
  if (json === undefined) {
    json = canonicalJson(actor);
    if (actorCache.size >= ACTOR_CACHE_MAX) actorCache.clear();
    actorCache.set(key, json);
  }
  return json;
}

/**
 * Marker stored instead of a detail whose canonical JSON exceeds
 * LIMITS.maxReceiptDetailBytes: `{"$truncated": {"bytes": <original UTF-8 bytes>,
 * "preview": <the longest prefix of the canonical text that fits>}}`.
 */
export const TRUNCATION_KEY = '$truncated';

/**
 * The stored form of a receipt's `detail`, as canonical JSON text of at most
 * `maxBytes` UTF-8 bytes:
 * 1. `undefined` becomes null;
 * 2. likely secrets are replaced (src/shared/redact.ts, `redact`);
 * 3. reduced to plain JSON data as JSON.stringify does it (Dates become ISO
 *    strings, NaN and ±Infinity become null, functions and undefined properties
 *    are dropped), except that BigInt becomes its decimal string and lone
 *    surrogates become U+FFFD: a receipt is never refused for its detail;
 * 4. RFC 8785 canonical JSON; if longer than `maxBytes`, replaced by the
 *    TRUNCATION_KEY marker.
 * @returns `{json, redacted, truncated}`.
 */
export function boundedDetail(detail: unknown, maxBytes: number = LIMITS.maxReceiptDetailBytes): { json: string; redacted: boolean; truncated: boolean } {
  if (detail === undefined || detail === null) return { json: 'null', redacted: false, truncated: false };
  const r = redact(detail);
  const plainText = JSON.stringify(r.value, (_k, v: unknown) => {
    if (typeof v === 'bigint') return v.toString();
    if (typeof v === 'string') return wellFormed(v);
    return v;
  }) as string | undefined;
  const json = canonicalJson(plainText === undefined ? null : (JSON.parse(plainText) as unknown));
  const bytes = utf8Bytes(json);
  if (bytes <= maxBytes) return { json, redacted: r.redacted, truncated: false };
  return { json: truncationMarker(json, bytes, maxBytes), redacted: r.redacted, truncated: true };
}

function truncationMarker(json: string, bytes: number, maxBytes: number): string {
  const make = (k: number): string => {
    let preview = json.slice(0, k);
    const last = preview.charCodeAt(preview.length - 1);
    if (last >= 0xd800 && last <= 0xdbff) preview = preview.slice(0, -1); // never split a surrogate pair
    return canonicalJson({ [TRUNCATION_KEY]: { bytes, preview } });
  };
  // Largest prefix whose marker fits: the marker's size grows with k.
  let lo = 0;
  let hi = Math.min(json.length, maxBytes);
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (utf8Bytes(make(mid)) <= maxBytes) lo = mid;
    else hi = mid - 1;
  }
  return make(lo);
}

/**
 * Validate a ReceiptInput and normalise it for storage.
 * Rules: a plain object with only ReceiptInput's fields; `event` in RECEIPT_EVENTS;
 * `faculty` one of Faculty; `requestId` a string or null; origin, documentId,
 * toolName strings (≤ MAX_FIELD_CHARS) or absent; tabId, frameId safe integers or
 * absent; descriptorHash, argumentsHash, subjectHash 64 lowercase hex or absent;
 * operation 1 to 64 characters of [a-z0-9-] (OPERATION_RE) or absent; `actor`
 * `{kind, name?, version?}` with kind agent|person|extension|console; detail
 * anything (see `boundedDetail`).
 * @throws LedgerInputError naming the first bad field.
 */
export function normaliseInput(input: unknown): NormalisedInput {
  if (!isPlainObject(input)) throw new LedgerInputError('receipt input must be an object');
  for (const k of Object.keys(input)) {
    if (!INPUT_KEYS.has(k)) {
      throw new LedgerInputError(`receipt input has an unknown field "${k}" (the ledger assigns seq, id, time and hashes)`);
    }
  }
  if (!isReceiptEvent(input.event)) throw new LedgerInputError(`receipt event must be one of RECEIPT_EVENTS, got ${JSON.stringify(input.event) ?? 'undefined'}`);
  if (typeof input.faculty !== 'string' || !FACULTY_SET.has(input.faculty)) {
    throw new LedgerInputError(`receipt faculty must be one of ${FACULTIES.join(', ')}, got ${JSON.stringify(input.faculty) ?? 'undefined'}`);
  }
  if (input.requestId !== null && typeof input.requestId !== 'string') {
    throw new LedgerInputError('receipt requestId must be a string or null');
  }
  return {
    requestId: optString(input, 'requestId'),
    event: input.event,
    faculty: input.faculty as Faculty,
    origin: optString(input, 'origin'),
    tabId: optInt(input, 'tabId'),
    frameId: optInt(input, 'frameId'),
    documentId: optString(input, 'documentId'),
    toolName: optString(input, 'toolName'),
    descriptorHash: optHash(input, 'descriptorHash'),
    argumentsHash: optHash(input, 'argumentsHash'),
    operation: optOperation(input),
    subjectHash: optHash(input, 'subjectHash'),
    actorJson: actorJson(input.actor),
    detailJson: boundedDetail(input.detail).json,
  };
}
