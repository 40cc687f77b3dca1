/**
 * The typed-field operation of the semantic controls (`page_type`, `page_fill`; issue 10
 * item 4, "Type"; docs/semantic-controls.md, "Type and fill"). It sets a field's value the way
 * a library that owns the field (React, Vue, Angular) sees it:
 *  - `<input>` and `<textarea>`: focus, `beforeinput` (cancelable: a page that cancels it keeps its
 *    value), the value through the NATIVE setter of HTMLInputElement/HTMLTextAreaElement.prototype
 *    (React tracks the value it last rendered on the element; a value set past its tracker is seen as
 *    the user's change), `input`, then `change`;
 *  - `<select>`: the one enabled option whose label reads as the text (white space collapsed, invisible
 *    characters dropped; selectPlan), never by its value: the person reviews the text, and a value is not
 *    what the page shows (`value="standard"` on the option "Express delivery, £50"); after focus the
 *    option is found again (a page may re-render its options then); `selected` through the native
 *    setter, `input`, `change`;
 *  - contenteditable: focus, its contents selected, `beforeinput` (`insertText`, cancelable: editors
 *    such as ProseMirror or Lexical handle it themselves and cancel it), and when not cancelled the
 *    text replaces the contents, then `input`.
 * The events are synthetic (`isTrusted` false, trustedInput false); keys are not simulated one by
 * one (no keydown/keypress per character), as Playwright's `fill` does not either.
 * The value REPLACES what the field held; the readback (semantic-readback.ts) then checks that the
 * re-found field holds `expected`.
 */
import { PRIVATE_ATTRIBUTE } from '../../../src/shared/snapshot';
import { valueOf } from './semantic-roles';

/** Input types that take typed text (HTML "input type" keywords; the rest take clicks or files). */
const TEXT_INPUT_TYPES: ReadonlySet<string> = new Set(['text', 'search', 'email', 'url', 'tel', 'number', 'date', 'time', 'datetime-local', 'month', 'week', 'color']);

const collapse = (s: string) => s.replace(/\s+/g, ' ').trim();

/**
 * Characters a select draws as nothing: format characters (zero-width spaces and joiners, bidi marks,
 * embeddings, overrides and isolates, the soft hyphen, the BOM) and the blank letters (Hangul fillers,
 * the braille blank). Two labels that differ only by them read the same to the person.
 */
const INVISIBLE = /[\p{Cf}\u115F\u1160\u3164\uFFA0\u2800]/gu;

/** How an option's label reads to the person: invisible characters dropped, white space collapsed. */
const reads = (s: string) => collapse(s.replace(INVISIBLE, ''));

/** An option's label as the page shows it (the `label` attribute, else its text). */
const labelOf = (o: HTMLOptionElement) => o.label || o.text;

/**
 * A select's option for `text`, among its enabled options (its own `disabled` or a disabled `<optgroup>`'s:
 * `:disabled`, which the person cannot choose either) that the list shows (not `hidden`, not display: none): the one whose label reads as `text` does. Refused
 * `option-ambiguous` when another enabled option reads the same but for case, white space or invisible
 * characters (two "Standard" options in two groups, or one hidden): the person reviews the text only, and
 * could not tell which one was chosen. `option-missing` when none does, also when only a value is `text`.
 */
function selectPlan(el: HTMLSelectElement, text: string): TypePlan {
  // Hidden options (`hidden`, display: none) are not in the list the page shows: not the person's to choose either.
  const options = [...el.options].filter((o) => !o.matches(':disabled') && !o.hidden && getComputedStyle(o).display !== 'none');
  const want = reads(text);
  const option = options.find((o) => reads(labelOf(o)) === want);
  if (!option) {
    const byValue = options.some((o) => o.value === text);
    return { ok: false, code: 'option-missing', message: byValue
      ? 'an option has that value, but options are chosen by the label the page shows (page_snapshot lists them), which the person reviews'
      : 'no enabled option has that label' };
  }
  const alike = want.toLowerCase();
  if (options.filter((o) => reads(labelOf(o)).toLowerCase() === alike).length > 1) {
    return { ok: false, code: 'option-ambiguous', message: 'several enabled options read as that label (but for case, white space or invisible characters): the person could not tell which one would be chosen' };
  }
  return { ok: true, kind: 'select', option, expected: collapse(labelOf(option)) };
}

