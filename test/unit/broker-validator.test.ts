/** Argument validation against hostile page schemas (src/main/core/broker/validator.ts). */
import { describe, expect, it } from 'vitest';
import { ArgumentValidator, MAX_BUDGET_ATTEMPTS, withBudget } from '../../src/main/core/broker/validator';

describe('ArgumentValidator', () => {
  it('accepts the dialects MCP pages use and refuses others', () => {
    const v = new ArgumentValidator();
    const body = { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] };
    expect(v.validate('a', body, { n: 1 })).toEqual({ ok: true, dialect: 'draft-2020-12' });
    expect(v.validate('b', { $schema: 'http://json-schema.org/draft-07/schema#', ...body }, { n: 1 })).toEqual({ ok: true, dialect: 'draft-07' });
    expect(v.validate('c', { $schema: 'https://json-schema.org/draft/2019-09/schema', ...body }, { n: 1 })).toMatchObject({ ok: true });
    expect(v.validate('d', { $schema: 'https://evil.example/meta', ...body }, { n: 1 })).toMatchObject({ ok: false, code: 'schema-rejected' });
  });

  it('reports every failing path (allErrors), never coerces', () => {
    const v = new ArgumentValidator();
    const r = v.validate('h', { type: 'object', properties: { a: { type: 'number' }, d: { type: 'string', format: 'date' } }, required: ['a', 'b'], additionalProperties: false }, { a: '1', d: 'x', z: 1 });
    expect(r.ok).toBe(false);
    if (r.ok || r.code !== 'invalid-arguments') throw new Error('expected invalid-arguments');
    expect(r.issues.map((i) => i.instancePath).sort()).toEqual(['', '', '/a', '/d']);
  });

  it('interrupts a catastrophic pattern instead of freezing', () => {
    const v = new ArgumentValidator({ budgetMs: 100 });
    const r = v.validate('r', { type: 'object', properties: { s: { type: 'string', pattern: '^(a+)+$' } } }, { s: `${'a'.repeat(40)}!` });
    expect(r).toMatchObject({ ok: false, code: 'schema-rejected', message: expect.stringContaining('longer than 100 ms') });
  });

  it('a budget run out by the clock, not the work (the thread was not running), is tried again; one run out by the work is not', () => {
    // Atomics.wait blocks the thread without using the CPU: what a busy machine does to a good schema.
    const sleep = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
    let calls = 0;
    const descheduledOnce = withBudget(() => {
      calls++;
      if (calls === 1) sleep(150);
      return 'compiled';
    }, 50);
    expect(descheduledOnce).toEqual({ ok: true, value: 'compiled' });
    expect(calls).toBe(2);
    // Always descheduled: bounded, then timed out.
    calls = 0;
    const always = withBudget(() => {
      calls++;
      sleep(150);
      return 'never';
    }, 50);
    expect(always).toMatchObject({ ok: false, timedOut: true });
    expect(calls).toBe(MAX_BUDGET_ATTEMPTS);
    // A hostile pattern spends its budget on the CPU: refused (after one attempt on a quiet
    // machine; a loaded one may deschedule even this, which costs at most MAX_BUDGET_ATTEMPTS budgets).
    calls = 0;
    const cpuBound = withBudget(() => {
      calls++;
      return /^(a+)+$/.test(`${'a'.repeat(40)}!`);
    }, 50);
    expect(cpuBound).toMatchObject({ ok: false, timedOut: true });
    expect(calls).toBeGreaterThanOrEqual(1);
    expect(calls).toBeLessThanOrEqual(MAX_BUDGET_ATTEMPTS);
  });

  // Chromium 156's schema for <input type=time|datetime-local|month|week|color> puts a RegExp in `format`.
  const TIME = '^([01][0-9]|2[0-3]):[0-5][0-9]$';
  const COLOR = '^#[0-9a-fA-F]{6}$';

  it("Chromium's regex-valued formats are accepted and enforced as patterns; known formats are still checked", () => {
    const v = new ArgumentValidator();
    const schema = {
      type: 'object',
      properties: { at: { type: 'string', format: TIME }, tint: { type: 'string', format: COLOR }, mail: { type: 'string', format: 'email' } },
      required: ['at'],
    };
    expect(v.schemaProblem('t', schema)).toBeNull();
    expect(v.validate('t', schema, { at: '18:30', tint: '#a0b1c2', mail: 'a@b.example' })).toMatchObject({ ok: true });
    const bad = v.validate('t', schema, { at: '25:00', tint: 'red', mail: 'nope' });
    if (bad.ok || bad.code !== 'invalid-arguments') throw new Error(`expected invalid-arguments, got ${JSON.stringify(bad)}`);
    expect(bad.issues.map((i) => i.instancePath).sort()).toEqual(['/at', '/mail', '/tint']);
  });

  it('any other unknown format is an annotation (JSON Schema: it must not fail validation), also in $defs', () => {
    const v = new ArgumentValidator();
    const schema = { type: 'object', properties: { a: { type: 'string', format: 'x-house-style' }, b: { $ref: '#/$defs/b' } }, $defs: { b: { type: 'string', format: 'no-anchors.*' } } };
    expect(v.schemaProblem('u', schema)).toBeNull();
    expect(v.validate('u', schema, { a: 'anything', b: 'at all' })).toMatchObject({ ok: true });
    // A format key inside data (a default) changes nothing.
    expect(v.validate('u2', { type: 'object', default: { format: '^x$' }, properties: { a: { type: 'string' } } }, { a: 'y' })).toMatchObject({ ok: true });
  });

  it('a hostile regex in format is interrupted like a pattern, and a regex that does not compile is an annotation', () => {
    const v = new ArgumentValidator({ budgetMs: 100 });
    const evil = { type: 'object', properties: { s: { type: 'string', format: '^(a+)+$' } } };
    expect(v.validate('e', evil, { s: `${'a'.repeat(40)}!` })).toMatchObject({ ok: false, code: 'schema-rejected' });
    const broken = { type: 'object', properties: { s: { type: 'string', format: '^(unclosed$' } } };
    expect(v.validate('b', broken, { s: 'x' })).toMatchObject({ ok: true });
  });

  it('schemaProblem gives the refusal a call would get, without arguments', () => {
    const v = new ArgumentValidator();
    expect(v.schemaProblem('r', { type: 'object', properties: { a: { $ref: '#/$defs/missing' } } })).toMatchObject({ message: expect.stringMatching(/cannot be compiled/) });
    // The page's words (here an unknown keyword's name) are kept apart from the console's.
    const unknown = v.schemaProblem('k', { type: 'object', properties: { a: { type: 'string', frobnicate: 1 } } });
    expect(unknown?.pageText).toMatch(/unknown keyword.*frobnicate/);
    expect(unknown?.message).not.toMatch(/frobnicate/);
    expect(v.schemaProblem('ok', { type: 'object' })).toBeNull();
  });

  it('isolates pages: the same $id in two schemas does not collide; boolean and non-object schemas are refused', () => {
    const v = new ArgumentValidator();
    const s = { $id: 'https://x.example/s', type: 'object' };
    expect(v.validate('1', s, {}).ok).toBe(true);
    expect(v.validate('2', { ...s, required: ['q'] }, {}).ok).toBe(false);
    expect(v.validate('3', true, {})).toMatchObject({ code: 'schema-rejected' });
    expect(v.validate('4', [1], {})).toMatchObject({ code: 'schema-rejected' });
  });

  it('caches by descriptorHash with a bound', () => {
    const v = new ArgumentValidator({ maxCached: 3 });
    for (let i = 0; i < 10; i++) v.validate(`h${i}`, { type: 'object' }, {});
    expect(v.size).toBe(3);
  });
});
