// The Electron entry (src/main/index.ts) with `electron` and the core replaced:
// the single-instance lock, the scheme registration before ready, and the
// wiring on ready (hardened session, app: protocol, safeStorage secret store
// handed to the core, one IPC handler per channel, events pushed and announced).
import { beforeEach, describe, expect, it, vi } from 'vitest';

const h = vi.hoisted(() => {
  const state = {
    lock: true,
    calls: [] as string[],
    appHandlers: new Map<string, (...a: unknown[]) => void>(),
    ipc: new Map<string, unknown>(),
    coreOpts: null as unknown,
    coreListener: null as null | ((e: unknown) => void),
    ready: null as null | Promise<void>,
    sent: [] as unknown[],
    notifications: 0,
    notificationClicks: [] as Array<() => void>,
    inputListeners: new Map<string, (...a: unknown[]) => void>(),
  };
  return state;
});

vi.mock('electron', () => {
  const mainFrame = { url: 'app://echo/index.html', processId: 1, routingId: 1, parent: null, send: (...a: unknown[]) => h.sent.push(a) };
  class BrowserWindow {
    webContents = { mainFrame, on: (ev: string, f: (...a: unknown[]) => void) => h.inputListeners.set(ev, f), off: () => undefined };
    constructor() {
      h.calls.push('window');
    }
    once() {}
    on() {}
    loadURL() {
      return Promise.resolve();
    }
    isDestroyed() {
      return false;
    }
    isMinimized() {
      return false;
    }
    show() {
      h.calls.push('window-show');
    }
    focus() {}
  }
  const session = {
    setPermissionRequestHandler: () => h.calls.push('permission-request'),
    setPermissionCheckHandler: () => h.calls.push('permission-check'),
    setDevicePermissionHandler: () => h.calls.push('device-permission'),
    webRequest: { onHeadersReceived: () => h.calls.push('csp'), onBeforeRequest: () => h.calls.push('request-filter') },
    protocol: { handle: (scheme: string) => h.calls.push(`protocol:${scheme}`) },
    on: () => undefined,
  };
  return {
    app: {
      requestSingleInstanceLock: () => h.lock,
      quit: () => h.calls.push('quit'),
      exit: () => h.calls.push('exit'),
      setPath: (name: string) => h.calls.push(`setPath:${name}`),
      getPath: () => '/tmp/echo-test-data',
      setBadgeCount: (n: number) => (h.calls.push(`app-badge:${n}`), true),
      on: (ev: string, f: (...a: unknown[]) => void) => h.appHandlers.set(ev, f),
      whenReady: () => (h.ready = Promise.resolve()),
    },
    BrowserWindow,
    ipcMain: { handle: (ch: string, f: unknown) => h.ipc.set(ch, f), removeHandler: () => undefined },
    protocol: { registerSchemesAsPrivileged: (s: { scheme: string }[]) => h.calls.push(`register:${s.map((x) => x.scheme).join()}`) },
    safeStorage: { isEncryptionAvailable: () => true, getSelectedStorageBackend: () => 'gnome_libsecret', encryptString: () => Buffer.from(''), decryptString: () => '' },
    session: { defaultSession: session },
    shell: { openExternal: async () => undefined },
    Menu: { buildFromTemplate: () => ({}) },
    nativeImage: { createFromDataURL: () => ({}) },
    Tray: class {
      setToolTip(t: string) {
        h.calls.push(`tray-tooltip:${t}`);
      }
      setTitle(t: string) {
        h.calls.push(`tray-title:${t}`);
      }
      setContextMenu() {}
      on() {}
    },
    Notification: class {
      static isSupported() {
        return true;
      }
      constructor() {
        h.notifications++;
      }
      on(ev: string, f: () => void) {
        if (ev === 'click') h.notificationClicks.push(f);
      }
      show() {}
    },
  };
});

vi.mock('../../src/main/core', () => ({
  createConsoleCore: (opts: unknown) => {
    h.coreOpts = opts;
    return {
      start: async () => void h.calls.push('core-start'),
      stop: async () => undefined,
      api: {},
      onEvent: (l: (e: unknown) => void) => {
        h.coreListener = l;
        return () => undefined;
      },
      endpoint: { url: '', token: '', stdioCommand: '' },
      developerMode: { touch: () => void h.calls.push('developer-mode-touch') },
    };
  },
}));

