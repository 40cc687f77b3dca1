/**
 * The key of `page_key` in the page (issue 10 item 4 "Key"; docs/semantic-controls.md,
 * "Key"): the synthetic `keydown` (cancelable, composed; `isTrusted` false),
 * `keypress` for Enter and Space, and `keyup`, and — since synthetic key events
 * perform no default action (FACTS) — the key's default action performed here
 * when the page did not cancel the `keydown`:
 *  - Tab / Shift+Tab: sequential focus navigation (./semantic-focus.ts nextFocus);
 *  - Enter: a link, button or summary is activated (`click()`); a text field of a form
 *    submits it implicitly (HTML "implicit submission");
 *  - Space: a button, checkbox, radio or summary is activated (after `keyup`, as Chromium
 *    does); a text field or select: nothing (text goes through page_type); elsewhere, a page of scroll;
 *  - arrows in a radio group: the next (previous) radio of the group is focused and checked
 *    (Chromium's RadioInputType); arrows, Home, End, PageUp, PageDown elsewhere scroll the
 *    nearest scroller (none in a text field or select: the caret and options are not emulated);
 *  - Escape: an open modal `<dialog>` gets `cancel`, then closes unless cancelled.
 * `prepareKey` decides the default before any event (a Tab into a cross-origin frame is refused
 * then: it cannot be emulated); `pressKey` fires the events and performs it, recording what the
 * readback (`keyObservation`, a separate message) checks.
 */
import { keyEventFields, type AllowedKey, type KeyDefault, type KeyObservation } from '../../../src/shared/semantic-key';
import { closestComposed, composedParent } from './semantic-roles';
import { blockedReason } from './semantic-target';
import { deepFocusFromTop, isDocumentTarget, nextFocus, topReadableDocument } from './semantic-focus';

/** Scroll of one arrow press (CSS px; Chromium's line step). */
export const ARROW_SCROLL_PX = 40;
/** Share of the scroller's visible height one PageUp, PageDown or Space scrolls (Chromium's paging step). */
export const PAGE_SCROLL_FRACTION = 0.875;

/** Input types whose field blocks implicit submission (HTML "field that blocks implicit submission") and that take text. */
const TEXT_FIELD_TYPES = new Set(['text', 'search', 'email', 'url', 'tel', 'password', 'date', 'month', 'week', 'time', 'datetime-local', 'number']);

/** Whether `el` takes text or a choice by keys (caret, options): keys other than Tab, Enter and Escape are not emulated there. */
function takesText(el: Element): boolean {
  if (el instanceof HTMLInputElement) return TEXT_FIELD_TYPES.has(el.type) || el.type === 'range' || el.type === 'color' || el.type === 'file';
  return el instanceof HTMLTextAreaElement || el instanceof HTMLSelectElement || (el instanceof HTMLElement && el.isContentEditable);
}

/** Whether Enter activates `el` (HTML: links and buttons have activation behaviour on Enter; so does a details' summary). */
function enterActivates(el: Element): boolean {
  if ((el.localName === 'a' || el.localName === 'area') && el.hasAttribute('href')) return true;
  if (el instanceof HTMLButtonElement) return true;
  if (el instanceof HTMLInputElement && ['button', 'submit', 'reset', 'image'].includes(el.type)) return true;
  return el.localName === 'summary';
}

/** Whether Space activates `el` (buttons, checkboxes, radios, summary). */
function spaceActivates(el: Element): boolean {
  if (el instanceof HTMLButtonElement || el.localName === 'summary') return true;
  return el instanceof HTMLInputElement && ['button', 'submit', 'reset', 'image', 'checkbox', 'radio'].includes(el.type);
}

/**
 * HTML "implicit submission" for Enter in `field`: the form's default button (its first submit button in
 * tree order) is clicked when enabled (a disabled one: nothing); with no default button, the form is
 * submitted (`requestSubmit`: validation and the `submit` event) unless more than one field blocks
 * implicit submission. Null when nothing is to be done.
 */
