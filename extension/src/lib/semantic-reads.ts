/**
 * The semantic reads beyond the snapshot, page side (issue 10 items 3 and 7;
 * docs/semantic-reads.md): `extract` (the view of a ref's or a selector's
 * elements) and `check` (a wait or verify condition, once or until it holds
 * or the time is up). Runs in the `semantic` content module
 * (content/semantic.ts), which owns the document's refs.
 *
 * Everything is read over the view the snapshot shows (lib/semantic-select-dom.ts):
 * names, values and text redacted, hidden parts absent, blocked surfaces never
 * matched; a ref naming a blocked element is `target-blocked`; a condition on a
 * value the view redacts is refused (src/shared/semantic-conditions.ts).
 * Reads the DOM only; changes nothing.
 */
import { utf8Length } from '../../../src/shared/bounds';
import { redactText } from '../../../src/shared/redact';
import { err, ok, type Result } from '../../../src/shared/result';
import { evaluateCondition, pickCondition, WAIT_TIMEOUT_MS, type Condition, type ConditionFacts, type TargetFacts } from '../../../src/shared/semantic-conditions';
import { parseSelector, SelectorError, type Selector } from '../../../src/shared/semantic-select';
import { plainPieces, viewStrings } from '../../../src/shared/snapshot-lines';
import { SNAPSHOT_BYTES } from '../../../src/shared/snapshot';
import { stripUrl } from '../../../src/shared/url';
import type { ExtractMatch, SemanticReport, ToSemanticRead } from './messages';
import { CONTAINER_ROLES, INTERACTIVE_ROLES, nameOf, roleOf, statesOf, valueOf } from './semantic-roles';
import { deepActiveElement } from './semantic-roles';
import { blockReason, hasNameLine, readBudget, rendered, selectIn, viewTextOf, ViewNodes } from './semantic-select-dom';
import type { NodeBudget } from './semantic-walk';

/** What the reads need of the document's refs (content/semantic.ts). */
export interface DocRefs {
  /** The document's tag; null before the worker handed one. */
  tag(): string | null;
  /** Take the tag the worker hands (only when the document has none). */
  takeTag(tag: string): void;
  /** The element of a ref of this document: `not-mine` (another document's tag), `unknown` (never given), `stale` (left the DOM). */
  resolve(ref: string): { el: Element } | { miss: 'not-mine' | 'unknown' | 'stale' };
  /** The element's ref (made on first sight). */
  refFor(el: Element): string;
}

/** The document's URL as the view shows it: stripped (src/shared/url.ts) and redacted. */
export function viewUrl(): string {
  return redactText(stripUrl(String(location.href))).value;
}

const here = () => ({ origin: String(self.origin), url: String(location.href) });

function parseSel(source: string | undefined): Selector | undefined | Result<never> {
  if (source === undefined) return undefined;
  try {
    return parseSelector(source);
  } catch (e) {
    if (e instanceof SelectorError) return err('selector-refused', e.message);
    throw e;
  }
}

/** The scope element of a ref, or the document's body; a Result when the read must end (not-mine is a report). */
function scopeOf(ref: string | undefined, refs: DocRefs, allowStale: boolean): { el: Element | null } | Result<SemanticReport> {
  if (ref === undefined) return { el: document.body ?? document.documentElement };
  const r = refs.resolve(ref);
  if ('miss' in r) {
    if (r.miss === 'not-mine') return ok({ kind: 'not-mine', tag: refs.tag() ?? '' });
    if (r.miss === 'unknown') return err('ref-unknown', `no element of this document was given ref ${ref}`);
    if (allowStale) return { el: null };
    return err('ref-stale', `the element of ref ${ref} has left the page: take a new snapshot`);
  }
  const why = blockReason(r.el);
  if (why) return err('target-blocked', `ref ${ref} names a ${why === 'private' ? 'page-marked private' : 'blocked'} element: reads never match it`);
  return { el: r.el };
}

/** `extract`: the matches' own lines and the plain text of their subtrees, within `maxBytes` of JSON. */
export function extract(m: Extract<ToSemanticRead, { type: 'echo:semantic:extract' }>, refs: DocRefs): Result<SemanticReport> {
  const sel = parseSel(m.selector);
  if (sel && 'ok' in sel) return sel;
  if (refs.tag() === null) {
    if (m.ref !== undefined) return ok({ kind: 'not-mine', tag: '' });
    if (typeof m.tag !== 'string' || !/^[a-z]{1,6}$/.test(m.tag)) return ok({ kind: 'need-tag' });
    refs.takeTag(m.tag);
  }
  const scope = scopeOf(m.ref, refs, false);
  if ('ok' in scope) return scope;
  const root = scope.el as Element;
  if (m.ref !== undefined && !rendered(root)) return err('target-hidden', `the element of ref ${m.ref} is not shown`);
  const maxBytes = Number.isSafeInteger(m.maxBytes) ? Math.min(Math.max(m.maxBytes, SNAPSHOT_BYTES.min), SNAPSHOT_BYTES.max) : SNAPSHOT_BYTES.default;
  // One node budget for the whole request: the scan, its :text() walks and every match's text.
  const budget = readBudget();
  const picked = sel ? selectIn(root, sel, new ViewNodes(document, budget)) : { elements: [root], more: false, cut: false };
  const focused = deepActiveElement(document);
  const matches: ExtractMatch[] = [];
  let bytes = 2;
  let truncated = false;
  for (const el of picked.elements) {
    const role = roleOf(el);
    const mt: ExtractMatch = { tag: el.localName, text: '' };
    if (role) mt.role = role;
    // Only what the element's line shows: a paragraph or cell has no line of its own (its title is never shown).
    if (hasNameLine(role)) {
      const name = redactText(nameOf(el, role)).value;
      if (name) mt.name = name;
      const v = valueOf(el, role);
      if (v !== undefined && v !== '') mt.value = redactText(v).value;
      const st = statesOf(el, role, el === focused);
      if (st.length) mt.states = st;
      // As in the snapshot: an option of a <select> gets no ref (the select is typed by option label).
      if ((INTERACTIVE_ROLES.has(role) || CONTAINER_ROLES.has(role)) && !(role === 'option' && el.closest('select'))) mt.ref = refs.refFor(el);
    }
    const room = maxBytes - bytes - utf8Length(JSON.stringify(mt)) - 1;
    if (room < 16) {
      truncated = true;
      break;
    }
    const v = viewTextOf(el, room, refs, budget);
    let t = plainPieces(v.text).join('\n');
    // JSON escapes can make the text longer than its UTF-8 bytes: cut until it fits.
    while (t && utf8Length(JSON.stringify(t)) > room) t = t.slice(0, Math.floor(t.length * 0.8));
    if (v.cut || t.length < plainPieces(v.text).join('\n').length) truncated = true;
    mt.text = t;
    bytes += utf8Length(JSON.stringify(mt)) + 1;
    matches.push(mt);
    if (truncated) break;
  }
  return ok({ kind: 'extract', matches, count: picked.elements.length, more: picked.more, truncated: truncated || picked.cut, ...here() });
}

