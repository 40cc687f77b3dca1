/**
 * Roles, accessible names, states and values of elements for the semantic
 * snapshot (content/semantic.ts, lib/semantic-walk.ts). A compact subset of
 * WAI-ARIA 1.2 and HTML-AAM (implicit roles), and of the Accessible Name
 * computation (accname 1.2: aria-labelledby, aria-label, labels, alt, legend,
 * caption, placeholder, title, and name from content for the roles that allow
 * it). Runs in the page's isolated world; reads the DOM, changes nothing.
 *
 * The blocked-surface rules (issue 10 item 5) live here too: password inputs,
 * fields whose `autocomplete` names a credential, a one-time code or card data
 * (src/shared/snapshot.ts BLOCKED_AUTOCOMPLETE), and forms holding a password.
 */
import { autocompleteBlocked, credentialWords, PRIVATE_ATTRIBUTE, type CredentialWords } from '../../../src/shared/snapshot';

/** Roles an agent can act on: they get a ref. */
export const INTERACTIVE_ROLES: ReadonlySet<string> = new Set([
  'button', 'link', 'checkbox', 'radio', 'switch', 'textbox', 'searchbox', 'combobox', 'listbox', 'option', 'slider', 'spinbutton',
  'tab', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'treeitem', 'gridcell',
]);

/** Container roles that get a line and a ref (to zoom into), even without a name. */
export const CONTAINER_ROLES: ReadonlySet<string> = new Set([
  'form', 'dialog', 'alertdialog', 'main', 'navigation', 'region', 'article', 'complementary', 'banner', 'contentinfo', 'search',
  'list', 'table', 'grid', 'group', 'tabpanel', 'menu', 'menubar', 'tree', 'toolbar', 'tablist', 'radiogroup', 'iframe',
]);

/** Roles whose accessible name comes from their content (accname 1.2 §4.3.2 step 2F). */
const NAME_FROM_CONTENT: ReadonlySet<string> = new Set([
  'button', 'link', 'heading', 'option', 'tab', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'treeitem', 'cell', 'gridcell',
  'columnheader', 'rowheader', 'checkbox', 'radio', 'switch', 'tooltip', 'summary',
]);

/** Roles whose content is fully told by their name: their text is not repeated below them. */
export const LEAF_TEXT_ROLES: ReadonlySet<string> = new Set([
  'button', 'link', 'heading', 'option', 'tab', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'treeitem', 'cell', 'gridcell',
  'columnheader', 'rowheader', 'checkbox', 'radio', 'switch', 'summary', 'img', 'textbox', 'combobox', 'listbox', 'searchbox',
]);

/**
 * Input types shown after the role (`textbox:date`), where the type says how
 * to read the value. Not `number`: its role, spinbutton, already says it.
 */
const SHOWN_TYPES: ReadonlySet<string> = new Set(['date', 'time', 'datetime-local', 'month', 'week', 'email', 'tel', 'url', 'password', 'color', 'file']);

const collapse = (s: string) => s.replace(/\s+/g, ' ').trim();

function inputRole(el: HTMLInputElement): string | null {
  const t = el.type;
  if (t === 'hidden') return null;
  if (t === 'button' || t === 'submit' || t === 'reset' || t === 'image') return 'button';
  if (t === 'checkbox') return el.getAttribute('role') === 'switch' ? 'switch' : 'checkbox';
  if (t === 'radio') return 'radio';
  if (t === 'range') return 'slider';
  if (t === 'number') return 'spinbutton';
  if (t === 'file') return 'button';
  // A colour input takes a typed value ("#rrggbb"), as Playwright and Chromium's own value reading treat it.
  if (t === 'color') return 'textbox';
  if (el.hasAttribute('list')) return 'combobox';
  if (t === 'search') return 'searchbox';
  return 'textbox';
}

/**
 * The element's parent in the flat tree, the tree the page is rendered (and read) from (CSS Scoping 1
 * §2.2, "flattened element tree"): the slot it is assigned to when its parent hosts a shadow root (open
 * or closed; an unassigned child, which is not rendered, goes to the host), the host for a shadow root's
 * child, else the parent element; null at the document's root. So a part the page marks private inside a
 * component's shadow tree covers what the page slots into it, as the walk (composedChildren) shows it.
 */
export function composedParent(el: Element): Element | null {
  const parent = el.parentElement;
  if (parent) {
    const sr = shadowRootOf(parent);
    return sr ? (assignedSlotIn(el, sr) ?? parent) : parent;
  }
  const root = el.getRootNode();
  return root instanceof ShadowRoot ? root.host : null;
}

