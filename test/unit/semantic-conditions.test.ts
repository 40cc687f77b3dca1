/**
 * The conditions of page_wait and page_verify (src/shared/semantic-conditions.ts)
 * and the reading of snapshot lines they match over (src/shared/snapshot-lines.ts):
 * exactly one condition; targets required where they must be; needles the
 * redactor hides and values the view redacts refused, never answered (reads are
 * no oracle); text, state, value and URL evaluation with evidence. The page
 * side in real Chromium: test/e2e/page-reads.spec.ts.
 */
import { describe, expect, it } from 'vitest';
import { evaluateCondition, pickCondition, type ConditionFacts, type TargetFacts } from '../../src/shared/semantic-conditions';
import { decodeLine, plainPieces, viewStrings } from '../../src/shared/snapshot-lines';
import { formatLine, quote } from '../../src/shared/snapshot';

const target = (t: Partial<TargetFacts> = {}): TargetFacts => ({ present: true, visible: true, states: [], valueRedacted: false, text: [], ...t });
const facts = (f: Partial<ConditionFacts> = {}): ConditionFacts => ({ targets: [], targeted: false, text: [], viewCut: false, url: 'https://a.example/', ...f });

describe('pickCondition', () => {
  it('takes exactly one condition, and a target for state and value conditions', () => {
    expect(pickCondition({}, false, false)).toMatchObject({ ok: false, message: expect.stringMatching(/exactly one condition/) });
    expect(pickCondition({ text: 'a', urlContains: 'b' }, false, false)).toMatchObject({ ok: false, message: expect.stringMatching(/got 2/) });
    expect(pickCondition({ state: 'checked' }, false, false)).toMatchObject({ ok: false, message: expect.stringMatching(/needs a target/) });
    expect(pickCondition({ valueEquals: 'x' }, false, false)).toMatchObject({ ok: false, message: expect.stringMatching(/needs a target/) });
    expect(pickCondition({ state: 'sparkly' }, true, false)).toMatchObject({ ok: false, message: expect.stringMatching(/state must be one of/) });
    expect(pickCondition({ text: '   ' }, false, false)).toMatchObject({ ok: false });
    expect(pickCondition({ state: 'checked' }, true, false)).toEqual({ ok: true, condition: { state: 'checked' } });
    expect(pickCondition({ text: 'Saved' }, false, true)).toEqual({ ok: true, condition: { text: 'Saved' } });
  });
  it('urlChanged is for waits only', () => {
    expect(pickCondition({ urlChanged: true }, false, true)).toEqual({ ok: true, condition: { urlChanged: true } });
    expect(pickCondition({ urlChanged: true }, false, false)).toMatchObject({ ok: false, message: expect.stringMatching(/wait condition/) });
  });
  it('refuses a needle the redactor hides (condition-redacted), for text, value and URL conditions alike', () => {
    for (const k of ['text', 'textGone', 'valueEquals', 'valueContains', 'urlContains']) {
      for (const secret of ['4111 1111 1111 1111', 'ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8', 'xx [redacted:card] yy']) {
        expect(pickCondition({ [k]: secret }, true, true), `${k} ${secret}`).toMatchObject({ ok: false, refusal: 'condition-redacted' });
      }
    }
  });
});

