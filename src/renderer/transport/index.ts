/**
 * Which transport the renderer uses: `window.echo` (the Electron preload) when
 * present, else the loopback web host's WebSocket with the session token taken
 * from the URL fragment (`#token=...`). The token is removed from the address
 * bar at once (history.replaceState) and kept in sessionStorage for reloads of
 * this tab only.
 */
import type { EchoApi } from '../../shared/ipc';
import { takeToken } from './token';
import { createWsClient, type TransportState } from './ws-client';

export type { TransportState } from './ws-client';
export { takeToken } from './token';

export type Transport =
  | { kind: 'ipc'; api: EchoApi; state: () => TransportState; onState: (l: (s: TransportState) => void) => () => void }
  | { kind: 'ws'; api: EchoApi; state: () => TransportState; onState: (l: (s: TransportState) => void) => () => void }
  | { kind: 'none' };

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
