/**
 * The semantic selector language (issue 10 item 3, "reads are no oracle";
 * docs/semantic-reads.md): how an agent names elements of a shared tab
 * without a ref, over the same redacted, blocked-aware view the snapshot
 * shows. Pure TypeScript: the console checks a selector before asking the
 * extension, and the extension parses it again and matches it in the page
 * (extension/src/lib/semantic-target.ts adapts elements to SelectNode).
 *
 * Grammar (CSS-like, a deliberately small subset):
 *
 *   list     := complex ( "," complex )*                  at most MAX_SELECTOR_ALTERNATIVES
 *   complex  := compound ( ( " " | ">" ) compound )*       at most MAX_SELECTOR_COMPOUNDS
 *   compound := ( tag | "*" )? ( "#"id | "."class | ":"pseudo )*   at least one part
 *   pseudo   := role(<role>) | type(<input type>) | name("<text>") | text("<text>") | <state>
 *   state    := checked | unchecked | selected | disabled | enabled | focused | expanded
 *             | collapsed | pressed | required | readonly | invalid
 *
 * `:name("…")` matches the accessible name, `:text("…")` the visible text of
 * the subtree, both as the snapshot shows them (redacted), case-insensitive
 * substrings. The descendant and child combinators follow the composed tree
 * (into open and closed shadow roots), never into another frame's document.
 *
 * Refused, with a clear message: attribute selectors of every kind (`[value=…]`,
 * `[href^=…]`, `[type=password]`, even `[name]`): an attribute's value is no
 * part of the view and matching on it would read it character by character;
 * sibling combinators and other pseudo-classes (unsupported); a `:name`/`:text`
 * needle that the redactor would hide (it could only be matched against a
 * secret); more than MAX_SELECTOR_CHARS characters.
 */
import { redactText } from './redact';

/** Longest selector accepted (characters). */
export const MAX_SELECTOR_CHARS = 512;
/** Alternatives (`a, b`) per selector. */
export const MAX_SELECTOR_ALTERNATIVES = 8;
/** Compounds per alternative (`form > group button` is 3). */
export const MAX_SELECTOR_COMPOUNDS = 8;
/** Matches reported at most; a selector matching more says so (`more: true`). */
export const MAX_SELECTOR_MATCHES = 100;

/** State pseudo-classes, read from the element's snapshot states (`unchecked`, `enabled` are their negations). */
export const SELECTOR_STATES = ['checked', 'unchecked', 'selected', 'disabled', 'enabled', 'focused', 'expanded', 'collapsed', 'pressed', 'required', 'readonly', 'invalid'] as const;
export type SelectorState = (typeof SELECTOR_STATES)[number];

/** One compound: every present part must hold. */
export interface Compound {
  /** Lower-case tag name; absent for `*` or no tag. */
  tag?: string;
  ids: string[];
  classes: string[];
  roles: string[];
  types: string[];
  /** Lower-cased needles of `:name("…")`. */
  names: string[];
  /** Lower-cased needles of `:text("…")`. */
  texts: string[];
  states: SelectorState[];
}

/** One alternative: compounds left to right, `combinators[i]` joins compounds i and i+1. */
export interface ComplexSelector {
  compounds: Compound[];
  combinators: Array<'descendant' | 'child'>;
}

/** A parsed selector: any alternative may match. */
export interface Selector {
  source: string;
  alternatives: ComplexSelector[];
}

/** What the matcher needs of an element (the page adapts DOM elements; tests use plain objects). */
export interface SelectNode {
  /** Lower-case local name. */
  readonly tag: string;
  readonly id: string;
  readonly classes: readonly string[];
  /** Role as the snapshot names it (`button`, `heading`, …), null for generic elements. */
  readonly role: string | null;
  /** An input's type (`email`, `checkbox`, …), else undefined. */
  readonly type?: string;
  /** The accessible name, redacted. */
  name(): string;
  /** The visible text of the subtree as the snapshot shows it, redacted. */
  text(): string;
  /** The snapshot's states of the element (`checked`, `disabled`, `focused`, …). */
  states(): readonly string[];
  /** The composed-tree parent element (a shadow root's host), or null. */
  parent(): SelectNode | null;
}

/** A selector that cannot be used, in words for the agent. */
export class SelectorError extends Error {}

const ROLE_OR_TYPE = /^[a-z][a-z0-9-]{0,39}$/;
const IDENT = /[A-Za-z0-9_\-\u00a0-\uffff]/;

const ATTRIBUTE_REFUSAL =
  'attribute selectors are not allowed ([value=…], [href^=…], [type=…], [name] and the like): a read never matches on attribute values. ' +
  'Match by tag, #id, .class, :role(…), :type(…), :name("…"), :text("…") or a state (:checked, :disabled, …), or use a ref from page_snapshot';

/** Whether the redactor would hide (part of) `needle`: such a needle could only be matched against a secret. */
export function needleRedacted(needle: string): boolean {
  return redactText(needle).redacted || needle.includes('[redacted:');
}

