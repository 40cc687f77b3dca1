/**
 * Live Patch in the page (faculty `live-patch`, issue 11 item 1; src/shared/live-patch.ts;
 * docs/live-patch.md): the `semantic` content module's answers to `echo:patch:*` (its isolated
 * world holds the refs the snapshot gave, so a patch's ref is the very element the person reviewed).
 *
 *  - apply: the target found again (its ref, with the approved fingerprint), not blocked and holding
 *    no blocked surface, the exact URLs, the edits through the ONE allow-list again; the state record
 *    of everything an edit touches is read (prior), every edit planned (set-text needs an element with
 *    no element children) BEFORE any is applied, then all are applied in that same task, with no
 *    await in between. The patch is kept in this document's memory only: a new document drops it.
 *  - readback: a separate message, two frames later, reads the state record again: the patch held when
 *    it equals the record read right after applying.
 *  - revert: newest first. For each slot the patch changed (an attribute, the `style` attribute, the
 *    text) the prior value is put back only where the page still holds the patch's value (a page that
 *    changed it meanwhile keeps its change: nothing of the page's is overwritten); our inserted
 *    elements are removed. The revert's readback (a separate message) hashes the record again; it
 *    equals the prior-state hash only when the page is exactly as before: else `revert-mismatch`.
 * Nothing here evaluates page text; values are set as text or attribute strings, never as HTML.
 */
import { err, ok, type Result } from '../../../src/shared/result';
import { isFingerprint, type Fingerprint } from '../../../src/shared/semantic-target';
import { PATCH_BOUNDS, PATCH_ID, PATCH_NOTE, patchEditsProblem, patchStateHash, type PatchEdit } from '../../../src/shared/live-patch';
import { sameUrls } from './page-urls';
import type { PatchApplied, PatchReadback, RevertReadback, ToLivePatch } from './live-patch-messages';
import { blockedReason } from './semantic-target';
import { shadowRootOf } from './semantic-roles';
import { refind, type RefAccess } from './semantic-handlers';

const TYPES = new Set(['echo:patch:apply', 'echo:patch:readback', 'echo:patch:revert', 'echo:patch:revert-readback']);

/** Whether `m` is one of the Live Patch messages. */
export function isPatchMessage(m: unknown): m is ToLivePatch {
  return !!m && typeof m === 'object' && TYPES.has((m as { type?: unknown }).type as string);
}

/** The state record of a target (hashed for the prior and after states; docs/live-patch.md). */
interface StateRecord {
  html: string;
  prev: string | null;
  next: string | null;
}

/** The largest state record kept (UTF-16 units): a patch on a huge subtree is refused rather than held. */
export const MAX_RECORD_CHARS = 2_000_000;

const nodeText = (n: Node | null): string | null => (n === null ? null : n instanceof Element ? n.outerHTML : `#${n.nodeType}:${n.nodeValue ?? ''}`);

/** The record: the target's outerHTML and its two neighbouring nodes (where an inserted note before or after it sits). */
function stateRecord(el: Element): StateRecord {
  return { html: el.outerHTML, prev: nodeText(el.previousSibling), next: nodeText(el.nextSibling) };
}

const same = (a: StateRecord, b: StateRecord) => a.html === b.html && a.prev === b.prev && a.next === b.next;

/** One thing a patch changed: an attribute (`attr:<name>`, the style attribute included) or the text; what it was, and what the patch left. */
interface Slot {
  key: string;
  prior: string | null | Node[];
  after: string | null | Node[];
}

/** A patch held by this document. */
interface ActivePatch {
  id: string;
  seq: number;
  el: Element;
  slots: Slot[];
  notes: Element[];
  prior: StateRecord;
  after: StateRecord;
  priorHash: string;
}

/** This document's active patches, oldest first (module state: it ends with the document). */
const active = new Map<string, ActivePatch>();
let seq = 0;

/** Elements of a target's subtree examined for blocked surfaces at most; past it the target is refused (`too-many-elements`). */
const MAX_PATCH_SCAN = 20_000;

