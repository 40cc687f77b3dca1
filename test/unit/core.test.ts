/**
 * The composition root: createConsoleCore's ConsoleApi (validation, receipts,
 * events, never throwing), settings persistence, and link-event receipts.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ConsoleEvent } from '../../src/shared/ipc';
import type { SharedTab } from '../../src/shared/types';
import type { AgentContext } from '../../src/main/core/broker';
import { createConsoleCore, linkAuditReceipt, type ConsoleCore } from '../../src/main/core';
import { MemorySecretStore, type LinkAuditEvent } from '../../src/main/core/bridge';
import { SettingsError, SettingsStore, hashToken } from '../../src/main/core/settings';
import { FakeLink, ORIGIN, makeDiscovery, sharedTab, until } from './broker.fixtures';

let dir: string;
let link: FakeLink;
let core: ConsoleCore;
let events: ConsoleEvent[];

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'echo-core-'));
  link = new FakeLink();
  link.tabs = [sharedTab(1)];
  core = createConsoleCore({ dataDir: dir, mcpPort: 0, link });
  events = [];
  core.onEvent((e) => events.push(e));
  await core.start();
});

afterEach(async () => {
  await core.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('ConsoleApi: bad input', () => {
  it('answers a clear error and writes a refused receipt, never throws', async () => {
    const api = core.api as unknown as Record<string, (p?: unknown) => Promise<{ ok: boolean; error?: { code: string; message: string } }>>;
    const bad: Array<[string, unknown]> = [
      ['decideApproval', {}],
      ['decideApproval', { requestId: 'x', decision: 'maybe' }],
      ['shareTab', { tabId: -1 }],
      ['shareTab', 'seven'],
      ['updateSettings', { approvalTimeoutMs: 5 }],
      ['updateSettings', { evil: true }],
      ['queryReceipts', { limit: 100_000 }],
      ['confirmPairing', null],
    ];
    for (const [method, payload] of bad) {
      const r = await api[method]!(payload);
      expect(r.ok, `${method} ${JSON.stringify(payload)}`).toBe(false);
      expect(r.error!.code).toBe('invalid-params');
      expect(r.error!.message).toContain(method);
    }
    const refused = core.ledger.query({ event: 'refused', limit: 50 }).receipts;
    expect(refused).toHaveLength(bad.length);
    expect(refused[0]!).toMatchObject({ faculty: 'console', actor: { kind: 'person' } });
  });

  it('deciding an unknown request is an error with a receipt', async () => {
    const r = await core.api.decideApproval({ requestId: 'nope', decision: 'approve' });
    expect(!r.ok && r.error.code).toBe('unknown-request');
    expect(core.ledger.query({ event: 'refused' }).receipts[0]!.detail).toMatchObject({ method: 'decideApproval', code: 'unknown-request' });
  });
});

describe('ConsoleApi: work', () => {
  it('getSnapshot has everything the console shows', async () => {
    const s = await core.api.getSnapshot();
    expect(s.ok).toBe(true);
    if (!s.ok) return;
    expect(s.value.endpoint.url).toBe(core.endpoint.url);
    expect(s.value.endpoint).not.toHaveProperty('token');
    expect(s.value.agentTokens).toEqual([]);
    expect(s.value.endpoint.stdioCommand).toMatch(/bin\/echo-console-mcp\.mjs --data-dir /);
    expect(s.value.settings).toEqual({ approvalTimeoutMs: 120_000, developerMode: false, developerModeIdleMinutes: 30, retentionDays: null });
    expect(s.value.link.state).toBe('connected');
    expect(s.value.approvals).toEqual([]);
  });

  it('share and unshare: receipts, events, and the broker sees the change', async () => {
    const shared = await core.api.shareTab({ tabId: 5 });
    expect(shared.ok && shared.value.tabId).toBe(5);
    expect(core.broker.getSharedTabs().map((t) => t.tabId)).toContain(5);
    expect(events.some((e) => e.kind === 'shared-tabs' && e.tabs.some((t) => t.tabId === 5))).toBe(true);
    expect((await core.api.unshareTab({ tabId: 5 })).ok).toBe(true);
    expect(core.broker.getSharedTabs().map((t) => t.tabId)).not.toContain(5);
    expect(core.ledger.query({ event: 'tab-shared' }).receipts[0]).toMatchObject({ tabId: 5, actor: { kind: 'person' } });
    expect(core.ledger.query({ event: 'tab-unshared' }).receipts).toHaveLength(1);
    const list = await core.api.listShareableTabs();
    expect(list.ok).toBe(true);
  });

  it('updateSettings persists, emits, and applies the timeout to the next approval; developer mode ON is refused without a host that sees input', async () => {
    // The core's default gate is the web host's (src/main/core/trusted-input.ts, trust rule 19).
    const refused = await core.api.updateSettings({ developerMode: true, approvalTimeoutMs: 15_000 });
    expect(refused).toMatchObject({ ok: false, error: { code: 'trusted-input-unavailable' } });
    expect(core.ledger.query({ event: 'developer-mode-on' }).receipts).toHaveLength(0);
    const r = await core.api.updateSettings({ developerMode: false, approvalTimeoutMs: 15_000 });
    expect(r).toEqual({ ok: true, value: { developerMode: false, approvalTimeoutMs: 15_000, developerModeIdleMinutes: 30, retentionDays: null } });
    expect(events.some((e) => e.kind === 'settings' && e.settings.approvalTimeoutMs === 15_000)).toBe(true);
    const onDisk = JSON.parse(readFileSync(join(dir, 'settings.json'), 'utf8'));
    expect(onDisk).toMatchObject({ developerMode: false, approvalTimeoutMs: 15_000 });
  });

  it('receipts flow to the UI as events, and the ledger verifies', async () => {
    await core.api.shareTab({ tabId: 9 });
    await until((l) => core.onEvent(l), () => events.some((e) => e.kind === 'receipts' && e.receipts.some((r) => r.event === 'tab-shared')));
    const v = await core.api.verifyLedger();
    expect(v.ok && v.value.ok).toBe(true);
    const q = await core.api.queryReceipts({ event: 'tab-shared' });
    expect(q.ok && q.value.receipts.filter((r) => r.tabId === 9)).toHaveLength(1);
  });

  it('refreshes the shared tabs when the link (re)connects', async () => {
    link.setState('no-extension');
    link.tabs = [sharedTab(1), sharedTab(2)];
    link.setState('connected');
    await until((l) => core.onEvent(l), () => core.broker.getSharedTabs().length === 2);
    expect(events.some((e) => e.kind === 'link')).toBe(true);
  });
});

const receiptsOf = (event: 'tab-shared' | 'tab-unshared' | 'refused', tabId: number) => core.ledger.query({ event, limit: 500 }).receipts.filter((r) => r.tabId === tabId);
/** The list-tabs refresh that start() sends (the FakeLink is connected from the start) has been recorded. */
const initialRefresh = () => until((l) => core.onEvent(l), () => receiptsOf('tab-shared', 1).length === 1);
const sharedTabEvents = () => events.filter((e) => e.kind === 'shared-tabs').length;