beforeEach(() => {
  vi.resetModules();
  h.calls = [];
  h.appHandlers.clear();
  h.ipc.clear();
  h.coreOpts = null;
  h.coreListener = null;
  h.ready = null;
  h.sent = [];
  h.notifications = 0;
  h.notificationClicks = [];
  h.inputListeners.clear();
});

async function settle() {
  await h.ready;
  for (let i = 0; i < 10; i++) await Promise.resolve();
}

describe('Electron entry', () => {
  it('quits at once when another instance holds the lock', async () => {
    h.lock = false;
    await import('../../src/main/index');
    expect(h.calls).toContain('quit');
    expect(h.ready).toBeNull();
    expect(h.calls).not.toContain('window');
  });

  it('registers the app: scheme before ready and wires the host on ready', async () => {
    h.lock = true;
    const { SafeStorageSecretStore } = await import('../../src/main/secret-store');
    await import('../../src/main/index');
    expect(h.calls[0]).toBe('register:app');
    expect(h.appHandlers.has('second-instance')).toBe(true);
    expect(h.appHandlers.has('web-contents-created')).toBe(true);
    await settle();
    for (const step of ['permission-request', 'permission-check', 'device-permission', 'csp', 'request-filter', 'protocol:app', 'core-start', 'window']) {
      expect(h.calls).toContain(step);
    }
    expect(h.calls.indexOf('csp')).toBeLessThan(h.calls.indexOf('window'));
    expect((h.coreOpts as { secretStore: unknown }).secretStore).toBeInstanceOf(SafeStorageSecretStore);
    // Trust rule 19: the core's gate is fed by the console window's real input, seen in the main process.
    const gate = (h.coreOpts as { inputGate: { admit(a: string): { ok: boolean } } }).inputGate;
    expect(gate.admit('decision').ok).toBe(false);
    h.inputListeners.get('input-event')!({}, { type: 'mouseDown' });
    expect(gate.admit('decision').ok).toBe(true);
    h.inputListeners.get('before-input-event')!({}, { type: 'keyDown' });
    expect(gate.admit('developer-mode-on').ok).toBe(true);
    // Each press also restarts developer mode's idle time (issue 11 item 2); a pointer move does not.
    const touches = () => h.calls.filter((c) => c === 'developer-mode-touch').length;
    expect(touches()).toBe(2);
    h.inputListeners.get('input-event')!({}, { type: 'mouseMove' });
    expect(touches()).toBe(2);
    // One handler per ConsoleApi method, however many there are.
    expect(h.ipc.size).toBe((await import('../../src/shared/api-schemas')).API_METHODS.length);

    h.coreListener!({ kind: 'approvals', approvals: [{ requestId: 'r1', agent: { name: 'A' }, verb: 'run a page tool', origin: 'https://x.example' }] });
    expect(h.sent).toHaveLength(1);
    expect(h.notifications).toBe(1);
    // Issue 12 item 7: the tray's tooltip and title and the app's badge carry the count...
    expect(h.calls).toContain('tray-tooltip:Echo Console: 1 approval waiting');
    expect(h.calls).toContain('tray-title:1');
    expect(h.calls).toContain('app-badge:1');
    // ...and developer mode is said in the tooltip.
    h.coreListener!({ kind: 'settings', settings: { approvalTimeoutMs: 1, developerMode: true, developerModeIdleMinutes: 30 } });
    expect(h.calls).toContain('tray-tooltip:Echo Console: 1 approval waiting · DEVELOPER MODE on');
    // A click on the notification brings the window forward and opens that request's dialog in the renderer.
    h.sent = [];
    h.notificationClicks[0]!();
    expect(h.sent).toContainEqual(['console:event', { kind: 'open-approval', requestId: 'r1' }]);
    h.coreListener!({ kind: 'approvals', approvals: [] });
    expect(h.calls.at(-1)).toBe('app-badge:0');
    expect(h.calls).toContain('tray-title:');
  });
});
