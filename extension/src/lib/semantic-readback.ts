/**
 * The independent readback of a semantic mutation (issue 10 item 4;
 * docs/semantic-controls.md, "The lifecycle", step 4). Right before the action, `watch`
 * records what the readback compares with (the URL, the focused element, the
 * target's states and value) and starts a MutationObserver over the document.
 * After the action, a SEPARATE message (`echo:semantic:readback`) calls
 * `observe`, which re-finds the target by its approved fingerprint (never
 * through the element the action held) and reports what changed
 * (src/shared/semantic-target.ts ReadbackObservations); the console judges
 * them (`judgeReadback`). Watches end after READBACK_WATCH_MS.
 */
import type { Fingerprint, ReadbackObservations } from '../../../src/shared/semantic-target';
import { deepActiveElement, roleOf, shadowRootOf, statesOf, valueOf } from './semantic-roles';
import { composedContains, composedParent, findByQuery } from './semantic-target';
import { holdsValue } from './semantic-type';

/** A watch left without its readback ends after this long (ms). */
export const READBACK_WATCH_MS = 30_000;


/** The target's states and value as one comparable list (`value` hashed in place by its length and text). */
function stateOf(el: Element): Record<string, string> {
  const role = roleOf(el) ?? '';
  const out: Record<string, string> = {};
  for (const s of statesOf(el, role, false)) out[s.split('=')[0] as string] = s;
  const v = valueOf(el, role);
  if (v !== undefined) out.value = v;
  if (el instanceof HTMLDetailsElement) out.open = String(el.open);
  return out;
}

/** The part of the page "near" the target: its nearest form, dialog, fieldset, list item, row or landmark, else its grandparent (at most the body). */
function scopeOf(el: Element): Element {
  for (let a: Element | null = composedParent(el), i = 0; a && i < 16; a = composedParent(a), i++) {
    if (a === el.ownerDocument.body || a === el.ownerDocument.documentElement) break;
    if (/^(form|dialog|fieldset|li|tr|section|article|aside|nav|main|details)$/.test(a.localName) || /^(dialog|alertdialog|region|group|tabpanel|menu|listbox)$/.test(a.getAttribute('role') ?? '')) return a;
  }
  // Else its grandparent, at most the body (the extension's sign hangs off the root element, outside it).
  const p = composedParent(el);
  const gp = p ? composedParent(p) : null;
  const html = el.ownerDocument.documentElement;
  return gp && gp !== html ? gp : p && p !== html ? p : el;
}

interface Watch {
  url: string;
  active: Element | null;
  state: Record<string, string>;
  /** Elements whose mutations count as near: the target's scope, and what it controls. */
  near: Element[];
  /** The target itself (to tell whether a removal took it). */
  target: Element;
  /** type only: the value the re-found target must hold (semantic-type.ts TypePlan.expected). */
  expected?: string;
  changes: number;
  observer: MutationObserver;
  observed: Set<Node>;
  timer: ReturnType<typeof setTimeout>;
}

const watches = new Map<string, Watch>();

/** Count the records that touch the target's neighbourhood (or remove the target). */
function count(w: Watch, records: MutationRecord[]): void {
  for (const r of records) {
    const removedTarget = [...r.removedNodes].some((n) => n === w.target || (n instanceof Element && composedContains(n, w.target)));
    if (removedTarget || w.near.some((n) => composedContains(n, r.target))) w.changes++;
  }
}

/** Observe `root` and every shadow root below the near elements (MutationObserver does not cross shadow boundaries). */
function observeAll(w: Watch, roots: Node[]): void {
  const opts: MutationObserverInit = { subtree: true, childList: true, attributes: true, characterData: true };
  for (const r of roots) {
    if (w.observed.has(r)) continue;
    w.observed.add(r);
    w.observer.observe(r, opts);
  }
}

/** Start the watch of request `requestId` on `target`, right before the action; `expected`: the value a type sets. */
export function watch(requestId: string, target: Element, expected?: string): void {
  stop(requestId);
  const doc = target.ownerDocument;
  const near = [scopeOf(target), target];
  for (const id of (target.getAttribute('aria-controls') ?? '').split(/\s+/).filter(Boolean).slice(0, 8)) {
    const c = (target.getRootNode() as Document | ShadowRoot).getElementById?.(id);
    if (c) near.push(c);
  }
  const w: Watch = {
    url: String(location.href),
    active: deepActiveElement(doc),
    state: stateOf(target),
    near,
    target,
    ...(expected !== undefined ? { expected } : {}),
    changes: 0,
    observed: new Set(),
    observer: new MutationObserver((records) => count(w, records)),
    timer: setTimeout(() => stop(requestId), READBACK_WATCH_MS),
  };
  // The document for removals of the scope itself; each shadow root on the way from the scope down.
  const roots: Node[] = [doc];
  for (let a: Element | null = target; a; a = composedParent(a)) {
    const root = a.getRootNode();
    if (root instanceof ShadowRoot) roots.push(root);
  }
  for (const n of near) {
    const sr = shadowRootOf(n);
    if (sr) roots.push(sr);
  }
  observeAll(w, roots);
  watches.set(requestId, w);
}

/**
 * Rebase the watch of `requestId` right before the `click` event itself: the records so far (the
 * page's reactions to the hover sequence and the pointer down, e.g. a tooltip on `mouseover` or a
 * ripple on `mousedown`) are discarded, and the change count, URL and target states start again, so
 * only what follows the click counts. The focused element stays as `watch` saw it: the focus a
 * click gives (emulated at the pointer down) is part of its effect.
 */
export function rebase(requestId: string): void {
  const w = watches.get(requestId);
  if (!w) return;
  w.observer.takeRecords();
  w.changes = 0;
  w.url = String(location.href);
  w.state = stateOf(w.target);
}

/** End a watch (after its readback, or when the action did not run). */
export function stop(requestId: string): void {
  const w = watches.get(requestId);
  if (!w) return;
  w.observer.disconnect();
  clearTimeout(w.timer);
  watches.delete(requestId);
}

/**
 * The readback of request `requestId`: re-find the target by `fingerprint` in this document and
 * compare with what `watch` recorded. `null` when there is no watch (it was never started, or ended).
 */
export function observe(requestId: string, fingerprint: Fingerprint): ReadbackObservations | null {
  const w = watches.get(requestId);
  if (!w) return null;
  count(w, w.observer.takeRecords());
  const found = findByQuery(document, fingerprint);
  const el = found.length === 1 ? (found[0] as { el: Element }).el : null;
  const now = el ? stateOf(el) : {};
  const stateChanged = el ? [...new Set([...Object.keys(w.state), ...Object.keys(now)])].filter((k) => w.state[k] !== now[k]).slice(0, 16) : [];
  const active = deepActiveElement(document);
  let inViewport = false;
  if (el) {
    const r = el.getBoundingClientRect();
    inViewport = r.width > 0 && r.height > 0 && r.bottom > 0 && r.right > 0 && r.top < window.innerHeight && r.left < window.innerWidth;
  }
  const o: ReadbackObservations = {
    found: el !== null,
    urlChanged: String(location.href) !== w.url,
    documentChanged: false,
    focused: el !== null && active === el,
    focusMoved: active !== w.active,
    editable: el !== null && (el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement || el instanceof HTMLSelectElement || (el instanceof HTMLElement && el.isContentEditable)),
    stateChanged,
    domChangesNear: w.changes,
    inViewport,
    ...(w.expected !== undefined ? { valueSet: el !== null && holdsValue(el, roleOf(el) ?? '', w.expected) } : {}),
  };
  stop(requestId);
  return o;
}
