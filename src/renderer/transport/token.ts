/**
 * The web host's session token: taken from the URL fragment (`#token=...`),
 * removed from the address bar at once (history.replaceState), and kept in this
 * tab's sessionStorage so a reload still works. Structural types only, so this
 * module is testable without a browser.
 */
import { TOKEN_FRAGMENT_KEY } from '../../shared/web-wire';

const STORAGE_KEY = 'echo-console.token';

/**
 * Take the token out of `#token=...` (and out of the URL), or from this tab's
 * sessionStorage after a reload. Returns null when there is none.
 */
export function takeToken(
  loc: { hash: string; pathname: string; search: string },
  history: { replaceState(data: unknown, unused: string, url: string): void },
  storage: { getItem(key: string): string | null; setItem(key: string, value: string): void } | null,
): string | null {
  const params = new URLSearchParams(loc.hash.replace(/^#/, ''));
  const fromHash = params.get(TOKEN_FRAGMENT_KEY);
  if (fromHash !== null) {
    history.replaceState(null, '', loc.pathname + loc.search);
    if (/^[A-Za-z0-9_-]{16,256}$/.test(fromHash)) {
      try {
        storage?.setItem(STORAGE_KEY, fromHash);
      } catch {
        /* storage may be off: the token then lives for this page only */
      }
      return fromHash;
    }
    return null;
  }
  try {
    return storage?.getItem(STORAGE_KEY) ?? null;
  } catch {
    return null;
  }
}

