/**
 * Focus for `page_key` (issue 10 item 4 "Key"; docs/semantic-controls.md,
 * "Key"), in the isolated world of one document:
 *  - which document of the tab holds the focus, and the key's target there
 *    (the deepest focused element, through open and closed shadow roots; the
 *    document itself when no element is focused) with its fingerprint;
 *  - HTML sequential focus navigation (HTML Living Standard, "Sequential focus
 *    navigation" and "tabindex-ordered focus navigation scope", with Chromium's
 *    radio-group rule), across open and closed shadow roots, slots and
 *    same-origin iframes, from the topmost same-origin document.
 * Reads the DOM only; the caller moves the focus (./semantic-key.ts).
 */
import { redactText } from '../../../src/shared/redact';
import { FINGERPRINT_BOUNDS, type Fingerprint } from '../../../src/shared/semantic-target';
import { DOCUMENT_TARGET_ROLE } from '../../../src/shared/semantic-key';
import { composedContains, findByQuery, fingerprintOf, MAX_TARGET_SCAN } from './semantic-target';
import { deepActiveElement, shadowRootOf } from './semantic-roles';

// Sequential navigation crosses same-origin frames, whose nodes belong to another realm: `instanceof`
// a constructor of this frame is false for them. Every test here goes by nodeType and localName.

/** Whether `n` is a shadow root (of any realm). */
const isShadowRoot = (n: Node | null): n is ShadowRoot => !!n && n.nodeType === Node.DOCUMENT_FRAGMENT_NODE && 'host' in n;
/** Whether `n` is a document (of any realm). */
const isDocument = (n: Node): n is Document => n.nodeType === Node.DOCUMENT_NODE;


/** Frames climbed or descended at most (a page cannot nest more that we would follow). */
const MAX_FRAME_DEPTH = 16;

/** The frame element of `win` in its parent, `null` at the top, `undefined` when the parent cannot be read (cross-origin). */
function frameElementOf(win: Window): Element | null | undefined {
  try {
    const fe = win.frameElement;
    if (fe) return fe;
    return win.parent === win ? null : undefined;
  } catch {
    return undefined;
  }
}

/** The topmost document reachable from `doc` through same-origin parents (the top itself when all are readable). */
export function topReadableDocument(doc: Document): Document {
  let d = doc;
  for (let i = 0; i < MAX_FRAME_DEPTH; i++) {
    const win = d.defaultView;
    const fe = win ? frameElementOf(win) : null;
    if (!fe) return d;
    d = fe.ownerDocument;
  }
  return d;
}

/** The content document of a same-origin frame element, or null (not a frame, or not readable). */
export function frameDocumentOf(el: Element): Document | null {
  if (el.localName !== 'iframe' && el.localName !== 'frame') return null;
  try {
    return (el as HTMLIFrameElement).contentDocument;
  } catch {
    return null;
  }
}

/**
 * Whether `doc` holds the tab's focus among its frames: it is the top, or every parent up to the top
 * is readable and has the frame of the child as its deepest focused element.
 */
export function holdsFocus(doc: Document): boolean {
  let d = doc;
  for (let i = 0; i < MAX_FRAME_DEPTH; i++) {
    const win = d.defaultView;
    if (!win) return false;
    const fe = frameElementOf(win);
    if (fe === null) return true;
    if (fe === undefined || deepActiveElement(fe.ownerDocument) !== fe) return false;
    d = fe.ownerDocument;
  }
  return false;
}

/** Whether `el` stands for its document as the key's target (nothing else focused): the body or the root element. */
export const isDocumentTarget = (el: Element): boolean => el === el.ownerDocument.body || el === el.ownerDocument.documentElement;

/**
 * The key's target in `doc`, when `doc` holds the focus (holdsFocus): its deepest focused element, or
 * the body (the document) when none is; null when `doc` does not hold the focus or a same-origin frame
 * of it does (then that frame's document holds it). A focused cross-origin frame is the target itself
 * (blocked as `cross-origin-frame`).
 */
export function focusedTarget(doc: Document): Element | null {
  if (!holdsFocus(doc)) return null;
  const a = deepActiveElement(doc);
  if (!a || isDocumentTarget(a)) return doc.body ?? doc.documentElement;
  if (frameDocumentOf(a)) return null;
  return a;
}

