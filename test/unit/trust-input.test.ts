// Trust rule 19 (issue 9 item 4) in the Electron host, with `electron` replaced:
// a decision or "developer mode on" counts only from the console window's main
// frame AND right after a real input event the main process saw on that window
// (`before-input-event`, `input-event`). The attacks call the IPC handlers
// directly, as a script in the renderer (or another window) would, against the
// REAL core (ledger, broker, settings) with a fake extension link; the gate's
// time window runs on an injected clock (no sleeps).
import { EventEmitter } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createConsoleCore, type ConsoleCore } from '../../src/main/core';
import type { AgentContext } from '../../src/main/core/broker';
import { createInputGate, gatedActionOf, RENDERER_ATTESTED_GATE, TRUSTED_INPUT_WINDOW_MS, type InputGate } from '../../src/main/core/trusted-input';
import { registerIpcHandlers, watchTrustedInput } from '../../src/main/ipc';
import { CHANNELS } from '../../src/shared/ipc';
import { FakeLink, makeDiscovery, sharedTab, until } from './broker.fixtures';

type Handler = (event: unknown, ...args: unknown[]) => Promise<unknown>;
const AGENT: AgentContext = { actor: { kind: 'agent', name: 'gate-test' }, kind: 'mutation' };

describe('the trusted-input gate (injected clock)', () => {
  it('admits one gated action within the window after a press, and no more', () => {
    let t = 1_000;
    const gate = createInputGate({ now: () => t });
    expect(gate.admit('decision')).toMatchObject({ ok: false, error: { code: 'no-trusted-input' } });
    expect(gate.noteInput('mouseDown')).toBe(true);
    t += TRUSTED_INPUT_WINDOW_MS;
    expect(gate.admit('decision')).toEqual({ ok: true, value: null });
    expect(gate.admit('decision')).toMatchObject({ ok: false, error: { code: 'no-trusted-input' } }); // spent
    gate.noteInput('keyDown');
    t += TRUSTED_INPUT_WINDOW_MS + 1;
    expect(gate.admit('developer-mode-on')).toMatchObject({ ok: false, error: { code: 'no-trusted-input', message: expect.stringContaining('developer mode') } });
  });

  it('moves, wheels, hovers and made-up types never arm it; a clock that went back does not either', () => {
    let t = 5_000;
    const gate = createInputGate({ now: () => t });
    for (const type of ['mouseMove', 'mouseWheel', 'mouseEnter', 'mouseLeave', 'gestureScrollUpdate', 'touchMove', 'pointerMove', 'undefined', '', 42, null, undefined, { type: 'mouseDown' }]) {
      expect(gate.noteInput(type)).toBe(false);
    }
    expect(gate.admit('decision').ok).toBe(false);
    gate.noteInput('mouseUp');
    t -= 1;
    expect(gate.admit('decision').ok).toBe(false);
  });

  it('says which calls are gated: decisions, developer mode ON (never off), developer-console lines', () => {
    expect(gatedActionOf('decideApproval', { requestId: 'r', decision: 'deny' })).toBe('decision');
    // The person's Revert of Live Patches is their decision on a page action (no dialog follows it).
    expect(gatedActionOf('revertPatches', { tabId: 1 })).toBe('decision');
    // Stop, Stop everything and the reload they offer are the person's decisions too (issue 12 item 5).
    expect(gatedActionOf('stopRequest', { requestId: 'r' })).toBe('decision');
    expect(gatedActionOf('stopScript', { runId: 'r' })).toBe('decision');
    expect(gatedActionOf('stopEverything', undefined)).toBe('decision');
    expect(gatedActionOf('reloadTab', { tabId: 1 })).toBe('decision');
    expect(gatedActionOf('listPatches', { tabId: 1 })).toBeNull();
    expect(gatedActionOf('updateSettings', { developerMode: true })).toBe('developer-mode-on');
    expect(gatedActionOf('updateSettings', { developerMode: false })).toBeNull();
    expect(gatedActionOf('updateSettings', { approvalTimeoutMs: 30_000 })).toBeNull();
    expect(gatedActionOf('runConsoleLine', { tabId: 1, code: 'x' })).toBe('developer-console-line');
    expect(gatedActionOf('getSnapshot', undefined)).toBeNull();
  });

  it('a host that cannot see input (web host) never switches developer mode on or takes a console line', () => {
    expect(RENDERER_ATTESTED_GATE.admit('developer-mode-on')).toMatchObject({ ok: false, error: { code: 'trusted-input-unavailable', message: expect.stringContaining('desktop app') } });
    expect(RENDERER_ATTESTED_GATE.admit('developer-console-line')).toMatchObject({ ok: false, error: { code: 'trusted-input-unavailable' } });
    expect(RENDERER_ATTESTED_GATE.admit('decision').ok).toBe(true);
  });
});

