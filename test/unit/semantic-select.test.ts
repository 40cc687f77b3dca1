/**
 * The semantic selector language (src/shared/semantic-select.ts): the parser's
 * grammar, its refusals (attribute selectors of every kind, unsupported
 * syntax, limits, needles the redactor hides) and the matcher over plain
 * SelectNode objects (tag, id, class, role, type, name, text, states,
 * descendant and child combinators, alternatives). The DOM adapter and the
 * blocked-surface rules in a real page: test/e2e/page-reads.spec.ts.
 */
import { describe, expect, it } from 'vitest';
import {
  MatchMemo, matchesSelector, MAX_SELECTOR_CHARS, parseSelector, selectorProblem, SelectorError, type SelectNode,
} from '../../src/shared/semantic-select';

interface Spec {
  tag: string;
  id?: string;
  classes?: string[];
  role?: string | null;
  type?: string;
  name?: string;
  text?: string;
  states?: string[];
}

/** A chain of nodes, outermost first; answers the innermost. */
function chain(...specs: Spec[]): SelectNode {
  let parent: SelectNode | null = null;
  for (const s of specs) {
    const p: SelectNode | null = parent;
    parent = {
      tag: s.tag, id: s.id ?? '', classes: s.classes ?? [], role: s.role ?? null, ...(s.type ? { type: s.type } : {}),
      name: () => s.name ?? '', text: () => s.text ?? '', states: () => s.states ?? [], parent: () => p,
    };
  }
  return parent!;
}

const m = (sel: string, n: SelectNode) => matchesSelector(n, parseSelector(sel));

describe('parseSelector: refusals', () => {
  it('refuses every attribute selector with a message naming what to use instead', () => {
    for (const s of ['input[value=secret]', '[href^="https://"]', 'a[href*=token]', '[name]', 'input[type=password]', '*[data-x~=y]', 'div [ value = "a" ]']) {
      const p = selectorProblem(s);
      expect(p, s).toMatch(/attribute selectors are not allowed/);
      expect(p).toMatch(/:role\(…\)/);
    }
  });
  it('refuses sibling combinators, unknown pseudo-classes, bad syntax, empty and overlong selectors', () => {
    expect(selectorProblem('h1 + p')).toMatch(/sibling combinators/);
    expect(selectorProblem('h1 ~ p')).toMatch(/sibling combinators/);
    expect(selectorProblem('a:has(b)')).toMatch(/unsupported pseudo-class :has/);
    expect(selectorProblem('input:not(:checked)')).toMatch(/unsupported pseudo-class :not/);
    expect(selectorProblem('a:nth-child(2)')).toMatch(/unsupported pseudo-class/);
    expect(selectorProblem('')).toMatch(/empty/);
    expect(selectorProblem('   ')).toMatch(/empty/);
    expect(selectorProblem('a >')).toMatch(/expected a selector/);
    expect(selectorProblem(':name(unquoted)')).toMatch(/quoted string/);
    expect(selectorProblem(':name("open')).toMatch(/unterminated/);
    expect(selectorProblem(':role(but ton)')).toMatch(/expected \)/);
    expect(selectorProblem('a'.repeat(MAX_SELECTOR_CHARS + 1))).toMatch(/longer than 512/);
    expect(selectorProblem(Array.from({ length: 9 }, () => 'a').join(','))).toMatch(/at most 8 alternatives/);
    expect(selectorProblem(Array.from({ length: 9 }, () => 'div').join(' '))).toMatch(/at most 8 compounds/);
    expect(() => parseSelector('a[b]')).toThrow(SelectorError);
  });
  it('refuses a :name/:text needle that the redactor would hide (it could only match a secret)', () => {
    expect(selectorProblem(':text("4111 1111 1111 1111")')).toMatch(/looks like a secret/);
    expect(selectorProblem(':name("ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8")')).toMatch(/looks like a secret/);
    expect(selectorProblem(':text("[redacted:card]")')).toMatch(/looks like a secret/);
    expect(selectorProblem(':text("Order total")')).toBeNull();
    // A bracket inside a quoted needle is text, not an attribute selector.
    expect(selectorProblem(':text("Step [1]")')).toBeNull();
  });
});

describe('parseSelector: grammar', () => {
  it('parses compounds, combinators and alternatives', () => {
    const s = parseSelector('form#order > .row button:role(button):name("Pay"):enabled, h1');
    expect(s.alternatives).toHaveLength(2);
    const [a] = s.alternatives;
    expect(a!.combinators).toEqual(['child', 'descendant']);
    expect(a!.compounds[0]).toMatchObject({ tag: 'form', ids: ['order'] });
    expect(a!.compounds[1]).toMatchObject({ classes: ['row'] });
    expect(a!.compounds[2]).toMatchObject({ tag: 'button', roles: ['button'], names: ['pay'], states: ['enabled'] });
    expect(parseSelector('A.B').alternatives[0]!.compounds[0]).toMatchObject({ tag: 'a', classes: ['B'] });
    expect(parseSelector(":text('it\\'s here')").alternatives[0]!.compounds[0]!.texts).toEqual(["it's here"]);
  });
});

