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
import { composedParent, deepActiveElement, roleOf, shadowRootOf, statesOf, valueOf } from './semantic-roles';
import { composedContains } from './semantic-target';
import { holdsValue } from './semantic-type';
import { findTarget } from './semantic-focus';

/** A watch left without its readback ends after this long (ms). */
export const READBACK_WATCH_MS = 30_000;
/** A pre-watch (below) whose action never came ends after this long (ms): about a dialog's life. */
export const PREWATCH_MS = 120_000;
/** Pre-watches kept at once (the oldest is dropped): each observes the document. */
export const PREWATCH_MAX = 4;


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

/**
 * What the page changed near the target ON ITS OWN before the action (from the moment the target
 * was resolved for the person's review, through the dispatch's actionability waits): a clock, a
 * ticker, a carousel. Such changes are noise, not the action's effect: later mutations of the same
 * text or subtree (`subtrees`), or of the same element's attributes (`attributes`), are not counted
 * by the readback.
 */
interface Noise {
  subtrees: Set<Node>;
  attributes: Set<Node>;
}

interface Prewatch {
  observer: MutationObserver;
  near: Element[];
  noise: Noise;
  timer: ReturnType<typeof setTimeout>;
}

const prewatches = new Map<Element, Prewatch>();

/** Whether `n` is `s` or inside it (through shadow roots). */
const within = (s: Node, n: Node) => s === n || (s instanceof Element && composedContains(s, n));

/** Whether record `r` touches what the page changed on its own before the action. */
function isNoise(noise: Noise, r: MutationRecord): boolean {
  if (r.type === 'attributes' && noise.attributes.has(r.target)) return true;
  for (const s of noise.subtrees) if (within(s, r.target)) return true;
  return false;
}

/** Add the records near the target to the noise. */
function addNoise(p: Prewatch, records: MutationRecord[]): void {
  for (const r of records) {
    if (!p.near.some((n) => composedContains(n, r.target))) continue;
    if (r.type === 'attributes') p.noise.attributes.add(r.target);
    else if (p.noise.subtrees.size < 256) p.noise.subtrees.add(r.target);
  }
}

/**
 * Start recording what the page changes near `target` on its own, from the moment it is resolved
 * for the person's review until the action's watch begins (`watch` takes it over). `fresh` (a new
 * review): an earlier record of the target is dropped and recording starts again; otherwise (the
 * dispatch's check) a target already pre-watched keeps its record. What our own actions change is
 * never noise: every record is cleared when an action's watch starts and when its readback ends
 * (`quiet`). At most PREWATCH_MAX at once, each at most PREWATCH_MS.
 */
export function prewatch(target: Element, fresh: boolean): void {
  if (prewatches.has(target)) {
    if (!fresh) return;
    endPrewatch(target);
  }
  while (prewatches.size >= PREWATCH_MAX) endPrewatch(prewatches.keys().next().value as Element);
  const p: Prewatch = {
    near: nearOf(target),
    noise: { subtrees: new Set(), attributes: new Set() },
    observer: new MutationObserver((records) => addNoise(p, records)),
    timer: setTimeout(() => endPrewatch(target), PREWATCH_MS),
  };
  const observed = new Set<Node>();
  for (const r of rootsOf(target, p.near)) {
    if (observed.has(r)) continue;
    observed.add(r);
    p.observer.observe(r, OBSERVE);
  }
  prewatches.set(target, p);
}

/** End the pre-watch of `target`; answers its noise (empty when there was none). */
function endPrewatch(target: Element): Noise {
  const p = prewatches.get(target);
  if (!p) return { subtrees: new Set(), attributes: new Set() };
  addNoise(p, p.observer.takeRecords());
  p.observer.disconnect();
  clearTimeout(p.timer);
  prewatches.delete(target);
  return p.noise;
}

/** Clear every pre-watch's record: what follows is our own action's doing, not the page's (see prewatch). */
function quiet(): void {
  for (const p of prewatches.values()) {
    p.observer.takeRecords();
    p.noise = { subtrees: new Set(), attributes: new Set() };
  }
}

const OBSERVE: MutationObserverInit = { subtree: true, childList: true, attributes: true, characterData: true };