describe('sharing receipts: one writer, every shared-tab list compared with the recorded shares', () => {
  it('a share from the popup (tabs-changed) writes tab-shared once; repeats and navigations add nothing; stopping writes tab-unshared', async () => {
    await initialRefresh();
    const one = link.tabs[0]!;
    const t: SharedTab = { ...sharedTab(4, 'doc-a'), sharedAt: 1_000 };
    link.emit({ kind: 'tabs-changed', tabs: [one, t] });
    expect(receiptsOf('tab-shared', 4)).toHaveLength(1);
    expect(receiptsOf('tab-shared', 4)[0]).toMatchObject({
      requestId: null,
      faculty: 'console',
      actor: { kind: 'person' },
      tabId: 4,
      origin: ORIGIN,
      documentId: 'doc-a',
      detail: { via: 'extension', sharedAt: 1_000 },
    });
    link.emit({ kind: 'tabs-changed', tabs: [one, t] });
    link.emit({ kind: 'tabs-changed', tabs: [one, { ...t, documentId: 'doc-b', title: 'Next page' }] }); // same-origin navigation: the same share
    expect(receiptsOf('tab-shared', 4)).toHaveLength(1);
    expect(receiptsOf('tab-unshared', 4)).toHaveLength(0);
    expect(core.broker.getSharedTabs().map((x) => x.tabId)).toEqual([1, 4]);

    link.emit({ kind: 'tabs-changed', tabs: [one] });
    expect(receiptsOf('tab-unshared', 4)).toHaveLength(1);
    expect(receiptsOf('tab-unshared', 4)[0]).toMatchObject({ faculty: 'console', actor: { kind: 'person' }, origin: ORIGIN, documentId: 'doc-b', detail: { via: 'extension' } });
    link.emit({ kind: 'tabs-changed', tabs: [one, { ...t, sharedAt: 2_000 }] }); // shared again: a new share
    expect(receiptsOf('tab-shared', 4)).toHaveLength(2);
    expect(receiptsOf('tab-shared', 1)).toHaveLength(1);
    expect(core.ledger.verify().ok).toBe(true);
  });

  it('an unshare on the extension\'s own authority (tab closed, another origin, a page that may not be shared) names the extension and why; the popup\'s names the person', async () => {
    await initialRefresh();
    const one = link.tabs[0]!;
    const tabs = [4, 5, 6, 7].map((id) => ({ ...sharedTab(id, `doc-${id}`), sharedAt: 1_000 + id }));
    link.emit({ kind: 'tabs-changed', tabs: [one, ...tabs] });
    link.emit({
      kind: 'tabs-changed',
      tabs: [one],
      ended: [
        { tabId: 4, reason: 'tab-closed' },
        { tabId: 5, reason: 'left-origin' },
        { tabId: 6, reason: 'not-shareable' },
        { tabId: 7, reason: 'person' },
      ],
    });
    expect(receiptsOf('tab-unshared', 4)).toHaveLength(1);
    expect(receiptsOf('tab-unshared', 4)[0]).toMatchObject({ actor: { kind: 'extension' }, detail: { via: 'extension', reason: 'tab-closed' } });
    expect(receiptsOf('tab-unshared', 5)[0]).toMatchObject({ actor: { kind: 'extension' }, detail: { reason: 'left-origin' } });
    expect(receiptsOf('tab-unshared', 6)[0]).toMatchObject({ actor: { kind: 'extension' }, detail: { reason: 'not-shareable' } });
    expect(receiptsOf('tab-unshared', 7)[0]).toMatchObject({ actor: { kind: 'person' }, detail: { reason: 'person' } });
    // A reason is for the list it came with only.
    link.emit({ kind: 'tabs-changed', tabs: [one, { ...sharedTab(4, 'doc-9'), sharedAt: 9_000 }] });
    link.emit({ kind: 'tabs-changed', tabs: [one] });
    const latest = receiptsOf('tab-unshared', 4).sort((a, b) => b.seq - a.seq)[0];
    expect(latest).toMatchObject({ actor: { kind: 'person' }, detail: { via: 'extension' } });
    expect((latest?.detail as Record<string, unknown>).reason).toBeUndefined();
  });

  it("the console's own share and unshare write one receipt each (via console), also when the extension echoes the change", async () => {
    await initialRefresh();
    expect((await core.api.shareTab({ tabId: 5 })).ok).toBe(true);
    link.emit({ kind: 'tabs-changed', tabs: link.tabs }); // the extension announces the same share
    expect(receiptsOf('tab-shared', 5)).toHaveLength(1);
    expect(receiptsOf('tab-shared', 5)[0]).toMatchObject({ actor: { kind: 'person' }, origin: ORIGIN, detail: { via: 'console' } });
    expect((await core.api.unshareTab({ tabId: 5 })).ok).toBe(true);
    link.emit({ kind: 'tabs-changed', tabs: link.tabs });
    expect(receiptsOf('tab-unshared', 5)).toHaveLength(1);
    expect(receiptsOf('tab-unshared', 5)[0]).toMatchObject({ actor: { kind: 'person' }, origin: ORIGIN, detail: { via: 'console' } });
  });

  it('the list after connect records tabs not yet known, once: a reconnect or a console restart does not record them again', async () => {
    await initialRefresh();
    expect(receiptsOf('tab-shared', 1)[0]!.detail).toMatchObject({ via: 'extension' });
    const one = link.tabs[0]!;
    const four: SharedTab = { ...sharedTab(4), sharedAt: 1_000 };
    link.tabs = [one, four];
    link.emit({ kind: 'tabs-changed', tabs: link.tabs });

    const before = sharedTabEvents();
    link.setState('no-extension');
    link.setState('connected');
    await until((l) => core.onEvent(l), () => sharedTabEvents() > before);
    expect(receiptsOf('tab-shared', 1)).toHaveLength(1);
    expect(receiptsOf('tab-shared', 4)).toHaveLength(1);
    expect(receiptsOf('tab-unshared', 4)).toHaveLength(0);

    // A console restart on the same data: the browser kept tab 1 shared, stopped sharing tab 4 meanwhile, and shared tab 6.
    await core.stop();
    link = new FakeLink();
    link.tabs = [one, { ...sharedTab(6), sharedAt: 3_000 }];
    core = createConsoleCore({ dataDir: dir, mcpPort: 0, link });
    await core.start();
    await until((l) => core.onEvent(l), () => receiptsOf('tab-shared', 6).length === 1);
    expect(receiptsOf('tab-shared', 1)).toHaveLength(1);
    expect(receiptsOf('tab-unshared', 1)).toHaveLength(0);
    expect(receiptsOf('tab-unshared', 4)).toHaveLength(1);
    expect(core.ledger.verify().ok).toBe(true);
  });
  it('before the extension gives a whole list, a share from the console does not count the other shares as ended', async () => {
    await initialRefresh();
    const one = link.tabs[0]!;
    await core.stop();
    link = new FakeLink();
    link.state = 'no-extension';
    link.tabs = [one];
    core = createConsoleCore({ dataDir: dir, mcpPort: 0, link });
    await core.start();
    core.onEvent((e) => events.push(e));
    link.state = 'connected'; // answers requests, but no status event yet: no list-tabs refresh
    expect((await core.api.shareTab({ tabId: 6 })).ok).toBe(true);
    expect(receiptsOf('tab-shared', 6)).toHaveLength(1);
    expect(receiptsOf('tab-unshared', 1)).toHaveLength(0);
    const before = sharedTabEvents();
    link.setState('connected');
    await until((l) => core.onEvent(l), () => sharedTabEvents() > before);
    expect(core.broker.getSharedTabs().map((t) => t.tabId)).toEqual([1, 6]);
    expect(receiptsOf('tab-shared', 1)).toHaveLength(1);
    expect(receiptsOf('tab-shared', 6)).toHaveLength(1);
    expect(receiptsOf('tab-unshared', 1)).toHaveLength(0);
  });
});