/** Whether `x` is a frame, object or embed: another document, which a patch cannot see into. */
const isFrameLike = (x: Element): boolean => x.localName === 'iframe' || x.localName === 'frame' || x.localName === 'object' || x.localName === 'embed';

/**
 * A blocked surface in the target or inside it: a password field, a form holding one, a credential
 * field, a private part, or a frame (another document: a same-origin one may hold a password form, a
 * cross-origin one card fields), the target itself included. The subtree is walked through open and
 * closed shadow roots (`querySelectorAll` stops at them, and design systems put sign-in forms and card
 * frames there). The first reason found, or null.
 */
function blockedInside(el: Element): string | null {
  const own = blockedReason(el);
  if (own) return own;
  if (isFrameLike(el)) return 'frame';
  const stack: Element[] = [el];
  for (let seen = 0; stack.length; ) {
    const x = stack.pop() as Element;
    if (++seen > MAX_PATCH_SCAN) return 'too-many-elements';
    if (x !== el) {
      if (isFrameLike(x)) return 'frame';
      const r = blockedReason(x);
      if (r) return r;
    }
    const sr = shadowRootOf(x);
    if (sr) for (const k of sr.children) stack.push(k);
    for (const k of x.children) stack.push(k);
  }
  return null;
}

/**
 * What makes the text at `el` a form value, or null: an option, optgroup, select, datalist or textarea at
 * or around it (an option with no `value` submits its text), or an editable box it is or sits in (the
 * page reads what it holds as the person's text). A patch's text there would change what the form sends.
 */
function formText(el: Element): string | null {
  const around = el.closest('option, optgroup, select, datalist, textarea');
  if (around) return `a <${around.localName}>`;
  if ((el instanceof HTMLElement && el.isContentEditable) || (el.parentElement?.isContentEditable ?? false)) return 'an editable box';
  return null;
}

/** Our own inserted element: fixed tag and class, text only, a fixed look (never the agent's). */
function noteElement(patchId: string, kind: 'note' | 'highlight', text: string): HTMLElement {
  const n = document.createElement(PATCH_NOTE.tag);
  n.className = kind === 'note' ? PATCH_NOTE.className : PATCH_NOTE.highlightClassName;
  n.setAttribute(PATCH_NOTE.attribute, patchId);
  n.textContent = text;
  n.style.cssText =
    kind === 'note'
      ? 'display:inline-block;margin:2px 4px;padding:2px 6px;border:1px solid #b58900;background:#fff8d6;color:#222;font:13px system-ui,sans-serif;'
      : 'background:#ffe14d;color:#000;padding:0 2px;';
  return n;
}

type Plan = { ok: true } | { ok: false; message: string };

/** Whether every edit can apply to `el` as it is now (set-text: no element children). */
function planEdits(el: Element, edits: PatchEdit[]): Plan {
  for (const [i, e] of edits.entries()) {
    if (e.op === 'set-text' && el.children.length > 0) return { ok: false, message: `edit ${i + 1} (set-text): the target holds elements; set the text of an element that holds text only` };
    if (e.op === 'set-text' && (el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement || el instanceof HTMLSelectElement)) return { ok: false, message: `edit ${i + 1} (set-text): form values are page_type's, never a patch's` };
    const value = e.op === 'set-text' || e.op === 'insert' ? formText(el) : null;
    if (value) return { ok: false, message: `edit ${i + 1} (${e.op}): text in ${value} is a form value; form values are page_type's, never a patch's` };
    if ((e.op === 'insert' && (e.position === 'prepend' || e.position === 'append')) && (el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement || el instanceof HTMLSelectElement || el.tagName === 'IMG')) {
      return { ok: false, message: `edit ${i + 1} (insert): this element takes no children` };
    }
    if ((e.op === 'insert' && (e.position === 'before' || e.position === 'after')) && !el.parentNode) return { ok: false, message: `edit ${i + 1} (insert): the target has no parent` };
  }
  return { ok: true };
}

