/**
 * The web host's one-time link token: taken from the URL fragment (`#token=...`)
 * and removed from the address bar at once (history.replaceState). It is never
 * stored (issue 9 item 4: a script that read sessionStorage carried the session
 * away): `exchangeToken` spends it for a session, an id the page keeps in its URL
 * fragment (`#session=...`, for reloads) and an HttpOnly cookie the browser sends
 * only to `/api/<id>`. Neither works without the other. Structural types only, so
 * this module is testable without a browser.
 */
import { SESSION_FRAGMENT_KEY, SESSION_PATH, TOKEN_FRAGMENT_KEY } from '../../shared/web-wire';

/** Where earlier versions kept the token; removed on sight so no secret stays in storage. */
export const LEGACY_STORAGE_KEY = 'echo-console.token';

/**
 * Take the token out of `#token=...` (and out of the URL).
 * @returns the token, or null when the fragment has none or a malformed one.
 */
export function takeToken(
  loc: { hash: string; pathname: string; search: string },
  history: { replaceState(data: unknown, unused: string, url: string): void },
): string | null {
  const params = new URLSearchParams(loc.hash.replace(/^#/, ''));
  const fromHash = params.get(TOKEN_FRAGMENT_KEY);
  if (fromHash === null) return null;
  history.replaceState(null, '', loc.pathname + loc.search);
  return /^[A-Za-z0-9_-]{16,256}$/.test(fromHash) ? fromHash : null;
}

/**
 * The session id kept in the fragment (`#session=...`, or a deep link's
 * `#/timeline?…&session=...`: src/renderer/route.ts), or null.
 */
export function sessionFromFragment(hash: string): string | null {
  const h = hash.replace(/^#/, '');
  const params = h.startsWith('/') ? (h.includes('?') ? h.slice(h.indexOf('?') + 1) : '') : h;
  const sid = new URLSearchParams(params).get(SESSION_FRAGMENT_KEY);
  return sid !== null && SID_RE.test(sid) ? sid : null;
}

/** The fragment that keeps a session id across reloads of this tab. */
export function sessionFragment(sid: string): string {
  return `#${SESSION_FRAGMENT_KEY}=${sid}`;
}

const SID_RE = /^[A-Za-z0-9_-]{32}$/;

/**
 * Spend the one-time token for a session (`POST /session` on the page's own
 * origin; the answer sets an HttpOnly, SameSite=Strict cookie no script can read,
 * and names the session id).
 * @returns the session id, or null when the console refused (a link already used,
 *   or from another run) or could not be reached. Never throws.
 */
export async function exchangeToken(
  origin: string,
  token: string,
  fetchFn: (url: string, init: { method: string; credentials: 'same-origin'; headers: Record<string, string>; body: string }) => Promise<{ ok: boolean; json(): Promise<unknown> }>,
): Promise<string | null> {
  try {
    const r = await fetchFn(`${origin}${SESSION_PATH}`, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ token }),
    });
    if (!r.ok) return null;
    const sid = ((await r.json()) as { session?: unknown } | null)?.session;
    return typeof sid === 'string' && SID_RE.test(sid) ? sid : null;
  } catch {
    return null;
  }
}
