/**
 * The agent's MCP endpoint: Streamable HTTP (MCP spec 2025-06-18, "Transports",
 * "Streamable HTTP") on 127.0.0.1, path `/mcp`, one MCP session per client,
 * built on the official SDK (`Server` + `WebStandardStreamableHTTPServerTransport`).
 * This file owns the HTTP gates and wires the parts together: the HTTP relay
 * (./http-relay.ts: the listener, in a worker thread, which only moves bytes),
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
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { CallToolRequestSchema, isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { AgentTokenRef, Broker } from '../broker';
import type { ConnectionGuard, ConnectionLimits } from '../net-guard';
import { AgentSocket } from './agent-socket';
import { RELAY_COUNTER, startRelay, type FromRelay, type RelayBody, type RelayHandle, type RelayHeaders, type RelayWorkerEntry } from './http-relay';
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
  /**
   * The HTTP relay's worker entry (./http-relay.ts): the hosts pass their built
   * out/main/agent-relay.js; null runs the relay in this thread; absent: from
   * source (tsx, vitest) the TypeScript entry, in a build this thread.
   */
  relayWorker?: RelayWorkerEntry;
}

/** The Streamable HTTP MCP endpoint. */
export class AgentEndpoint {
  private readonly opts: AgentEndpointOptions;
  private relay: RelayHandle | null = null;
  /** Requests the relay handed over and not yet answered, by the relay's id. */
  private readonly relayed = new Map<number, RelayedRequest>();
  /** The connection limits' counters (kept by the relay), once started. */
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
    return this.relay ? `http://127.0.0.1:${this.boundPort}${MCP_PATH}` : '';
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
    if (this.relay) return { port: this.boundPort, url: this.url };
    let relay: RelayHandle;
    try {
      relay = await this.startRelay(this.opts.port);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      const err = new Error(
        code === 'EADDRINUSE'
          ? `The MCP port ${this.opts.port} on 127.0.0.1 is already in use (another Echo Console running?). ` +
            `Stop the other program, or set another "mcpPort" in ${this.opts.settingsFile ?? "the data folder's settings.json"} and start again.`
          : `The MCP endpoint could not listen on 127.0.0.1:${this.opts.port}: ${(e as Error).message}`,
      ) as NodeJS.ErrnoException;
      if (code !== undefined) err.code = code;
      throw err;
    }
    this.relay = relay;
    const c = relay.counters;
    this.connections = {
      open: () => Atomics.load(c, RELAY_COUNTER.open),
      evicted: () => Atomics.load(c, RELAY_COUNTER.evicted),
      refused: () => Atomics.load(c, RELAY_COUNTER.refused),
      timedOut: () => Atomics.load(c, RELAY_COUNTER.timedOut),
    };
    this.boundPort = relay.port;
    return { port: this.boundPort, url: this.url };
  }

  /** The listener's address once started (`{ address: '127.0.0.1', family: 'IPv4', port }`), else null. */
  address(): { address: string; family: string; port: number } | null {
    return this.relay?.address ?? null;
  }

  /** Whether the HTTP relay runs in a worker thread (false: in this thread, the fallback). */
  get relayInWorker(): boolean {
    return this.relay?.inWorker ?? false;
  }

  private startRelay(port: number, entry = this.opts.relayWorker): Promise<RelayHandle> {
    return startRelay(
      { port, ...(this.opts.connectionLimits ? { connectionLimits: this.opts.connectionLimits } : {}) },
      (m) => this.fromRelay(m),
      entry,
      () => this.relayLost(),
    );
  }

  /**
   * The relay's worker ended on its own (it should not): the requests it held are
   * gone; the same relay starts again in this thread, on the same port.
   */
  private relayLost(): void {
    for (const r of this.relayed.values()) r.gone();
    this.relayed.clear();
    const lost = this.relay;
    void this.startRelay(this.boundPort, null).then(
      (relay) => {
        if (this.relay === lost) this.relay = relay;
        else void relay.stop();
      },
      () => undefined,
    );
  }

  private fromRelay(m: FromRelay): void {
    if (m.t === 'request') {
      const relay = this.relay;
      if (!relay) return;
      const r = new RelayedRequest(relay, m.id, m.method, m.url, m.headers, () => this.relayed.delete(m.id));
      this.relayed.set(m.id, r);
      this.handle(r).catch(() => r.fail());
    } else if (m.t === 'body') {
      this.relayed.get(m.id)?.bodyArrived(m.body);
    } else if (m.t === 'gone') {
      const r = this.relayed.get(m.id);
      this.relayed.delete(m.id);
      r?.gone();
    }
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
    const relay = this.relay;
    this.relay = null;
    if (!relay) return;
    for (const r of this.relayed.values()) r.gone();
    this.relayed.clear();
    await relay.stop();
  }

  /** Close every MCP session: in-flight calls are cancelled by the SDK. */
  async closeSessions(): Promise<void> {
    await this.sessions.closeWhere(() => true);
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

  private async handle(req: RelayedRequest): Promise<void> {
    const res = req;
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
      return this.reject(res, 401, 'Missing, wrong or revoked bearer token: create a token for this agent in the Echo Console.', undefined, [['WWW-Authenticate', 'Bearer realm="echo-console"']]);
    }
    // Per-token rate limits (issue 9 item 3), before the body is read or parsed.
    const admitted = this.meter(token, 'requests');
    if (!admitted.ok) return this.tooMany(res, admitted);

    const sid = req.headers['mcp-session-id'];
    let body: unknown;
    /** The size of a JSON-RPC batch, refused without parsing it; null when the body is not one. */
    let batchBytes: number | null = null;
    if (req.method === 'POST') {
      const read = await req.readBody(MAX_BODY_BYTES);
      if (!read.ok) {
        if (read.reason === 'aborted') return req.fail();
        return this.reject(res, 413, `Request body larger than ${MAX_BODY_BYTES} bytes.`);
      }
      if (!read.batch) {
        try {
          body = JSON.parse(read.text);
        } catch {
          return this.reject(res, 400, 'Parse error: the body is not JSON.');
        }
      }
      const bytes = this.meter(token, 'bytes', read.bytes);
      if (!bytes.ok) return this.tooMany(res, bytes);
      if (read.batch) batchBytes = read.bytes;
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
      if (req.method === 'GET') return this.openStream(s, req);
      // The SDK's work for this message starts on its own turn of the event loop (../turns.ts).
      await this.opts.turns?.take();
      return req.respond(await s.transport!.handleRequest(req.webRequest(), { parsedBody: body }));
    }
    if (req.method === 'POST' && isInitializeRequest(body)) {
      await this.opts.turns?.take();
      return this.newSession(req, body, token);
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
  private async openStream(s: Session, req: RelayedRequest): Promise<void> {
    const answer = await s.transport!.handleRequest(req.webRequest());
    // Only this stream's end closes it: a refused second GET (409) must not.
    if (answer.status !== 200) return req.respond(answer);
    req.respond(answer, () => (s.streamOpen = false));
    s.streamOpen = true;
    if (s.listChangedPending) {
      s.listChangedPending = false;
      queueMicrotask(() => void s.server.sendToolListChanged().catch(() => undefined));
    }
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
  private rateLimitedCall(res: RelayedRequest, id: string | number, d: { message: string }): void {
    res.answer(200, [['Content-Type', 'application/json']], JSON.stringify({ jsonrpc: '2.0', id, result: rateLimitedResult(d.message) }));
  }

  /** 429 with `Retry-After` (whole seconds, RFC 9110 §10.2.3) and the limit's message. */
  private tooMany(res: RelayedRequest, d: { retryAfterMs: number; message: string }): void {
    this.reject(res, 429, d.message, undefined, [['Retry-After', String(Math.max(1, Math.ceil(d.retryAfterMs / 1000)))]]);
  }

  /** An HTTP refusal with a JSON-RPC error body (`code`: default -32001 for 401, else -32000). */
  private reject(res: RelayedRequest, status: number, message: string, code?: number, headers: Array<[string, string]> = []): void {
    res.answer(status, [...headers, ['Content-Type', 'application/json']], JSON.stringify({ jsonrpc: '2.0', error: { code: code ?? (status === 401 ? -32001 : -32000), message }, id: null }));
  }

  // ---- new HTTP sessions ------------------------------------------------------------

  /** Open an HTTP session for `token` (its `initialize` POST), once the session table has room (else 503). */
  private async newSession(req: RelayedRequest, body: unknown, token: AgentTokenRef): Promise<void> {
    const full = await this.sessions.makeRoom(token);
    if (full) return this.reject(req, 503, full);
    const session: Session = {
      via: 'http',
      token,
      server: undefined as unknown as Server,
      lastUsed: Date.now(),
      transport: undefined as unknown as WebStandardStreamableHTTPServerTransport,
      streamOpen: false,
      listChangedPending: false,
      inFlight: 0,
    };
    const server = this.makeServer(session);
    session.server = server;
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => this.sessions.add(id, session),
      onsessionclosed: (id) => void this.sessions.remove(id),
    });
    session.transport = transport;
    transport.onclose = () => {
      if (transport.sessionId) this.sessions.remove(transport.sessionId);
    };
    await server.connect(transport);
    req.respond(await transport.handleRequest(req.webRequest(), { parsedBody: body }));
  }
}

