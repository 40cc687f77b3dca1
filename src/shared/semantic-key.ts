/**
 * The shared contract of `page_key` (faculty `semantic`, operation `key`;
 * issue 10 item 4 "Key"; docs/semantic-controls.md, "Key"): the allow-list of
 * navigation and control keys, the check of the operation's arguments
 * (`{key}`, bound by the grant's arguments hash), the default actions the
 * extension performs itself (synthetic key events perform none, FACTS), and
 * how the document is described when no element holds the focus.
 * Pure TypeScript, used by the console, the extension and the tests.
 */

/**
 * The keys `page_key` takes, spelled as `KeyboardEvent.key` spells them (UI Events KeyboardEvent
 * key values), with `Shift+Tab` for Tab with the Shift modifier and `Space` for `" "` (a visible
 * name for the agent and the person). Nothing else: no characters (text goes through the
 * typed-field operation), no modifiers beyond Shift+Tab, no shortcuts.
 */
export const ALLOWED_KEYS = [
  'Tab', 'Shift+Tab', 'ArrowUp', 'ArrowDown', 'ArrowLeft', 'ArrowRight', 'Home', 'End', 'PageUp', 'PageDown', 'Escape', 'Enter', 'Space',
] as const;
export type AllowedKey = (typeof ALLOWED_KEYS)[number];

/** Whether `k` is one of ALLOWED_KEYS (exact spelling, case-sensitive). */
export function isAllowedKey(k: unknown): k is AllowedKey {
  return typeof k === 'string' && (ALLOWED_KEYS as readonly string[]).includes(k);
}

/**
 * Why `args` are not the arguments of operation `key` (exactly `{key}` with `key` in ALLOWED_KEYS),
 * or null. Checked by the console before the person is asked and again by the extension's request check.
 */
export function keyArgumentsProblem(args: unknown): string | null {
  if (!args || typeof args !== 'object' || Array.isArray(args)) return 'the arguments must be an object';
  const keys = Object.keys(args);
  if (keys.length !== 1 || keys[0] !== 'key') return 'page_key takes exactly one argument, key';
  const k = (args as { key?: unknown }).key;
  if (!isAllowedKey(k)) return `key must be one of ${ALLOWED_KEYS.join(', ')}`;
  return null;
}

/** The `KeyboardEvent` fields of an allowed key (`key`, `code`, `shiftKey`). */
export function keyEventFields(k: AllowedKey): { key: string; code: string; shiftKey: boolean } {
  if (k === 'Shift+Tab') return { key: 'Tab', code: 'Tab', shiftKey: true };
  if (k === 'Space') return { key: ' ', code: 'Space', shiftKey: false };
  return { key: k, code: k, shiftKey: false };
}

/**
 * The default action the extension performed after a `keydown` the page did not cancel
 * (docs/semantic-controls.md, "Key", each with its spec source):
 *  - `focus-moved`: sequential focus navigation (Tab, Shift+Tab), or a radio group's arrow;
 *  - `focus-left`: Tab past the last (Shift+Tab before the first) focus stop: focus leaves the page's elements;
 *  - `activated`: Enter on a link or button, Space on a button, checkbox or radio (a synthetic `click`);
 *  - `submitted`: Enter in a field of a form (implicit submission);
 *  - `checked`: an arrow in a radio group moved to and checked the next radio;
 *  - `scrolled`: an arrow, Home, End, PageUp, PageDown or Space scrolled the nearest scroller;
 *  - `dialog-closed`: Escape inside an open modal `<dialog>` (after its `cancel` event);
 *  - `prevented`: the page cancelled the `keydown`: nothing was performed;
 *  - `none`: the key has no emulated default here (e.g. an arrow in a text field; see "not emulated").
 */
export const KEY_DEFAULTS = ['focus-moved', 'focus-left', 'activated', 'submitted', 'checked', 'scrolled', 'dialog-closed', 'prevented', 'none'] as const;
export type KeyDefault = (typeof KEY_DEFAULTS)[number];

/** Whether `v` is one of KEY_DEFAULTS. */
export function isKeyDefault(v: unknown): v is KeyDefault {
  return typeof v === 'string' && (KEY_DEFAULTS as readonly string[]).includes(v);
}

/**
 * What the key's readback adds to the observations (src/shared/semantic-target.ts ReadbackObservations.key):
 * the default performed, and whether its effect is there now (focus on the element sequential navigation
 * chose, or none after `focus-left`; the radio checked and focused; the scroller's position moved; the
 * dialog closed). `activated` and `submitted` are never `landed` by themselves: what the page did with the
 * click or the submission is judged like a click's (a URL, a document, a state or a DOM change).
 */
export interface KeyObservation {
  default: KeyDefault;
  landed: boolean;
}

/** Whether `v` has the shape of KeyObservation. */
export function isKeyObservation(v: unknown): v is KeyObservation {
  return !!v && typeof v === 'object' && Object.keys(v).length === 2 && isKeyDefault((v as KeyObservation).default) && typeof (v as KeyObservation).landed === 'boolean';
}

/**
 * The fingerprint role of the key's target when no element holds the focus (the document's body has
 * it): the document itself, named by its title. It holds spaces, which no page role can (roleOf takes
 * the first token of `role`), so no element of the page can be described by it.
 */
export const DOCUMENT_TARGET_ROLE = 'document (nothing focused)';
