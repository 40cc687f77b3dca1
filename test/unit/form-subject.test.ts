/**
 * The form subject (issue 8 item 4; src/shared/form.ts and the console side of webmcp-invoke):
 * the effective values are the arguments merged over every other submitted field; the subject
 * hash binds them with the action's hash, the method and toolautosubmit; the console reads the
 * form through the link, shows it and binds it, and refuses what it cannot read.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { canonicalJson, sha256Hex } from '../../src/shared/canonical';
import { nodeSha256 } from '../../src/main/core/digest';
import { effectiveValues, fileToken, formBinding, formSubject, formSubjectHash, isFormBinding, isFormSnapshot, MAX_FORM_FIELDS, type FormSnapshot } from '../../src/shared/form';
import { err, ok, type Result } from '../../src/shared/result';
import { Broker, type AgentContext } from '../../src/main/core/broker';
import type { Ledger } from '../../src/main/core/ledger';
import { FakeLink, makeDiscovery, sharedTab, tempLedger, trailOf, until } from './broker.fixtures';

const H = 'a'.repeat(64);
const snapshot = (over: Partial<FormSnapshot> = {}): FormSnapshot => ({
  action: 'https://clinic.example/book',
  actionHash: H,
  method: 'post',
  autosubmit: false,
  fields: { day: [''], at: [''], reminder: ['09:15'], channel: ['web'] },
  ...over,
});

describe('effective values', () => {
  it('the agent’s arguments over every other field, in the form’s order, then arguments naming no field', () => {
    expect(effectiveValues({ day: ['x'], reminder: ['09:15'], tags: ['a', 'b'] }, { day: '2026-12-15', extra: true })).toEqual([
      { name: 'day', value: '2026-12-15', from: 'agent' },
      { name: 'reminder', value: '09:15', from: 'form' },
      { name: 'tags', value: ['a', 'b'], from: 'form' },
      { name: 'extra', value: true, from: 'agent' },
    ]);
  });
  it('a field named like a prototype key stays a field, and an inherited name is not an argument', () => {
    const fields = JSON.parse('{"__proto__": ["p"], "constructor": ["c"]}') as Record<string, string[]>;
    expect(effectiveValues(fields, {})).toEqual([
      { name: '__proto__', value: 'p', from: 'form' },
      { name: 'constructor', value: 'c', from: 'form' },
    ]);
  });
  it('a file is shown by its size only', () => {
    expect(fileToken(12)).toBe('[file: 12 bytes]');
    expect(fileToken(null)).toBe('[no file]');
  });
});

describe('the subject hash', () => {
  it('is SHA-256 of the canonical {descriptorHash, form binding}; the display action is not bound, its exact hash is', async () => {
    const f = formSubject(snapshot(), { day: '2026-12-15', at: '10:30' });
    const want = await sha256Hex(canonicalJson({ descriptorHash: H, form: { actionHash: H, method: 'post', autosubmit: false, values: f.values } }), nodeSha256);
    expect(await formSubjectHash(H, formBinding(f), nodeSha256)).toBe(want);
    expect(await formSubjectHash(H, formBinding({ ...f, action: 'elsewhere' }), nodeSha256)).toBe(want);
    for (const other of [{ ...f, autosubmit: true }, { ...f, method: 'get' }, { ...f, actionHash: 'b'.repeat(64) }, formSubject(snapshot({ fields: { ...snapshot().fields, reminder: ['10:00'] } }), { day: '2026-12-15', at: '10:30' })]) {
      expect(await formSubjectHash(H, formBinding(other), nodeSha256)).not.toBe(want);
    }
  });
  it('shape checks refuse what a page could make the extension answer', () => {
    expect(isFormSnapshot(snapshot())).toBe(true);
    expect(isFormSnapshot({ ...snapshot(), actionHash: 'x' })).toBe(false);
    expect(isFormSnapshot({ ...snapshot(), fields: { a: 'not a list' } })).toBe(false);
    expect(isFormSnapshot({ ...snapshot(), fields: { a: ['x'.repeat(5000)] } })).toBe(false);
    expect(isFormSnapshot({ ...snapshot(), fields: Object.fromEntries(Array.from({ length: MAX_FORM_FIELDS + 1 }, (_, i) => [`f${i}`, ['']])) })).toBe(false);
    expect(isFormBinding(formBinding(formSubject(snapshot(), {})))).toBe(true);
    expect(isFormBinding({ ...formBinding(formSubject(snapshot(), {})), extra: 1 })).toBe(false);
  });
});

describe('the console resolves, shows and binds a form tool', () => {
  const agent: AgentContext = { actor: { kind: 'agent', name: 'form-agent' }, kind: 'mutation' };
  const reader: AgentContext = { ...agent, kind: 'read' };
  let link: FakeLink;
  let ledger: Ledger;
  let cleanup: () => void;
  let broker: Broker;
  let formAnswer: Result<unknown>;

  beforeEach(async () => {
    link = new FakeLink();
    ({ ledger, cleanup } = tempLedger());
    formAnswer = ok(snapshot());
    link.reads.set('webmcp-discover', (r) => (r.operation === 'form' ? formAnswer : err('unknown-operation', r.operation)));
    link.tabs = [sharedTab(7)];
    link.discoveries.set(7, await makeDiscovery(7, [{ name: 'book', kind: 'declarative', inputSchema: { type: 'object', properties: { day: { type: 'string' }, at: { type: 'string' }, reminder: { type: 'string' } } } }]));
    broker = new Broker({ link, receipts: ledger, approvalTimeoutMs: () => 60_000, linkGraceMs: 200 });
    await broker.listTabs(reader);
    expect((await broker.discover({ tabId: 7 }, reader)).ok).toBe(true);
  });
  afterEach(() => {
    broker?.dispose();
    cleanup();
  });

  const invoke = (args: Record<string, unknown>) => {
    const tool = link.discoveries.get(7)!.tools[0]!;
    return { tool, p: broker.invoke({ tabId: 7, name: 'book', descriptorHash: tool.descriptorHash, arguments: args }, agent) };
  };

  it('reads the form in that document, shows every effective value, and the grant and the dispatch bind them', async () => {
    const { tool, p } = invoke({ day: '2026-12-15', at: '11:00' });
    await until((l) => broker.approvals.onChange(l), () => broker.approvals.list().length === 1);
    const read = link.requests.find((r) => r.op === 'read' && r.operation === 'form');
    expect(read).toMatchObject({ faculty: 'webmcp-discover', tabId: 7, arguments: { frameId: 0, documentId: 'doc-1', toolName: 'book' } });
    const view = broker.approvals.list()[0]!;
    const form = formSubject(snapshot(), { day: '2026-12-15', at: '11:00' });
    expect(view.subject.form).toEqual(form);
    expect(view.subject.form!.values.find((v) => v.name === 'reminder')).toEqual({ name: 'reminder', value: '09:15', from: 'form' });
    const subjectHash = await formSubjectHash(tool.descriptorHash, formBinding(form), nodeSha256);
    expect(view.subjectHash).toBe(subjectHash);
    expect(view.subject.descriptorHash).toBe(tool.descriptorHash);
    expect(broker.decide(view.requestId, 'approve').ok).toBe(true);
    const a = await p;
    expect(a).toMatchObject({ ok: true, value: { descriptorHash: tool.descriptorHash } });
    const [inv] = link.invokes();
    expect(inv!.grant.subjectHash).toBe(subjectHash);
    expect(inv!.subject).toEqual({ toolName: 'book', descriptorHash: tool.descriptorHash, form: formBinding(form) });
    const trail = trailOf(ledger, a.requestId);
    expect(trail.every((r) => r.event === 'requested' || r.subjectHash === subjectHash)).toBe(true);
    expect(trail.every((r) => r.descriptorHash === tool.descriptorHash)).toBe(true);
  });

  it.each([
    ['form-too-large', 'form-too-large'],
    ['tool-missing', 'descriptor-unknown'],
    ['navigated', 'navigated'],
    ['link-down', 'link-down'],
  ])('a form read that fails with %s is refused (%s) before the person is asked', async (code, refusal) => {
    formAnswer = err(code, 'no');
    const a = await invoke({ day: 'x' }).p;
    expect(a).toMatchObject({ ok: false, error: { code: refusal } });
    expect(broker.approvals.list()).toEqual([]);
    expect(link.invokes()).toEqual([]);
  });

  it('an answer that is not a form snapshot is refused as bad-answer', async () => {
    formAnswer = ok({ ...snapshot(), actionHash: 'nope' });
    expect(await invoke({}).p).toMatchObject({ ok: false, error: { code: 'bad-answer' } });
    expect(broker.approvals.list()).toEqual([]);
  });
});
