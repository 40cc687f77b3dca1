/**
 * Tool changes invalidate only what changed (issue 8 item 2; src/main/core/broker/discoveries.ts
 * `refresh`, broker `refreshTools`): after the page says its tools changed, the console discovers
 * the tab again itself; an unrelated re-registration leaves a stable tool valid (and a pending
 * approval of it alone), a changed or departed tool stops resolving and its pending approval is
 * refused, and the agent's next answers carry what changed. Blocks stay: the agent did not look.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Broker, type AgentContext } from '../../src/main/core/broker';
import type { Ledger } from '../../src/main/core/ledger';
import { Discoveries, unheardIn } from '../../src/main/core/broker/discoveries';
import { FakeLink, discoveredBroker, makeDiscovery, sharedTab, until, type ToolSpec } from './broker.fixtures';

const OPEN = { type: 'object', properties: {}, additionalProperties: false };
const agent = (kind: AgentContext['kind'] = 'mutation'): AgentContext => ({ actor: { kind: 'agent', name: 'changes-test' }, kind });

let link: FakeLink;
let ledger: Ledger;
let cleanup: () => void;
let broker: Broker;

const page = (specs: ToolSpec[]) => makeDiscovery(7, specs);

beforeEach(async () => {
  link = new FakeLink();
  link.tabs = [sharedTab(7)];
  link.discoveries.set(7, await page([{ name: 'stable', inputSchema: OPEN }, { name: 'flicker', inputSchema: OPEN }]));
  ({ broker, ledger, close: cleanup } = await discoveredBroker(link));
});
afterEach(() => cleanup());

const hashOf = (name: string) => broker.latestDiscovery(7)!.tools.find((t) => t.name === name)!.descriptorHash;
/** The page says its tools changed; resolves once the console's own rediscovery has been answered and applied. */
async function pageChanged(): Promise<void> {
  const asked = link.requests.filter((r) => r.op === 'discover').length;
  link.emit({ kind: 'tools-changed', tabId: 7, frameId: 0, documentId: 'doc-1' });
  await until((l) => {
    const t = setInterval(l, 5);
    return () => clearInterval(t);
  }, () => link.requests.filter((r) => r.op === 'discover').length > asked);
  await new Promise((r) => setImmediate(r));
}

