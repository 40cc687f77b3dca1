// The Electron host's IPC (src/main/ipc.ts) with fakes for ipcMain, the window
// and its frames: one handler per CHANNELS method, the sender check (foreign
// webContents, sub-frame, navigated frame, disposed frame), payload validation
// by the core's one validation (src/main/core/api/payloads.ts; the fake console
// runs it like the core does), Results instead of throws, and the event push.
import { describe, expect, it, vi } from 'vitest';
import { dispatchCall } from '../../src/main/api-dispatch';
import { validateApiPayload } from '../../src/main/core/api/payloads';
import { API_METHODS, isApiMethod } from '../../src/shared/api-schemas';
import { isTrustedSender, pushEvent, registerIpcHandlers } from '../../src/main/ipc';
import { CHANNELS, type ConsoleApi } from '../../src/shared/ipc';
import { FakeConsole, sampleApproval } from '../support/fake-console';

type Handler = (event: unknown, ...args: unknown[]) => Promise<unknown>;

function frame(over: Partial<{ url: string; processId: number; routingId: number; parent: unknown }> = {}) {
  return { url: 'app://echo/index.html', processId: 4, routingId: 1, parent: null, send: vi.fn(), ...over };
}

function setup(api: ConsoleApi = new FakeConsole({ approvals: [sampleApproval()] })) {
  const handlers = new Map<string, Handler>();
  const ipcMain = {
    handle: vi.fn((ch: string, f: Handler) => handlers.set(ch, f)),
    removeHandler: vi.fn((ch: string) => handlers.delete(ch)),
  };
  const mainFrame = frame();
  const contents = { mainFrame };
  const win = { webContents: contents, isDestroyed: () => false };
  const dispose = registerIpcHandlers(ipcMain as never, api, () => win as never);
  const trusted = { sender: contents, senderFrame: mainFrame };
  const invoke = (method: keyof typeof CHANNELS, event: unknown = trusted, ...args: unknown[]) => handlers.get(CHANNELS[method])!(event, ...args);
  return { handlers, ipcMain, win, contents, mainFrame, trusted, invoke, dispose, api };
}

