// Stop and Stop everything (issue 12 item 5; docs/stop.md) against the REAL core (ledger,
// broker, pipeline, MCP endpoint with the SDK's client) over a fake extension link: Stop in
// each phase of a request, the agent's answer, the receipts, the tab reload it offers, and
// the kill switch's one receipt. Waits are on the core's own events, never sleeps.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ConsoleCore } from '../../src/main/core';
import type { AgentContext } from '../../src/main/core/broker';
import { InFlight } from '../../src/main/core/broker/in-flight';
import type { Grant } from '../../src/shared/types';
import type { Result } from '../../src/shared/result';
import { startAgentCore, stopAgentCore } from '../support/agent-core';
import { connectAgent, textOf } from '../support/mcp-client';
import { FakeLink, makeDiscovery, sharedTab, until } from './broker.fixtures';

const AGENT: AgentContext = { actor: { kind: 'agent', name: 'stop-test' }, kind: 'mutation' };

let link: FakeLink;
let core: ConsoleCore;
let dir: string;
let agentSecret: string;
const clients: Client[] = [];

const on = (l: () => void) => core.onEvent(l);
const trailOf = (requestId: string) => core.ledger.query({ requestId, limit: 50 }).receipts.map((r) => r.event).reverse();
const lastOf = (requestId: string) => core.ledger.query({ requestId, limit: 1 }).receipts[0]!;

async function discoverPay(tabId = 1): Promise<string> {
  link.discoveries.set(tabId, await makeDiscovery(tabId, [{ name: 'pay', inputSchema: { type: 'object' } }]));
  const d = await core.broker.discover({ tabId }, { ...AGENT, kind: 'read' });
  if (!d.ok) throw new Error('discover failed');
  return d.value.tools[0]!.descriptorHash;
}

beforeEach(async () => {
  link = new FakeLink();
  link.tabs = [sharedTab(1), sharedTab(2)];
  ({ core, dir, agentSecret } = await startAgentCore('echo-stop-', link, { logger: { info: () => {}, warn: () => {} } }));
  await core.broker.sharing.refresh();
});

afterEach(async () => {
  await stopAgentCore(core, dir, clients);
});

describe('Stop one request', () => {
  it('while it awaits approval: cancelled by the person, nothing dispatched; the in-flight list follows', async () => {
    const hash = await discoverPay();
    const answer = core.broker.invoke({ tabId: 1, name: 'pay', descriptorHash: hash, arguments: {} }, AGENT);
    await until(on, () => core.broker.inFlight.list().some((f) => f.phase === 'awaiting-approval'));
    const id = core.broker.inFlight.list()[0]!.requestId;
    expect(await core.api.stopRequest({ requestId: id })).toEqual({ ok: true, value: { requestId: id, phase: 'awaiting-approval', tabId: 1, afterDispatch: false } });
    const a = await answer;
    expect(a).toMatchObject({ ok: false, error: { code: 'cancelled', message: expect.stringContaining('the person stopped it') } });
    expect(lastOf(id)).toMatchObject({ event: 'cancelled', actor: { kind: 'person' } });
    expect(link.requests.some((r) => r.op === 'dispatch')).toBe(false);
    expect(core.broker.inFlight.list()).toEqual([]);
    // Stopping it again: it is no longer in flight.
    expect(await core.api.stopRequest({ requestId: id })).toMatchObject({ ok: false, error: { code: 'unknown-request' } });
  });

  it('after approval, before dispatch (the grant is being made): cancelled, and the extension never hears of it', async () => {
    const hash = await discoverPay();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const sign = link.signGrant.bind(link);
    link.signGrant = async (f: Omit<Grant, 'mac'>): Promise<Result<Grant>> => {
      await gate;
      return sign(f);
    };
    const answer = core.broker.invoke({ tabId: 1, name: 'pay', descriptorHash: hash, arguments: {} }, AGENT);
    await until(on, () => core.broker.approvals.list().length === 1);
    const id = core.broker.approvals.list()[0]!.requestId;
    expect(core.broker.decide(id, 'approve').ok).toBe(true);
    await until(on, () => core.broker.inFlight.list()[0]?.phase === 'approved');
    expect(core.broker.stop(id)).toMatchObject({ ok: true, value: { phase: 'approved', afterDispatch: false } });
    release();
    expect(await answer).toMatchObject({ ok: false, error: { code: 'cancelled' } });
    expect(trailOf(id).slice(-2)).toEqual(['approved', 'cancelled']);
    expect(link.requests.some((r) => r.op === 'dispatch')).toBe(false);
  });

  it('after dispatch, on a tool that never answers: the console stops waiting, aborts, records outcome-unknown; the agent is told; a reload is offered', async () => {
    const hash = await discoverPay();
    link.invokeHandler = () => new Promise(() => {}); // the page's execute never settles
    const client = await connectAgent(core.endpoint.url, agentSecret, { name: 'stopper', version: '1' });
    clients.push(client);
    const call = client.callTool({ name: 'webmcp_invoke', arguments: { tabId: 1, name: 'pay', descriptorHash: hash, arguments: {} } });
    await until(on, () => core.broker.approvals.list().length === 1);
    const id = core.broker.approvals.list()[0]!.requestId;
    core.broker.decide(id, 'approve');
    await until(on, () => core.broker.inFlight.list()[0]?.phase === 'dispatched');

    expect(await core.api.stopRequest({ requestId: id })).toEqual({ ok: true, value: { requestId: id, phase: 'dispatched', tabId: 1, afterDispatch: true } });
    const result = await call;
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('outcome-unknown');
    expect(textOf(result)).toContain('The person stopped this request after it was dispatched');
    // The link's request was aborted (the bridge then asks the extension to cancel: executeTool's signal).
    expect(link.aborted).toContain(id);
    expect(lastOf(id)).toMatchObject({ event: 'outcome-unknown', detail: { reason: 'stopped-by-person', by: 'stop' } });
    // The page's code may still have run: the same tool in that document is blocked until the agent looks again.
    expect(await core.broker.invoke({ tabId: 1, name: 'pay', descriptorHash: hash, arguments: {} }, AGENT)).toMatchObject({ ok: false, error: { code: 'outcome-unknown-pending' } });

    // The reload the console offers: a shared tab only, receipted.
    expect(await core.api.reloadTab({ tabId: 1 })).toEqual({ ok: true, value: null });
    expect(link.requests.filter((r) => r.op === 'reload-tab')).toEqual([{ op: 'reload-tab', tabId: 1 }]);
    expect(core.ledger.query({ event: 'tab-reloaded', limit: 5 }).receipts[0]).toMatchObject({ tabId: 1, actor: { kind: 'person' }, faculty: 'console' });
    expect(await core.api.reloadTab({ tabId: 99 })).toMatchObject({ ok: false, error: { code: 'tab-not-shared' } });
  });

  it('an answer that reached the console first is not stoppable: the request is already ending', async () => {
    const flights = new InFlight();
    const f = flights.begin({ requestId: 'r1', faculty: 'webmcp-invoke', operation: 'invoke', tabId: 1, agent: 'a' });
    let aborted = 0;
    f.dispatched(() => aborted++);
    f.answered();
    expect(flights.list()).toEqual([]);
    expect(flights.stop('r1')).toMatchObject({ ok: false, error: { code: 'unknown-request' } });
    expect(aborted).toBe(0);
    f.end();
  });
});