const collapse = (s: string) => s.replace(/\s+/g, ' ').trim();

/**
 * Parse a selector.
 * @throws SelectorError with a message for the agent (attribute selectors, unsupported syntax, limits, a redacted needle).
 */
export function parseSelector(source: string): Selector {
  if (typeof source !== 'string' || !source.trim()) throw new SelectorError('the selector is empty');
  if (source.length > MAX_SELECTOR_CHARS) throw new SelectorError(`the selector is longer than ${MAX_SELECTOR_CHARS} characters`);
  let i = 0;
  const s = source;
  const fail = (what: string): never => {
    throw new SelectorError(`${what} at character ${i + 1} of the selector`);
  };
  const ws = () => {
    const start = i;
    while (i < s.length && /\s/.test(s[i] as string)) i++;
    return i > start;
  };
  const ident = (what: string): string => {
    const start = i;
    while (i < s.length && IDENT.test(s[i] as string)) i++;
    if (i === start) fail(`expected ${what}`);
    return s.slice(start, i);
  };
  const str = (): string => {
    const q = s[i];
    if (q !== '"' && q !== "'") fail('expected a quoted string');
    i++;
    let out = '';
    while (i < s.length && s[i] !== q) {
      if (s[i] === '\\' && i + 1 < s.length) i++;
      out += s[i];
      i++;
    }
    if (i >= s.length) fail('unterminated string');
    i++;
    return out;
  };
  const argOf = (name: string, quoted: boolean): string => {
    if (s[i] !== '(') fail(`:${name} takes an argument in parentheses`);
    i++;
    ws();
    const v = quoted ? str() : ident(`the argument of :${name}`);
    ws();
    if (s[i] !== ')') fail(`expected ) after the argument of :${name}`);
    i++;
    return v;
  };
  const compound = (): Compound => {
    const c: Compound = { ids: [], classes: [], roles: [], types: [], names: [], texts: [], states: [] };
    let parts = 0;
    if (s[i] === '*') (i++, parts++);
    else if (i < s.length && /[A-Za-z]/.test(s[i] as string)) (c.tag = ident('a tag').toLowerCase(), parts++);
    for (;;) {
      const ch = s[i];
      // `[` starts an attribute selector wherever it appears outside a string.
      if (ch === '[') throw new SelectorError(ATTRIBUTE_REFUSAL);
      if (ch === '#') (i++, c.ids.push(ident('an id')));
      else if (ch === '.') (i++, c.classes.push(ident('a class')));
      else if (ch === ':') {
        i++;
        const p = ident('a pseudo-class').toLowerCase();
        if (p === 'role' || p === 'type') {
          const v = argOf(p, false).toLowerCase();
          if (!ROLE_OR_TYPE.test(v)) fail(`:${p}() takes a name like button or email`);
          (p === 'role' ? c.roles : c.types).push(v);
        } else if (p === 'name' || p === 'text') {
          const v = collapse(argOf(p, true));
          if (!v) fail(`:${p}("…") takes a non-empty text`);
          if (v.length > 256) fail(`:${p}("…") takes at most 256 characters`);
          if (needleRedacted(v)) throw new SelectorError(`the text of :${p}("…") looks like a secret the view redacts: a read never matches against a redacted value`);
          (p === 'name' ? c.names : c.texts).push(v.toLowerCase());
        } else if ((SELECTOR_STATES as readonly string[]).includes(p)) c.states.push(p as SelectorState);
        else fail(`unsupported pseudo-class :${p} (supported: role, type, name, text, ${SELECTOR_STATES.join(', ')})`);
      } else break;
      parts++;
    }
    if (parts === 0) fail(i < s.length ? `unexpected ${JSON.stringify(s[i])}` : 'expected a selector');
    return c;
  };
  const alternatives: ComplexSelector[] = [];
  ws();
  for (;;) {
    const cx: ComplexSelector = { compounds: [compound()], combinators: [] };
    for (;;) {
      const hadWs = ws();
      const ch = s[i];
      if (i >= s.length || ch === ',') break;
      if (ch === '+' || ch === '~') fail('sibling combinators (+, ~) are not supported');
      if (ch === '>') {
        i++;
        ws();
        cx.combinators.push('child');
      } else if (hadWs) cx.combinators.push('descendant');
      else fail(`unexpected ${JSON.stringify(ch)}`);
      cx.compounds.push(compound());
      if (cx.compounds.length > MAX_SELECTOR_COMPOUNDS) throw new SelectorError(`at most ${MAX_SELECTOR_COMPOUNDS} compounds per alternative`);
    }
    alternatives.push(cx);
    if (alternatives.length > MAX_SELECTOR_ALTERNATIVES) throw new SelectorError(`at most ${MAX_SELECTOR_ALTERNATIVES} alternatives`);
    if (i >= s.length) break;
    i++; // ','
    ws();
  }
  return { source, alternatives };
}

