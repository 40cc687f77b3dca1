/**
 * Reading a declarative tool's form in its document (content/webmcp.ts), for
 * the form subject (src/shared/form.ts): what it would submit now, where, how,
 * and whether `toolautosubmit` is set. Runs in the isolated world.
 *
 * The values are what `new FormData(form)` gives, which is what the browser
 * submits (minus the submitter button's own name/value): constructing it fires
 * the page's `formdata` listeners, exactly as a submission does. A file input
 * gives a File: shown and bound as `[file: N bytes]` (src/shared/form.ts
 * fileToken), never its name or bytes. The exact action is answered to the
 * worker, which hashes and strips it (WebCrypto is unavailable to content
 * scripts on plain-http pages, docs/extension.md "Dispatch").
 */
import { fileToken, MAX_FORM_FIELDS, MAX_FORM_VALUE_CHARS } from '../../../src/shared/form';
import type { FormNow } from './messages';


/**
 * The form as it would be submitted now, or why it cannot be bound (a string:
 * more than MAX_FORM_FIELDS names or a value longer than MAX_FORM_VALUE_CHARS).
 * Synchronous, so it can run in the task that calls `executeTool`.
 */
export function readFormNow(form: HTMLFormElement): FormNow | string {
  const byName = new Map<string, string[]>();
  let data: FormData;
  try {
    data = new FormData(form);
  } catch {
    return 'the form cannot be read';
  }
  for (const [name, v] of data.entries()) {
    const value = typeof v === 'string' ? v : fileToken(v.name === '' && v.size === 0 ? null : v.size);
    if (value.length > MAX_FORM_VALUE_CHARS) return `a value of the form is longer than ${MAX_FORM_VALUE_CHARS} characters`;
    const list = byName.get(name) ?? [];
    list.push(value);
    byName.set(name, list);
    if (byName.size > MAX_FORM_FIELDS) return `the form submits more than ${MAX_FORM_FIELDS} fields`;
  }
  // Object.fromEntries defines own properties, so a field named "__proto__" stays a field.
  return { action: form.action, method: form.method, autosubmit: form.hasAttribute('toolautosubmit'), fields: Object.fromEntries(byName) };
}

/** What one control held before a fill: its value, or its checkedness, or its options' selectedness. */
type Saved = { el: HTMLInputElement; checked: boolean; value: string } | { el: HTMLSelectElement; selected: boolean[] } | { el: HTMLTextAreaElement; value: string };

/**
 * The controls' state before a fill, so a form the agent filled but that was never submitted can be
 * put back (issue 8 item 4: a later press of the page's button must not submit what the agent left).
 * File inputs are skipped: executeTool cannot fill them.
 */
export function saveControls(form: HTMLFormElement): Saved[] {
  const out: Saved[] = [];
  for (const el of Array.from(form.elements)) {
    if (el instanceof HTMLInputElement && el.type !== 'file') out.push({ el, checked: el.checked, value: el.value });
    else if (el instanceof HTMLSelectElement) out.push({ el, selected: Array.from(el.options, (o) => o.selected) });
    else if (el instanceof HTMLTextAreaElement) out.push({ el, value: el.value });
  }
  return out;
}

function matches(s: Saved): boolean {
  if ('selected' in s) return Array.from(s.el.options, (o) => o.selected).every((v, i) => v === s.selected[i]);
  if (s.el instanceof HTMLInputElement && 'checked' in s) return s.el.checked === s.checked && s.el.value === s.value;
  return s.el.value === s.value;
}

/**
 * Put the saved state back and read it back: `true` when every control holds what it held before.
 * Sets values as a script does (no input/change events: the page is not told the person typed).
 */
export function restoreControls(saved: Saved[]): boolean {
  for (const s of saved) {
    if ('selected' in s) Array.from(s.el.options).forEach((o, i) => (o.selected = s.selected[i] ?? false));
    else if (s.el instanceof HTMLInputElement && 'checked' in s) {
      s.el.value = s.value;
      s.el.checked = s.checked;
    } else s.el.value = s.value;
  }
  return saved.every(matches);
}
