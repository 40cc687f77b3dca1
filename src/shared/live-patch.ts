/**
 * The shared contract of Live Patch (faculty `live-patch`; issue 11 item 1; rung 4 of the
 * capability ladder in docs/design.md; docs/live-patch.md): a declared, reversible edit of one
 * element of a shared page's interface, approved once by the person, undone exactly by a revert.
 *
 * It owns the ONE allow-list of edits (`patchEditsProblem`), used by the console before the person
 * is asked (src/main/core/faculties/live-patch.ts) and again by the extension, in the service worker
 * (background/faculties/live-patch.ts checkRequest) and in the page (lib/live-patch.ts), so all three
 * judge alike. Edits form a CLOSED set; anything else is `patch-forbidden`, naming the edit:
 *
 *  - `{op: 'set-text', text}`: the text of an element that has no element children;
 *  - `{op: 'set-attribute', name, value}` / `{op: 'remove-attribute', name}`: only `title`, `class`,
 *    `hidden` and `aria-*` (lowercase letters);
 *  - `{op: 'set-style', property, value}`: only PATCH_STYLE_PROPERTIES, values of a narrow charset
 *    whose only functions are rgb/rgba/hsl/hsla (so no `url(`, `expression(`, `var(`, no `\` escapes);
 *  - `{op: 'insert', element: 'note' | 'highlight', position, text}`: an element of OUR own (fixed tag
 *    and class, text only) before, after, or at the start or end inside the target;
 *  - `{op: 'hide'}` / `{op: 'show'}`.
 *
 * Never: scripts, `on*` handlers, `href`, `src`, `action`, `formaction`, `srcdoc`, the `style`
 * attribute wholesale, iframes, form values (that is page_type), and no value anywhere that holds a
 * URL or a script scheme (`javascript:`, `vbscript:`, `data:`, `://`, `url(`), control, bidi or
 * zero-width characters (checked after Unicode NFKC, so full-width look-alikes count).
 *
 * The link subject of `patch` is the target `{fingerprint, ref}` (as every semantic mutation: the
 * subject hash is the fingerprint hash); its arguments are `{edits}`, bound by the grant's arguments
 * hash. The subject of `revert` is `{patchIds}` (subject hash `revertSubjectHash`), arguments `{}`.
 * A patch's id is the console's request id of the patch request.
 */
import { canonicalJson, sha256Hex, type Sha256, webCryptoSha256 } from './canonical';

/** The operations of faculty `live-patch`. */
export const LIVE_PATCH_OPERATIONS = ['patch', 'revert'] as const;
export type LivePatchOperation = (typeof LIVE_PATCH_OPERATIONS)[number];

/** Bounds of a patch (UTF-16 units, counts). */
export const PATCH_BOUNDS = {
  /** Edits in one patch. */
  edits: 16,
  /** set-text's text. */
  text: 2_000,
  /** An inserted note's or highlight's text (1 at least). */
  noteText: 1_000,
  /** An attribute's value. */
  attributeValue: 512,
  /** A style value. */
  styleValue: 64,
  /** All text of one patch. */
  totalText: 8_000,
  /** Patches one revert names. */
  revertIds: 64,
} as const;

/** The style properties a patch may set (docs/live-patch.md says why these): look, never layout tricks or URLs. */
export const PATCH_STYLE_PROPERTIES: ReadonlySet<string> = new Set([
  'color', 'background-color', 'outline', 'outline-color', 'outline-style', 'outline-width', 'outline-offset',
  'border', 'border-color', 'border-style', 'border-width', 'font-weight', 'font-style', 'font-size', 'text-decoration', 'opacity',
]);

/** The attributes a patch may set or remove beside `aria-*`. */
export const PATCH_ATTRIBUTES: ReadonlySet<string> = new Set(['title', 'class', 'hidden']);
const ARIA = /^aria-[a-z]{1,24}$/;

/** Where an inserted element goes, relative to the target. */
export const INSERT_POSITIONS = ['before', 'after', 'prepend', 'append'] as const;
export type InsertPosition = (typeof INSERT_POSITIONS)[number];

