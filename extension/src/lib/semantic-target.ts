/**
 * Targets of the semantic mutations in one document (issue 10 items 1, 2, 5;
 * docs/semantic-controls.md): the page-derived fingerprint of an element
 * (src/shared/semantic-target.ts Fingerprint), finding elements by a
 * fingerprint or a partial one, the blocked-surface decision (the same rules
 * the snapshot marks `[blocked]`, lib/semantic-roles.ts), and the ladder check
 * (a declarative WebMCP tool that owns the target's form). Runs in the
 * isolated world; reads the DOM only.
 */
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';
import { redactText } from '../../../src/shared/redact';
import { PRIVATE_ATTRIBUTE } from '../../../src/shared/snapshot';
import { LIMITS } from '../../../src/shared/limits';
import {
  FINGERPRINT_BOUNDS as B, cleanFingerprint, fingerprintMatches, withoutContext, type BlockedReason, type Fingerprint, type FingerprintAncestor, type FingerprintQuery,
} from '../../../src/shared/semantic-target';
import { canonicalJson } from '../../../src/shared/canonical';
import { usableLadderTool, type ListedTool } from './semantic-ladder';
import { closestComposed, composedParent, fieldBlocked, formHoldsPassword, formOf, insidePrivate, isHidden, nameOf, passwordField, roleOf, shadowRootOf, textOf } from './semantic-roles';

/** Elements examined per search at most (a page could hold millions); past it the search fails closed. */
export const MAX_TARGET_SCAN = 200_000;

/** Whether `node` is `anc` or inside it in the composed tree (through shadow roots). */
export function composedContains(anc: Element, node: Node): boolean {
  let cur: Node | null = node;
  while (cur) {
    if (cur === anc) return true;
    const parent: Node | null = cur.parentNode;
    // A shadow root of any realm (a same-origin frame's too, as focus navigation meets them): by node type, not instanceof.
    cur = parent && parent.nodeType === Node.DOCUMENT_FRAGMENT_NODE && 'host' in parent ? (parent as ShadowRoot).host : parent;
  }
  return false;
}

/** Every element of the document in composed-tree order (open and closed shadow roots, not frames), bounded. */
export function* composedElements(root: Element): Generator<Element> {
  const stack: Element[] = [root];
  let seen = 0;
  while (stack.length) {
    const el = stack.pop() as Element;
    if (++seen > MAX_TARGET_SCAN) throw new Error('the document has too many elements to search');
    yield el;
    const sr = shadowRootOf(el);
    const kids = [...(sr ? sr.children : []), ...el.children];
    for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i] as Element);
  }
}

/** Roles whose unnamed instances a fingerprint tells apart by their text (coreOf). */
const ROW_ROLES: ReadonlySet<string> = new Set(['listitem', 'row', 'article']);

const cut = (s: string, max: number) => redactText(s.replace(/\s+/g, ' ').trim()).value.slice(0, max);

