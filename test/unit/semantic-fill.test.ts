/**
 * page_fill's contract and the console's checks before the person is asked (issue 10 item 6, "One
 * approval for a form fill"; src/shared/semantic-fill.ts, src/main/core/faculties/semantic-fill.ts,
 * the extension's `semantic` faculty for operation fill): the subject and argument shapes, the
 * subject hash over every field (never equal to one field's own hash), fields of one form of one
 * document each once, and the readback that needs every field to hold its value.
 */
import { describe, expect, it } from 'vitest';
import { FILL_MAX_FIELDS, FILL_TEXT_TOTAL_MAX, fillArgumentsProblem, fillSubjectHash, fillSubjectProblem } from '../../src/shared/semantic-fill';
import { fingerprintHash, TYPE_TEXT_MAX, type Fingerprint, type ReadbackObservations } from '../../src/shared/semantic-target';
import { fillReadbackOf, semanticFillFaculty } from '../../src/main/core/faculties/semantic-fill';
import type { ActionValue } from '../../src/main/core/broker/faculty';
import { semantic } from '../../extension/src/background/faculties/semantic';

const fp = (name: string, form: string | null = 'Booking', role = 'textbox'): Fingerprint => ({ role, name, ...(form !== null ? { form } : {}), ancestors: [], nth: 0 });

describe('the fill contract', () => {
  it('takes {fields: [{fingerprint, ref}]} (1 to 32, each once) and {values} one per field within bounds', () => {
    expect(fillSubjectProblem({ fields: [{ fingerprint: fp('A'), ref: 'a1' }] })).toBeNull();
    expect(fillSubjectProblem({ fields: [] })).toMatch(/1 to 32/);
    expect(fillSubjectProblem({ fields: Array.from({ length: FILL_MAX_FIELDS + 1 }, (_, i) => ({ fingerprint: fp(`F${i}`), ref: `a${i + 1}` })) })).toMatch(/1 to 32/);
    expect(fillSubjectProblem({ fields: [{ fingerprint: fp('A'), ref: 'a1' }, { fingerprint: fp('B'), ref: 'a1' }] })).toMatch(/twice/);
    expect(fillSubjectProblem({ fields: [{ fingerprint: fp('A') }] })).toMatch(/\{fingerprint, ref\}/);
    expect(fillSubjectProblem({ fields: [{ fingerprint: { role: 'textbox' }, ref: 'a1' }] })).not.toBeNull();
    expect(fillSubjectProblem({ fingerprint: fp('A'), ref: 'a1' })).toMatch(/\{fields\}/);
    expect(fillArgumentsProblem({ values: ['x', ''] }, 2)).toBeNull();
    expect(fillArgumentsProblem({ values: ['x'] }, 2)).toMatch(/one text per field/);
    expect(fillArgumentsProblem({ values: ['x', 3] }, 2)).toMatch(/string/);
    expect(fillArgumentsProblem({ values: ['x'.repeat(TYPE_TEXT_MAX + 1)] }, 1)).toMatch(/at most/);
    expect(fillArgumentsProblem({ values: Array.from({ length: 7 }, () => 'x'.repeat(TYPE_TEXT_MAX)) }, 7)).toMatch(new RegExp(`${FILL_TEXT_TOTAL_MAX}`));
    expect(fillArgumentsProblem({ values: ['x'], submit: true }, 1)).toMatch(/exactly \{values\}/);
  });

  it('the subject hash binds every field and their order, and is never one field\'s own hash', async () => {
    const a = fp('A');
    const b = fp('B');
    const h = await fillSubjectHash([a, b]);
    expect(h).toMatch(/^[0-9a-f]{64}$/);
    expect(await fillSubjectHash([b, a])).not.toBe(h);
    expect(await fillSubjectHash([a])).not.toBe(await fingerprintHash(a));
    // The extension computes the same hash from the link subject.
    expect(await semantic().subjectHash({ fields: [{ fingerprint: a, ref: 'a1' }, { fingerprint: b, ref: 'a2' }] })).toBe(h);
  });

  it('the extension takes fill only with a fill subject and its values, and the other operations never with one', () => {
    const ext = semantic();
    const fields = [{ fingerprint: fp('A'), ref: 'a1' }];
    expect(ext.checkRequest('fill', { fields }, { values: ['x'] })).toBeNull();
    expect(ext.checkRequest('fill', { fields }, { values: ['x', 'y'] })).not.toBeNull();
    expect(ext.checkRequest('fill', { fingerprint: fp('A'), ref: 'a1' }, { values: ['x'] })).not.toBeNull();
    expect(ext.checkRequest('type', { fields }, { text: 'x' })).not.toBeNull();
    expect(ext.checkRequest('click', { fields }, {})).not.toBeNull();
  });
});