function implicitSubmission(field: HTMLInputElement): (() => void) | null | { blocked: string } {
  const form = field.form;
  if (!form || !TEXT_FIELD_TYPES.has(field.type)) return null;
  const controls = [...form.elements];
  const button = controls.find((c) => (c instanceof HTMLButtonElement && c.type === 'submit') || (c instanceof HTMLInputElement && (c.type === 'submit' || c.type === 'image')));
  if (button && !(button as HTMLButtonElement).matches(':disabled')) {
    // Enter clicks the default button: a blocked one (a private part, a password form's) is never activated by a key either.
    const blocked = blockedReason(button);
    if (blocked) return { blocked };
  }
  if (button) return (button as HTMLButtonElement).matches(':disabled') ? null : () => (button as HTMLElement).click();
  const blocking = controls.filter((c) => c instanceof HTMLInputElement && TEXT_FIELD_TYPES.has(c.type)).length;
  return blocking > 1 ? null : () => form.requestSubmit();
}

/** The next (or previous) radio of `r`'s group (same name, form and tree), skipping disabled and hidden ones, wrapping; null when none other. */
function nextRadio(r: HTMLInputElement, backwards: boolean): HTMLInputElement | null {
  if (!r.name) return null;
  const root = r.getRootNode() as Document | ShadowRoot;
  const group = [...root.querySelectorAll('input[type=radio]')].filter(
    (x): x is HTMLInputElement => x instanceof HTMLInputElement && x.name === r.name && x.form === r.form && (x === r || (!x.matches(':disabled') && x.checkVisibility({ visibilityProperty: true }))),
  );
  const i = group.indexOf(r);
  if (group.length < 2 || i < 0) return null;
  return group[(i + (backwards ? group.length - 1 : 1)) % group.length] as HTMLInputElement;
}

/** Whether `el` scrolls on the axis (overflow auto or scroll, with more content than room). */
function scrollsOn(el: Element, vertical: boolean): boolean {
  const s = getComputedStyle(el);
  const o = vertical ? s.overflowY : s.overflowX;
  if (o !== 'auto' && o !== 'scroll') return false;
  return vertical ? el.scrollHeight > el.clientHeight : el.scrollWidth > el.clientWidth;
}

/** The nearest scroller of `from` on the axis (composed ancestors), else the document's scrolling element. */
function scrollerOf(from: Element, vertical: boolean): Element {
  for (let a: Element | null = from, i = 0; a && i < 256; a = composedParent(a), i++) {
    if (a === a.ownerDocument.body || a === a.ownerDocument.documentElement) break;
    if (scrollsOn(a, vertical)) return a;
  }
  return from.ownerDocument.scrollingElement ?? from.ownerDocument.documentElement;
}

/** The scroll a key asks for: the axis and the new position of the scroller. */
function scrollFor(key: AllowedKey, scroller: Element): { top?: number; left?: number } {
  const page = Math.max(scroller === scroller.ownerDocument.scrollingElement ? (scroller.ownerDocument.defaultView?.innerHeight ?? scroller.clientHeight) : scroller.clientHeight, 1) * PAGE_SCROLL_FRACTION;
  switch (key) {
    case 'ArrowUp': return { top: scroller.scrollTop - ARROW_SCROLL_PX };
    case 'ArrowDown': return { top: scroller.scrollTop + ARROW_SCROLL_PX };
    case 'ArrowLeft': return { left: scroller.scrollLeft - ARROW_SCROLL_PX };
    case 'ArrowRight': return { left: scroller.scrollLeft + ARROW_SCROLL_PX };
    case 'PageUp': return { top: scroller.scrollTop - page };
    case 'PageDown':
    case 'Space': return { top: scroller.scrollTop + page };
    case 'Home': return { top: 0 };
    case 'End': return { top: scroller.scrollHeight };
    default: return {};
  }
}

/** The modal dialog Escape closes: the one around the focused element, else the document's topmost open modal dialog. */
function modalForEscape(el: Element): HTMLDialogElement | null {
  const around = closestComposed(el, 'dialog');
  if (around instanceof HTMLDialogElement && around.open && around.matches(':modal')) return around;
  const open = [...el.ownerDocument.querySelectorAll('dialog[open]')].filter((d) => d.matches(':modal'));
  const top = open[open.length - 1];
  return top instanceof HTMLDialogElement ? top : null;
}