/** The slot of `sr` that `el` (a child of its host) is assigned to, or null. `assignedSlot` is null for a closed root's slots, so those are searched. */
function assignedSlotIn(el: Element, sr: ShadowRoot): HTMLSlotElement | null {
  if (el.assignedSlot) return el.assignedSlot;
  for (const slot of sr.querySelectorAll('slot')) if ((slot as HTMLSlotElement).assignedElements().includes(el)) return slot as HTMLSlotElement;
  return null;
}

/** The nearest ancestor (through shadow roots, light-DOM parents first: the tree a form control's form owner is found in) matching `sel`, or null. */
export function closestComposed(el: Element, sel: string): Element | null {
  let cur: Element | null = el;
  while (cur) {
    const hit = cur.closest(sel);
    if (hit) return hit;
    const root = cur.getRootNode();
    cur = root instanceof ShadowRoot ? root.host : null;
  }
  return null;
}

/**
 * The document's own private part: the element carrying PRIVATE_ATTRIBUTE that holds the `<iframe>`
 * showing `doc`, in any same-origin frame above it (`frameElement` is null across origins, whose
 * frames are never read), or null. A frame inside a private part is private as a whole.
 */
export function privateFrameAncestor(doc: Document): Element | null {
  for (const frame of framesAbove(doc)) for (let a: Element | null = frame; a; a = composedParent(a)) if (a.hasAttribute(PRIVATE_ATTRIBUTE)) return a;
  return null;
}

/**
 * The `<iframe>` (or `<frame>`) elements showing `doc`, nearest first, up through its same-origin
 * parents (`frameElement` is null across origins, and a throw there ends the walk); at most 32.
 */
export function* framesAbove(doc: Document): Generator<Element> {
  let win: Window | null = doc.defaultView;
  for (let i = 0; win && i < 32; i++) {
    let frame: Element | null;
    try {
      frame = win.frameElement;
    } catch {
      return;
    }
    if (!frame) return;
    yield frame;
    win = frame.ownerDocument.defaultView;
  }
}

/**
 * Whether `el` or an ancestor in the flat tree (composedParent: through shadow roots and the slots
 * content is assigned to) carries PRIVATE_ATTRIBUTE, or its document is shown by a frame inside a
 * private part (privateFrameAncestor).
 */
export function insidePrivate(el: Element): boolean {
  for (let a: Element | null = el; a; a = composedParent(a)) if (a.hasAttribute(PRIVATE_ATTRIBUTE)) return true;
  return privateFrameAncestor(el.ownerDocument) !== null;
}

/** The first token of `el`'s `role` attribute, lower-cased, or undefined (fallback roles after it are not read). */
function explicitRole(el: Element): string | undefined {
  return el.getAttribute('role')?.trim().split(/\s+/)[0]?.toLowerCase();
}

/** The element's role (explicit `role` first token, else the implicit one); null for generic or presentational elements. */
export function roleOf(el: Element): string | null {
  const explicit = explicitRole(el);
  if (explicit && explicit !== 'none' && explicit !== 'presentation' && explicit !== 'generic') return explicit;
  if (explicit === 'none' || explicit === 'presentation') return null;
  const tag = el.localName;
  switch (tag) {
    case 'a':
    case 'area':
      return el.hasAttribute('href') ? 'link' : null;
    case 'button':
      return 'button';
    case 'input':
      return inputRole(el as HTMLInputElement);
    case 'select':
      return (el as HTMLSelectElement).multiple || (el as HTMLSelectElement).size > 1 ? 'listbox' : 'combobox';
    case 'option':
      return 'option';
    case 'textarea':
      return 'textbox';
    case 'h1': case 'h2': case 'h3': case 'h4': case 'h5': case 'h6':
      return 'heading';
    case 'img':
      return el.getAttribute('alt') === '' ? null : 'img';
    case 'nav':
      return 'navigation';
    case 'main':
      return 'main';
    case 'header':
    case 'footer':
      // Only when not inside sectioning content (HTML-AAM); inside, they are generic.
      if (el.parentElement && closestComposed(el.parentElement, 'article, aside, main, nav, section')) return null;
      return tag === 'header' ? 'banner' : 'contentinfo';
    case 'aside':
      return 'complementary';
    case 'form':
      return 'form';
    case 'search':
      return 'search';
    case 'section':
      return el.hasAttribute('aria-label') || el.hasAttribute('aria-labelledby') ? 'region' : null;
    case 'article':
      return 'article';
    case 'ul': case 'ol': case 'menu':
      return 'list';
    case 'table':
      return 'table';
    case 'tr':
      return 'row';
    case 'td':
      return 'cell';
    case 'th':
      return el.getAttribute('scope') === 'row' ? 'rowheader' : 'columnheader';
    case 'dialog':
      return 'dialog';
    case 'fieldset': case 'details': case 'optgroup':
      return 'group';
    case 'summary':
      // The disclosure's button (HTML-AAM): only the first summary of a details.
      return el.parentElement?.localName === 'details' && el.parentElement.querySelector(':scope > summary') === el ? 'button' : null;
    case 'progress':
      return 'progressbar';
    case 'meter':
      return 'meter';
    case 'hr':
      return 'separator';
    case 'iframe':
      return 'iframe';
    case 'svg':
      return el.hasAttribute('aria-label') || el.hasAttribute('aria-labelledby') ? 'img' : null;
    default:
      if (el instanceof HTMLElement && el.isContentEditable && !el.parentElement?.isContentEditable) return 'textbox';
      return null;
  }
}

