/**
 * The semantic snapshot's walk over one document (issue 10 item 2;
 * docs/semantic-snapshot.md): the composed tree (open and closed shadow roots
 * through chrome.dom.openOrClosedShadowRoot, slots by their assigned nodes),
 * one line per node that means something (src/shared/snapshot.ts, the
 * format), the text of the page between them, and a placeholder for each
 * iframe (the child document's frame key, FRAME_KEY_GLOBAL), which the service
 * worker fills with that frame's own snapshot or one opaque line.
 *
 * Blocked surfaces (issue 10 item 5) are marked `[blocked]` with no value and
 * no ref: password inputs, forms holding one and every field of such a form,
 * fields whose `autocomplete` names a credential, one-time code or card data,
 * and elements carrying PRIVATE_ATTRIBUTE (one line, role only, nothing
 * inside). Every name, value and text is redacted (src/shared/redact.ts)
 * before it leaves the page. Reads the DOM only; changes nothing.
 */
import { redactText } from '../../../src/shared/redact';
import { formatLine, PRIVATE_ATTRIBUTE, quote, type NodeLine, type SnapshotPart } from '../../../src/shared/snapshot';
import { utf8Length } from '../../../src/shared/bounds';
import {
  CONTAINER_ROLES,
  composedChildren,
  deepActiveElement, displayedInline, INLINE_TAGS, INTERACTIVE_ROLES, LEAF_TEXT_ROLES, fieldBlocked, formHoldsPassword, formOf, headingLevel, insidePrivate, isHidden, nameOf,
  roleOf, shadowRootOf, shownType, statesOf, valueOf,
} from './semantic-roles';

/** Elements visited per walk at most; past it the walk stops and says truncated (a page could hold millions). */
export const MAX_WALK_NODES = 200_000;

/**
 * Elements several walks of one request may visit together (the reads walk
 * many subtrees: a scan's line owners, `:text()` per candidate, each match's
 * text); a walk that finds it spent stops and says truncated.
 */
export interface NodeBudget {
  /** Elements left. */
  left: number;
}

/** What the walk needs from the document's ref map (content/semantic.ts). */
export interface RefSource {
  /** The element's ref, made on first sight and kept for the document's life. */
  refFor(el: Element): string;
}

/** The walk's answer. */
export interface WalkResult {
  parts: SnapshotPart[];
  /** The walk stopped at the budget or at MAX_WALK_NODES. */
  truncated: boolean;
  /** Element lines that carry a ref. */
  refs: number;
}

const SKIPPED_TAGS: ReadonlySet<string> = new Set(['script', 'style', 'template', 'noscript', 'head', 'title', 'meta', 'link', 'base']);

/** Tags whose text is no page text: their content is told by the element's line (value, options). */
const NO_TEXT_TAGS: ReadonlySet<string> = new Set(['textarea', 'select', 'option', 'optgroup']);

class Stop extends Error {}

const clean = (s: string) => redactText(s).value;

/** Where an element is in the walk: depth, and what its ancestors decided. */
interface Ctx {
  depth: number;
  /** Inside a role whose name tells its text: text and images are not repeated. */
  noText: boolean;
  /** Inside a label that names a control: its text is the control's name. */
  labelText: boolean;
  /** Inside a <select>: options get no ref (the select is typed by option label). */
  inSelect: boolean;
}


/**
 * The global (in this extension's isolated world) that holds a document's
 * frame key (content/semantic.ts). Same-origin frames reach each other's
 * isolated world through `contentWindow`, so a parent's walk reads its child's
 * key there; a cross-origin child throws, and the page's own scripts (main
 * world) never see it. (chrome.runtime.getFrameId is not offered to content
 * scripts in Chromium 156: docs/browser-facts.md.)
 */
export const FRAME_KEY_GLOBAL = '__echoConsoleSemanticFrameKey';

/** The child document's frame key, or null (cross-origin, not injected, or not loaded). */
function frameKeyOf(el: Element): string | null {
  try {
    const w = (el as HTMLIFrameElement).contentWindow as unknown as Record<string, unknown> | null;
    const k = w ? w[FRAME_KEY_GLOBAL] : undefined;
    return typeof k === 'string' ? k : null;
  } catch {
    return null;
  }
}

/** The origin of an iframe's `src` (a hint only: the frame may have navigated since), or null. */
function srcOriginOf(el: Element): string | null {
  try {
    const src = (el as HTMLIFrameElement).src;
    return src ? new URL(src).origin : null;
  } catch {
    return null;
  }
}

/**
 * Snapshot the subtree of `root` (the document's body, or the element a ref
 * names: then its own line comes first).
 * @param maxBytes stop once the text passes this many UTF-8 bytes.
 * @param onLine told of each element that owns a line of the view, in walk
 *   order: one with a line of its own, or a block-level generic element whose
 *   text is a line of its own (not inside a role whose name tells its text, nor
 *   inside a label naming a control). An inline element (span, code, b…) joins
 *   its parent's line and is never told: its text alone is out of the context
 *   the redactor judged (lib/semantic-target.ts offers selectors only these).
 * @param budget shared with the request's other walks (each element visited takes one).
 */
