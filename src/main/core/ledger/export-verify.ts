/**
 * Verify a JSON Lines export of the ledger (issue 12 item 2; docs/ledger.md,
 * "What verifies means for an export"), as `npm run ledger -- verify <export.jsonl>`
 * does. Per receipt line, in order:
 * - its hash is SHA-256(prevHash || canonical receipt) by the rule of its format
 *   (chain.ts: `payloadHash` instead of `detail` when it carries one), and a kept
 *   payload matches its payloadHash (an erased one is null);
 * - seq rises; a row right after the previous one (seq + 1) must carry its hash as
 *   prevHash (seq 1: the genesis value): otherwise that is a BREAK;
 * - seqs skipped (rows the filter left out, before the first, after the last up to
 *   the head the header names) are GAPS: reported, never a failure.
 * Then the header's signed checkpoint: its signature, with the public key the
 * caller holds, and, when the export holds receipt `count`, that receipt's hash
 * equals the signed head hash. A whole-range export (no gaps) is thus tied to the
 * signed head; a filtered one proves each row, each unbroken run, and whether the
 * signed head is among its rows.
 * With a public key held, the unsigned-tail rule of the ledger (checkpoints.ts) holds
 * for the export too, since its header takes the head and the newest checkpoint in one
 * read: no outcome receipt after the checkpoint (or in an export without one), at most
 * MAX_UNSIGNED_TAIL receipts between it and the head, and the head not below it. So an
 * export whose checkpoint was removed, or replaced by an older genuine one, with the
 * receipts after it rewritten and re-chained, fails; and receipts cut below the signed
 * count are counted as missing, never "no gaps".
 */
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { canonicalJson } from '../../../shared/canonical';
import type { ExportHeader } from '../../../shared/ledger-export';
import type { SignedCheckpoint } from '../../../shared/checkpoint';
import { CHAINED_FIELDS, GENESIS_PREV_HASH, chainHash, payloadHashOf } from './chain';
import { MAX_UNSIGNED_TAIL, checkpointSignatureProblem } from './checkpoints';
import { isOutcomeEvent } from '../../../shared/receipt';

/** Most gaps listed one by one in a report (the rest are counted). */
export const MAX_LISTED_GAPS = 100;

/** The result of verifying an export. `ok`: no break and the checkpoint (if any) verifies; gaps never make it fail. */
export interface ExportVerifyReport {
  ok: boolean;
  /** Receipt lines read. */
  rows: number;
  firstSeq: number | null;
  lastSeq: number | null;
  /** The header's head (null: an export without a header, a plain JSON Lines dump of receipts). */
  head: { count: number; headHash: string } | null;
  /** Seq ranges absent from the export, inclusive, the first MAX_LISTED_GAPS of them. */
  gaps: Array<{ from: number; to: number }>;
  /** Number of gap ranges and of receipts missing in them. */
  gapCount: number;
  missing: number;
  /** The first broken row: a hash or payload that does not match, a broken link, seqs out of order, a bad line. */
  firstBroken?: { seq: number | null; line: number; reason: string };
  checkpoint: {
    /** `verified`: signature good and, when its receipt is in the export, its hash matches. */
    status: 'verified' | 'absent' | 'no-public-key' | 'failed';
    count?: number;
    headHash?: string;
    /** Whether receipt `count` is in the export (and so the export's rows up to it are tied to the signed head only when there is no gap before it). */
    anchored?: boolean;
    message: string;
  };
  /** Receipts in the export after the checkpoint's count (not covered by a signature). */
  unsignedTail: number;
  /** One line for a person. */
  summary: string;
}

const HEX64 = /^[0-9a-f]{64}$/;
/** The fields of a Receipt line: those its hash covers, its hash, and erasedAt (retention's mark). */
const RECEIPT_KEYS: ReadonlySet<string> = new Set<string>([...CHAINED_FIELDS, 'hash', 'erasedAt']);

function recomputeHash(r: Record<string, unknown>): string {
  const chained: Record<string, unknown> = {};
  for (const f of CHAINED_FIELDS) chained[f] = r[f] ?? null;
  if (chained.operation === null && chained.subjectHash === null) {
    delete chained.operation;
    delete chained.subjectHash;
  }
  if (typeof r.payloadHash === 'string') delete chained.detail;
  else delete chained.payloadHash;
  return chainHash(String(r.prevHash), canonicalJson(chained));
}