/** The fingerprint of `el` without its position (`nth: 0`), or null when it has no role. */
export function coreOf(el: Element): Fingerprint | null {
  const role = roleOf(el);
  if (!role) return null;
  const name = cut(nameOf(el, role), B.name);
  const fp: Fingerprint = { role: role.slice(0, B.role), name, ancestors: [], nth: 0 };
  if (el instanceof HTMLInputElement) fp.type = el.type.slice(0, B.type);
  const labels = (el as HTMLInputElement).labels;
  if (labels && labels.length) {
    const l = cut([...labels].map((x) => textOf(x)).join(' '), B.label);
    if (l && l !== name) fp.label = l;
  }
  const na = el.getAttribute('name');
  if (na && /^(input|select|textarea|button|form|iframe|object|output|fieldset)$/.test(el.localName)) fp.nameAttribute = na.slice(0, B.nameAttribute);
  const form = (el as HTMLInputElement).form;
  if (form instanceof HTMLFormElement) fp.form = cut(nameOf(form, 'form') || form.id || form.getAttribute('name') || 'form', B.form) || 'form';
  const ancestors: FingerprintAncestor[] = [];
  let rowTold = false;
  for (let a = composedParent(el), i = 0; a && ancestors.length < B.ancestors && i < 64; a = composedParent(a), i++) {
    if (a === el.ownerDocument.body || a === el.ownerDocument.documentElement) break;
    // An <li> is a list item here though the snapshot shows no role for it (semantic-roles.ts roleOf).
    const r = roleOf(a) ?? (a.localName === 'li' ? 'listitem' : null);
    if (!r) continue;
    let n = cut(nameOf(a, r), B.ancestorName);
    // The nearest unnamed row, list item or article is told by its text (private parts left out, redacted,
    // cut; a shown time by its datetime, as in the item), so the person reviewing one row's "Delete" sees which row it is, and look-alike buttons of
    // different rows have different fingerprints.
    if (!n && !rowTold && ROW_ROLES.has(r)) {
      rowTold = true;
      n = cut(textOf(a, 512, (t) => shownTime(t) ?? false), B.ancestorName);
    }
    if (n) ancestors.push({ role: r.slice(0, B.role), name: n });
  }
  fp.ancestors = ancestors;
  return cleanFingerprint(fp);
}

/** Ancestors examined for the target's item at most (contextOf): rows, cards and cells sit a few levels up. */
const MAX_CONTEXT_DEPTH = 8;

/**
 * Landmark roles (WAI-ARIA 1.2 §5.3.4, with feed, application and document): a page's big parts,
 * never an item; the search for the target's item stops at them (contextOf).
 */
const PAGE_PART_ROLES: ReadonlySet<string> = new Set([
  'main', 'navigation', 'banner', 'contentinfo', 'complementary', 'search', 'feed', 'application', 'document',
]);

/**
 * Roles (or `<li>`) that make an ancestor the target's item even when all its other text is buttons'.
 * Not a table's cell: the actions cell of a row ("Edit Delete") is the same in every row; the row is the item.
 */
const ITEM_ROLES: ReadonlySet<string> = new Set([...ROW_ROLES, 'option', 'treeitem']);

/** A button (its role, semantic-roles.ts roleOf: by tag, input type or `role`): its text names an action, not the item (contextOf). */
const isButtonLike = (el: Element): boolean => roleOf(el) === 'button';

/** A table's cells: never the item, their row is (contextOf). */
const CELL_ROLES: ReadonlySet<string> = new Set(['cell', 'gridcell', 'columnheader', 'rowheader']);

/** A control whose text names an action (a button, or a link such as an action bar's "Reply"): not what tells one row from the next. */
const isControl = (el: Element): boolean => {
  const r = roleOf(el);
  return r === 'button' || r === 'link';
};

/**
 * Whether `a` is one of a run of look-alike siblings (same tag and class, as a list renders its rows):
 * a row of `<div>`s, a card of a grid.
 */
function repeated(a: Element): boolean {
  const cls = a.getAttribute('class') ?? '';
  if (!cls.trim()) return false;
  const p = a.parentElement;
  if (!p) return false;
  for (const s of p.children) if (s !== a && s.localName === a.localName && s.getAttribute('class') === cls) return true;
  return false;
}

/**
 * Roles whose text the page changes on its own by design (WAI-ARIA 1.2 §5.3.5 live region roles, and
 * progressbar), and the separate surfaces a dialog opens: their text is not the item's (contextOf).
 */
const CHANGING_ROLES: ReadonlySet<string> = new Set(['status', 'timer', 'marquee', 'log', 'alert', 'progressbar', 'dialog', 'alertdialog']);

/** A `<dialog>` or an element with the dialog or alertdialog role (WAI-ARIA 1.2; roleOf). */
function isDialog(n: Element): boolean {
  const r = roleOf(n);
  return r === 'dialog' || r === 'alertdialog';
}