describe("the console's own tab is never the agent's", () => {
  const CONSOLE = 'http://127.0.0.1:45999';
  const consoleTab = (tabId: number, origin = CONSOLE, sharedAt = 5_000): SharedTab => ({ ...sharedTab(tabId, 'doc-console'), title: 'Echo Console', url: `${origin}/`, origin, sharedAt });
  const reader: AgentContext = { actor: { kind: 'agent', name: 'test-agent' }, kind: 'read' };
  const writer: AgentContext = { actor: { kind: 'agent', name: 'test-agent' }, kind: 'mutation' };
  const unshareRequests = (tabId: number) => link.requests.filter((r) => r.op === 'unshare-tab' && r.tabId === tabId).length;

  it('"Share a tab…" does not offer it, and shareTab refuses it with a receipt', async () => {
    core.setConsoleOrigins([CONSOLE, 'http://localhost:45999']);
    link.shareable = [consoleTab(3, CONSOLE, 0), consoleTab(8, 'http://localhost:45999', 0), { ...sharedTab(6), sharedAt: 0 }];
    const list = await core.api.listShareableTabs();
    expect(list.ok && list.value.map((t) => t.tabId).sort()).toEqual([1, 6]);
    const r = await core.api.shareTab({ tabId: 3 });
    expect(!r.ok && r.error.code).toBe('console-tab');
    expect(!r.ok && r.error.message).toMatch(/Echo Console itself/);
    expect(link.requests.some((q) => q.op === 'share-tab')).toBe(false);
    expect(core.ledger.query({ event: 'refused' }).receipts[0]).toMatchObject({ faculty: 'console', actor: { kind: 'person' }, detail: { method: 'shareTab', code: 'console-tab' } });
    expect(receiptsOf('tab-shared', 3)).toHaveLength(0);
    expect((await core.api.shareTab({ tabId: 6 })).ok).toBe(true);
  });

  it('shared from the popup: unshared at once with a refused receipt, and never listed, discovered or invoked for the agent', async () => {
    core.setConsoleOrigins([CONSOLE]);
    await initialRefresh();
    const own = consoleTab(3);
    const d = await makeDiscovery(3, [{ name: 'decide_approval' }], 'doc-console');
    link.discoveries.set(3, { ...d, origin: CONSOLE, url: `${CONSOLE}/`, tools: d.tools.map((t) => ({ ...t, origin: CONSOLE })) });
    link.tabs = [...link.tabs, own];
    link.emit({ kind: 'tabs-changed', tabs: link.tabs });
    expect(unshareRequests(3)).toBe(1);
    expect(core.broker.getSharedTabs().map((t) => t.tabId)).toEqual([1]);
    expect(receiptsOf('tab-shared', 3)).toHaveLength(0);
    const refused = receiptsOf('refused', 3);
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({ faculty: 'console', actor: { kind: 'console' }, origin: CONSOLE, documentId: 'doc-console', detail: { code: 'console-tab' } });
    expect((refused[0]!.detail as { message: string }).message).toMatch(/Echo Console itself.*stopped sharing it/);

    // Reported again before the unshare landed: asked again, recorded once.
    link.tabs = [...link.tabs.filter((t) => t.tabId !== 3), own];
    link.emit({ kind: 'tabs-changed', tabs: link.tabs });
    expect(unshareRequests(3)).toBe(2);
    expect(receiptsOf('refused', 3)).toHaveLength(1);

    // The agent never sees it, even while the extension still lists it.
    const tabs = await core.broker.listTabs(reader);
    expect(tabs.ok && tabs.value.map((t) => t.tabId)).toEqual([1]);
    const disc = await core.broker.discover({ tabId: 3 }, reader);
    expect(!disc.ok && disc.error.code).toBe('console-tab');
    expect(link.requests.some((q) => q.op === 'discover')).toBe(false);
    const inv = await core.broker.invoke({ tabId: 3, name: 'decide_approval', descriptorHash: d.tools[0]!.descriptorHash, arguments: {} }, writer);
    expect(!inv.ok && inv.error.code).toBe('console-tab');
    expect(core.broker.approvals.list()).toEqual([]);
    expect(link.invokes()).toEqual([]);
  });

  it('a discovery that turns out to be the console (not yet reported shared) is refused and not kept', async () => {
    core.setConsoleOrigins([CONSOLE]);
    const d = await makeDiscovery(5, [{ name: 'x' }]);
    link.discoveries.set(5, { ...d, origin: CONSOLE, url: `${CONSOLE}/#token=secret` });
    const disc = await core.broker.discover({ tabId: 5 }, reader);
    expect(!disc.ok && disc.error.code).toBe('console-tab');
    expect(core.broker.latestDiscovery(5)).toBeUndefined();
    expect(unshareRequests(5)).toBe(1);
    const inv = await core.broker.invoke({ tabId: 5, name: 'x', descriptorHash: d.tools[0]!.descriptorHash, arguments: {} }, writer);
    expect(!inv.ok && inv.error.code).toBe('descriptor-unknown');
  });

  it('a console tab already shared when the host learns its origin is unshared then; the MCP endpoint counts as the console too', async () => {
    await initialRefresh();
    const one = link.tabs[0]!;
    link.emit({ kind: 'tabs-changed', tabs: [one, consoleTab(3)] });
    expect(core.broker.getSharedTabs().map((t) => t.tabId)).toEqual([1, 3]);
    core.setConsoleOrigins([CONSOLE]);
    expect(core.broker.getSharedTabs().map((t) => t.tabId)).toEqual([1]);
    expect(unshareRequests(3)).toBe(1);
    expect(receiptsOf('tab-unshared', 3)).toHaveLength(1);
    expect(receiptsOf('refused', 3)).toHaveLength(1);

    const mcp = new URL(core.endpoint.url).origin;
    link.emit({ kind: 'tabs-changed', tabs: [one, consoleTab(9, mcp)] });
    expect(core.broker.getSharedTabs().map((t) => t.tabId)).toEqual([1]);
    expect(unshareRequests(9)).toBe(1);
    // Another page on the same host but another port is an ordinary page.
    link.emit({ kind: 'tabs-changed', tabs: [one, consoleTab(10, 'http://127.0.0.1:45998')] });
    expect(core.broker.getSharedTabs().map((t) => t.tabId)).toEqual([1, 10]);
  });
});

