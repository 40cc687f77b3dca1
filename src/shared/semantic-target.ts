/**
 * The shared contract of the semantic MUTATIONS (issue 10 items 1, 4, 5, 6;
 * docs/semantic-controls.md): faculty `semantic`, operations click, hover,
 * focus and scroll. Pure TypeScript, used by the console
 * (src/main/core/faculties/semantic.ts), the extension
 * (extension/src/background/faculties/semantic*.ts, lib/semantic-target.ts)
 * and the tests.
 *
 * It owns:
 *  - the target **fingerprint**: a bounded, page-derived description of one
 *    element (role, accessible name, label, input type, name attribute, form,
 *    up to three named ancestors, its item's text and that text's hash, and
 *    its position among elements with the same description). The person
 *    reviews it; its hash is the grant's subject hash, so a grant names exactly
 *    one described element, in the item (row, card) the person saw;
 *  - its shape check and bounds, its hash, and how an agent's partial
 *    fingerprint matches a full one;
 *  - the readback's observations and the rule per operation that judges them
 *    (`judgeReadback`): success is reported only after it says confirmed.
 */
import { canonicalJson, sha256Hex, type Sha256, webCryptoSha256 } from './canonical';
import { isKeyObservation, keyArgumentsProblem, type KeyObservation } from './semantic-key';

/**
 * The mutations of faculty `semantic`. click, type and key are mutations; hover, focus and scroll are
 * low-impact mutations. `key` acts on the focused element (./semantic-key.ts).
 */
export const SEMANTIC_OPERATIONS = ['click', 'hover', 'focus', 'scroll', 'type', 'key'] as const;
export type SemanticOperation = (typeof SEMANTIC_OPERATIONS)[number];

/** Whether `op` is one of SEMANTIC_OPERATIONS. */
export function isSemanticOperation(op: unknown): op is SemanticOperation {
  return typeof op === 'string' && (SEMANTIC_OPERATIONS as readonly string[]).includes(op);
}

/** The longest text `type` sets (UTF-16 units): a long comment or address fits; a flood does not. */
export const TYPE_TEXT_MAX = 10_000;

/**
 * The roles `type` may act on, judged from the fingerprint before the person is asked: text fields
 * (textbox, searchbox, incl. contenteditable and date/time inputs), number fields (spinbutton), and
 * choices by option (combobox, listbox: `<select>` or an input with a list). The page-side act
 * checks the element itself again (extension/src/lib/semantic-type.ts).
 */
export const TYPABLE_ROLES: ReadonlySet<string> = new Set(['textbox', 'searchbox', 'combobox', 'spinbutton', 'listbox']);

/**
 * Why `args` are not the arguments of `operation`, or null. click, hover, focus and scroll take
 * none (`{}`); key takes exactly `{key}` (./semantic-key.ts keyArgumentsProblem); type takes exactly `{text}`, a string of at most TYPE_TEXT_MAX units (the value the
 * field is to hold: it REPLACES the field's value; for a `<select>`, an option's label, never its value).
 * Used by the console (validate) and the extension (checkRequest), so both judge alike.
 */
export function semanticArgumentsProblem(operation: SemanticOperation, args: unknown): string | null {
  if (!isObj(args)) return 'the arguments are not an object';
  const keys = Object.keys(args);
  if (operation === 'key') return keyArgumentsProblem(args);
  if (operation !== 'type') return keys.length === 0 ? null : `${operation} takes no arguments beyond its target`;
  if (keys.length !== 1 || keys[0] !== 'text') return 'type takes exactly {text}';
  if (typeof args.text !== 'string' || args.text.length > TYPE_TEXT_MAX) return `text must be a string of at most ${TYPE_TEXT_MAX} characters`;
  return null;
}

/** Bounds of a fingerprint (UTF-16 units; the page can make any of them long, the cut is part of the fingerprint). */
export const FINGERPRINT_BOUNDS = {
  role: 32,
  name: 128,
  label: 128,
  type: 32,
  nameAttribute: 64,
  form: 128,
  ancestorName: 64,
  /** The item's text as the person reads it (`context`); the hash covers the whole text, up to `contextText`. */
  context: 256,
  /** The longest item text (UTF-16 units), hashed whole by `contextHash`; an ancestor with more text wraps the page, it is no item. */
  contextText: 4_000,
  /** Named ancestors kept, nearest first. */
  ancestors: 3,
  /** Largest `nth`. */
  nth: 100_000,
} as const;

