/**
 * Operations `extract`, `wait` and `verify` of the read faculty
 * `semantic-read` (issue 10 items 3 and 7; docs/semantic-reads.md), worker
 * side: which document answers, the document tag handshake, and the shape of
 * the value. The page side is lib/semantic-reads.ts in the `semantic` content
 * module, which owns the refs (so a ref from page_snapshot works here).
 *
 * Which document: with `ref`, the live document whose tag the ref carries
 * (any of the top and the first MAX_SNAPSHOT_FRAMES same-origin frames; none
 * left: `navigated`); without, the top document. A selector is matched inside
 * that document (under the ref's element when both are given), never across a
 * frame boundary.
 *
 * A wait whose document is replaced by a navigation (the module went with it)
 * is judged once more on the new top document for a URL condition (a full
 * navigation is a URL change too); otherwise it is `navigated`.
 */
import { err, ok, type Result } from '../../../../src/shared/result';
import { pickCondition, WAIT_TIMEOUT_MS, type Condition } from '../../../../src/shared/semantic-conditions';
import { MAX_SELECTOR_CHARS, selectorProblem } from '../../../../src/shared/semantic-select';
import { parseRef, REF_PATTERN, SNAPSHOT_BYTES, tagNumber, tagOf } from '../../../../src/shared/snapshot';
import type { SemanticCheck, SemanticExtract } from '../../../../src/shared/types';
import { redactText } from '../../../../src/shared/redact';
import { stripUrl } from '../../../../src/shared/url';
import type { ExtractMatch, SemanticReport, ToSemanticRead } from '../../lib/messages';
import { isAboutFrameUrl, type FrameInfo } from '../tabs';
import { askFrame, chromeDeps, MAX_SNAPSHOT_FRAMES, NO_RECEIVER, type SemanticDeps } from './semantic-read';

/** The operations this file adds to `semantic-read`. */
export const QUERY_OPERATIONS = ['extract', 'wait', 'verify'] as const;
/** Extra time the worker waits for a page's answer beyond the wait itself (ms). */
const ANSWER_GRACE_MS = 5_000;
/** A page's answer to a one-off read (extract, verify) within this (ms). */
const ONCE_TIMEOUT_MS = 10_000;

/** The effects (chrome calls), injectable for tests: the snapshot's, with an ask that takes the read messages. */
export interface QueryDeps extends Omit<SemanticDeps, 'ask'> {
  ask(tabId: number, frame: { frameId: number; documentId: string }, msg: ToSemanticRead, timeoutMs: number): Promise<Result<SemanticReport> | null>;
}

/**
 * The chrome effects, sharing the snapshot's one tag counter. Wrapped in arrows:
 * semantic-read.ts imports this module, so `chromeDeps` is read at call time, not
 * while the modules load.
 */
export const chromeQueryDeps: QueryDeps = {
  frames: (tabId) => chromeDeps.frames(tabId),
  inject: (tabId, ids) => chromeDeps.inject(tabId, ids),
  nextTag: () => chromeDeps.nextTag(),
  lastTag: () => chromeDeps.lastTag(),
  ask: (tabId, frame, msg, timeoutMs) => askFrame(tabId, frame, msg, timeoutMs),
};

const KEYS: Record<(typeof QUERY_OPERATIONS)[number], readonly string[]> = {
  extract: ['ref', 'selector', 'maxBytes'],
  wait: ['ref', 'selector', 'timeoutMs', 'text', 'textGone', 'state', 'valueEquals', 'valueContains', 'urlChanged', 'urlContains'],
  verify: ['ref', 'selector', 'text', 'textGone', 'state', 'valueEquals', 'valueContains', 'urlContains'],
};

/** `null` when `args` are what `operation` takes, otherwise why not (checked again in the page). */
export function checkQueryArgs(operation: string, args: Record<string, unknown>): string | null {
  const keys = KEYS[operation as keyof typeof KEYS];
  if (!keys) return `unknown operation ${operation}`;
  for (const k of Object.keys(args)) if (!keys.includes(k)) return `${operation} takes no argument ${JSON.stringify(k.slice(0, 64))}`;
  if (args.ref !== undefined && (typeof args.ref !== 'string' || !REF_PATTERN.test(args.ref))) return 'ref must be a ref from a snapshot (e.g. a12)';
  // A selector's grammar and a condition's redacted needle are judged by the operation itself, so that
  // their refusals carry their own codes (selector-refused, condition-redacted) in the receipt.
  if (args.selector !== undefined && (typeof args.selector !== 'string' || args.selector.length > MAX_SELECTOR_CHARS)) return `selector must be a string of at most ${MAX_SELECTOR_CHARS} characters`;
  if (operation === 'extract') {
    if (args.ref === undefined && args.selector === undefined) return 'extract needs a ref or a selector';
    const m = args.maxBytes;
    if (m !== undefined && (!Number.isSafeInteger(m) || (m as number) < SNAPSHOT_BYTES.min || (m as number) > SNAPSHOT_BYTES.max)) return `maxBytes must be an integer from ${SNAPSHOT_BYTES.min} to ${SNAPSHOT_BYTES.max}`;
    return null;
  }
  if (operation === 'wait') {
    const t = args.timeoutMs;
    if (t !== undefined && (!Number.isSafeInteger(t) || (t as number) < WAIT_TIMEOUT_MS.min || (t as number) > WAIT_TIMEOUT_MS.max)) return `timeoutMs must be an integer from ${WAIT_TIMEOUT_MS.min} to ${WAIT_TIMEOUT_MS.max}`;
  }
  const c = pickCondition(args, args.ref !== undefined || args.selector !== undefined, operation === 'wait');
  return c.ok || c.refusal ? null : c.message;
}

