/**
 * Pure checks on page tools: the discovery limits of src/shared/limits.ts and
 * the flags that mark suspicious page text. Used twice on purpose: by the
 * content script (so an oversized page never produces an oversized message)
 * and by the service worker (which validates what a content script says
 * before trusting it, docs/design.md, "Conventions" §2).
 *
 * Page text is UNTRUSTED and is never rewritten here: a suspicious description
 * is flagged so the person sees it as data, not obeyed, and not "cleaned"
 * (cleaning would make the approved text differ from what the page declared).
 */
import { LIMITS, jsonDepth, utf8Bytes } from '../../../src/shared/limits';
import { nameSkeleton } from '../../../src/shared/tool-name';
import { CanonicalizationError, canonicalJson, descriptorHashInput } from '../../../src/shared/canonical';
import type { BlockReason, DiscoveryViolation, ToolAnnotations } from '../../../src/shared/types';

/**
 * A tool as the content script read it from `document.modelContext.getTools()`
 * (WebMCP draft, `ModelContext.getTools()`; docs/browser-facts.md, "WebMCP:
 * listing tools" for Chromium 156's shapes),
 * with plain-data fields only. Properties are read one by one: from Chrome 160
 * tools are interface objects that JSON.stringify to `{}`
 * (developer.chrome.com/docs/ai/webmcp/updates).
 */
export interface RawTool {
  name: string;
  title: string;
  description: string;
  inputSchema: unknown;
  /** `undefined` for declarative form tools (docs/browser-facts.md, "WebMCP: listing tools"), `null` from Chrome 160 when empty. */
  annotations?: ToolAnnotations | null;
  origin: string;
  kind: 'imperative' | 'declarative';
  /**
   * A `<form toolname>` with this name holds a password field: `type=password`, one masked with CSS,
   * or one whose words say password (a "show password" toggle made it type=text; semantic-roles.ts
   * passwordField), through shadow roots too (formHoldsPassword).
   */
  passwordField: boolean;
  /** Such a form holds a field whose `autocomplete` or own words name a credential, a one-time code or card data (semantic-roles.ts fieldBlocked). */
  credentialField?: boolean;
}