/**
 * True when `n`'s subtree is left out of an item's text: a live region (a changing role above, an
 * `<output>`, or `aria-live` other than "off", WAI-ARIA 1.2 §6.7 aria-live) or a dialog. A status line
 * ("bought 1") or a cookie banner inside a product card changes without the card becoming another.
 */
function changingPart(n: Element): boolean {
  if (n.localName === 'output' || isDialog(n)) return true;
  const live = n.getAttribute('aria-live');
  if (live !== null && live.trim().toLowerCase() !== 'off') return true;
  return CHANGING_ROLES.has(roleOf(n) ?? '');
}

/**
 * What a shown time counts as in an item's text: its `datetime` attribute (a `<time>`, or an element
 * such as GitHub's `<relative-time>` that carries one), not its words. "2 min ago" becomes "3 min ago"
 * while the person reviews; the time it names does not. Null: its text counts (no `datetime`, private
 * or not rendered: the walk leaves it out).
 */
function shownTime(n: Element): string | null {
  if (n.localName !== 'time' && !n.localName.includes('-')) return null;
  const at = n.getAttribute('datetime')?.trim();
  if (!at || n.hasAttribute(PRIVATE_ATTRIBUTE) || isHidden(n)) return null;
  return at.slice(0, 64);
}

/**
 * The target's ITEM and its text (Fingerprint `context`, `contextHash`), or null: the nearest ancestor
 * (composed tree, at most MAX_CONTEXT_DEPTH up, below the body and any landmark, with at most
 * FINGERPRINT_BOUNDS.contextText units of text) that is a row, list item, article, option, tree item or
 * dialog holding any text beyond the target's own, or that holds text beyond its buttons' and links'
 * ("Archive Delete" of an action bar is not the row), or, holding text beyond its buttons', is one of a
 * run of look-alike siblings (repeated: a `<div>` row whose subject is a link); when there is none, the
 * nearest holding text beyond its buttons'. A table cell is never the item (its row is), and an
 * action bar with a "Reply" link below a row is not while the row is found: both are the same in every
 * row (e2e/semantic-item, resources/hostile/semantic/items.html). The text leaves out the
 * target's subtree (what the action may change, and already in the fingerprint's name), live regions
 * and dialogs (changingPart), private and unrendered parts (semantic-roles.ts textOf); a shown time counts
 * as its `datetime` (shownTime: "2 min ago" ticks during the review); it is whitespace-collapsed, redacted
 * (src/shared/redact.ts), hashed whole and cut to
 * FINGERPRINT_BOUNDS.context for the person to read.
 *
 * Why: a page that reuses the target's element for another row (React lists keyed by index, a
 * mail arriving at the top while the person reviews "Delete" on the first row) keeps its identity,
 * role, name and position; only the row's text tells that the approved row is gone (issue 10 item 2).
 */
export function contextOf(el: Element): { context: string; contextHash: string } | null {
  // An ancestor whose text beyond buttons' is only links' (the "Reply" of an action bar) is a weak item,
  // the same in every row: kept, and the walk goes on for one holding other text (the row). A table's
  // cell is never the item ("Edit" beside "Delete" in the actions cell): its row is.
  let weak: string | null = null;
  const item = (text: string) => {
    const whole = redactText(text).value;
    return { context: whole.slice(0, B.context), contextHash: bytesToHex(sha256(utf8ToBytes(whole))) };
  };
  for (let a = composedParent(el), i = 0; a && i < MAX_CONTEXT_DEPTH; a = composedParent(a), i++) {
    if (a === el.ownerDocument.body || a === el.ownerDocument.documentElement || PAGE_PART_ROLES.has(roleOf(a) ?? '')) break;
    const dialog = isDialog(a);
    // A target inside a live region has no item that keeps its text; a dialog is the last ancestor
    // that may be the item (what lies behind it is another surface).
    if (changingPart(a) && !dialog) break;
    const notTarget = (n: Element) => n === el || (n !== a && changingPart(n)) || (shownTime(n) ?? false);
    const other = textOf(a, B.contextText + 1, notTarget);
    // Longer than a row's text can be hashed whole: a wrapper of the page, not an item (nor will any above be).
    if (other.length > B.contextText) break;
    if (other) {
      if (dialog || ITEM_ROLES.has(roleOf(a) ?? (a.localName === 'li' ? 'listitem' : ''))) return item(other);
      if (!CELL_ROLES.has(roleOf(a) ?? '') && textOf(a, B.contextText, (n) => notTarget(n) || isButtonLike(n))) {
        // Text beyond its controls, or one of a run of look-alike rows (whose subject may be a link).
        if (textOf(a, B.contextText, (n) => notTarget(n) || isControl(n)) || repeated(a)) return item(other);
        weak ??= other;
      }
    }
    if (dialog) break;
  }
  return weak === null ? null : item(weak);
}

