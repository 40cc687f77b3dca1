/**
 * Targeting over the semantic view (issue 10 items 2 and 3;
 * docs/semantic-reads.md): which elements of a document the view shows, which
 * are blocked, and which a selector (src/shared/semantic-select.ts) names.
 * Shared by the reads (extract, wait, verify: lib/semantic-reads.ts) and meant
 * for the semantic mutations, so that every semantic control targets the same
 * elements the snapshot shows.
 *
 * The view (the same as lib/semantic-walk.ts): the composed tree (open and
 * closed shadow roots, slots), rendered elements only, no script/style/…;
 * blocked surfaces never match: a password field or a field whose
 * `autocomplete` names a credential, one-time code or card data (and what is
 * inside it), a form holding a password (its fields and buttons; the form's
 * other content stays in the view, as in the snapshot), and an element
 * carrying PRIVATE_ATTRIBUTE with everything inside. Reads the DOM only.
 */
import { redactText } from '../../../src/shared/redact';
import { MatchMemo, matchesSelector, MAX_SELECTOR_MATCHES, type Selector, type SelectNode } from '../../../src/shared/semantic-select';
import { viewStrings } from '../../../src/shared/snapshot-lines';
import { PRIVATE_ATTRIBUTE } from '../../../src/shared/snapshot';
import { composedChildren, composedParent, deepActiveElement, fieldBlocked, formHoldsPassword, formOf, insidePrivate, isHidden, nameOf, privateFrameAncestor, roleOf, shadowRootOf, statesOf } from './semantic-roles';
import { MAX_WALK_NODES, walk, type NodeBudget, type RefSource } from './semantic-walk';

/** Why an element is no part of what a read may match: `private` (the page's attribute, on it or an ancestor) or `blocked` (a blocked field or a control of a password form, or inside one). */
export type BlockReason = 'private' | 'blocked';

/** Tags whose content is never in the view (as in the walk). */
const SKIPPED_TAGS: ReadonlySet<string> = new Set(['script', 'style', 'template', 'noscript', 'head', 'title', 'meta', 'link', 'base']);

/** Whether `el` itself is blocked: a blocked field, or a form control (or the form) of a form holding a password. */
function selfBlocked(el: Element): boolean {
  if (fieldBlocked(el)) return true;
  if (el instanceof HTMLFormElement) return formHoldsPassword(el);
  // Form controls only (their text elsewhere in the form stays readable), with the form found through shadow
  // roots too (formOf): a design-system control's inner <button> has no .form.
  if (!('form' in el)) return false;
  const form = formOf(el);
  return form !== null && formHoldsPassword(form);
}

/**
 * Why `el` may not be read or matched, or null. An ancestor that is private,
 * or blocked and not a form (a blocked button's content is its blocked name),
 * blocks `el` too.
 */
export function blockReason(el: Element): BlockReason | null {
  if (selfBlocked(el)) return 'blocked';
  for (let cur: Element | null = el; cur; cur = composedParent(cur)) {
    if (cur.hasAttribute(PRIVATE_ATTRIBUTE)) return 'private';
    if (cur !== el && !(cur instanceof HTMLFormElement) && selfBlocked(cur)) return 'blocked';
  }
  return privateFrameAncestor(el.ownerDocument) ? 'private' : null;
}

/** Whether `el` is rendered in the view: not hidden itself nor under a hidden, aria-hidden or skipped ancestor. */
export function rendered(el: Element): boolean {
  if (!el.isConnected) return false;
  // An option has no box of its own (isHidden keeps it): its select's visibility is its own.
  if (el.localName === 'option' || el.localName === 'optgroup') {
    const sel = el.closest('select, datalist');
    if (sel && sel !== el) return sel.localName === 'select' && rendered(sel);
  }
  for (let cur: Element | null = el; cur; cur = composedParent(cur)) {
    if (SKIPPED_TAGS.has(cur.localName) || cur.getAttribute('aria-hidden') === 'true') return false;
    if (cur === el && isHidden(cur)) return false;
  }
  // checkVisibility covers display:none and visibility of ancestors (isHidden on `el`), except through display:contents wrappers.
  return true;
}