/** Whether an element is rendered (not display:none or content-visibility hidden, not `hidden`/aria-hidden). */
export function isHidden(el: Element): boolean {
  if (el.getAttribute('aria-hidden') === 'true') return true;
  if (el.localName === 'input' && (el as HTMLInputElement).type === 'hidden') return true;
  // <option>s have no box of their own inside a closed <select>: keep them.
  if (el.localName === 'option' || el.localName === 'optgroup') return false;
  if (el.checkVisibility({ visibilityProperty: true })) return false;
  // `display: contents` (a <slot>, a wrapper) has no box of its own but its children may: walk them.
  return getComputedStyle(el).display !== 'contents';
}

/**
 * The text of a subtree for a name (accname "name from content"): text and img alt, hidden parts left out.
 * @param budget the length (UTF-16 units) the answer is cut to; the walk stops soon after it.
 * @param skip elements whose subtree is left out as well (a target inside the item whose text is read);
 *   a string it returns stands for the subtree (a `<time>`'s `datetime` for its ticking text).
 */
export function textOf(node: Node, budget = 2000, skip?: (el: Element) => boolean | string): string {
  let out = '';
  const walk = (n: Node): void => {
    if (out.length > budget) return;
    if (n.nodeType === Node.TEXT_NODE) {
      out += n.nodeValue ?? '';
      return;
    }
    if (!(n instanceof Element)) return;
    const instead = skip?.(n);
    if (instead !== undefined && instead !== false) {
      out += typeof instead === 'string' ? ` ${instead} ` : ' ';
      return;
    }
    // A private part gives no name to anything around it either; nor does a part the page does not render
    // (display:none, [hidden], visibility:hidden: accname 1.2 §4.3.2 step 2A), such as the full value a
    // "Reveal" button would show. Detached copies (textOfLabel's) have no rendering to go by.
    if (n.getAttribute('aria-hidden') === 'true' || n.localName === 'script' || n.localName === 'style' || n.hasAttribute(PRIVATE_ATTRIBUTE)) return;
    if (n.isConnected && isHidden(n)) return;
    if (n.localName === 'img') {
      out += ` ${n.getAttribute('alt') ?? ''} `;
      return;
    }
    // A <textarea>'s children are its default value, not text it renders; React writes every value the
    // person types into it (defaultValue), so a blocked field's code would be the row's text. A field's
    // value is the field's, reported (or blocked) by the snapshot, never a name's or an item's.
    if (n.localName === 'textarea') {
      out += ' ';
      return;
    }
    if (n.localName === 'input' && ['button', 'submit', 'reset'].includes((n as HTMLInputElement).type)) {
      out += ` ${(n as HTMLInputElement).value} `;
      return;
    }
    const sr = shadowRootOf(n);
    const kids = sr ? sr.childNodes : n.localName === 'slot' ? (n as HTMLSlotElement).assignedNodes({ flatten: true }) : n.childNodes;
    const block = !displayedInline(n);
    if (block) out += ' ';
    for (const k of kids) walk(k);
    if (block) out += ' ';
  };
  walk(node);
  return collapse(out).slice(0, budget);
}