describe('evaluateCondition', () => {
  it('text and textGone over the scope, whitespace collapsed; absence over a cut view is not claimed', () => {
    const f = facts({ text: ['Welcome', 'Order   saved at 10:02'] });
    expect(evaluateCondition({ text: 'Order saved' }, f)).toEqual({ kind: 'met', evidence: { found: 'Order   saved at 10:02' } });
    expect(evaluateCondition({ text: 'order saved' }, f).kind).toBe('unmet');
    expect(evaluateCondition({ textGone: 'Loading' }, f).kind).toBe('met');
    expect(evaluateCondition({ textGone: 'Welcome' }, f)).toEqual({ kind: 'unmet', evidence: { stillFound: 'Welcome' } });
    expect(evaluateCondition({ textGone: 'Loading' }, facts({ text: ['x'], viewCut: true }))).toEqual({ kind: 'unmet', evidence: { found: null, viewCut: true } });
  });
  it('text within targets: any visible target holding it', () => {
    const f = facts({ targeted: true, targets: [target({ text: ['a'] }), target({ text: ['Total 42'] }), target({ visible: false, text: ['hidden 7'] })] });
    expect(evaluateCondition({ text: 'Total' }, f).kind).toBe('met');
    expect(evaluateCondition({ text: 'hidden' }, f).kind).toBe('unmet');
    expect(evaluateCondition({ text: 'Total' }, facts({ targeted: true, targets: [] })).kind).toBe('unmet');
  });
  it('states of one target; present/absent/visible/hidden count a selector\'s matches; several matches are ambiguous for the others', () => {
    const one = (t: Partial<TargetFacts>) => facts({ targeted: true, targets: [target(t)] });
    expect(evaluateCondition({ state: 'checked' }, one({ states: ['checked'] })).kind).toBe('met');
    expect(evaluateCondition({ state: 'unchecked' }, one({ states: ['checked'] })).kind).toBe('unmet');
    expect(evaluateCondition({ state: 'enabled' }, one({ states: ['disabled'] })).kind).toBe('unmet');
    expect(evaluateCondition({ state: 'disabled' }, one({ states: ['disabled'] })).kind).toBe('met');
    expect(evaluateCondition({ state: 'focused' }, one({ states: ['focused'] })).kind).toBe('met');
    expect(evaluateCondition({ state: 'hidden' }, one({ visible: false })).kind).toBe('met');
    expect(evaluateCondition({ state: 'absent' }, one({ present: false })).kind).toBe('met');
    expect(evaluateCondition({ state: 'value-present' }, one({ value: 'Ada' })).kind).toBe('met');
    expect(evaluateCondition({ state: 'value-empty' }, one({ value: '' })).kind).toBe('met');
    expect(evaluateCondition({ state: 'present' }, facts({ targeted: true, targets: [] }))).toEqual({ kind: 'unmet', evidence: { matches: 0 } });
    expect(evaluateCondition({ state: 'absent' }, facts({ targeted: true, targets: [] })).kind).toBe('met');
    const two = facts({ targeted: true, targets: [target({ states: ['checked'] }), target()] });
    expect(evaluateCondition({ state: 'visible' }, two)).toEqual({ kind: 'met', evidence: { matches: 2 } });
    expect(evaluateCondition({ state: 'checked' }, two)).toMatchObject({ kind: 'refused', code: 'target-ambiguous' });
    expect(evaluateCondition({ state: 'checked' }, facts({ targeted: true, targets: [] })).kind).toBe('unmet');
  });
  it('value conditions over the view value; a value the view redacts is refused, never true or false', () => {
    const f = (t: Partial<TargetFacts>) => facts({ targeted: true, targets: [target(t)] });
    expect(evaluateCondition({ valueEquals: 'Ada  Lovelace' }, f({ value: 'Ada Lovelace' }))).toEqual({ kind: 'met', evidence: { value: 'Ada Lovelace' } });
    expect(evaluateCondition({ valueContains: 'Love' }, f({ value: 'Ada Lovelace' })).kind).toBe('met');
    expect(evaluateCondition({ valueEquals: 'Ada' }, f({ value: 'Ada Lovelace' })).kind).toBe('unmet');
    for (const c of [{ valueEquals: 'a' }, { valueContains: '4' }]) {
      const e = evaluateCondition(c, f({ value: 'card [redacted:card]', valueRedacted: true }));
      expect(e).toMatchObject({ kind: 'refused', code: 'value-redacted' });
      expect(e).not.toHaveProperty('evidence');
    }
    expect(evaluateCondition({ valueEquals: 'x' }, f({ present: false })).kind).toBe('unmet');
  });
  it('URL conditions', () => {
    expect(evaluateCondition({ urlChanged: true }, facts({ url: 'https://a.example/#/step2', startUrl: 'https://a.example/' }))).toEqual({
      kind: 'met', evidence: { url: 'https://a.example/#/step2', startUrl: 'https://a.example/' },
    });
    expect(evaluateCondition({ urlChanged: true }, facts({ startUrl: 'https://a.example/' })).kind).toBe('unmet');
    expect(evaluateCondition({ urlContains: '/cart' }, facts({ url: 'https://a.example/cart?x=1' })).kind).toBe('met');
  });
});