/** The view's walk bytes for the text of one element in a check (page-local only; never sent whole). */
export const CHECK_VIEW_BYTES = 1_048_576;

/**
 * Elements all the walks of one read request may visit together (review
 * finding 5: a byte budget alone let `*:text("x")` on a deep page with little
 * text walk elements x depth, each with checkVisibility and getComputedStyle).
 * One full walk's worth (some seconds of page time on a slow machine);
 * past it the answer says cut/truncated.
 */
export const READ_WALK_NODES = MAX_WALK_NODES;

/** A fresh node budget for one read request. */
export function readBudget(): NodeBudget {
  return { left: READ_WALK_NODES };
}

/** The snapshot lines of `el`'s subtree (a RefSource that gives no refs), and whether the walk was cut (bytes, or the request's node budget). */
export function viewTextOf(el: Element, maxBytes = CHECK_VIEW_BYTES, refs: RefSource = { refFor: () => '' }, budget?: NodeBudget): { text: string; cut: boolean } {
  const w = walk(el, refs, maxBytes, undefined, budget);
  return { text: w.parts.map((p) => ('text' in p ? p.text : '')).filter(Boolean).join('\n'), cut: w.truncated };
}


/** Whether an element of role `role` gets a line with its name in the walk (generic elements, cells and paragraphs give only their text). */
export function hasNameLine(role: string | null): role is string {
  return role !== null && role !== 'cell' && role !== 'paragraph';
}

/** Bytes of view text the walk that finds a scan's line owners may produce; past it the selection says cut. */
export const SELECT_VIEW_BYTES = 4_194_304;

/** Bytes of subtree text one selector may walk for `:text("…")` over all its candidates (a `*:text()` on a deep page would otherwise walk it once per element). */
export const SELECT_TEXT_BYTES = 4_194_304;

/** Adapts elements to the matcher's SelectNode, computing names, text and states once each. */
export class ViewNodes {
  private readonly nodes = new Map<Element, SelectNode>();
  private readonly focused: Element | null;
  private textLeft = SELECT_TEXT_BYTES;
  /** `:text()` ran out of SELECT_TEXT_BYTES or of the request's node budget: later candidates were judged on no text. */
  textCut = false;

  /** @param budget the request's node budget, shared by every walk made for it (the scan's, each `:text()`'s). */
  constructor(
    doc: Document,
    readonly budget: NodeBudget = readBudget(),
  ) {
    this.focused = deepActiveElement(doc);
  }

  /** The node of `el`. */
  of(el: Element): SelectNode {
    let n = this.nodes.get(el);
    if (n) return n;
    const role = roleOf(el);
    let name: string | undefined;
    let text: string | undefined;
    let states: string[] | undefined;
    let parent: SelectNode | null | undefined;
    // A password form's or a password field's wrapper's id and classes tell of the typed password (`li.valid` in a rules checklist).
    const attrsOut = this.attributesWithheld(el);
    n = {
      tag: el.localName,
      id: attrsOut ? '' : el.id,
      classes: attrsOut ? [] : Array.from(el.classList),
      role,
      ...(el instanceof HTMLInputElement ? { type: el.type } : {}),
      // A name only where the view prints one (a line of its own): else title/aria-label would be read, unseen, by :name().
      name: () => (name ??= hasNameLine(role) ? redactText(nameOf(el, role)).value : ''),
      text: () => (text ??= this.textOf(el)),
      states: () => (states ??= role ? statesOf(el, role, el === this.focused) : el === this.focused ? ['focused'] : []),
      parent: () => {
        if (parent === undefined) {
          const p = composedParent(el);
          parent = p ? this.of(p) : null;
        }
        return parent;
      },
    };
    this.nodes.set(el, n);
    return n;
  }

  private readonly passwordForms = new Map<HTMLFormElement, boolean>();
  private passwordWrappers?: Set<Element>;