/**
 * The fingerprint of the key's target `el`: its own (lib/semantic-target.ts fingerprintOf), or for the
 * document (isDocumentTarget) `{role: DOCUMENT_TARGET_ROLE, name: <its title, redacted and cut>}`;
 * null for a focused element with no role (it cannot be described to the person).
 */
export function keyTargetFingerprint(el: Element): Fingerprint | null {
  if (!isDocumentTarget(el)) return fingerprintOf(el);
  const title = redactText((el.ownerDocument.title ?? '').replace(/\s+/g, ' ').trim()).value.slice(0, FINGERPRINT_BOUNDS.name);
  return { role: DOCUMENT_TARGET_ROLE, name: title, ancestors: [], nth: 0 };
}

/**
 * The element of `doc` with `fp` (the readback's independent look-up): the body for the document's
 * fingerprint, else the one match, or null. By the target's own description: its item's text is left
 * out, since the action's effect may be in it (a character count, a row marked read).
 */
export function findTarget(doc: Document, fp: Fingerprint): Element | null {
  if (fp.role === DOCUMENT_TARGET_ROLE) return doc.body ?? doc.documentElement;
  const found = findByQuery(doc, fp, false);
  return found.length === 1 ? (found[0] as { el: Element }).el : null;
}

/** The deepest focused element of the tab's readable frames, from the topmost readable document down through same-origin frames; null for none (the body). */
export function deepFocusFromTop(doc: Document): Element | null {
  let d = topReadableDocument(doc);
  for (let i = 0; i < MAX_FRAME_DEPTH; i++) {
    const a = deepActiveElement(d);
    if (!a || isDocumentTarget(a)) return null;
    const inner = frameDocumentOf(a);
    if (!inner) return a;
    d = inner;
  }
  return null;
}

// ---------------------------------------------------------------------------------------------
// Sequential focus navigation
// ---------------------------------------------------------------------------------------------

/** One stop of the flattened tabindex-ordered focus navigation scope: an element, or a cross-origin frame (opaque: its inside cannot be seen). */
export interface FocusStop {
  el: Element;
  /** Its tabindex value in its own scope (0 for the default order). */
  tab: number;
  opaque: boolean;
}

/**
 * The tabindex value of `el` (HTML "rules for parsing integers" on the attribute), or null when it
 * has no valid `tabindex` attribute.
 */
function tabindexAttr(el: Element): number | null {
  const v = el.getAttribute('tabindex');
  if (v === null) return null;
  const m = /^[\t\n\f\r ]*([+-]?\d+)/.exec(v);
  if (!m) return null;
  const n = Number(m[1]);
  return Number.isSafeInteger(n) ? Math.max(Math.min(n, 2 ** 31 - 1), -(2 ** 31)) : null;
}

/**
 * Whether `el` is a focusable area by itself (HTML "focusable area" and Chromium's defaults): links and
 * image-map areas with href, buttons, inputs other than hidden, selects, textareas, the first summary
 * of a details, media with controls, an editing host, or any element with a valid tabindex.
 */
function focusableArea(el: Element): boolean {
  if (tabindexAttr(el) !== null) return true;
  switch (el.localName) {
    case 'a':
    case 'area':
      return el.hasAttribute('href');
    case 'button':
    case 'select':
    case 'textarea':
      return true;
    case 'input':
      return (el as HTMLInputElement).type !== 'hidden';
    case 'summary':
      return el.parentElement?.localName === 'details' && el.parentElement.querySelector(':scope > summary') === el;
    case 'audio':
    case 'video':
      return el.hasAttribute('controls');
    default:
      return (el as HTMLElement).isContentEditable === true && !(el.parentElement?.isContentEditable ?? false);
  }
}

/**
 * Chromium's radio-group rule for sequential navigation (RadioInputType::IsKeyboardFocusable, and what
 * the real key does, checked by e2e/semantic-key): a radio is a stop only when it is the checked one of
 * its group or, when none is checked, the group's first radio (in both directions: Shift+Tab into an
 * unchecked group lands on its first radio too); never when the focused element is another radio of the
 * same group (Tab leaves the group). A group: same name, same form owner, same tree. The focused radio
 * itself always counts, so navigation can start from it.
 */
