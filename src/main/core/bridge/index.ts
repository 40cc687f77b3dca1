/**
 * The console's end of the link to the extension (docs/design.md, "The link between
 * console and extension"; docs/link.md). Implements `ExtensionLink`
 * (src/main/core/ports.ts) for the broker.
 *
 * A thin adapter over the shared link core (src/shared/link-core): this file
 * owns only what is the console's own: the private local socket
 * (socket-server.ts), the native host's `host-hello` (the caller origin Chrome
 * gave the host, one extension connection at a time), the SecretStore holding
 * the pairing key, LinkStatus and the audit hook. The handshake is
 * `consoleStep` (pure, driven by a StepRunner), requests go through the shared
 * `LinkMux`, liveness through the shared `Heartbeat`. A malformed message is
 * answered with `error{code:'bad-message'}`, logged, and never throws. A
 * dropped link fails every request in flight with `link-down` and never
 * replays it.
 *
 * What the console shows of the link is status.ts; the stored pairing's
 * record is pairing-record.ts.
 */
import type net from 'node:net';
import { FrameDecoder, encodeFrame } from '../../../shared/framing';
import { signGrant as macGrant } from '../../../shared/grant';
import { forgetNodeGrantKey, nodeGrantMac } from '../digest';
import type { LinkStatus } from '../../../shared/ipc';
import { LIMITS } from '../../../shared/limits';
import {
  consoleInit,
  consoleStep,
  Heartbeat,
  LinkMux,
  StepRunner,
  type ConsoleEffect,
  type ConsoleEnv,
  type ConsoleInput,
  type ConsoleState,
  type LinkAuditEvent,
  type LinkError,
} from '../../../shared/link-core';
import { randomHex } from '../../../shared/pairing-crypto';
import {
  PROTOCOL_VERSION,
  validateConsoleToExtension,
  validateHostToConsole,
  validateRequestValue,
  type ConsoleRequest,
  type ConsoleRequestValue,
  type ConsoleToExtension,
  type ExtensionEvent,
} from '../../../shared/protocol';
import { err, ok, type Result } from '../../../shared/result';
import type { Grant } from '../../../shared/types';
import type { ExtensionLink } from '../ports';
import { PAIRING_SECRET_NAME, pairingRecord, parsePairingRecord, type StoredPairing } from './pairing-record';
import type { SecretStore } from './secret-store';
import { listenPrivate } from './socket-server';
import { LinkStatusCell, endedStatus } from './status';

export { FileSecretStore, MemorySecretStore, type SecretStore } from './secret-store';
export { defaultSocketPath } from '../../../native-host/socket-path';
export { PAIRING_SECRET_NAME } from './pairing-record';

/** A minimal logger; `detail` is JSON-safe. */
export interface BridgeLogger {
  info(message: string, detail?: unknown): void;
  warn(message: string, detail?: unknown): void;
}

export type { LinkAuditEvent };

/** Timing knobs (ms). Defaults come from LIMITS; tests shorten them. */
export interface BridgeTiming {
  /** Ping period (default LIMITS.heartbeatIntervalMs). */
  heartbeatIntervalMs?: number;
  /** Drop the link when no pong arrived for this long (default LIMITS.heartbeatTimeoutMs). */
  heartbeatTimeoutMs?: number;
  /** Default per-request timeout (default LIMITS.dispatchTimeoutMs). `invoke` waits at least its own timeoutMs + 5 s. */
  requestTimeoutMs?: number;
  /** Each handshake step (host-hello, hello, key exchange, auth) must arrive within this (default 10 s). */
  handshakeTimeoutMs?: number;
  /** How long the person has to confirm a pairing code (default 120 s). */
  pairingTimeoutMs?: number;
}

/** Constructor options of `Bridge`. */
export interface BridgeOptions {
  /** Unix socket path or Windows named pipe (src/native-host/socket-path.ts `defaultSocketPath`). */
  socketPath: string;
  /** IDs of the extension(s) allowed to connect (the fixed ID from manifest.json's `key`). */
  expectedExtensionIds: readonly string[];
  /** Holds the pairing key (FileSecretStore, or a safeStorage-backed one in Electron). */
  secretStore: SecretStore;
  /** Reported in hello-ack. */
  consoleVersion?: string;
  logger?: BridgeLogger;
  /** Called for every event worth a receipt; exceptions it throws are logged and ignored. */
  onAudit?: (e: LinkAuditEvent) => void;
  timing?: BridgeTiming;
  /** Tests only: pretend to speak another protocol version. */
  protocolVersion?: number;
}