/** Tags rendered inline by default: their text joins the text around them. */
export const INLINE_TAGS: ReadonlySet<string> = new Set([
  'a', 'abbr', 'b', 'bdi', 'bdo', 'cite', 'code', 'data', 'dfn', 'em', 'font', 'i', 'kbd', 'mark', 'q', 's', 'samp', 'small',
  'span', 'strong', 'sub', 'sup', 'time', 'u', 'var', 'label', 'output', 'slot', 'del', 'ins', 'wbr', 'img', 'svg',
]);

/**
 * Whether an element's text joins the text around it: an inline tag
 * (INLINE_TAGS) that is laid out inline. A span that its parent's grid or
 * flex layout (or its own style) makes a block is a box of its own: its words
 * must not run into the next box's ("Echo mug" + "12.00" is not "mug12.00").
 * An element with no computed display (not rendered, or detached, like the
 * label copies of textOfLabel) goes by its tag.
 */
export function displayedInline(el: Element): boolean {
  if (!INLINE_TAGS.has(el.localName)) return false;
  const d = el.isConnected ? getComputedStyle(el).display : '';
  return d === '' || d.startsWith('inline') || d === 'contents';
}

/**
 * The element's shadow root, open or closed (chrome.dom.openOrClosedShadowRoot, FACTS: closed roots
 * too), or null. Only HTML elements host shadow roots; told by namespace rather than `instanceof`, so
 * an element of a same-origin frame (another realm, as sequential focus navigation meets) counts too.
 */
export function shadowRootOf(el: Element): ShadowRoot | null {
  if (el.namespaceURI !== 'http://www.w3.org/1999/xhtml') return null;
  try {
    return chrome.dom.openOrClosedShadowRoot(el as HTMLElement) ?? null;
  } catch {
    return el.shadowRoot;
  }
}

/** The deepest focused element of `doc`, through open and closed shadow roots (at most 32 deep), or null. */
export function deepActiveElement(doc: Document): Element | null {
  let a: Element | null = doc.activeElement;
  for (let i = 0; a && i < 32; i++) {
    const sr = shadowRootOf(a);
    if (!sr || !sr.activeElement) break;
    a = sr.activeElement;
  }
  return a;
}

/** The composed-tree children of `el`, as the walk and the reads visit them: its open or closed shadow root's, a slot's assigned nodes, else its own. */
export function composedChildren(el: Element): ArrayLike<Node> {
  const sr = shadowRootOf(el);
  if (sr) return sr.childNodes;
  if (el.localName === 'slot') {
    const assigned = (el as HTMLSlotElement).assignedNodes({ flatten: true });
    return assigned.length ? assigned : el.childNodes;
  }
  return el.childNodes;
}

function byIds(el: Element, ids: string): string {
  const root = el.getRootNode() as Document | ShadowRoot;
  return collapse(
    ids
      .split(/\s+/)
      .map((id) => (id ? root.getElementById?.(id) : null))
      .filter((x): x is HTMLElement => !!x && !insidePrivate(x))
      .map((x) => textOf(x))
      .join(' '),
  );
}

/** The accessible name of `el` with role `role` (accname 1.2, the common steps). */
export function nameOf(el: Element, role: string | null): string {
  const lb = el.getAttribute('aria-labelledby');
  if (lb) {
    const n = byIds(el, lb);
    if (n) return n;
  }
  const al = el.getAttribute('aria-label');
  if (al && al.trim()) return collapse(al);
  const tag = el.localName;
  if (tag === 'input' || tag === 'select' || tag === 'textarea' || tag === 'meter' || tag === 'progress') {
    const input = el as HTMLInputElement;
    if (tag === 'input' && ['button', 'submit', 'reset'].includes(input.type)) return collapse(input.value || (input.type === 'submit' ? 'Submit' : input.type === 'reset' ? 'Reset' : ''));
    if (tag === 'input' && input.type === 'image') return collapse(input.alt || input.value || 'Submit');
    const labels = input.labels ? [...input.labels].map((l) => textOfLabel(l, el)).join(' ') : '';
    if (collapse(labels)) return collapse(labels);
    const ph = el.getAttribute('placeholder');
    if (ph && ph.trim()) return collapse(ph);
  }
  if (tag === 'img' || tag === 'area') {
    const alt = el.getAttribute('alt');
    if (alt && alt.trim()) return collapse(alt);
  }
  if (tag === 'fieldset') {
    const lg = el.querySelector(':scope > legend');
    if (lg) return textOf(lg);
  }
  if (tag === 'table') {
    const cap = (el as HTMLTableElement).caption;
    if (cap) return textOf(cap);
  }
  if (tag === 'iframe') return collapse(el.getAttribute('title') ?? '');
  if (role && NAME_FROM_CONTENT.has(role)) {
    const t = textOf(el);
    if (t) return t;
  }
  const title = el.getAttribute('title');
  return title ? collapse(title) : '';
}

