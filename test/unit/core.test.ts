/**
 * The composition root: createConsoleCore's ConsoleApi (validation, receipts,
 * events, never throwing), settings persistence, and link-event receipts.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ConsoleEvent } from '../../src/shared/ipc';
import { createConsoleCore, linkAuditReceipt, type ConsoleCore } from '../../src/main/core';
import { MemorySecretStore, type LinkAuditEvent } from '../../src/main/core/bridge';
import { SettingsError, SettingsStore } from '../../src/main/core/settings';
import { FakeLink, sharedTab, until } from './broker.fixtures';

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
      expect(r.error!.code).toBe('invalid-payload');
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
    expect(s.value.endpoint.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(s.value.endpoint.stdioCommand).toMatch(/bin\/echo-console-mcp\.mjs --data-dir /);
    expect(s.value.settings).toEqual({ approvalTimeoutMs: 120_000, developerMode: false });
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

  it('updateSettings persists, emits, records developer mode, and applies the timeout to the next approval', async () => {
    const r = await core.api.updateSettings({ developerMode: true, approvalTimeoutMs: 15_000 });
    expect(r).toEqual({ ok: true, value: { developerMode: true, approvalTimeoutMs: 15_000 } });
    expect(events.some((e) => e.kind === 'settings' && e.settings.developerMode)).toBe(true);
    expect(core.ledger.query({ event: 'developer-mode-on' }).receipts).toHaveLength(1);
    const onDisk = JSON.parse(readFileSync(join(dir, 'settings.json'), 'utf8'));
    expect(onDisk).toMatchObject({ developerMode: true, approvalTimeoutMs: 15_000 });
  });

  it('receipts flow to the UI as events, and the ledger verifies', async () => {
    await core.api.shareTab({ tabId: 9 });
    expect(events.some((e) => e.kind === 'receipt' && e.receipt.event === 'tab-shared')).toBe(true);
    const v = await core.api.verifyLedger();
    expect(v.ok && v.value.ok).toBe(true);
    const q = await core.api.queryReceipts({ event: 'tab-shared' });
    expect(q.ok && q.value.receipts).toHaveLength(1);
  });

  it('refreshes the shared tabs when the link (re)connects', async () => {
    link.setState('no-extension');
    link.tabs = [sharedTab(1), sharedTab(2)];
    link.setState('connected');
    await until((l) => core.onEvent(l), () => core.broker.getSharedTabs().length === 2);
    expect(events.some((e) => e.kind === 'link')).toBe(true);
  });
});

describe('settings file', () => {
  it('is 0600, holds the token and the live endpoint, and the endpoint is cleared on stop', async () => {
    const file = join(dir, 'settings.json');
    if (process.platform !== 'win32') expect(statSync(file).mode & 0o777).toBe(0o600);
    const s = JSON.parse(readFileSync(file, 'utf8'));
    expect(s.token).toBe(core.endpoint.token);
    expect(s.endpoint.url).toBe(core.endpoint.url);
    await core.stop();
    expect(JSON.parse(readFileSync(file, 'utf8')).endpoint).toBeNull();
  });

  it('keeps the token across restarts and refuses a corrupt file without overwriting it', () => {
    const other = mkdtempSync(join(tmpdir(), 'echo-settings-'));
    try {
      const a = SettingsStore.open(other).get().token;
      expect(SettingsStore.open(other).get().token).toBe(a);
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
        { actor: { kind: 'agent', name: 't' }, kind: 'mutate' },
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