export function walk(root: Element, refs: RefSource, maxBytes: number, onLine?: (el: Element) => void, budget?: NodeBudget): WalkResult {
  const parts: SnapshotPart[] = [];
  let lines: string[] = [];
  let bytes = 0;
  let visited = 0;
  let refCount = 0;
  let pending = '';
  const focused = deepActiveElement(root.ownerDocument);
  const blockedForms = new Map<HTMLFormElement, boolean>();
  const formBlocked = (f: HTMLFormElement | null | undefined): boolean => {
    if (!f) return false;
    let b = blockedForms.get(f);
    if (b === undefined) blockedForms.set(f, (b = formHoldsPassword(f)));
    return b;
  };

  const push = (line: string, depth: number) => {
    const l = depth > 0 ? ' '.repeat(depth) + line : line;
    lines.push(l);
    bytes += utf8Length(l) + 1;
    if (bytes > maxBytes) throw new Stop();
  };
  const flush = (depth: number) => {
    const t = pending.replace(/\s+/g, ' ').trim();
    pending = '';
    if (t) push(quote(clean(t)), depth);
  };
  const endText = () => {
    if (lines.length) parts.push({ text: lines.join('\n') });
    lines = [];
  };

  const children = composedChildren;

  const walkKids = (el: Element, ctx: Ctx) => {
    for (const k of Array.from(children(el))) visit(k, ctx);
  };

  const visit = (n: Node, ctx: Ctx): void => {
    if (n.nodeType === Node.TEXT_NODE) {
      if (!ctx.noText && !ctx.labelText) pending += n.nodeValue ?? '';
      return;
    }
    if (!(n instanceof Element)) return;
    if (++visited > MAX_WALK_NODES || (budget && --budget.left < 0)) throw new Stop();
    const tag = n.localName;
    if (SKIPPED_TAGS.has(tag) || isHidden(n)) return;
    // A fieldset's legend and a table's caption are its name (semantic-roles.ts nameOf): not repeated as text.
    if ((tag === 'legend' && n.parentElement?.localName === 'fieldset') || (tag === 'caption' && n.parentElement?.localName === 'table')) return;
    if (tag === 'br') {
      pending += '\n';
      return;
    }
    const role = roleOf(n);
    if (n.hasAttribute(PRIVATE_ATTRIBUTE)) {
      flush(ctx.depth);
      push(formatLine({ role: role ?? 'generic', states: ['blocked', 'private'] }), ctx.depth);
      return;
    }
    const inline = INLINE_TAGS.has(tag);
    if (role === null || role === 'cell' || role === 'paragraph') {
      if (!inline) flush(ctx.depth);
      // An inline tag laid out as a box (a grid or flex item): its words stay apart from its neighbours'.
      const boxed = inline && !displayedInline(n);
      if (boxed) pending += ' ';
      const label = tag === 'label' && !!(n as HTMLLabelElement).control;
      if (onLine && !inline && !label && !ctx.noText && !ctx.labelText && !NO_TEXT_TAGS.has(tag)) onLine(n);
      walkKids(n, { ...ctx, labelText: ctx.labelText || label, noText: ctx.noText || NO_TEXT_TAGS.has(tag) });
      if (!inline) flush(ctx.depth);
      else if (boxed) pending += ' ';
      return;
    }
    // Inside a role whose name tells its text, only what an agent acts on or zooms into, and headings, keep a line.
    if (ctx.noText && (role === 'img' || (!INTERACTIVE_ROLES.has(role) && !CONTAINER_ROLES.has(role) && role !== 'heading'))) {
      walkKids(n, ctx);
      return;
    }
    flush(ctx.depth);
    line(n, role, ctx);
  };

  const line = (el: Element, role: string, ctx: Ctx) => {
    onLine?.(el);
    const blocked = fieldBlocked(el) || formBlocked(formOf(el));
    const node: NodeLine = { role };
    if (role === 'heading') node.role = `h${headingLevel(el)}`;
    const name = nameOf(el, role);
    if (name) node.name = clean(name);
    if (role !== 'iframe') node.type = shownType(el);
    // A blocked field's line says only that: its states (`invalid` from :user-invalid against minlength/pattern) would tell of its value.
    node.states = blocked ? ['blocked'] : statesOf(el, role, el === focused);
    if (!blocked) {
      const v = valueOf(el, role);
      if (v !== undefined && v !== '') node.value = clean(v);
    }
    const refable = (INTERACTIVE_ROLES.has(role) && !(role === 'option' && ctx.inSelect)) || CONTAINER_ROLES.has(role);
    if (refable && !blocked) {
      node.ref = refs.refFor(el);
      refCount++;
    }
    push(formatLine(node), ctx.depth);
    if (role === 'iframe') {
      endText();
      parts.push({ frameKey: frameKeyOf(el), srcOrigin: srcOriginOf(el), depth: ctx.depth + 1 });
      return;
    }
    // A blocked select's options would tell its value; a contenteditable's text is its value.
    if (blocked && el.localName === 'select') return;
    if (role === 'textbox' && el instanceof HTMLElement && el.isContentEditable) return;
    const kidCtx: Ctx = {
      depth: ctx.depth + 1,
      noText: ctx.noText || LEAF_TEXT_ROLES.has(role) || NO_TEXT_TAGS.has(el.localName),
      labelText: ctx.labelText,
      inSelect: ctx.inSelect || el.localName === 'select',
    };
    walkKids(el, kidCtx);
    flush(kidCtx.depth);
  };

  let truncated = false;
  try {
    const ctx: Ctx = { depth: 0, noText: false, labelText: false, inSelect: false };
    const root0 = root.ownerDocument.body === root || root === root.ownerDocument.documentElement;
    // A private <body> or <html> makes the whole document one private line.
    const privateAncestor = insidePrivate(root);
    if (privateAncestor) push(formatLine({ role: roleOf(root) ?? 'generic', states: ['blocked', 'private'] }), 0);
    else if (root0) walkKids(root, ctx);
    else visit(root, ctx);
    flush(0);
  } catch (e) {
    if (!(e instanceof Stop)) throw e;
    truncated = true;
  }
  endText();
  return { parts, truncated, refs: refCount };
}