/** A JSON-RPC `tools/call` request the SDK will accept (CallToolRequestSchema) and answer by its id. */
function isWellFormedCall(m: unknown): m is { id: string | number; method: 'tools/call' } {
  if (!m || typeof m !== 'object' || (m as { method?: unknown }).method !== 'tools/call') return false;
  const id = (m as { id?: unknown }).id;
  return (typeof id === 'string' || typeof id === 'number') && CallToolRequestSchema.safeParse(m).success;
}

/**
 * One HTTP request the relay (./http-relay.ts) handed over: its method, URL and
 * headers at once, its body on request, and one answer, written by the relay.
 * Answering twice, or after the client went away, does nothing.
 */
class RelayedRequest {
  private answered = false;
  private bodyWaiter: ((b: RelayBody) => void) | null = null;
  /** Set while a streamed answer is being sent: stops it when the client goes away. */
  private stopStream: (() => void) | null = null;

  constructor(
    private readonly relay: RelayHandle,
    readonly id: number,
    readonly method: string,
    readonly url: string,
    readonly headers: RelayHeaders,
    private readonly done: () => void,
  ) {}

  /** Read the body (at most `max` bytes), parsed unless it is a batch (`RelayBody`). */
  readBody(max: number): Promise<RelayBody> {
    return new Promise((resolve) => {
      this.bodyWaiter = resolve;
      this.relay.send({ t: 'read', id: this.id, max });
    });
  }

