// The Electron host's security settings with the `electron` module replaced
// (Electron's binary cannot run here): window webPreferences, CSP text, the
// session's permission / header / request rules, the app: protocol, the
// navigation and window-open rules, and the notification text.
import { EventEmitter } from 'node:events';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeEach, describe, expect, it, vi } from 'vitest';

const h = vi.hoisted(() => ({ windows: [] as { opts: any; url?: string; once: any }[], notifications: [] as any[], clicks: [] as Array<() => void> }));

vi.mock('electron', () => {
  class BrowserWindow {
    opts: any;
    url?: string;
    constructor(opts: any) {
      this.opts = opts;
      h.windows.push(this as any);
    }
    once() {}
    loadURL(url: string) {
      this.url = url;
      return Promise.resolve();
    }
  }
  class Notification {
    static isSupported() {
      return true;
    }
    constructor(public opts: any) {
      h.notifications.push(opts);
    }
    on(ev: string, f: () => void) {
      if (ev === 'click') h.clicks.push(f);
    }
    show() {}
  }
  class Tray {
    setToolTip() {}
    setContextMenu() {}
    on() {}
  }
  return {
    BrowserWindow,
    Notification,
    Tray,
    Menu: { buildFromTemplate: (t: unknown) => t },
    nativeImage: { createFromDataURL: (u: string) => ({ dataUrl: u }) },
  };
});

import { buildCsp, metaCsp } from '../../src/main/csp';
import {
  APP_SCHEME_PRIVILEGES,
  APP_URL,
  ELECTRON_CSP,
  hardenSession,
  hardenWebContents,
  registerAppProtocol,
  secureWebPreferences,
  withSecurityHeaders,
} from '../../src/main/security';
import { ApprovalNotifier, approvalNotificationText, TrayBadge, trayToolTip } from '../../src/main/tray';
import { createMainWindow } from '../../src/main/window';
import { sampleApproval } from '../support/fake-console';

describe('window', () => {
  it('uses sandboxed, isolated, Node-free webPreferences', () => {
    expect(secureWebPreferences('/app/out/preload/index.cjs', {})).toMatchObject({
      preload: '/app/out/preload/index.cjs',
      sandbox: true,
      contextIsolation: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
      experimentalFeatures: false,
      navigateOnDragDrop: false,
      devTools: false,
    });
    expect(secureWebPreferences('/p', {})).not.toHaveProperty('enableBlinkFeatures');
    expect(secureWebPreferences('/p', { ECHO_CONSOLE_DEVTOOLS: '1' }).devTools).toBe(true);
  });

  it('creates the window with those preferences and loads the app: URL, never file:', () => {
    createMainWindow('/app/out/preload/index.cjs');
    const w = h.windows.at(-1)!;
    expect(w.opts.webPreferences).toEqual(secureWebPreferences('/app/out/preload/index.cjs'));
    expect(w.opts.show).toBe(false);
    expect(w.url).toBe('app://echo/index.html');
    expect(APP_URL).toBe('app://echo/index.html');
  });

  it('registers the app: scheme as standard and secure, without CSP bypass', () => {
    expect(APP_SCHEME_PRIVILEGES).toMatchObject({
      scheme: 'app',
      privileges: { standard: true, secure: true, bypassCSP: false, corsEnabled: false, allowServiceWorkers: false },
    });
  });
});

describe('CSP', () => {
  it('is strict', () => {
    const directives = Object.fromEntries(ELECTRON_CSP.split('; ').map((d) => [d.split(' ')[0], d.split(' ').slice(1).join(' ')]));
    expect(directives).toMatchObject({
      'default-src': "'self'",
      'script-src': "'self'",
      'style-src': "'self'",
      'connect-src': "'self'",
      'object-src': "'none'",
      'base-uri': "'none'",
      'frame-ancestors': "'none'",
      'form-action': "'none'",
    });
    expect(ELECTRON_CSP).not.toMatch(/unsafe-inline|unsafe-eval|\*|data:|https?:/);
  });

  it('adds only a plain origin to connect-src', () => {
    expect(buildCsp(['ws://127.0.0.1:4000'])).toContain("connect-src 'self' ws://127.0.0.1:4000;");
    expect(() => buildCsp(["ws://x; script-src 'unsafe-inline'"])).toThrow();
  });

  it('is mirrored exactly by the meta tag of src/renderer/index.html', () => {
    const html = readFileSync(path.resolve('src/renderer/index.html'), 'utf8');
    const meta = /<meta http-equiv="Content-Security-Policy" content="([^"]+)"/.exec(html)?.[1];
    expect(meta).toBe(metaCsp());
  });
});