describe('matchesSelector', () => {
  const pay = chain(
    { tag: 'main', role: 'main' },
    { tag: 'form', id: 'order', role: 'form' },
    { tag: 'div', classes: ['row', 'actions'] },
    { tag: 'button', role: 'button', name: 'Pay now', text: 'Pay now', states: [] },
  );
  it('tag, id, class, role, name (case-insensitive substring), states', () => {
    expect(m('button', pay)).toBe(true);
    expect(m('*', pay)).toBe(true);
    expect(m('a', pay)).toBe(false);
    expect(m('.actions', pay)).toBe(false);
    expect(m('.actions > button', pay)).toBe(true);
    expect(m('.row.actions button', pay)).toBe(true);
    expect(m('.row.missing button', pay)).toBe(false);
    expect(m(':role(button):name("pay NOW")', pay)).toBe(true);
    expect(m(':name("refund")', pay)).toBe(false);
    expect(m(':text("Pay")', pay)).toBe(true);
    expect(m(':enabled', pay)).toBe(true);
    expect(m(':disabled', pay)).toBe(false);
    expect(m('#order button', pay)).toBe(true);
    expect(m('#order > button', pay)).toBe(false);
    expect(m('main form > .row > button', pay)).toBe(true);
    expect(m('main > .row button', pay)).toBe(false);
    expect(m('h1, #order button', pay)).toBe(true);
  });
  it('descendant matching backtracks over ancestors', () => {
    const n = chain({ tag: 'section', classes: ['x'] }, { tag: 'div', classes: ['x'] }, { tag: 'div' }, { tag: 'span' });
    expect(m('section.x div span', n)).toBe(true);
    expect(m('.x > div > span', n)).toBe(true);
    expect(m('section > div > div > span', n)).toBe(true);
    expect(m('section > div > span', n)).toBe(false);
  });
  it('input types and checkable states', () => {
    const box = chain({ tag: 'input', role: 'checkbox', type: 'checkbox', name: 'Gift wrap', states: ['checked'] });
    expect(m('input:type(checkbox):checked', box)).toBe(true);
    expect(m(':unchecked', box)).toBe(false);
    const off = chain({ tag: 'input', role: 'checkbox', type: 'checkbox', states: [] });
    expect(m(':unchecked', off)).toBe(true);
    expect(m(':type(email)', off)).toBe(false);
  });
});

describe('matchesSelector: bounded work (review finding 2)', () => {
  /** A chain of `depth` divs whose tag reads are counted (one read per compound check). */
  function countedChain(depth: number): { leaf: SelectNode; all: SelectNode[]; checks: () => number } {
    let checks = 0;
    let parent: SelectNode | null = null;
    const all: SelectNode[] = [];
    for (let i = 0; i < depth; i++) {
      const p: SelectNode | null = parent;
      parent = {
        get tag() {
          checks++;
          return 'div';
        },
        id: '', classes: [], role: null, name: () => '', text: () => '', states: () => [], parent: () => p,
      };
      all.push(parent);
    }
    return { leaf: parent!, all, checks: () => checks };
  }

  it('a selector that backtracks over every ancestor combination is matched in linear work (memoised)', () => {
    // `q * * * * * * *` at depth 30 with no q: without the memo, C(29,6)+... ≈ 2.4 million compound checks.
    const c = countedChain(30);
    expect(matchesSelector(c.leaf, parseSelector('q * * * * * * *'))).toBe(false);
    expect(c.checks()).toBeLessThan(30 * 8 * 2);
  });

  it('one memo over a whole scan keeps a deep page linear, and its answers stay right', () => {
    const c = countedChain(500);
    const memo = new MatchMemo();
    const sel = parseSelector('div div div div div div div div');
    const hits = c.all.filter((n) => matchesSelector(n, sel, memo));
    expect(hits).toHaveLength(500 - 7);
    expect(hits[0]).toBe(c.all[7]);
    expect(c.checks()).toBeLessThan(500 * 8 * 2);
    expect(memo.cut).toBe(false);
  });

  it('past its step budget a memo matches nothing more and says cut', () => {
    const c = countedChain(100);
    const memo = new MatchMemo(50);
    expect(matchesSelector(c.leaf, parseSelector('q * * * * * * *'), memo)).toBe(false);
    expect(memo.cut).toBe(true);
    expect(c.checks()).toBeLessThanOrEqual(50);
  });
});
