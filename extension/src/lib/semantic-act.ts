/**
 * Acting on one semantic target in its document (issue 10 item 4;
 * docs/semantic-controls.md, "The lifecycle", step 3): scroll into
 * view, actionability (visible, stable across two animation frames, enabled,
 * receives pointer events), the viewport hit test at the target's visible
 * centre through shadow roots (`elementFromPoint` on the document, then on
 * each open or closed shadow root it lands in, then in each same-origin parent
 * frame at the iframe's place), and the synthetic events of click, hover,
 * focus and scroll. Every event is synthetic (`isTrusted` false): the answer
 * says `trustedInput: false`, and coordinates never leave this module.
 */
import type { SemanticOperation } from '../../../src/shared/semantic-target';
import { composedParent, framesAbove, roleOf, nameOf, shadowRootOf } from './semantic-roles';
import { composedContains } from './semantic-target';

/** Why an element is not actionable now (each a `not-actionable` refusal's detail). */
export type NotActionable = 'hidden' | 'unstable' | 'disabled' | 'inert' | 'no-pointer-events' | 'outside-viewport' | 'not-rendering';

/** The longest wait for one animation frame (ms): a page that does not render (a hidden tab) gets no frames. */
const FRAME_WAIT_MS = 500;

/** One animation frame, or `false` when none came within FRAME_WAIT_MS. */
function nextFrame(): Promise<boolean> {
  return new Promise((resolve) => {
    const t = setTimeout(() => resolve(false), FRAME_WAIT_MS);
    requestAnimationFrame(() => {
      clearTimeout(t);
      resolve(true);
    });
  });
}

const sameBox = (a: DOMRect, b: DOMRect) => a.x === b.x && a.y === b.y && a.width === b.width && a.height === b.height;

/** The visible part of `el`'s box (clipped to the viewport), or null when nothing of it is visible. */
function visibleBox(el: Element): DOMRect | null {
  const r = el.getBoundingClientRect();
  const left = Math.max(r.left, 0);
  const top = Math.max(r.top, 0);
  const right = Math.min(r.right, window.innerWidth);
  const bottom = Math.min(r.bottom, window.innerHeight);
  return right > left && bottom > top ? new DOMRect(left, top, right - left, bottom - top) : null;
}

/**
 * The synchronous actionability checks (no wait): visible, enabled, not inert, and, for a pointer
 * operation, receiving pointer events. Null when all pass. Run by `actionable` and again in the task
 * that fires the events (semantic-handlers.ts act), since the page runs during the frame waits.
 */
export function notActionableNow(el: Element, needsPointer: boolean): NotActionable | null {
  if (!el.checkVisibility({ visibilityProperty: true, opacityProperty: true })) return 'hidden';
  if (el.matches(':disabled') || el.getAttribute('aria-disabled') === 'true') return 'disabled';
  for (let a: Element | null = el; a; a = composedParent(a)) if ((a as HTMLElement).inert) return 'inert';
  if (needsPointer && getComputedStyle(el).pointerEvents === 'none') return 'no-pointer-events';
  return frameNotShown(el.ownerDocument);
}

/**
 * Why the frames showing `doc` hide it, or null: an `<iframe>` above it (same-origin ones: `frameElement`
 * is null across origins) that is not visible (`opacity: 0`, `visibility: hidden`, no box) or inert. The
 * target's own checks see only its document, where a page could show the person a decoy over a frame
 * made fully transparent, and have the click land in the frame.
 */
function frameNotShown(doc: Document): NotActionable | null {
  for (const frame of framesAbove(doc)) {
    if (!frame.checkVisibility({ visibilityProperty: true, opacityProperty: true })) return 'hidden';
    for (let a: Element | null = frame; a; a = composedParent(a)) if ((a as HTMLElement).inert) return 'inert';
  }
  return null;
}

/**
 * Scroll `el` into view, then the actionability checks. Answers the visible centre (viewport
 * coordinates, for the hit test and the events only) or why not.
 */
export async function actionable(el: Element, needsPointer: boolean): Promise<{ ok: true; x: number; y: number } | { ok: false; why: NotActionable }> {
  el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
  const now = notActionableNow(el, needsPointer);
  if (now) return { ok: false, why: now };
  // Stable: the same box across two animation frames (an element still moving would be hit elsewhere).
  const first = el.getBoundingClientRect();
  if (!(await nextFrame())) return { ok: false, why: 'not-rendering' };
  const second = el.getBoundingClientRect();
  if (!(await nextFrame())) return { ok: false, why: 'not-rendering' };
  const third = el.getBoundingClientRect();
  if (!sameBox(first, second) || !sameBox(second, third)) return { ok: false, why: 'unstable' };
  if (third.width <= 0 || third.height <= 0) return { ok: false, why: 'hidden' };
  const v = visibleBox(el);
  if (!v) return { ok: false, why: 'outside-viewport' };
  return { ok: true, x: v.x + v.width / 2, y: v.y + v.height / 2 };
}

/** The topmost element at (x, y) of `doc`, descending into open and closed shadow roots. */
export function deepElementFromPoint(doc: Document, x: number, y: number): Element | null {
  let top = doc.elementFromPoint(x, y);
  for (let i = 0; top && i < 32; i++) {
    const sr = shadowRootOf(top);
    if (!sr) break;
    const inner = sr.elementFromPoint(x, y);
    if (!inner || inner === top) break;
    top = inner;
  }
  return top;
}

