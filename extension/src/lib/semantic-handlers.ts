/**
 * The `semantic` content module's answers to the mutation messages
 * (lib/semantic-messages.ts; issue 10 items 1, 4, 5, 6). The module
 * (content/semantic.ts) hands in its refs, so a ref resolves to the very
 * element the snapshot gave it. Each answer is a Result; nothing throws across.
 */
import { err, ok, type Result } from '../../../src/shared/result';
import { redactText } from '../../../src/shared/redact';
import { isFingerprint, isSemanticOperation, sameFingerprint, semanticArgumentsProblem, type Fingerprint } from '../../../src/shared/semantic-target';
import { readPageUrls, sameUrls } from './page-urls';
import { actionable, describeCover, hitTest, notActionableNow, perform } from './semantic-act';
import { observe, prewatch, rebase, stop, watch } from './semantic-readback';
import { HOLDS_PRIVATE, planRefusalDetail, typeInto, typePlan } from './semantic-type';
import { blockedReason, findByQuery, fingerprintOf, narrowerTool, toolNameOf, withItem } from './semantic-target';
import { formOf } from './semantic-roles';
import { FILL_MAX_FIELDS } from '../../../src/shared/semantic-fill';
import { MAX_TARGET_MATCHES, type CoverDetail, type TargetMatch, type TargetReport, type ToSemanticAction } from './semantic-messages';
import { isAllowedKey } from '../../../src/shared/semantic-key';
import { focusedTarget, keyTargetFingerprint } from './semantic-focus';
import { forgetKey, keyObservation, prepareKey, pressKey } from './semantic-key';

/** What the module's ref map offers (content/semantic.ts). */
export interface RefAccess {
  /** The document's tag, or null before its first snapshot. */
  tag(): string | null;
  /** The element's ref (made on first sight), or null when the document has no tag yet. */
  refFor(el: Element): string | null;
  /** Take `tag` (a fresh one from the worker, `[a-z]{1,6}`) as the document's tag when it has none yet; otherwise nothing. */
  adopt(tag: string): void;
  /** The live element of a ref of this document; `not-mine` for another tag; errors `ref-unknown`, `ref-stale`. */
  elementOf(ref: string): Result<Element | 'not-mine'>;
}

const TYPES = new Set(['echo:semantic:urls', 'echo:semantic:target', 'echo:semantic:act', 'echo:semantic:readback', 'echo:semantic:fill', 'echo:semantic:fill-readback']);

/** Whether `m` is one of the mutation messages. */
export function isActionMessage(m: unknown): m is ToSemanticAction {
  return !!m && typeof m === 'object' && TYPES.has((m as { type?: unknown }).type as string);
}

async function matchOf(el: Element, fp: Fingerprint, refs: RefAccess): Promise<TargetMatch> {
  const blocked = blockedReason(el);
  return { ref: blocked ? null : refs.refFor(el), fingerprint: fp, blocked, narrower: blocked ? null : await narrowerTool(el) };
}

async function target(m: Extract<ToSemanticAction, { type: 'echo:semantic:target' }>, refs: RefAccess): Promise<Result<TargetReport>> {
  if (m.focused === true) return focusTarget(m, refs);
  const urls = readPageUrls();
  const origin = String(self.origin);
  if (m.ref !== undefined) {
    const r = refs.elementOf(String(m.ref));
    if (!r.ok) return r;
    if (r.value === 'not-mine') return ok({ kind: 'not-mine' });
    const fp = fingerprintOf(r.value);
    if (!fp) return err('target-unsupported', 'the element of this ref has no role to act on');
    const match = await matchOf(r.value, fp, refs);
    // From now until the action, what the page changes near this target on its own is noise to its readback.
    if (!match.blocked) prewatch(r.value, m.review === true);
    return ok({ kind: 'targets', origin, urls, matches: [match], total: 1 });
  }
  if (typeof m.tag === 'string') refs.adopt(m.tag);
  const q = m.query && typeof m.query === 'object' ? m.query : {};
  const found = findByQuery(document, q);
  // The fingerprints reviewed carry their items (lib/semantic-target.ts contextOf): read for the matches reported only.
  const matches = await Promise.all(found.slice(0, MAX_TARGET_MATCHES).map(withItem).map((x) => matchOf(x.el, x.fp, refs)));
  if (found.length === 1 && !(matches[0] as TargetMatch).blocked) prewatch((found[0] as { el: Element }).el, m.review === true);
  return ok({ kind: 'targets', origin, urls, matches, total: found.length });
}

