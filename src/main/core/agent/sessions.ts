/**
 * The MCP session table of the agent endpoint: every open session (Streamable
 * HTTP or the private agent socket), the token that opened it, and the rule that
 * decides which session gives way when a new one needs room (issue 9 item 10:
 * a per-token cap, then the endpoint's cap, evicting only idle sessions, the
 * token holding the most first). The endpoint (./endpoint.ts) and the agent
 * socket (./agent-socket.ts) add and look up sessions here.
 */
import type { Socket } from 'node:net';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { AgentTokenRef } from '../broker';

/** One MCP session: its SDK server, how it is reached, and the token that opened it. */
export interface Session {
  /** `http`: Streamable HTTP; `socket`: the private agent socket (the stdio command). */
  via: 'http' | 'socket';
  /** The token that opened the session; only it may use the session. */
  token: AgentTokenRef;
  /** HTTP sessions only. */
  transport?: StreamableHTTPServerTransport;
  /** Socket sessions only: the connection, destroyed when the session closes. */
  socket?: Socket;
  server: Server;
  /** When the session was last used (ms since the epoch, Date.now). */
  lastUsed: number;
  /** The client's standalone SSE stream (its GET) is open: server notifications can reach it. */
  streamOpen: boolean;
  /** A tools/list change happened while no stream was open: sent when the client opens one. */
  listChangedPending: boolean;
  /** tools/call requests of this session being handled now (one may wait minutes for the person). */
  inFlight: number;
}

/** The session caps, read each time room is made (so they may change at run time). */
export interface SessionCaps {
  /** At most this many sessions per agent token (AgentQuotaLimits.maxSessions, default 8). */
  perToken: number;
  /** At most this many sessions in all (AgentEndpointOptions.maxSessions, default 32). */
  max: number;
}

/** Open MCP sessions by session id. */
export class SessionTable {
  private readonly sessions = new Map<string, Session>();

  /**
   * @param caps the caps, read at every `makeRoom`.
   * @param onChanged told whenever the set of open sessions changes; its failure is swallowed.
   */
  constructor(
    private readonly caps: () => SessionCaps,
    private readonly onChanged?: () => void,
  ) {}

  get size(): number {
    return this.sessions.size;
  }

  /** The session with this id, or undefined. */
  get(id: string): Session | undefined {
    return this.sessions.get(id);
  }

  /** Every open session. */
  values(): IterableIterator<Session> {
    return this.sessions.values();
  }

  /** Add a session under `id` and tell the listener. */
  add(id: string, s: Session): void {
    this.sessions.set(id, s);
    this.changed();
  }

  /**
   * Remove the session `id` (only if it is `expected`, when given) and tell the listener.
   * @returns whether a session was removed.
   */
  remove(id: string, expected?: Session): boolean {
    if (expected && this.sessions.get(id) !== expected) return false;
    if (!this.sessions.delete(id)) return false;
    this.changed();
    return true;
  }

  /** Open sessions per token id (HTTP and socket). */
  byToken(): Map<string, number> {
    const m = new Map<string, number>();
    for (const s of this.sessions.values()) m.set(s.token.id, (m.get(s.token.id) ?? 0) + 1);
    return m;
  }

  /**
   * Close every session `pred` picks: in-flight calls are cancelled by the SDK,
   * HTTP streams end, socket connections are cut.
   * @returns how many sessions were closed.
   */
  async closeWhere(pred: (s: Session) => boolean): Promise<number> {
    const closing = [...this.sessions.entries()].filter(([, s]) => pred(s));
    for (const [id] of closing) this.sessions.delete(id);
    await Promise.allSettled(closing.map(([, s]) => closeSession(s)));
    if (closing.length) this.changed();
    return closing.length;
  }

  /**
   * Make room for one more session of `token` (issue 9 item 10), closing only
   * sessions WITHOUT a call in flight (one may be waiting for the person):
   * - at the token's own cap (`perToken`), its own least recently used idle
   *   session gives way;
   * - at the endpoint's cap (`max`), an idle session of the token holding the
   *   most sessions gives way (the least recently used among them), so a token
   *   opening sessions pushes out its own first, never an agent with fewer.
   * @returns null when there is room, else why not (every candidate has a call in flight).
   */
  async makeRoom(token: AgentTokenRef): Promise<string | null> {
    const { perToken, max } = this.caps();
    const lruIdle = (list: Array<[string, Session]>) => list.filter(([, x]) => x.inFlight === 0).sort((a, b) => a[1].lastUsed - b[1].lastUsed)[0];
    for (;;) {
      const mine = [...this.sessions.entries()].filter(([, x]) => x.token.id === token.id);
      if (mine.length < perToken) break;
      const idle = lruIdle(mine);
      if (!idle) return `Agent token "${token.name}" has ${mine.length} MCP sessions (at most ${perToken} per agent), each with a call in flight; try again when one ends.`;
      await this.evict(idle);
    }
    while (this.sessions.size >= max) {
      const counts = this.byToken();
      const idle = [...this.sessions.entries()]
        .filter(([, x]) => x.inFlight === 0)
        .sort((a, b) => (counts.get(b[1].token.id) ?? 0) - (counts.get(a[1].token.id) ?? 0) || a[1].lastUsed - b[1].lastUsed)[0];
      if (!idle) return `Every one of the ${max} MCP sessions has a call in flight; try again when one ends.`;
      await this.evict(idle);
    }
    return null;
  }

  private async evict([id, s]: [string, Session]): Promise<void> {
    this.sessions.delete(id);
    await closeSession(s);
    this.changed();
  }

  private changed(): void {
    try {
      this.onChanged?.();
    } catch {
      /* a listener's failure is not the endpoint's */
    }
  }
}

/** Close one session's server (the SDK cancels its in-flight calls) and cut its socket, if any. */
async function closeSession(s: Session): Promise<void> {
  await s.server.close().catch(() => undefined);
  s.socket?.destroy();
}