function radioIsStop(r: HTMLInputElement, focused: Element | null): boolean {
  if (!r.name || focused === r) return true;
  const sameGroup = (x: Element | null): x is HTMLInputElement => {
    const i = x as HTMLInputElement | null;
    return !!i && i.localName === 'input' && i.type === 'radio' && i.name === r.name && i.form === r.form && i.getRootNode() === r.getRootNode();
  };
  if (sameGroup(focused)) return false;
  if (r.checked) return true;
  const root = r.getRootNode() as Document | ShadowRoot;
  const group = [...root.querySelectorAll('input[type=radio]')].filter(sameGroup);
  if (group.some((x) => x.checked)) return false;
  return group[0] === r;
}

/** Whether `el` (a focusable area with a non-negative tabindex) can take the focus now: enabled and rendered visible. */
function canTakeFocus(el: Element, focused: Element | null): boolean {
  if (el.matches(':disabled')) return false;
  if (!el.checkVisibility({ visibilityProperty: true })) return false;
  if (el.localName === 'input' && (el as HTMLInputElement).type === 'radio' && !radioIsStop(el as HTMLInputElement, focused)) return false;
  return true;
}

/** A candidate of one scope: an element that is a stop, the owner of a nested scope, or both. */
interface Candidate {
  el: Element;
  tab: number;
  stop: boolean;
  /** The nested scope it owns: a shadow root, a slot, a same-origin frame's document, or an opaque frame. */
  scope: ShadowRoot | HTMLSlotElement | Document | 'opaque' | null;
}

interface Walk {
  focused: Element | null;
  /** Elements visited (bounded by MAX_TARGET_SCAN). */
  seen: number;
  depth: number;
}

/** The element children of a scope: a document's root element, a shadow root's children, a slot's assigned elements (flattened) or else its fallback children. */
function scopeChildren(scope: ShadowRoot | HTMLSlotElement | Document): Element[] {
  if (isDocument(scope)) return scope.documentElement ? [scope.documentElement] : [];
  if (isShadowRoot(scope)) return [...scope.children];
  const assigned = scope.assignedElements({ flatten: true });
  return assigned.length ? assigned : [...scope.children];
}

/** The open modal `<dialog>` of `doc` (top layer: the last one opened is on top), or null. Outside it everything is inert. */
function modalDialogOf(doc: Document): Element | null {
  const open = [...doc.querySelectorAll('dialog[open]')].filter((d) => d.matches(':modal'));
  return open.length ? (open[open.length - 1] as Element) : null;
}

/** Collect the candidates of one scope in tree order (not descending into nested scopes, nor into inert or unrendered subtrees). */
function collect(children: Element[], out: Candidate[], w: Walk, modal: Element | null): void {
  const stack = [...children].reverse();
  while (stack.length) {
    const el = stack.pop() as Element;
    if (++w.seen > MAX_TARGET_SCAN) throw new Error('the page has too many elements to navigate');
    // An inert subtree takes no focus (HTML "inert"); outside an open modal dialog everything is inert.
    if ((el as HTMLElement).inert) continue;
    if (modal && !composedContains(el, modal) && !composedContains(modal, el)) continue;
    // display:none (and content-visibility hidden) removes the subtree; display:contents has no box but its children may.
    if (!el.checkVisibility() && getComputedStyle(el).display !== 'contents') continue;
    const attr = tabindexAttr(el);
    if (el.localName === 'slot') {
      out.push({ el, tab: attr ?? 0, stop: false, scope: el as HTMLSlotElement });
      continue;
    }
    const sr = shadowRootOf(el);
    const isFrame = el.localName === 'iframe' || el.localName === 'frame';
    const stop = !isFrame && focusableArea(el) && (attr ?? 0) >= 0 && !(sr?.delegatesFocus ?? false) && canTakeFocus(el, w.focused);
    if (sr) {
      // A shadow host is a scope owner: its tabindex (0 when none) places its whole scope; its light children are reached through its slots.
      out.push({ el, tab: attr ?? 0, stop, scope: sr });
      continue;
    }
    if (isFrame) {
      out.push({ el, tab: attr ?? 0, stop: false, scope: frameDocumentOf(el) ?? 'opaque' });
      continue;
    }
    if (stop) out.push({ el, tab: attr ?? 0, stop: true, scope: null });
    for (let i = el.children.length - 1; i >= 0; i--) stack.push(el.children[i] as Element);
  }
}