describe('tool changes', () => {
  it('an unrelated re-registration leaves the stable tool valid, its pending approval open, and the call runs', async () => {
    const stable = hashOf('stable');
    const p = broker.invoke({ tabId: 7, name: 'stable', descriptorHash: stable, arguments: {} }, agent());
    await until((l) => broker.approvals.onChange(l), () => broker.approvals.list().length === 1);
    // `flicker` re-registers with another description: only it changed.
    link.discoveries.set(7, await page([{ name: 'stable', inputSchema: OPEN }, { name: 'flicker', inputSchema: OPEN, description: 'now different' }]));
    await pageChanged();
    expect(broker.latestDiscovery(7)!.tools.map((t) => t.name).sort()).toEqual(['flicker', 'stable']);
    expect(hashOf('stable')).toBe(stable);
    expect(broker.approvals.list()).toHaveLength(1);
    broker.decide(broker.approvals.list()[0]!.requestId, 'approve');
    expect(await p).toMatchObject({ ok: true });
    expect(broker.toolChangesSinceDiscovery(7)).toEqual({ changed: ['flicker'], left: [], added: [] });
  });

  it('a changed tool stops resolving and its pending approval is refused descriptor-changed; a departed one is gone; a new one is listed', async () => {
    const oldFlicker = hashOf('flicker');
    const p = broker.invoke({ tabId: 7, name: 'flicker', descriptorHash: oldFlicker, arguments: {} }, agent());
    await until((l) => broker.approvals.onChange(l), () => broker.approvals.list().length === 1);
    link.discoveries.set(7, await page([{ name: 'flicker', inputSchema: OPEN, description: 'rug pulled' }, { name: 'newcomer', inputSchema: OPEN }]));
    await pageChanged();
    const a = await p;
    expect(a).toMatchObject({ ok: false, error: { code: 'descriptor-changed' } });
    expect(link.invokes()).toEqual([]);
    const again = await broker.invoke({ tabId: 7, name: 'flicker', descriptorHash: oldFlicker, arguments: {} }, agent());
    expect(again).toMatchObject({ ok: false, error: { code: 'descriptor-unknown' } });
    expect(broker.toolChangesSinceDiscovery(7)).toEqual({ changed: ['flicker'], left: ['stable'], added: ['newcomer'] });
    // The agent looks again: the marker is cleared.
    expect((await broker.discover({ tabId: 7 }, agent('read'))).ok).toBe(true);
    expect(broker.toolChangesSinceDiscovery(7)).toBeUndefined();
  });

  it('a pending approval for a tool in a frame the refresh did not reach stays: the tool is kept, so is its dialog', async () => {
    link.discoveries.set(7, await page([{ name: 'stable', inputSchema: OPEN }, { name: 'framed', inputSchema: OPEN, frameId: 4 }]));
    expect((await broker.discover({ tabId: 7 }, agent('read'))).ok).toBe(true);
    void broker.invoke({ tabId: 7, name: 'framed', descriptorHash: hashOf('framed'), arguments: {} }, agent());
    await until((l) => broker.approvals.onChange(l), () => broker.approvals.list().length === 1);
    // The page re-registers `stable`; frame 4 is busy and does not answer this rediscovery.
    const fresh = await page([{ name: 'stable', inputSchema: OPEN, description: 'now different' }]);
    fresh.violations.push({ frameId: 4, reason: 'frame-timeout' });
    link.discoveries.set(7, fresh);
    await pageChanged();
    expect(broker.latestDiscovery(7)!.tools.map((t) => t.name).sort()).toEqual(['framed', 'stable']);
    expect(broker.approvals.list().map((a) => a.subject.type === 'webmcp-tool' && a.subject.toolName)).toEqual(['framed']);
  });

  it('a burst of change notices while a refresh runs makes one more refresh, not one per notice', async () => {
    let release: () => void = () => undefined;
    const original = link.request.bind(link);
    let discovers = 0;
    (link as unknown as { request: unknown }).request = async (req: { op: string }, o: unknown) => {
      if (req.op === 'discover') {
        discovers++;
        if (discovers === 1) await new Promise<void>((r) => (release = r));
      }
      return original(req as never, o as never);
    };
    for (let i = 0; i < 10; i++) link.emit({ kind: 'tools-changed', tabId: 7, frameId: 0, documentId: 'doc-1' });
    release();
    await until((l) => {
      const t = setInterval(l, 5);
      return () => clearInterval(t);
    }, () => discovers === 2);
    // The loop settles within a few turns of the event loop once its last answer is in.
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    expect(discovers).toBe(2);
  });
});

describe('Discoveries.refresh', () => {
  it('lifts no outcome-unknown block (the agent did not look) and drops the tab for another top document, marker too', async () => {
    const d = new Discoveries();
    d.put(await page([{ name: 'stable', inputSchema: OPEN }]));
    d.block('webmcp-invoke', 7, 'doc-1', 'stable', 'req-1');
    expect(d.refresh(await page([{ name: 'stable', inputSchema: OPEN }, { name: 'extra', inputSchema: OPEN }]), d.generation(7))).toEqual({ changed: [], left: [], added: ['extra'] });
    expect(d.blockedBy('webmcp-invoke', 7, 'doc-1', 'stable')).toBe('req-1');
    expect(d.changesSinceLook(7)).toEqual({ changed: [], left: [], added: ['extra'] });
    expect(d.refresh(await makeDiscovery(7, [{ name: 'stable', inputSchema: OPEN }], 'doc-2'), d.generation(7))).toBeUndefined();
    expect(d.get(7)).toBeUndefined();
    expect(d.changesSinceLook(7)).toBeUndefined();
  });

  it('an answer asked for before the agent discovered (or the page navigated) is stale and changes nothing', async () => {
    const d = new Discoveries();
    d.put(await page([{ name: 'stable', inputSchema: OPEN }]));
    const asked = d.generation(7);
    const agentsOwn = await page([{ name: 'stable', inputSchema: OPEN }, { name: 'newer', inputSchema: OPEN }]);
    d.put(agentsOwn);
    expect(d.refresh(await page([{ name: 'stable', inputSchema: OPEN }]), asked)).toBeUndefined();
    expect(d.get(7)?.tools.map((t) => t.name)).toEqual(['stable', 'newer']);
    expect(d.changesSinceLook(7)).toBeUndefined();
    const beforeMove = d.generation(7);
    d.frameNavigated({ tabId: 7, frameId: 0, documentId: 'doc-1' });
    expect(d.refresh(await page([{ name: 'stable', inputSchema: OPEN }]), beforeMove)).toBeUndefined();
    expect(d.hasMoved(7, 0)).toBe(true);
  });

  it('a frame the refresh did not reach keeps its tools: silence is not departure', async () => {
    const d = new Discoveries();
    d.put(await makeDiscovery(7, [{ name: 'top', inputSchema: OPEN }, { name: 'framed', inputSchema: OPEN, frameId: 4 }]));
    const fresh = await makeDiscovery(7, [{ name: 'top', inputSchema: OPEN }]);
    fresh.violations.push({ frameId: 4, reason: 'frame-timeout' });
    expect(d.refresh(fresh, d.generation(7))).toEqual({ changed: [], left: [], added: [] });
    expect(d.get(7)?.tools.map((t) => t.name).sort()).toEqual(['framed', 'top']);
  });
});