/** `x` with its item (contextOf) in its fingerprint: the fingerprint the person reviews. */
export function withItem(x: { el: Element; fp: Fingerprint }): { el: Element; fp: Fingerprint } {
  const c = contextOf(x.el);
  return c ? { el: x.el, fp: cleanFingerprint({ ...x.fp, ...c }) } : x;
}

/** The body (or root element) a document's search starts at. */
const rootOf = (doc: Document): Element => doc.body ?? doc.documentElement;

/**
 * Every element of `doc` with its full fingerprint that satisfies `keep` (checked on the core,
 * before `nth` is known): `nth` counts the earlier elements with an identical core. Elements inside
 * a private part (PRIVATE_ATTRIBUTE) are left out, except `stopAt` itself.
 */
function describe(doc: Document, keep: (core: Fingerprint, el: Element) => boolean, stopAt?: Element): Array<{ el: Element; fp: Fingerprint }> {
  const counts = new Map<string, number>();
  const out: Array<{ el: Element; fp: Fingerprint }> = [];
  for (const el of composedElements(rootOf(doc))) {
    const core = coreOf(el);
    if (!core) continue;
    // A private part is never matched nor counted (issue 10 item 5): a query must not learn what it
    // says from a `target-blocked` answer or a count. Only the element asked for by ref (stopAt) is described.
    if (el !== stopAt && insidePrivate(el)) continue;
    const key = canonicalJson(core);
    const nth = counts.get(key) ?? 0;
    counts.set(key, nth + 1);
    if (keep(core, el)) out.push({ el, fp: { ...core, nth: Math.min(nth, B.nth) } });
    if (el === stopAt) break;
  }
  return out;
}

/**
 * The full fingerprint of `el`: its core, its position among elements with the same core, and its
 * item (contextOf) when it stands in one; null when it has no role.
 */
export function fingerprintOf(el: Element): Fingerprint | null {
  const core = coreOf(el);
  if (!core) return null;
  const key = canonicalJson(core);
  const hit = describe(el.ownerDocument, (c, e) => e === el || false, el).find((x) => x.el === el);
  return hit && canonicalJson({ ...hit.fp, nth: 0 }) === key ? withItem(hit).fp : null;
}

/**
 * The elements of `doc` whose fingerprint satisfies the (partial) query `q`, in composed-tree order;
 * never a private one. `nth` counts among elements with the same core (the item is not part of it).
 * When `q` gives item fields (`context`, `contextHash`), the answers carry their items (withItem) and
 * must match them; else the answers' fingerprints are without items (withItem them before review: the
 * item is read only for the elements used, a broad query may match thousands).
 * @param withItems false: ignore `q`'s item fields, the target's own description only (the readback,
 *   which finds the target after an action that may have changed its row).
 */
export function findByQuery(doc: Document, q: FingerprintQuery, withItems = true): Array<{ el: Element; fp: Fingerprint }> {
  const own = withoutContext(q);
  const { nth: _n, ...core } = own;
  const found = describe(doc, (c) => fingerprintMatches(core, c)).filter((x) => fingerprintMatches(own, x.fp));
  if (!withItems || (q.context === undefined && q.contextHash === undefined)) return found;
  return found.map(withItem).filter((x) => fingerprintMatches(q, x.fp));
}