/** Apply the planned edits (synchronously), recording each slot's prior value on first touch. */
function applyEdits(p: ActivePatch, edits: PatchEdit[]): void {
  const el = p.el as HTMLElement;
  const slots = new Map<string, Slot>();
  const touchAttr = (name: string) => {
    const key = `attr:${name}`;
    if (!slots.has(key)) slots.set(key, { key, prior: el.getAttribute(name), after: null });
  };
  for (const e of edits) {
    switch (e.op) {
      case 'set-text':
        if (!slots.has('text')) slots.set('text', { key: 'text', prior: Array.from(el.childNodes), after: null });
        el.textContent = e.text;
        break;
      case 'set-attribute':
        touchAttr(e.name);
        el.setAttribute(e.name, e.value);
        break;
      case 'remove-attribute':
        touchAttr(e.name);
        el.removeAttribute(e.name);
        break;
      case 'set-style':
        touchAttr('style');
        el.style.setProperty(e.property, e.value, 'important');
        break;
      case 'hide':
        touchAttr('style');
        el.style.setProperty('display', 'none', 'important');
        break;
      case 'show':
        touchAttr('style');
        touchAttr('hidden');
        el.removeAttribute('hidden');
        el.style.removeProperty('display');
        break;
      case 'insert': {
        const n = noteElement(p.id, e.element, e.text);
        if (e.position === 'before') el.before(n);
        else if (e.position === 'after') el.after(n);
        else if (e.position === 'prepend') el.prepend(n);
        else el.append(n);
        p.notes.push(n);
        break;
      }
    }
  }
  for (const s of slots.values()) s.after = s.key === 'text' ? Array.from(el.childNodes) : el.getAttribute(s.key.slice(5));
  p.slots = [...slots.values()];
}

async function apply(m: Extract<ToLivePatch, { type: 'echo:patch:apply' }>, refs: RefAccess): Promise<Result<PatchApplied>> {
  if (typeof m.patchId !== 'string' || !PATCH_ID.test(m.patchId) || typeof m.ref !== 'string' || !isFingerprint(m.fingerprint)) return err('bad-request', 'malformed patch message');
  const problem = patchEditsProblem(m.edits);
  if (problem !== null) return err('patch-forbidden', problem.message);
  if (active.has(m.patchId)) return err('bad-request', 'this patch was applied already');
  if (!m.urls || !sameUrls(m.urls)) return err('navigated', 'the page URL changed before the patch');
  const found = refind(m.ref, m.fingerprint, refs);
  if (!found.ok) return found;
  const el = found.value;
  const blocked = blockedInside(el);
  if (blocked) return err('target-blocked', `the target is or holds a blocked surface (${blocked})`);
  const plan = planEdits(el, m.edits);
  if (!plan.ok) return err('not-actionable', plan.message);
  const prior = stateRecord(el);
  if (prior.html.length + (prior.prev?.length ?? 0) + (prior.next?.length ?? 0) > MAX_RECORD_CHARS) return err('not-actionable', 'the target is too large to patch and restore exactly');
  // Everything above ran in this task; nothing awaited since the checks: apply now.
  const p: ActivePatch = { id: m.patchId, seq: ++seq, el, slots: [], notes: [], prior, after: prior, priorHash: '' };
  applyEdits(p, m.edits);
  p.after = stateRecord(el);
  active.set(p.id, p);
  p.priorHash = await patchStateHash(prior);
  return ok({ patchId: p.id, priorHash: p.priorHash, afterHash: await patchStateHash(p.after) });
}

/** Put back what `p` changed, only where the page still holds the patch's value; remove our elements. Returns the slots left as the page has them. */
function restore(p: ActivePatch): string[] {
  const el = p.el as HTMLElement;
  const left: string[] = [];
  for (const s of [...p.slots].reverse()) {
    if (s.key === 'text') {
      const now = Array.from(el.childNodes);
      const after = s.after as Node[];
      if (now.length === after.length && now.every((n, i) => n === after[i])) el.replaceChildren(...(s.prior as Node[]));
      else left.push('text');
      continue;
    }
    const name = s.key.slice(5);
    if (el.getAttribute(name) !== s.after) {
      left.push(s.key);
      continue;
    }
    if (s.prior === null) el.removeAttribute(name);
    else el.setAttribute(name, s.prior as string);
  }
  for (const n of p.notes) n.remove();
  return left;
}