/** The element the dispatch acts on: the ref's (its fingerprint must be the approved one) or the one with that fingerprint. Also Live Patch's (lib/live-patch.ts). */
export function refind(ref: string | undefined, fp: Fingerprint, refs: RefAccess): Result<Element> {
  if (ref !== undefined) {
    const r = refs.elementOf(ref);
    if (!r.ok) return r;
    if (r.value === 'not-mine') return err('navigated', 'the ref is not of this document');
    const now = fingerprintOf(r.value);
    return now && sameFingerprint(now, fp) ? ok(r.value) : err('target-changed', 'the target no longer has the approved fingerprint');
  }
  const found = findByQuery(document, fp);
  if (found.length !== 1) return err('target-changed', found.length === 0 ? 'no element has the approved fingerprint now' : 'several elements have the approved fingerprint now');
  return ok((found[0] as { el: Element }).el);
}

async function act(m: Extract<ToSemanticAction, { type: 'echo:semantic:act' }>, refs: RefAccess): Promise<Result<{ done: true }>> {
  if (m.operation === 'key') return actKey(m, refs);
  if (!isSemanticOperation(m.operation) || !isFingerprint(m.fingerprint) || typeof m.requestId !== 'string') return err('bad-request', 'malformed act message');
  if (semanticArgumentsProblem(m.operation, m.operation === 'type' ? { text: m.text } : {}) !== null) return err('bad-request', 'malformed act message');
  if (!m.urls || !sameUrls(m.urls)) return err('navigated', 'the page URL changed before the action');
  const found = refind(m.ref, m.fingerprint, refs);
  if (!found.ok) return found;
  const el = found.value;
  const blocked = blockedReason(el);
  if (blocked) return err('target-blocked', `the target is a blocked surface (${blocked})`);
  const narrower = await narrowerTool(el);
  if (narrower) return err('narrower-capability-available', narrower);
  const toolName = toolNameOf(el);
  const pointer = m.operation === 'click' || m.operation === 'hover';
  let x = 0;
  let y = 0;
  if (m.operation !== 'scroll') {
    const a = await actionable(el, pointer);
    if (!a.ok) return err('not-actionable', explainNotActionable(a.why));
    x = a.x;
    y = a.y;
  }
  // The waits above let the page run: the URLs and the fingerprint again, in the task that acts.
  if (!sameUrls(m.urls)) return err('navigated', 'the page URL changed before the action');
  const again = refind(m.ref, m.fingerprint, refs);
  if (!again.ok || again.value !== el) return err('target-changed', 'the target changed while it was checked');
  // The page ran during the waits: the blocked rules, the ladder's form and the synchronous actionability
  // checks again, here, with no await before the events (it may have added data-echo-private, a password
  // field, `disabled` or `inert`, or made the form a WebMCP tool).
  const nowBlocked = blockedReason(el);
  if (nowBlocked) return err('target-blocked', `the target is a blocked surface (${nowBlocked})`);
  if (toolNameOf(el) !== toolName) return err('target-changed', "the target's form changed while it was checked");
  if (m.operation !== 'scroll') {
    const now = notActionableNow(el, pointer);
    if (now) return err('not-actionable', now);
  }
  if (pointer) {
    const hit = hitTest(el, x, y);
    if (!hit.ok) {
      // A private cover is named by its role only, as the snapshot shows it; a blocked one gets no ref, nor
      // one in a parent document (this document's refs would name it, and it would be ref-stale there).
      const c = describeCover(hit.cover);
      const hidden = blockedReason(hit.cover);
      const cover: CoverDetail = { role: c.role, name: hidden === 'private' ? '' : redactText(c.name).value, ref: hidden || hit.cover.ownerDocument !== document ? null : refs.refFor(hit.cover) };
      return err('target-covered', JSON.stringify(cover), cover);
    }
  }
  if (m.operation === 'type') {
    // How the value will be set, checked in this task with no await before the events.
    const text = m.text as string;
    const plan = typePlan(el, text);
    // Not typable, or no such option: the refusal not-actionable, its detail saying which.
    if (!plan.ok) return err('not-actionable', planRefusalDetail(plan));
    watch(m.requestId, el, plan.expected);
    try {
      // A focus or beforeinput handler may also have moved the field into another form or renamed it.
      const changedNow = () => {
        const now = refind(m.ref, m.fingerprint as Fingerprint, refs);
        if (!now.ok || now.value !== el) return 'the field changed as it was focused (its focus or beforeinput handlers): it no longer has the approved fingerprint; nothing was typed';
        return toolNameOf(el) !== toolName ? "the field's form changed as it was focused; nothing was typed" : null;
      };
      const done = typeInto(el, text, plan, () => blockedReason(el), changedNow);
      if (done.blocked) {
        stop(m.requestId);
        return err('target-blocked', done.blocked === HOLDS_PRIVATE
          ? 'the editable box took a part the page marks private as typing began (its beforeinput handler), which typing would replace; nothing was typed'
          : `the field became a blocked surface (${done.blocked}) as it was focused; nothing was typed`);
      }
      if (done.changed) {
        stop(m.requestId);
        // A select's options (option-changed, its detail kept) or the field itself (target-changed).
        return done.changed.startsWith('option-changed') ? err('not-actionable', done.changed) : err('target-changed', done.changed);
      }
    } catch (e) {
      stop(m.requestId);
      return err('tool-failed', e instanceof Error ? e.message.slice(0, 256) : 'the action threw');
    }
    return ok({ done: true });
  }
  watch(m.requestId, el);
  try {
    // A click is judged by what follows the click event only, not by the page's reactions to the hover and pointer down.
    perform(m.operation, el, x, y, () => rebase(m.requestId));
  } catch (e) {
    stop(m.requestId);
    return err('tool-failed', e instanceof Error ? e.message.slice(0, 256) : 'the action threw');
  }
  return ok({ done: true });
}

