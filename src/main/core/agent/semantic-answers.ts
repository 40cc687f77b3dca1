/**
 * The console's side of the semantic reads beyond the snapshot (page_extract,
 * page_wait, page_verify; docs/semantic-reads.md): the argument schemas they
 * share, and the checks of the extension's answers. An answer crossed the link:
 * each field is checked, and every piece of page text is redacted once more
 * here (the extension redacted it; the console does not rely on it).
 */
import { createHash } from 'node:crypto';
import { redact, redactText } from '../../../shared/redact';
import { CONDITION_STATES, MAX_NEEDLE_CHARS, WAIT_TIMEOUT_MS } from '../../../shared/semantic-conditions';
import { MAX_SELECTOR_CHARS } from '../../../shared/semantic-select';
import { utf8Length } from '../../../shared/bounds';
import type { ExtractMatch, SemanticCheck, SemanticExtract } from '../../../shared/types';
import { isCount, isObj, isStr } from './answer-checks';

/** Characters of a selector or a condition's text a receipt keeps. */
const RECEIPT_TEXT_CHARS = 256;

const receiptText = (v: unknown) => redactText(String(v).slice(0, RECEIPT_TEXT_CHARS)).value;

/**
 * What a read's `requested` receipt says it was asked (review finding 8): the
 * ref and the selector (redacted with src/shared/redact.ts, cut to
 * RECEIPT_TEXT_CHARS), and the condition: its kind, a state as is, and a
 * text needle as its SHA-256 (hex, of the UTF-8 needle) and length, never
 * the needle itself (an agent guessing a secret, `text: "hunter2"`, would
 * otherwise leave the right guess in the ledger). Shape:
 * `{ref?, selector?, condition?: {kind, state?} | {kind, sha256, chars} | {kind: 'urlChanged'}}`.
 */
export function readRequestDetail(args: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (typeof args.ref === 'string') out.ref = receiptText(args.ref);
  if (typeof args.selector === 'string') out.selector = receiptText(args.selector);
  for (const kind of Object.keys(CONDITION_PROPERTIES)) {
    const v = args[kind];
    if (typeof v !== 'string') continue;
    out.condition = kind === 'state' ? { kind, state: receiptText(v) } : { kind, sha256: createHash('sha256').update(v, 'utf8').digest('hex'), chars: v.length };
  }
  if (args.urlChanged === true) out.condition = { kind: 'urlChanged' };
  return out;
}

/** `ref` and `selector`, as the three tools take them. */
export const TARGET_PROPERTIES = {
  ref: { type: 'string', pattern: '^[a-z]{1,6}[1-9][0-9]{0,8}$', description: 'A ref from page_snapshot (without the #): that element (and the document that holds it).' },
  selector: {
    type: 'string',
    minLength: 1,
    maxLength: MAX_SELECTOR_CHARS,
    description:
      'A selector over the snapshot\'s view (with ref: inside that element): tag, #id, .class, :role(button), :type(email), :name("…"), :text("…"), ' +
      'states (:checked, :unchecked, :selected, :disabled, :enabled, :focused, :expanded, :collapsed, :pressed, :required, :readonly, :invalid), ' +
      'descendant (space) and child (>) combinators, alternatives (,). No attribute selectors ([…] is refused). Blocked and hidden elements never match.',
  },
} as const;

const needle = (description: string) => ({ type: 'string', minLength: 1, maxLength: MAX_NEEDLE_CHARS, description }) as const;

/** The condition keys (exactly one per call; src/shared/semantic-conditions.ts). */
export const CONDITION_PROPERTIES = {
  text: needle('The text appears in the view (in the target, or in the document without one); a case-sensitive substring of one line.'),
  textGone: needle('The text is not in the view.'),
  state: { type: 'string', enum: [...CONDITION_STATES], description: 'A state of the target (ref, or a selector matching one element; present/absent/visible/hidden count matches).' },
  valueEquals: needle("The target's value, as the view shows it, equals this (whitespace collapsed)."),
  valueContains: needle("The target's value, as the view shows it, contains this."),
  urlContains: needle('The URL (stripped, as the snapshot shows it) contains this.'),
} as const;

