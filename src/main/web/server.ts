/**
 * The loopback web host: serves the built renderer (out/renderer) to a browser
 * on 127.0.0.1 and carries the console API over one WebSocket, for machines
 * without Electron and for the end-to-end tests. Plain Node, no 'electron'
 * import. Rules (docs/hosts.md):
 *
 * - Binds 127.0.0.1 only. Every HTTP request and the WebSocket upgrade must name
 *   `Host: 127.0.0.1:PORT` exactly (a DNS-rebinding page names its own host).
 * - The WebSocket upgrade must come from `Origin: http://127.0.0.1:PORT` (our own
 *   page; any other site, extension or `null` origin is refused with 403).
 * - The session token (32 random bytes) travels only in the console URL's
 *   fragment, which browsers never send to a server; the renderer removes it from
 *   the address bar and sends it as its first WebSocket message. No call is
 *   answered and no event is pushed before a correct token; a wrong or missing
 *   one closes the socket (4401).
 * - Each call is `{id, method, params}` → `{id, result}`; events are pushed as
 *   `{event}`. Calls are routed by the same module as Electron's IPC
 *   (src/main/api-dispatch.ts); the core validates the payload (once, against
 *   src/shared/api-schemas.ts); nothing throws across the socket.
 * - Responses carry the renderer CSP (plus `connect-src ws://127.0.0.1:PORT`) and
 *   the same security headers as the Electron host.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { createReadStream, promises as fs } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import type { ConsoleApi, ConsoleEvent } from '../../shared/ipc';
import { LIMITS } from '../../shared/limits';
import { err } from '../../shared/result';
import { TOKEN_FRAGMENT_KEY, WS_CLOSE, WS_PATH, type WsServerMessage } from '../../shared/web-wire';
import { dispatchCall } from '../api-dispatch';
import { guardConnections, type ConnectionGuard, type ConnectionLimits } from '../core/net-guard';
import { buildCsp, SECURITY_HEADERS } from '../csp';
import { contentTypeOf, resolveStatic } from '../static-files';

/** Options of `startWebHost`. */
export interface WebHostOptions {
  /** The console API to serve (the core's `api`; an in-test implementation in tests). */
  api: ConsoleApi;
  /** Subscribe to the core's events; may return an unsubscribe function. */
  subscribe: (listener: (e: ConsoleEvent) => void) => (() => void) | void;
  /** Folder of the built renderer (index.html and assets). */
  rendererDir: string;
  /** TCP port on 127.0.0.1; 0 (default) picks a free one. */
  port?: number;
  /** The session token; random (32 bytes, base64url) unless given. Tests only should pass one. */
  token?: string;
  /** How long a new socket may take to send its token (ms). */
  helloTimeoutMs?: number;
  /** Connection limits (default CONNECTION_LIMITS, ../core/net-guard.ts); tests pass small ones. */
  connectionLimits?: Partial<ConnectionLimits>;
}

/** A running web host. */
export interface WebHost {
  /** `http://127.0.0.1:PORT` */
  origin: string;
  /**
   * Every origin a browser tab may show this console under (`http://127.0.0.1:PORT`,
   * `http://localhost:PORT`): give them to the core (`setConsoleOrigins`) so the
   * console's own tab is never shared with the agent.
   */
  origins: string[];
  port: number;
  token: string;
  /** The URL to open: origin + `/#token=...`. */
  consoleUrl: string;
  /** The connection limits' counters. */
  connections: ConnectionGuard;
  /** Stop listening and close every socket. */
  close(): Promise<void>;
}

const HOST = '127.0.0.1';

const sha256 = (s: string) => createHash('sha256').update(s).digest();

/** Constant-time token comparison (both sides hashed first, so lengths do not leak). */
export function tokenMatches(given: unknown, expected: string): boolean {
  return typeof given === 'string' && given.length <= 256 && timingSafeEqual(sha256(given), sha256(expected));
}

/**
 * Start the loopback web host.
 * @returns once listening; `consoleUrl` carries the token in its fragment.
 * @throws when the port is taken or the renderer folder has no index.html.
 */