/** The watch key of field `i` of fill `requestId` (semantic-readback.ts keeps one watch per field). */
const fieldKey = (requestId: string, i: number) => `${requestId}#${i}`;

/**
 * A form fill: every field found again, checked, and every value planned, BEFORE any is set (a
 * refusal sets nothing); the checks run again in the task that sets the values, with no await.
 */
async function fill(m: Extract<ToSemanticAction, { type: 'echo:semantic:fill' }>, refs: RefAccess): Promise<Result<{ done: true }>> {
  const fields = Array.isArray(m.fields) ? m.fields : [];
  const shapeOk = typeof m.requestId === 'string' && fields.length >= 1 && fields.length <= FILL_MAX_FIELDS &&
    fields.every((f) => f && typeof f.ref === 'string' && isFingerprint(f.fingerprint) && semanticArgumentsProblem('type', { text: f.text }) === null);
  if (!shapeOk) return err('bad-request', 'malformed fill message');
  if (!m.urls || !sameUrls(m.urls)) return err('navigated', 'the page URL changed before the action');
  const els: Element[] = [];
  const tools: Array<string | null> = [];
  for (const [i, f] of fields.entries()) {
    const found = refind(f.ref, f.fingerprint, refs);
    if (!found.ok) return err(found.error.code, `field ${i + 1}: ${found.error.message}`);
    const el = found.value;
    if (els.includes(el)) return err('bad-request', `field ${i + 1} is listed twice`);
    const blocked = blockedReason(el);
    if (blocked) return err('target-blocked', `field ${i + 1} is a blocked surface (${blocked})`);
    const narrower = await narrowerTool(el);
    if (narrower) return err('narrower-capability-available', narrower);
    els.push(el);
    tools.push(toolNameOf(el));
  }
  const form = formOf(els[0] as Element);
  for (const [i, el] of els.entries()) {
    const a = await actionable(el, false);
    if (!a.ok) return err('not-actionable', `field ${i + 1}: ${explainNotActionable(a.why)}`);
  }
  // The page ran during the waits: everything again, in the task that sets the values.
  if (!sameUrls(m.urls)) return err('navigated', 'the page URL changed before the action');
  // Field i as approved, now: the same element with the approved fingerprint, not blocked, in the same form
  // and tool, actionable. Null, or the refusal (fixed words).
  const recheck = (i: number): Result<never> | null => {
    const el = els[i] as Element;
    const again = refind((fields[i] as { ref: string }).ref, (fields[i] as { fingerprint: Fingerprint }).fingerprint, refs);
    if (!again.ok || again.value !== el) return err('target-changed', `field ${i + 1} changed while it was checked`);
    const blocked = blockedReason(el);
    if (blocked) return err('target-blocked', `field ${i + 1} is a blocked surface (${blocked})`);
    if (toolNameOf(el) !== tools[i]) return err('target-changed', `the form of field ${i + 1} changed while it was checked`);
    if (formOf(el) !== form) return err('target-changed', `field ${i + 1} is not in the same form as field 1`);
    const now = notActionableNow(el, false);
    return now ? err('not-actionable', `field ${i + 1}: ${now}`) : null;
  };
  const plans = [];
  for (const [i, f] of fields.entries()) {
    const el = els[i] as Element;
    const problem = recheck(i);
    if (problem) return problem;
    const plan = typePlan(el, f.text);
    if (!plan.ok) return err('not-actionable', `field ${i + 1}: ${planRefusalDetail(plan)}`);
    plans.push(plan);
  }
  for (const [i, el] of els.entries()) watch(fieldKey(m.requestId, i), el, (plans[i] as { expected: string }).expected);
  const stopAll = () => { for (let j = 0; j < els.length; j++) stop(fieldKey(m.requestId, j)); };
  for (const [i, el] of els.entries()) {
    // The page ran its handlers for the fields before this one (input, change): one may have turned this
    // field into a password field, or its form into a password form. Then it and the rest are not set.
    // Nor may they have moved it (into another form), renamed it, swapped or removed it, or disabled it:
    // every check of the pass above again, for this field (fixed words, no page text).
    const blocked = i > 0 ? blockedReason(el) : null;
    if (blocked) {
      stopAll();
      return err('tool-failed', `field ${i + 1} became a blocked surface (${blocked}) as the fields before it were set (those stay set); it and the fields after it were not set`);
    }
    const problem = i > 0 ? recheck(i) : null;
    if (problem && !problem.ok) {
      stopAll();
      return err('tool-failed', `field ${i + 1} changed as the fields before it were set (${problem.error.code}: ${problem.error.message}); the fields before it stay set, it and the fields after it were not set`);
    }
    try {
      const changedNow = () => {
        const p = recheck(i);
        return p && !p.ok ? `it changed as it was focused (${p.error.code}: ${p.error.message})` : null;
      };
      const done = typeInto(el, (fields[i] as { text: string }).text, plans[i] as Extract<ReturnType<typeof typePlan>, { ok: true }>, () => blockedReason(el), changedNow);
      if (done.blocked) {
        stopAll();
        const how = done.blocked === HOLDS_PRIVATE ? 'took a part the page marks private as typing began' : `became a blocked surface (${done.blocked}) as it was focused`;
        return err('tool-failed', `field ${i + 1} ${how}; it and the fields after it were not set${i > 0 ? ' (the fields before it were)' : ''}`);
      }
      if (done.changed) {
        stopAll();
        return err('tool-failed', `field ${i + 1}: ${done.changed}; it and the fields after it were not set${i > 0 ? ' (the fields before it were)' : ''}`);
      }
    } catch (e) {
      stopAll();
      return err('tool-failed', `field ${i + 1}: ${e instanceof Error ? e.message.slice(0, 200) : 'the action threw'} (fields before it were set)`);
    }
  }
  return ok({ done: true });
}