/** How `type` will set the field: the kind, and what the readback expects to find (valueOf of the field). */
export type TypePlan =
  | { ok: true; kind: 'text'; expected: string }
  | { ok: true; kind: 'select'; option: HTMLOptionElement; expected: string }
  | { ok: true; kind: 'editable'; expected: string }
  | { ok: false; code: 'not-typable' | 'not-actionable' | 'option-missing' | 'option-ambiguous'; message: string };

/**
 * How `text` would be set into `el`, checked without touching it: a text-like `<input>` or a
 * `<textarea>` not read-only; a `<select>` with one enabled option whose label reads as `text`
 * (selectPlan: `option-missing`, `option-ambiguous`); or a contenteditable element
 * holding no private part (PRIVATE_ATTRIBUTE: `not-typable`, typing replaces the contents). Anything
 * else: `not-typable`.
 */
export function typePlan(el: Element, text: string): TypePlan {
  if (el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement) {
    if (el instanceof HTMLInputElement && !TEXT_INPUT_TYPES.has(el.type)) return { ok: false, code: 'not-typable', message: `an input of type ${el.type} takes no typed text` };
    if (el.readOnly) return { ok: false, code: 'not-actionable', message: 'readonly' };
    return { ok: true, kind: 'text', expected: text };
  }
  if (el instanceof HTMLSelectElement) return selectPlan(el, text);
  if (el instanceof HTMLElement && el.isContentEditable) {
    // The text replaces the box's whole contents: a part the page marks private inside it would be erased
    // unseen (the person reviews the box by its text, which leaves that part out).
    if (el.querySelector(`[${PRIVATE_ATTRIBUTE}]`)) return { ok: false, code: 'not-typable', message: 'the editable box holds a part the page marks private, which typing would replace' };
    return { ok: true, kind: 'editable', expected: collapse(text) };
  }
  return { ok: false, code: 'not-typable', message: 'the target is not an input, textarea, select or contenteditable element' };
}

/** The `not-actionable` refusal's detail for a plan that failed: its message, named by its code unless that is not-actionable itself. */
export function planRefusalDetail(plan: Extract<TypePlan, { ok: false }>): string {
  return plan.code === 'not-actionable' ? plan.message : `${plan.code}: ${plan.message}`;
}

/** The native `value` setter of the element's own interface (never a page's override on the instance). */
function nativeValueSetter(el: HTMLInputElement | HTMLTextAreaElement): (v: string) => void {
  const proto = el instanceof HTMLInputElement ? HTMLInputElement.prototype : HTMLTextAreaElement.prototype;
  const set = Object.getOwnPropertyDescriptor(proto, 'value')?.set;
  if (!set) throw new Error('no native value setter');
  return (v: string) => set.call(el, v);
}

const inputEvent = (type: 'beforeinput' | 'input', inputType: string, data: string | null, cancelable: boolean) =>
  new InputEvent(type, { bubbles: true, cancelable, composed: true, inputType, data });

/** TypeOutcome's `blocked` when an editable box got a part the page marks private inside it as typing began. */
export const HOLDS_PRIVATE = 'holds-private';

/**
 * What typeInto did: `cancelled` when the page cancelled the `beforeinput`; `blocked` (a reason) when
 * `blockedNow` stopped it; `changed` (fixed words) when a select's options changed as it was focused, so
 * the planned option is no longer the one unique enabled option of that label. In each case nothing was set.
 */
export type TypeOutcome = { cancelled: boolean; blocked?: string; changed?: string };