describe('restart recovery', () => {
  const AGENT: AgentContext = { actor: { kind: 'agent', name: 'restart-test' }, kind: 'mutation' };

  it('a request left dispatched becomes outcome-unknown (console restarted) with its block; a pending approval is cancelled; the agent must look again', async () => {
    link.discoveries.set(1, await makeDiscovery(1, [{ name: 'pay', inputSchema: { type: 'object' } }, { name: 'note', inputSchema: { type: 'object' } }]));
    // The page tool hangs: the call stays dispatched when the console "crashes".
    link.invokeHandler = () => new Promise(() => undefined);
    const d = await core.broker.discover({ tabId: 1 }, { ...AGENT, kind: 'read' });
    expect(d.ok).toBe(true);
    const hash = (n: string) => (d.ok ? d.value.tools.find((t) => t.name === n)!.descriptorHash : '');
    const hung = core.broker.invoke({ tabId: 1, name: 'pay', descriptorHash: hash('pay'), arguments: {} }, AGENT);
    await until((l) => core.onEvent(l), () => core.broker.approvals.list().length === 1);
    const dispatchedId = core.broker.approvals.list()[0]!.requestId;
    const reached = link.nextInvoke();
    await core.api.decideApproval({ requestId: dispatchedId, decision: 'approve' });
    await reached;
    void hung;
    // A crash: the process ends without an outcome for the dispatched request and without
    // settling a pending approval. Simulated by writing that pending approval's trail into
    // the ledger of a stopped console (stop() would cancel a live one itself).
    await core.stop();
    const { Ledger } = await import('../../src/main/core/ledger');
    const led = new Ledger(join(dir, 'ledger.db'));
    const pendingId = '00000000-0000-4000-8000-00000000abcd';
    for (const event of ['requested', 'validated', 'approval-shown'] as const) {
      led.append({ requestId: pendingId, event, faculty: 'webmcp-invoke', operation: 'invoke', tabId: 1, toolName: 'note', documentId: 'doc-1', actor: AGENT.actor, detail: {} });
    }
    expect(led.query({ requestId: dispatchedId, limit: 10 }).receipts[0]!.event).toBe('dispatched');
    led.close();

    link = new FakeLink();
    link.tabs = [sharedTab(1)];
    link.discoveries.set(1, await makeDiscovery(1, [{ name: 'pay', inputSchema: { type: 'object' } }, { name: 'note', inputSchema: { type: 'object' } }]));
    core = createConsoleCore({ dataDir: dir, mcpPort: 0, link });
    await core.start();
    const after = core.ledger.query({ requestId: dispatchedId, limit: 10 }).receipts[0]!;
    expect(after).toMatchObject({ event: 'outcome-unknown', actor: { kind: 'console' }, faculty: 'webmcp-invoke', operation: 'invoke', toolName: 'pay', detail: { reason: 'console-restarted' } });
    expect(core.broker.discoveries.blockedBy('webmcp-invoke', 1, 'doc-1', 'pay')).toBe(dispatchedId);
    expect(core.ledger.query({ requestId: pendingId, limit: 10 }).receipts[0]).toMatchObject({ event: 'cancelled', actor: { kind: 'console' } });
    // No discovery survives a restart: the agent cannot retry blindly, it must look at the page again…
    const blind = await core.broker.invoke({ tabId: 1, name: 'pay', descriptorHash: hash('pay'), arguments: {} }, AGENT);
    expect(!blind.ok && blind.error.code).toBe('descriptor-unknown');
    // …and looking again lifts the block (docs/broker.md, "outcome-unknown").
    expect((await core.broker.discover({ tabId: 1 }, { ...AGENT, kind: 'read' })).ok).toBe(true);
    expect(core.broker.discoveries.blockedBy('webmcp-invoke', 1, 'doc-1', 'pay')).toBeUndefined();
    // A second start of the same data finds nothing left to recover.
    const count = core.ledger.query({ limit: 500 }).receipts.length;
    await core.stop();
    core = createConsoleCore({ dataDir: dir, mcpPort: 0, link });
    await core.start();
    expect(core.ledger.query({ limit: 500 }).receipts.length).toBe(count);
  });
});