/**
 * Why `el` may not be acted on (issue 10 item 5; docs/semantic-controls.md, "Blocked surfaces"), or null:
 * the rules of the snapshot's `[blocked]` (semantic-roles.ts fieldBlocked, formHoldsPassword,
 * PRIVATE_ATTRIBUTE) applied to the target and, for a form, to every control of it; and, for an
 * element inside a <label> (through shadow roots), to the label's control, which a click activates.
 */
export function blockedReason(el: Element): BlockedReason | null {
  // A click inside a <label> activates its control: a label of a blocked control is blocked as that control is.
  for (let a: Element | null = el, i = 0; a && i < 64; a = composedParent(a), i++) {
    if (!(a instanceof HTMLLabelElement)) continue;
    const c = a.control;
    const r = c && c !== el && !composedContains(c, el) ? ownBlockedReason(c) : null;
    if (r) return r;
  }
  return ownBlockedReason(el);
}

/** blockedReason of `el` itself and its form, not through a label. */
function ownBlockedReason(el: Element): BlockedReason | null {
  if (insidePrivate(el) || el.hasAttribute(PRIVATE_ATTRIBUTE)) return 'private';
  if (passwordField(el)) return 'password';
  if (fieldBlocked(el)) return 'credential-field';
  // Its form, found through shadow roots (formOf), and the enclosing <form> of the composed tree
  // too (a role=button div, or a control whose `form=` names another form, still sits in this one).
  const form = formOf(el);
  if (form && formHoldsPassword(form)) return 'password-form';
  const enclosing = closestComposed(el, 'form');
  if (enclosing instanceof HTMLFormElement && enclosing !== form && formHoldsPassword(enclosing)) return 'password-form';
  if (el instanceof HTMLIFrameElement) {
    try {
      if (!el.contentDocument) return 'cross-origin-frame';
    } catch {
      return 'cross-origin-frame';
    }
  }
  return null;
}

/** The `toolname` attribute of `el`'s form (formOf), or null: compared before and after the waits of an action. */
export function toolNameOf(el: Element): string | null {
  return formOf(el)?.getAttribute('toolname') ?? null;
}

/** The slice of `document.modelContext` the ladder check reads (WebMCP draft; content/webmcp.ts). */
interface ToolLister {
  getTools(): Promise<Array<ListedTool & { window?: unknown; source?: unknown }>>;
}

/**
 * The ladder (issue 10 item 1): the name of the declarative WebMCP tool that owns `el`'s form when
 * that tool is currently listed in this document by `document.modelContext.getTools()` (WebMCP on,
 * the form registered as a tool here, a valid tool name) and usable by webmcp_invoke
 * (semantic-ladder.ts usableLadderTool); null when there is none, it is unusable or blocked, WebMCP
 * is off, or the listing fails (then the semantic path stays open).
 */
export async function narrowerTool(el: Element): Promise<string | null> {
  const form = formOf(el);
  if (!form) return null;
  const name = form.getAttribute('toolname');
  if (!name || !LIMITS.toolNamePattern.test(name)) return null;
  let mc: unknown;
  try {
    mc = (document as unknown as { modelContext?: unknown }).modelContext;
  } catch {
    return null;
  }
  if (!mc || typeof (mc as Partial<ToolLister>).getTools !== 'function') return null;
  try {
    const tools = await (mc as ToolLister).getTools();
    const here = (t: { window?: unknown; source?: unknown }) => {
      const src = t.source ?? t.window;
      return src === undefined || src === null || src === window;
    };
    const mine = Array.isArray(tools) ? tools.filter((t) => t && here(t)) : [];
    // Only a tool webmcp_invoke could use: an unusable or blocked one leaves the semantic path open.
    return usableLadderTool(mine, name, String(self.origin)) ? name : null;
  } catch {
    return null;
  }
}