/** The elements whose mutations count as near `target`: its scope, itself, and what it controls (aria-controls, at most 8). */
function nearOf(target: Element): Element[] {
  const near = [scopeOf(target), target];
  for (const id of (target.getAttribute('aria-controls') ?? '').split(/\s+/).filter(Boolean).slice(0, 8)) {
    const c = (target.getRootNode() as Document | ShadowRoot).getElementById?.(id);
    if (c) near.push(c);
  }
  return near;
}

/** The roots to observe for `target`: its document (for removals of the scope itself), each shadow root on the way up, and those of the near elements. */
function rootsOf(target: Element, near: Element[]): Node[] {
  const roots: Node[] = [target.ownerDocument];
  for (let a: Element | null = target; a; a = composedParent(a)) {
    const root = a.getRootNode();
    if (root instanceof ShadowRoot) roots.push(root);
  }
  for (const n of near) {
    const sr = shadowRootOf(n);
    if (sr) roots.push(sr);
  }
  return roots;
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
  /** What the page changed on its own before the action (the pre-watch): not counted. */
  noise: Noise;
  /** Records near the target not counted because they touched that noise. */
  ignored: number;
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
    if (removedTarget) w.changes++;
    else if (w.near.some((n) => composedContains(n, r.target))) {
      if (isNoise(w.noise, r)) w.ignored++;
      else w.changes++;
    }
  }
}

/** Observe `root` and every shadow root below the near elements (MutationObserver does not cross shadow boundaries). */
function observeAll(w: Watch, roots: Node[]): void {
  for (const r of roots) {
    if (w.observed.has(r)) continue;
    w.observed.add(r);
    w.observer.observe(r, OBSERVE);
  }
}

/** Start the watch of request `requestId` on `target`, right before the action; `expected`: the value a type sets. */
export function watch(requestId: string, target: Element, expected?: string): void {
  stop(requestId);
  const doc = target.ownerDocument;
  const near = nearOf(target);
  const noise = endPrewatch(target);
  quiet();
  const w: Watch = {
    url: String(location.href),
    active: deepActiveElement(doc),
    state: stateOf(target),
    near,
    target,
    ...(expected !== undefined ? { expected } : {}),
    noise,
    ignored: 0,
    changes: 0,
    observed: new Set(),
    observer: new MutationObserver((records) => count(w, records)),
    timer: setTimeout(() => stop(requestId), READBACK_WATCH_MS),
  };
  observeAll(w, rootsOf(target, near));
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
  // findTarget: the one element with the fingerprint (the body for page_key's document target).
  const el = findTarget(document, fingerprint);
  const now = el ? stateOf(el) : {};
  const stateChanged = el ? [...new Set([...Object.keys(w.state), ...Object.keys(now)])].filter((k) => w.state[k] !== now[k]).slice(0, 16) : [];
  const active = deepActiveElement(document);
  let inViewport = false;
  if (el) {
    const r = el.getBoundingClientRect();
    inViewport = r.width > 0 && r.height > 0 && r.bottom > 0 && r.right > 0 && r.top < window.innerHeight && r.left < window.innerWidth;
  }
  // The element acted on counts as the target for focus even when its fingerprint no longer finds it (the
  // page changed its row on hover): the focus a click gives its own button is no effect of the click.
  const focusedEl = el !== null && active === el ? el : active !== null && active === w.target ? w.target : null;
  const editableEl = el ?? focusedEl;
  const o: ReadbackObservations = {
    found: el !== null,
    urlChanged: String(location.href) !== w.url,
    documentChanged: false,
    focused: focusedEl !== null,
    focusMoved: active !== w.active,
    editable: editableEl !== null && (editableEl instanceof HTMLInputElement || editableEl instanceof HTMLTextAreaElement || editableEl instanceof HTMLSelectElement || (editableEl instanceof HTMLElement && editableEl.isContentEditable)),
    stateChanged,
    domChangesNear: w.changes,
    ...(w.ignored > 0 ? { noiseIgnored: w.ignored } : {}),
    inViewport,
    ...(w.expected !== undefined ? { valueSet: el !== null && holdsValue(el, roleOf(el) ?? '', w.expected) } : {}),
  };
  stop(requestId);
  quiet();
  return o;
}