/** The view facts of one element. */
function targetFacts(el: Element, needText: boolean, focused: Element | null, budget: NodeBudget): TargetFacts {
  const role = roleOf(el);
  const present = el.isConnected;
  const f: TargetFacts = { present, visible: present && rendered(el), states: role ? statesOf(el, role, el === focused) : el === focused ? ['focused'] : [], valueRedacted: false, text: [] };
  const v = role ? valueOf(el, role) : undefined;
  if (v !== undefined) {
    const r = redactText(v);
    f.value = r.value;
    f.valueRedacted = r.redacted;
  }
  if (needText && f.visible) f.text = viewStrings(viewTextOf(el, undefined, undefined, budget).text);
  return f;
}

/** One observation of the view for `c`, or the Result that ends the check. */
function observe(m: Extract<ToSemanticRead, { type: 'echo:semantic:check' }>, c: Condition, sel: Selector | undefined, refs: DocRefs, startUrl: string): ConditionFacts | Result<SemanticReport> {
  const isText = 'text' in c || 'textGone' in c;
  const scope = scopeOf(m.ref, refs, true);
  if ('ok' in scope) return scope;
  const focused = deepActiveElement(document);
  const facts: ConditionFacts = { targets: [], targeted: m.ref !== undefined || sel !== undefined, text: [], viewCut: false, url: viewUrl(), startUrl };
  if (scope.el === null) {
    // A ref whose element left the page: absent (and hidden); for any other condition it is stale.
    if ('state' in c && (c.state === 'absent' || c.state === 'hidden')) facts.targets = [{ present: false, visible: false, states: [], valueRedacted: false, text: [] }];
    else return err('ref-stale', `the element of ref ${m.ref} has left the page: take a new snapshot`);
    return facts;
  }
  // One node budget per observation: the scan, its :text() walks and every target's text.
  const budget = readBudget();
  if (sel) {
    const s = selectIn(scope.el, sel, new ViewNodes(document, budget));
    facts.targets = s.elements.map((el) => targetFacts(el, isText, focused, budget));
    facts.viewCut = s.cut || budget.left < 0;
  } else if (m.ref !== undefined) {
    facts.targets = [targetFacts(scope.el, isText, focused, budget)];
    facts.viewCut = budget.left < 0;
  } else if (isText) {
    const v = viewTextOf(scope.el, undefined, undefined, budget);
    facts.text = viewStrings(v.text);
    facts.viewCut = v.cut;
  }
  return facts;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * `check`: evaluate the condition now, and (timeoutMs > 0) again until it holds or
 * the time is up. Re-checks at most every 100 ms, spaced to four times the
 * cost of one check when longer (a large page is not walked in a tight loop).
 * Answers `check {met, evidence, elapsedMs}`, or the refusal of the condition.
 */
export async function check(m: Extract<ToSemanticRead, { type: 'echo:semantic:check' }>, refs: DocRefs): Promise<Result<SemanticReport>> {
  const timeoutMs = Number.isSafeInteger(m.timeoutMs) ? Math.min(Math.max(m.timeoutMs, 0), WAIT_TIMEOUT_MS.max) : 0;
  const hasTarget = m.ref !== undefined || m.selector !== undefined;
  const picked = pickCondition((m.condition ?? {}) as Record<string, unknown>, hasTarget, timeoutMs > 0);
  if (!picked.ok) return err(picked.refusal ?? 'bad-request', picked.message);
  const sel = parseSel(m.selector);
  if (sel && 'ok' in sel) return sel;
  if (m.ref !== undefined && refs.tag() === null) return ok({ kind: 'not-mine', tag: '' });
  const started = performance.now();
  const startUrl = viewUrl();
  for (;;) {
    const t0 = performance.now();
    const facts = observe(m, picked.condition, sel, refs, startUrl);
    if ('ok' in facts) return facts;
    const e = evaluateCondition(picked.condition, facts);
    if (e.kind === 'refused') return err(e.code, e.message);
    const now = performance.now();
    const elapsedMs = Math.round(now - started);
    if (e.kind === 'met' || elapsedMs >= timeoutMs) return ok({ kind: 'check', met: e.kind === 'met', evidence: e.evidence, elapsedMs, ...here() });
    await sleep(Math.min(timeoutMs - elapsedMs, Math.max(100, 4 * (now - t0))));
  }
}
