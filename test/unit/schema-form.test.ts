/**
 * The inspector's form generator (src/renderer/schema-form.ts) over the schemas Chromium 156 makes
 * of declarative forms (docs/browser-facts.md), imperative tools' own schemas, and hostile ones,
 * and the call history grouping (src/renderer/stores/inspector.ts historyOf).
 */
import { describe, expect, it } from 'vitest';
import { argumentsFromJson, argumentsOf, formModel, MAX_FORM_DEPTH, MAX_FORM_FIELDS } from '../../src/renderer/schema-form';
import { historyOf } from '../../src/renderer/stores/inspector';
import type { Receipt } from '../../src/shared/receipt';

/** Chromium 156's schema of the demo page `schedule` (date, a RegExp in `format` for time, select as enum + anyOf, radio, number, checkbox). */
const CHROMIUM_FORM = {
  type: 'object',
  properties: {
    day: { type: 'string', format: 'date', description: 'The day.' },
    at: { type: 'string', format: '^([01][0-9]|2[0-3]):[0-5][0-9]$' },
    room: { type: 'string', enum: ['garden', 'hall', 'bar', 'terrace', 'roof'], anyOf: [{ const: 'garden', title: 'Garden' }, { const: 'hall', title: 'Hall' }, { const: 'bar', title: 'Bar' }, { const: 'terrace', title: 'Terrace' }, { const: 'roof', title: 'Roof' }] },
    size: { type: 'string', enum: ['s', 'l'], anyOf: [{ const: 's', title: 'Small' }, { const: 'l', title: 'Large' }] },
    guests: { type: 'number', minimum: 1, maximum: 12, multipleOf: 1 },
    vegan: { type: 'boolean' },
  },
  required: ['day', 'guests'],
};

describe('formModel', () => {
  it('turns Chromium form schemas into inputs: date, a pattern hint, select, radio, whole numbers, checkbox', () => {
    const m = formModel(CHROMIUM_FORM);
    expect(m.jsonOnly).toBe(false);
    const by = Object.fromEntries(m.fields.map((f) => [f.key, f]));
    expect(by.day).toMatchObject({ kind: 'text', input: 'date', required: true, description: 'The day.' });
    expect(by.at).toMatchObject({ kind: 'text', input: 'text', hint: '^([01][0-9]|2[0-3]):[0-5][0-9]$' });
    expect(by.room).toMatchObject({ kind: 'choice', widget: 'select', options: [{ value: 'garden', label: 'Garden' }, { value: 'hall', label: 'Hall' }, { value: 'bar', label: 'Bar' }, { value: 'terrace', label: 'Terrace' }, { value: 'roof', label: 'Roof' }] });
    expect(by.size).toMatchObject({ kind: 'choice', widget: 'radio' });
    expect(by.guests).toMatchObject({ kind: 'number', integer: true, min: 1, max: 12, step: 1, required: true });
    expect(by.vegan).toMatchObject({ kind: 'boolean' });
  });
  it('objects become fieldsets (paths escaped); arrays, $ref and too-deep objects become JSON fields', () => {
    let deep: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < MAX_FORM_DEPTH + 2; i++) deep = { type: 'object', properties: { x: deep } };
    const m = formModel({ type: 'object', properties: { 'a/b~c': { type: 'object', properties: { n: { type: 'integer' } } }, tags: { type: 'array', items: { type: 'string' } }, r: { $ref: '#/$defs/r' }, deep } });
    expect(m.fields[0]).toMatchObject({ kind: 'object', path: 'a~1b~0c', fields: [{ kind: 'number', path: 'a~1b~0c/n', integer: true }] });
    expect(m.fields.slice(1, 3).map((f) => f.kind)).toEqual(['json', 'json']);
    let f = m.fields[3]!;
    let levels = 0;
    while (f.kind === 'object') {
      f = f.fields[0]!;
      levels++;
    }
    expect(f.kind).toBe('json');
    expect(levels).toBeLessThanOrEqual(MAX_FORM_DEPTH);
  });
  it('no schema ({}) gives no field and arguments {}; a non-object schema is JSON only; hostile values do not throw', () => {
    expect(formModel({})).toEqual({ fields: [], omitted: 0, jsonOnly: false });
    expect(argumentsOf(formModel({}).fields, {})).toEqual({ ok: true, value: {} });
    expect(formModel({ type: 'string' }).jsonOnly).toBe(true);
    for (const s of [null, 'x', 5, [], { type: 'object', properties: null }, { type: 'object', properties: { a: null, b: 7, c: { enum: [] } } }]) expect(() => formModel(s)).not.toThrow();
    const many = Object.fromEntries(Array.from({ length: MAX_FORM_FIELDS + 5 }, (_, i) => [`p${i}`, { type: 'string' }]));
    expect(formModel({ type: 'object', properties: many })).toMatchObject({ omitted: 5 });
  });
});