/**
 * Set `text` into `el` by `plan` (from typePlan, in the same task). Answers whether the page
 * cancelled the `beforeinput` (then nothing was set and the readback will say so).
 * @param blockedNow asked right before the value is set, after the page's `focus` and `beforeinput`
 *   handlers ran (a page may turn the field into a password field in them): a reason stops it.
 * @param changedNow asked then too, after blockedNow: fixed words when the field is no longer the
 *   approved one (a handler moved it into another form, renamed it): they stop it, as `changed`.
 * @throws Error only when the platform lacks the native setter (never on a page's doing).
 */
export function typeInto(el: Element, text: string, plan: Extract<TypePlan, { ok: true }>, blockedNow: () => string | null = () => null, changedNow: () => string | null = () => null): TypeOutcome {
  // After the page's focus and beforeinput handlers: blocked first, then whether it is the approved field still.
  const stopNow = (): TypeOutcome | null => {
    const blocked = blockedNow();
    if (blocked) return { cancelled: false, blocked };
    const changed = changedNow();
    return changed ? { cancelled: false, changed } : null;
  };
  (el as HTMLElement).focus({ preventScroll: true });
  switch (plan.kind) {
    case 'text': {
      const field = el as HTMLInputElement | HTMLTextAreaElement;
      if (!field.dispatchEvent(inputEvent('beforeinput', 'insertReplacementText', text, true))) return { cancelled: true };
      const stopped = stopNow();
      if (stopped) return stopped;
      nativeValueSetter(field)(text);
      field.dispatchEvent(inputEvent('input', 'insertReplacementText', text, false));
      field.dispatchEvent(new Event('change', { bubbles: true }));
      return { cancelled: false };
    }
    case 'select': {
      // The option is chosen again below, after focus: `plan.option` was the one when the person's grant was checked.
      const select = el as HTMLSelectElement;
      const selected = Object.getOwnPropertyDescriptor(HTMLOptionElement.prototype, 'selected')?.set;
      if (!selected) throw new Error('no native selected setter');
      const blocked = blockedNow();
      if (blocked) return { cancelled: false, blocked };
      // The page's focus handler ran (a design-system select re-renders its options on focus): the plan again.
      // The option chosen is the one that reads as the text NOW (a re-render may have made new elements of the
      // same options); none, or several, and nothing is chosen.
      const now = selectPlan(select, text);
      if (!now.ok || now.kind !== 'select') return { cancelled: false, changed: `option-changed: the options changed as the select was focused (${now.ok ? 'not a select' : now.code}); none was chosen` };
      // Then the select itself (its label's text holds its options': a re-render also changes its fingerprint).
      const changed = changedNow();
      if (changed) return { cancelled: false, changed };
      if (select.multiple) for (const o of select.options) selected.call(o, false);
      selected.call(now.option, true);
      select.dispatchEvent(new Event('input', { bubbles: true, composed: true }));
      select.dispatchEvent(new Event('change', { bubbles: true }));
      return { cancelled: false };
    }
    case 'editable': {
      const host = el as HTMLElement;
      const sel = host.ownerDocument.getSelection();
      sel?.selectAllChildren(host);
      if (!host.dispatchEvent(inputEvent('beforeinput', 'insertText', text, true))) return { cancelled: true };
      const blocked = blockedNow();
      if (blocked) return { cancelled: false, blocked };
      // A part the page marks private that its handlers put inside the box: `holds-private`, told apart from the box itself being private.
      if (host.querySelector(`[${PRIVATE_ATTRIBUTE}]`)) return { cancelled: false, blocked: HOLDS_PRIVATE };
      const changed = changedNow();
      if (changed) return { cancelled: false, changed };
      host.textContent = text;
      sel?.selectAllChildren(host);
      sel?.collapseToEnd();
      host.dispatchEvent(inputEvent('input', 'insertText', text, false));
      return { cancelled: false };
    }
  }
}

/**
 * Whether `el` holds `expected` now (the readback's check; valueOf of semantic-roles.ts, compared
 * exactly for inputs and textareas, white space collapsed for a select's label and contenteditable).
 */
export function holdsValue(el: Element, role: string, expected: string): boolean {
  const v = valueOf(el, role);
  if (v === undefined) return false;
  return el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement ? v === expected : collapse(v) === collapse(expected);
}