describe('snapshot lines read back', () => {
  it('decodes element and text lines as formatLine and quote write them', () => {
    const line = formatLine({ role: 'textbox', type: 'email', name: 'E-mail <x> "q"', value: 'a@b.example', states: ['required', 'focused'], ref: 'ab12' });
    expect(decodeLine(`  ${line}`)).toEqual({ kind: 'node', depth: 2, role: 'textbox', type: 'email', name: 'E-mail <x> "q"', value: 'a@b.example', states: ['required', 'focused'], ref: 'ab12' });
    expect(decodeLine(' ' + quote('Hello\n"world" <b>'))).toEqual({ kind: 'text', depth: 1, text: 'Hello\n"world" <b>' });
    expect(decodeLine(formatLine({ role: 'region', states: ['blocked', 'private'] }))).toEqual({ kind: 'node', depth: 0, role: 'region', states: ['blocked', 'private'] });
    expect(decodeLine('"unterminated')).toBeNull();
    expect(decodeLine('[truncated: …]')).toBeNull();
  });
  it('plainPieces and viewStrings give the text, names and values, never refs or states', () => {
    const text = [formatLine({ role: 'h1', name: 'Cart' }), ` ${quote('2 items')}`, formatLine({ role: 'textbox', name: 'Coupon', value: 'SPRING', ref: 'a3' }), formatLine({ role: 'button', name: 'Pay', states: ['disabled'], ref: 'a4' }), formatLine({ role: 'form', ref: 'a5' })].join('\n');
    expect(plainPieces(text)).toEqual(['h1 Cart', '2 items', 'textbox Coupon = SPRING', 'button Pay']);
    expect(viewStrings(text)).toEqual(['Cart', '2 items', 'Coupon', 'SPRING', 'Pay']);
  });
});

describe('review finding 7', () => {
  it('absent or hidden over a cut scan is never claimed (a cut selector scan found nothing only in the part it saw)', () => {
    expect(evaluateCondition({ state: 'absent' }, facts({ targeted: true, targets: [], viewCut: true }))).toEqual({ kind: 'unmet', evidence: { matches: 0, viewCut: true } });
    expect(evaluateCondition({ state: 'hidden' }, facts({ targeted: true, targets: [], viewCut: true })).kind).toBe('unmet');
    expect(evaluateCondition({ state: 'present' }, facts({ targeted: true, targets: [], viewCut: true })).kind).toBe('unmet');
  });

  it('a line whose role token is unusual (role="x_y", "my.widget") still gives its name and value to text conditions', () => {
    const line = formatLine({ role: 'x_y', name: 'Order shipped', value: 'soon' });
    expect(decodeLine(line)).toMatchObject({ kind: 'node', role: 'x_y', name: 'Order shipped', value: 'soon' });
    expect(viewStrings(`${line}\n ${formatLine({ role: 'my.widget', name: 'Loading' })}`)).toEqual(['Order shipped', 'soon', 'Loading']);
    // So textGone is not met while the name still shows it.
    expect(evaluateCondition({ textGone: 'Loading' }, facts({ text: viewStrings(formatLine({ role: 'my.widget', name: 'Loading' })) })).kind).toBe('unmet');
  });
});
