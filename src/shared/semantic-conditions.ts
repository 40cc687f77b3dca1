/**
 * The conditions of `page_wait` and `page_verify` (issue 10 items 3 and 7;
 * docs/semantic-reads.md): their shape, their check, and their evaluation
 * over what the page observed. Pure TypeScript: the console checks a
 * condition before asking the extension; the `semantic` content module
 * gathers the facts (the redacted view) and calls `evaluateCondition`.
 *
 * Reads are no oracle: every fact is the redacted, blocked-aware view the
 * snapshot shows. A condition whose needle the redactor would hide, or that
 * compares a value the view redacts, is refused (`condition-redacted`,
 * `value-redacted`), never answered true or false, so a secret cannot be
 * confirmed character by character; a blocked target is `target-blocked`.
 */
import { needleRedacted } from './semantic-select';

/**
 * Default, shortest and longest wait (ms). A check once is page_verify; the console's link
 * waits timeoutMs + a grace for the answer.
 */
export const WAIT_TIMEOUT_MS = { default: 5_000, min: 100, max: 30_000 } as const;

/** States a target can be waited for or verified. */
export const CONDITION_STATES = [
  'present', 'absent', 'visible', 'hidden', 'checked', 'unchecked', 'selected', 'unselected', 'disabled', 'enabled',
  'focused', 'unfocused', 'expanded', 'collapsed', 'pressed', 'required', 'readonly', 'invalid', 'value-present', 'value-empty',
] as const;
export type ConditionState = (typeof CONDITION_STATES)[number];

/** The condition keys; exactly one is given per call. */
export const CONDITION_KEYS = ['text', 'textGone', 'state', 'valueEquals', 'valueContains', 'urlChanged', 'urlContains'] as const;

/** A condition: exactly one of the keys. */
export type Condition =
  | { text: string }
  | { textGone: string }
  | { state: ConditionState }
  | { valueEquals: string }
  | { valueContains: string }
  | { urlChanged: true }
  | { urlContains: string };

/** Longest needle (characters). */
export const MAX_NEEDLE_CHARS = 1024;

const collapse = (s: string) => s.replace(/\s+/g, ' ').trim();

/**
 * Pick the one condition out of a call's arguments.
 * @param hasTarget whether a ref or selector names a target (state and value conditions need one).
 * @param waiting `urlChanged` only makes sense for a wait (changed since the wait began).
 * @returns the condition, or a message (bad request) — a needle the redactor hides gives
 *   `{refusal: 'condition-redacted'}`.
 */
export function pickCondition(
  args: Record<string, unknown>,
  hasTarget: boolean,
  waiting: boolean,
): { ok: true; condition: Condition } | { ok: false; message: string; refusal?: 'condition-redacted' } {
  const present = CONDITION_KEYS.filter((k) => args[k] !== undefined);
  if (present.length !== 1) return { ok: false, message: `give exactly one condition of ${CONDITION_KEYS.join(', ')} (got ${present.length})` };
  const k = present[0] as (typeof CONDITION_KEYS)[number];
  const v = args[k];
  if (k === 'urlChanged') {
    if (v !== true) return { ok: false, message: 'urlChanged must be true' };
    if (!waiting) return { ok: false, message: 'urlChanged is a wait condition (changed since the wait began); verify a URL with urlContains' };
    return { ok: true, condition: { urlChanged: true } };
  }
  if (k === 'state') {
    if (!(CONDITION_STATES as readonly unknown[]).includes(v)) return { ok: false, message: `state must be one of ${CONDITION_STATES.join(', ')}` };
    if (!hasTarget) return { ok: false, message: 'a state condition needs a target: ref or selector' };
    return { ok: true, condition: { state: v as ConditionState } };
  }
  if (typeof v !== 'string' || !collapse(v) || v.length > MAX_NEEDLE_CHARS) return { ok: false, message: `${k} must be a non-empty text of at most ${MAX_NEEDLE_CHARS} characters` };
  if ((k === 'valueEquals' || k === 'valueContains') && !hasTarget) return { ok: false, message: `${k} needs a target: ref or selector` };
  if (needleRedacted(v)) return { ok: false, refusal: 'condition-redacted', message: `the ${k} text looks like a secret the view redacts: a read never confirms a redacted value` };
  return { ok: true, condition: { [k]: v } as Condition };
}

/** What the page observed of one target (a ref's element, or a selector's one match), as the view shows it. */
export interface TargetFacts {
  /** The element is in the page (connected). */
  present: boolean;
  /** Rendered (not hidden by display, visibility, `hidden` or aria-hidden, itself or an ancestor). */
  visible: boolean;
  /** The snapshot's states (`checked`, `disabled`, `focused`, …). */
  states: string[];
  /** The role's value as the snapshot shows it, redacted (undefined: the element has none). */
  value?: string;
  /** The redactor changed the value: value conditions are refused. */
  valueRedacted: boolean;
  /** The visible text of the subtree, redacted, one piece per snapshot line. */
  text: string[];
}