/** A tool that passed the limits, with what the person must see about it. */
/** JSON-clean copy of page data (drops functions, undefined; a throwing getter or a cycle gives `undefined`). */
function plain(v: unknown): unknown {
  if (v === undefined || v === null || typeof v !== 'object') return v;
  try {
    const text = JSON.stringify(v);
    return text === undefined ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A string field of a listed tool: strings as they are, null/undefined as '', anything else through String(). */
const textOf = (v: unknown): string => (typeof v === 'string' ? v : v == null ? '' : String(v));

/**
 * The RawTool of one tool as `document.modelContext.getTools()` lists it (WebMCP draft; every field
 * UNTRUSTED page data, read once): what discovery (content/webmcp.ts) and the ladder check
 * (lib/semantic-ladder.ts) both hand to `inspectTool`.
 * @param t the listed tool; `kind`, `passwordField` and `credentialField` are the caller's (discovery knows the forms).
 */
export function rawToolOf(
  t: { name?: unknown; title?: unknown; description?: unknown; inputSchema?: unknown; annotations?: unknown; origin?: unknown },
  kind: (annotations: ToolAnnotations | undefined) => RawTool['kind'],
  passwordField: boolean,
  credentialField = false,
): RawTool {
  const annotations = t.annotations == null ? undefined : (plain(t.annotations) as ToolAnnotations | undefined);
  const raw: RawTool = {
    name: typeof t.name === 'string' ? t.name : String(t.name),
    title: textOf(t.title),
    description: textOf(t.description),
    inputSchema: typeof t.inputSchema === 'string' ? t.inputSchema : plain(t.inputSchema ?? {}),
    origin: typeof t.origin === 'string' ? t.origin : String(t.origin),
    kind: kind(annotations),
    passwordField,
    ...(credentialField ? { credentialField: true } : {}),
  };
  if (annotations !== undefined) raw.annotations = annotations;
  return raw;
}

export interface InspectedTool {
  tool: RawTool;
  /** The exact canonical JSON that `descriptorHash` is computed over. */
  canonical: string;
  blocked?: BlockReason;
  flags: string[];
}

export type InspectOutcome = { ok: true; value: InspectedTool } | { ok: false; violation: Omit<DiscoveryViolation, 'frameId'> };

/** A page-given name, cut for a violation report (types.ts: 128 chars). */
export function reportName(name: unknown): string {
  return typeof name === 'string' ? name.slice(0, 128) : String(typeof name);
}

/**
 * Check one tool against LIMITS, in a fixed order: name pattern, title length
 * (UTF-16 units), description size (UTF-8 bytes), schema size (UTF-8 bytes of
 * its JSON), schema depth, canonical JSON, origin. The first failure is the
 * reported reason and the tool is not listed (its text may be too large to
 * carry). A tool that passes but is a form holding a password field is listed
 * with `blocked: 'password-field'`: the browser itself turns the password into
 * an ordinary string parameter (docs/browser-facts.md, "WebMCP: declarative
 * tools"), so refusing it is ours; one holding a credential, one-time-code or
 * card field, with `blocked: 'credential-field'` (the semantic path's rule).
 * @param expectedOrigin the frame's origin; a tool registered by another origin is a violation.
 */
export function inspectTool(raw: RawTool, expectedOrigin: string): InspectOutcome {
  const name = raw?.name;
  const fail = (reason: DiscoveryViolation['reason'], detail?: string): InspectOutcome => ({
    ok: false,
    violation: detail === undefined ? { reason, name: reportName(name) } : { reason, name: reportName(name), detail },
  });
  if (typeof name !== 'string' || !LIMITS.toolNamePattern.test(name)) return fail('invalid-name');
  const title = raw.title ?? '';
  if (typeof title !== 'string') return fail('invalid-title');
  if (title.length > LIMITS.maxTitleChars) return fail('title-too-long', `${title.length} chars > ${LIMITS.maxTitleChars}`);
  const description = raw.description ?? '';
  if (typeof description !== 'string') return fail('invalid-description');
  const descBytes = utf8Bytes(description);
  if (descBytes > LIMITS.maxDescriptionBytes) return fail('description-too-long', `${descBytes} bytes > ${LIMITS.maxDescriptionBytes}`);
  let schemaText: string;
  try {
    schemaText = typeof raw.inputSchema === 'string' ? raw.inputSchema : JSON.stringify(raw.inputSchema ?? {});
  } catch {
    return fail('not-canonicalizable', 'inputSchema has no JSON form');
  }
  const schemaBytes = utf8Bytes(schemaText ?? '');
  if (schemaBytes > LIMITS.maxSchemaBytes) return fail('schema-too-large', `${schemaBytes} bytes > ${LIMITS.maxSchemaBytes}`);
  const schemaValue = descriptorHashInput({ name, origin: '', inputSchema: raw.inputSchema }).inputSchema;
  if (jsonDepth(schemaValue) > LIMITS.maxSchemaDepth) return fail('schema-too-deep', `deeper than ${LIMITS.maxSchemaDepth}`);
  if (raw.annotations != null && (typeof raw.annotations !== 'object' || Array.isArray(raw.annotations))) {
    return fail('not-canonicalizable', 'annotations is not an object');
  }
  let canonical: string;
  try {
    canonical = canonicalJson(descriptorHashInput(raw));
  } catch (e) {
    return fail('not-canonicalizable', e instanceof CanonicalizationError ? e.message : 'no canonical form');
  }
  if (raw.origin !== expectedOrigin) return fail('origin-mismatch', 'the tool was registered by another origin than its frame');
  const flags = textFlags([name, title, description, ...schemaStrings(schemaValue)]);
  const value: InspectedTool = { tool: raw, canonical, flags };
  if (raw.passwordField) value.blocked = 'password-field';
  else if (raw.credentialField === true) value.blocked = 'credential-field';
  return { ok: true, value };
}

// ---- flags -------------------------------------------------------------------------

/**
 * Phrases that try to speak to the agent instead of describing a tool
 * ("prompt injection"). Matching is deliberately broad: a false flag costs a
 * glance, a missed one may cost an action the person did not mean.
 */
const INSTRUCTION_PATTERNS: RegExp[] = [
  /\b(ignore|disregard|forget|override)\b[^.\n]{0,40}\b(previous|prior|above|earlier|all|any|other|your)\b[^.\n]{0,30}\b(instructions?|prompts?|messages?|rules|directions|guidelines|context)\b/i,
  /\bsystem\s*prompt\b/i,
  /\b(new|updated|real|actual|hidden|secret)\s+instructions?\b/i,
  /\byou\s+(are|must)\s+now\b/i,
  /\b(do\s+not|don'?t|never)\s+(tell|inform|show|mention|reveal)\b[^.\n]{0,30}\b(user|person|human)\b/i,
  /\bwithout\s+(asking|telling|confirm\w*)\b/i,
  /<\/?\s*(system|assistant|instructions?|im_start|im_end)\b[^>]*>/i,
  /\[\/?INST\]|<\|im_(start|end)\|>|\bBEGIN\s+SYSTEM\b/i,
  /\b(as|you\s+are)\s+an?\s+(ai|assistant|agent|llm|language\s+model)\b/i,
  // Role labels that fake a conversation turn: "SYSTEM: ...", "(Assistant: ...".
  /(^|[\n(\[<!-])\s*(system|assistant|developer)\s*:/i,
  // Claims about approval, addressed to the agent.
  /\b(pre-?approved|already\s+approved|auto-?approve\w*)\b/i,
  /\bapprove\w*\s+(\w+\s+){0,3}automatically\b/i,
  /\b(skip|bypass)\s+(the\s+|any\s+|all\s+)?(confirmation|approval|review)s?\b/i,
  /\b(approval|confirmation)\s+is\s+not\s+(required|needed|necessary)\b/i,
  /\bdo\s+not\s+ask\b/i,
  /\bignore\s+(the\s+)?(user|person|human)\b/i,
  // Requests to put secrets into arguments.
  /\b(include|send|provide|enter|add|paste)\b[^.\n]{0,60}\b(card\s*number|cvv|cvc|password|passcode|social\s+security|ssn|one-time\s+code|2fa\s+code|private\s+key)\b/i,
];

const ZERO_WIDTH = /[\u200B-\u200D\u2060-\u2064\uFEFF\u180E\u00AD]/;
const BIDI_CONTROL = /[\u202A-\u202E\u2066-\u2069\u200E\u200F\u061C]/;
const CONTROL_CHARS = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/;
const TAG_CHARS = /[\u{E0000}-\u{E007F}]/u; // Unicode "tag" characters: invisible ASCII smuggling
const HTML_COMMENT = /<!--|-->/;
const INVISIBLE_ALL = /[\u200B-\u200D\u2060-\u2064\uFEFF\u180E\u00AD\u202A-\u202E\u2066-\u2069\u200E\u200F\u061C]/g;
const TAG_ALL = /[\u{E0000}-\u{E007F}]/gu;
const LATIN = /\p{Script=Latin}/u;
const LOOKALIKE_SCRIPTS = /[\p{Script=Cyrillic}\p{Script=Greek}\p{Script=Armenian}\p{Script=Cherokee}]/u;

/**
 * Flags for untrusted page text, each naming what was seen:
 * `hidden-instructions` (phrases addressed to the agent), `zero-width`,
 * `bidi-control` (Unicode bidirectional overrides, CVE-2021-42574 "Trojan
 * Source"), `control-chars`, `tag-chars`, `html-comment`, `mixed-script`
 * (Latin mixed with look-alike letters from Cyrillic, Greek...). The text itself
 * is never changed.
 */
export function textFlags(texts: readonly string[]): string[] {
  const flags = new Set<string>();
  for (const t of texts) {
    if (!t) continue;
    // Also read the text as a model would: invisible characters dropped, tag characters decoded to ASCII.
    const visible = t.replace(INVISIBLE_ALL, '').replace(TAG_ALL, (c) => String.fromCodePoint((c.codePointAt(0) ?? 0xe0000) - 0xe0000));
    if (INSTRUCTION_PATTERNS.some((p) => p.test(t) || p.test(visible))) flags.add('hidden-instructions');
    if (ZERO_WIDTH.test(t)) flags.add('zero-width');
    if (BIDI_CONTROL.test(t)) flags.add('bidi-control');
    if (CONTROL_CHARS.test(t)) flags.add('control-chars');
    if (TAG_CHARS.test(t)) flags.add('tag-chars');
    if (HTML_COMMENT.test(t)) flags.add('html-comment');
    for (const word of t.split(/[\s\p{P}]+/u)) {
      if (LATIN.test(word) && LOOKALIKE_SCRIPTS.test(word)) {
        flags.add('mixed-script');
        break;
      }
    }
  }
  return [...flags].sort();
}

/** Every string (keys and values) of a JSON schema, to scan property descriptions too. Bounded by the schema limits. */
export function schemaStrings(schema: unknown): string[] {
  const out: string[] = [];
  const walk = (v: unknown, depth: number): void => {
    if (depth > LIMITS.maxSchemaDepth + 1) return;
    if (typeof v === 'string') out.push(v);
    else if (Array.isArray(v)) v.forEach((x) => walk(x, depth + 1));
    else if (v && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        out.push(k);
        walk(x, depth + 1);
      }
    }
  };
  walk(schema, 0);
  return out;
}

export { nameSkeleton } from '../../../src/shared/tool-name';

/**
 * Indexes of names that are confusable with another, different name in the
 * same list (same skeleton). Exact duplicates across frames are not
 * confusables: the frame tells them apart, and invocation requires exactly one.
 */
export function confusableIndexes(names: readonly string[]): Set<number> {
  const bySkeleton = new Map<string, number[]>();
  names.forEach((n, i) => {
    const s = nameSkeleton(n);
    const list = bySkeleton.get(s) ?? [];
    list.push(i);
    bySkeleton.set(s, list);
  });
  const out = new Set<number>();
  for (const list of bySkeleton.values()) {
    const distinct = new Set(list.map((i) => names[i]));
    if (distinct.size > 1) list.forEach((i) => out.add(i));
  }
  return out;
}

// ---- message bounds ---------------------------------------------------------------

/**
 * Drop items from the end of `items` until `measure()` (UTF-8 bytes of the
 * whole message) is within `maxBytes`; each dropped item is reported through
 * `onDrop`. Items are removed whole: a tool is never cut in the middle.
 * @returns how many items were dropped.
 */
export function boundMessage<T>(items: T[], measure: () => number, maxBytes: number, onDrop: (item: T) => void): number {
  let dropped = 0;
  while (items.length > 0 && measure() > maxBytes) {
    onDrop(items.pop() as T);
    dropped += 1;
  }
  return dropped;
}
