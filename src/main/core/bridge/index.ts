/**
 * The console's end of the link to the extension (docs/design.md, "The link between
 * console and extension"; docs/link.md). Implements `ExtensionLink`
 * (src/main/core/ports.ts) for the broker.
 *
 * It listens on the private local socket (socket-server.ts), accepts ONE
 * native-host connection at a time, checks the caller origin Chrome gave the
 * host, then runs the handshake: protocol version, pairing (ECDH + a code the
 * person compares and confirms here) or challenge–response auth with the
 * pairing key (the console proves first), then heartbeats, requests with
 * timeouts and cancellation, and events. Everything received is validated
 * (src/shared/protocol.ts); a malformed message is answered with
 * `error{code:'bad-message'}`, logged, and never throws. A dropped link fails
 * every request in flight with `link-down` and never replays it.
 */
import type net from 'node:net';
import { FrameDecoder, encodeFrame } from '../../../shared/framing';
import { signGrant as macGrant } from '../../../shared/grant';
import type { LinkStatus } from '../../../shared/ipc';
import { LIMITS } from '../../../shared/limits';
import {
  authProof,
  derivePairing,
  fromBase64,
  generateEphemeral,
  pairingCommitment,
  PairingCryptoError,
  randomHex,
  toBase64,
  verifyAuthProof,
  type EphemeralKeyPair,
  type PairingSecret,
} from '../../../shared/pairing-crypto';
import {
  PROTOCOL_VERSION,
  peekProtocolVersion,
  validateConsoleToExtension,
  validateExtensionToConsole,
  validateHostToConsole,
  validateRequestValue,
  type ConsoleRequest,
  type ConsoleRequestValue,
  type ConsoleToExtension,
  type ExtensionEvent,
  type ExtensionToConsole,
} from '../../../shared/protocol';
import { err, ok, type ErrorInfo, type Result } from '../../../shared/result';
import type { Grant } from '../../../shared/types';
import type { ExtensionLink } from '../ports';
import type { SecretStore } from './secret-store';
import { listenPrivate } from './socket-server';

export { FileSecretStore, MemorySecretStore, type SecretStore } from './secret-store';
export { defaultSocketPath } from '../../../native-host/socket-path';

/** The SecretStore entry holding the pairing. */
export const PAIRING_SECRET_NAME = 'extension-pairing';

/** A minimal logger; `detail` is JSON-safe. */
export interface BridgeLogger {
  info(message: string, detail?: unknown): void;
  warn(message: string, detail?: unknown): void;
}

/**
 * What the bridge reports for receipts (the composition root maps these to
 * ledger events of the same names; `link-refused` has no receipt event of its
 * own and may be written as a `refused` receipt of faculty `link`).
 */
export type LinkAuditEvent =
  | { kind: 'paired'; extensionId: string; pairingId: string }
  | { kind: 'pairing-rejected'; extensionId: string; reason: 'person' | 'extension' | 'timeout' | 'link-dropped' }
  | { kind: 'unpaired'; by: 'person' | 'extension'; pairingId: string; extensionId: string }
  | { kind: 'link-connected'; extensionId: string; extensionVersion: string; pairingId: string }
  | { kind: 'link-disconnected'; extensionId: string; reason: string }
  | { kind: 'link-refused'; code: string; message: string; extensionId?: string; callerOrigin?: string };

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

interface StoredPairing {
  v: 1;
  pairingId: string;
  /** base64 of the 32-byte key. */
  key: string;
  extensionId: string;
  pairedAt: number;
}

type Phase =
  | 'host-hello'
  | 'hello'
  | 'pair-or-auth'
  | 'pair-offered'
  | 'pair-confirm'
  | 'await-auth'
  | 'auth-challenged'
  | 'ready'
  | 'closed';

interface Conn {
  id: number;
  sock: net.Socket;
  decoder: FrameDecoder;
  phase: Phase;
  queue: Promise<void>;
  callerOrigin?: string;
  extensionId?: string;
  extensionVersion?: string;
  pairing?: { own: EphemeralKeyPair; consoleNonce: string; extPublicKey: string; commitment: string; secret?: PairingSecret };
  /** A pairing the person accepted, kept in memory until the extension proves the same key. */
  accepted?: StoredPairing & { keyBytes: Uint8Array };
  auth?: { pairingId: string; extNonce: string; consoleNonce: string; key: Uint8Array };
  pingSeq: number;
  lastPongAt: number;
  heartbeat?: ReturnType<typeof setInterval>;
  deadline?: ReturnType<typeof setTimeout>;
}