/** Why receipt `r` (a parsed line) is not intact by itself, or null. */
function rowProblem(r: Record<string, unknown>): string | null {
  if (!Number.isSafeInteger(r.seq) || (r.seq as number) < 1) return 'seq is not a positive integer';
  // A key the hash does not cover would ride along unchecked ("every hash intact" must cover every field).
  const extra = Object.keys(r).find((k) => !RECEIPT_KEYS.has(k));
  if (extra !== undefined) return `${JSON.stringify(extra)} is not a receipt field (no hash covers it)`;
  if (typeof r.hash !== 'string' || !HEX64.test(r.hash) || typeof r.prevHash !== 'string' || !HEX64.test(r.prevHash)) return 'hash or prevHash is not 64 lowercase hex';
  let hash: string;
  try {
    hash = recomputeHash(r);
  } catch (e) {
    return `cannot be canonicalised (${e instanceof Error ? e.message : String(e)})`;
  }
  if (hash !== r.hash) return 'hash does not match the receipt content (a field was altered)';
  if (r.payloadHash !== undefined) {
    if (typeof r.payloadHash !== 'string' || !HEX64.test(r.payloadHash)) return 'payloadHash is not 64 lowercase hex';
    if (r.erasedAt !== undefined) {
      if (!Number.isSafeInteger(r.erasedAt)) return 'erasedAt is not an integer';
      if (r.detail !== null) return 'marked erased, but the detail is still there';
    } else if (payloadHashOf(canonicalJson(r.detail)) !== r.payloadHash) {
      return 'the detail does not match its payloadHash (the payload was altered)';
    }
  } else if (r.erasedAt !== undefined) {
    return 'marked erased, but its hash covers the detail itself';
  }
  return null;
}

/**
 * Verify an export read from `input` (a stream of its bytes, UTF-8).
 * @param publicKey base64 of the raw Ed25519 public key the checkpoint must be signed with (null: none held).
 * @returns the report; never throws for bad content (a bad line is a break), only for a failing stream.
 */
export async function verifyExport(input: Readable, publicKey: string | null): Promise<ExportVerifyReport> {
  const gaps: Array<{ from: number; to: number }> = [];
  let gapCount = 0;
  let missing = 0;
  const gap = (from: number, to: number): void => {
    if (to < from) return;
    gapCount++;
    missing += to - from + 1;
    if (gaps.length < MAX_LISTED_GAPS) gaps.push({ from, to });
  };
  let header: ExportHeader | null = null;
  let rows = 0;
  let firstSeq: number | null = null;
  let prev: { seq: number; hash: string } | null = null;
  let firstBroken: ExportVerifyReport['firstBroken'];
  let cpRowHash: string | null = null;
  /** The first outcome receipt after the header's checkpoint count (0 without one): the tail rule. */
  let outcomeAfter: { seq: number; event: string } | null = null;
  let lineNo = 0;
  const lines = createInterface({ input, crlfDelay: Infinity });
  for await (const text of lines) {
    lineNo++;
    if (firstBroken) continue; // drain the stream; the first break is the report
    if (text.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      firstBroken = { seq: null, line: lineNo, reason: 'not a JSON line' };
      continue;
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      firstBroken = { seq: null, line: lineNo, reason: 'not a JSON object' };
      continue;
    }
    const o = value as Record<string, unknown>;
    if ('echoLedgerExport' in o) {
      if (lineNo !== 1 || rows > 0) firstBroken = { seq: null, line: lineNo, reason: 'a header line after the first line' };
      else header = o.echoLedgerExport as ExportHeader;
      continue;
    }
    const problem = rowProblem(o);
    const seq = Number.isSafeInteger(o.seq) ? (o.seq as number) : null;
    if (problem) {
      firstBroken = { seq, line: lineNo, reason: problem };
      continue;
    }
    const s = seq as number;
    if (prev === null) {
      firstSeq = s;
      if (s === 1 && o.prevHash !== GENESIS_PREV_HASH) {
        firstBroken = { seq: s, line: lineNo, reason: 'prevHash is not the genesis value' };
        continue;
      }
      gap(1, s - 1);
    } else if (s <= prev.seq) {
      firstBroken = { seq: s, line: lineNo, reason: `seq ${s} out of order after ${prev.seq}` };
      continue;
    } else if (s === prev.seq + 1) {
      if (o.prevHash !== prev.hash) {
        firstBroken = { seq: s, line: lineNo, reason: `prevHash does not match the hash of receipt ${prev.seq}` };
        continue;
      }
    } else {
      gap(prev.seq + 1, s - 1);
    }
    const cp = header?.checkpoint;
    if (cp && s === cp.count) cpRowHash = o.hash as string;
    const cpCount = cp && Number.isSafeInteger(cp.count) ? cp.count : 0;
    if (!outcomeAfter && s > cpCount && typeof o.event === 'string' && isOutcomeEvent(o.event)) outcomeAfter = { seq: s, event: o.event };
    prev = { seq: s, hash: o.hash as string };
    rows++;
  }
  const head = header && typeof header.head?.count === 'number' ? header.head : null;
  if (!firstBroken && head && prev && prev.seq > head.count) {
    firstBroken = { seq: prev.seq, line: lineNo, reason: `receipt ${prev.seq} lies beyond the head the header names (${head.count})` };
  }
  let checkpoint = checkCheckpoint(header?.checkpoint ?? null, publicKey, cpRowHash, firstBroken !== undefined);
  // Receipts up to a signed count were in the ledger: absent ones are missing even when the header's head says less.
  const signedCount = checkpoint.status === 'verified' ? (checkpoint.count as number) : 0;
  const end = Math.max(head?.count ?? 0, signedCount);
  if (!firstBroken && prev && end > prev.seq) gap(prev.seq + 1, end);
  if (!firstBroken && !prev && end > 0) gap(1, end);
  if (!firstBroken && publicKey && (checkpoint.status === 'verified' || checkpoint.status === 'absent')) {
    const tail = tailProblem(checkpoint.status === 'verified' ? signedCount : null, head?.count ?? null, prev?.seq ?? 0, outcomeAfter);
    if (tail) checkpoint = { ...checkpoint, status: 'failed', message: tail };
  }
  const cpCount = checkpoint.count ?? 0;
  const lastSeq = prev?.seq ?? null;
  const unsignedTail = lastSeq !== null && lastSeq > cpCount && checkpoint.status === 'verified' ? lastSeq - cpCount : 0;
  const ok = !firstBroken && (checkpoint.status === 'verified' || checkpoint.status === 'absent');
  const gapText = gapCount === 0 ? 'no gaps' : `${gapCount} gap${gapCount === 1 ? '' : 's'} (${missing} receipts not in the export)`;
  const summary = firstBroken
    ? `BROKEN at ${firstBroken.seq === null ? `line ${firstBroken.line}` : `seq ${firstBroken.seq}`}: ${firstBroken.reason}`
    : `${ok ? 'ok' : 'FAILED'}: ${rows} receipts, every hash intact, ${gapText}; ${checkpoint.message}`;
  return { ok, rows, firstSeq, lastSeq, head, gaps, gapCount, missing, ...(firstBroken ? { firstBroken } : {}), checkpoint, unsignedTail, summary };
}

