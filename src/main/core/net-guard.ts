/**
 * Connection limits for every HTTP listener of the console (the MCP endpoint,
 * the loopback web host). Any local user can open TCP connections to a port
 * on 127.0.0.1 without a token: 1,100 idle connections from another user once
 * exhausted the console's file descriptors, and MCP and the UI went
 * unreachable (issue 9 item 7). So:
 *
 *  - a **cap** on open connections (`maxConnections`). At the cap, a new
 *    connection evicts the OLDEST IDLE one (no request in flight, not an
 *    upgraded WebSocket); only when every connection is busy is the new one
 *    refused. An idle flood therefore cannot lock out a real client, who
 *    always gets in by pushing out the flood's oldest idle socket, and it costs
 *    the console at most `maxConnections` descriptors;
 *  - an **idle timeout** (`idleMs`): a connection with no request in flight
 *    and no traffic for that long is closed (a long-poll or SSE stream, a
 *    request in flight, and an upgraded WebSocket are not idle);
 *  - Node's own **header and request timeouts** (`headersTimeoutMs`,
 *    `requestTimeoutMs`: the whole request, headers and body, must arrive in
 *    time; nodejs.org/api/http.html, `server.headersTimeout`,
 *    `server.requestTimeout`), so a slow sender cannot hold a request open.
 *
 * What it cannot do: tell an attacker's connection from a client's on the same
 * loopback address. A client's idle keep-alive connection may be evicted
 * under a flood; its next request then opens a new connection. Busy
 * connections need the token first (MCP) or the session (web host).
 */
import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/** The limits; every listener uses these unless a test passes smaller ones. */
export const CONNECTION_LIMITS = {
  /** Open connections per listener. */
  maxConnections: 256,
  /** Close a connection idle (no request in flight, no bytes) this long (ms). */
  idleMs: 30_000,
  /** The request's headers must arrive within this (ms). */
  headersTimeoutMs: 10_000,
  /** The whole request (headers and body) must arrive within this (ms); the response may take longer. */
  requestTimeoutMs: 30_000,
} as const;

export type ConnectionLimits = { -readonly [K in keyof typeof CONNECTION_LIMITS]: number };

/** What the guard saw, for tests and the console's health view. */
export interface ConnectionGuard {
  /** Connections open now. */
  open(): number;
  /** Idle connections closed to make room for a new one, since start. */
  evicted(): number;
  /** New connections refused because every open one was busy, since start. */
  refused(): number;
  /** Connections closed by the idle timeout, since start. */
  timedOut(): number;
}

interface Conn {
  /** Requests in flight on this connection. */
  busy: number;
  /** Upgraded to a WebSocket: the ws library owns it from then on. */
  upgraded: boolean;
}

/**
 * Put `server` under the limits (call before `listen`).
 * @param limits overrides of CONNECTION_LIMITS (tests use small ones).
 * @param upgrades the server accepts WebSocket upgrades (its own `upgrade`
 *   listener bounds an unauthenticated one): an upgraded connection is then
 *   never idle. Leave false on a server without an `upgrade` listener: adding
 *   one here would keep upgrade requests open that Node would otherwise close.
 */
export function guardConnections(server: Server, limits: Partial<ConnectionLimits> = {}, upgrades = false): ConnectionGuard {
  const l: ConnectionLimits = { ...CONNECTION_LIMITS, ...limits };
  server.headersTimeout = l.headersTimeoutMs;
  server.requestTimeout = l.requestTimeoutMs;
  // Node checks the two timeouts above on this period (default 30 s): keep it below them.
  (server as Server & { connectionsCheckingInterval?: number }).connectionsCheckingInterval = Math.min(l.headersTimeoutMs, 1_000);
  server.keepAliveTimeout = Math.min(server.keepAliveTimeout, l.idleMs);
  // Map order is insertion order: the first idle entry is the oldest idle connection.
  const conns = new Map<Socket, Conn>();
  let evicted = 0;
  let refused = 0;
  let timedOut = 0;

  const idle = (c: Conn) => c.busy === 0 && !c.upgraded;

  server.on('connection', (sock: Socket) => {
    if (conns.size >= l.maxConnections) {
      let victim: Socket | undefined;
      for (const [s, c] of conns) {
        if (idle(c)) {
          victim = s;
          break;
        }
      }
      if (!victim) {
        refused++;
        sock.destroy();
        return;
      }
      evicted++;
      conns.delete(victim);
      victim.destroy();
    }
    const c: Conn = { busy: 0, upgraded: false };
    conns.set(sock, c);
    sock.setTimeout(l.idleMs);
    sock.on('timeout', () => {
      if (!idle(c)) return;
      timedOut++;
      sock.destroy();
    });
    sock.once('close', () => conns.delete(sock));
  });

  server.on('request', (req, res) => {
    const c = conns.get(req.socket);
    if (!c) return;
    c.busy++;
    let done = false;
    res.once('close', () => {
      if (done) return;
      done = true;
      c.busy--;
    });
  });

  if (upgrades) {
    server.on('upgrade', (req) => {
      const c = conns.get(req.socket);
      if (c) c.upgraded = true;
    });
  }

  return { open: () => conns.size, evicted: () => evicted, refused: () => refused, timedOut: () => timedOut };
}
