/**
 * The console API as the renderer sees it, whichever host serves it:
 * - in Electron, the preload exposes one `EchoApi` object as `window.echo`
 *   (src/preload/index.ts), carried over IPC, one channel per method;
 * - in a browser, the loopback web host (src/main/web/server.ts) carries the same
 *   methods over one WebSocket, in the wire messages defined here.
 *
 * Types and constants only: this file is compiled into the renderer
 * (tsconfig.web.json), the preload and the web host.
 */
import type { ConsoleApi, ConsoleEvent } from '../shared/ipc';
import type { Result } from '../shared/result';

/** `window.echo`: one method per ConsoleApi method, plus a subscription to pushed events. */
export interface EchoApi extends ConsoleApi {
  /** Subscribe to ConsoleEvents pushed by the host; returns the unsubscribe function. */
  onEvent(listener: (e: ConsoleEvent) => void): () => void;
}

/** The WebSocket endpoint of the loopback web host, on its own origin. */
export const WS_PATH = '/api';

/** The key of the URL fragment that carries the web host's session token (`#token=...`). */
export const TOKEN_FRAGMENT_KEY = 'token';

/** Renderer → web host. The first message must be `hello` with the token; calls come after `welcome`. */
export type WsClientMessage =
  | { type: 'hello'; token: string }
  | { id: number; method: string; params?: unknown };

/** Web host → renderer. */
export type WsServerMessage =
  | { type: 'welcome' }
  | { id: number; result: Result<unknown> }
  | { event: ConsoleEvent };

/** WebSocket close codes the web host uses (4000–4999 are for applications, RFC 6455 §7.4.2). */
export const WS_CLOSE = {
  /** No `hello`, or a wrong token. */
  unauthorized: 4401,
  /** A message that is not JSON, or not one of `WsClientMessage`. */
  badMessage: 4400,
  /** The host is shutting down. */
  goingAway: 1001,
} as const;