/** The default a key will perform, decided before any event (the page may change things in its handlers; what was decided is what runs). */
export type KeyPlan =
  | { kind: 'focus'; to: Element | null }
  | { kind: 'activate'; el: Element; afterKeyup: boolean }
  | { kind: 'submit'; run: () => void }
  | { kind: 'radio'; to: HTMLInputElement }
  | { kind: 'scroll'; scroller: Element }
  | { kind: 'dialog'; dialog: HTMLDialogElement }
  | { kind: 'none' };

/**
 * The default `key` would perform on the target `el` (the focused element, or the body for the document),
 * or why it cannot be emulated (`cross-origin-frame-next`: Tab would enter a cross-origin frame).
 */
export function prepareKey(el: Element, key: AllowedKey): { ok: true; plan: KeyPlan } | { ok: false; why: string; code?: 'target-blocked' } {
  const doc = isDocumentTarget(el);
  switch (key) {
    case 'Tab':
    case 'Shift+Tab': {
      const next = nextFocus(el, key === 'Shift+Tab');
      if (next?.opaque) return { ok: false, why: 'cross-origin-frame-next: the next focus stop is inside a cross-origin frame, which cannot be seen or emulated' };
      return { ok: true, plan: { kind: 'focus', to: next ? next.el : null } };
    }
    case 'Enter': {
      if (doc) return { ok: true, plan: { kind: 'none' } };
      if (enterActivates(el)) return { ok: true, plan: { kind: 'activate', el, afterKeyup: false } };
      const run = el instanceof HTMLInputElement ? implicitSubmission(el) : null;
      if (run && typeof run === 'object') return { ok: false, code: 'target-blocked', why: `Enter would click the form's default button, which is blocked (${run.blocked})` };
      return { ok: true, plan: run ? { kind: 'submit', run } : { kind: 'none' } };
    }
    case 'Space':
      if (!doc && spaceActivates(el)) return { ok: true, plan: { kind: 'activate', el, afterKeyup: true } };
      if (!doc && takesText(el)) return { ok: true, plan: { kind: 'none' } };
      return { ok: true, plan: { kind: 'scroll', scroller: scrollerOf(el, true) } };
    case 'Escape': {
      const dialog = modalForEscape(el);
      return { ok: true, plan: dialog ? { kind: 'dialog', dialog } : { kind: 'none' } };
    }
    default: {
      if (!doc && el instanceof HTMLInputElement && el.type === 'radio') {
        const to = nextRadio(el, key === 'ArrowUp' || key === 'ArrowLeft');
        if (key.startsWith('Arrow')) return { ok: true, plan: to ? { kind: 'radio', to } : { kind: 'none' } };
      }
      if (!doc && takesText(el)) return { ok: true, plan: { kind: 'none' } };
      return { ok: true, plan: { kind: 'scroll', scroller: scrollerOf(el, key !== 'ArrowLeft' && key !== 'ArrowRight') } };
    }
  }
}

/** What the readback of a key checks (kept until the readback, at most KEY_WATCH_MS). */
interface KeyWatch {
  default: KeyDefault;
  check: () => boolean;
  timer: ReturnType<typeof setTimeout>;
}

/** A key's record left without its readback ends after this long (ms). */
export const KEY_WATCH_MS = 30_000;
const keyWatches = new Map<string, KeyWatch>();

function record(requestId: string, d: KeyDefault, check: () => boolean): void {
  forgetKey(requestId);
  keyWatches.set(requestId, { default: d, check, timer: setTimeout(() => forgetKey(requestId), KEY_WATCH_MS) });
}

/** Forget the record of `requestId`. */
export function forgetKey(requestId: string): void {
  const w = keyWatches.get(requestId);
  if (!w) return;
  clearTimeout(w.timer);
  keyWatches.delete(requestId);
}

/** The key's part of the readback of `requestId` (then forgotten), or null when no key was pressed here under it. */
export function keyObservation(requestId: string): KeyObservation | null {
  const w = keyWatches.get(requestId);
  if (!w) return null;
  let landed = false;
  try {
    landed = w.check();
  } catch {
    landed = false;
  }
  forgetKey(requestId);
  return { default: w.default, landed };
}

