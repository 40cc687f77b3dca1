/**
 * The agent's MCP endpoint: Streamable HTTP (MCP spec 2025-06-18, "Transports",
 * "Streamable HTTP") on 127.0.0.1, path `/mcp`, one MCP session per client,
 * built on the official SDK (`Server` + `StreamableHTTPServerTransport` over
 * Node's http). This file owns the HTTP gates and wires the parts together:
 * the session table (./sessions.ts), each session's MCP server
 * (./session-server.ts), the private agent socket (./agent-socket.ts) and the
 * per-token quotas (./quotas.ts).
 *
 * Every HTTP request passes three gates, in this order, before the SDK sees it:
 *  1. any `Origin` header, whatever its value → 403: browsers always send Origin
 *     on cross-origin fetches and POSTs, and no web page may reach this endpoint
 *     (the spec's "Security Warning": validate Origin to stop DNS rebinding);
 *     MCP clients are not browsers and send none;
 *  2. `Host` must be exactly `127.0.0.1:<port>` → else 403 (DNS rebinding: a
 *     rebound name carries the attacker's Host). `localhost` is refused too: the
 *     endpoint binds 127.0.0.1 only, and `localhost` may resolve to `::1`, where
 *     another local user can listen on the same port and collect the token of
 *     any client configured with `localhost` (issue 9 item 2). The endpoint
 *     accepts exactly the one address it binds;
 *  3. `Authorization: Bearer <secret>` must be one of the agents' tokens
 *     (`authenticate`: SHA-256 compared in constant time, settings.json keeps
 *     only hashes) → else 401. Looked up at every request, so a revoked token
 *     stops working at once; revocation also closes its sessions. A session
 *     answers only the token that opened it (another token gets 404).
 *
 * The agent's identity is its token's name, set by the person; the client's
 * `clientInfo.name` is kept beside it as self-declared (`Actor.clientName`).
 *
 * The same MCP server is also offered on the console's private agent socket
 * (`listenAgentSocket`, ./agent-socket.ts), which is what the stdio command
 * (bin/echo-console-mcp.mjs) uses: it never sends a token over TCP.
 *
 * The tools come from the registry (./registry.ts, seeded by ./tools/index.ts).
 * When the registry changes, every session gets `notifications/tools/list_changed`.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { AgentTokenRef, Broker } from '../broker';
import { guardConnections, type ConnectionGuard, type ConnectionLimits } from '../net-guard';
import { AgentSocket } from './agent-socket';
import { rateLimitedResult } from './answers';
import { AgentQuotas, type AgentQuotaLimits, type QuotaKind } from './quotas';
import { AgentToolRegistry } from './registry';
import { actorOf, createSessionServer, type SessionServerDeps } from './session-server';
import { SessionTable, type Session } from './sessions';
import { AGENT_TOOLS } from './tools';
import type { Turns } from '../turns';

export { MAX_SOCKET_HELLO_BYTES, SOCKET_HELLO_TIMEOUT_MS } from './agent-socket';

export const MCP_PATH = '/mcp';

/** Largest HTTP request body accepted (bytes): a JSON-RPC message with arguments well over LIMITS.maxArgumentsBytes. */
export const MAX_BODY_BYTES = 1024 * 1024;

export interface AgentEndpointOptions {
  broker: Broker;
  /** TCP port on 127.0.0.1; 0 picks a free one. */
  port: number;
  /**
   * The agent token whose secret this is, or null: called at every HTTP request and
   * every socket hello, so a revoked token stops at once (SettingsStore.findAgentToken).
   */
  authenticate: (secret: string) => AgentTokenRef | null;
  /** Told whenever the set of open sessions changes (the console shows sessions per token). */
  onSessionsChanged?: () => void;
  /** At most this many MCP sessions; the least recently used is closed beyond it (default 32). */
  maxSessions?: number;
  /** The agent tools (default: a registry of AGENT_TOOLS). Read at every request. */
  tools?: AgentToolRegistry;
  serverInfo?: { name: string; version: string };
  /** The settings file that holds `mcpPort` (named in the port-conflict error, so the person knows what to edit). */
  settingsFile?: string;
  /** Connection limits (default CONNECTION_LIMITS, ../net-guard.ts); tests pass small ones. */
  connectionLimits?: Partial<ConnectionLimits>;
  /** Per-agent-token rate limits and session cap (default AGENT_QUOTA_LIMITS, ./quotas.ts); tests pass small ones. */
  quotas?: Partial<AgentQuotaLimits>;
  /** The quotas' clock (ms; default Date.now); tests pass their own. */
  quotaClock?: () => number;
  /** Each tool call starts on its own turn of the event loop, so the console's UI is served between agent calls (../turns.ts). */
  turns?: Turns;
}