/** A label's text without the text of the control inside it (its value is no part of its name). */
function textOfLabel(label: HTMLLabelElement, control: Element): string {
  if (!label.contains(control)) return textOf(label);
  const copy = label.cloneNode(true) as HTMLElement;
  copy.querySelectorAll('input, select, textarea').forEach((c) => c.remove());
  return textOf(copy);
}

/** Characters of an editable box's value read at most (UTF-16 units); the snapshot and the reads cut lines shorter still. */
export const MAX_EDITABLE_VALUE_CHARS = 100_000;

/**
 * Whether `el` is a password field: an `<input type=password>`, or a text field the page draws masked
 * like one (`-webkit-text-security` other than `none`, which banks use for PINs so that the browser
 * does not offer to save them). What the page hides as it hides a password is a password.
 */
export function passwordField(el: Element): boolean {
  if (el.localName === 'input' && (el as HTMLInputElement).type === 'password') return true;
  if (el.localName !== 'input' && el.localName !== 'textarea') return false;
  if (!el.isConnected) return false;
  const masked = getComputedStyle(el).getPropertyValue('-webkit-text-security');
  if (masked !== '' && masked !== 'none') return true;
  // A field that says it holds a password is one, also once a "show password" toggle made it type=text.
  return fieldWords(el) === 'password';
}

/** `<input>` types that take typed text, where a credential can be typed; the others (date, color, checkbox, …) hold none. */
const CREDENTIAL_INPUT_TYPES: ReadonlySet<string> = new Set(['text', 'search', 'tel', 'number', 'password']);

/**
 * The credential a text field's own words name (src/shared/snapshot.ts credentialWords): its `name`,
 * `id`, `placeholder`, `aria-label` and accessible name (its labels). Null for other elements.
 */
function fieldWords(el: Element): CredentialWords | null {
  if (el.localName !== 'textarea' && !(el.localName === 'input' && CREDENTIAL_INPUT_TYPES.has((el as HTMLInputElement).type))) return null;
  const words = [el.getAttribute('name'), el.id, el.getAttribute('placeholder'), el.getAttribute('aria-label'), el.isConnected ? nameOf(el, 'textbox') : ''];
  return credentialWords(words.filter((w) => w).join(' '));
}

/**
 * Whether a field is a blocked surface by itself: a password field (passwordField), an `autocomplete`
 * naming a credential, one-time code or card data, or a text field whose own words name one (fieldWords:
 * a card number split over four fields, a security code, a texted code).
 */
export function fieldBlocked(el: Element): boolean {
  if (passwordField(el)) return true;
  if (el.localName === 'input' || el.localName === 'textarea' || el.localName === 'select') return autocompleteBlocked(el.getAttribute('autocomplete')) || fieldWords(el) !== null;
  return false;
}

/** Elements of a form's composed subtree scanned for a password input at most; past it the form counts as holding one (fail closed). */
export const MAX_FORM_SCAN = 20_000;

/**
 * Whether a form holds a password input (then the form and every field in it are blocked): its
 * `elements` (fields associated by `form=` included) and every input in its composed subtree, so a
 * password field inside a custom element's open or closed shadow root counts too (`form.elements`
 * does not cross shadow boundaries). A subtree past MAX_FORM_SCAN elements counts as holding one.
 */
export function formHoldsPassword(form: HTMLFormElement): boolean {
  for (const c of form.elements) if (passwordField(c)) return true;
  const stack: Element[] = [form];
  for (let seen = 0; stack.length; ) {
    if (++seen > MAX_FORM_SCAN) return true;
    const el = stack.pop() as Element;
    if (passwordField(el)) return true;
    const sr = shadowRootOf(el);
    if (sr) for (const k of sr.children) stack.push(k);
    for (const k of el.children) stack.push(k);
  }
  return false;
}

/**
 * The form `el` belongs to: itself when it is one, its `form` (a listed control, `form=` included),
 * else the nearest enclosing <form> through shadow roots (a control inside a custom element's shadow
 * root, e.g. a design-system submit button, has no `form` and `closest('form')` stops at its root).
 * Shared by the snapshot's `[blocked]` marks (semantic-walk.ts) and the mutations' blockedReason.
 */