/** The refusal of a selector that does not parse (src/shared/semantic-select.ts), or null. */
function selectorRefusal(selector: string | undefined): Result<never> | null {
  const p = selector === undefined ? null : selectorProblem(selector);
  return p ? err('selector-refused', p) : null;
}

type Place = { top: FrameInfo; docs: FrameInfo[] };

/** The top document and the documents to ask (all readable ones for a ref, else the top). */
async function place(tabId: number, origin: string, ref: string | undefined, deps: QueryDeps): Promise<Result<Place>> {
  const frames = await deps.frames(tabId);
  const top = frames.find((f) => f.frameId === 0);
  if (!top) return err('no-document', 'the tab has no live top-level document');
  if (top.origin !== origin) return err('navigated', 'the tab is no longer at the shared origin', { topLeft: true });
  let docs = [top];
  if (ref !== undefined) {
    const r = parseRef(ref);
    if (!r) return err('bad-request', 'ref is not a ref');
    if (tagNumber(r.tag) > (await deps.lastTag())) return err('ref-unknown', `ref ${ref} was never given out`);
    docs = [top, ...frames.filter((f) => f.frameId !== 0 && f.origin === origin && !isAboutFrameUrl(f.url)).slice(0, MAX_SNAPSHOT_FRAMES)];
  }
  const injected = await deps.inject(tabId, docs.map((f) => f.documentId));
  if (!injected.has(top.documentId)) return err('no-document', 'the top document could not be read');
  return ok({ top, docs: docs.filter((f) => injected.has(f.documentId)) });
}

/** Ask the documents; the one that owns the target answers (others say not-mine). Errors of the owner pass through. */
async function askOwner(tabId: number, p: Place, msg: ToSemanticRead, timeoutMs: number, deps: QueryDeps, ref: string | undefined): Promise<{ f: FrameInfo; r: Result<SemanticReport> } | { gone: true } | Result<never>> {
  const answers = await Promise.all(p.docs.map(async (f) => ({ f, a: await deps.ask(tabId, f, msg, timeoutMs) })));
  for (const { f, a } of answers) {
    // No answer in time, or no module of ours there (the document was injected, then replaced): not the owner.
    if (!a || (!a.ok && a.error.code === NO_RECEIVER)) continue;
    if (a.ok && a.value.kind === 'not-mine') continue;
    return { f, r: a };
  }
  if (ref !== undefined) return err('navigated', `the document of ref ${ref} is no longer in this tab: take a new snapshot`);
  return { gone: true };
}

const base = (tabId: number, origin: string, p: Place, f: FrameInfo) => ({ tabId, origin, url: stripUrl(p.top.url), documentId: p.top.documentId, frameId: f.frameId, rootDocumentId: f.documentId });