/** page_wait's own: `urlChanged` and the bound. */
export const WAIT_PROPERTIES = {
  urlChanged: { type: 'boolean', const: true, description: 'The URL differs from the one when the wait began (pushState, replaceState, a fragment, or a new document).' },
  timeoutMs: {
    type: 'integer',
    minimum: WAIT_TIMEOUT_MS.min,
    maximum: WAIT_TIMEOUT_MS.max,
    description: `How long to wait (ms; default ${WAIT_TIMEOUT_MS.default}, at most ${WAIT_TIMEOUT_MS.max}).`,
  },
} as const;

type Checked<V> = { ok: true; value: V } | { ok: false; message: string };

const clean = (s: string) => redactText(s).value;

function place(v: Record<string, unknown>, tabId: number): string | null {
  if (v.tabId !== tabId) return 'tabId differs from the request';
  for (const k of ['url', 'origin', 'documentId', 'rootDocumentId'] as const) if (!isStr(v[k])) return `${k} is not a string`;
  if (!isCount(v.frameId)) return 'frameId is not a count';
  if (v.ref !== undefined && !isStr(v.ref, 64)) return 'ref is not a string';
  if (v.selector !== undefined && !isStr(v.selector, MAX_SELECTOR_CHARS)) return 'selector is not a string';
  return null;
}

const placeOf = (v: Record<string, unknown>, tabId: number) => ({
  tabId,
  origin: v.origin as string,
  url: v.url as string,
  documentId: v.documentId as string,
  frameId: v.frameId as number,
  rootDocumentId: v.rootDocumentId as string,
  ...(typeof v.ref === 'string' ? { ref: v.ref } : {}),
  ...(typeof v.selector === 'string' ? { selector: v.selector } : {}),
});

/**
 * Check an `extract` answer and redact its page text again; matches past
 * `maxBytes` of JSON (after this redaction) are dropped and `truncated` set.
 */
export function checkExtract(v: unknown, tabId: number, maxBytes: number): Checked<SemanticExtract> {
  if (!isObj(v)) return { ok: false, message: 'not an object' };
  const p = place(v, tabId);
  if (p) return { ok: false, message: p };
  if (!Array.isArray(v.matches) || v.matches.length > 100) return { ok: false, message: 'matches is not a list of at most 100' };
  if (!isCount(v.count) || typeof v.more !== 'boolean' || typeof v.truncated !== 'boolean') return { ok: false, message: 'count, more or truncated malformed' };
  const matches: ExtractMatch[] = [];
  let truncated = v.truncated;
  let bytes = 2;
  for (const m of v.matches as unknown[]) {
    if (!isObj(m) || !isStr(m.tag, 64) || !isStr(m.text, maxBytes * 2)) return { ok: false, message: 'a match is malformed' };
    const out: ExtractMatch = { tag: m.tag, text: clean(m.text) };
    if (isStr(m.ref, 64)) out.ref = m.ref;
    if (isStr(m.role, 64)) out.role = m.role;
    if (isStr(m.name, 4096)) out.name = clean(m.name);
    if (isStr(m.value, 65536)) out.value = clean(m.value);
    if (Array.isArray(m.states) && m.states.every((x) => isStr(x, 32))) out.states = (m.states as string[]).slice(0, 16);
    const b = utf8Length(JSON.stringify(out)) + 1;
    if (bytes + b > maxBytes) {
      truncated = true;
      break;
    }
    bytes += b;
    matches.push(out);
  }
  return { ok: true, value: { ...placeOf(v, tabId), matches, count: v.count, more: v.more, truncated, maxBytes } };
}

/** Check a `wait`/`verify` answer; the evidence is redacted again (it holds view text). */
export function checkCheck(v: unknown, tabId: number): Checked<SemanticCheck> {
  if (!isObj(v)) return { ok: false, message: 'not an object' };
  const p = place(v, tabId);
  if (p) return { ok: false, message: p };
  if (typeof v.met !== 'boolean' || !isCount(v.elapsedMs) || !isCount(v.timeoutMs)) return { ok: false, message: 'met, elapsedMs or timeoutMs malformed' };
  if (!isObj(v.condition) || !isObj(v.evidence)) return { ok: false, message: 'condition or evidence is not an object' };
  if (utf8Length(JSON.stringify(v.evidence)) > 16_384) return { ok: false, message: 'evidence is too large' };
  return {
    ok: true,
    value: {
      ...placeOf(v, tabId),
      condition: redact(v.condition).value as Record<string, unknown>,
      met: v.met,
      evidence: redact(v.evidence).value as Record<string, unknown>,
      elapsedMs: v.elapsedMs,
      timeoutMs: v.timeoutMs,
    },
  };
}