  bodyArrived(b: RelayBody): void {
    const w = this.bodyWaiter;
    this.bodyWaiter = null;
    w?.(b);
  }

  /** The client went away: a body still awaited reads as aborted, a stream stops. */
  gone(): void {
    this.answered = true;
    this.bodyArrived({ ok: false, reason: 'aborted', bytes: 0 });
    this.stopStream?.();
  }

  /** A whole answer. */
  answer(status: number, headers: Array<[string, string]>, body: string): void {
    if (this.answered) return;
    this.answered = true;
    this.done();
    this.relay.send({ t: 'answer', id: this.id, status, headers, body });
  }

  /** The request failed inside the endpoint: 500 if nothing was answered yet. */
  fail(): void {
    this.answer(500, [['Content-Type', 'application/json']], JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'internal error' }, id: null }));
  }

  /** The request as the SDK's web-standard transport reads it (its body is passed parsed). */
  webRequest(): Request {
    // A method the SDK does not serve goes to it as PUT, which it answers 405 with `Allow`
    // (`Request` itself throws on CONNECT, TRACE and TRACK).
    const method = this.method === 'GET' || this.method === 'POST' || this.method === 'DELETE' ? this.method : 'PUT';
    return new Request(`http://127.0.0.1${this.url.startsWith('/') ? '' : '/'}${this.url}`, { method, headers: this.headers });
  }

  /**
   * Send the SDK's answer: a JSON body whole, an SSE stream chunk by chunk until
   * it ends or the client goes away (then the stream is cancelled, which the SDK
   * takes as the client's leaving). `onEnd` is told when a streamed answer ends.
   */
  respond(r: Response, onEnd?: () => void): void {
    if (this.answered) {
      void r.body?.cancel().catch(() => undefined);
      onEnd?.();
      return;
    }
    const headers = [...r.headers] as Array<[string, string]>;
    const streamed = r.body !== null && (r.headers.get('content-type') ?? '').startsWith('text/event-stream');
    if (!streamed) {
      void r.text().then(
        (text) => this.answer(r.status, headers, text),
        () => this.fail(),
      );
      return;
    }
    this.relay.send({ t: 'answer', id: this.id, status: r.status, headers, stream: true });
    const reader = r.body!.getReader();
    this.stopStream = () => void reader.cancel().catch(() => undefined);
    void (async () => {
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done || this.answered) break;
          this.relay.send({ t: 'chunk', id: this.id, data: value });
        }
      } catch {
        /* the stream failed: end the answer */
      }
      if (!this.answered) {
        this.answered = true;
        this.done();
        this.relay.send({ t: 'end', id: this.id });
      }
      this.stopStream = null;
      onEnd?.();
    })();
  }
}
