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
 * - The console URL's token (32 random bytes, in the fragment, which browsers never
 *   send to a server) is a ONE-TIME link (issue 9 item 4): the renderer removes it
 *   from the address bar and exchanges it once (`POST /session`, same Origin) for
 *   a session: an id (`sid`, answered in the body, kept in the URL fragment
 *   `#session=`) and an HttpOnly, SameSite=Strict cookie whose Path is
 *   `/api/<sid>`. A second use of the same link is refused (403). Cookies ignore
 *   ports, so the unguessable Path is what keeps the browser from sending the
 *   cookie to any other server on 127.0.0.1. No script can read the cookie, and
 *   nothing secret is kept in the page's storage. The WebSocket upgrade to
 *   `/api/<sid>` must carry the cookie made for that sid: else the socket is
 *   closed at once (4401), before any call or event.
 *   A script running in the console's OWN tab still rides that cookie: the web
 *   host cannot tell it from the person (docs/hosts.md; the desktop app can).
 * - Each call is `{id, method, params}` → `{id, result}`; events are pushed as
 *   `{event}`. Calls are routed by the same module as Electron's IPC
 *   (src/main/api-dispatch.ts); the core validates the payload (once, against
 *   src/shared/api-schemas.ts); nothing throws across the socket.
 * - Responses carry the renderer CSP (plus `connect-src ws://127.0.0.1:PORT`) and
 *   the same security headers as the Electron host.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { createReadStream, promises as fs } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import type { ConsoleApi, ConsoleEvent } from '../../shared/ipc';
import { LIMITS } from '../../shared/limits';
import { err } from '../../shared/result';
import { SESSION_COOKIE_PREFIX, SESSION_PATH, TOKEN_FRAGMENT_KEY, WS_CLOSE, WS_PATH, type WsServerMessage } from '../../shared/web-wire';
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
  /** The first one-time link token; random (32 bytes, base64url) unless given. Tests only should pass one. */
  token?: string;
  /**
   * The key that signs session cookies; random (32 bytes) per run unless given. TESTS ONLY:
   * a test that restarts the host on the same port passes the old host's `sessionKey` so the
   * open tab's cookie still works (a real restart ends every session).
   */
  sessionKey?: Buffer;
  /** How long a new socket may take to send its `hello` (ms). */
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
  /** The first link's one-time token (spent once a page exchanged it for a session cookie). */
  token: string;
  /** The URL to open: origin + `/#token=...`, usable ONCE (the start line prints it). */
  consoleUrl: string;
  /** Mint another one-time console URL (a fresh token, same rules); for tests and tools. */
  newConsoleUrl(): string;
  /** The name of this host's session cookie (`echo-session-PORT`). */
  sessionCookieName: string;
  /** The key that signs this run's session cookies (pass it to a restarted host in tests). */
  sessionKey: Buffer;
  /** The connection limits' counters. */
  connections: ConnectionGuard;
  /** Stop listening and close every socket. */
  close(): Promise<void>;
}

const HOST = '127.0.0.1';