describe('Stop everything', () => {
  it('one act, one receipt: pending denied, in-flight stopped, sessions closed, tabs unshared, developer mode off', async () => {
    const hash = await discoverPay(1);
    const hash2 = await discoverPay(2);
    link.invokeHandler = () => new Promise(() => {});
    core.developerMode.switchOn();
    const client = await connectAgent(core.endpoint.url, agentSecret, { name: 'kill-switch', version: '1' });
    clients.push(client);
    // One call in flight (dispatched), one waiting for the person.
    const running = client.callTool({ name: 'webmcp_invoke', arguments: { tabId: 1, name: 'pay', descriptorHash: hash, arguments: {} } });
    await until(on, () => core.broker.approvals.list().length === 1);
    const runningId = core.broker.approvals.list()[0]!.requestId;
    core.broker.decide(runningId, 'approve');
    await until(on, () => core.broker.inFlight.list()[0]?.phase === 'dispatched');
    const waiting = core.broker.invoke({ tabId: 2, name: 'pay', descriptorHash: hash2, arguments: {} }, AGENT);
    await until(on, () => core.broker.approvals.list().length === 1);
    const waitingId = core.broker.approvals.list()[0]!.requestId;
    expect(core.agentTokens()[0]!.sessions).toBe(1);

    const r = await core.api.stopEverything();
    if (!r.ok) throw new Error(r.error.message);
    expect(r.value).toMatchObject({
      denied: [waitingId],
      stopped: [{ requestId: runningId, phase: 'dispatched', afterDispatch: true, tabId: 1 }],
      unshared: [1, 2],
      unshareFailed: [],
      sessionsClosed: 1,
      developerModeSwitchedOff: true,
    });
    // The agent whose call was running heard why before its session closed.
    const ran = await running;
    expect(textOf(ran)).toContain('Stop everything');
    expect(await waiting).toMatchObject({ ok: false, error: { code: 'denied', message: expect.stringContaining('Stop everything') } });
    expect(lastOf(waitingId)).toMatchObject({ event: 'denied', actor: { kind: 'person' } });
    expect(lastOf(runningId)).toMatchObject({ event: 'outcome-unknown', detail: { reason: 'stopped-by-person', by: 'stop-everything' } });
    // ONE receipt for the act, naming what it did.
    const acts = core.ledger.query({ event: 'stopped-everything', limit: 5 }).receipts;
    expect(acts).toHaveLength(1);
    expect(acts[0]).toMatchObject({ id: r.value.receiptId, actor: { kind: 'person' }, faculty: 'console', detail: { denied: [waitingId], sessionsClosed: 1, unshared: [1, 2] } });
    expect(core.developerMode.on).toBe(false);
    expect(core.ledger.query({ event: 'developer-mode-off', limit: 1 }).receipts[0]).toMatchObject({ detail: { by: 'console', why: 'stop' } });
    expect(core.broker.getSharedTabs()).toEqual([]);
    expect(core.agentTokens()[0]!.sessions).toBe(0);
    expect(core.broker.inFlight.list()).toEqual([]);
    // The token itself stays valid: a new session may start (revoking is a separate act).
    const again = await connectAgent(core.endpoint.url, agentSecret, { name: 'kill-switch', version: '1' });
    clients.push(again);
  });

  it('with nothing going on it still does its one receipt; a link that is down is named, not fatal', async () => {
    link.setState('no-extension');
    const r = await core.api.stopEverything();
    expect(r).toMatchObject({ ok: true, value: { denied: [], stopped: [], unshared: [], sessionsClosed: 0, developerModeSwitchedOff: false } });
    expect(r.ok && r.value.unshareFailed.map((f) => f.code)).toEqual(['link-down', 'link-down']);
    expect(core.ledger.query({ event: 'stopped-everything', limit: 5 }).receipts).toHaveLength(1);
  });
});