/**
 * The ledger's unsigned-tail rule on an export, with a key held (checkpoints.ts): `signed`
 * is the verified checkpoint's count (null: the export carries none, so nothing is covered).
 * @returns why the export fails it, or null.
 */
function tailProblem(signed: number | null, headCount: number | null, lastSeq: number, outcome: { seq: number; event: string } | null): string | null {
  const covered = signed ?? 0;
  const none = signed === null ? 'the export carries no signed checkpoint, though this key signs every outcome of its ledger (removed, or an export without a header: verify the ledger file itself); ' : '';
  if (signed !== null && headCount !== null && headCount < signed) {
    return `count below checkpoint: the header's head (#${headCount}) lies below its signed checkpoint (#${signed}): receipts after #${headCount} were cut`;
  }
  if (outcome) {
    return `unsigned tail: ${none}receipt #${outcome.seq} (${outcome.event}, an outcome) is covered by no signed checkpoint${signed === null ? '' : ` (the header's is #${signed})`}; the console signs every outcome in the same commit`;
  }
  const end = Math.max(headCount ?? 0, lastSeq);
  if (end - covered > MAX_UNSIGNED_TAIL) {
    return `unsigned tail: ${none}${end - covered} receipts follow the signed checkpoint (#${covered}), more than the bound of ${MAX_UNSIGNED_TAIL}`;
  }
  return null;
}

function checkCheckpoint(cp: SignedCheckpoint | null, publicKey: string | null, rowHash: string | null, broken: boolean): ExportVerifyReport['checkpoint'] {
  if (!cp) return { status: 'absent', message: 'the export carries no signed checkpoint' };
  const base = { count: cp.count, headHash: cp.headHash };
  if (!publicKey) return { status: 'no-public-key', ...base, message: 'the export carries a signed checkpoint but no public key was given to check it' };
  const sig = checkpointSignatureProblem(cp, publicKey);
  if (sig) return { status: 'failed', ...base, message: `signature: the signed checkpoint at #${cp.count} is not valid: ${sig}` };
  if (rowHash === null) {
    return {
      status: 'verified', ...base, anchored: false,
      message: `signed checkpoint #${cp.count} verifies; receipt #${cp.count} is not in the export${broken ? '' : ' (filtered out), so its rows are not tied to the signed head'}`,
    };
  }
  if (rowHash !== cp.headHash) {
    return { status: 'failed', ...base, anchored: true, message: `signature: receipt #${cp.count} does not have the head hash its signed checkpoint recorded` };
  }
  return { status: 'verified', ...base, anchored: true, message: `signed checkpoint #${cp.count} verifies and receipt #${cp.count} carries its head hash` };
}