/** A fake Session that records the handlers the host installs. */
function fakeSession() {
  const s = new EventEmitter() as any;
  s.setPermissionRequestHandler = vi.fn((f) => (s.permissionRequest = f));
  s.setPermissionCheckHandler = vi.fn((f) => (s.permissionCheck = f));
  s.setDevicePermissionHandler = vi.fn((f) => (s.devicePermission = f));
  s.webRequest = {
    onHeadersReceived: vi.fn((f) => (s.headersReceived = f)),
    onBeforeRequest: vi.fn((f) => (s.beforeRequest = f)),
  };
  s.protocol = { handle: vi.fn((scheme, f) => (s.protocolHandlers = { ...(s.protocolHandlers ?? {}), [scheme]: f })) };
  return s;
}

describe('session', () => {
  it('denies every permission request and check', () => {
    const s = fakeSession();
    hardenSession(s);
    for (const permission of ['media', 'notifications', 'clipboard-read', 'clipboard-sanitized-write', 'geolocation', 'openExternal', 'fileSystem', 'unknown']) {
      const cb = vi.fn();
      s.permissionRequest({}, permission, cb, {});
      expect(cb).toHaveBeenCalledWith(false);
      expect(s.permissionCheck({}, permission, 'app://echo', {})).toBe(false);
    }
    expect(s.devicePermission({ deviceType: 'usb' })).toBe(false);
  });

  it('puts the CSP and security headers on every response, replacing any other CSP', () => {
    const s = fakeSession();
    hardenSession(s);
    const cb = vi.fn();
    s.headersReceived({ url: 'app://echo/index.html', responseHeaders: { 'content-security-policy': ["script-src 'unsafe-inline'"], 'Content-Type': ['text/html'] } }, cb);
    const headers = cb.mock.calls[0]![0].responseHeaders;
    expect(headers['Content-Security-Policy']).toEqual([ELECTRON_CSP]);
    expect(headers['content-security-policy']).toBeUndefined();
    expect(headers['X-Content-Type-Options']).toEqual(['nosniff']);
    expect(headers['Content-Type']).toEqual(['text/html']);
    expect(withSecurityHeaders(undefined)['Content-Security-Policy']).toEqual([ELECTRON_CSP]);
  });

  it.each([
    ['app://echo/assets/index.js', false],
    ['https://example.com/track.gif', true],
    ['http://127.0.0.1:8080/', true],
    ['ws://127.0.0.1:9/', true],
    ['file:///etc/passwd', true],
    ['app://evil/x', true],
  ])('request to %s cancelled: %s', (url, cancel) => {
    const s = fakeSession();
    hardenSession(s);
    const cb = vi.fn();
    s.beforeRequest({ url }, cb);
    expect(cb).toHaveBeenCalledWith({ cancel });
  });

  it('cancels downloads', () => {
    const s = fakeSession();
    hardenSession(s);
    const event = { preventDefault: vi.fn() };
    s.emit('will-download', event, {}, {});
    expect(event.preventDefault).toHaveBeenCalled();
  });
});

describe('app: protocol', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'echo-app-'));
  mkdirSync(path.join(dir, 'assets'));
  writeFileSync(path.join(dir, 'index.html'), '<!doctype html>');
  writeFileSync(path.join(dir, 'assets', 'a.js'), '1');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const serve = async (url: string) => {
    const s = fakeSession();
    registerAppProtocol(s, dir);
    return (await s.protocolHandlers.app({ url })) as Response;
  };

  it('serves the renderer with the CSP', async () => {
    const r = await serve('app://echo/index.html');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-security-policy')).toBe(ELECTRON_CSP);
    expect(r.headers.get('content-type')).toMatch(/^text\/html/);
    expect((await serve('app://echo/assets/a.js')).headers.get('content-type')).toMatch(/^text\/javascript/);
  });

  it.each(['app://other/index.html', 'app://echo/../../../etc/passwd', 'app://echo/%2e%2e/%2e%2e/etc/passwd', 'app://echo/missing.js', 'app://echo/assets/'])(
    'answers 404 for %s',
    async (url) => {
      expect((await serve(url)).status).toBe(404);
    },
  );
});

/** A fake WebContents that records the window-open handler and forwards events. */
function fakeContents() {
  const c = new EventEmitter() as any;
  c.setWindowOpenHandler = vi.fn((f) => (c.openHandler = f));
  return c;
}
const ev = (over: Record<string, unknown> = {}) => ({ preventDefault: vi.fn(), ...over });