/** The Streamable HTTP MCP endpoint. */
export class AgentEndpoint {
  private readonly opts: AgentEndpointOptions;
  private http: HttpServer | null = null;
  /** The connection limits' counters, once started. */
  connections: ConnectionGuard | null = null;
  private boundPort = 0;
  private readonly sessions: SessionTable;
  private readonly agentSocket: AgentSocket;
  private readonly serverDeps: SessionServerDeps;
  /** Per-agent-token budgets (issue 9 items 3 and 10). */
  readonly quotas: AgentQuotas;
  /** The agent tools, as `tools/list` shows them now. */
  readonly tools: AgentToolRegistry;
  private readonly unsubscribeTools: () => void;

  constructor(opts: AgentEndpointOptions) {
    this.opts = opts;
    this.tools = opts.tools ?? new AgentToolRegistry(AGENT_TOOLS);
    this.unsubscribeTools = this.tools.onChange(() => this.announceToolsChanged());
    // A limit that bites is receipted (boundedly: AgentQuotas gathers a flood's refusals into one receipt a second).
    this.quotas = new AgentQuotas(
      (r) =>
        opts.broker.refuseMalformed({
          faculty: 'console',
          actor: { kind: 'agent', name: r.token.tokenName, tokenId: r.token.tokenId },
          code: 'rate-limited',
          message: r.message,
        }),
      opts.quotas,
      opts.quotaClock,
    );
    // The caps are read at each new session (this.opts may be changed after construction).
    this.sessions = new SessionTable(
      () => ({ perToken: this.quotas.limits.maxSessions, max: this.opts.maxSessions ?? 32 }),
      () => this.opts.onSessionsChanged?.(),
    );
    this.serverDeps = { broker: opts.broker, tools: this.tools, serverInfo: opts.serverInfo, meterCall: (token) => this.meter(token, 'calls'), ...(opts.turns ? { turns: opts.turns } : {}) };
    this.agentSocket = new AgentSocket({ authenticate: opts.authenticate, sessions: this.sessions, makeServer: (s) => this.makeServer(s) });
  }

  /** Take from `token`'s budget of `kind` (see ./quotas.ts). */
  private meter(token: AgentTokenRef, kind: QuotaKind, amount = 1): ReturnType<AgentQuotas['take']> {
    return this.quotas.take({ tokenId: token.id, tokenName: token.name }, kind, amount);
  }

  /**
   * Tell every session that `tools/list` changed. A server notification reaches a
   * Streamable HTTP client only over its standalone SSE stream (its GET; MCP spec
   * 2025-06-18, "Listening for Messages from the Server"); a session without one
   * open yet (the client opens it right after `initialized`) is told when it opens.
   */
  private announceToolsChanged(): void {
    for (const s of this.sessions.values()) {
      if (s.streamOpen) void s.server.sendToolListChanged().catch(() => undefined);
      else s.listChangedPending = true;
    }
  }

  /** `http://127.0.0.1:<port>/mcp` once started, else ''. */
  get url(): string {
    return this.http ? `http://127.0.0.1:${this.boundPort}${MCP_PATH}` : '';
  }

  get port(): number {
    return this.boundPort;
  }

  get sessionCount(): number {
    return this.sessions.size;
  }

  /** Open sessions per token id (HTTP and socket). */
  sessionsByToken(): Map<string, number> {
    return this.sessions.byToken();
  }

