/**
 * The Electron host's security settings, in one module so that they can be
 * read in one place and unit-tested with the `electron` module replaced
 * (test/unit/host-security.test.ts). Each rule follows Electron's security
 * checklist (https://www.electronjs.org/docs/latest/tutorial/security); the
 * item numbers below refer to it.
 *
 * Owns: the window's webPreferences, the session's permission, CSP and request
 * rules, the `app:` protocol that serves the renderer (instead of `file:`), and
 * the per-webContents navigation / window-open / webview rules.
 */
import { readFile } from 'node:fs/promises';
import type { Session, WebContents, WebPreferences } from 'electron';
import { buildCsp, SECURITY_HEADERS } from './csp';
import { contentTypeOf, resolveStatic } from './static-files';
import { decideUrl, ELECTRON_APP_ORIGIN } from './url-policy';

/** The privileged scheme that serves the renderer: `app://echo/index.html` (checklist 18: no `file:`). */
export const APP_SCHEME = 'app';
/** The URL the main window loads. */
export const APP_URL = `${APP_SCHEME}://${ELECTRON_APP_ORIGIN.host}/index.html`;

/** The scheme registration, handed to `protocol.registerSchemesAsPrivileged` before `ready`. */
export const APP_SCHEME_PRIVILEGES = {
  scheme: APP_SCHEME,
  // `standard` gives it an origin (so storage and `'self'` work), `secure` makes it a
  // secure context; no `bypassCSP`, no `corsEnabled`, no service workers, no streaming.
  privileges: { standard: true, secure: true, supportFetchAPI: true, allowServiceWorkers: false, bypassCSP: false, corsEnabled: false, stream: false },
};

/**
 * The main window's webPreferences.
 * - `sandbox`, `contextIsolation`, `nodeIntegration: false` (checklist 2–4): the
 *   renderer has no Node and sees only what the preload exposes.
 * - `webSecurity: true`, `allowRunningInsecureContent: false` (5–6, 8).
 * - `webviewTag: false`, no `experimentalFeatures`, no `enableBlinkFeatures` (9–10, 12).
 * - DevTools only when `ECHO_CONSOLE_DEVTOOLS=1`: an open DevTools is a way around
 *   the approval dialog for anyone at the keyboard.
 * @param preloadPath absolute path of the built, sandboxed (CommonJS) preload.
 */
export function secureWebPreferences(preloadPath: string, env: NodeJS.ProcessEnv = process.env): WebPreferences {
  return {
    preload: preloadPath,
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
    safeDialogs: true,
    spellcheck: false,
    devTools: env.ECHO_CONSOLE_DEVTOOLS === '1',
  };
}

/** The CSP the Electron host sends with every response (csp.ts; checklist 7). */
export const ELECTRON_CSP = buildCsp();

/**
 * Harden a session (checklist 7, 16, 17):
 * - every permission request and permission check is denied, as is every device
 *   permission (the console needs none; copying uses a user-gesture fallback);
 * - every response gets the CSP and the security headers (`onHeadersReceived`);
 * - every request to a scheme other than `app:` and `devtools:` is cancelled: the
 *   renderer talks to the main process over IPC only;
 * - downloads are cancelled.
 */
export function hardenSession(ses: Session): void {
  ses.setPermissionRequestHandler((_wc, _permission, callback) => callback(false));
  ses.setPermissionCheckHandler(() => false);
  ses.setDevicePermissionHandler(() => false);
  ses.webRequest.onHeadersReceived((details, callback) => {
    callback({ responseHeaders: withSecurityHeaders(details.responseHeaders) });
  });
  ses.webRequest.onBeforeRequest((details, callback) => {
    callback({ cancel: !isAllowedRequestUrl(details.url) });
  });
  ses.on('will-download', (event) => event.preventDefault());
}

/** Whether the renderer may fetch `url` at all: our `app://echo` origin, or DevTools' own pages. */
export function isAllowedRequestUrl(url: string): boolean {
  return decideUrl(url, 'navigate').kind === 'allow-app' || url.startsWith('devtools://');
}

/** Response headers plus our CSP and security headers; a CSP from elsewhere is replaced. */
export function withSecurityHeaders(headers: Record<string, string[]> | undefined): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [k, v] of Object.entries(headers ?? {})) {
    if (k.toLowerCase() !== 'content-security-policy') out[k] = v;
  }
  out['Content-Security-Policy'] = [ELECTRON_CSP];
  for (const [k, v] of Object.entries(SECURITY_HEADERS)) out[k] = [v];
  return out;
}

/**
 * Serve the built renderer on `app://echo/` from `rendererDir` (checklist 18).
 * Only files inside the folder are served (static-files.ts); any other host of
 * the scheme is 404. Responses carry the CSP directly too, in case a custom
 * protocol response bypasses `onHeadersReceived`.
 */
export function registerAppProtocol(ses: Session, rendererDir: string): void {
  ses.protocol.handle(APP_SCHEME, async (request) => {
    const url = new URL(request.url);
    const file = url.host === ELECTRON_APP_ORIGIN.host ? resolveStatic(rendererDir, url.pathname) : null;
    const body = file ? await readFile(file).catch(() => null) : null;
    const headers = { 'Content-Security-Policy': ELECTRON_CSP, 'Cache-Control': 'no-store', ...SECURITY_HEADERS };
    if (!body) return new Response('Not found', { status: 404, headers: { ...headers, 'Content-Type': 'text/plain' } });
    return new Response(new Uint8Array(body), { status: 200, headers: { ...headers, 'Content-Type': contentTypeOf(file!) } });
  });
}

/**
 * Apply the navigation rules to one webContents (checklist 13–15); called for
 * every webContents the app creates (`app.on('web-contents-created')`).
 * - `setWindowOpenHandler`: always deny; a checked `https:` link the person
 *   clicked is handed to the system browser (`openExternal`).
 * - `will-navigate`, `will-frame-navigate`, `will-redirect`: prevented unless the
 *   URL policy allows the app URL (and sub-frames never navigate at all).
 * - `will-attach-webview`: always prevented (no `<webview>` is ever used).
 * @param openExternal `shell.openExternal`, injected for tests.
 */
export function hardenWebContents(contents: WebContents, openExternal: (url: string) => Promise<void>): void {
  contents.setWindowOpenHandler(({ url }) => {
    const d = decideUrl(url, 'window-open');
    if (d.kind === 'open-external') void openExternal(d.url).catch(() => undefined);
    return { action: 'deny' };
  });
  contents.on('will-navigate', (event) => {
    if (decideUrl(event.url, 'navigate').kind !== 'allow-app') event.preventDefault();
  });
  contents.on('will-frame-navigate', (event) => {
    if (!event.isMainFrame || decideUrl(event.url, 'navigate').kind !== 'allow-app') event.preventDefault();
  });
  contents.on('will-redirect', (event) => {
    if (decideUrl(event.url, 'navigate').kind !== 'allow-app') event.preventDefault();
  });
  contents.on('will-attach-webview', (event) => event.preventDefault());
}