// ---- page_key (lib/semantic-focus.ts, lib/semantic-key.ts): the target is the focused element ----

/**
 * `echo:semantic:target {focused: true}`: the key's target in this document (focusedTarget: the deepest
 * focused element, the body for the document; no match when this document does not hold the focus),
 * with its fingerprint, blocked reason and ladder tool. With `ref`, that element must be the target now.
 */
async function focusTarget(m: Extract<ToSemanticAction, { type: 'echo:semantic:target' }>, refs: RefAccess): Promise<Result<TargetReport>> {
  const urls = readPageUrls();
  const origin = String(self.origin);
  if (m.ref === undefined && typeof m.tag === 'string') refs.adopt(m.tag);
  const el = focusedTarget(document);
  if (m.ref !== undefined) {
    const r = refs.elementOf(String(m.ref));
    if (!r.ok) return r;
    if (r.value === 'not-mine') return ok({ kind: 'not-mine' });
    if (r.value !== el) return err('target-changed', 'the approved element no longer holds the focus');
  }
  if (!el) return ok({ kind: 'targets', origin, urls, matches: [], total: 0 });
  const fp = keyTargetFingerprint(el);
  if (!fp) return err('target-unsupported', 'the focused element has no role to describe it: move the focus to a control first (Tab, or page_focus)');
  const match = await matchOf(el, fp, refs);
  // As for a named target: what the page changes near it on its own from now until the key is noise to its readback.
  if (!match.blocked) prewatch(el, m.review === true);
  return ok({ kind: 'targets', origin, urls, matches: [match], total: 1 });
}