  /**
   * Listen on 127.0.0.1.
   * @throws Error with code EADDRINUSE (and a message naming the port) when the port is taken.
   */
  async start(): Promise<{ port: number; url: string }> {
    if (this.http) return { port: this.boundPort, url: this.url };
    const http = createServer((req, res) => {
      this.handle(req, res).catch(() => {
        if (!res.headersSent) this.reject(res, 500, 'internal error');
        else res.end();
      });
    });
    const guard = guardConnections(http, this.opts.connectionLimits);
    await new Promise<void>((resolve, reject) => {
      const onError = (e: NodeJS.ErrnoException) => {
        http.off('listening', onListening);
        const err = new Error(
          e.code === 'EADDRINUSE'
            ? `The MCP port ${this.opts.port} on 127.0.0.1 is already in use (another Echo Console running?). ` +
              `Stop the other program, or set another "mcpPort" in ${this.opts.settingsFile ?? "the data folder's settings.json"} and start again.`
            : `The MCP endpoint could not listen on 127.0.0.1:${this.opts.port}: ${e.message}`,
        ) as NodeJS.ErrnoException;
        err.code = e.code;
        reject(err);
      };
      const onListening = () => {
        http.off('error', onError);
        resolve();
      };
      http.once('error', onError);
      http.once('listening', onListening);
      http.listen(this.opts.port, '127.0.0.1');
    });
    this.http = http;
    this.connections = guard;
    this.boundPort = (http.address() as AddressInfo).port;
    return { port: this.boundPort, url: this.url };
  }

  /** Close every session, the agent socket and the listener. */
  async stop(): Promise<void> {
    this.unsubscribeTools();
    this.quotas.flush();
    // The socket's close() waits for open connections: stop accepting, cut them, then wait.
    const socketClosed = this.agentSocket.stopListening();
    await this.closeSessions();
    this.agentSocket.cutConnections();
    await socketClosed;
    const http = this.http;
    this.http = null;
    if (!http) return;
    await new Promise<void>((resolve) => {
      http.close(() => resolve());
      http.closeAllConnections();
    });
  }

  /**
   * Close every MCP session (HTTP and stdio): in-flight calls are cancelled by the SDK. The
   * tokens stay valid: an agent may open a new session (Stop everything says so, docs/stop.md).
   * @returns how many sessions were closed.
   */
  async closeSessions(): Promise<number> {
    return this.sessions.closeWhere(() => true);
  }

  /**
   * Close every session opened with token `tokenId` (it was revoked): HTTP sessions and
   * their streams end, socket connections are cut, in-flight calls are cancelled.
   * @returns how many sessions were closed.
   */
  async closeSessionsOf(tokenId: string): Promise<number> {
    this.quotas.forget(tokenId);
    return this.sessions.closeWhere((s) => s.token.id === tokenId);
  }

  /**
   * Serve MCP on the private agent socket `socketPath` (./agent-socket.ts: a Unix socket
   * 0600 in a 0700 folder this user owns, or a named pipe on Windows).
   * @returns ok, or the listenPrivate error (`console-already-running`, `socket-path-too-long`, ...).
   */
  listenAgentSocket(socketPath: string): Promise<{ ok: true } | { ok: false; code: string; message: string }> {
    return this.agentSocket.listen(socketPath);
  }

  /** One SDK Server per session (./session-server.ts). */
  private makeServer(session: Pick<Session, 'inFlight' | 'token' | 'via'>): Server {
    return createSessionServer(session, this.serverDeps);
  }