describe('settings file', () => {
  it('is 0600, holds the token hashes (never a secret) and the live endpoint, and the endpoint is cleared on stop', async () => {
    const file = join(dir, 'settings.json');
    const made = await core.api.createAgentToken({ name: 'hash check' });
    if (!made.ok) throw new Error(made.error.message);
    if (process.platform !== 'win32') expect(statSync(file).mode & 0o777).toBe(0o600);
    const text = readFileSync(file, 'utf8');
    const s = JSON.parse(text);
    expect(text).not.toContain(made.value.secret);
    expect(s.agentTokens).toEqual([{ id: made.value.token.id, name: 'hash check', sha256: hashToken(made.value.secret), createdAt: made.value.token.createdAt }]);
    expect(s.endpoint.url).toBe(core.endpoint.url);
    await core.stop();
    expect(JSON.parse(readFileSync(file, 'utf8')).endpoint).toBeNull();
  });

  it('keeps the tokens across restarts and refuses a corrupt file without overwriting it', () => {
    const other = mkdtempSync(join(tmpdir(), 'echo-settings-'));
    try {
      const { secret } = SettingsStore.open(other).createAgentToken('kept');
      expect(SettingsStore.open(other).findAgentToken(secret)?.name).toBe('kept');
      writeFileSync(join(other, 'settings.json'), '{"version":1,"token":');
      expect(() => SettingsStore.open(other)).toThrow(SettingsError);
      expect(readFileSync(join(other, 'settings.json'), 'utf8')).toBe('{"version":1,"token":');
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });
});

describe('link events → receipts', () => {
  it('maps every bridge audit event to a receipt the ledger accepts', () => {
    const all: LinkAuditEvent[] = [
      { kind: 'paired', extensionId: 'e', pairingId: 'p' },
      { kind: 'pairing-rejected', extensionId: 'e', reason: 'person' },
      { kind: 'unpaired', by: 'extension', pairingId: 'p', extensionId: 'e' },
      { kind: 'link-connected', extensionId: 'e', extensionVersion: '1.0', pairingId: 'p' },
      { kind: 'link-disconnected', extensionId: 'e', reason: 'heartbeat-timeout' },
      { kind: 'link-refused', code: 'wrong-origin', message: 'no' },
    ];
    const events = all.map((e) => core.ledger.append(linkAuditReceipt(e)).event);
    expect(events).toEqual(['paired', 'pairing-rejected', 'unpaired', 'link-connected', 'link-disconnected', 'refused']);
    expect(core.ledger.query({ event: 'link-connected' }).receipts[0]!.actor).toEqual({ kind: 'extension', name: 'e', version: '1.0' });
  });
});

describe('with the real Bridge', () => {
  it('starts and stops; with no extension connected an invocation is refused before the person is asked', async () => {
    const d = mkdtempSync(join(tmpdir(), 'echo-core-bridge-'));
    const real = createConsoleCore({ dataDir: d, mcpPort: 0, socketPath: join(d, 'link.sock'), secretStore: new MemorySecretStore() });
    try {
      await real.start();
      const s = await real.api.getSnapshot();
      expect(s.ok && s.value.link.state).toBe('no-extension');
      const r = await real.broker.invoke(
        { tabId: 1, name: 'x', descriptorHash: 'a'.repeat(64), arguments: {} },
        { actor: { kind: 'agent', name: 't' }, kind: 'mutation' },
      );
      expect(!r.ok && r.error.code).toBe('descriptor-unknown');
      const tabs = await real.broker.listTabs({ actor: { kind: 'agent', name: 't' }, kind: 'read' });
      expect(!tabs.ok && tabs.error.code).toBe('link-down');
    } finally {
      await real.stop();
      rmSync(d, { recursive: true, force: true });
    }
  });
});