describe('unheardIn: which absences say nothing about the page', () => {
  it('frames not heard from, tools cut by a limit (named, or a frame past the tool limit), and everything once the violations list itself was cut', async () => {
    const fresh = await makeDiscovery(7, [{ name: 'top', inputSchema: OPEN }]);
    fresh.violations.push(
      { frameId: 2, reason: 'frame-timeout' },
      { frameId: 3, reason: 'frame-unreachable' },
      { frameId: 4, reason: 'too-many-frames' },
      { frameId: 0, reason: 'message-too-large', name: 'big' },
      { frameId: 0, reason: 'too-many-tools', name: 'past_limit' },
      { frameId: 5, reason: 'too-many-tools', detail: '40 more tools not listed or named' },
      // A violation that is about the tool itself: it was heard, and refused.
      { frameId: 0, reason: 'schema-too-large', name: 'refused' },
    );
    const unheard = unheardIn(fresh);
    for (const [frameId, name] of [[2, 'a'], [3, 'b'], [4, 'c'], [0, 'big'], [0, 'past_limit'], [5, 'any']] as const) expect(unheard(frameId, name)).toBe(true);
    for (const [frameId, name] of [[0, 'gone'], [0, 'refused'], [6, 'other'], [1, 'big']] as const) expect(unheard(frameId, name)).toBe(false);
    fresh.violations.push({ frameId: -1, reason: 'too-many-violations', detail: '12 more not listed' });
    expect(unheardIn(fresh)(0, 'gone')).toBe(true);
  });

  it('a pending approval for a tool past the per-frame limit, or on a page whose violations were cut, stays', async () => {
    link.discoveries.set(7, await page([{ name: 'stable', inputSchema: OPEN }, { name: 'many', inputSchema: OPEN, frameId: 4 }]));
    expect((await broker.discover({ tabId: 7 }, agent('read'))).ok).toBe(true);
    void broker.invoke({ tabId: 7, name: 'stable', descriptorHash: hashOf('stable'), arguments: {} }, agent());
    void broker.invoke({ tabId: 7, name: 'many', descriptorHash: hashOf('many'), arguments: {} }, agent());
    await until((l) => broker.approvals.onChange(l), () => broker.approvals.list().length === 2);
    const fresh = await page([]);
    fresh.violations.push({ frameId: 4, reason: 'too-many-tools', detail: '300 tools reported' }, { frameId: 0, reason: 'too-many-tools', name: 'stable' });
    broker.refuseChangedTools(fresh);
    expect(broker.approvals.list()).toHaveLength(2);
    const cut = await page([]);
    cut.violations.push({ frameId: -1, reason: 'too-many-violations', detail: '9 more not listed' });
    broker.refuseChangedTools(cut);
    expect(broker.approvals.list()).toHaveLength(2);
    // The same answer without those reasons: both tools left the page, both dialogs go.
    broker.refuseChangedTools(await page([]));
    expect(broker.approvals.list()).toHaveLength(0);
  });
});