/** `null` when `source` parses, otherwise why not (the console's early check). */
export function selectorProblem(source: string): string | null {
  try {
    parseSelector(source);
    return null;
  } catch (e) {
    if (e instanceof SelectorError) return e.message;
    throw e;
  }
}

function hasState(states: readonly string[], st: SelectorState): boolean {
  if (st === 'unchecked') return !states.includes('checked') && !states.includes('mixed');
  if (st === 'enabled') return !states.includes('disabled');
  return states.includes(st);
}

/** Whether one compound holds for `n` (cheap parts first; name, text and states are computed only when asked). */
export function matchesCompound(n: SelectNode, c: Compound): boolean {
  if (c.tag !== undefined && n.tag !== c.tag) return false;
  for (const id of c.ids) if (n.id !== id) return false;
  for (const cl of c.classes) if (!n.classes.includes(cl)) return false;
  for (const r of c.roles) if (n.role !== r) return false;
  for (const t of c.types) if (n.type !== t) return false;
  if (c.states.length) {
    const st = n.states();
    for (const x of c.states) if (!hasState(st, x)) return false;
  }
  if (c.names.length) {
    const name = collapse(n.name()).toLowerCase();
    for (const x of c.names) if (!name.includes(x)) return false;
  }
  if (c.texts.length) {
    const text = collapse(n.text()).toLowerCase();
    for (const x of c.texts) if (!text.includes(x)) return false;
  }
  return true;
}

/** Matcher steps (compound checks and ancestor steps) one MatchMemo allows; past it nothing more matches and the memo says `cut`. */
export const MAX_MATCH_STEPS = 2_000_000;

/**
 * The matcher's memory over one scan (one selectIn call): whether prefix k of
 * an alternative matches at a node, and whether some strict ancestor of a node
 * does, each computed once. Without it a selector such as `q * * * * * * *`
 * backtracks over every ancestor combination (exponential in the depth, on the
 * page's main thread); with it a scan costs at most nodes x compounds x
 * alternatives checks, and MAX_MATCH_STEPS bounds even that.
 */
export class MatchMemo {
  private readonly at = new Map<SelectNode, Map<number, boolean>>();
  private readonly below = new Map<SelectNode, Map<number, boolean>>();
  private steps = 0;
  /** The step budget ran out: later nodes were not matched. */
  cut = false;

  constructor(private readonly maxSteps = MAX_MATCH_STEPS) {}

  /** Count one step; false once the budget is spent. */
  step(): boolean {
    if (++this.steps > this.maxSteps) this.cut = true;
    return !this.cut;
  }

  get(table: 'at' | 'below', n: SelectNode, key: number): boolean | undefined {
    return this[table].get(n)?.get(key);
  }

  set(table: 'at' | 'below', n: SelectNode, key: number, v: boolean): boolean {
    let m = this[table].get(n);
    if (!m) this[table].set(n, (m = new Map()));
    m.set(key, v);
    return v;
  }
}

/** Whether compounds[0..k] of alternative `a` match with compounds[k] at `n` (right to left). */
function matchFrom(n: SelectNode, cx: ComplexSelector, a: number, k: number, memo: MatchMemo): boolean {
  const key = a * 64 + k;
  const known = memo.get('at', n, key);
  if (known !== undefined) return known;
  if (!memo.step()) return false;
  if (!matchesCompound(n, cx.compounds[k] as Compound)) return memo.set('at', n, key, false);
  if (k === 0) return memo.set('at', n, key, true);
  if (cx.combinators[k - 1] === 'child') {
    const p = n.parent();
    return memo.set('at', n, key, p !== null && matchFrom(p, cx, a, k - 1, memo));
  }
  return memo.set('at', n, key, ancestorMatches(n, cx, a, k - 1, memo));
}

/** Whether some strict ancestor of `n` matches compounds[0..k] (iterative: a deep page does not deepen the stack). */
function ancestorMatches(n: SelectNode, cx: ComplexSelector, a: number, k: number, memo: MatchMemo): boolean {
  const key = a * 64 + k;
  const chain: SelectNode[] = [];
  let res = false;
  for (let x: SelectNode = n; ; ) {
    const known = memo.get('below', x, key);
    if (known !== undefined) {
      res = known;
      break;
    }
    chain.push(x);
    const p = x.parent();
    if (!p || !memo.step()) break;
    if (matchFrom(p, cx, a, k, memo)) {
      res = true;
      break;
    }
    x = p;
  }
  // Every node on the chain has the same answer: its parent did not match, so it is its parent's.
  if (!memo.cut) for (const y of chain) memo.set('below', y, key, res);
  return res;
}

/**
 * Whether `n` matches the selector. The caller only offers nodes of the view
 * (rendered, not blocked, not private): the matcher never sees the others.
 * Pass one `memo` for all the nodes of a scan (its answers are reused and its
 * step budget shared); without one, each call has its own.
 */
export function matchesSelector(n: SelectNode, sel: Selector, memo: MatchMemo = new MatchMemo()): boolean {
  return sel.alternatives.some((cx, a) => matchFrom(n, cx, a, cx.compounds.length - 1, memo));
}
