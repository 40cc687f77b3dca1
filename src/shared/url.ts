/**
 * URL rules shared by the extension and the console: what may be shared with
 * the agent, and what of a URL may leave the browser.
 *
 * - `stripUrl` removes credentials (`user:pass@`) and token-like query and
 *   fragment parameters from every URL sent to the console (docs/design.md, "Trust
 *   rules": credentials stripped from URLs), and replaces path segments and
 *   other parameters' values that the redaction rules (./redact.ts) recognise
 *   as secrets. Only for display and storage: a grant binds the exact URL's hash. OAuth puts codes and tokens in the
 *   query (RFC 6749 §4.1.2) and in the fragment (§4.2.2); signed URLs put
 *   signatures in the query (e.g. `X-Amz-Signature`).
 * - `shareability` decides whether a tab's URL may ever be shared: only http(s)
 *   pages, never browser pages, extension pages, the Chrome Web Store (where
 *   Chrome forbids extensions to script anyway), files, `about:`,
 *   `view-source:` or `devtools://`.
 */

import { redactText } from './redact';

/** The longest URL we hand on, in UTF-16 code units; longer is cut and marked with `…`. */
export const MAX_URL_CHARS = 2048;

/** Query/fragment parameter names that are removed outright (compared lowercase). */
const SECRET_PARAM_NAMES = new Set([
  'token', 'access_token', 'refresh_token', 'id_token', 'code', 'key', 'api_key', 'apikey', 'api-key',
  'sig', 'signature', 'session', 'sessionid', 'session_id', 'sid', 'auth', 'authorization', 'password',
  'passwd', 'pwd', 'pass', 'secret', 'client_secret', 'state', 'nonce', 'jwt', 'ticket', 'credential',
  'credentials', 'otp', 'hash', 'bearer',
]);

/** Substrings that make a parameter name token-like (`csrf_token`, `X-Amz-Signature`, `oauth_verifier`...). */
const SECRET_PARAM_PARTS = ['token', 'secret', 'passw', 'signature', 'session', 'auth', 'credential', 'apikey', 'api_key', 'verifier'];

/** Whether a query or fragment parameter name looks like it carries a secret. */
export function isSecretParamName(name: string): boolean {
  const n = name.trim().toLowerCase();
  if (SECRET_PARAM_NAMES.has(n)) return true;
  return SECRET_PARAM_PARTS.some((p) => n.includes(p));
}

/** A value whose shape the redaction rules know as a secret (a JWT, a provider key, …) becomes their marker. */
function redactValue(v: string): string {
  if (v.length < 8) return v;
  const r = redactText(v);
  return r.redacted ? r.value : v;
}

function filterParams(text: string): string {
  const params = new URLSearchParams(text);
  const kept = new URLSearchParams();
  // A parameter with a token-like name goes whole; any other keeps its name, and a value the
  // redaction rules recognise is replaced (issue 9 item 13: names alone missed `?x=<JWT>`).
  for (const [k, v] of params) if (!isSecretParamName(k)) kept.append(k, redactValue(v));
  return kept.toString();
}

/** Each path segment through the redaction rules (`/reset/<JWT>` → `/reset/[redacted:jwt]`). */
function redactPath(pathname: string): string {
  return pathname
    .split('/')
    .map((seg) => {
      let decoded: string;
      try {
        decoded = decodeURIComponent(seg);
      } catch {
        decoded = seg;
      }
      const r = redactValue(decoded);
      return r === decoded ? seg : r;
    })
    .join('/');
}

// URLSearchParams percent-encodes the marker's brackets and colon; the person reads it plain.
const ENCODED_MARKER = /%5Bredacted%3A([a-z0-9-]+)%5D/gi;

/**
 * The URL with credentials and token-like query/fragment parameters removed,
 * cut to MAX_URL_CHARS. Parameters are removed, not masked, so nothing of the
 * secret (not even its length) leaves. A fragment that is not a parameter list
 * (`#section-2`) is kept. Non-network URLs keep only their scheme (`data:…`),
 * except `about:blank` and `about:srcdoc`. An unparseable URL becomes `""`.
 */
export function stripUrl(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return '';
  }
  if (u.protocol === 'about:') return u.href === 'about:blank' || u.href === 'about:srcdoc' ? u.href : 'about:…';
  if (!['http:', 'https:', 'ws:', 'wss:', 'ftp:'].includes(u.protocol)) return `${u.protocol}…`;
  u.username = '';
  u.password = '';
  const path = redactPath(u.pathname);
  if (path !== u.pathname) u.pathname = path;
  if (u.search) {
    const q = filterParams(u.search.slice(1));
    u.search = q ? `?${q}` : '';
  }
  if (u.hash && u.hash.includes('=')) {
    const f = filterParams(u.hash.slice(1));
    u.hash = f ? `#${f}` : '';
  }
  const href = u.href.replace(ENCODED_MARKER, '[redacted:$1]');
  return href.length > MAX_URL_CHARS ? `${href.slice(0, MAX_URL_CHARS - 1)}…` : href;
}

/** The origin of a URL (`https://a.example:8443`), or `"null"` for opaque or unparseable ones. */
export function originOf(url: string | undefined | null): string {
  if (!url) return 'null';
  try {
    const u = new URL(url);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.origin : 'null';
  } catch {
    return 'null';
  }
}

/** Why a URL may never be shared. */
export type NotShareableReason = 'not-http' | 'browser-page' | 'extension-page' | 'web-store' | 'file' | 'invalid-url';

/**
 * Whether a tab showing `url` may be shared with the agent. Only `http:` and
 * `https:` pages qualify; the Chrome Web Store (`chromewebstore.google.com`,
 * `chrome.google.com/webstore`) never does: Chrome itself refuses to let
 * extensions script it (developer.chrome.com/docs/extensions/develop/concepts/content-scripts).
 */
export function shareability(url: string | undefined | null): { ok: true } | { ok: false; reason: NotShareableReason } {
  if (!url) return { ok: false, reason: 'invalid-url' };
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return { ok: false, reason: 'invalid-url' };
  }
  switch (u.protocol) {
    case 'http:':
    case 'https:':
      break;
    case 'chrome:':
    case 'devtools:':
    case 'view-source:':
    case 'about:':
    case 'edge:':
    case 'brave:':
      return { ok: false, reason: 'browser-page' };
    case 'chrome-extension:':
    case 'moz-extension:':
      return { ok: false, reason: 'extension-page' };
    case 'file:':
      return { ok: false, reason: 'file' };
    default:
      return { ok: false, reason: 'not-http' };
  }
  const host = u.hostname.toLowerCase().replace(/\.$/, '');
  if (host === 'chromewebstore.google.com') return { ok: false, reason: 'web-store' };
  if (host === 'chrome.google.com' && (u.pathname === '/webstore' || u.pathname.startsWith('/webstore/'))) {
    return { ok: false, reason: 'web-store' };
  }
  return { ok: true };
}