const sha256 = (s: string) => createHash('sha256').update(s).digest();

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
  // One-time link tokens not yet exchanged, by SHA-256 (hex): a token is deleted at its first use.
  const unspent = new Set<string>([sha256(token).toString('hex')]);
  const sessionKey = opts.sessionKey ?? randomBytes(32);

  let origin = '';
  let hostHeader = '';
  let cookieName = '';
  let csp = '';

  const server: Server = createServer((req, res) => {
    const pathname = (req.url ?? '').split('?')[0];
    void (pathname === SESSION_PATH ? exchangeLink(req, res) : serveFile(req, res)).catch(() => {
      if (!res.headersSent) send(res, 500, 'Internal error');
      else res.destroy();
    });
  });

  async function serveFile(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!hostMatches(req)) return send(res, 421, 'Misdirected request');
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, 'Method not allowed', { Allow: 'GET, HEAD' });
    if (isApiPath((req.url ?? '').split('?')[0]!)) return send(res, 426, 'Upgrade required');
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

  /**
   * `POST /session` with `{"token": "<one-time link token>"}` from our own page: the
   * token is spent and answered 200 `{"session": "<sid>"}` with the session cookie
   * (Path `/api/<sid>`); a spent, unknown or malformed one is 403 and sets nothing;
   * a body over 1 KiB is 413. Host and Origin must be ours (a page of
   * another port on 127.0.0.1 is same-SITE for cookies, but not same-origin).
   */
  async function exchangeLink(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!hostMatches(req)) return send(res, 421, 'Misdirected request');
    if (req.method !== 'POST') return send(res, 405, 'Method not allowed', { Allow: 'POST' });
    if (req.headers.origin !== origin) return send(res, 403, 'Forbidden');
    const body = await readSmallBody(req, 1024);
    if (body === null) return send(res, 413, 'Too large', { Connection: 'close' });
    let given: unknown;
    try {
      given = (JSON.parse(body) as { token?: unknown } | null)?.token;
    } catch {
      given = undefined;
    }
    const key = typeof given === 'string' && given.length <= 256 ? sha256(given).toString('hex') : null;
    if (key === null || !unspent.delete(key)) {
      return send(res, 403, 'This console link was already used, or is not this run’s. A console link works once.');
    }
    const sid = randomBytes(24).toString('base64url');
    const answer = JSON.stringify({ session: sid });
    res.writeHead(200, {
      ...baseHeaders(),
      'Content-Type': 'application/json',
      'Content-Length': String(Buffer.byteLength(answer)),
      // Path: the browser sends it to `/api/<sid>` only, on any port of 127.0.0.1 (cookies ignore
      // ports): no other local server learns it. No `Secure`: the page is http on loopback. No
      // Max-Age: it ends with the browser, and with this run (the key).
      'Set-Cookie': `${cookieName}=${sessionMac(sid).toString('base64url')}; Path=${WS_PATH}/${sid}; HttpOnly; SameSite=Strict`,
    });
    res.end(answer);
  }

  function sessionMac(sid: string): Buffer {
    return createHmac('sha256', sessionKey).update(sid).digest();
  }

  /** Whether the request carries, as a cookie named `cookieName`, the session cookie made for `sid`. */
  function hasSession(req: IncomingMessage, sid: string): boolean {
    if (!SID_RE.test(sid)) return false;
    const want = sessionMac(sid);
    for (const part of (req.headers.cookie ?? '').split(';')) {
      const eq = part.indexOf('=');
      if (eq < 0 || part.slice(0, eq).trim() !== cookieName) continue;
      const got = Buffer.from(part.slice(eq + 1).trim().slice(0, 64), 'base64url');
      if (got.length === want.length && timingSafeEqual(got, want)) return true;
    }
    return false;
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
    if (!isApiPath(pathname ?? '')) return refuse(404, 'Not Found');
    if (!hostMatches(req)) return refuse(421, 'Misdirected Request');
    if (req.headers.origin !== origin) return refuse(403, 'Forbidden');
    const session = hasSession(req, (pathname ?? '').slice(WS_PATH.length + 1));
    wss.handleUpgrade(req, socket, head, (ws) => onSocket(ws, session));
  });

  function onSocket(ws: WebSocket, session: boolean): void {
    // Without a session cookie the page learns why (4401) and stops reconnecting; it is told nothing else.
    if (!session) return ws.close(WS_CLOSE.unauthorized, 'no session');
    const helloTimer = setTimeout(() => ws.close(WS_CLOSE.helloTimeout, 'no hello in time'), helloTimeoutMs);
    ws.on('close', () => {
      clearTimeout(helloTimer);
      authed.delete(ws);
    });
    ws.on('error', () => ws.terminate());
    ws.on('message', (data, isBinary) => {
      // Once the host has closed a socket (refused it: no hello, a call before the hello; or a bad
      // message), `ws` still hands over the frames that were already on their way: read none of them.
      // Else a hello arriving after the 'no hello' close would admit the calls behind it, which the page
      // answers `unauthorized` (never read) while they ran.
      if (ws.readyState !== ws.OPEN) return;
      let msg: unknown;
      try {
        msg = isBinary ? undefined : JSON.parse(data.toString());
      } catch {
        msg = undefined;
      }
      if (!msg || typeof msg !== 'object' || Array.isArray(msg)) return ws.close(WS_CLOSE.badMessage, 'bad message');
      const m = msg as Record<string, unknown>;
      if (!authed.has(ws)) {
        // Fail closed: the first message must be `hello`, and nothing else is read before it.
        if (m.type !== 'hello') return ws.close(WS_CLOSE.unauthorized, 'unauthorized');
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
  // Cookies are shared by every port of 127.0.0.1: the port in the name keeps two consoles apart.
  cookieName = `${SESSION_COOKIE_PREFIX}${port}`;
  csp = buildCsp([`ws://${HOST}:${port}`]);

  let closed: Promise<void> | null = null;
  return {
    origin,
    origins: [origin, `http://localhost:${port}`],
    port,
    token,
    consoleUrl: `${origin}/#${TOKEN_FRAGMENT_KEY}=${token}`,
    newConsoleUrl() {
      const t = randomBytes(32).toString('base64url');
      unspent.add(sha256(t).toString('hex'));
      return `${origin}/#${TOKEN_FRAGMENT_KEY}=${t}`;
    },
    sessionCookieName: cookieName,
    sessionKey,
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

/** A session id: 24 random bytes, base64url. */
const SID_RE = /^[A-Za-z0-9_-]{32}$/;

/** `/api` or `/api/<anything>`: the WebSocket endpoint (the session id follows the slash). */
function isApiPath(pathname: string): boolean {
  return pathname === WS_PATH || pathname.startsWith(`${WS_PATH}/`);
}

/** The request body as text, or null when it is longer than `max` bytes (the rest is not read). */
function readSmallBody(req: IncomingMessage, max: number): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      // Past the cap nothing more is kept; the answer (413) closes the connection.
      if (size > max) return resolve(null);
      chunks.push(c);
    });
    req.on('end', () => resolve(size > max ? null : Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
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

/**
 * Whether the person started the web host with `--developer-mode` (argv only: an environment
 * variable could be set by something other than the person's own command line). Without it,
 * switching developer mode on is refused in the web host (`trusted-input-unavailable`); with it,
 * it passes on the renderer's `event.isTrusted` check, as Approve does there
 * (src/main/core/trusted-input.ts rendererAttestedGate; docs/hosts.md, "Developer mode in the web host").
 */
export function developerModeOptIn(argv: readonly string[]): boolean {
  return argv.includes('--developer-mode');
}

/** The start lines that say what `--developer-mode` means (none without it). */
export function developerModeStartLines(optIn: boolean): string[] {
  if (!optIn) return [];
  return [
    'WARNING: started with --developer-mode. Developer mode can be switched on in this browser tab, after a confirmation.',
    '  In a browser tab the console cannot tell your clicks and keys from a script running in the console’s own tab',
    '  (another extension, for example): such a script could switch developer mode on, approve a raw-JavaScript run,',
    '  or type developer-console lines for you. Use it only in a browser profile you trust; the desktop app (npm start) does not have this gap.',
  ];
}
