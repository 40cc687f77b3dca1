// The preload (src/preload/index.ts) with `electron` replaced: it exposes
// exactly one object, `echo`, with one method per ConsoleApi method plus
// onEvent; each method invokes its own channel; no raw ipcRenderer leaks.
import { describe, expect, it, vi } from 'vitest';

const h = vi.hoisted(() => ({
  exposed: [] as [string, Record<string, unknown>][],
  invoke: vi.fn(async (..._args: unknown[]) => ({ ok: true, value: null })),
  on: vi.fn(),
  removeListener: vi.fn(),
}));

vi.mock('electron', () => ({
  contextBridge: { exposeInMainWorld: (key: string, api: Record<string, unknown>) => h.exposed.push([key, api]) },
  ipcRenderer: { invoke: h.invoke, on: h.on, removeListener: h.removeListener, send: vi.fn(), sendSync: vi.fn() },
}));

import '../../src/preload/index';
import { API_METHODS } from '../../src/shared/api-schemas';
import { CHANNELS } from '../../src/shared/ipc';

describe('preload', () => {
  it('exposes one object, window.echo, with one method per ConsoleApi method plus onEvent', () => {
    expect(h.exposed.map(([k]) => k)).toEqual(['echo']);
    const api = h.exposed[0]![1];
    expect(Object.keys(api).sort()).toEqual([...API_METHODS, 'onEvent'].sort());
    for (const v of Object.values(api)) expect(typeof v).toBe('function');
    expect(api).not.toHaveProperty('send');
    expect(api).not.toHaveProperty('invoke');
    expect(api).not.toHaveProperty('ipcRenderer');
  });

  it('invokes each method on its own channel with its one argument', async () => {
    const api = h.exposed[0]![1] as Record<string, (p?: unknown) => Promise<unknown>>;
    for (const m of API_METHODS) {
      h.invoke.mockClear();
      const p = { probe: m };
      await api[m]!(p);
      const expected = ['getSnapshot', 'verifyLedger', 'unpair', 'listShareableTabs', 'listPolicyRules', 'listScriptRuns', 'stopEverything'].includes(m) ? [CHANNELS[m]] : [CHANNELS[m], p];
      expect(h.invoke.mock.calls).toEqual([expected]);
    }
  });

  it('hands listeners the event only, never the IPC event, and unsubscribes', () => {
    const api = h.exposed[0]![1] as { onEvent: (l: (e: unknown) => void) => () => void };
    const listener = vi.fn();
    const off = api.onEvent(listener);
    expect(h.on).toHaveBeenCalledWith(CHANNELS.events, expect.any(Function));
    const handler = h.on.mock.calls[0]![1] as (ev: unknown, e: unknown) => void;
    handler({ sender: 'ipcRenderer', senderFrame: {} }, { kind: 'link', link: { state: 'connected', paired: true } });
    expect(listener.mock.calls).toEqual([[{ kind: 'link', link: { state: 'connected', paired: true } }]]);
    off();
    expect(h.removeListener).toHaveBeenCalledWith(CHANNELS.events, handler);
    expect(() => api.onEvent('nope' as never)).toThrow(TypeError);
  });
});