/** One ancestor of the target in the fingerprint: its role and (cut) accessible name. */
export interface FingerprintAncestor {
  role: string;
  name: string;
}

/**
 * A target's fingerprint, derived in the page (extension/src/lib/semantic-target.ts
 * `fingerprintOf`). All text is redacted (src/shared/redact.ts) and cut to
 * FINGERPRINT_BOUNDS; absent optional fields are omitted (never empty strings).
 */
export interface Fingerprint {
  /** WAI-ARIA role (semantic-roles.ts roleOf). */
  role: string;
  /** Accessible name ('' when none). */
  name: string;
  /** The text of its `<label>`s, when that is not already the name. */
  label?: string;
  /** `type` of an `<input>`. */
  type?: string;
  /** The `name` attribute of a form control. */
  nameAttribute?: string;
  /** Its form's accessible name, else its `id`, else its `name` attribute (a form with none: `"form"`). */
  form?: string;
  /** Up to three nearest ancestors that have a role and a name, nearest first; the nearest unnamed row, list item or article is named by its text (cut, redacted). */
  ancestors: FingerprintAncestor[];
  /**
   * The text of the target's ITEM, without the target's own text: the row, card or list item it acts
   * in (extension/src/lib/semantic-target.ts contextOf), redacted, private and unrendered parts left
   * out, cut to FINGERPRINT_BOUNDS.context. Absent when the target stands in no such item.
   */
  context?: string;
  /**
   * SHA-256 (lowercase hex) of that item text whole (at most FINGERPRINT_BOUNDS.contextText units,
   * before the cut): a page that reuses the element for another row (React's index keys) changes it
   * though the cut text and every other field stay the same. Present exactly when `context` is.
   */
  contextHash?: string;
  /** Its position (0-based, composed-tree order) among the document's elements with the same fields above. */
  nth: number;
}

/** What an agent may give to target by fingerprint: any of the fields (role and name usually suffice). */
export type FingerprintQuery = Partial<Fingerprint>;

const FIELD_KEYS = ['role', 'name', 'label', 'type', 'nameAttribute', 'form', 'ancestors', 'context', 'contextHash', 'nth'] as const;

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown, max: number, allowEmpty = true) => typeof v === 'string' && v.length <= max && (allowEmpty || v.length > 0);

/**
 * Why `v` is not a Fingerprint (every field present and within bounds, no other key), or null.
 * With `partial`, every field is optional (an agent's query) but at least one must be given.
 */
export function fingerprintProblem(v: unknown, partial = false): string | null {
  if (!isObj(v)) return 'the fingerprint is not an object';
  const keys = Object.keys(v);
  for (const k of keys) if (!(FIELD_KEYS as readonly string[]).includes(k)) return `the fingerprint has no field ${JSON.stringify(k.slice(0, 32))}`;
  if (partial && keys.length === 0) return 'the fingerprint names no field';
  const B = FINGERPRINT_BOUNDS;
  const need = (k: string) => !partial || v[k] !== undefined;
  if (need('role') && !str(v.role, B.role, false)) return `role must be a string of 1 to ${B.role} characters`;
  if (need('name') && !str(v.name, B.name)) return `name must be a string of at most ${B.name} characters`;
  for (const [k, max] of [['label', B.label], ['type', B.type], ['nameAttribute', B.nameAttribute], ['form', B.form], ['context', B.context]] as const) {
    if (v[k] !== undefined && !str(v[k], max, false)) return `${k} must be a string of 1 to ${max} characters`;
  }
  if (v.contextHash !== undefined && (typeof v.contextHash !== 'string' || !/^[0-9a-f]{64}$/.test(v.contextHash))) return 'contextHash must be 64 lowercase hex digits';
  if (!partial && (v.context === undefined) !== (v.contextHash === undefined)) return 'context and contextHash come together';
  if (need('ancestors')) {
    const a = v.ancestors;
    if (!Array.isArray(a) || a.length > B.ancestors) return `ancestors must be a list of at most ${B.ancestors}`;
    for (const x of a) {
      if (!isObj(x) || Object.keys(x).length !== 2 || !str(x.role, B.role, false) || !str(x.name, B.ancestorName)) return 'each ancestor must be {role, name} within bounds';
    }
  }
  if (need('nth') && (!Number.isSafeInteger(v.nth) || (v.nth as number) < 0 || (v.nth as number) > B.nth)) return `nth must be an integer from 0 to ${B.nth}`;
  return null;
}