/** The key's target again: the element of `ref`, holding the focus now, with the approved fingerprint. */
function refindFocused(ref: string | undefined, fp: Fingerprint, refs: RefAccess): Result<Element> {
  if (ref === undefined) return err('bad-request', 'a key needs the ref of its target');
  const r = refs.elementOf(ref);
  if (!r.ok) return r;
  if (r.value === 'not-mine') return err('navigated', 'the ref is not of this document');
  if (r.value !== focusedTarget(document)) return err('target-changed', 'the approved element no longer holds the focus');
  const now = keyTargetFingerprint(r.value);
  return now && sameFingerprint(now, fp) ? ok(r.value) : err('target-changed', 'the focused element no longer has the approved fingerprint');
}

/**
 * `echo:semantic:act` of operation `key`: the focused element again (`target-changed`), not blocked (a
 * password field or any control of a form holding one: Enter included), no narrower tool; after the
 * ladder's await, all of it again in the task that presses the key; the default decided (a Tab into a
 * cross-origin frame is `not-actionable`); then the readback's watch and the key (lib/semantic-key.ts).
 */
async function actKey(m: Extract<ToSemanticAction, { type: 'echo:semantic:act' }>, refs: RefAccess): Promise<Result<{ done: true }>> {
  if (!isAllowedKey(m.key) || !isFingerprint(m.fingerprint) || typeof m.requestId !== 'string') return err('bad-request', 'malformed key message');
  if (!m.urls || !sameUrls(m.urls)) return err('navigated', 'the page URL changed before the key');
  const found = refindFocused(m.ref, m.fingerprint, refs);
  if (!found.ok) return found;
  const el = found.value;
  const blocked = blockedReason(el);
  if (blocked) return err('target-blocked', `the focused element is a blocked surface (${blocked})`);
  const narrower = await narrowerTool(el);
  if (narrower) return err('narrower-capability-available', narrower);
  const toolName = toolNameOf(el);
  // The ladder's look-up let the page run: everything again, with no await before the events.
  if (!sameUrls(m.urls)) return err('navigated', 'the page URL changed before the key');
  const again = refindFocused(m.ref, m.fingerprint, refs);
  if (!again.ok || again.value !== el) return err('target-changed', 'the focused element changed while it was checked');
  const nowBlocked = blockedReason(el);
  if (nowBlocked) return err('target-blocked', `the focused element is a blocked surface (${nowBlocked})`);
  if (toolNameOf(el) !== toolName) return err('target-changed', "the focused element's form changed while it was checked");
  const plan = prepareKey(el, m.key);
  if (!plan.ok) return err(plan.code ?? 'not-actionable', plan.why);
  watch(m.requestId, el);
  try {
    pressKey(m.requestId, el, m.key, plan.plan);
  } catch (e) {
    stop(m.requestId);
    forgetKey(m.requestId);
    return err('tool-failed', e instanceof Error ? e.message.slice(0, 256) : 'the key threw');
  }
  return ok({ done: true });
}

