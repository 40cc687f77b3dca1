/**
 * Scores src/shared/redact.ts on the held-out half of the redaction corpus
 * (test/vectors/redaction-corpus, README there): the rules were tuned on the
 * dev half only, and this half was scored once, at the end (issue 8 item 6).
 *
 * - false positive: an ordinary item that `redactText` changed;
 * - false negative: a positive item where any of its `secrets` survives.
 *
 * The rates asserted are the ones reported in docs/trust-rules.md (row 11):
 * a rule change that loses precision or recall on items it was not tuned on
 * fails here. Rows are counted per category so a regression names its category.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { boundText } from '../../src/shared/bounds';
import { redactText } from '../../src/shared/redact';

interface Item {
  id: string;
  category: string;
  split: 'dev' | 'heldout';
  text: string;
  secrets?: string[];
}

function read(file: string): Item[] {
  const path = fileURLToPath(new URL(`../vectors/redaction-corpus/${file}`, import.meta.url));
  return readFileSync(path, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Item);
}

const ordinary = read('ordinary.jsonl');
const positives = read('positives.jsonl');

/** Held-out results as reported: [category, false positives, items]. */
const HELD_OUT_FALSE_POSITIVES: [string, number, number][] = [
  ['url', 0, 40],
  ['uuid', 0, 40],
  ['hash', 0, 40],
  ['base64-image', 0, 40],
  ['order-number', 0, 40],
  ['prose', 0, 40],
];
/** Held-out false negatives as reported: secrets left, of items. */
const HELD_OUT_FALSE_NEGATIVES = { left: 0, items: 80 };

const changed = (x: Item) => redactText(x.text).value !== x.text;
const leaks = (x: Item) => {
  const out = redactText(x.text).value;
  return (x.secrets ?? []).some((s) => out.includes(s));
};

describe('redaction corpus: the held-out half', () => {
  it('has the documented shape: 80 items per ordinary category, 160 positives, split evenly', () => {
    for (const [category] of HELD_OUT_FALSE_POSITIVES) {
      const items = ordinary.filter((x) => x.category === category);
      expect(items.length, category).toBe(80);
      expect(items.filter((x) => x.split === 'heldout').length, category).toBe(40);
    }
    expect(positives.length).toBe(160);
    expect(positives.every((x) => (x.secrets ?? []).length > 0)).toBe(true);
  });

  it.each(HELD_OUT_FALSE_POSITIVES)('%s: at most %i of %i ordinary items changed', (category, allowed, total) => {
    const items = ordinary.filter((x) => x.category === category && x.split === 'heldout');
    expect(items.length).toBe(total);
    const fp = items.filter(changed).map((x) => x.id);
    expect(fp.length, `changed: ${fp.join(', ')}`).toBeLessThanOrEqual(allowed);
  });

  it(`secrets: at most ${HELD_OUT_FALSE_NEGATIVES.left} of ${HELD_OUT_FALSE_NEGATIVES.items} items leave one`, () => {
    const items = positives.filter((x) => x.split === 'heldout');
    expect(items.length).toBe(HELD_OUT_FALSE_NEGATIVES.items);
    const fn = items.filter(leaks).map((x) => x.id);
    expect(fn.length, `left: ${fn.join(', ')}`).toBeLessThanOrEqual(HELD_OUT_FALSE_NEGATIVES.left);
  });

  it('the same holds for every held-out item inside one large result (structural path, past 512 KiB)', () => {
    const held = [...ordinary, ...positives].filter((x) => x.split === 'heldout');
    const padding = 'Delivered to the front door. '.repeat(20_000); // ~580 KiB before the items
    const doc = JSON.stringify({ padding, items: held.map((x) => ({ id: x.id, text: x.text })) });
    const out = redactText(doc);
    const back = JSON.parse(out.value) as { padding: string; items: Array<{ id: string; text: string }> };
    expect(back.padding).toBe(padding);
    const byId = new Map(back.items.map((x) => [x.id, x.text]));
    for (const x of held) {
      const t = byId.get(x.id) ?? '';
      if (x.secrets) for (const s of x.secrets) expect(t.includes(s), x.id).toBe(false);
      else expect(t, x.id).toBe(x.text);
    }
    // And through the one bounding both sides use: nothing of a secret in the part the agent sees.
    const bounded = boundText(doc).text;
    for (const x of held) for (const s of x.secrets ?? []) expect(bounded.includes(s), x.id).toBe(false);
  });
});