export function formOf(el: Element): HTMLFormElement | null {
  if (el instanceof HTMLFormElement) return el;
  const f = (el as HTMLInputElement).form;
  if (f instanceof HTMLFormElement) return f;
  const c = closestComposed(el, 'form');
  return c instanceof HTMLFormElement ? c : null;
}

/** The states the snapshot shows (checked, mixed, selected, expanded, collapsed, pressed, disabled, required, readonly, invalid, focused). */
export function statesOf(el: Element, role: string, focused: boolean): string[] {
  const s: string[] = [];
  const aria = (a: string) => el.getAttribute(a);
  if (role === 'checkbox' || role === 'radio' || role === 'switch' || role === 'menuitemcheckbox' || role === 'menuitemradio') {
    const native = el instanceof HTMLInputElement && (el.type === 'checkbox' || el.type === 'radio');
    if (native && (el as HTMLInputElement).indeterminate) s.push('mixed');
    else if (native ? (el as HTMLInputElement).checked : aria('aria-checked') === 'true') s.push('checked');
    else if (aria('aria-checked') === 'mixed') s.push('mixed');
  }
  if (role === 'option' && (el instanceof HTMLOptionElement ? el.selected : aria('aria-selected') === 'true')) s.push('selected');
  if ((role === 'tab' || role === 'gridcell' || role === 'row' || role === 'treeitem') && aria('aria-selected') === 'true') s.push('selected');
  const exp = aria('aria-expanded');
  if (exp === 'true') s.push('expanded');
  else if (exp === 'false') s.push('collapsed');
  else if (el.localName === 'summary' && role === 'button' && el.parentElement instanceof HTMLDetailsElement) s.push(el.parentElement.open ? 'expanded' : 'collapsed');
  const pressed = aria('aria-pressed');
  if (pressed === 'true') s.push('pressed');
  else if (pressed === 'mixed') s.push('pressed=mixed');
  if (el.matches(':disabled') || aria('aria-disabled') === 'true') s.push('disabled');
  if ((el as HTMLInputElement).required === true || aria('aria-required') === 'true') s.push('required');
  if ((el as HTMLInputElement).readOnly === true || aria('aria-readonly') === 'true') s.push('readonly');
  if (aria('aria-invalid') === 'true' || ((el as HTMLInputElement).willValidate && el.matches(':user-invalid'))) s.push('invalid');
  if (el.localName === 'dialog' && (el as HTMLDialogElement).open && el.matches(':modal')) s.push('modal');
  if (focused) s.push('focused');
  return s;
}

/** The input type shown after the role, if it says how to read the value. */
export function shownType(el: Element): string | undefined {
  if (el.localName !== 'input') return undefined;
  const t = (el as HTMLInputElement).type;
  return SHOWN_TYPES.has(t) ? t : undefined;
}

/** The heading level of `el` (h1–h6, or aria-level), or 2. */
export function headingLevel(el: Element): number {
  const m = /^h([1-6])$/.exec(el.localName);
  if (m) return Number(m[1]);
  const l = Number(el.getAttribute('aria-level'));
  return Number.isInteger(l) && l >= 1 && l <= 9 ? l : 2;
}

/**
 * The current value of a field as text (unredacted: the caller redacts and
 * never calls this for a blocked field); undefined when the role has none.
 */
export function valueOf(el: Element, role: string): string | undefined {
  if (el instanceof HTMLInputElement) {
    if (['checkbox', 'radio', 'button', 'submit', 'reset', 'image', 'hidden', 'password'].includes(el.type) || passwordField(el)) return undefined;
    if (el.type === 'file') return el.files && el.files.length ? [...el.files].map((f) => f.name).join(', ') : undefined;
    return el.value;
  }
  if (el instanceof HTMLTextAreaElement) return passwordField(el) ? undefined : el.value;
  if (el instanceof HTMLSelectElement) {
    const sel = [...el.selectedOptions].map((o) => collapse(o.label || o.text));
    return sel.join(', ');
  }
  if (el instanceof HTMLProgressElement || el instanceof HTMLMeterElement) return String(el.value);
  // An editable box's text as textOf reads it, so a part the page marks private inside it (a pasted code)
  // is left out, as are parts it does not render; `innerText` would include the private part.
  if (role === 'textbox' && el instanceof HTMLElement && el.isContentEditable) return textOf(el, MAX_EDITABLE_VALUE_CHARS);
  const now = el.getAttribute('aria-valuetext') ?? el.getAttribute('aria-valuenow');
  if (now !== null && ['slider', 'spinbutton', 'progressbar', 'meter', 'scrollbar'].includes(role)) return now;
  return undefined;
}