/** Everything a condition can be evaluated over. */
export interface ConditionFacts {
  /** The target's facts: one per element the target names (a ref: at most one; a selector: its matches). */
  targets: TargetFacts[];
  /** A selector or ref was given. */
  targeted: boolean;
  /** Without a target: the visible text of the scope (the document), redacted, one piece per snapshot line. */
  text: string[];
  /** The scope's view was cut (past its byte or element bound): a text's absence is unknown. */
  viewCut: boolean;
  /** The document's URL, stripped and redacted. */
  url: string;
  /** For urlChanged: the URL when the wait began. */
  startUrl?: string;
}

/** The outcome of one check: met or not with evidence, or refused. */
export type Evaluation =
  | { kind: 'met' | 'unmet'; evidence: Record<string, unknown> }
  | { kind: 'refused'; code: 'value-redacted' | 'target-ambiguous'; message: string };

function textHit(pieces: string[], needle: string): string | null {
  const n = collapse(needle);
  for (const p of pieces) if (collapse(p).includes(n)) return p.length > 200 ? `${p.slice(0, 200)}…` : p;
  return null;
}

function stateHolds(t: TargetFacts, st: ConditionState): boolean {
  const has = (x: string) => t.states.includes(x);
  switch (st) {
    case 'present': return t.present;
    case 'absent': return !t.present;
    case 'visible': return t.present && t.visible;
    case 'hidden': return !t.present || !t.visible;
    case 'unchecked': return t.present && !has('checked') && !has('mixed');
    case 'unselected': return t.present && !has('selected');
    case 'enabled': return t.present && !has('disabled');
    case 'unfocused': return !has('focused');
    case 'value-present': return t.present && t.value !== undefined && t.value !== '';
    case 'value-empty': return t.present && (t.value === undefined || t.value === '');
    default: return t.present && has(st);
  }
}

/**
 * Evaluate `c` once over `f`.
 * - text/textGone: over the targets' text (any target holding it), or the scope's text; a
 *   `textGone` over a cut view is unmet (absence cannot be known).
 * - state: a ref's element, or a selector's single match (`present`/`absent`/`visible`/`hidden`
 *   count matches: a selector matching none is absent; several are `target-ambiguous` otherwise).
 * - valueEquals/valueContains: the single target's view value; refused `value-redacted` when the
 *   redactor changed it (never true or false).
 * - urlChanged/urlContains: the stripped, redacted URL.
 */
export function evaluateCondition(c: Condition, f: ConditionFacts): Evaluation {
  const met = (ok: boolean, evidence: Record<string, unknown>): Evaluation => ({ kind: ok ? 'met' : 'unmet', evidence });
  if ('text' in c || 'textGone' in c) {
    const needle = 'text' in c ? c.text : c.textGone;
    const pieces = f.targeted ? f.targets.filter((t) => t.present && t.visible).flatMap((t) => t.text) : f.text;
    const hit = textHit(pieces, needle);
    if ('text' in c) return met(hit !== null, hit !== null ? { found: hit } : { found: null, ...(f.viewCut ? { viewCut: true } : {}) });
    return met(hit === null && !f.viewCut, hit !== null ? { stillFound: hit } : { found: null, ...(f.viewCut ? { viewCut: true } : {}) });
  }
  if ('urlChanged' in c) return met(f.startUrl !== undefined && f.url !== f.startUrl, { url: f.url, startUrl: f.startUrl ?? null });
  if ('urlContains' in c) return met(f.url.includes(c.urlContains), { url: f.url });
  const live = f.targets.filter((t) => t.present);
  if ('state' in c && f.targets.length !== 1 && ['present', 'absent', 'visible', 'hidden'].includes(c.state)) {
    const shown = live.filter((t) => t.visible).length;
    // A scan that was cut saw only part of the view: absence there is never claimed (as for textGone).
    if (f.viewCut && (c.state === 'absent' || c.state === 'hidden') && shown === 0) return met(false, { matches: live.length, viewCut: true });
    const ok = c.state === 'present' ? live.length > 0 : c.state === 'absent' ? live.length === 0 : c.state === 'visible' ? shown > 0 : shown === 0;
    return met(ok, { matches: live.length });
  }
  if (live.length > 1) return { kind: 'refused', code: 'target-ambiguous', message: `the selector matches ${live.length} elements: narrow it (or use a ref)` };
  const t: TargetFacts = f.targets[0] ?? { present: false, visible: false, states: [], valueRedacted: false, text: [] };
  if ('state' in c) return met(stateHolds(t, c.state), { present: t.present, visible: t.visible, states: t.states });
  if (!t.present) return met(false, { present: false });
  if (t.valueRedacted) return { kind: 'refused', code: 'value-redacted', message: "the target's value is redacted in the view: a read never confirms a redacted value" };
  const v = t.value ?? '';
  const ok = 'valueEquals' in c ? collapse(v) === collapse(c.valueEquals) : collapse(v).includes(collapse(c.valueContains));
  return met(ok, { value: v.length > 200 ? `${v.slice(0, 200)}…` : v });
}