interface Pending {
  op: ConsoleRequest['op'];
  conn: Conn;
  resolve: (r: Result<unknown>) => void;
  cleanup: () => void;
}

const defaultLogger: BridgeLogger = {
  info: () => {},
  warn: (m, d) => console.warn(`[bridge] ${m}`, d ?? ''),
};

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
  private readonly pending = new Map<string, Pending>();
  /** Ids of fire-and-forget requests (cancels) whose answers are dropped quietly. */
  private readonly ignored = new Set<string>();
  private readonly eventListeners = new Set<(e: ExtensionEvent) => void>();
  private readonly statusListeners = new Set<(s: LinkStatus) => void>();
  private current: LinkStatus = { state: 'no-extension', paired: false };
  private lastStatusJson = '';

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
    if (this.conn) this.close(this.conn, 'console-stopping');
    for (const c of [...this.fresh]) this.close(c, 'console-stopping');
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
    if (!conn || conn.phase !== 'ready') {
      return Promise.resolve(err('link-down', 'The extension is not connected.'));
    }
    if (opts.signal?.aborted) return Promise.resolve(err('aborted', 'The request was aborted before it was sent.'));
    const id = randomHex(16);
    const msg: ConsoleToExtension = { type: 'request', id, request: req };
    const check = validateConsoleToExtension(msg);
    if (!check.ok) return Promise.resolve(err('bad-request', check.error.message));
    const r = req as ConsoleRequest;
    const defaultTimeout = r.op === 'dispatch' ? Math.max(this.t.requestTimeoutMs, r.timeoutMs + 5_000) : this.t.requestTimeoutMs;
    const timeoutMs = opts.timeoutMs ?? defaultTimeout;

    return new Promise((resolve) => {
      let settled = false;
      const finish = (r: Result<unknown>): void => {
        if (settled) return;
        settled = true;
        entry.cleanup();
        this.pending.delete(id);
        resolve(r as Result<ConsoleRequestValue[K]>);
      };
      const onAbort = (): void => {
        this.sendCancel(conn, id, req.op);
        finish(err('aborted', 'The request was aborted; the extension was asked to cancel it.'));
      };
      const timer = setTimeout(() => {
        this.sendCancel(conn, id, req.op);
        finish(err('timeout', `No answer from the extension within ${timeoutMs} ms.`));
      }, timeoutMs);
      const entry: Pending = {
        op: req.op,
        conn,
        resolve: finish,
        cleanup: () => {
          clearTimeout(timer);
          opts.signal?.removeEventListener('abort', onAbort);
        },
      };
      this.pending.set(id, entry);
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      if (!this.send(conn, msg)) finish(err('too-large', 'The request does not fit in one link message.'));
    });
  }

  /** {@inheritDoc ExtensionLink.onEvent} */
  onEvent(listener: (e: ExtensionEvent) => void): () => void {
    this.eventListeners.add(listener);
    return () => this.eventListeners.delete(listener);
  }

  /** {@inheritDoc ExtensionLink.status} A copy: callers cannot change the bridge's state. */
  status(): LinkStatus {
    return structuredClone(this.current);
  }

  /** {@inheritDoc ExtensionLink.onStatus} Called on every change (not immediately on subscribe). */
  onStatus(listener: (s: LinkStatus) => void): () => void {
    this.statusListeners.add(listener);
    return () => this.statusListeners.delete(listener);
  }

  /** {@inheritDoc ExtensionLink.signGrant} Codes: `not-paired`, `grant-invalid`. */
  async signGrant(fields: Omit<Grant, 'mac'>): Promise<Result<Grant>> {
    if (!this.pairingKey) return err('not-paired', 'No extension is paired with this console.');
    try {
      return ok(await macGrant(fields, this.pairingKey));
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
    const secret = conn?.pairing?.secret;
    if (!conn || conn.phase !== 'pair-confirm' || !secret || !conn.extensionId) {
      return err('no-pairing-pending', 'No pairing code is waiting for confirmation.');
    }
    if (!accept) {
      this.audit({ kind: 'pairing-rejected', extensionId: conn.extensionId, reason: 'person' });
      this.send(conn, { type: 'pair-result', accepted: false });
      this.close(conn, 'pairing-rejected', { code: 'pairing-rejected', message: 'Pairing was rejected in the console.' });
      return ok(null);
    }
    // Stored only once the extension proved it derived the same key (auth below):
    // a rejection in the popup, or a dropped link, leaves any earlier pairing untouched.
    conn.accepted = {
      v: 1,
      pairingId: randomHex(16),
      key: toBase64(secret.key),
      keyBytes: secret.key,
      extensionId: conn.extensionId,
      pairedAt: Date.now(),
    };
    conn.pairing = undefined;
    conn.phase = 'await-auth';
    // The extension may also ask the person to confirm in its popup before it proves the new key.
    this.arm(conn, this.t.pairingTimeoutMs, 'pairing-timeout');
    this.send(conn, { type: 'pair-result', accepted: true, pairingId: conn.accepted.pairingId });
    this.setStatus({ state: 'handshaking', pairingCode: undefined });
    return ok(null);
  }

  /** {@inheritDoc ExtensionLink.unpair} Also tells a connected extension (`unpaired`) and drops the link. */
  async unpair(): Promise<Result<null>> {
    const p = this.pairing;
    await this.forgetPairing();
    const conn = this.conn;
    if (conn && conn.phase === 'ready') {
      this.send(conn, { type: 'unpaired' });
      this.close(conn, 'unpaired');
    }
    if (p) this.audit({ kind: 'unpaired', by: 'person', pairingId: p.pairingId, extensionId: p.extensionId });
    this.setStatus({});
    return ok(null);
  }

  // ---- connection handling ------------------------------------------------------------

  private accept(sock: net.Socket): void {
    sock.on('error', (e) => this.log.info('link socket error', { message: e.message }));
    // A connection counts as "the extension" only after a valid host-hello, so a probe
    // (another console checking whether we are alive) never takes the slot; the
    // not-yet-identified ones are few and each has a deadline.
    if (this.fresh.size >= 4) {
      sock.destroy();
      return;
    }
    const conn: Conn = {
      id: this.nextConnId++,
      sock,
      decoder: new FrameDecoder(LIMITS.maxMessageBytes),
      phase: 'host-hello',
      queue: Promise.resolve(),
      pingSeq: 0,
      lastPongAt: Date.now(),
    };
    this.fresh.add(conn);
    this.arm(conn, this.t.handshakeTimeoutMs, 'handshake-timeout');
    sock.on('data', (chunk: Buffer) => {
      for (const f of conn.decoder.push(chunk)) {
        if (!f.ok) {
          this.log.warn('bad frame from the native host', f.error);
          this.send(conn, { type: 'error', code: 'bad-message', message: f.error.message });
          if (f.fatal) return this.close(conn, 'frame-too-large');
          continue;
        }
        const value = f.value;
        conn.queue = conn.queue
          .then(() => (conn.phase === 'closed' ? undefined : this.onFrame(conn, value)))
          .catch((e: unknown) => {
            this.log.warn('internal error handling a link message', { message: e instanceof Error ? e.message : String(e) });
            this.close(conn, 'internal-error');
          });
      }
    });
    sock.on('close', () => this.close(conn, 'host-disconnected'));
  }

  private async onFrame(conn: Conn, raw: unknown): Promise<void> {
    if (conn.phase === 'host-hello') {
      const v = validateHostToConsole(raw);
      if (!v.ok) return this.refuse(conn, 'bad-message', `expected host-hello: ${v.error.message}`);
      const origin = v.value.callerOrigin;
      const allowed = this.opts.expectedExtensionIds.some((id) => origin === `chrome-extension://${id}/`);
      if (!allowed) {
        return this.refuse(conn, 'origin-not-allowed', `The caller ${origin} is not the Echo Console extension this console expects.`, {
          callerOrigin: origin,
        });
      }
      if (this.conn) {
        // One extension connection at a time: a second one is told why and closed.
        return this.refuse(conn, 'already-connected', 'Echo Console is already connected to an extension; only one connection at a time is allowed.', {
          callerOrigin: origin,
        });
      }
      this.fresh.delete(conn);
      this.conn = conn;
      conn.callerOrigin = origin;
      conn.phase = 'hello';
      this.arm(conn, this.t.handshakeTimeoutMs, 'handshake-timeout');
      this.setStatus({ state: 'handshaking', extensionId: undefined, pairingCode: undefined, error: undefined, lastHeartbeatAt: undefined });
      return;
    }

    // Version first, so a newer or older extension is told plainly even if its hello changed shape.
    const peerVersion = peekProtocolVersion(raw);
    if (conn.phase === 'hello' && peerVersion !== null && peerVersion !== this.version) {
      const message = `Version mismatch: the extension speaks link protocol v${peerVersion}, this console speaks v${this.version}. Update Echo Console and its extension to the same release.`;
      this.send(conn, { type: 'error', code: 'version-mismatch', message });
      this.audit({ kind: 'link-refused', code: 'version-mismatch', message, callerOrigin: conn.callerOrigin });
      this.close(conn, 'version-mismatch', { code: 'version-mismatch', message }, 'version-mismatch');
      return;
    }

    const v = validateExtensionToConsole(raw);
    if (!v.ok) {
      this.log.warn('invalid message from the extension', { phase: conn.phase, error: v.error.message });
      if (conn.phase === 'ready') {
        this.send(conn, { type: 'error', code: 'bad-message', message: v.error.message });
        return;
      }
      return this.refuse(conn, 'bad-message', v.error.message);
    }
    const msg = v.value;

    // Allowed in every phase after hello.
    if (conn.phase !== 'hello') {
      if (msg.type === 'ping') return void this.send(conn, { type: 'pong', seq: msg.seq });
      if (msg.type === 'pong') return this.onPong(conn);
    }
    if (msg.type === 'error') {
      this.log.warn('the extension reported an error', { code: msg.code, message: msg.message });
      if (msg.code === 'pairing-rejected' && (conn.phase === 'pair-confirm' || conn.phase === 'await-auth') && conn.extensionId) {
        // The person rejected the code in the popup (requireLocalPairingConfirmation).
        this.audit({ kind: 'pairing-rejected', extensionId: conn.extensionId, reason: 'extension' });
        this.close(conn, 'pairing-rejected', { code: 'pairing-rejected', message: 'Pairing was rejected in the extension.' });
        return;
      }
      if (msg.code === 'auth-failed') {
        const message = 'The extension could not verify this console with its pairing key. Unpair and pair again.';
        this.audit({ kind: 'link-refused', code: 'auth-failed', message, extensionId: conn.extensionId });
        this.close(conn, 'auth-failed', { code: 'auth-failed', message }, 'refused');
      }
      return;
    }

    switch (conn.phase) {
      case 'hello':
        if (msg.type !== 'hello') return this.refuse(conn, 'bad-message', `expected hello, got ${msg.type}`);
        return this.onHello(conn, msg);
      case 'pair-or-auth':
        if (msg.type === 'pair-begin') return this.onPairBegin(conn, msg);
        if (msg.type === 'auth-begin') return this.onAuthBegin(conn, msg);
        return this.refuse(conn, 'bad-message', `expected pair-begin or auth-begin, got ${msg.type}`);
      case 'pair-offered':
        if (msg.type !== 'pair-reveal') return this.refuse(conn, 'bad-message', `expected pair-reveal, got ${msg.type}`);
        return this.onPairReveal(conn, msg);
      case 'await-auth':
        if (msg.type !== 'auth-begin') return this.refuse(conn, 'bad-message', `expected auth-begin, got ${msg.type}`);
        return this.onAuthBegin(conn, msg);
      case 'auth-challenged':
        if (msg.type !== 'auth-response') return this.refuse(conn, 'bad-message', `expected auth-response, got ${msg.type}`);
        return this.onAuthResponse(conn, msg);
      case 'ready':
        return this.onReadyMessage(conn, msg);
      default:
        // pair-confirm: only ping/pong/error (handled above) while the person decides.
        return this.refuse(conn, 'bad-message', `unexpected ${msg.type} while ${conn.phase}`);
    }
  }

  private async onHello(conn: Conn, msg: Extract<ExtensionToConsole, { type: 'hello' }>): Promise<void> {
    if (`chrome-extension://${msg.extensionId}/` !== conn.callerOrigin) {
      return this.refuse(conn, 'origin-not-allowed', `hello names ${msg.extensionId}, but Chrome started the host for ${conn.callerOrigin}.`);
    }
    conn.extensionId = msg.extensionId;
    conn.extensionVersion = msg.extensionVersion;
    const p = this.pairing;
    const paired = !!p && msg.pairingId === p.pairingId && p.extensionId === msg.extensionId;
    conn.phase = 'pair-or-auth';
    this.arm(conn, this.t.handshakeTimeoutMs, 'handshake-timeout');
    this.startHeartbeat(conn);
    this.setStatus({ state: 'handshaking', extensionId: msg.extensionId });
    this.send(conn, { type: 'hello-ack', protocolVersion: this.version, consoleVersion: this.opts.consoleVersion ?? '0.1.0', paired });
  }

  private async onPairBegin(conn: Conn, msg: Extract<ExtensionToConsole, { type: 'pair-begin' }>): Promise<void> {
    if (!fromBase64(msg.publicKey)) return this.refuse(conn, 'bad-message', 'pair-begin.publicKey is not base64');
    const own = await generateEphemeral();
    conn.pairing = { own, consoleNonce: randomHex(16), extPublicKey: msg.publicKey, commitment: msg.commitment };
    conn.phase = 'pair-offered';
    this.arm(conn, this.t.handshakeTimeoutMs, 'handshake-timeout');
    this.send(conn, { type: 'pair-offer', publicKey: own.publicKey, nonce: conn.pairing.consoleNonce });
  }

  private async onPairReveal(conn: Conn, msg: Extract<ExtensionToConsole, { type: 'pair-reveal' }>): Promise<void> {
    const p = conn.pairing;
    if (!p || !conn.extensionId) return this.refuse(conn, 'bad-message', 'pair-reveal without pair-begin');
    if ((await pairingCommitment(p.extPublicKey, msg.nonce)) !== p.commitment) {
      return this.refuse(conn, 'pairing-failed', 'The extension’s pairing nonce does not match its commitment.');
    }
    try {
      p.secret = await derivePairing(p.own, p.extPublicKey, {
        protocolVersion: this.version,
        extensionId: conn.extensionId,
        extPublicKey: p.extPublicKey,
        extNonce: msg.nonce,
        consolePublicKey: p.own.publicKey,
        consoleNonce: p.consoleNonce,
      });
    } catch (e) {
      if (e instanceof PairingCryptoError) return this.refuse(conn, 'pairing-failed', e.message);
      throw e;
    }
    conn.phase = 'pair-confirm';
    this.arm(conn, this.t.pairingTimeoutMs, 'pairing-timeout');
    this.setStatus({ state: 'awaiting-pairing', pairingCode: p.secret.code });
  }

  private async onAuthBegin(conn: Conn, msg: Extract<ExtensionToConsole, { type: 'auth-begin' }>): Promise<void> {
    const p = conn.accepted ?? this.pairing;
    const key = conn.accepted ? conn.accepted.keyBytes : this.pairingKey;
    if (!p || !key || p.pairingId !== msg.pairingId || p.extensionId !== conn.extensionId) {
      return this.refuse(conn, 'not-paired', 'This console does not know that pairing. Pair the extension again.');
    }
    const consoleNonce = randomHex(16);
    conn.auth = { pairingId: p.pairingId, extNonce: msg.nonce, consoleNonce, key };
    const proof = await authProof(key, this.authParams(conn, 'console'));
    conn.phase = 'auth-challenged';
    this.arm(conn, this.t.handshakeTimeoutMs, 'handshake-timeout');
    this.send(conn, { type: 'auth-challenge', nonce: consoleNonce, proof });
  }

  private async onAuthResponse(conn: Conn, msg: Extract<ExtensionToConsole, { type: 'auth-response' }>): Promise<void> {
    const a = conn.auth;
    if (!a || !(await verifyAuthProof(a.key, this.authParams(conn, 'extension'), msg.proof))) {
      return this.refuse(conn, 'auth-failed', 'The extension could not prove it holds the pairing key.', {}, 'refused');
    }
    const fresh = conn.accepted;
    if (fresh) {
      const { keyBytes, ...record } = fresh;
      try {
        await this.opts.secretStore.set(PAIRING_SECRET_NAME, JSON.stringify(record));
      } catch (e) {
        this.log.warn('cannot store the pairing key', { message: (e as Error).message });
        return this.refuse(conn, 'store-failed', 'The console could not store the pairing key; pair again.');
      }
      this.pairing = record;
      this.pairingKey = keyBytes;
      conn.accepted = undefined;
      this.audit({ kind: 'paired', extensionId: record.extensionId, pairingId: record.pairingId });
    }
    conn.phase = 'ready';
    this.disarm(conn);
    conn.lastPongAt = Date.now();
    this.send(conn, { type: 'auth-ok' });
    this.setStatus({ state: 'connected', lastHeartbeatAt: conn.lastPongAt, error: undefined, pairingCode: undefined });
    this.audit({
      kind: 'link-connected',
      extensionId: conn.extensionId as string,
      extensionVersion: conn.extensionVersion as string,
      pairingId: a.pairingId,
    });
  }

  private async onReadyMessage(conn: Conn, msg: ExtensionToConsole): Promise<void> {
    switch (msg.type) {
      case 'response': {
        if (this.ignored.delete(msg.id)) return;
        const p = this.pending.get(msg.id);
        if (!p || p.conn !== conn) {
          this.log.info('response to an unknown or finished request', { id: msg.id });
          return;
        }
        if (!msg.result.ok) return p.resolve(msg.result);
        const checked = validateRequestValue(p.op, msg.result.value);
        if (!checked.ok) {
          this.log.warn('invalid response value from the extension', { op: p.op, error: checked.error.message });
          this.send(conn, { type: 'error', code: 'bad-message', message: checked.error.message });
          return p.resolve(err('bad-message', `The extension answered ${p.op} with an invalid value: ${checked.error.message}`));
        }
        return p.resolve(checked);
      }
      case 'event':
        for (const l of [...this.eventListeners]) {
          try {
            l(msg.event);
          } catch (e) {
            this.log.warn('event listener threw', { message: (e as Error).message });
          }
        }
        return;
      case 'unpair': {
        const p = this.pairing;
        await this.forgetPairing();
        if (p) this.audit({ kind: 'unpaired', by: 'extension', pairingId: p.pairingId, extensionId: p.extensionId });
        this.close(conn, 'unpaired-by-extension');
        return;
      }
      default:
        this.send(conn, { type: 'error', code: 'bad-message', message: `unexpected ${msg.type} on an established link` });
    }
  }

  // ---- helpers ------------------------------------------------------------------------

  private authParams(conn: Conn, role: 'console' | 'extension') {
    const a = conn.auth as NonNullable<Conn['auth']>;
    return {
      role,
      protocolVersion: this.version,
      extensionId: conn.extensionId as string,
      pairingId: a.pairingId,
      extNonce: a.extNonce,
      consoleNonce: a.consoleNonce,
    };
  }

  private startHeartbeat(conn: Conn): void {
    conn.lastPongAt = Date.now();
    conn.heartbeat = setInterval(() => {
      if (Date.now() - conn.lastPongAt > this.t.heartbeatTimeoutMs) {
        this.log.warn('heartbeat timeout: dropping the link');
        this.close(conn, 'heartbeat-timeout');
        return;
      }
      this.send(conn, { type: 'ping', seq: ++conn.pingSeq });
    }, this.t.heartbeatIntervalMs);
  }

  private onPong(conn: Conn): void {
    conn.lastPongAt = Date.now();
    if (conn.phase === 'ready') this.setStatus({ lastHeartbeatAt: conn.lastPongAt });
  }

  /** (Re)arm the per-phase deadline. */
  private arm(conn: Conn, ms: number, code: 'handshake-timeout' | 'pairing-timeout'): void {
    this.disarm(conn);
    conn.deadline = setTimeout(() => {
      if (code === 'pairing-timeout' && conn.extensionId) {
        this.audit({ kind: 'pairing-rejected', extensionId: conn.extensionId, reason: 'timeout' });
      }
      const message = code === 'pairing-timeout' ? 'Nobody confirmed the pairing code in time.' : 'The handshake did not complete in time.';
      this.send(conn, { type: 'error', code, message });
      this.close(conn, code);
    }, ms);
  }

  private disarm(conn: Conn): void {
    if (conn.deadline) clearTimeout(conn.deadline);
    conn.deadline = undefined;
  }

  /** Tell the peer why, log, audit, and close. */
  private refuse(conn: Conn, code: string, message: string, extra: { callerOrigin?: string } = {}, state: 'refused' | 'no-extension' = 'refused'): void {
    this.log.warn(`link refused: ${code}`, { message });
    this.send(conn, { type: 'error', code, message });
    this.audit({ kind: 'link-refused', code, message, extensionId: conn.extensionId, callerOrigin: extra.callerOrigin ?? conn.callerOrigin });
    this.close(conn, code, { code, message }, state);
  }

  private sendCancel(conn: Conn, requestId: string, op: ConsoleRequest['op']): void {
    if (op === 'cancel' || this.conn !== conn || conn.phase !== 'ready') return;
    const id = randomHex(16);
    this.ignored.add(id);
    if (this.ignored.size > 1000) this.ignored.delete(this.ignored.values().next().value as string);
    this.send(conn, { type: 'request', id, request: { op: 'cancel', requestId } });
  }

  private send(conn: Conn, msg: ConsoleToExtension): boolean {
    if (conn.phase === 'closed') return false;
    return this.writeRaw(conn.sock, msg);
  }

  private writeRaw(sock: net.Socket, msg: unknown): boolean {
    let frame: Uint8Array;
    try {
      frame = encodeFrame(msg);
    } catch (e) {
      this.log.warn('cannot encode a link message', { message: (e as Error).message });
      return false;
    }
    if (!sock.destroyed && sock.writable) sock.write(frame);
    return true;
  }

  /**
   * End a connection (idempotent): fail its requests with `link-down` (never
   * replayed), stop its timers, report the new status.
   */
  private close(
    conn: Conn,
    reason: string,
    error?: ErrorInfo,
    state: LinkStatus['state'] = error ? 'refused' : 'no-extension',
  ): void {
    if (conn.phase === 'closed') return;
    const wasReady = conn.phase === 'ready';
    const wasConfirming = conn.phase === 'pair-confirm';
    conn.phase = 'closed';
    this.disarm(conn);
    if (conn.heartbeat) clearInterval(conn.heartbeat);
    conn.sock.end();
    // A peer that never reads must not keep the socket open.
    setTimeout(() => conn.sock.destroy(), 1000).unref();
    for (const [, p] of this.pending) {
      if (p.conn === conn) {
        p.resolve(err('link-down', 'The link to the extension dropped before it answered; the request was not replayed and its outcome is unknown.'));
      }
    }
    const wasActive = this.conn === conn;
    if (wasActive) this.conn = null;
    this.fresh.delete(conn);
    if (wasConfirming && conn.extensionId && reason === 'host-disconnected') {
      this.audit({ kind: 'pairing-rejected', extensionId: conn.extensionId, reason: 'link-dropped' });
    }
    if (wasReady) this.audit({ kind: 'link-disconnected', extensionId: conn.extensionId as string, reason });
    // Status follows the active connection; a refused newcomer is shown only while none is active.
    if (this.conn === null && (wasActive || error)) {
      this.setStatus({
        state: error ? state : 'no-extension',
        extensionId: error ? conn.extensionId : undefined,
        pairingCode: undefined,
        lastHeartbeatAt: undefined,
        error,
      });
    }
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
    if (raw) {
      try {
        const p = JSON.parse(raw) as StoredPairing;
        const key = fromBase64(p.key);
        if (p.v === 1 && typeof p.pairingId === 'string' && typeof p.extensionId === 'string' && key && key.length === 32) {
          this.pairing = p;
          this.pairingKey = key;
        } else this.log.warn('stored pairing is malformed; ignored');
      } catch {
        this.log.warn('stored pairing is not JSON; ignored');
      }
    }
    this.setStatus({});
  }

  private async forgetPairing(): Promise<void> {
    this.pairing = null;
    this.pairingKey = null;
    try {
      await this.opts.secretStore.delete(PAIRING_SECRET_NAME);
    } catch (e) {
      this.log.warn('cannot delete the stored pairing key', { message: (e as Error).message });
    }
  }

  private setStatus(patch: Partial<LinkStatus>): void {
    const next: LinkStatus = { ...this.current, ...patch, paired: this.pairing !== null };
    for (const k of Object.keys(next) as (keyof LinkStatus)[]) if (next[k] === undefined) delete next[k];
    this.current = next;
    const json = JSON.stringify(next);
    if (json === this.lastStatusJson) return;
    this.lastStatusJson = json;
    for (const l of [...this.statusListeners]) {
      try {
        l(structuredClone(next));
      } catch (e) {
        this.log.warn('status listener threw', { message: (e as Error).message });
      }
    }
  }

  private audit(e: LinkAuditEvent): void {
    try {
      this.opts.onAudit?.(e);
    } catch (x) {
      this.log.warn('audit hook threw', { message: (x as Error).message });
    }
  }
}