/** One edit of a patch (the closed set). */
export type PatchEdit =
  | { op: 'set-text'; text: string }
  | { op: 'set-attribute'; name: string; value: string }
  | { op: 'remove-attribute'; name: string }
  | { op: 'set-style'; property: string; value: string }
  | { op: 'insert'; element: 'note' | 'highlight'; position: InsertPosition; text: string }
  | { op: 'hide' }
  | { op: 'show' };

/** The keys of each edit, exactly (a key more or less is forbidden). Held in a Map: no prototype lookups. */
const EDIT_KEYS = new Map<string, readonly string[]>([
  ['set-text', ['op', 'text']],
  ['set-attribute', ['name', 'op', 'value']],
  ['remove-attribute', ['name', 'op']],
  ['set-style', ['op', 'property', 'value']],
  ['insert', ['element', 'op', 'position', 'text']],
  ['hide', ['op']],
  ['show', ['op']],
]);

/** The fixed tag and class of what `insert` adds (lib/live-patch.ts): the page's CSS sees them, never the agent's. */
export const PATCH_NOTE = { tag: 'span', className: 'echo-live-patch-note', highlightClassName: 'echo-live-patch-highlight', attribute: 'data-echo-live-patch' } as const;

/** Why one edit is refused. */
export interface PatchProblem {
  /** Index of the edit in the list (0-based), or -1 for the list itself. */
  index: number;
  message: string;
}

const isPlain = (v: unknown): v is Record<string, unknown> => {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const p = Object.getPrototypeOf(v) as unknown;
  return p === Object.prototype || p === null;
};

/** Characters never allowed in any value: C0/C1 controls (tab and newline aside), bidi controls, zero-width characters, BOM. */
const BAD_CHARS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]/;

/**
 * Why `v` (a value the agent gives: text, attribute or style value) is unsafe, or null: a string of at
 * most `max` units with no control, bidi or zero-width character, and, after NFKC and lower case, no
 * script scheme (`javascript:`, `vbscript:`, `data:`, `blob:`, `file:` where a scheme may start; the
 * first two also with white space removed), and with white space removed no `://` (a URL) and no
 * `url(`, `expression(` or `image-set(`.
 */
export function patchValueProblem(v: unknown, max: number): string | null {
  if (typeof v !== 'string') return 'is not a string';
  if (v.length > max) return `is longer than ${max} characters`;
  if (BAD_CHARS.test(v)) return 'holds a control, bidi or zero-width character';
  const spaced = v.normalize('NFKC').toLowerCase();
  const n = spaced.replace(/\s+/g, '');
  if (BAD_CHARS.test(spaced)) return 'holds a control, bidi or zero-width character';
  // `java\tscript:` still runs in a URL: the script schemes are looked for with white space removed.
  if (/(^|[^a-z0-9+.-])(javascript|vbscript|data|blob|file):/.test(spaced) || n.includes('javascript:') || n.includes('vbscript:')) return 'holds a script or data URL scheme';
  if (n.includes('://')) return 'holds a URL';
  if (n.includes('url(') || n.includes('expression(') || n.includes('image-set(')) return 'holds a CSS url() or expression()';
  return null;
}

/** Why an attribute name is not allow-listed, or null. Exact, case-sensitive: `ONCLICK`, `Title` and `xlink:href` are refused. */
export function patchAttributeProblem(name: unknown): string | null {
  if (typeof name !== 'string') return 'the attribute name is not a string';
  const shown = JSON.stringify(name.slice(0, 40));
  if (/^on/i.test(name.trim())) return `${shown} is an event handler attribute (on*): never set`;
  if (PATCH_ATTRIBUTES.has(name) || ARIA.test(name)) return null;
  return `${shown} is not an allow-listed attribute (title, class, hidden, aria-*)`;
}