/** The outcome of the last revert per patch, until its readback reads it. */
const reverted = new Map<string, { p: ActivePatch; pageChanged: boolean; left: string[] }>();

function revert(m: Extract<ToLivePatch, { type: 'echo:patch:revert' }>): Result<{ done: true }> {
  const ids = Array.isArray(m.patchIds) ? m.patchIds : [];
  if (ids.length < 1 || ids.length > PATCH_BOUNDS.revertIds || !ids.every((x) => typeof x === 'string' && PATCH_ID.test(x))) return err('bad-request', 'malformed revert message');
  if (!m.urls || !sameUrls(m.urls)) return err('navigated', 'the page URL changed before the revert');
  const list: ActivePatch[] = [];
  for (const id of ids) {
    const p = active.get(id);
    if (!p) return err('patch-unknown', `patch ${id} is not active in this document (reverted already, or the document is new)`);
    list.push(p);
  }
  // A later patch on the same element not reverted with it would be undone underneath: refuse before anything.
  const named = new Set(ids);
  for (const p of list) {
    for (const q of active.values()) {
      if (q.seq > p.seq && q.el === p.el && !named.has(q.id)) return err('patch-stacked', `patch ${q.id} was applied to the same element after patch ${p.id}: revert it first (or both together)`);
    }
  }
  // Newest first, whatever order was given.
  list.sort((a, b) => b.seq - a.seq);
  for (const p of list) {
    const pageChanged = !same(stateRecord(p.el), p.after);
    const left = restore(p);
    active.delete(p.id);
    reverted.set(p.id, { p, pageChanged, left });
  }
  return ok({ done: true });
}

async function revertReadback(m: Extract<ToLivePatch, { type: 'echo:patch:revert-readback' }>): Promise<Result<RevertReadback[]>> {
  const ids = Array.isArray(m.patchIds) ? m.patchIds : [];
  const out: RevertReadback[] = [];
  for (const id of ids) {
    const r = typeof id === 'string' ? reverted.get(id) : undefined;
    if (!r) return err('no-watch', `no revert of patch ${String(id).slice(0, 64)} was made here`);
    reverted.delete(id);
    const nowHash = await patchStateHash(stateRecord(r.p.el));
    out.push({ patchId: id, priorHash: r.p.priorHash, nowHash, equal: nowHash === r.p.priorHash, pageChanged: r.pageChanged, leftAsThePageHasIt: r.left });
  }
  return ok(out);
}

/** Two animation frames (or 100 ms each when the page does not render): the page's own reactions land first. */
async function settle(): Promise<void> {
  for (let i = 0; i < 2; i++) await new Promise<void>((r) => {
    const t = setTimeout(r, 100);
    requestAnimationFrame(() => (clearTimeout(t), r()));
  });
}

/** Answer one Live Patch message. Never throws. */
export async function handlePatch(m: ToLivePatch, refs: RefAccess): Promise<Result<unknown>> {
  try {
    switch (m.type) {
      case 'echo:patch:apply':
        return await apply(m, refs);
      case 'echo:patch:readback': {
        const p = typeof m.patchId === 'string' ? active.get(m.patchId) : undefined;
        if (!p) return err('no-watch', 'no patch of this id is active here');
        await settle();
        const now = stateRecord(p.el);
        return ok({ held: same(now, p.after), nowHash: await patchStateHash(now) } satisfies PatchReadback);
      }
      case 'echo:patch:revert':
        return revert(m);
      case 'echo:patch:revert-readback':
        await settle();
        return await revertReadback(m);
    }
  } catch (e) {
    return err('content-error', e instanceof Error ? e.message.slice(0, 256) : 'the patch failed');
  }
}