/** `extract {ref?, selector?, maxBytes?}` on a tab whose shared origin is `origin`. */
export async function extractOf(tabId: number, origin: string, args: { ref?: string; selector?: string; maxBytes?: number }, deps: QueryDeps = chromeQueryDeps): Promise<Result<SemanticExtract>> {
  const refused = selectorRefusal(args.selector);
  if (refused) return refused;
  const p = await place(tabId, origin, args.ref, deps);
  if (!p.ok) return p;
  const maxBytes = args.maxBytes ?? SNAPSHOT_BYTES.default;
  const msg: ToSemanticRead = { type: 'echo:semantic:extract', maxBytes, ...(args.ref !== undefined ? { ref: args.ref } : {}), ...(args.selector !== undefined ? { selector: args.selector } : {}) };
  let got = await askOwner(tabId, p.value, msg, ONCE_TIMEOUT_MS, deps, args.ref);
  if ('f' in got && got.r.ok && got.r.value.kind === 'need-tag') got = await askOwner(tabId, { ...p.value, docs: [got.f] }, { ...msg, tag: tagOf(await deps.nextTag()) }, ONCE_TIMEOUT_MS, deps, args.ref);
  if (!('f' in got)) return 'gone' in got ? err('no-document', 'the top document did not answer') : got;
  const r = got.r;
  if (!r.ok) return err(r.error.code, r.error.message.slice(0, 512));
  const v = r.value;
  if (v.kind !== 'extract' || !Array.isArray(v.matches)) return err('bad-answer', 'the page did not answer an extract');
  if (v.origin !== origin) return err('no-document', 'the document has another (e.g. sandboxed, opaque) origin');
  return ok({
    ...base(tabId, origin, p.value, got.f),
    ...(args.ref !== undefined ? { ref: args.ref } : {}),
    ...(args.selector !== undefined ? { selector: args.selector } : {}),
    matches: v.matches.slice(0, 100) as ExtractMatch[],
    count: Number.isSafeInteger(v.count) ? v.count : v.matches.length,
    more: v.more === true,
    truncated: v.truncated === true,
    maxBytes,
  });
}

/** `wait` (timeoutMs > 0, default WAIT_TIMEOUT_MS.default) or `verify` (once): the condition over the view, with evidence. A wait that ends unmet is `wait-timeout`. */
export async function checkOf(
  tabId: number,
  origin: string,
  operation: 'wait' | 'verify',
  args: Record<string, unknown>,
  deps: QueryDeps = chromeQueryDeps,
): Promise<Result<SemanticCheck>> {
  const ref = args.ref as string | undefined;
  const selector = args.selector as string | undefined;
  const picked = pickCondition(args, ref !== undefined || selector !== undefined, operation === 'wait');
  if (!picked.ok) return err(picked.refusal ?? 'bad-request', picked.message);
  const refused = selectorRefusal(selector);
  if (refused) return refused;
  const condition: Condition = picked.condition;
  const timeoutMs = operation === 'wait' ? ((args.timeoutMs as number | undefined) ?? WAIT_TIMEOUT_MS.default) : 0;
  const p = await place(tabId, origin, ref, deps);
  if (!p.ok) return p;
  const msg: ToSemanticRead = { type: 'echo:semantic:check', condition, timeoutMs, ...(ref !== undefined ? { ref } : {}), ...(selector !== undefined ? { selector } : {}) };
  const started = Date.now();
  const got = await askOwner(tabId, p.value, msg, timeoutMs + ANSWER_GRACE_MS, deps, ref);
  const common = { ...(ref !== undefined ? { ref } : {}), ...(selector !== undefined ? { selector } : {}), condition, timeoutMs };
  if (!('f' in got)) {
    if (!('gone' in got)) return got;
    // The top document answered nothing: replaced by a navigation while waiting? A URL condition is judged on the new top.
    const now = (await deps.frames(tabId)).find((f) => f.frameId === 0);
    if (!now || now.documentId === p.value.top.documentId) return err('no-document', 'the top document did not answer');
    if (now.origin !== origin) return err('navigated', 'the tab is no longer at the shared origin', { topLeft: true });
    if (!('urlChanged' in condition) && !('urlContains' in condition)) return err('navigated', 'the page navigated to a new document while waiting: take a new snapshot');
    const url = redactText(stripUrl(now.url)).value;
    const met = 'urlChanged' in condition || url.includes(condition.urlContains);
    if (!met) return err('navigated', 'the page navigated to a new document whose URL does not hold the text: take a new snapshot');
    return ok({ tabId, origin, url: stripUrl(now.url), documentId: now.documentId, frameId: 0, rootDocumentId: now.documentId, ...common, met, evidence: { url, newDocument: true }, elapsedMs: Date.now() - started });
  }
  const r = got.r;
  if (!r.ok) return err(r.error.code, r.error.message.slice(0, 512));
  const v = r.value;
  if (v.kind !== 'check' || typeof v.met !== 'boolean') return err('bad-answer', 'the page did not answer a check');
  if (v.origin !== origin) return err('no-document', 'the document has another (e.g. sandboxed, opaque) origin');
  const elapsedMs = Number.isSafeInteger(v.elapsedMs) ? v.elapsedMs : Date.now() - started;
  if (operation === 'wait' && !v.met) return err('wait-timeout', `the condition (${Object.keys(condition)[0]}) did not hold within ${timeoutMs} ms`, { elapsedMs });
  const evidence = v.evidence && typeof v.evidence === 'object' ? v.evidence : {};
  return ok({ ...base(tabId, origin, p.value, got.f), ...common, met: v.met, evidence, elapsedMs });
}
