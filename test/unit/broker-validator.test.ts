/** Argument validation against hostile page schemas (src/main/core/broker/validator.ts). */
import { describe, expect, it } from 'vitest';
import { ArgumentValidator } from '../../src/main/core/broker/validator';

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
    const t = Date.now();
    const r = v.validate('r', { type: 'object', properties: { s: { type: 'string', pattern: '^(a+)+$' } } }, { s: `${'a'.repeat(40)}!` });
    expect(r).toMatchObject({ ok: false, code: 'schema-rejected' });
    expect(Date.now() - t).toBeLessThan(2_000);
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
