/**
 * The one function that decides every URL the console's window meets: in-window
 * navigations, `window.open` / `target=_blank` links, and links handed to the
 * system browser (docs/design.md, "Conventions" §4; Electron security checklist items 13–15:
 * "Disable or limit navigation", "Disable or limit creation of new windows",
 * "Do not use shell.openExternal with untrusted content"; bitwarden
 * `platform/main/safe-shell.main.ts`).
 *
 * Plain Node, no 'electron' import: the Electron host and the loopback web host
 * both use it, and it is unit-tested with a table of hostile URLs
 * (test/unit/url-policy.test.ts).
 *
 * Rules, fail closed:
 * - The app's own origin (`app://echo` in Electron, `http://127.0.0.1:PORT` in the
 *   web host) may load in the window; nothing else ever navigates the window.
 * - An `https:` link may be opened in the person's default browser only when the
 *   action is a window-open (a link the person clicked), and only if it carries no
 *   credentials, no explicit port, no IP-literal / loopback / `.local` host, no
 *   punycode (homograph) labels, no control, white-space or bidi characters, and
 *   is at most `MAX_URL_CHARS` long.
 * - Every other scheme is denied: `javascript:`, `data:`, `file:`, `blob:`,
 *   `chrome:`, `chrome-extension:`, `devtools:`, `view-source:`, `about:`,
 *   `http:` (outside the app origin), `mailto:`, custom protocol handlers, ...
 */

/** The longest URL we will hand to the system browser (characters). */
export const MAX_URL_CHARS = 2048;

/** What the caller is about to do with the URL. */
export type UrlAction =
  /** The window itself is about to load the URL (`will-navigate`, `will-redirect`, initial load). */
  | 'navigate'
  /** The page asked for a new window (`setWindowOpenHandler`): a clicked `target=_blank` link. */
  | 'window-open';

/** The decision: load it in the window, open it in the system browser, or refuse. */
export type UrlDecision =
  | { kind: 'allow-app' }
  | { kind: 'open-external'; url: string }
  | { kind: 'deny'; reason: UrlDenyReason };

export type UrlDenyReason =
  | 'not-a-string'
  | 'too-long'
  | 'control-characters'
  | 'unparseable'
  | 'credentials'
  | 'scheme'
  | 'app-url-in-new-window'
  | 'navigation-away'
  | 'port'
  | 'ip-literal'
  | 'local-host'
  | 'punycode-host'
  | 'empty-host';

/** The app's own origin, as scheme and host (host includes a port when there is one). */
export interface AppOrigin {
  /** e.g. `app:` or `http:` (with the colon, lowercase, as WHATWG `URL.protocol`). */
  protocol: string;
  /** e.g. `echo` or `127.0.0.1:43117` (as WHATWG `URL.host`). */
  host: string;
}

/** The Electron host's app origin: a privileged standard scheme, never `file:` (checklist item 18). */
export const ELECTRON_APP_ORIGIN: AppOrigin = { protocol: 'app:', host: 'echo' };

// C0 and C1 controls, DEL, every Unicode white space, zero-width and bidi
// controls. The WHATWG parser silently strips tab and newline ("java\nscript:")
// and trims spaces, so the raw text is checked before parsing.
const FORBIDDEN_CHARS = /[\u0000-\u0020\u007f-\u009f\u00a0\u1680\u2000-\u200f\u2028-\u202f\u205f-\u206f\u3000\ufeff]/;

const IPV4_LITERAL = /^\d{1,3}(\.\d{1,3}){3}$/;

/**
 * Parse `raw` as an absolute URL, or `null`. Relative URLs are not resolved
 * against anything: Electron hands us absolute URLs, anything else is hostile.
 */
function parse(raw: string): URL | null {
  try {
    return new URL(raw);
  } catch {
    return null;
  }
}

/** Whether `url` belongs to the app origin (scheme and host compared exactly, no credentials). */
export function isAppUrl(raw: unknown, app: AppOrigin = ELECTRON_APP_ORIGIN): boolean {
  if (typeof raw !== 'string' || raw.length > MAX_URL_CHARS || FORBIDDEN_CHARS.test(raw)) return false;
  const u = parse(raw);
  if (!u) return false;
  // Compare scheme + host instead of `URL.origin`: for a non-special scheme such
  // as `app:` Node's WHATWG parser reports the origin as the string "null".
  return u.protocol === app.protocol && u.host === app.host && u.username === '' && u.password === '';
}

/**
 * Decide what may happen with `raw` for `action`.
 *
 * @param raw    the URL exactly as Electron (or the browser) reported it.
 * @param action `navigate` (the window would load it) or `window-open`.
 * @param app    the app origin; defaults to Electron's `app://echo`.
 * @returns `allow-app` only for a `navigate` to the app origin; `open-external`
 *   (with the re-serialised URL to hand to `shell.openExternal`) only for a
 *   `window-open` of a checked `https:` URL; `deny` with a reason otherwise.
 */
export function decideUrl(raw: unknown, action: UrlAction, app: AppOrigin = ELECTRON_APP_ORIGIN): UrlDecision {
  if (typeof raw !== 'string') return deny('not-a-string');
  if (raw.length > MAX_URL_CHARS) return deny('too-long');
  if (FORBIDDEN_CHARS.test(raw)) return deny('control-characters');
  const u = parse(raw);
  if (!u) return deny('unparseable');
  if (u.username !== '' || u.password !== '') return deny('credentials');

  if (isAppUrl(raw, app)) {
    // The app never opens itself in a second window: one window, one top frame,
    // which is what the IPC sender check relies on.
    return action === 'navigate' ? { kind: 'allow-app' } : deny('app-url-in-new-window');
  }
  if (u.protocol !== 'https:') return deny('scheme');
  // Nothing outside the app ever loads in the console's window.
  if (action === 'navigate') return deny('navigation-away');

  if (u.port !== '') return deny('port');
  const host = u.hostname;
  if (host === '') return deny('empty-host');
  if (host.startsWith('[') || IPV4_LITERAL.test(host)) return deny('ip-literal');
  if (host === 'localhost' || host.endsWith('.localhost') || host.endsWith('.local') || !host.includes('.')) {
    return deny('local-host');
  }
  if (host.split('.').some((label) => label.startsWith('xn--'))) return deny('punycode-host');
  return { kind: 'open-external', url: u.href };
}

function deny(reason: UrlDenyReason): UrlDecision {
  return { kind: 'deny', reason };
}