  /**
   * Whether `#id` and `.class` see nothing of `el` (review finding 6): it is a
   * form holding a password or inside one (a rules checklist's `li.valid`
   * changes as the person types), or it wraps a password field (a wrapper's
   * `has-error`, `strong`). Password fields in the light DOM and their
   * composed ancestors are found once per scan.
   */
  private attributesWithheld(el: Element): boolean {
    const form = el.closest('form') ?? (el as HTMLInputElement).form ?? null;
    if (form instanceof HTMLFormElement) {
      let b = this.passwordForms.get(form);
      if (b === undefined) this.passwordForms.set(form, (b = formHoldsPassword(form)));
      if (b) return true;
    }
    if (!this.passwordWrappers) {
      const w = new Set<Element>();
      for (const pw of Array.from(el.ownerDocument.querySelectorAll('input[type="password"]'))) {
        for (let c = composedParent(pw); c && !w.has(c); c = composedParent(c)) w.add(c);
      }
      this.passwordWrappers = w;
    }
    return this.passwordWrappers.has(el);
  }

  private textOf(el: Element): string {
    if (this.textLeft <= 0 || this.budget.left <= 0) return ((this.textCut = true), '');
    const v = viewTextOf(el, Math.min(CHECK_VIEW_BYTES, this.textLeft), undefined, this.budget);
    this.textLeft -= v.text.length + 1;
    if (v.cut) this.textCut = true;
    return viewStrings(v.text).join('\n');
  }
}

/** The matches of a selector under a scope, in document (composed-tree) order. */
export interface Selection {
  elements: Element[];
  /** More than MAX_SELECTOR_MATCHES (or `limit`) matched: the rest are left out. */
  more: boolean;
  /** The scan stopped at MAX_WALK_NODES elements. */
  cut: boolean;
}

/**
 * The elements of the view under `scope` (itself included) that `sel` matches.
 * Only elements that own a line of the snapshot's walk are offered (the walk
 * tells them: lib/semantic-walk.ts `onLine`), so a selector never reads text out
 * of the line the redactor judged (`<p>Password: <code>…</code></p>`: the
 * `code` is never matched, the `p` reads redacted). Hidden, skipped, private
 * and blocked elements are never offered either; the scan does not enter
 * hidden or private subtrees, nor blocked fields (it does enter a password
 * form: its other content is in the view). A private scope (a private
 * `<body>` or `<html>` too) matches nothing.
 */
export function selectIn(scope: Element, sel: Selector, nodes: ViewNodes, limit = MAX_SELECTOR_MATCHES): Selection {
  const out: Element[] = [];
  let visited = 0;
  let more = false;
  let cut = false;
  const memo = new MatchMemo();
  if (insidePrivate(scope)) return { elements: [], more: false, cut: false };
  const owners = new Set<Element>();
  cut = walk(scope, { refFor: () => '' }, SELECT_VIEW_BYTES, (el) => owners.add(el), nodes.budget).truncated;
  const visit = (el: Element): boolean => {
    if (++visited > MAX_WALK_NODES) return ((cut = true), false);
    if (SKIPPED_TAGS.has(el.localName) || isHidden(el) || el.hasAttribute(PRIVATE_ATTRIBUTE)) return true;
    const blocked = selfBlocked(el);
    if (blocked && !(el instanceof HTMLFormElement)) return true;
    if (!blocked && owners.has(el) && matchesSelector(nodes.of(el), sel, memo)) {
      if (out.length >= limit) return ((more = true), false);
      out.push(el);
    }
    for (const k of Array.from(composedChildren(el))) if (k instanceof Element && !visit(k)) return false;
    return true;
  };
  const doc = scope.ownerDocument;
  if (scope === doc.body || scope === doc.documentElement) {
    for (const k of Array.from(composedChildren(scope))) if (k instanceof Element && !visit(k)) break;
  } else visit(scope);
  return { elements: out, more, cut: cut || nodes.textCut || memo.cut };
}
