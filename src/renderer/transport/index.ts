/**
 * Which transport the renderer uses: `window.echo` (the Electron preload) when
 * present, else the loopback web host's WebSocket with the session token taken
 * from the URL fragment (`#token=...`). The token is removed from the address
 * bar at once (history.replaceState) and kept in sessionStorage for reloads of
 * this tab only.
 */
import { TOKEN_FRAGMENT_KEY, type EchoApi } from '../../preload/api';
import { createWsClient, type TransportState } from './ws-client';

export type { TransportState } from './ws-client';

export type Transport =
  | { kind: 'ipc'; api: EchoApi; state: () => TransportState; onState: (l: (s: TransportState) => void) => () => void }
  | { kind: 'ws'; api: EchoApi; state: () => TransportState; onState: (l: (s: TransportState) => void) => () => void }
  | { kind: 'none' };

const STORAGE_KEY = 'echo-console.token';

/**
 * Take the token out of `#token=...` (and out of the URL), or from this tab's
 * sessionStorage after a reload. Returns null when there is none.
 */
export function takeToken(loc: Pick<Location, 'hash' | 'pathname' | 'search'>, history: Pick<History, 'replaceState'>, storage: Pick<Storage, 'getItem' | 'setItem'> | null): string | null {
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

/** Pick the transport for this page. */
export function openTransport(win: Window = window): Transport {
  if (win.echo) {
    const api = win.echo;
    return { kind: 'ipc', api, state: () => 'open', onState: () => () => undefined };
  }
  let storage: Storage | null = null;
  try {
    storage = win.sessionStorage;
  } catch {
    storage = null;
  }
  const token = takeToken(win.location, win.history, storage);
  if (!token) return { kind: 'none' };
  const client = createWsClient({ origin: win.location.origin, token });
  return { kind: 'ws', api: client.api, state: client.state, onState: client.onState };
}
