/**
 * The console's private agent socket: the same MCP server as the HTTP endpoint,
 * offered on a Unix socket 0600 in a 0700 folder the user owns (or a named pipe),
 * which is what the stdio command (bin/echo-console-mcp.mjs) uses: it never sends
 * a token over TCP (issue 9 item 2).
 *
 * Framing: the first line is the client's hello
 * `{"echoConsoleAgent":1,"token":"<secret>"}`, answered by one line
 * `{"ok":true,"agent":{id,name}}` or `{"ok":false,"error":{code,message}}`
 * (codes `hello-timeout`, `bad-hello`, `unauthorized`, `too-many-sessions`);
 * after it, newline-delimited JSON-RPC (the MCP stdio framing) both ways.
 */
import { randomUUID } from 'node:crypto';
import type { Server as NetServer, Socket } from 'node:net';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { AgentTokenRef } from '../broker';
import { listenPrivate } from '../bridge/socket-server';
import type { Session, SessionTable } from './sessions';

/** Longest hello line on the agent socket (bytes); a longer one is refused and the socket closed. */
export const MAX_SOCKET_HELLO_BYTES = 4096;
/** How long the agent socket waits for the hello line (ms) before closing the connection. */
export const SOCKET_HELLO_TIMEOUT_MS = 10_000;

/** What the agent socket needs from the endpoint. */
export interface AgentSocketDeps {
  /** The agent token whose secret this is, or null (looked up at every hello, so a revoked token stops at once). */
  authenticate: (secret: string) => AgentTokenRef | null;
  /** The endpoint's session table: socket sessions count against the same caps as HTTP ones. */
  sessions: SessionTable;
  /** The MCP server of a new session (./session-server.ts). */
  makeServer: (session: Session) => Server;
}

/** The private agent socket's listener and its connections. */
export class AgentSocket {
  private server: NetServer | null = null;
  /** Every connection, also those still saying hello (cut at stop). */
  private readonly connections = new Set<Socket>();

  constructor(private readonly deps: AgentSocketDeps) {}

  /**
   * Serve MCP on `socketPath` (src/main/data-dir.mjs agentSocketPath): a Unix socket
   * made 0600 in a 0700 folder this user owns, refused when another user owns the
   * folder (listenPrivate, ../bridge/socket-server.ts), or a named pipe on Windows.
   * Each connection says its hello first (see the file header).
   * @returns ok, or the listenPrivate error (`console-already-running`, `socket-path-too-long`, ...).
   */
  async listen(socketPath: string): Promise<{ ok: true } | { ok: false; code: string; message: string }> {
    if (this.server) return { ok: true };
    const r = await listenPrivate(socketPath, (sock) => this.accept(sock));
    if (!r.ok) return { ok: false, code: r.error.code, message: r.error.message };
    this.server = r.value;
    return { ok: true };
  }

  /**
   * Stop accepting connections.
   * @returns a promise that settles once every connection has closed (see `cutConnections`).
   */
  stopListening(): Promise<void> {
    const sock = this.server;
    this.server = null;
    // close() waits for open connections: the caller cuts them, then waits.
    return sock ? new Promise<void>((resolve) => sock.close(() => resolve())) : Promise.resolve();
  }

  /** Cut every connection, also those still saying hello. */
  cutConnections(): void {
    for (const c of this.connections) c.destroy();
  }

  private accept(sock: Socket): void {
    this.connections.add(sock);
    sock.once('close', () => this.connections.delete(sock));
    let buf = Buffer.alloc(0);
    const refuse = (code: string, message: string) => {
      sock.end(`${JSON.stringify({ ok: false, error: { code, message } })}\n`, () => sock.destroy());
    };
    const timer = setTimeout(() => {
      sock.off('data', onData);
      refuse('hello-timeout', 'No hello within the time allowed.');
    }, SOCKET_HELLO_TIMEOUT_MS);
    const onData = (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      const nl = buf.indexOf(0x0a);
      if (nl < 0) {
        if (buf.length > MAX_SOCKET_HELLO_BYTES) {
          clearTimeout(timer);
          sock.off('data', onData);
          refuse('bad-hello', `The hello line is longer than ${MAX_SOCKET_HELLO_BYTES} bytes.`);
        }
        return;
      }
      clearTimeout(timer);
      sock.off('data', onData);
      sock.pause();
      const line = buf.subarray(0, nl).toString('utf8');
      const rest = buf.subarray(nl + 1);
      let hello: unknown;
      try {
        hello = JSON.parse(line);
      } catch {
        hello = null;
      }
      const secret = hello && typeof hello === 'object' && (hello as { echoConsoleAgent?: unknown }).echoConsoleAgent === 1 ? (hello as { token?: unknown }).token : undefined;
      if (typeof secret !== 'string') return refuse('bad-hello', 'The first line must be {"echoConsoleAgent":1,"token":"<agent token>"}.');
      const token = /^[A-Za-z0-9._~+/=-]{1,512}$/.test(secret) ? this.deps.authenticate(secret) : null;
      if (!token) return refuse('unauthorized', 'Unknown or revoked agent token: create one in the Echo Console (Connection → Agent tokens).');
      void this.openSession(sock, token, rest);
    };
    sock.on('data', onData);
    sock.on('error', () => sock.destroy());
    sock.on('close', () => clearTimeout(timer));
  }

  private async openSession(sock: Socket, token: AgentTokenRef, rest: Buffer): Promise<void> {
    const { sessions } = this.deps;
    const full = await sessions.makeRoom(token);
    if (full) {
      sock.end(`${JSON.stringify({ ok: false, error: { code: 'too-many-sessions', message: full } })}\n`);
      return;
    }
    if (sock.destroyed) return;
    const id = `socket-${randomUUID()}`;
    const session: Session = { via: 'socket', token, socket: sock, server: undefined as unknown as Server, lastUsed: Date.now(), streamOpen: true, listChangedPending: false, inFlight: 0 };
    session.server = this.deps.makeServer(session);
    sessions.add(id, session);
    sock.once('close', () => {
      if (sessions.remove(id, session)) void session.server.close().catch(() => undefined);
    });
    sock.on('data', () => (session.lastUsed = Date.now()));
    sock.write(`${JSON.stringify({ ok: true, agent: { id: token.id, name: token.name } })}\n`);
    // The hello's own bytes are read; anything the client sent after it belongs to MCP.
    if (rest.length) sock.unshift(rest);
    await session.server.connect(new StdioServerTransport(sock, sock));
    // Paused while the hello was read; a 'data' listener alone does not restart a paused stream.
    sock.resume();
  }
}