/** Whether `v` is a complete Fingerprint within bounds. */
export function isFingerprint(v: unknown): v is Fingerprint {
  return fingerprintProblem(v) === null;
}

/** A copy of `fp` with exactly the Fingerprint's fields, in a fixed shape (undefined optional fields left out). */
export function cleanFingerprint(fp: Fingerprint): Fingerprint {
  return {
    role: fp.role,
    name: fp.name,
    ...(fp.label !== undefined ? { label: fp.label } : {}),
    ...(fp.type !== undefined ? { type: fp.type } : {}),
    ...(fp.nameAttribute !== undefined ? { nameAttribute: fp.nameAttribute } : {}),
    ...(fp.form !== undefined ? { form: fp.form } : {}),
    ancestors: fp.ancestors.map((a) => ({ role: a.role, name: a.name })),
    ...(fp.context !== undefined ? { context: fp.context } : {}),
    ...(fp.contextHash !== undefined ? { contextHash: fp.contextHash } : {}),
    nth: fp.nth,
  };
}

/**
 * The fingerprint hash: SHA-256 (lowercase hex) of the RFC 8785 canonical JSON of
 * the fingerprint (src/shared/canonical.ts). It is the grant's `subjectHash` for
 * faculty `semantic`, computed by the console and again by the extension from
 * the dispatch's subject.
 * @throws Error when `fp` is not a Fingerprint.
 */
export async function fingerprintHash(fp: Fingerprint, sha256: Sha256 = webCryptoSha256): Promise<string> {
  const problem = fingerprintProblem(fp);
  if (problem !== null) throw new Error(problem);
  return sha256Hex(canonicalJson(cleanFingerprint(fp)), sha256);
}

/** Whether the full fingerprint `fp` has every field the query `q` gives, equal (ancestors compared as whole lists). */
export function fingerprintMatches(q: FingerprintQuery, fp: Fingerprint): boolean {
  for (const k of FIELD_KEYS) {
    const want = q[k];
    if (want === undefined) continue;
    if (k === 'ancestors') {
      if (canonicalJson(want) !== canonicalJson(fp.ancestors)) return false;
    } else if (fp[k] !== want) return false;
  }
  return true;
}

/** `q` without the item fields (`context`, `contextHash`): the target's own description, as `nth` counts it and the readback finds it. */
export function withoutContext<T extends FingerprintQuery>(q: T): Omit<T, 'context' | 'contextHash'> {
  const { context: _c, contextHash: _h, ...rest } = q;
  return rest;
}

/** The words for each field of a fingerprint that may differ after the review (targetChangedWords); fixed text, no page words. */
export const FINGERPRINT_CHANGE_WORDS: Readonly<Record<string, string>> = {
  role: 'its role', name: 'its name', label: 'its label', type: 'its input type', nameAttribute: 'its name attribute', form: 'its form',
  ancestors: 'its named containers', context: "its item's text (the row or card it stands in: a list that reuses its rows, or text that changes on its own)", nth: 'its position',
};

/**
 * What differs between the fingerprint approved and the one found now, in fixed words (FINGERPRINT_CHANGE_WORDS)
 * joined by "; ": the dispatch's `target-changed` tells the agent (and the receipt) whether the row changed or
 * the element itself. The item's text and its hash are one change. Empty when they are the same.
 */
export function targetChangedWords(approved: Fingerprint, now: Fingerprint): string {
  const out: string[] = [];
  for (const k of FIELD_KEYS) {
    if (k === 'contextHash') continue;
    const differs = k === 'context' ? approved.context !== now.context || approved.contextHash !== now.contextHash : canonicalJson(approved[k] ?? null) !== canonicalJson(now[k] ?? null);
    if (differs) out.push(FINGERPRINT_CHANGE_WORDS[k] as string);
  }
  return out.join('; ');
}

/** Whether `text` is words targetChangedWords can give (only those pass to the agent). */
export function isTargetChangedWords(text: string): boolean {
  const known = new Set(Object.values(FINGERPRINT_CHANGE_WORDS));
  return text !== '' && text.split('; ').every((w) => known.has(w));
}

/** Whether two fingerprints describe the same element (all fields equal). */
export function sameFingerprint(a: Fingerprint, b: Fingerprint): boolean {
  return canonicalJson(cleanFingerprint(a)) === canonicalJson(cleanFingerprint(b));
}