describe('the console side of page_fill', () => {
  const resolved = (name: string, o: { form?: string; role?: string; frameId?: number; documentId?: string; ref?: string; blocked?: string } = {}) => ({
    frameId: o.frameId ?? 0, documentId: o.documentId ?? 'DOC', origin: 'https://a.example', tabUrl: 'https://a.example/', frameUrl: 'https://a.example/', urlHash: 'a'.repeat(64),
    ref: o.ref ?? `r${name.length}${name.charCodeAt(0)}`.replace(/[^a-z0-9]/g, ''), fingerprint: fp(name, 'form' in o ? (o.form ?? null) : 'Booking', o.role), blocked: o.blocked ?? null, narrower: null,
  });
  const f = semanticFillFaculty();
  const envOf = (answers: Record<string, unknown>) => {
    const asked: string[] = [];
    const env = { read: async (_f: string, _o: string, _t: number, args: { ref?: string }) => (asked.push(args.ref as string), { ok: true as const, value: answers[args.ref as string] }) };
    return { env: env as unknown as Parameters<typeof f.resolveSubject>[1], asked };
  };
  const req = (refs: string[]) => ({ tabId: 1, fields: refs.map((ref) => ({ ref })), arguments: { values: refs.map(() => 'x') } });

  it('binds every field: the subject lists each with its text, the link subject each fingerprint and ref', async () => {
    const { env } = envOf({ a1: resolved('Name', { ref: 'a1' }), a2: resolved('Email', { ref: 'a2' }) });
    const r = await f.resolveSubject({ tabId: 1, fields: [{ ref: 'a1' }, { ref: 'a2' }], arguments: { values: ['Ada', 'ada@x.org'] } }, env);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value.subjectHash).toBe(await fillSubjectHash([fp('Name'), fp('Email')]));
    expect(r.value.subject).toMatchObject({ type: 'semantic-fill', formName: 'Booking', fields: [{ ref: 'a1', text: 'Ada' }, { ref: 'a2', text: 'ada@x.org' }], trustedInput: false });
    expect(r.value.linkSubject).toEqual({ fields: [{ fingerprint: fp('Name'), ref: 'a1' }, { fingerprint: fp('Email'), ref: 'a2' }] });
    expect(f.validate(r.value, { values: ['Ada', 'ada@x.org'] }, env)).toMatchObject({ ok: true });
    expect(f.validate(r.value, { values: ['Ada'] }, env)).toMatchObject({ ok: false, error: { code: 'invalid-arguments' } });
  });

  it('refuses before the person is asked: another form, another document, a field twice, a blocked field, a field that takes no value', async () => {
    const cases: Array<[string, Record<string, unknown>, string[], string, RegExp]> = [
      ['another form', { a1: resolved('Name', { ref: 'a1' }), a2: resolved('Q', { ref: 'a2', form: 'Search' }) }, ['a1', 'a2'], 'invalid-arguments', /Field 2 is in another form/],
      ['outside any form beside a form field', { a1: resolved('Name', { ref: 'a1' }), a2: resolved('Q', { ref: 'a2', form: undefined }) }, ['a1', 'a2'], 'invalid-arguments', /another form/],
      ['another document', { a1: resolved('Name', { ref: 'a1' }), a2: resolved('Email', { ref: 'a2', frameId: 3, documentId: 'OTHER' }) }, ['a1', 'a2'], 'invalid-arguments', /another document/],
      ['a field twice', { a1: resolved('Name', { ref: 'a1' }) }, ['a1', 'a1'], 'invalid-arguments', /listed before/],
      ['a blocked field', { a1: resolved('Name', { ref: 'a1' }), a2: resolved('Email', { ref: 'a2', blocked: 'password-form' }) }, ['a1', 'a2'], 'target-blocked', /Field 2 is a blocked surface \(password-form\)/],
      ['a checkbox', { a1: resolved('Agree', { ref: 'a1', role: 'checkbox' }) }, ['a1'], 'target-unsupported', /The field is a checkbox/],
    ];
    for (const [what, answers, refs, code, message] of cases) {
      const { env } = envOf(answers);
      const r = await f.resolveSubject(req(refs), env);
      expect(r, what).toMatchObject({ ok: false, error: { code } });
      expect(!r.ok && r.error.message, what).toMatch(message);
    }
    const { env } = envOf({});
    expect(await f.resolveSubject({ tabId: 1, fields: [], arguments: { values: [] } }, env)).toMatchObject({ ok: false, error: { code: 'invalid-arguments' } });
    expect(await f.resolveSubject({ tabId: 1, fields: [{ ref: 'a1', fingerprint: { role: 'textbox' } }], arguments: { values: ['x'] } }, env)).toMatchObject({ ok: false, error: { code: 'invalid-arguments' } });
  });

  it('the readback is confirmed only when every field holds its value; one field that does not is a mismatch naming it', () => {
    const NONE: ReadbackObservations = { found: true, urlChanged: false, documentChanged: false, focused: false, focusMoved: false, editable: true, stateChanged: [], domChangesNear: 0, inViewport: true };
    const subject = { type: 'semantic-fill', fields: [{}, {}, {}] };
    const value = (observations: unknown, trustedInput: unknown = false) => ({ outcome: 'succeeded', result: JSON.stringify({ trustedInput, readback: { observations } }), resolved: { subject } }) as unknown as ActionValue;
    expect(fillReadbackOf(value([{ ...NONE, valueSet: true }, { ...NONE, valueSet: true }, { ...NONE, valueSet: true }]))).toMatchObject({ event: 'readback-confirmed', detail: { effect: 'values-set:3' } });
    const one = fillReadbackOf(value([{ ...NONE, valueSet: true }, { ...NONE, valueSet: false }, { ...NONE, valueSet: true }]));
    expect(one).toMatchObject({ event: 'readback-mismatch', detail: { fieldsNotHolding: [2] } });
    expect(one.message).toContain('field 2');
    expect(fillReadbackOf(value([{ ...NONE, valueSet: true }, { ...NONE, valueSet: true }])).event).toBe('readback-mismatch'); // one observation missing
    expect(fillReadbackOf(value([{ ...NONE, valueSet: true }, { ...NONE, valueSet: true }, { ...NONE, found: false, valueSet: true }])).event).toBe('readback-mismatch');
    expect(fillReadbackOf(value([{ ...NONE, valueSet: true }, { ...NONE, valueSet: true }, { ...NONE, valueSet: true }], true)).event).toBe('readback-mismatch');
  });
});
