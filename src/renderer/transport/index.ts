/**
 * Which transport the renderer uses: `window.echo` (the Electron preload) when
 * present, else the loopback web host's WebSocket. A one-time link token in the
 * URL fragment (`#token=...`) is removed from the address bar at once and
 * exchanged for a session before the socket opens: its id goes into the
 * fragment (`#session=...`, for reloads), its HttpOnly cookie stays with the
 * browser. Nothing secret is kept in sessionStorage (issue 9 item 4).
 */
import type { EchoApi } from '../../shared/ipc';
import { exchangeToken, LEGACY_STORAGE_KEY, sessionFragment, sessionFromFragment, takeToken } from './token';
import { createWsClient, type TransportState } from './ws-client';

export type { TransportState } from './ws-client';
export { exchangeToken, takeToken } from './token';

/** The renderer's way to the console API: the Electron preload (`ipc`) or the web host's WebSocket (`ws`). */
export type Transport =
  | { kind: 'ipc'; api: EchoApi; state: () => TransportState; onState: (l: (s: TransportState) => void) => () => void }
  | { kind: 'ws'; api: EchoApi; state: () => TransportState; onState: (l: (s: TransportState) => void) => () => void };

/** Pick the transport for this page. */
export function openTransport(win: Window = window): Transport {
  if (win.echo) {
    const api = win.echo;
    return { kind: 'ipc', api, state: () => 'open', onState: () => () => undefined };
  }
  try {
    win.sessionStorage.removeItem(LEGACY_STORAGE_KEY);
  } catch {
    /* storage may be off */
  }
  const origin = win.location.origin;
  const kept = sessionFromFragment(win.location.hash);
  const token = takeToken(win.location, win.history);
  // A reload knows its session now: the socket opens in this task, before the rest of the
  // renderer's modules are evaluated (../boot.ts). A new link first spends its token.
  const ready: Promise<string | null> | string | null = token
    ? exchangeToken(origin, token, (u, init) => win.fetch(u, init)).then((sid) => {
        if (sid) win.history.replaceState(null, '', win.location.pathname + win.location.search + sessionFragment(sid));
        return sid;
      })
    : kept;
  const client = createWsClient({ origin, ready });
  return { kind: 'ws', api: client.api, state: client.state, onState: client.onState };
}