/**
 * Why a target may never be acted on (issue 10 item 5), decided in the page before the person is asked
 * and again right before dispatch:
 *  - `password`: a password input;
 *  - `password-form`: a control of (or the) form holding a password input;
 *  - `credential-field`: an `autocomplete` naming a credential, a one-time code or card data;
 *  - `private`: inside an element carrying `data-echo-private`;
 *  - `cross-origin-frame`: an iframe whose document is not readable from its parent.
 */
export const BLOCKED_REASONS = ['password', 'password-form', 'credential-field', 'private', 'cross-origin-frame'] as const;
export type BlockedReason = (typeof BLOCKED_REASONS)[number];

/**
 * What the readback saw after the action (extension/src/lib/semantic-readback.ts), by a separate
 * step that re-finds the target by its fingerprint (not through the element the action held).
 */
export interface ReadbackObservations {
  /** An element with the approved fingerprint is in the document now. */
  found: boolean;
  /** The document's URL changed since just before the action (same document). */
  urlChanged: boolean;
  /** The frame holds another document now (the action navigated). */
  documentChanged: boolean;
  /** The target is the focused element (deep, through shadow roots): the re-found one, or the element acted on when the fingerprint no longer finds it. */
  focused: boolean;
  /** Focus moved during the action (the focused element before differs from the one now). */
  focusMoved: boolean;
  /** The target (as for `focused`) takes text or a choice (input, textarea, select, contenteditable): focusing it is a click's effect. */
  editable: boolean;
  /** States of the target that changed (e.g. `checked`, `expanded`, `value`). */
  stateChanged: string[];
  /** DOM mutations seen near the target (its subtree, its scope, what it controls) during and after the action. */
  domChangesNear: number;
  /** The re-found target's box intersects the viewport. */
  inViewport: boolean;
  /** type only: the re-found target holds the value the action set (its value, chosen option or text). */
  valueSet?: boolean;
  /**
   * Mutations near the target NOT counted in domChangesNear because they touched what the page had
   * been changing on its own since the target was resolved for review (a clock, a ticker): noise,
   * not the action's effect (extension/src/lib/semantic-readback.ts prewatch). Absent when none.
   */
  noiseIgnored?: number;
  /** Operation `key` only: the default the extension performed and whether its effect is there (./semantic-key.ts). */
  key?: KeyObservation;
}

/** The readback's judgement: confirmed with the effect seen, or a mismatch saying what was expected. */
export type ReadbackVerdict = { confirmed: true; effect: string } | { confirmed: false; expected: string };

/**
 * Judge the readback of `operation` (the rule per operation, docs/semantic-controls.md):
 *  - click: a new document or URL, a state change of the target, a DOM change near it, or focus moved
 *    into a field (the target, if it takes text or a choice) or elsewhere (a button focused by its own
 *    click shows nothing);
 *  - hover: the target still there, and a state change or a DOM change near it (synthetic events
 *    cannot set `:hover`, so a pure CSS hover shows nothing and is a mismatch);
 *  - focus: the re-found target is the focused element;
 *  - scroll: the re-found target intersects the viewport;
 *  - type: the re-found target holds the value set (the page may rewrite or refuse it: then a mismatch).
 */
export function judgeReadback(operation: SemanticOperation, o: ReadbackObservations): ReadbackVerdict {
  switch (operation) {
    case 'click':
      if (o.documentChanged) return { confirmed: true, effect: 'document-changed' };
      if (o.urlChanged) return { confirmed: true, effect: 'url-changed' };
      if (o.stateChanged.length > 0) return { confirmed: true, effect: `state-changed:${o.stateChanged.join(',')}` };
      if (o.domChangesNear > 0) return { confirmed: true, effect: o.found ? 'dom-changed-near-target' : 'target-removed-or-changed' };
      // The click's own emulated focus of a button proves nothing; focus landing in a field, or elsewhere, does.
      if (o.focusMoved && (!o.focused || o.editable)) return { confirmed: true, effect: 'focus-moved' };
      return { confirmed: false, expected: 'a new document or URL, a state change of the target, a DOM change near it, or focus moving' };
    case 'hover':
      if (!o.found) return { confirmed: false, expected: 'the target still in the page' };
      if (o.stateChanged.length > 0) return { confirmed: true, effect: `state-changed:${o.stateChanged.join(',')}` };
      if (o.domChangesNear > 0) return { confirmed: true, effect: 'dom-changed-near-target' };
      return { confirmed: false, expected: 'a state change of the target or a DOM change near it (a CSS-only hover cannot be seen)' };
    case 'focus':
      return o.found && o.focused ? { confirmed: true, effect: 'focused' } : { confirmed: false, expected: 'the target to be the focused element' };
    case 'scroll':
      return o.found && o.inViewport ? { confirmed: true, effect: 'in-viewport' } : { confirmed: false, expected: 'the target inside the viewport' };
    case 'type':
      return o.found && o.valueSet === true ? { confirmed: true, effect: 'value-set' } : { confirmed: false, expected: 'the target to hold the value typed' };
    case 'key':
      return judgeKey(o);
  }
}

