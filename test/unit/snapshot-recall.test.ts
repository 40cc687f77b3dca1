/**
 * The snapshot bench's recall (test/bench/snapshot-recall.ts): reading
 * Playwright's aria snapshot YAML (quoted keys, quoted values, properties) and
 * our format, and the multiset recall that says what our snapshot lost.
 */
import { describe, expect, it } from 'vitest';
import { compareSnapshots, multisetRecall, readOurs, readPlaywright } from '../bench/snapshot-recall';

const PW = [
  '- banner:',
  '  - heading "Shop: the best" [level=1]',
  '  - navigation "Main":',
  '    - list:',
  '      - listitem:',
  '        - link "Home":',
  '          - /url: /home',
  "- 'link \"a: b\"':",
  '  - /url: /ab',
  '- paragraph: Some words here, twice twice',
  '- text: "- a dash: and a colon"',
  '- textbox "Age": "61"',
  '- textbox "Phone":',
  '  - /placeholder: +1 555 0100',
  '- heading "Second" [level=2]',
  '- cell "Blue"',
].join('\n');

const OURS = [
  'banner #a1',
  ' h1 "Shop: the best"',
  ' navigation "Main" #a2',
  '  list #a3',
  '   link "Home" #a4',
  'link "a: b" #a5',
  '"Some words here, twice"',
  '"- a dash: and a colon"',
  'spinbutton "Age" ="61" #a6',
  'textbox:tel "Phone" #a7',
  'h3 "Second"',
  '"Blue"',
].join('\n');

describe("reading Playwright's aria snapshot", () => {
  it('finds named nodes (quoted keys too), headings with levels and text, but not properties', () => {
    const p = readPlaywright(PW);
    expect(p.named).toEqual([
      { role: 'heading', name: 'Shop: the best' },
      { role: 'navigation', name: 'Main' },
      { role: 'link', name: 'Home' },
      { role: 'link', name: 'a: b' },
      { role: 'textbox', name: 'Age' },
      { role: 'textbox', name: 'Phone' },
      { role: 'heading', name: 'Second' },
      { role: 'cell', name: 'Blue' },
    ]);
    expect(p.headings).toEqual([
      { level: 1, name: 'Shop: the best' },
      { level: 2, name: 'Second' },
    ]);
    // Text and values only: no names, no /url, no /placeholder.
    expect(p.tokens).toEqual(['Some', 'words', 'here', 'twice', 'twice', 'a', 'dash', 'and', 'a', 'colon', '61']);
    expect(p.truncated).toBe(false);
  });
});

describe('reading our snapshot', () => {
  it('reads h1..h6 as headings, drops the input type from the role, and takes every string literal as text', () => {
    const o = readOurs(OURS + '\n[truncated: the snapshot holds more than 1024 bytes; zoom into a1]');
    expect(o.named.map((n) => `${n.role} ${n.name}`)).toEqual(['heading Shop: the best', 'navigation Main', 'link Home', 'link a: b', 'spinbutton Age', 'textbox Phone', 'heading Second']);
    expect(o.headings).toEqual([
      { level: 1, name: 'Shop: the best' },
      { level: 3, name: 'Second' },
    ]);
    expect(o.tokens).toContain('61');
    expect(o.tokens).toContain('Blue');
    expect(o.truncated).toBe(true);
    // Every literal, unescaped: 'Shop: the best' (14) + 'Main' (4) + … + 'Blue' (4).
    expect(o.stringBytes).toBe(['Shop: the best', 'Main', 'Home', 'a: b', 'Some words here, twice', '- a dash: and a colon', 'Age', '61', 'Phone', 'Second', 'Blue'].join('').length);
  });
});

describe('recall', () => {
  it('is a multiset recall: an item Playwright shows twice must be held twice', () => {
    expect(multisetRecall(['a', 'a', 'b'], ['a', 'b'])).toEqual({ recall: 2 / 3, held: 2, total: 3, misses: [{ item: 'a', missing: 1 }] });
    expect(multisetRecall([], ['x']).recall).toBe(1);
  });

  it('names every miss: a wrong role, a wrong heading level, a lost word', () => {
    const c = compareSnapshots(OURS, PW);
    // "Age" is a spinbutton in ours, a textbox in Playwright's: a miss of an interactive node.
    expect(c.namedInteractive.total).toBe(4);
    expect(c.namedInteractive.misses).toEqual([{ item: 'textbox "Age"', missing: 1 }]);
    expect(c.namedMissesByRole).toEqual({ textbox: 1, cell: 1 });
    // h3 against level 2.
    expect(c.headings).toMatchObject({ held: 1, total: 2, misses: [{ item: 'h2 "Second"', missing: 1 }] });
    // One "twice" lost.
    expect(c.text).toMatchObject({ held: 10, total: 11, misses: [{ item: 'twice', missing: 1 }] });
  });
});