describe('the extension hears the pending count and developer mode (console-state)', () => {
  it('at each change, once per change', async () => {
    const states = () => link.requests.filter((r) => r.op === 'console-state');
    const hash = await discoverPay();
    const answer = core.broker.invoke({ tabId: 1, name: 'pay', descriptorHash: hash, arguments: {} }, AGENT);
    await until(on, () => core.broker.approvals.list().length === 1);
    core.developerMode.switchOn();
    core.broker.decide(core.broker.approvals.list()[0]!.requestId, 'deny');
    await answer;
    core.developerMode.switchOff('person');
    expect(states()).toEqual([
      // At start (the link was already up), then at each change.
      { op: 'console-state', pending: 0, developerMode: false },
      { op: 'console-state', pending: 1, developerMode: false },
      { op: 'console-state', pending: 1, developerMode: true },
      { op: 'console-state', pending: 0, developerMode: true },
      { op: 'console-state', pending: 0, developerMode: false },
    ]);
  });

  it('sent again when the extension did not take it while the link stayed up, with a backoff; never for an extension without the op', async () => {
    const states = () => link.requests.filter((r) => r.op === 'console-state');
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      link.consoleStateErrors = ['timeout', 'timeout'];
      core.developerMode.switchOn();
      await vi.advanceTimersByTimeAsync(0);
      const on = { op: 'console-state', pending: 0, developerMode: true };
      // At start, then the change, not taken.
      expect(states()).toEqual([{ op: 'console-state', pending: 0, developerMode: false }, on]);
      await vi.advanceTimersByTimeAsync(999);
      expect(states()).toHaveLength(2);
      // Again after 1 s (not taken), then after 2 s more (taken): the badge is right, and no more sends.
      await vi.advanceTimersByTimeAsync(1);
      expect(states()).toEqual([states()[0], on, on]);
      await vi.advanceTimersByTimeAsync(2_000);
      expect(states()).toEqual([states()[0], on, on, on]);
      await vi.advanceTimersByTimeAsync(120_000);
      expect(states()).toHaveLength(4);
      // An extension that does not know the op is not asked again.
      link.consoleStateErrors = ['unknown-op'];
      core.developerMode.switchOff('person');
      await vi.advanceTimersByTimeAsync(120_000);
      expect(states()).toHaveLength(5);
      // A state never taken is sent 1 + 5 times, not forever.
      link.consoleStateErrors = Array.from({ length: 50 }, () => 'timeout');
      core.developerMode.switchOn();
      await vi.advanceTimersByTimeAsync(600_000);
      expect(states()).toHaveLength(5 + 6);
    } finally {
      vi.useRealTimers();
    }
  });

  it('a console-state that fails after the console stopped (the link closing answers it) sets no retry timer', async () => {
    // Hold the next console-state: the console stops while it is on its way.
    const real = link.request.bind(link);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let asked = false;
    link.request = (async (req: Parameters<typeof real>[0], opts?: Parameters<typeof real>[1]) => {
      if (req.op !== 'console-state') return real(req, opts);
      asked = true;
      await held;
      return { ok: false, error: { code: 'link-down', message: 'the link closed' } };
    }) as typeof link.request;
    core.developerMode.switchOn();
    expect(asked).toBe(true);
    await core.stop();
    const timers = vi.spyOn(globalThis, 'setTimeout');
    try {
      release();
      await new Promise((r) => setImmediate(r));
      expect(timers).not.toHaveBeenCalled();
    } finally {
      timers.mockRestore();
    }
  });
});