/** Why a style value is refused, or null: the common value check, a narrow charset, and only rgb/rgba/hsl/hsla as functions. */
function styleValueProblem(v: unknown): string | null {
  const p = patchValueProblem(v, PATCH_BOUNDS.styleValue);
  if (p !== null) return `the style value ${p}`;
  const s = v as string;
  if (s.trim() === '') return 'the style value is empty';
  if (!/^[A-Za-z0-9#%., ()+-]+$/.test(s)) return 'the style value holds a character outside letters, digits, # % . , ( ) + - and spaces (no \\ escapes, quotes, ; or !)';
  for (const m of s.matchAll(/([A-Za-z-]*)\(/g)) {
    if (!['rgb', 'rgba', 'hsl', 'hsla'].includes((m[1] ?? '').toLowerCase())) return `the style value calls ${JSON.stringify((m[1] ?? '').slice(0, 20))}(), and only rgb(), rgba(), hsl() and hsla() are allowed`;
  }
  return null;
}

/** Why edit `e` is not in the closed set, or null. */
export function patchEditProblem(e: unknown): string | null {
  if (!isPlain(e)) return 'is not a plain object';
  const op = e.op;
  const keys = typeof op === 'string' ? EDIT_KEYS.get(op) : undefined;
  if (!keys) return `has an unknown op ${JSON.stringify(String(op).slice(0, 40))} (allowed: ${[...EDIT_KEYS.keys()].join(', ')})`;
  const own = Object.keys(e).sort();
  if (own.length !== keys.length || own.some((k, i) => k !== keys[i])) return `(${op}) must have exactly the keys ${keys.join(', ')}`;
  switch (op) {
    case 'set-text': {
      const p = patchValueProblem(e.text, PATCH_BOUNDS.text);
      return p === null ? null : `(set-text) text ${p}`;
    }
    case 'set-attribute': {
      const a = patchAttributeProblem(e.name);
      if (a !== null) return `(set-attribute) ${a}`;
      const p = patchValueProblem(e.value, PATCH_BOUNDS.attributeValue);
      if (p !== null) return `(set-attribute ${e.name as string}) the value ${p}`;
      if (e.name === 'hidden' && !['', 'hidden', 'until-found'].includes(e.value as string)) return '(set-attribute hidden) the value must be "", "hidden" or "until-found"';
      if (e.name === 'class' && !/^[A-Za-z0-9_ -]*$/.test(e.value as string)) return '(set-attribute class) class names take letters, digits, _ and - only';
      return null;
    }
    case 'remove-attribute': {
      const a = patchAttributeProblem(e.name);
      return a === null ? null : `(remove-attribute) ${a}`;
    }
    case 'set-style': {
      const prop = e.property;
      if (typeof prop !== 'string' || !PATCH_STYLE_PROPERTIES.has(prop)) {
        return `(set-style) ${JSON.stringify(String(prop).slice(0, 40))} is not an allow-listed style property (${[...PATCH_STYLE_PROPERTIES].join(', ')})`;
      }
      const p = styleValueProblem(e.value);
      return p === null ? null : `(set-style ${prop}) ${p}`;
    }
    case 'insert': {
      if (e.element !== 'note' && e.element !== 'highlight') return '(insert) element must be "note" or "highlight"';
      if (!(INSERT_POSITIONS as readonly unknown[]).includes(e.position)) return `(insert) position must be one of ${INSERT_POSITIONS.join(', ')}`;
      const p = patchValueProblem(e.text, PATCH_BOUNDS.noteText);
      if (p !== null) return `(insert) text ${p}`;
      return (e.text as string).trim() === '' ? '(insert) text is empty' : null;
    }
    default:
      return null; // hide, show: the op alone
  }
}

/**
 * The allow-list: why `edits` are not a patch (1 to PATCH_BOUNDS.edits edits of the closed set, at most
 * PATCH_BOUNDS.totalText units of text in all), or null. The console (before the person is asked) and
 * the extension (service worker and page) call this same function.
 */
export function patchEditsProblem(edits: unknown): PatchProblem | null {
  if (!Array.isArray(edits)) return { index: -1, message: 'edits must be a list' };
  if (edits.length < 1 || edits.length > PATCH_BOUNDS.edits) return { index: -1, message: `a patch has 1 to ${PATCH_BOUNDS.edits} edits (this one has ${edits.length})` };
  let total = 0;
  for (const [i, e] of edits.entries()) {
    const p = patchEditProblem(e);
    if (p !== null) return { index: i, message: `edit ${i + 1} ${p}` };
    for (const k of ['text', 'value'] as const) if (typeof (e as Record<string, unknown>)[k] === 'string') total += ((e as Record<string, string>)[k] as string).length;
  }
  return total > PATCH_BOUNDS.totalText ? { index: -1, message: `the edits hold more than ${PATCH_BOUNDS.totalText} characters of text in all` } : null;
}

/** Why `args` are not the arguments of `operation` (patch: exactly `{edits}` passing the allow-list; revert: `{}`), or null. */
export function patchArgumentsProblem(operation: string, args: unknown): string | null {
  if (!isPlain(args)) return 'the arguments are not an object';
  const keys = Object.keys(args);
  if (operation === 'revert') return keys.length === 0 ? null : 'revert takes no arguments beyond its patches';
  if (operation !== 'patch') return 'unknown operation';
  if (keys.length !== 1 || keys[0] !== 'edits') return 'patch takes exactly {edits}';
  const p = patchEditsProblem(args.edits);
  return p === null ? null : p.message;
}

/** A patch id: the console's request id of the patch (a UUID), or any id of that charset. */
export const PATCH_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** Why `subject` is not a revert's link subject (`{patchIds}`: 1..PATCH_BOUNDS.revertIds distinct ids), or null. */
export function revertSubjectProblem(subject: unknown): string | null {
  if (!isPlain(subject) || Object.keys(subject).length !== 1 || !Array.isArray(subject.patchIds)) return 'subject must be {patchIds}';
  const ids = subject.patchIds as unknown[];
  if (ids.length < 1 || ids.length > PATCH_BOUNDS.revertIds) return `patchIds must list 1 to ${PATCH_BOUNDS.revertIds} patches`;
  if (!ids.every((x) => typeof x === 'string' && PATCH_ID.test(x))) return 'each patch id must be [A-Za-z0-9_-]{1,64}';
  return new Set(ids).size === ids.length ? null : 'a patch is listed twice';
}

/**
 * The subject hash of a revert: SHA-256 (lowercase hex) of canonical JSON `{"revert": [patchId…]}`, in
 * the order they are reverted (newest first), so the grant binds exactly those patches.
 */
export function revertSubjectHash(patchIds: readonly string[], sha256: Sha256 = webCryptoSha256): Promise<string> {
  return sha256Hex(canonicalJson({ revert: [...patchIds] }), sha256);
}

/**
 * The prior- and after-state hash of a patch: SHA-256 (lowercase hex) of the canonical JSON of the
 * state record the page reads (lib/live-patch.ts `stateRecord`: the target's outerHTML and its two
 * neighbouring nodes, where a note before or after it would sit).
 */
export function patchStateHash(record: { html: string; prev: string | null; next: string | null }, sha256: Sha256 = webCryptoSha256): Promise<string> {
  return sha256Hex(canonicalJson(record), sha256);
}

/** The edits as lines of text for the person (the dialog, the console's list): every value whole, JSON-quoted. */
export function describeEdit(e: PatchEdit): string {
  switch (e.op) {
    case 'set-text':
      return `set the text to ${JSON.stringify(e.text)}`;
    case 'set-attribute':
      return `set attribute ${e.name} to ${JSON.stringify(e.value)}`;
    case 'remove-attribute':
      return `remove attribute ${e.name}`;
    case 'set-style':
      return `set style ${e.property}: ${e.value}`;
    case 'insert':
      return `insert a ${e.element} ${e.position === 'before' || e.position === 'after' ? e.position : e.position === 'prepend' ? 'at the start inside' : 'at the end inside'} it: ${JSON.stringify(e.text)}`;
    case 'hide':
      return 'hide it';
    case 'show':
      return 'show it';
  }
}

/** An active patch as the console lists it (ConsoleApi.listPatches). Target text is UNTRUSTED page text. */
export interface LivePatchInfo {
  patchId: string;
  tabId: number;
  frameId: number;
  documentId: string;
  origin: string;
  /** The frame's URL, stripped. */
  url: string;
  target: { ref: string; role: string; name: string; fingerprintHash: string };
  edits: PatchEdit[];
  priorHash: string;
  afterHash: string;
  /** ms since the epoch. */
  appliedAt: number;
  /** False when the readback saw the page undo part of it at once (it is still recorded, and can be reverted). */
  held: boolean;
}