describe('IPC handlers', () => {
  it('registers exactly one handler per ConsoleApi method, and removes them', () => {
    const { handlers, dispose } = setup();
    expect([...handlers.keys()].sort()).toEqual(API_METHODS.map((m) => CHANNELS[m]).sort());
    expect(handlers.has(CHANNELS.events)).toBe(false);
    dispose();
    expect(handlers.size).toBe(0);
  });

  it('answers the trusted console frame', async () => {
    const { invoke } = setup();
    expect(await invoke('getSnapshot')).toMatchObject({ ok: true, value: { approvals: [{ requestId: 'req-1' }] } });
    expect(await invoke('decideApproval', undefined, { requestId: 'req-1', decision: 'deny', reason: 'no' })).toEqual({ ok: true, value: null });
  });

  it('rejects a foreign frame, window, or URL without calling the core', async () => {
    const fake = new FakeConsole({ approvals: [sampleApproval()] });
    const { invoke, contents, mainFrame } = setup(fake);
    const foreign = [
      { sender: { mainFrame: frame() }, senderFrame: frame() }, // another webContents
      { sender: contents, senderFrame: frame({ parent: mainFrame, routingId: 7 }) }, // a sub-frame
      { sender: contents, senderFrame: frame({ routingId: 9 }) }, // a frame that is not the top frame
      { sender: contents, senderFrame: { ...mainFrame, url: 'https://evil.example/' } }, // navigated away
      { sender: contents, senderFrame: { ...mainFrame, url: 'app://evil/index.html' } },
      { sender: contents, senderFrame: null }, // disposed
      {
        sender: contents,
        get senderFrame() {
          throw new Error('Render frame was disposed');
        },
      },
    ];
    for (const event of foreign) {
      expect(await invoke('decideApproval', event, { requestId: 'req-1', decision: 'approve' })).toMatchObject({ ok: false, error: { code: 'forbidden-sender' } });
    }
    expect(fake.calls).toEqual([]);
  });

  it('rejects everything once the window is gone', async () => {
    const fake = new FakeConsole();
    const handlers = new Map<string, Handler>();
    registerIpcHandlers({ handle: (c: string, f: Handler) => handlers.set(c, f), removeHandler: () => undefined } as never, fake, () => null);
    expect(await handlers.get(CHANNELS.getSnapshot)!({ sender: {}, senderFrame: frame() })).toMatchObject({ ok: false, error: { code: 'forbidden-sender' } });
    expect(isTrustedSender({ sender: {} as never, senderFrame: frame() as never }, { isDestroyed: () => true } as never)).toBe(false);
  });

  it.each<[keyof typeof CHANNELS, unknown[]]>([
    ['getSnapshot', [{ x: 1 }]],
    ['getSnapshot', ['x']],
    ['decideApproval', []],
    ['decideApproval', [{ requestId: 'req-1', decision: 'approve' }, 'extra']],
    ['decideApproval', [{ requestId: 'req-1', decision: 'yes' }]],
    ['decideApproval', [{ requestId: 'req-1', decision: 'approve', grant: true }]],
    ['decideApproval', [{ requestId: '', decision: 'approve' }]],
    ['decideApproval', [{ requestId: 'a b', decision: 'approve' }]],
    ['decideApproval', [{ requestId: 'x'.repeat(129), decision: 'approve' }]],
    ['decideApproval', [{ requestId: 'req-1', decision: 'deny', reason: 'r'.repeat(501) }]],
    ['decideApproval', [{ requestId: 1, decision: 'approve' }]],
    ['decideApproval', [null]],
    ['decideApproval', [['req-1', 'approve']]],
    ['queryReceipts', [{ limit: 501 }]],
    ['queryReceipts', [{ limit: 0 }]],
    ['queryReceipts', [{ event: 'hacked' }]],
    ['queryReceipts', [{ from: -1 }]],
    ['queryReceipts', [{ cursor: 5 }]],
    ['confirmPairing', [{ accept: 'true' }]],
    ['confirmPairing', [{}]],
    ['shareTab', [{ tabId: -1 }]],
    ['shareTab', [{ tabId: '1' }]],
    ['shareTab', [{ tabId: 1.5 }]],
    ['shareTab', [{ tabId: 2 ** 31 }]],
    ['unshareTab', [{}]],
    ['createAgentToken', [{}]],
    ['createAgentToken', [{ name: 'x', secret: 'mine' }]],
    ['revokeAgentToken', [{ id: 'not-an-id' }]],
    ['updateSettings', [{}]],
    ['updateSettings', [{ approvalTimeoutMs: 1 }]],
    ['updateSettings', [{ approvalTimeoutMs: 10_000.5 }]],
    ['updateSettings', [{ developerMode: 'on' }]],
    ['updateSettings', [{ approvalTimeoutMs: 60_000, __proto__: { polluted: true } }]],
    ['updateSettings', [JSON.parse('{"approvalTimeoutMs": 60000, "__proto__": {"polluted": true}}')]],
    ['listPolicyRules', [{ all: true }]],
    ['addPolicyRule', [{}]],
    ['addPolicyRule', [{ rule: { action: 'allow', kind: 'mutate' } }]],
    ['addPolicyRule', [{ rule: { action: 'allow', faculty: 'console' } }]],
    ['addPolicyRule', [{ rule: { action: 'allow', readOnlyHint: true } }]],
    ['addPolicyRule', [JSON.parse('{"rule": {"action": "deny", "__proto__": {"action": "allow"}}}')]],
    ['removePolicyRule', [{ index: -1, rule: { action: 'deny' } }]],
    ['removePolicyRule', [{ index: 0 }]],
  ])('%s rejects payload %j', async (method, args) => {
    const fake = new FakeConsole({ approvals: [sampleApproval()] });
    const { invoke, trusted } = setup(fake);
    const r = await invoke(method, trusted, ...args);
    expect(r).toMatchObject({ ok: false, error: { code: 'invalid-params' } });
    expect(fake.calls).toEqual([]);
  });

  it.each<[string, unknown[]]>([
    ['getSnapshot', []],
    ['getSnapshot', [{}]],
    ['decideApproval', [{ requestId: 'req-1', decision: 'approve' }]],
    ['queryReceipts', [{}]],
    ['queryReceipts', [{ limit: 500, event: 'approved', origin: 'https://a.example', cursor: 'abc', from: 0, to: 1 }]],
    ['confirmPairing', [{ accept: false }]],
    ['shareTab', [{ tabId: 0 }]],
    ['updateSettings', [{ approvalTimeoutMs: 60_000 }]],
    ['updateSettings', [{ developerMode: true }]],
    ['listPolicyRules', []],
    ['addPolicyRule', [{ rule: { tabId: 3, kind: 'low-impact-mutation', action: 'allow' } }]],
    ['removePolicyRule', [{ index: 0, rule: { origin: 'https://a.example', action: 'deny', reason: 'no' } }]],
  ])('%s accepts payload %j', async (method, args) => {
    expect(validateApiPayload(method as keyof ConsoleApi, args[0]).ok).toBe(true);
    const fake = new FakeConsole({ approvals: [sampleApproval()] });
    const { invoke, trusted } = setup(fake);
    const r = (await invoke(method as keyof ConsoleApi, trusted, ...args)) as { ok: boolean; error?: { code: string } };
    expect(r.ok || r.error?.code).not.toBe('invalid-params'); // the fake may refuse the work (no such tab), never the payload
    // passed through unchanged: the host does not rewrite or strip what the core validates
    expect(fake.calls).toEqual([{ method, params: method === 'getSnapshot' ? undefined : args[0] }]);
  });

  it('refuses method names that are not ConsoleApi methods', async () => {
    const fake = new FakeConsole();
    for (const m of ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'onEvent', '', 42, null]) {
      expect(isApiMethod(m)).toBe(false);
      expect(await dispatchCall(fake, m, [])).toMatchObject({ ok: false, error: { code: 'unknown-method' } });
    }
    expect(fake.calls).toEqual([]);
  });

  it('turns a throwing or malformed core answer into a Result', async () => {
    const api = new FakeConsole();
    api.getSnapshot = async () => {
      throw new Error('disk on fire');
    };
    api.verifyLedger = (async () => 'not a result') as never;
    const { invoke } = setup(api);
    expect(await invoke('getSnapshot')).toEqual({ ok: false, error: { code: 'internal', message: 'disk on fire' } });
    expect(await invoke('verifyLedger')).toMatchObject({ ok: false, error: { code: 'internal' } });
  });
});

describe('event push', () => {
  it('sends events to the top frame only while it shows the app', () => {
    const { win, mainFrame } = setup();
    pushEvent(win as never, { kind: 'approvals', approvals: [] });
    expect(mainFrame.send).toHaveBeenCalledWith(CHANNELS.events, { kind: 'approvals', approvals: [] });
    mainFrame.send.mockClear();
    mainFrame.url = 'https://evil.example/';
    pushEvent(win as never, { kind: 'approvals', approvals: [] });
    expect(mainFrame.send).not.toHaveBeenCalled();
    pushEvent(null, { kind: 'approvals', approvals: [] });
  });
});
