/**
 * The console side of a form that waits for the person (issue 8 item 4): the bounded wait sent to
 * the extension, progress to the agent, the outcomes (form-wait-timeout, form-cancelled: cancelled,
 * nothing submitted, no outcome-unknown block), the honest result of a handler that prevented the
 * default without respondWith, and request_status from the receipts.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ok } from '../../src/shared/result';
import type { InvocationResult } from '../../src/shared/types';
import type { Receipt } from '../../src/shared/receipt';
import { Broker, type AgentContext } from '../../src/main/core/broker';
import { statusOf } from '../../src/main/core/broker/request-status';
import type { Ledger } from '../../src/main/core/ledger';
import { FakeLink, makeDiscovery, sharedTab, tempLedger, trailOf, until } from './broker.fixtures';

const snapshot = (autosubmit: boolean) => ({ action: 'http://127.0.0.1:8765/cb', actionHash: 'c'.repeat(64), method: 'post', autosubmit, fields: { day: [''], topic: ['kept'] } });

describe('a form that waits for the person', () => {
  const reader: AgentContext = { actor: { kind: 'agent', name: 'wait-agent' }, kind: 'read' };
  let link: FakeLink;
  let ledger: Ledger;
  let cleanup: () => void;
  let broker: Broker;
  let autosubmit = false;

  beforeEach(async () => {
    link = new FakeLink();
    ({ ledger, cleanup } = tempLedger());
    autosubmit = false;
    link.reads.set('webmcp-discover', () => ok(snapshot(autosubmit)));
    link.tabs = [sharedTab(7)];
    link.discoveries.set(7, await makeDiscovery(7, [{ name: 'callback', kind: 'declarative' }]));
    broker = new Broker({ link, receipts: ledger, approvalTimeoutMs: () => 60_000, linkGraceMs: 200, dispatchTimeoutMs: 30_000, formWaitTimeoutMs: 123_000, progressIntervalMs: 60_000 });
    await broker.listTabs(reader);
    expect((await broker.discover({ tabId: 7 }, reader)).ok).toBe(true);
  });
  afterEach(() => {
    broker?.dispose();
    cleanup();
  });

  async function run(answer: InvocationResult, progress?: AgentContext['progress']) {
    link.invokeHandler = async () => ok(answer);
    const tool = link.discoveries.get(7)!.tools[0]!;
    const ctx: AgentContext = { actor: { kind: 'agent', name: 'wait-agent' }, kind: 'mutation', ...(progress ? { progress } : {}) };
    const p = broker.invoke({ tabId: 7, name: 'callback', descriptorHash: tool.descriptorHash, arguments: { day: '2026-12-16' } }, ctx);
    await until((l) => broker.approvals.onChange(l), () => broker.approvals.list().length === 1);
    expect(broker.decide(broker.approvals.list()[0]!.requestId, 'approve').ok).toBe(true);
    return p;
  }

  it('sends the bounded wait as the dispatch timeout, tells the agent at once that it waits, and records awaitingPerson', async () => {
    const heard: Array<{ progress: number; total?: number; message: string }> = [];
    const a = await run({ outcome: 'succeeded', result: '{"ok":true}' }, (p) => heard.push(p));
    expect(a.ok).toBe(true);
    expect(link.invokes()[0]!.timeoutMs).toBe(123_000);
    expect(heard[0]).toMatchObject({ total: 123_000, message: expect.stringContaining("press the page's button") });
    expect(trailOf(ledger, a.requestId).find((r) => r.event === 'dispatched')?.detail).toMatchObject({ awaitingPerson: true, timeoutMs: 123_000 });
  });

  it('a form that submits on approval keeps the ordinary dispatch timeout and sends no progress', async () => {
    autosubmit = true;
    const heard: unknown[] = [];
    const a = await run({ outcome: 'succeeded', result: null }, (p) => heard.push(p));
    expect(a.ok).toBe(true);
    expect(link.invokes()[0]!.timeoutMs).toBe(30_000);
    expect(heard).toEqual([]);
  });

  it.each([
    ['form-wait-timeout', true, /put back/],
    ['form-cancelled', false, /cleared the form itself/],
  ])('%s: cancelled, nothing submitted, said to the agent and in the receipt; the tool is not blocked', async (code, restored, words) => {
    const a = await run({ outcome: 'cancelled', error: { code, message: 'x' }, formRestored: restored });
    expect(a).toMatchObject({ ok: false, error: { code, detail: { submitted: false, formRestored: restored } } });
    expect(!a.ok && a.error.message).toMatch(words);
    expect(trailOf(ledger, a.requestId).at(-1)).toMatchObject({ event: 'cancelled', detail: { code, submitted: false, formRestored: restored } });
    // No outcome-unknown block: the next call reaches the person.
    const again = run({ outcome: 'succeeded', result: null });
    expect((await again).ok).toBe(true);
  });

  it('a cancel that is not the form’s own is still outcome-unknown', async () => {
    const a = await run({ outcome: 'cancelled', error: { code: 'cancelled', message: 'x' }, formRestored: true });
    expect(a).toMatchObject({ ok: false, error: { code: 'outcome-unknown' } });
  });

  it('a handler that prevented the default without respondWith: succeeded, result null, the note in the answer and the receipt', async () => {
    autosubmit = true;
    const a = await run({ outcome: 'succeeded', result: null, note: 'handled-without-answer' });
    expect(a).toMatchObject({ ok: true, value: { result: null, note: 'handled-without-answer' } });
    expect(trailOf(ledger, a.requestId).at(-1)).toMatchObject({ event: 'succeeded', detail: { note: 'handled-without-answer' } });
  });

  it('request_status reads the request from the receipts, and records its own read', async () => {
    const a = await run({ outcome: 'cancelled', error: { code: 'form-wait-timeout', message: 'x' }, formRestored: true });
    const s = await broker.requestStatus(a.requestId, reader);
    expect(s).toMatchObject({ ok: true, value: { requestId: a.requestId, state: 'ended', outcome: 'cancelled', code: 'form-wait-timeout', toolName: 'callback' } });
    expect(s.ok && s.value.events.map((e) => e.event)).toEqual(['requested', 'validated', 'approval-shown', 'approved', 'dispatched', 'cancelled']);
    expect(await broker.requestStatus('00000000-0000-4000-8000-000000000000', reader)).toMatchObject({ ok: false, error: { code: 'unknown-request' } });
  });
});

describe('statusOf', () => {
  const r = (seq: number, event: Receipt['event'], detail: unknown = {}): Receipt => ({ seq, id: `id${seq}`, time: seq, event, requestId: 'q', toolName: 't', origin: 'o', detail } as unknown as Receipt);
  it('in progress until an outcome receipt; then its outcome and code', () => {
    expect(statusOf('q', [r(2, 'dispatched'), r(1, 'requested')])).toMatchObject({ state: 'in-progress', events: [{ event: 'requested' }, { event: 'dispatched' }] });
    expect(statusOf('q', [r(1, 'requested'), r(2, 'refused', { code: 'form-changed' })])).toMatchObject({ state: 'ended', outcome: 'refused', code: 'form-changed' });
    expect(statusOf('other', [r(1, 'requested')])).toBeNull();
  });
});