interface Conn {
  id: number;
  sock: net.Socket;
  decoder: FrameDecoder;
  closed: boolean;
  /** Until host-hello: its deadline and a queue for the first frame. */
  helloDeadline?: ReturnType<typeof setTimeout>;
  callerOrigin?: string;
  /** From an accepted host-hello on: the handshake, the requests, the heartbeat. */
  runner?: StepRunner<ConsoleState, ConsoleInput, ConsoleToExtension, ConsoleEffect>;
  mux?: LinkMux;
  heartbeat?: Heartbeat;
  ready: boolean;
}

const defaultLogger: BridgeLogger = {
  info: () => {},
  warn: (m, d) => console.warn(`[bridge] ${m}`, d ?? ''),
};

/** Connections not yet past host-hello, at most (each has the handshake deadline; at the bound the oldest gives way). */
export const MAX_UNIDENTIFIED = 4;

/**
 * The console side of the extension link. Construct, `start()`, hand to the
 * broker as `ExtensionLink`; `stop()` on quit.
 */
export class Bridge implements ExtensionLink {
  private readonly opts: BridgeOptions;
  private readonly log: BridgeLogger;
  private readonly t: Required<BridgeTiming>;
  private readonly version: number;
  private server: net.Server | null = null;
  /** The one connection past host-hello (the extension's), if any. */
  private conn: Conn | null = null;
  /** Connections that have not said host-hello yet (bounded; each has a deadline). */
  private readonly fresh = new Set<Conn>();
  private nextConnId = 1;
  private pairing: StoredPairing | null = null;
  private pairingKey: Uint8Array | null = null;
  private readonly eventListeners = new Set<(e: ExtensionEvent) => void>();
  private readonly linkStatus = new LinkStatusCell((m, d) => this.log.warn(m, d));

  constructor(opts: BridgeOptions) {
    this.opts = opts;
    this.log = opts.logger ?? defaultLogger;
    this.version = opts.protocolVersion ?? PROTOCOL_VERSION;
    this.t = {
      heartbeatIntervalMs: opts.timing?.heartbeatIntervalMs ?? LIMITS.heartbeatIntervalMs,
      heartbeatTimeoutMs: opts.timing?.heartbeatTimeoutMs ?? LIMITS.heartbeatTimeoutMs,
      requestTimeoutMs: opts.timing?.requestTimeoutMs ?? LIMITS.dispatchTimeoutMs,
      handshakeTimeoutMs: opts.timing?.handshakeTimeoutMs ?? 10_000,
      pairingTimeoutMs: opts.timing?.pairingTimeoutMs ?? 120_000,
    };
  }

  // ---- lifecycle ------------------------------------------------------------------

  /**
   * Load the pairing and listen on the socket.
   * @returns `{ok:true}` when listening; otherwise the code from `listenPrivate`
   *   (`console-already-running`, `socket-path-occupied`, `socket-path-too-long`,
   *   `socket-dir-insecure`, `listen-failed`) or `already-started`.
   */
  async start(): Promise<Result<{ socketPath: string }>> {
    if (this.server) return err('already-started', 'the bridge is already listening');
    await this.loadPairing();
    const r = await listenPrivate(this.opts.socketPath, (s) => this.accept(s));
    if (!r.ok) return r;
    this.server = r.value;
    this.server.on('error', (e) => this.log.warn('socket server error', { message: e.message }));
    this.setStatus({ state: 'no-extension' });
    return ok({ socketPath: this.opts.socketPath });
  }

