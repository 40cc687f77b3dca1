/**
 * The loopback web host's wire contract: the messages between the web host
 * (src/main/web/server.ts) and the renderer's WebSocket transport
 * (src/renderer/transport/ws-client.ts), which carry the same `ConsoleApi`
 * (src/shared/ipc.ts) that the Electron host carries over IPC.
 *
 * Types and constants only: compiled into the renderer and the web host. It
 * lives in src/shared so that neither side imports the other (a lint rule keeps
 * the renderer away from the hosts).
 */
import type { ConsoleEvent } from './ipc';
import type { Result } from './result';

/** The WebSocket endpoint of the loopback web host, on its own origin: the socket opens `/api/<session id>`. */
export const WS_PATH = '/api';

/** The key of the URL fragment that carries the web host's one-time link token (`#token=...`). */
export const TOKEN_FRAGMENT_KEY = 'token';

/** Where the renderer exchanges the one-time link token for a session: `POST {"token": "..."}` → `{"session": "<id>"}` + the cookie. */
export const SESSION_PATH = '/session';

/** The key of the URL fragment that keeps the session id across reloads (`#session=...`; useless without the cookie). */
export const SESSION_FRAGMENT_KEY = 'session';

/** The session cookie's name is this plus the port (HttpOnly, SameSite=Strict, Path `/api/<session id>`). */
export const SESSION_COOKIE_PREFIX = 'echo-session-';

/** Renderer → web host. The first message must be `hello` (the session cookie authenticates the socket); calls come after `welcome`. */
export type WsClientMessage =
  | { type: 'hello' }
  | { id: number; method: string; params?: unknown };

/** Web host → renderer. */
export type WsServerMessage =
  | { type: 'welcome' }
  | { id: number; result: Result<unknown> }
  | { event: ConsoleEvent };

/** WebSocket close codes the web host uses (4000–4999 are for applications, RFC 6455 §7.4.2). */
export const WS_CLOSE = {
  /** No session cookie, or a first message that is not `hello`: the page stops reconnecting. */
  unauthorized: 4401,
  /**
   * No `hello` within the host's wait (5 s): nothing was read. Not a refusal: a page whose open
   * event ran late (a loaded machine) reconnects, and its calls answer `disconnected` (not done).
   */
  helloTimeout: 4408,
  /** A message that is not JSON, or not one of `WsClientMessage`. */
  badMessage: 4400,
  /** The host is shutting down. */
  goingAway: 1001,
} as const;