export async function startWebHost(opts: WebHostOptions): Promise<WebHost> {
  const rendererDir = path.resolve(opts.rendererDir);
  await fs.access(path.join(rendererDir, 'index.html')).catch(() => {
    throw new Error(`The renderer is not built: ${path.join(rendererDir, 'index.html')} is missing (run \`npx electron-vite build\`).`);
  });
  const token = opts.token ?? randomBytes(32).toString('base64url');
  const helloTimeoutMs = opts.helloTimeoutMs ?? 5_000;
  const authed = new Set<WebSocket>();

  let origin = '';
  let hostHeader = '';
  let csp = '';

  const server: Server = createServer((req, res) => {
    void serveFile(req, res).catch(() => {
      if (!res.headersSent) send(res, 500, 'Internal error');
      else res.destroy();
    });
  });

  async function serveFile(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!hostMatches(req)) return send(res, 421, 'Misdirected request');
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, 'Method not allowed', { Allow: 'GET, HEAD' });
    if ((req.url ?? '').split('?')[0] === WS_PATH) return send(res, 426, 'Upgrade required');
    const file = resolveStatic(rendererDir, req.url ?? '/');
    if (!file) return send(res, 404, 'Not found');
    const stat = await fs.stat(file).catch(() => null);
    if (!stat?.isFile()) return send(res, 404, 'Not found');
    res.writeHead(200, {
      ...baseHeaders(),
      'Content-Type': contentTypeOf(file),
      'Content-Length': String(stat.size),
    });
    if (req.method === 'HEAD') return void res.end();
    createReadStream(file).pipe(res);
  }

  function baseHeaders(): Record<string, string> {
    return { 'Content-Security-Policy': csp, 'Cache-Control': 'no-store', ...SECURITY_HEADERS };
  }

  function send(res: ServerResponse, status: number, text: string, extra: Record<string, string> = {}): void {
    res.writeHead(status, { ...baseHeaders(), 'Content-Type': 'text/plain; charset=utf-8', ...extra });
    res.end(text);
  }

  function hostMatches(req: IncomingMessage): boolean {
    return (req.headers.host ?? '').toLowerCase() === hostHeader;
  }

  // Any local user can connect to 127.0.0.1: a cap and idle timeouts keep a flood of idle
  // connections from exhausting the console's descriptors (../core/net-guard.ts).
  const connections = guardConnections(server, opts.connectionLimits, true);

  // --- WebSocket ---------------------------------------------------------------
  const wss = new WebSocketServer({ noServer: true, maxPayload: LIMITS.maxMessageBytes, perMessageDeflate: false });

  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const refuse = (status: number, text: string) => {
      socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
    };
    const pathname = (req.url ?? '').split('?')[0];
    if (pathname !== WS_PATH) return refuse(404, 'Not Found');
    if (!hostMatches(req)) return refuse(421, 'Misdirected Request');
    if (req.headers.origin !== origin) return refuse(403, 'Forbidden');
    wss.handleUpgrade(req, socket, head, (ws) => onSocket(ws));
  });

  function onSocket(ws: WebSocket): void {
    const helloTimer = setTimeout(() => ws.close(WS_CLOSE.unauthorized, 'no token'), helloTimeoutMs);
    ws.on('close', () => {
      clearTimeout(helloTimer);
      authed.delete(ws);
    });
    ws.on('error', () => ws.terminate());
    ws.on('message', (data, isBinary) => {
      let msg: unknown;
      try {
        msg = isBinary ? undefined : JSON.parse(data.toString());
      } catch {
        msg = undefined;
      }
      if (!msg || typeof msg !== 'object' || Array.isArray(msg)) return ws.close(WS_CLOSE.badMessage, 'bad message');
      const m = msg as Record<string, unknown>;
      if (!authed.has(ws)) {
        // Fail closed: the first message must be the token, and nothing else is read before it.
        if (m.type !== 'hello' || !tokenMatches(m.token, token)) return ws.close(WS_CLOSE.unauthorized, 'unauthorized');
        clearTimeout(helloTimer);
        authed.add(ws);
        return post(ws, { type: 'welcome' });
      }
      if (typeof m.id !== 'number' || !Number.isSafeInteger(m.id)) return ws.close(WS_CLOSE.badMessage, 'bad message');
      const id = m.id;
      const args = 'params' in m && m.params !== undefined ? [m.params] : [];
      void dispatchCall(opts.api, m.method, args)
        .catch(() => err('internal', 'The call failed.'))
        .then((result) => post(ws, { id, result }));
    });
  }

  function post(ws: WebSocket, msg: WsServerMessage): void {
    if (ws.readyState !== ws.OPEN) return;
    try {
      ws.send(JSON.stringify(msg));
    } catch {
      ws.terminate();
    }
  }

  const unsubscribe = opts.subscribe((event) => {
    for (const ws of authed) post(ws, { event });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, HOST, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  origin = `http://${HOST}:${port}`;
  hostHeader = `${HOST}:${port}`;
  csp = buildCsp([`ws://${HOST}:${port}`]);

  let closed: Promise<void> | null = null;
  return {
    origin,
    origins: [origin, `http://localhost:${port}`],
    port,
    token,
    consoleUrl: `${origin}/#${TOKEN_FRAGMENT_KEY}=${token}`,
    connections,
    close() {
      closed ??= new Promise<void>((resolve) => {
        if (typeof unsubscribe === 'function') unsubscribe();
        for (const ws of wss.clients) ws.close(WS_CLOSE.goingAway, 'host closing');
        wss.close();
        server.close(() => resolve());
        server.closeAllConnections();
        setTimeout(() => {
          for (const ws of wss.clients) ws.terminate();
        }, 1_000).unref();
      });
      return closed;
    },
  };
}

/** The port from `--port N` / `--port=N` or the environment; 0 when unset. */
export function portFrom(argv: string[], env: NodeJS.ProcessEnv): number {
  let raw: string | undefined = env.ECHO_CONSOLE_WEB_PORT;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--port') raw = argv[i + 1];
    else if (a.startsWith('--port=')) raw = a.slice('--port='.length);
  }
  if (raw === undefined || raw === '') return 0;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new Error(`--port must be a whole number from 0 to 65535, not "${raw}"`);
  return n;
}