  // ---- the HTTP gates ---------------------------------------------------------------

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.headers.origin !== undefined) {
      return this.reject(res, 403, 'Requests with an Origin header are refused: web pages may not call the Echo Console MCP endpoint.');
    }
    const host = req.headers.host ?? '';
    if (host !== `127.0.0.1:${this.boundPort}`) {
      return this.reject(
        res,
        403,
        `Host header mismatch: the endpoint answers only http://127.0.0.1:${this.boundPort} (not localhost, which may reach ::1, where another user could listen).`,
      );
    }
    const path = (req.url ?? '').split('?')[0];
    if (path !== MCP_PATH) return this.reject(res, 404, `Not found: the MCP endpoint is ${MCP_PATH}.`);
    const token = this.authorised(req.headers.authorization);
    if (!token) {
      res.setHeader('WWW-Authenticate', 'Bearer realm="echo-console"');
      return this.reject(res, 401, 'Missing, wrong or revoked bearer token: create a token for this agent in the Echo Console.');
    }
    // Per-token rate limits (issue 9 item 3), before the body is read or parsed.
    const admitted = this.meter(token, 'requests');
    if (!admitted.ok) return this.tooMany(res, admitted);

    const sid = req.headers['mcp-session-id'];
    let body: unknown;
    /** The size of a JSON-RPC batch, refused without parsing it; null when the body is not one. */
    let batchBytes: number | null = null;
    if (req.method === 'POST') {
      const read = await readBody(req, MAX_BODY_BYTES);
      if (!read.ok) return this.reject(res, read.status, read.message);
      const bytes = this.meter(token, 'bytes', read.bytes);
      if (!bytes.ok) return this.tooMany(res, bytes);
      body = read.value;
      batchBytes = read.batch ? read.bytes : null;
    }
    const found = typeof sid === 'string' ? this.sessions.get(sid) : undefined;
    // A session answers only the token that opened it, over the transport that opened it:
    // another agent's token must not ride on (and be receipted as) this session's agent.
    const session = found && found.via === 'http' && found.token.id === token.id ? found : undefined;
    if (batchBytes !== null) {
      // MCP 2025-06-18 removed JSON-RPC batching ("Changelog"; "Transports": a POST body is ONE
      // request, notification or response). Refused whole and unparsed, with one receipt: a single
      // 700 KB batch of malformed calls once wrote 20,000 fsync'd receipts (issue 9 item 3), and
      // parsing one into 10,000 objects held the console's event loop and its garbage collector.
      const refusedBytes = batchBytes;
      this.opts.broker.refuseMalformed({
        faculty: 'console',
        actor: session ? actorOf(session.server, session.token) : { kind: 'agent', name: token.name, tokenId: token.id },
        code: 'batch-refused',
        message: `A JSON-RPC batch (${refusedBytes} bytes) was refused unparsed: MCP 2025-06-18 has no batches.`,
      });
      return this.reject(res, 400, 'JSON-RPC batches are not accepted (MCP 2025-06-18 removed them): send one message per request.', -32600);
    }
    if (typeof sid === 'string') {
      const s = session;
      if (!s) return this.reject(res, 404, 'Session not found: initialize a new session.');
      s.lastUsed = Date.now();
      // The call rate is metered here, at the door, for HTTP: a flood's refused calls are answered
      // without the SDK or the pipeline running, so they cost the console little (issue 9 item 3).
      if (req.method === 'POST' && isWellFormedCall(body)) {
        const admitted = this.meter(s.token, 'calls');
        if (!admitted.ok) return this.rateLimitedCall(res, body.id, admitted);
      }
      this.recordMalformedCall(body, s.server, s.token);
      if (req.method === 'GET') return this.openStream(s, req, res);
      // The SDK's work for this message starts on its own turn of the event loop (../turns.ts).
      await this.opts.turns?.take();
      return s.transport!.handleRequest(req, res, body);
    }
    if (req.method === 'POST' && isInitializeRequest(body)) {
      await this.opts.turns?.take();
      return this.newSession(req, res, body, token);
    }
    return this.reject(res, 400, 'Bad request: no valid session id (initialize first).');
  }

  /**
   * The SDK refuses a tools/call whose params do not parse (`arguments` not an
   * object, `name` not a string) before our handler runs, so no receipt would be
   * written; write one `refused` here (the SDK still answers its error). One
   * message per request (batches are refused above), so one receipt at most.
   */
  private recordMalformedCall(m: unknown, server: Server, token: AgentTokenRef): void {
    if (!m || typeof m !== 'object' || (m as { method?: unknown }).method !== 'tools/call') return;
    if (CallToolRequestSchema.safeParse(m).success) return;
    const name = (m as { params?: { name?: unknown } }).params?.name;
    const agentToolName = typeof name === 'string' ? name : '(no name)';
    this.opts.broker.refuseMalformed({
      faculty: this.tools.get(agentToolName)?.faculty ?? 'console',
      agentTool: agentToolName,
      actor: actorOf(server, token),
      code: 'invalid-params',
      message: 'Invalid tools/call request: params must be {name: string, arguments?: object}.',
    });
  }

  /**
   * The client's standalone SSE stream. The SDK keeps the response open for the
   * stream's life, so "open" is when its head is written (the SDK has registered
   * the stream by then): a tools/list change that came before is sent at that moment.
   */
  private async openStream(s: Session, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => ServerResponse;
    res.writeHead = ((...args: unknown[]) => {
      const r = writeHead(...args);
      if (res.statusCode === 200) {
        s.streamOpen = true;
        // Only this stream's end closes it: a refused second GET (409) must not.
        res.once('close', () => (s.streamOpen = false));
        if (s.listChangedPending) {
          s.listChangedPending = false;
          queueMicrotask(() => void s.server.sendToolListChanged().catch(() => undefined));
        }
      }
      return r;
    }) as typeof res.writeHead;
    await s.transport!.handleRequest(req, res);
  }

  /** The token a `Bearer` header names, or null (authenticate compares hashes in constant time). */
  private authorised(header: string | undefined): AgentTokenRef | null {
    const m = /^Bearer ([A-Za-z0-9._~+/=-]{1,512})$/i.exec(header ?? '');
    // Always look up, even without a match, so timing says nothing about the header.
    const token = this.opts.authenticate(m?.[1] ?? '');
    return m !== null ? token : null;
  }

  /**
   * A tools/call refused by the call rate: the MCP tool error a handler would give (`isError`,
   * "Error (rate-limited): …"; MCP spec 2025-06-18, "Tools", "Error Handling") as a plain JSON
   * response (Streamable HTTP allows `application/json` for a POST's answer).
   */
  private rateLimitedCall(res: ServerResponse, id: string | number, d: { message: string }): void {
    res.statusCode = 200;
    res.setHeader('Content-Type', 'application/json');
    res.end(JSON.stringify({ jsonrpc: '2.0', id, result: rateLimitedResult(d.message) }));
  }

  /** 429 with `Retry-After` (whole seconds, RFC 9110 §10.2.3) and the limit's message. */
  private tooMany(res: ServerResponse, d: { retryAfterMs: number; message: string }): void {
    res.setHeader('Retry-After', String(Math.max(1, Math.ceil(d.retryAfterMs / 1000))));
    this.reject(res, 429, d.message);
  }

  /** An HTTP refusal with a JSON-RPC error body (`code`: default -32001 for 401, else -32000). */
  private reject(res: ServerResponse, status: number, message: string, code?: number): void {
    res.statusCode = status;
    res.setHeader('Content-Type', 'application/json');
    res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: code ?? (status === 401 ? -32001 : -32000), message }, id: null }));
  }

  // ---- new HTTP sessions ------------------------------------------------------------

  /** Open an HTTP session for `token` (its `initialize` POST), once the session table has room (else 503). */
  private async newSession(req: IncomingMessage, res: ServerResponse, body: unknown, token: AgentTokenRef): Promise<void> {
    const full = await this.sessions.makeRoom(token);
    if (full) return this.reject(res, 503, full);
    const session: Session = {
      via: 'http',
      token,
      server: undefined as unknown as Server,
      lastUsed: Date.now(),
      transport: undefined as unknown as StreamableHTTPServerTransport,
      streamOpen: false,
      listChangedPending: false,
      inFlight: 0,
    };
    const server = this.makeServer(session);
    session.server = server;
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => this.sessions.add(id, session),
      onsessionclosed: (id) => void this.sessions.remove(id),
    });
    session.transport = transport;
    transport.onclose = () => {
      if (transport.sessionId) this.sessions.remove(transport.sessionId);
    };
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  }
}

