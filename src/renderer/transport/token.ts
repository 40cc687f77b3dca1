/**
 * The web host's one-time link token: taken from the URL fragment (`#token=...`)
 * and removed from the address bar at once (history.replaceState). It is never
 * stored (issue 9 item 4: a script that read sessionStorage carried the session
 * away): `exchangeToken` spends it for the HttpOnly session cookie, which then
 * serves reloads of this tab. Structural types only, so this module is testable
 * without a browser.
 */
import { SESSION_PATH, TOKEN_FRAGMENT_KEY } from '../../shared/web-wire';

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
 * Spend the one-time token for the session cookie (`POST /session` on the page's own
 * origin; the answer sets an HttpOnly, SameSite=Strict cookie no script can read).
 * @returns true when the console accepted it; false when it refused (a link already
 *   used, or from another run) or could not be reached. Never throws: the socket
 *   then tries with whatever session cookie this browser already holds.
 */
export async function exchangeToken(
  origin: string,
  token: string,
  fetchFn: (url: string, init: { method: string; credentials: 'same-origin'; headers: Record<string, string>; body: string }) => Promise<{ ok: boolean }>,
): Promise<boolean> {
  try {
    const r = await fetchFn(`${origin}${SESSION_PATH}`, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ token }),
    });
    return r.ok;
  } catch {
    return false;
  }
}