  /** Close the link and the socket. In-flight requests fail with `link-down`. */
  async stop(): Promise<void> {
    if (this.conn) await this.drop(this.conn, 'console-stopping');
    for (const c of [...this.fresh]) this.end(c, 'console-stopping');
    const server = this.server;
    this.server = null;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  // ---- ExtensionLink ----------------------------------------------------------------

  /** {@inheritDoc ExtensionLink.request} */
  request<K extends ConsoleRequest['op']>(
    req: Extract<ConsoleRequest, { op: K }>,
    opts: { signal?: AbortSignal; timeoutMs?: number } = {},
  ): Promise<Result<ConsoleRequestValue[K]>> {
    const conn = this.conn;
    if (!conn || !conn.ready || !conn.mux) return Promise.resolve(err('link-down', 'The extension is not connected.'));
    if (opts.signal?.aborted) return Promise.resolve(err('aborted', 'The request was aborted before it was sent.'));
    const check = validateConsoleToExtension({ type: 'request', id: 'check', request: req });
    if (!check.ok) return Promise.resolve(err('bad-request', check.error.message));
    const r = req as ConsoleRequest;
    const defaultTimeout = r.op === 'dispatch' ? Math.max(this.t.requestTimeoutMs, r.timeoutMs + 5_000) : this.t.requestTimeoutMs;
    return conn.mux.call(r, { signal: opts.signal, timeoutMs: opts.timeoutMs ?? defaultTimeout }) as Promise<Result<ConsoleRequestValue[K]>>;
  }

  /** {@inheritDoc ExtensionLink.onEvent} */
  onEvent(listener: (e: ExtensionEvent) => void): () => void {
    this.eventListeners.add(listener);
    return () => this.eventListeners.delete(listener);
  }

  /** {@inheritDoc ExtensionLink.status} A copy: callers cannot change the bridge's state. */
  status(): LinkStatus {
    return this.linkStatus.get();
  }

  /** {@inheritDoc ExtensionLink.onStatus} Called on every change (not immediately on subscribe). */
  onStatus(listener: (s: LinkStatus) => void): () => void {
    return this.linkStatus.on(listener);
  }

  /** {@inheritDoc ExtensionLink.signGrant} Codes: `not-paired`, `grant-invalid`. */
  async signGrant(fields: Omit<Grant, 'mac'>): Promise<Result<Grant>> {
    if (!this.pairingKey) return err('not-paired', 'No extension is paired with this console.');
    try {
      return ok(await macGrant(fields, this.pairingKey, nodeGrantMac));
    } catch (e) {
      return err('grant-invalid', e instanceof Error ? e.message : String(e));
    }
  }

  /**
   * {@inheritDoc ExtensionLink.confirmPairing}
   * Codes: `no-pairing-pending` when no code is waiting for the person.
   */
  async confirmPairing(accept: boolean): Promise<Result<null>> {
    const conn = this.conn;
    const s = conn?.runner?.state;
    if (!conn?.runner || !s || s.phase !== 'pair-confirm' || !s.pair?.secret) {
      return err('no-pairing-pending', 'No pairing code is waiting for confirmation.');
    }
    await conn.runner.dispatch({ kind: 'confirm', accept, pairingId: randomHex(16), now: Date.now() });
    return ok(null);
  }

  /** {@inheritDoc ExtensionLink.unpair} Also tells a connected extension (`unpaired`) and drops the link. */
  async unpair(): Promise<Result<null>> {
    const p = this.pairing;
    await this.forgetPairing();
    const conn = this.conn;
    if (conn && conn.ready) {
      this.send(conn, { type: 'unpaired' });
      await this.drop(conn, 'unpaired');
    }
    if (p) this.audit({ kind: 'unpaired', by: 'person', pairingId: p.pairingId, extensionId: p.extensionId });
    this.setStatus({});
    return ok(null);
  }

  // ---- the socket and the native host -----------------------------------------------

  private accept(sock: net.Socket): void {
    sock.on('error', (e) => this.log.info('link socket error', { message: e.message }));
    // A connection counts as "the extension" only after a valid host-hello, so a probe never
    // takes the slot. At the bound the OLDEST unidentified one gives way, never the newcomer:
    // the real host says host-hello as it connects, so idle ones cannot lock it out (issue 9 item 11).
    if (this.fresh.size >= MAX_UNIDENTIFIED) {
      const oldest = this.fresh.values().next().value;
      if (oldest) this.end(oldest, 'unidentified-evicted');
    }
    const conn: Conn = { id: this.nextConnId++, sock, decoder: new FrameDecoder(LIMITS.maxMessageBytes), closed: false, ready: false };
    this.fresh.add(conn);
    conn.helloDeadline = setTimeout(() => {
      this.send(conn, { type: 'error', code: 'handshake-timeout', message: 'The handshake did not complete in time.' });
      this.end(conn, 'handshake-timeout');
    }, this.t.handshakeTimeoutMs);
    sock.on('data', (chunk: Buffer) => {
      for (const f of conn.decoder.push(chunk)) {
        if (conn.closed) return;
        if (!f.ok) {
          this.log.warn('bad frame from the native host', f.error);
          this.send(conn, { type: 'error', code: 'bad-message', message: f.error.message });
          if (f.fatal) {
            void this.drop(conn, 'frame-too-large');
            return;
          }
          continue;
        }
        if (conn.runner) void conn.runner.dispatch({ kind: 'received', raw: f.value });
        else this.onHostHello(conn, f.value);
      }
    });
    sock.on('close', () => void this.drop(conn, 'host-disconnected'));
  }

  /** The native host's first frame: who Chrome said is calling. */
  private onHostHello(conn: Conn, raw: unknown): void {
    const v = validateHostToConsole(raw);
    if (!v.ok) return this.refuseFresh(conn, 'bad-message', `expected host-hello: ${v.error.message}`);
    const origin = v.value.callerOrigin;
    const allowed = this.opts.expectedExtensionIds.some((id) => origin === `chrome-extension://${id}/`);
    if (!allowed) {
      return this.refuseFresh(conn, 'origin-not-allowed', `The caller ${origin} is not the Echo Console extension this console expects.`, origin);
    }
    if (this.conn) {
      // One extension connection at a time: a second one is told why and closed.
      return this.refuseFresh(conn, 'already-connected', 'Echo Console is already connected to an extension; only one connection at a time is allowed.', origin);
    }
    clearTimeout(conn.helloDeadline);
    this.fresh.delete(conn);
    this.conn = conn;
    conn.callerOrigin = origin;
    conn.mux = new LinkMux({
      newId: () => randomHex(16),
      sendRequest: (id, request) => this.send(conn, { type: 'request', id, request }),
      sendResponse: () => {}, // the console serves no requests
      checkValue: (op, value) => validateRequestValue(op, value),
      onInvalidValue: (op, message) => {
        this.log.warn('invalid response value from the extension', { op, error: message });
        this.send(conn, { type: 'error', code: 'bad-message', message });
      },
    });
    conn.heartbeat = new Heartbeat({
      intervalMs: this.t.heartbeatIntervalMs,
      timeoutMs: this.t.heartbeatTimeoutMs,
      ping: (seq) => this.send(conn, { type: 'ping', seq }),
      onTimeout: () => {
        this.log.warn('heartbeat timeout: dropping the link');
        void this.drop(conn, 'heartbeat-timeout');
      },
    });
    conn.runner = new StepRunner(
      {
        step: (s, input) => consoleStep(s, input, this.env()),
        send: (m) => void this.send(conn, m),
        perform: (e) => this.perform(conn, e),
        onError: (e) => {
          this.log.warn('internal error handling a link message', { message: e instanceof Error ? e.message : String(e) });
          this.end(conn, 'internal-error');
        },
      },
      consoleInit(origin, this.env()),
    );
  }

  /** A connection refused before its handshake began (bad host-hello, origin, second connection). */
  private refuseFresh(conn: Conn, code: string, message: string, callerOrigin?: string): void {
    this.log.warn(`link refused: ${code}`, { message });
    this.send(conn, { type: 'error', code, message });
    this.audit({ kind: 'link-refused', code, message, callerOrigin });
    this.end(conn, code, { code, message }, 'refused');
  }

  private env(): ConsoleEnv {
    const p = this.pairing;
    return {
      version: this.version,
      consoleVersion: this.opts.consoleVersion ?? '0.1.0',
      held: p && this.pairingKey ? { pairingId: p.pairingId, extensionId: p.extensionId, key: this.pairingKey } : null,
      handshakeTimeoutMs: this.t.handshakeTimeoutMs,
      pairingTimeoutMs: this.t.pairingTimeoutMs,
    };
  }

  /** Perform one effect of the console step. */
  private async perform(conn: Conn, e: ConsoleEffect): Promise<ConsoleInput | void> {
    switch (e.kind) {
      case 'status':
        if (this.conn === conn) this.setStatus(e.patch);
        return;
      case 'audit':
        return this.audit(e.event);
      case 'log':
        return this.log.warn(e.message, e.detail);
      case 'start-heartbeat':
        return conn.heartbeat?.start();
      case 'pong': {
        const at = conn.heartbeat?.pong();
        if (conn.ready) this.setStatus({ lastHeartbeatAt: at });
        return;
      }
      case 'store': {
        const record = pairingRecord(e.pairing);
        try {
          await this.opts.secretStore.set(PAIRING_SECRET_NAME, JSON.stringify(record));
        } catch (x) {
          this.log.warn('cannot store the pairing key', { message: (x as Error).message });
          return { kind: 'stored', ok: false, message: (x as Error).message };
        }
        this.pairing = record;
        this.pairingKey = e.pairing.key;
        return { kind: 'stored', ok: true };
      }
      case 'forget':
        await this.forgetPairing();
        this.setStatus({}); // paired: false, before anyone hears of it
        return;
      case 'established':
        conn.ready = true;
        this.setStatus({ lastHeartbeatAt: conn.heartbeat?.touch() });
        return;
      case 'response':
        if (!conn.mux?.settle(e.id, e.result)) this.log.info('response to an unknown or finished request', { id: e.id });
        return;
      case 'event':
        for (const l of [...this.eventListeners]) {
          try {
            l(e.event);
          } catch (x) {
            this.log.warn('event listener threw', { message: (x as Error).message });
          }
        }
        return;
      case 'close':
        return this.end(conn, e.reason, e.error, e.state);
      default:
        return; // arm / disarm / crypto are the runner's
    }
  }

  /** End a connection through its handshake (so the step audits what a close implies). */
  private async drop(conn: Conn, reason: string): Promise<void> {
    if (conn.closed) return;
    if (conn.runner) await conn.runner.dispatch({ kind: 'drop', reason });
    this.end(conn, reason); // no-op when the step already closed it
  }

  private send(conn: Conn, msg: ConsoleToExtension): boolean {
    if (conn.closed) return false;
    let frame: Uint8Array;
    try {
      frame = encodeFrame(msg);
    } catch (e) {
      this.log.warn('cannot encode a link message', { message: (e as Error).message });
      return false;
    }
    if (!conn.sock.destroyed && conn.sock.writable) conn.sock.write(frame);
    return true;
  }

  /**
   * End a connection (idempotent): fail its requests with `link-down` (never
   * replayed), stop its timers, report the new status.
   */
  private end(conn: Conn, reason: string, error?: LinkError, state: LinkStatus['state'] = error ? 'refused' : 'no-extension'): void {
    if (conn.closed) return;
    conn.closed = true;
    conn.ready = false;
    clearTimeout(conn.helloDeadline);
    conn.runner?.stop();
    conn.heartbeat?.stop();
    conn.mux?.failAll();
    conn.sock.end();
    // A peer that never reads must not keep the socket open.
    setTimeout(() => conn.sock.destroy(), 1000).unref();
    const wasActive = this.conn === conn;
    if (wasActive) this.conn = null;
    this.fresh.delete(conn);
    this.log.info('link closed', { reason });
    // Status follows the active connection; a refused newcomer is shown only while none is active.
    if (this.conn === null && (wasActive || error)) this.setStatus(endedStatus(error, state, conn.runner?.state.extensionId));
  }

  private async loadPairing(): Promise<void> {
    let raw: string | null = null;
    try {
      raw = await this.opts.secretStore.get(PAIRING_SECRET_NAME);
    } catch (e) {
      this.log.warn('cannot read the pairing key; treating the extension as unpaired', { message: (e as Error).message });
    }
    this.pairing = null;
    this.pairingKey = null;
    const held = raw ? parsePairingRecord(raw, (m) => this.log.warn(m)) : null;
    if (held) {
      this.pairing = held.record;
      this.pairingKey = held.key;
    }
    this.setStatus({});
  }

  private async forgetPairing(): Promise<void> {
    this.pairing = null;
    this.pairingKey = null;
    forgetNodeGrantKey();
    try {
      await this.opts.secretStore.delete(PAIRING_SECRET_NAME);
    } catch (e) {
      this.log.warn('cannot delete the stored pairing key', { message: (e as Error).message });
    }
  }

  private setStatus(patch: Partial<LinkStatus>): void {
    this.linkStatus.set(patch, this.pairing !== null);
  }

  private audit(e: LinkAuditEvent): void {
    try {
      this.opts.onAudit?.(e);
    } catch (x) {
      this.log.warn('audit hook threw', { message: (x as Error).message });
    }
  }
}