/** One synthetic keyboard event of `key` on `target`; answers whether the page did not cancel it. */
function fire(type: 'keydown' | 'keypress' | 'keyup', key: AllowedKey, target: Element): boolean {
  const f = keyEventFields(key);
  const code = { Tab: 9, Enter: 13, Escape: 27, ' ': 32, PageUp: 33, PageDown: 34, End: 35, Home: 36, ArrowLeft: 37, ArrowUp: 38, ArrowRight: 39, ArrowDown: 40 }[f.key] ?? 0;
  const init: KeyboardEventInit & { keyCode: number; which: number; charCode: number } = {
    key: f.key, code: f.code, shiftKey: f.shiftKey, bubbles: true, cancelable: true, composed: true,
    view: target.ownerDocument.defaultView, keyCode: type === 'keypress' ? (f.key === ' ' ? 32 : 13) : code, which: code, charCode: type === 'keypress' ? code : 0,
  };
  return target.dispatchEvent(new KeyboardEvent(type, init));
}

/** Where keyup goes after the default: the element focused now (a Tab's keyup reaches the new focus, as with a real key), else the target. */
function keyupTarget(fallback: Element): Element {
  const now = deepFocusFromTop(fallback.ownerDocument);
  if (now && now.isConnected) return now;
  return fallback.isConnected ? fallback : (topReadableDocument(fallback.ownerDocument).body ?? fallback);
}

/**
 * Press `key` on the target `el` under `plan` (prepareKey): `keydown`; unless the page cancelled it, the
 * default (with `keypress` first for Enter and Space, whose cancellation cancels it too); then `keyup`
 * (Space activates after it). Records what the readback checks under `requestId`; answers the default
 * performed. Synchronous: no await between the checks before it and the events.
 */
export function pressKey(requestId: string, el: Element, key: AllowedKey, plan: KeyPlan): KeyDefault {
  let performed: KeyDefault = 'none';
  let check: () => boolean = () => false;
  const go = fire('keydown', key, el) && (key !== 'Enter' && key !== 'Space' ? true : fire('keypress', key, el));
  if (!go) performed = 'prevented';
  else {
    switch (plan.kind) {
      case 'focus': {
        const to = plan.to;
        if (to) {
          (to as HTMLElement).focus();
          performed = 'focus-moved';
          check = () => deepFocusFromTop(el.ownerDocument) === to;
        } else {
          const now = deepFocusFromTop(el.ownerDocument);
          (now as HTMLElement | null)?.blur?.();
          performed = 'focus-left';
          check = () => deepFocusFromTop(el.ownerDocument) === null;
        }
        break;
      }
      case 'activate':
        if (!plan.afterKeyup) {
          (plan.el as HTMLElement).click();
          performed = 'activated';
        }
        break;
      case 'submit':
        plan.run();
        performed = 'submitted';
        break;
      case 'radio': {
        const to = plan.to;
        to.focus();
        if (!to.checked) to.click();
        performed = 'checked';
        check = () => to.checked && deepFocusFromTop(el.ownerDocument) === to;
        break;
      }
      case 'scroll': {
        const s = plan.scroller;
        const before = { top: s.scrollTop, left: s.scrollLeft };
        s.scrollTo({ ...scrollFor(key, s), behavior: 'instant' });
        performed = 'scrolled';
        check = () => s.scrollTop !== before.top || s.scrollLeft !== before.left;
        break;
      }
      case 'dialog': {
        const d = plan.dialog;
        if (d.dispatchEvent(new Event('cancel', { cancelable: true }))) {
          d.close();
          performed = 'dialog-closed';
          check = () => !d.open;
        }
        break;
      }
      case 'none':
        break;
    }
  }
  const up = fire('keyup', key, keyupTarget(el));
  if (go && plan.kind === 'activate' && plan.afterKeyup) {
    if (up) {
      (plan.el as HTMLElement).click();
      performed = 'activated';
    } else performed = 'prevented';
  }
  record(requestId, performed, check);
  return performed;
}