describe('navigation rules', () => {
  let c: any;
  let openExternal: ReturnType<typeof vi.fn>;
  beforeEach(() => {
    c = fakeContents();
    openExternal = vi.fn(async () => undefined);
    hardenWebContents(c, openExternal as (url: string) => Promise<void>);
  });

  it('denies every new window, and opens only a checked https link externally', () => {
    expect(c.openHandler({ url: 'https://example.com/docs' })).toEqual({ action: 'deny' });
    expect(openExternal).toHaveBeenCalledWith('https://example.com/docs');
    for (const url of ['javascript:alert(1)', 'file:///etc/passwd', 'app://echo/index.html', 'https://user:pw@example.com/', 'smb://x/y', 'http://example.com']) {
      expect(c.openHandler({ url })).toEqual({ action: 'deny' });
    }
    expect(openExternal).toHaveBeenCalledTimes(1);
  });

  it('blocks navigation away from the app', () => {
    for (const url of ['https://example.com/', 'file:///etc/passwd', 'data:text/html,x', 'app://evil/']) {
      const e = ev({ url });
      c.emit('will-navigate', e, url);
      expect(e.preventDefault).toHaveBeenCalled();
      const r = ev({ url });
      c.emit('will-redirect', r, url);
      expect(r.preventDefault).toHaveBeenCalled();
    }
    const ok = ev({ url: 'app://echo/index.html' });
    c.emit('will-navigate', ok, 'app://echo/index.html');
    expect(ok.preventDefault).not.toHaveBeenCalled();
  });

  it('never lets a sub-frame navigate, and never attaches a webview', () => {
    const sub = ev({ url: 'app://echo/index.html', isMainFrame: false });
    c.emit('will-frame-navigate', sub);
    expect(sub.preventDefault).toHaveBeenCalled();
    const wv = ev();
    c.emit('will-attach-webview', wv, {}, {});
    expect(wv.preventDefault).toHaveBeenCalled();
  });
});

describe('approval notification', () => {
  it('holds no page text and escapes markup', () => {
    const base = sampleApproval(Date.now());
    const a = sampleApproval(Date.now(), { agent: { name: '<b>Agent</b>' }, subject: { ...base.subject, toolName: 'evil_tool', title: 'Click me <a href=x>' } });
    const { title, body } = approvalNotificationText(a);
    expect(title).toBe('Approval waiting');
    expect(body).toBe('&#60;b&#62;Agent&#60;/b&#62; asks to run a page tool on shop.example.');
    expect(body).not.toContain('evil_tool');
    expect(body).not.toContain('Click me');
  });

  it('notifies once per new request', () => {
    const n = new ApprovalNotifier(() => undefined);
    const before = h.notifications.length;
    const a = sampleApproval();
    n.update([a]);
    n.update([a]);
    n.update([a, sampleApproval(Date.now(), { requestId: 'req-9' })]);
    expect(h.notifications.length - before).toBe(2);
  });
});

describe('tray badge and notification click (issue 12 item 7)', () => {
  it("a click on a request's notification names that request (the host opens its dialog)", () => {
    const opened: string[] = [];
    const n = new ApprovalNotifier((id) => opened.push(id));
    h.clicks = [];
    n.update([sampleApproval(Date.now(), { requestId: 'req-a' }), sampleApproval(Date.now(), { requestId: 'req-b' })]);
    h.clicks[1]!();
    h.clicks[0]!();
    expect(opened).toEqual(['req-b', 'req-a']);
  });

  it('the tooltip, the tray title and the app badge carry the count; developer mode is said; nothing is redrawn without a change', () => {
    const drawn: string[] = [];
    const tray = { setToolTip: (t: string) => void drawn.push(`tip:${t}`), setTitle: (t: string) => void drawn.push(`title:${t}`) };
    const app = { setBadgeCount: (n?: number) => (drawn.push(`badge:${n}`), true) };
    const b = new TrayBadge(null, app);
    b.update({ pending: 2 }); // before the tray exists: the app badge only
    expect(drawn).toEqual(['badge:2']);
    b.attach(tray as never);
    expect(drawn.slice(1)).toEqual(['tip:Echo Console: 2 approvals waiting', 'title:2', 'badge:2']);
    drawn.length = 0;
    b.update({ pending: 2 });
    expect(drawn).toEqual([]);
    b.update({ developerMode: true });
    expect(drawn[0]).toBe('tip:Echo Console: 2 approvals waiting · DEVELOPER MODE on');
    drawn.length = 0;
    b.update({ pending: 0, developerMode: false });
    expect(drawn).toEqual(['tip:Echo Console: no approval waiting', 'title:', 'badge:0']);
    expect(trayToolTip(1, false)).toBe('Echo Console: 1 approval waiting');
    // A platform whose tray or badge throws does not take the host down.
    const broken = new TrayBadge({ setToolTip: () => { throw new Error('gone'); }, setTitle: () => undefined } as never, { setBadgeCount: () => { throw new Error('no badge'); } });
    expect(() => broken.update({ pending: 1 })).not.toThrow();
  });
});