describe('Electron IPC: a decision or developer mode on from a script', () => {
  let dir: string;
  let link: FakeLink;
  let core: ConsoleCore;
  let t: number;
  let gate: InputGate;
  let contents: EventEmitter & { mainFrame: ReturnType<typeof frame> };
  let handlers: Map<string, Handler>;
  let requestId: string;

  function frame(over: Partial<{ url: string; processId: number; routingId: number; parent: unknown }> = {}) {
    return { url: 'app://echo/index.html', processId: 4, routingId: 1, parent: null as unknown, send: () => undefined, ...over };
  }
  const trusted = () => ({ sender: contents, senderFrame: contents.mainFrame });
  const invoke = (method: keyof typeof CHANNELS, event: unknown, ...args: unknown[]) => handlers.get(CHANNELS[method])!(event, ...args);
  /** What Electron emits in the main process when the person presses a mouse button on the window. */
  const realClick = () => contents.emit('input-event', {}, { type: 'mouseDown', modifiers: [] });
  const refusals = () => core.ledger.query({ event: 'refused', limit: 50 }).receipts;
  const decisions = () => core.ledger.query({ requestId, limit: 50 }).receipts.filter((r) => r.event === 'approved' || r.event === 'denied');

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'echo-trust-input-'));
    link = new FakeLink();
    link.tabs = [sharedTab(1)];
    t = 1_700_000_000_000;
    gate = createInputGate({ now: () => t });
    core = createConsoleCore({ dataDir: dir, mcpPort: 0, link, inputGate: gate, logger: { info: () => {}, warn: () => {} } });
    await core.start();
    contents = Object.assign(new EventEmitter(), { mainFrame: frame() });
    const win = { webContents: contents, isDestroyed: () => false };
    handlers = new Map();
    registerIpcHandlers({ handle: (c: string, f: Handler) => handlers.set(c, f), removeHandler: () => undefined } as never, core.api, () => win as never);
    watchTrustedInput(contents as never, gate);
    // One pending approval from an agent.
    link.discoveries.set(1, await makeDiscovery(1, [{ name: 'pay', inputSchema: { type: 'object' } }]));
    const d = await core.broker.discover({ tabId: 1 }, { ...AGENT, kind: 'read' });
    if (!d.ok) throw new Error('discover failed');
    void core.broker.invoke({ tabId: 1, name: 'pay', descriptorHash: d.value.tools[0]!.descriptorHash, arguments: {} }, AGENT);
    await until((l) => core.onEvent(l), () => core.broker.approvals.list().length === 1);
    requestId = core.broker.approvals.list()[0]!.requestId;
  });

  afterEach(async () => {
    await core.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('from the console frame with no real input: refused (no-trusted-input) with a refused receipt; the request stays pending', async () => {
    for (const decision of ['approve', 'deny'] as const) {
      const r = await invoke('decideApproval', trusted(), { requestId, decision });
      expect(r).toMatchObject({ ok: false, error: { code: 'no-trusted-input', message: expect.stringContaining('your own click or key press') } });
    }
    expect(core.broker.approvals.list().map((a) => a.requestId)).toEqual([requestId]);
    expect(decisions()).toEqual([]);
    const refused = refusals();
    expect(refused).toHaveLength(2);
    // Never "by person": nobody knows who sent it.
    expect(refused[0]).toMatchObject({ faculty: 'console', actor: { kind: 'console' }, detail: { method: 'decideApproval', action: 'decision', requestId, code: 'no-trusted-input' } });
  });

  it('a Revert of Live Patches from a script with no real input is refused the same way: nothing is reverted, a refused receipt', async () => {
    const r = await invoke('revertPatches', trusted(), { tabId: 1 });
    expect(r).toMatchObject({ ok: false, error: { code: 'no-trusted-input' } });
    expect(refusals()[0]).toMatchObject({ faculty: 'console', actor: { kind: 'console' }, detail: { method: 'revertPatches', action: 'decision', code: 'no-trusted-input' } });
    expect(core.ledger.query({ limit: 200 }).receipts.filter((x) => x.faculty === 'live-patch')).toEqual([]);
    // Right after a real press it passes the gate (and, with no patch active, reverts nothing).
    realClick();
    expect(await invoke('revertPatches', trusted(), { tabId: 1 })).toMatchObject({ ok: true, value: [] });
  });

  it('Stop, Stop everything and the tab reload from a script with no real input: refused, nothing stopped; right after a real press, Stop passes', async () => {
    expect(await invoke('stopRequest', trusted(), { requestId })).toMatchObject({ ok: false, error: { code: 'no-trusted-input' } });
    expect(await invoke('stopEverything', trusted())).toMatchObject({ ok: false, error: { code: 'no-trusted-input' } });
    expect(await invoke('reloadTab', trusted(), { tabId: 1 })).toMatchObject({ ok: false, error: { code: 'no-trusted-input' } });
    expect(refusals().map((r) => (r.detail as { method: string }).method).sort()).toEqual(['reloadTab', 'stopEverything', 'stopRequest']);
    expect(refusals().find((r) => (r.detail as { method: string }).method === 'stopRequest')).toMatchObject({ actor: { kind: 'console' }, detail: { action: 'decision', requestId } });
    // Nothing was stopped, denied, unshared or reloaded.
    expect(core.broker.approvals.list().map((a) => a.requestId)).toEqual([requestId]);
    expect(core.broker.inFlight.list().map((f) => f.requestId)).toEqual([requestId]);
    expect(core.broker.getSharedTabs().map((t) => t.tabId)).toEqual([1]);
    expect(link.requests.some((r) => r.op === 'reload-tab' || r.op === 'unshare-tab')).toBe(false);
    expect(core.ledger.query({ event: 'stopped-everything', limit: 5 }).receipts).toEqual([]);
    realClick();
    expect(await invoke('stopRequest', trusted(), { requestId })).toMatchObject({ ok: true, value: { requestId, afterDispatch: false } });
    await until((l) => core.onEvent(l), () => core.broker.inFlight.list().length === 0);
    expect(core.ledger.query({ requestId, limit: 1 }).receipts[0]).toMatchObject({ event: 'cancelled', actor: { kind: 'person' } });
  });

  it('a mouse move, or a press longer ago than the window, does not let it through', async () => {
    contents.emit('input-event', {}, { type: 'mouseMove' });
    expect(await invoke('decideApproval', trusted(), { requestId, decision: 'approve' })).toMatchObject({ ok: false, error: { code: 'no-trusted-input' } });
    realClick();
    t += TRUSTED_INPUT_WINDOW_MS + 1;
    expect(await invoke('decideApproval', trusted(), { requestId, decision: 'approve' })).toMatchObject({ ok: false, error: { code: 'no-trusted-input' } });
    expect(core.broker.approvals.list()).toHaveLength(1);
    expect(decisions()).toEqual([]);
  });

  it('from another window, a sub-frame or a navigated frame, even right after a real press: forbidden-sender, nothing decided, no receipt', async () => {
    const others = [
      { sender: Object.assign(new EventEmitter(), { mainFrame: frame() }), senderFrame: frame() },
      { sender: contents, senderFrame: frame({ parent: contents.mainFrame, routingId: 7 }) },
      { sender: contents, senderFrame: { ...contents.mainFrame, url: 'https://evil.example/' } },
    ];
    for (const event of others) {
      realClick();
      expect(await invoke('decideApproval', event, { requestId, decision: 'approve' })).toMatchObject({ ok: false, error: { code: 'forbidden-sender' } });
      expect(await invoke('updateSettings', event, { developerMode: true })).toMatchObject({ ok: false, error: { code: 'forbidden-sender' } });
    }
    expect(core.broker.approvals.list()).toHaveLength(1);
    expect(core.developerMode.on).toBe(false);
    expect(refusals()).toEqual([]); // an unknown sender cannot grow the ledger
  });

  it('right after a real press (input-event or before-input-event) it passes: "approved" by the person; the press is then spent', async () => {
    realClick();
    t += 50;
    expect(await invoke('decideApproval', trusted(), { requestId, decision: 'approve' })).toEqual({ ok: true, value: null });
    await until((l) => core.onEvent(l), () => decisions().length === 1);
    expect(decisions()[0]).toMatchObject({ event: 'approved', actor: { kind: 'person' } });

    // Developer mode: a plain settings call cannot switch it on; after a real key press it can; off needs nothing.
    expect(await invoke('updateSettings', trusted(), { developerMode: true })).toMatchObject({ ok: false, error: { code: 'no-trusted-input' } });
    expect(core.settings.get().developerMode).toBe(false);
    expect(refusals()[0]).toMatchObject({ actor: { kind: 'console' }, detail: { method: 'updateSettings', action: 'developer-mode-on' } });
    contents.emit('before-input-event', {}, { type: 'keyDown', key: ' ' });
    expect(await invoke('updateSettings', trusted(), { developerMode: true })).toMatchObject({ ok: true, value: { developerMode: true } });
    expect(core.ledger.query({ event: 'developer-mode-on', limit: 5 }).receipts[0]).toMatchObject({ actor: { kind: 'person' } });
    // The key press admitted one action only: a second "on" from a script right after is refused...
    expect(gate.admit('developer-mode-on').ok).toBe(false);
    // ...while switching it off (less power) and other settings need no press.
    expect(await invoke('updateSettings', trusted(), { developerMode: false })).toMatchObject({ ok: true, value: { developerMode: false } });
    expect(await invoke('updateSettings', trusted(), { approvalTimeoutMs: 30_000 })).toMatchObject({ ok: true });
  });
});