/**
 * The flattened tabindex-ordered focus navigation scope of `scope` (HTML "flattened tabindex-ordered
 * focus navigation scope"): its candidates with a positive tabindex first, ascending (tree order among
 * equals), then those with tabindex 0 in tree order; a negative tabindex drops the element and the scope
 * it owns; each scope owner is followed by its own scope's order.
 */
function flattened(scope: ShadowRoot | HTMLSlotElement | Document, w: Walk): FocusStop[] {
  if (w.depth > 64) return [];
  const doc = isDocument(scope) ? scope : scope.ownerDocument;
  const cands: Candidate[] = [];
  collect(scopeChildren(scope), cands, w, modalDialogOf(doc));
  const ordered = [...cands.filter((c) => c.tab > 0).sort((a, b) => a.tab - b.tab), ...cands.filter((c) => c.tab === 0)];
  const out: FocusStop[] = [];
  for (const c of ordered) {
    if (c.stop) out.push({ el: c.el, tab: c.tab, opaque: false });
    if (c.scope === 'opaque') out.push({ el: c.el, tab: c.tab, opaque: true });
    else if (c.scope) {
      w.depth++;
      for (const s of flattened(c.scope, w)) out.push({ ...s, tab: c.tab > 0 ? c.tab : s.tab });
      w.depth--;
    }
  }
  return out;
}

/** The tab's sequential focus order from the topmost readable document (open and closed shadow roots, slots, same-origin frames; cross-origin frames as opaque stops). */
export function focusOrder(doc: Document, focused: Element | null): FocusStop[] {
  return flattened(topReadableDocument(doc), { focused, seen: 0, depth: 0 });
}

/**
 * Every element of the tab's readable frames in flat-tree order (a host's shadow root in place of its
 * children, a slot's assigned elements in place of its own, a frame's document at its element), numbered.
 */
function flatOrder(top: Document): Map<Element, number> {
  const order = new Map<Element, number>();
  const stack: Element[] = top.documentElement ? [top.documentElement] : [];
  while (stack.length) {
    const el = stack.pop() as Element;
    if (order.size > MAX_TARGET_SCAN) throw new Error('the page has too many elements to navigate');
    order.set(el, order.size);
    const inner = frameDocumentOf(el);
    const sr = shadowRootOf(el);
    const kids = inner?.documentElement ? [inner.documentElement] : sr ? [...sr.children] : el.localName === 'slot' ? scopeChildren(el as HTMLSlotElement) : [...el.children];
    for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i] as Element);
  }
  return order;
}

/**
 * Where sequential focus navigation goes from `current` (the key's target; a document target starts at
 * its document), forwards (Tab) or backwards (Shift+Tab): the next stop of focusOrder, or `null` past
 * the last (before the first) stop, where focus leaves the page's elements. When `current` is not a
 * stop itself (the document, a tabindex=-1 element focused by script or click), the search starts at its
 * place in the flat tree among the default-order (tabindex 0) stops, as Chromium treats it; from the
 * top document with nothing focused, the first (last) stop.
 */
export function nextFocus(current: Element, backwards: boolean): FocusStop | null {
  const doc = current.ownerDocument;
  const focused = isDocumentTarget(current) ? null : current;
  const stops = focusOrder(doc, focused);
  const i = focused ? stops.findIndex((s) => s.el === focused) : -1;
  if (i >= 0) return stops[backwards ? i - 1 : i + 1] ?? null;
  if (!focused && topReadableDocument(doc) === doc) return (backwards ? stops[stops.length - 1] : stops[0]) ?? null;
  const order = flatOrder(topReadableDocument(doc));
  const at = order.get(focused ?? doc.documentElement) ?? -1;
  const pos = (s: FocusStop) => order.get(s.el) ?? -1;
  if (!backwards) return stops.find((s) => s.tab === 0 && pos(s) > at) ?? null;
  for (let k = stops.length - 1; k >= 0; k--) if ((stops[k] as FocusStop).tab === 0 && pos(stops[k] as FocusStop) < at) return stops[k] as FocusStop;
  const positives = stops.filter((s) => s.tab > 0);
  return positives[positives.length - 1] ?? null;
}