/** The element the person would see covering the target: the nearest composed ancestor (or itself) that has a role. */
function namedCover(el: Element): Element {
  for (let a: Element | null = el, i = 0; a && i < 64; a = composedParent(a), i++) if (roleOf(a)) return a;
  return el;
}

/** The hit test's answer: the target receives the point, or the element covering it (in which document). */
export type HitTest = { ok: true } | { ok: false; cover: Element };

/**
 * The viewport hit test at (x, y): the topmost element there must be the target or inside it.
 * In a same-origin frame, the frame's `<iframe>` must also be the topmost element at that point
 * of its parent document (and so on up), so a parent's overlay over the frame counts as a cover.
 */
export function hitTest(el: Element, x: number, y: number): HitTest {
  const top = deepElementFromPoint(el.ownerDocument, x, y);
  if (!top || !composedContains(el, top)) return { ok: false, cover: namedCover(top ?? el.ownerDocument.documentElement) };
  let win: Window = el.ownerDocument.defaultView ?? window;
  let px = x;
  let py = y;
  for (let i = 0; i < 16; i++) {
    let frameEl: Element | null;
    try {
      frameEl = win.frameElement;
    } catch {
      return { ok: false, cover: el.ownerDocument.documentElement }; // a parent that cannot be read
    }
    // No frame element but a parent: the parent is cross-origin, and what covers the frame there cannot be seen.
    if (!frameEl) return win.parent === win ? { ok: true } : { ok: false, cover: el.ownerDocument.documentElement };
    const r = frameEl.getBoundingClientRect();
    px += r.left + frameEl.clientLeft;
    py += r.top + frameEl.clientTop;
    const above = deepElementFromPoint(frameEl.ownerDocument, px, py);
    if (!above || !composedContains(frameEl, above)) return { ok: false, cover: namedCover(above ?? frameEl) };
    win = frameEl.ownerDocument.defaultView as Window;
  }
  return { ok: true };
}

/** What to say about a covering element: its role and accessible name (the caller adds a ref). */
export function describeCover(el: Element): { role: string; name: string } {
  const role = roleOf(el) ?? el.localName;
  return { role, name: nameOf(el, role).slice(0, 128) };
}

const mouseInit = (x: number, y: number, buttons = 0): MouseEventInit => ({
  bubbles: true, cancelable: true, composed: true, clientX: x, clientY: y, button: 0, buttons, view: window,
});
const pointerInit = (x: number, y: number, buttons = 0): PointerEventInit => ({ ...mouseInit(x, y, buttons), pointerId: 1, pointerType: 'mouse', isPrimary: true });

/** The synthetic hover sequence at (x, y) on `el` (pointer/mouse over, enter and move). */
function hoverEvents(el: Element, x: number, y: number): void {
  el.dispatchEvent(new PointerEvent('pointerover', pointerInit(x, y)));
  el.dispatchEvent(new PointerEvent('pointerenter', { ...pointerInit(x, y), bubbles: false }));
  el.dispatchEvent(new MouseEvent('mouseover', mouseInit(x, y)));
  el.dispatchEvent(new MouseEvent('mouseenter', { ...mouseInit(x, y), bubbles: false }));
  el.dispatchEvent(new PointerEvent('pointermove', pointerInit(x, y)));
  el.dispatchEvent(new MouseEvent('mousemove', mouseInit(x, y)));
}

/**
 * Perform `operation` on `el` (already checked). click: hover, then down, focus (a synthetic
 * mousedown has no default action, so the focus it would give is given here unless the page
 * prevented it), up, and `click` (whose activation behaviour runs: a checkbox toggles, a link
 * follows, a submit button submits). hover: the hover sequence. focus: `focus()`. scroll: already
 * scrolled into view by the actionability step (or here, for scroll alone).
 * `x`, `y`: the visible centre from `actionable` (click and hover only). `beforeClick`: called
 * right before the `click` event (the readback's rebase, semantic-readback.ts).
 */
export function perform(operation: Exclude<SemanticOperation, 'type'>, el: Element, x = 0, y = 0, beforeClick?: () => void): void {
  switch (operation) {
    case 'scroll':
      el.scrollIntoView({ block: 'center', inline: 'nearest', behavior: 'instant' });
      return;
    case 'focus':
      (el as HTMLElement).focus?.();
      return;
    case 'hover':
      hoverEvents(el, x, y);
      return;
    case 'click': {
      hoverEvents(el, x, y);
      el.dispatchEvent(new PointerEvent('pointerdown', pointerInit(x, y, 1)));
      const down = el.dispatchEvent(new MouseEvent('mousedown', mouseInit(x, y, 1)));
      if (down && el instanceof HTMLElement && el.tabIndex >= 0) el.focus({ preventScroll: true });
      el.dispatchEvent(new PointerEvent('pointerup', pointerInit(x, y)));
      el.dispatchEvent(new MouseEvent('mouseup', mouseInit(x, y)));
      beforeClick?.();
      el.dispatchEvent(new MouseEvent('click', { ...mouseInit(x, y), detail: 1 }));
      return;
    }
  }
}