/**
 * The refusal's detail for a `NotActionable` reason: the reason itself, and for `not-rendering` what the
 * person can do. Chrome draws no animation frames for a tab behind another tab of its window or in a
 * minimised window (HTML, "update the rendering" skips documents not being rendered): with the web host,
 * the console's own tab in front of the shared one is that case (README, "Keep the shared tab drawn").
 */
function explainNotActionable(why: string): string {
  return why === 'not-rendering' ? 'not-rendering: the tab is not being drawn (another tab is in front of it, or its window is minimised); ask the person to bring the shared tab to the front, then try again' : why;
}

/** Two animation frames (or 100 ms each when the page does not render): the page's own reactions land first. */
async function settle(): Promise<void> {
  for (let i = 0; i < 2; i++) await new Promise<void>((r) => {
    const t = setTimeout(r, 100);
    requestAnimationFrame(() => (clearTimeout(t), r()));
  });
}

/** Answer one mutation message; `send` gets the Result. */
export async function handleAction(m: ToSemanticAction, refs: RefAccess): Promise<Result<unknown>> {
  try {
    switch (m.type) {
      case 'echo:semantic:urls': {
        const u = readPageUrls();
        return u ? ok(u) : err('navigated', 'the top document is not readable from this frame');
      }
      case 'echo:semantic:target':
        return await target(m, refs);
      case 'echo:semantic:act':
        return await act(m, refs);
      case 'echo:semantic:fill':
        return await fill(m, refs);
      case 'echo:semantic:fill-readback': {
        const fps = Array.isArray(m.fingerprints) ? m.fingerprints : [];
        if (fps.length < 1 || fps.length > FILL_MAX_FIELDS || !fps.every(isFingerprint)) return err('bad-request', 'malformed fill readback message');
        await settle();
        const all = fps.map((fp, i) => observe(fieldKey(String(m.requestId), i), fp));
        return all.every((o) => o !== null) ? ok(all) : err('no-watch', 'no fill of this request was watched here');
      }
      case 'echo:semantic:readback': {
        if (!isFingerprint(m.fingerprint)) return err('bad-request', 'malformed readback message');
        await settle();
        const o = observe(String(m.requestId), m.fingerprint);
        const key = keyObservation(String(m.requestId));
        return o ? ok(key ? { ...o, key } : o) : err('no-watch', 'no action of this request was watched here');
      }
    }
  } catch (e) {
    return err('content-error', e instanceof Error ? e.message.slice(0, 256) : 'the semantic action failed');
  }
}
