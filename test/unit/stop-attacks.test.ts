/**
 * Attacks on Stop, Stop everything and developer mode's end (docs/stop.md, docs/raw-javascript.md)
 * against the REAL core (ledger, broker, pipeline, in-flight registry) over the in-test FakeLink.
 * No timed assertions: each race is set up by holding a link answer or a step open.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createConsoleCore, type ConsoleCore } from '../../src/main/core';
import { createInputGate } from '../../src/main/core/trusted-input';
import { ok } from '../../src/shared/result';
import { createInFlightStore } from '../../src/renderer/stores/inflight';
import { FakeConsole } from '../support/fake-console';
import { startAgentCore, stopAgentCore } from '../support/agent-core';
import { FakeLink, makeDiscovery, ORIGIN, sharedTab, until } from './broker.fixtures';

const URL_NOW = `${ORIGIN}/shop`;
const agent = { actor: { kind: 'agent' as const, name: 'bot', tokenId: 'tok_0123456789abcdef' }, kind: 'mutation' as const };

describe('raw JavaScript when developer mode goes off, and its own Stop', () => {
  let dir: string;
  let core: ConsoleCore;
  let link: FakeLink;
  let fire: (() => void) | null;
  let input: ReturnType<typeof createInputGate>;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'echo-stop-attacks-'));
    link = new FakeLink();
    link.tabs = [sharedTab(7)];
    link.reads.set('webmcp-discover', (r) => ok({ frameId: (r.arguments as { frameId: number }).frameId, documentId: 'doc-1', tabUrl: URL_NOW, frameUrl: URL_NOW, urlHash: 'a'.repeat(64) }));
    link.invokeHandler = async () => ok({ outcome: 'succeeded', result: JSON.stringify({ status: 'returned', valueType: 'number', value: '2', valueTruncated: false, error: null, console: [], consoleOmitted: 0, elapsedMs: 1 }), elapsedMs: 2 });
    fire = null;
    input = createInputGate();
    core = createConsoleCore({
      dataDir: join(dir, 'data'),
      mcpPort: 0,
      link,
      approvalTimeoutMs: 60_000,
      // The desktop app's gate: only a real press admits a gated call; this test presses nothing.
      inputGate: input,
      developerModeTimer: (fn) => ((fire = fn), { cancel: () => void (fire = null) }),
      logger: { info: () => {}, warn: () => {} },
    });
    await core.start();
    await core.broker.sharing.refresh();
  });
  afterEach(async () => {
    await core.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const pendingRawJs = async (): Promise<string> => {
    for (;;) {
      const v = core.broker.approvals.list().find((a) => a.faculty === 'raw-js');
      if (v) return v.requestId;
      await new Promise((r) => setImmediate(r));
    }
  };

  for (const how of ['the person switches it off', 'the idle timer switches it off'] as const) {
    it(`an agent's run waiting for approval when ${how}: it never reaches the page`, async () => {
      core.developerMode.switchOn();
      const p = core.broker.scripts.run({ tabId: 7, code: 'document.body.remove()', world: 'MAIN' }, agent);
      const requestId = await pendingRawJs();
      if (how === 'the person switches it off') core.developerMode.switchOff('person');
      else fire!();
      expect(core.developerMode.on).toBe(false);
      // "A call while developer mode is off — the tool gone, or a call already on its way — is refused."
      // A late click on a dialog still open must not run the script with developer mode off.
      expect(core.broker.approvals.list()).toEqual([]);
      expect(core.broker.decide(requestId, 'approve')).toMatchObject({ ok: false, error: { code: 'unknown-request' } });
      const { answer, run } = await p;
      expect(answer).toMatchObject({ ok: false, error: { code: 'developer-mode-off' } });
      expect(run.status).toBe('refused');
      expect(link.requests.some((r) => r.op === 'dispatch')).toBe(false);
      expect(core.ledger.query({ requestId, limit: 1 }).receipts[0]).toMatchObject({ event: 'refused', actor: { kind: 'console' }, detail: { code: 'developer-mode-off' } });
    });
  }

  it("an agent's run approved, its grant being made, when developer mode goes off: not dispatched", async () => {
    core.developerMode.switchOn();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const sign = link.signGrant.bind(link);
    link.signGrant = async (f) => {
      await gate;
      return sign(f);
    };
    const p = core.broker.scripts.run({ tabId: 7, code: 'document.body.remove()', world: 'MAIN' }, agent);
    const requestId = await pendingRawJs();
    core.broker.decide(requestId, 'approve');
    for (;;) {
      if (core.broker.inFlight.list()[0]?.phase === 'approved') break;
      await new Promise((r) => setImmediate(r));
    }
    fire!();
    release();
    const { answer } = await p;
    expect(answer).toMatchObject({ ok: false, error: { code: 'developer-mode-off' } });
    expect(link.requests.some((r) => r.op === 'dispatch')).toBe(false);
  });

  it('Stop everything still DENIES a pending run (its own step 2), not refuses it', async () => {
    core.developerMode.switchOn();
    const p = core.broker.scripts.run({ tabId: 7, code: '1', world: 'MAIN' }, agent);
    const requestId = await pendingRawJs();
    input.noteInput('mouseDown'); // the person's press on Stop everything
    const r = await core.api.stopEverything();
    expect(r).toMatchObject({ ok: true, value: { denied: [requestId], developerModeSwitchedOff: true } });
    expect((await p).answer).toMatchObject({ ok: false, error: { code: 'denied' } });
  });

  it("stopScript is the person's Stop: gated like stopRequest, and receipted as the person's, never as the agent's cancel", async () => {
    core.developerMode.switchOn();
    link.invokeHandler = () => new Promise(() => undefined); // page code that never ends
    const p = core.broker.scripts.run({ tabId: 7, code: 'while (true) {}', world: 'MAIN' }, agent);
    core.broker.decide(await pendingRawJs(), 'approve');
    await link.nextInvoke();
    const running = core.broker.scripts.list().find((r) => r.status === 'running')!;

    // A script in the console's window (no real press): refused, as stopRequest is, and nothing stops.
    const scripted = await core.api.stopScript({ runId: running.runId });
    expect(scripted).toMatchObject({ ok: false, error: { code: 'no-trusted-input' } });
    expect(core.broker.scripts.list().find((r) => r.runId === running.runId)?.status).toBe('running');

    // The person's own press (Ctrl+C in the developer console): the request ends as a Stop does.
    input.noteInput('keyDown');
    expect(await core.api.stopScript({ runId: running.runId })).toMatchObject({ ok: true, value: { status: 'stopped' } });
    const { answer, run } = await p;
    expect(answer).toMatchObject({ ok: false, error: { code: 'outcome-unknown', message: expect.stringContaining('The person stopped this request') } });
    expect(run).toMatchObject({ status: 'stopped', offerReload: true });
    const end = core.ledger.query({ requestId: answer.requestId, event: 'outcome-unknown' }).receipts[0]!;
    expect(end.detail).toMatchObject({ reason: 'stopped-by-person', by: 'stop' });
  });
});

describe('the console UI: the kill switch is never silently dead', () => {
  it('Stop everything goes through while a tab reload (or a single Stop) is still waiting for its answer', async () => {
    const api = new FakeConsole();
    api.sharedTabs = [{ tabId: 42, windowId: 1, title: '', url: 'https://shop.example/', origin: 'https://shop.example', documentId: 'D', sharedAt: 1 }];
    api.inFlight = [{ requestId: 'run', faculty: 'webmcp-invoke', operation: 'invoke', tabId: 42, agent: 'bot', phase: 'dispatched', startedAt: 1 }];
    // The reload waits on the extension (the core allows it 10 s): hold its answer open.
    let answerReload!: () => void;
    const reloadAnswered = new Promise<void>((r) => (answerReload = r));
    const reloadTab = api.reloadTab.bind(api);
    api.reloadTab = async (p) => {
      await reloadAnswered;
      return reloadTab(p);
    };
    const s = createInFlightStore(api);
    const reloading = s.getState().reload(42);
    // The header's button is enabled (busy is not 'everything'); the person presses it.
    expect(s.getState().busy).not.toBe('everything');
    expect(await s.getState().stopEverything()).toBe(true);
    expect(api.calls.some((c) => c.method === 'stopEverything')).toBe(true);
    expect(s.getState().report).toMatchObject({ stopped: [{ requestId: 'run' }] });
    // The reload then answers (here: the tab is no longer shared); nothing is left busy, the report stays.
    answerReload();
    await reloading;
    expect(s.getState().busy).toBeNull();
    expect(s.getState().report).not.toBeNull();
  });
});

describe('a share that ends while a request is on its way to the person', () => {
  const AGENT = { actor: { kind: 'agent' as const, name: 'late-agent' }, kind: 'mutation' as const };
  let link: FakeLink;
  let core: ConsoleCore;
  let dir: string;
  let releaseForm!: () => void;
  let formAsked!: Promise<void>;

  beforeEach(async () => {
    link = new FakeLink();
    link.tabs = [sharedTab(1)];
    // The form read of a declarative tool (its subject): held open until the test lets it answer.
    let asked!: () => void;
    formAsked = new Promise<void>((r) => (asked = r));
    const held = new Promise<void>((r) => (releaseForm = r));
    link.reads.set('webmcp-discover', ((r: { operation: string }) => {
      if (r.operation !== 'form') return ok(null);
      asked();
      return held.then(() => ok({ action: `${ORIGIN}/cb`, actionHash: 'c'.repeat(64), method: 'post', autosubmit: true, fields: { day: [''] } }));
    }) as never);
    // A long approval timeout: an approval that is shown stays shown (no expiry stands in for a refusal).
    ({ core, dir } = await startAgentCore('echo-stop-share-', link, { approvalTimeoutMs: 600_000, logger: { info: () => {}, warn: () => {} } }));
    await core.broker.sharing.refresh();
    link.discoveries.set(1, await makeDiscovery(1, [{ name: 'book', kind: 'declarative' }]));
    expect((await core.broker.discover({ tabId: 1 }, { ...AGENT, kind: 'read' })).ok).toBe(true);
  });
  afterEach(async () => {
    await stopAgentCore(core, dir, []);
  });

  /** What the request came to first: an approval shown to the person, or its end (no clock involved). */
  const firstOf = async (p: Promise<{ ok: boolean; requestId: string }>): Promise<'shown' | 'ended'> =>
    Promise.race([p.then(() => 'ended' as const), until((l) => core.broker.approvals.onChange(l), () => core.broker.approvals.list().length > 0).then(() => 'shown' as const)]);
  const invokeBook = () => core.broker.invoke({ tabId: 1, name: 'book', descriptorHash: link.discoveries.get(1)!.tools[0]!.descriptorHash, arguments: { day: 'monday' } }, AGENT);

  it("the person unshares the tab while the request's subject is read: it is never shown for a tab no longer shared", async () => {
    const p = invokeBook();
    await formAsked;
    expect(await core.api.unshareTab({ tabId: 1 })).toEqual({ ok: true, value: null });
    expect(core.broker.getSharedTabs()).toEqual([]);
    releaseForm();
    expect(await firstOf(p)).toBe('ended');
    const a = await p;
    expect(a).toMatchObject({ ok: false, error: { code: 'tab-not-shared' } });
    expect(core.broker.approvals.list()).toEqual([]);
    expect(core.ledger.query({ requestId: a.requestId, event: 'approval-shown' }).receipts).toEqual([]);
    expect(link.requests.some((r) => r.op === 'dispatch')).toBe(false);
  });

  it('a call that starts while Stop everything runs (a new session, the tokens stay valid) leaves no approval behind for the unshared tab', async () => {
    const se = core.api.stopEverything(); // its synchronous part (deny, stopAll) is done when this returns
    const p = invokeBook(); // begins after stopAll: nothing marks it
    await formAsked;
    const r = await se;
    expect(r).toMatchObject({ ok: true, value: { unshared: [1] } });
    releaseForm();
    // After the kill switch completed, the person must not find a dialog for a tab it just unshared.
    expect(await firstOf(p)).toBe('ended');
    expect(await p).toMatchObject({ ok: false });
    expect(core.broker.approvals.list()).toEqual([]);
  });
});