/** A JSON-RPC `tools/call` request the SDK will accept (CallToolRequestSchema) and answer by its id. */
function isWellFormedCall(m: unknown): m is { id: string | number; method: 'tools/call' } {
  if (!m || typeof m !== 'object' || (m as { method?: unknown }).method !== 'tools/call') return false;
  const id = (m as { id?: unknown }).id;
  return (typeof id === 'string' || typeof id === 'number') && CallToolRequestSchema.safeParse(m).success;
}

/**
 * Read a request body of at most `max` bytes and parse it as JSON, except a
 * JSON-RPC batch (its first character other than JSON whitespace is `[`), which
 * is reported as `batch: true` and never parsed: it is refused whole anyway.
 */
async function readBody(
  req: IncomingMessage,
  max: number,
): Promise<{ ok: true; value: unknown; bytes: number; batch: boolean } | { ok: false; status: number; message: string }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > max) return { ok: false, status: 413, message: `Request body larger than ${max} bytes.` };
    chunks.push(chunk as Buffer);
  }
  const whole = Buffer.concat(chunks);
  let i = 0;
  while (i < whole.length && (whole[i] === 0x20 || whole[i] === 0x09 || whole[i] === 0x0a || whole[i] === 0x0d)) i++;
  if (whole[i] === 0x5b) return { ok: true, value: undefined, bytes: size, batch: true };
  try {
    return { ok: true, value: JSON.parse(whole.toString('utf8')), bytes: size, batch: false };
  } catch {
    return { ok: false, status: 400, message: 'Parse error: the body is not JSON.' };
  }
}