/**
 * The key's rule (docs/semantic-controls.md, "Key"): a new document or URL; the default performed and
 * its effect there (`key.landed`: focus on the element sequential navigation chose, the radio checked,
 * the scroller moved, the dialog closed); else the page's own reaction to the key or to the activation
 * or submission it caused: a state change of the target, a DOM change near it, or focus moved.
 * A key whose default is `none` or `prevented` and that the page shows no sign of is a mismatch.
 */
function judgeKey(o: ReadbackObservations): ReadbackVerdict {
  if (o.documentChanged) return { confirmed: true, effect: 'document-changed' };
  if (o.urlChanged) return { confirmed: true, effect: 'url-changed' };
  const d = o.key?.default ?? 'none';
  if (o.key?.landed) return { confirmed: true, effect: d };
  if (o.stateChanged.length > 0) return { confirmed: true, effect: `${d === 'none' || d === 'prevented' ? '' : `${d}:`}state-changed:${o.stateChanged.join(',')}` };
  if (o.domChangesNear > 0) return { confirmed: true, effect: `${d === 'none' || d === 'prevented' ? '' : `${d}:`}${o.found ? 'dom-changed-near-target' : 'target-removed-or-changed'}` };
  // Focus elsewhere than navigation chose: the page moved it (a focus trap, a roving tabindex); said as such.
  if (o.focusMoved) return { confirmed: true, effect: d === 'focus-moved' || d === 'focus-left' ? 'focus-moved-elsewhere' : 'page-moved-focus' };
  return { confirmed: false, expected: `an effect of the key (default performed: ${d}): a new document or URL, a state change, a DOM change near the focused element, or focus moving` };
}

/** Whether `v` has the shape of ReadbackObservations. */
export function isReadbackObservations(v: unknown): v is ReadbackObservations {
  if (!isObj(v)) return false;
  const bools = ['found', 'urlChanged', 'documentChanged', 'focused', 'focusMoved', 'editable', 'inViewport'];
  if (v.key !== undefined && !isKeyObservation(v.key)) return false;
  return bools.every((k) => typeof v[k] === 'boolean') && (v.valueSet === undefined || typeof v.valueSet === 'boolean') &&
    (v.noiseIgnored === undefined || (Number.isSafeInteger(v.noiseIgnored) && (v.noiseIgnored as number) >= 0)) && Array.isArray(v.stateChanged) && v.stateChanged.length <= 16 &&
    v.stateChanged.every((s) => typeof s === 'string' && s.length <= 32) && Number.isSafeInteger(v.domChangesNear) && (v.domChangesNear as number) >= 0;
}

/**
 * The evidence of the target every semantic mutation returns (issue 10 item 4), with `trustedInput: false`:
 * the events were synthetic, never the person's hardware input.
 */
export interface TargetEvidence {
  role: string;
  name: string;
  fingerprintHash: string;
  frameId: number;
  documentId: string;
  /** The frame's URL, stripped (src/shared/url.ts). */
  url: string;
}

/**
 * What the extension's `semantic` dispatch answers as its result (JSON text in InvocationResult.result):
 * the operation, the target's evidence, `trustedInput: false`, and the readback.
 */
export interface SemanticActResult {
  operation: SemanticOperation;
  evidence: TargetEvidence;
  trustedInput: false;
  readback: { observations: ReadbackObservations; verdict: ReadbackVerdict };
}

/**
 * What the extension's `semantic-target`/`resolve` read answers the console (the target of a
 * semantic mutation, found by ref or by fingerprint in the shared tab's same-origin documents).
 * URLs stripped; `urlHash` is over the exact URLs read in the same task as the search. Page text
 * in `fingerprint` is redacted and UNTRUSTED.
 */
export interface ResolvedTarget {
  frameId: number;
  documentId: string;
  origin: string;
  tabUrl: string;
  frameUrl: string;
  urlHash: string;
  ref: string | null;
  fingerprint: Fingerprint;
  blocked: BlockedReason | null;
  /** The declarative WebMCP tool listed now that owns the target's form (the ladder), or null. */
  narrower: string | null;
}