describe('a Stop that arrives while a request is ending otherwise', () => {
  const AGENT = { actor: { kind: 'agent' as const, name: 'ending-agent' }, kind: 'mutation' as const };
  let link: FakeLink;
  let core: ConsoleCore;
  let dir: string;

  beforeEach(async () => {
    link = new FakeLink();
    link.tabs = [sharedTab(1)];
    ({ core, dir } = await startAgentCore('echo-stop-ending-', link, { approvalTimeoutMs: 600_000, logger: { info: () => {}, warn: () => {} } }));
    await core.broker.sharing.refresh();
    link.discoveries.set(1, await makeDiscovery(1, [{ name: 'pay', inputSchema: { type: 'object' } }]));
    expect((await core.broker.discover({ tabId: 1 }, { ...AGENT, kind: 'read' })).ok).toBe(true);
  });
  afterEach(async () => {
    await stopAgentCore(core, dir, []);
  });

  /** A request the person denied, caught the moment its `denied` receipt is written (its answer still waits for the disk). */
  async function deniedAndEnding(): Promise<{ id: string; answer: Promise<unknown> }> {
    const answer = core.broker.invoke({ tabId: 1, name: 'pay', descriptorHash: link.discoveries.get(1)!.tools[0]!.descriptorHash, arguments: {} }, AGENT);
    await until((l) => core.broker.approvals.onChange(l), () => core.broker.approvals.list().length === 1);
    const id = core.broker.approvals.list()[0]!.requestId;
    const denied = until((l) => core.ledger.onAppend(l), () => core.ledger.query({ requestId: id, event: 'denied', limit: 1 }).receipts.length === 1);
    expect(core.broker.decide(id, 'deny').ok).toBe(true);
    await denied;
    return { id, answer };
  }

  it('a single Stop on a request already denied is not "stopped": it says the request is no longer in flight', async () => {
    const { id, answer } = await deniedAndEnding();
    expect(core.broker.stop(id)).toMatchObject({ ok: false, error: { code: 'unknown-request' } });
    expect(await answer).toMatchObject({ ok: false, error: { code: 'denied' } });
  });

  it("Stop everything's one receipt does not list as stopped a request that had already ended denied", async () => {
    const { id, answer } = await deniedAndEnding();
    const r = await core.api.stopEverything();
    expect(r.ok && r.value.stopped.map((s) => s.requestId)).toEqual([]);
    expect(core.ledger.query({ event: 'stopped-everything', limit: 1 }).receipts[0]!.detail).toMatchObject({ stopped: [] });
    expect(await answer).toMatchObject({ ok: false, error: { code: 'denied' } });
    expect(core.ledger.query({ requestId: id, limit: 1 }).receipts[0]).toMatchObject({ event: 'denied' });
  });
});