describe('argumentsOf', () => {
  it('types the values, leaves empty optional fields out, and names the required ones missing', () => {
    const m = formModel(CHROMIUM_FORM);
    expect(argumentsOf(m.fields, { day: '2026-12-24', guests: '4', room: '1', size: '0', vegan: true, at: '' })).toEqual({
      ok: true,
      value: { day: '2026-12-24', room: 'hall', size: 's', guests: 4, vegan: true },
    });
    const missing = argumentsOf(m.fields, { guests: '2.5' });
    expect(missing).toEqual({ ok: false, problems: [{ path: 'day', message: 'day is required.' }, { path: 'guests', message: 'guests must be a whole number.' }] });
  });
  it('keeps a property named __proto__ as data, parses JSON fields, and refuses bad JSON', () => {
    const m = formModel({ type: 'object', properties: { ['__proto__']: { type: 'string' }, list: { type: 'array' } } });
    const r = argumentsOf(m.fields, { ['__proto__']: 'x', list: '[1,2]' });
    expect(r.ok).toBe(true);
    if (r.ok) {
      expect(Object.keys(r.value)).toEqual(['__proto__', 'list']);
      expect(Object.getPrototypeOf(r.value)).toBe(Object.prototype);
      expect(r.value.list).toEqual([1, 2]);
    }
    expect(argumentsOf(m.fields, { list: '[1,' })).toMatchObject({ ok: false, problems: [{ path: 'list' }] });
  });
  it('the JSON editor takes an object only', () => {
    expect(argumentsFromJson('{"a":1}')).toEqual({ ok: true, value: { a: 1 } });
    expect(argumentsFromJson('')).toEqual({ ok: true, value: {} });
    expect(argumentsFromJson('[1]')).toMatchObject({ ok: false });
    expect(argumentsFromJson('{')).toMatchObject({ ok: false });
  });
});

describe('historyOf', () => {
  const r = (seq: number, requestId: string, event: Receipt['event'], actor: Receipt['actor'], extra: Partial<Receipt> = {}): Receipt => ({
    seq, id: `r${seq}`, time: 1000 + seq, requestId, event, faculty: 'webmcp-invoke', origin: 'o', tabId: 1, frameId: 0, documentId: 'D', toolName: 't', descriptorHash: null, argumentsHash: null, actor, detail: null, operation: 'invoke', subjectHash: null, prevHash: '', hash: '', ...extra,
  });
  it('groups receipts into requests, newest first, saying who asked and how each stands', () => {
    const person = { kind: 'person' as const };
    const agent = { kind: 'agent' as const, name: 'Claude' };
    const h = historyOf([
      r(5, 'B', 'succeeded', agent, { descriptorHash: 'h2' }),
      r(1, 'A', 'requested', person),
      r(2, 'A', 'approved', person, { descriptorHash: 'h1' }),
      r(3, 'B', 'requested', agent),
      r(4, 'A', 'denied', person),
      r(6, null as unknown as string, 'paired', person),
    ]);
    expect(h.map((e) => [e.requestId, e.who, e.byPerson, e.lastEvent, e.descriptorHash, e.receipts])).toEqual([
      ['B', 'Claude', false, 'succeeded', 'h2', 2],
      ['A', 'You (inspector)', true, 'denied', 'h1', 3],
    ]);
  });
});
