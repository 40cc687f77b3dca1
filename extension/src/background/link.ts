/**
 * The extension's end of the link to the console (docs/design.md, "The link between
 * console and extension"; docs/link.md). Platform-neutral on purpose: the port
 * and the storage are injected, so the same code runs in the MV3 service
 * worker (link-chrome.ts wires `chrome.runtime.connectNative` and
 * `chrome.storage.local`) and under Node in the unit tests against the real
 * console bridge and the real native host.
 *
 * It connects, says hello, pairs (ECDH P-256 + a 6-digit code the person
 * compares; src/shared/pairing-crypto.ts) or proves the stored pairing key by
 * challenge–response, checking the CONSOLE's proof first so a program that
 * grabbed the console's socket cannot pose as the console. Then it answers
 * the console's requests through `onRequest`, sends events, pings, and
 * reconnects with backoff (0.5 s doubling to 30 s, reset on success) when the
 * link drops. A request in flight when the link drops is aborted and its
 * answer discarded: nothing is ever replayed on a new connection.
 */
import { verifyGrantMac } from '../../../src/shared/grant';
import { LIMITS, utf8Bytes } from '../../../src/shared/limits';
import {
  authProof,
  derivePairing,
  fromBase64,
  generateEphemeral,
  pairingCommitment,
  randomHex,
  toBase64,
  verifyAuthProof,
  type EphemeralKeyPair,
  type PairingSecret,
} from '../../../src/shared/pairing-crypto';
import {
  PROTOCOL_VERSION,
  peekProtocolVersion,
  validateConsoleToExtension,
  validateExtensionToConsole,
  validateHostToExtension,
  type ConsoleRequest,
  type ConsoleToExtension,
  type ExtensionEvent,
  type ExtensionToConsole,
} from '../../../src/shared/protocol';
import { toErrorInfo, type ErrorInfo, type Result } from '../../../src/shared/result';
import type { Grant } from '../../../src/shared/types';

/** What `connect` returns: the parts of a chrome.runtime.Port the link uses. */
export interface LinkPort {
  /** Send one JSON message (Chrome serialises it; throws once disconnected). */
  postMessage(message: unknown): void;
  disconnect(): void;
  onMessage(listener: (message: unknown) => void): void;
  /** `error`: chrome.runtime.lastError's message, e.g. "Specified native messaging host not found." */
  onDisconnect(listener: (error?: string) => void): void;
}

/** Persistent storage for the pairing key (chrome.storage.local in the extension). */
export interface LinkStorage {
  get(key: string): Promise<unknown>;
  set(key: string, value: unknown): Promise<void>;
  remove(key: string): Promise<void>;
}

/**
 * What the popup shows. States use the popup's vocabulary
 * (extension/src/lib/messages.ts PopupLinkState):
 * - `not-installed`: Chrome found no native host (the console writes it when it runs);
 * - `console-not-running`: the host ran but no console listens (host-error);
 * - `connecting`: handshake in progress, or waiting to retry (`retryAt`);
 * - `awaiting-pairing`: compare `pairingCode` with the console and confirm there;
 * - `connected`: authenticated and a pong arrived within LIMITS.heartbeatTimeoutMs;
 * - `version-mismatch`: console and extension speak different protocol versions;
 * - `refused`: see `error.code`: `pairing-rejected`, `pairing-timeout`, `unpaired`,
 *   `auth-failed` (the console could not prove the key: possibly an impostor),
 *   `origin-not-allowed`, `already-connected`, ... Those that need the person
 *   (all but `already-connected`) stop retrying until `retry()`.
 */
export interface ExtLinkState {
  state: 'not-installed' | 'console-not-running' | 'connecting' | 'awaiting-pairing' | 'connected' | 'version-mismatch' | 'refused' | 'stopped';
  paired: boolean;
  pairingCode?: string;
  /** The popup must call `confirmPairing` too (requireLocalPairingConfirmation, or a key is already held). */
  awaitingLocalConfirmation?: boolean;
  /** ms since the epoch of the last pong. */
  lastHeartbeatAt?: number;
  /** ms since the epoch of the next reconnect attempt, while waiting to retry. */
  retryAt?: number;
  error?: ErrorInfo;
}

/** Options of `startLink`. */
export interface StartLinkOptions {
  /** Open the native port (chrome.runtime.connectNative(NATIVE_HOST_NAME) in the extension). */
  connect: () => LinkPort;
  storage: LinkStorage;
  /** chrome.runtime.id */
  extensionId: string;
  /** chrome.runtime.getManifest().version */
  extensionVersion: string;
  /**
   * Do one console request. `signal` aborts when the console cancels it
   * (`request{op:'cancel'}`, handled here, never passed on) or the link drops.
   * Must not throw (a throw is answered as `{ok:false, error:{code:'internal'}}`).
   */
  onRequest: (req: ConsoleRequest, ctx: { requestId: string; signal: AbortSignal }) => Promise<Result<unknown>>;
  /** Every state change (a fresh copy). */
  onState?: (s: ExtLinkState) => void;
  logger?: { warn(message: string, detail?: unknown): void; info?(message: string, detail?: unknown): void };
  /**
   * Ask the person in the popup too before a new pairing key is kept
   * (`confirmPairing`). Off by default: the console is where the person
   * confirms. On, a program holding the console's socket cannot complete a
   * pairing by itself. A pairing that would REPLACE a key already held always
   * needs the popup's confirmation, whatever this says.
   */
  requireLocalPairingConfirmation?: boolean;
  timing?: {
    heartbeatIntervalMs?: number;
    heartbeatTimeoutMs?: number;
    backoffInitialMs?: number;
    backoffMaxMs?: number;
    /** How long to wait for hello-ack (ms, default 15 s). */
    handshakeTimeoutMs?: number;
  };
  /** Tests only. */
  protocolVersion?: number;
}

/** The handle `startLink` returns. */
export interface ExtLink {
  /** A copy of the current state. */
  state(): ExtLinkState;
  /** Send an event if the link is up; `false` when it was dropped (events are never queued). */
  sendEvent(e: ExtensionEvent): boolean;
  /** Forget the pairing here and (if connected) tell the console to forget it too. */
  unpair(): Promise<void>;
  /** Check a grant's MAC with the pairing key; `false` when not paired. Expiry and reuse are the caller's. */
  verifyGrant(grant: Grant): Promise<boolean>;
  /** The person's answer in the popup (only while `awaitingLocalConfirmation`). */
  confirmPairing(accept: boolean): void;
  /** Reconnect now with a fresh backoff (the popup's "Try again" / "Pair again"). */
  retry(): void;
  /** Whether a pairing key is stored, and its id (never the key itself). */
  pairing(): { paired: boolean; pairingId: string | null };
  /** Disconnect and stop retrying (tests; worker shutdown). */
  stop(): void;
}

/** chrome.storage.local key of the pairing. */
export const PAIRING_STORAGE_KEY = 'echoConsole.linkPairing';

/**
 * What the popup advises when Chrome finds no native host (or may not start it).
 * The console writes the host manifests each time it starts, into the profiles
 * that exist then: a browser first run after the console started has none yet.
 */
export const HOST_NOT_FOUND_ADVICE =
  'Echo Console registers its native host when it starts. If this browser had never run before the console started, restart the console, then click Try again.';

interface StoredPairing {
  v: 1;
  pairingId: string;
  key: string;
  pairedAt: number;
}

type Phase = 'hello-sent' | 'pair-begun' | 'pair-revealed' | 'auth-begun' | 'auth-responded' | 'ready' | 'closed';

interface Conn {
  port: LinkPort;
  phase: Phase;
  queue: Promise<void>;
  pairing?: {
    own: EphemeralKeyPair;
    extNonce: string;
    secret?: PairingSecret;
    consoleAccepted?: string; // pairingId once the console accepted
    localAccepted?: boolean;
    /** The popup must confirm too: always with requireLocalPairingConfirmation, and whenever a key is already held. */
    needsLocal: boolean;
  };
  auth?: { pairingId: string; key: Uint8Array; extNonce: string; consoleNonce?: string };
  pingSeq: number;
  lastPongAt: number;
  heartbeat?: ReturnType<typeof setInterval>;
  deadline?: ReturnType<typeof setTimeout>;
  inflight: Map<string, AbortController>;
  /** Why the host said it could not help (host-error), if it did. */
  hostError?: ErrorInfo;
  /** Set when we asked the console to end the link (unpair): what to show once it has. */
  closingError?: ErrorInfo;
}

/** Errors after which retrying cannot help until the person acts (popup: retry / pair again). */
const NEEDS_PERSON = new Set(['version-mismatch', 'pairing-rejected', 'pairing-timeout', 'unpaired', 'auth-failed', 'origin-not-allowed', 'pairing-failed']);

/**
 * Start the link: load the pairing, connect, and keep reconnecting until `stop()`.
 * Returns at once; progress is reported through `onState`.
 */
export function startLink(opts: StartLinkOptions): ExtLink {
  const version = opts.protocolVersion ?? PROTOCOL_VERSION;
  const t = {
    heartbeatIntervalMs: opts.timing?.heartbeatIntervalMs ?? LIMITS.heartbeatIntervalMs,
    heartbeatTimeoutMs: opts.timing?.heartbeatTimeoutMs ?? LIMITS.heartbeatTimeoutMs,
    backoffInitialMs: opts.timing?.backoffInitialMs ?? 500,
    backoffMaxMs: opts.timing?.backoffMaxMs ?? 30_000,
    handshakeTimeoutMs: opts.timing?.handshakeTimeoutMs ?? 15_000,
  };
  const log = opts.logger ?? { warn: (m: string, d?: unknown) => console.warn(`[echo link] ${m}`, d ?? '') };

  let stored: StoredPairing | null = null;
  let key: Uint8Array | null = null;
  let loaded: Promise<void> | null = null;
  let conn: Conn | null = null;
  let attempt = 0;
  let retryTimer: ReturnType<typeof setTimeout> | null = null;
  let halted = false; // waiting for the person (retry()) or stopped
  let stopped = false;
  let current: ExtLinkState = { state: 'connecting', paired: false };

  const setState = (patch: Partial<ExtLinkState>): void => {
    const next: ExtLinkState = { ...current, ...patch, paired: stored !== null };
    for (const k of Object.keys(next) as (keyof ExtLinkState)[]) if (next[k] === undefined) delete next[k];
    if (JSON.stringify(next) === JSON.stringify(current)) return;
    current = next;
    try {
      opts.onState?.({ ...next });
    } catch (e) {
      log.warn('onState threw', { message: (e as Error).message });
    }
  };

  async function loadPairing(): Promise<void> {
    try {
      const v = (await opts.storage.get(PAIRING_STORAGE_KEY)) as StoredPairing | undefined | null;
      const k = v && v.v === 1 && typeof v.pairingId === 'string' && typeof v.key === 'string' ? fromBase64(v.key) : null;
      if (v && k && k.length === 32) {
        stored = v;
        key = k;
      } else {
        stored = null;
        key = null;
      }
    } catch (e) {
      log.warn('cannot read the pairing; treating this extension as unpaired', { message: (e as Error).message });
      stored = null;
      key = null;
    }
  }

  async function forgetPairing(): Promise<void> {
    stored = null;
    key = null;
    try {
      await opts.storage.remove(PAIRING_STORAGE_KEY);
    } catch (e) {
      log.warn('cannot remove the stored pairing', { message: (e as Error).message });
    }
  }

  function post(c: Conn, msg: ExtensionToConsole): boolean {
    if (c.phase === 'closed') return false;
    // The host refuses frames over 1 MiB; do not let one kill the link.
    if (utf8Bytes(JSON.stringify(msg)) > LIMITS.maxMessageBytes) {
      log.warn('message too large for the link; not sent', { type: msg.type });
      return false;
    }
    try {
      c.port.postMessage(msg);
      return true;
    } catch (e) {
      log.warn('postMessage failed', { message: (e as Error).message });
      return false;
    }
  }

  function arm(c: Conn, ms: number): void {
    if (c.deadline) clearTimeout(c.deadline);
    c.deadline = setTimeout(() => drop(c, { code: 'handshake-timeout', message: 'The console did not answer the handshake in time.' }), ms);
  }

  function scheduleReconnect(): void {
    if (halted || stopped || retryTimer) return;
    const delay = Math.min(t.backoffMaxMs, t.backoffInitialMs * 2 ** attempt);
    attempt = Math.min(attempt + 1, 30);
    setState({ retryAt: Date.now() + delay });
    retryTimer = setTimeout(() => {
      retryTimer = null;
      void connectNow();
    }, delay);
  }

  async function connectNow(): Promise<void> {
    if (stopped || conn) return;
    if (!loaded) loaded = loadPairing();
    await loaded;
    if (stopped || conn) return;
    let port: LinkPort;
    try {
      port = opts.connect();
    } catch (e) {
      setState({ state: 'not-installed', error: toErrorInfo(e, 'connect-failed'), retryAt: undefined });
      scheduleReconnect();
      return;
    }
    const c: Conn = { port, phase: 'hello-sent', queue: Promise.resolve(), pingSeq: 0, lastPongAt: Date.now(), inflight: new Map() };
    conn = c;
    port.onMessage((m) => {
      c.queue = c.queue
        .then(() => (c.phase === 'closed' ? undefined : onMessage(c, m)))
        .catch((e: unknown) => {
          log.warn('internal error handling a console message', { message: e instanceof Error ? e.message : String(e) });
          drop(c, { code: 'internal', message: 'The extension failed to handle a console message.' });
        });
    });
    port.onDisconnect((error) => onDisconnected(c, error));
    setState({ state: 'connecting', retryAt: undefined, pairingCode: undefined, awaitingLocalConfirmation: undefined });
    arm(c, t.handshakeTimeoutMs);
    post(c, { type: 'hello', protocolVersion: version, extensionId: opts.extensionId, extensionVersion: opts.extensionVersion, pairingId: stored?.pairingId ?? null });
  }

  /** Close our side and decide what the person sees; reconnects unless the error needs the person. */
  function drop(c: Conn, error?: ErrorInfo, state?: ExtLinkState['state']): void {
    if (c.phase === 'closed') return;
    teardown(c);
    try {
      c.port.disconnect();
    } catch {
      /* already gone */
    }
    after(c, error, state);
  }

  function teardown(c: Conn): void {
    c.phase = 'closed';
    if (c.deadline) clearTimeout(c.deadline);
    if (c.heartbeat) clearInterval(c.heartbeat);
    // Never replay: whatever was in flight is aborted and its answer discarded.
    for (const ac of c.inflight.values()) ac.abort();
    c.inflight.clear();
    if (conn === c) conn = null;
  }

  /** After a connection ended: show why, and reconnect unless the reason needs the person. */
  function after(c: Conn, error: ErrorInfo | undefined, state?: ExtLinkState['state']): void {
    if (stopped) return;
    if (error && NEEDS_PERSON.has(error.code)) halted = true;
    const shown = error ?? c.hostError;
    const next: ExtLinkState['state'] =
      state ??
      (shown?.code === 'version-mismatch'
        ? 'version-mismatch'
        : shown?.code === 'console-not-running'
          ? 'console-not-running'
          : shown && (NEEDS_PERSON.has(shown.code) || shown.code === 'already-connected')
            ? 'refused'
            : 'connecting');
    setState({ state: next, error: shown, pairingCode: undefined, awaitingLocalConfirmation: undefined, lastHeartbeatAt: undefined });
    scheduleReconnect();
  }

  function onDisconnected(c: Conn, error?: string): void {
    if (c.phase === 'closed') return;
    teardown(c);
    if (c.closingError) return after(c, c.closingError);
    if (c.hostError) return after(c, undefined);
    if (error && /not found|forbidden/i.test(error)) {
      // Chrome: "Specified native messaging host not found." / "Access to the specified native messaging host is forbidden."
      return after(
        c,
        { code: 'host-not-found', message: `${error} ${HOST_NOT_FOUND_ADVICE}` },
        'not-installed',
      );
    }
    after(c, error ? { code: 'link-down', message: error } : undefined, 'connecting');
  }

  function startHeartbeat(c: Conn): void {
    c.lastPongAt = Date.now();
    c.heartbeat = setInterval(() => {
      if (Date.now() - c.lastPongAt > t.heartbeatTimeoutMs) {
        log.warn('no heartbeat answer from the console: reconnecting');
        drop(c, undefined, 'connecting');
        return;
      }
      post(c, { type: 'ping', seq: ++c.pingSeq });
    }, t.heartbeatIntervalMs);
  }

  async function onMessage(c: Conn, raw: unknown): Promise<void> {
    if (raw && typeof raw === 'object' && (raw as { type?: unknown }).type === 'host-error') {
      const h = validateHostToExtension(raw);
      if (h.ok) {
        c.hostError = { code: h.value.code, message: h.value.message };
        if (h.value.code === 'console-not-running') setState({ state: 'console-not-running', error: c.hostError });
        return; // the host exits next; onDisconnect follows
      }
    }
    const peer = peekProtocolVersion(raw);
    if (c.phase === 'hello-sent' && peer !== null && peer !== version) {
      const message = `Version mismatch: the console speaks link protocol v${peer}, this extension speaks v${version}. Update Echo Console and its extension to the same release.`;
      post(c, { type: 'error', code: 'version-mismatch', message });
      return drop(c, { code: 'version-mismatch', message });
    }
    const v = validateConsoleToExtension(raw);
    if (!v.ok) {
      log.warn('invalid message from the console', { phase: c.phase, error: v.error.message });
      post(c, { type: 'error', code: 'bad-message', message: v.error.message });
      if (c.phase !== 'ready') drop(c, { code: 'bad-message', message: v.error.message });
      return;
    }
    const msg = v.value;

    if (msg.type === 'ping') return void post(c, { type: 'pong', seq: msg.seq });
    if (msg.type === 'pong') {
      c.lastPongAt = Date.now();
      if (c.phase === 'ready') setState({ lastHeartbeatAt: c.lastPongAt });
      return;
    }
    if (msg.type === 'error') {
      log.warn('the console refused', { code: msg.code, message: msg.message });
      // `not-paired`: the next hello gets paired:false and pairing starts. The stored key is
      // kept until a new pairing replaces it: an unauthenticated peer must not be able to wipe it.
      if (msg.code === 'not-paired') attempt = 0;
      if (c.phase === 'ready' && msg.code === 'bad-message') return; // the link survives one bad message
      return drop(c, { code: msg.code, message: msg.message }, msg.code === 'version-mismatch' ? 'version-mismatch' : undefined);
    }

    switch (c.phase) {
      case 'hello-sent':
        if (msg.type !== 'hello-ack') return unexpected(c, msg);
        if (c.deadline) clearTimeout(c.deadline);
        startHeartbeat(c);
        if (msg.paired && stored && key) {
          c.auth = { pairingId: stored.pairingId, key, extNonce: randomHex(16) };
          c.phase = 'auth-begun';
          post(c, { type: 'auth-begin', pairingId: stored.pairingId, nonce: c.auth.extNonce });
          return;
        }
        // The console does not know our pairing (or we have none). An old key is kept until a
        // new pairing replaces it: a program posing as the console must not be able to wipe it.
        return beginPairing(c);
      case 'pair-begun':
        if (msg.type !== 'pair-offer') return unexpected(c, msg);
        return onPairOffer(c, msg);
      case 'pair-revealed':
        if (msg.type !== 'pair-result') return unexpected(c, msg);
        if (!msg.accepted) return drop(c, { code: 'pairing-rejected', message: 'Pairing was rejected in Echo Console.' });
        (c.pairing as NonNullable<Conn['pairing']>).consoleAccepted = msg.pairingId;
        return maybeFinishPairing(c);
      case 'auth-begun':
        if (msg.type !== 'auth-challenge') return unexpected(c, msg);
        return onAuthChallenge(c, msg);
      case 'auth-responded':
        if (msg.type !== 'auth-ok') return unexpected(c, msg);
        c.phase = 'ready';
        attempt = 0;
        c.lastPongAt = Date.now();
        setState({ state: 'connected', error: undefined, lastHeartbeatAt: c.lastPongAt, pairingCode: undefined, awaitingLocalConfirmation: undefined });
        return;
      case 'ready':
        if (msg.type === 'request') return onRequestMessage(c, msg);
        if (msg.type === 'unpaired') {
          await forgetPairing();
          return drop(c, { code: 'unpaired', message: 'Echo Console removed this pairing. Pair again to reconnect.' });
        }
        return void post(c, { type: 'error', code: 'bad-message', message: `unexpected ${msg.type} on an established link` });
      default:
        return unexpected(c, msg);
    }
  }

  function unexpected(c: Conn, msg: ConsoleToExtension): void {
    const message = `unexpected ${msg.type} while ${c.phase}`;
    post(c, { type: 'error', code: 'bad-message', message });
    drop(c, { code: 'bad-message', message });
  }

  async function beginPairing(c: Conn): Promise<void> {
    const own = await generateEphemeral();
    const extNonce = randomHex(16);
    // Already paired, yet this "console" says it does not know us: it may be a program that
    // grabbed the socket. Replacing the key must then take the person's word here as well,
    // or that program could pair itself in and sign grants (a silent downgrade).
    c.pairing = { own, extNonce, needsLocal: !!opts.requireLocalPairingConfirmation || stored !== null };
    c.phase = 'pair-begun';
    post(c, { type: 'pair-begin', publicKey: own.publicKey, commitment: await pairingCommitment(own.publicKey, extNonce) });
  }

  async function onPairOffer(c: Conn, msg: Extract<ConsoleToExtension, { type: 'pair-offer' }>): Promise<void> {
    const p = c.pairing as NonNullable<Conn['pairing']>;
    try {
      p.secret = await derivePairing(p.own, msg.publicKey, {
        protocolVersion: version,
        extensionId: opts.extensionId,
        extPublicKey: p.own.publicKey,
        extNonce: p.extNonce,
        consolePublicKey: msg.publicKey,
        consoleNonce: msg.nonce,
      });
    } catch (e) {
      const message = `The console's pairing key was not usable: ${(e as Error).message}`;
      post(c, { type: 'error', code: 'pairing-failed', message });
      return drop(c, { code: 'pairing-failed', message });
    }
    c.phase = 'pair-revealed';
    post(c, { type: 'pair-reveal', nonce: p.extNonce });
    setState({
      state: 'awaiting-pairing',
      pairingCode: p.secret.code,
      awaitingLocalConfirmation: p.needsLocal ? true : undefined,
      error: undefined,
    });
  }

  async function maybeFinishPairing(c: Conn): Promise<void> {
    const p = c.pairing;
    if (!p?.secret || !p.consoleAccepted) return;
    if (p.needsLocal && !p.localAccepted) return;
    const rec: StoredPairing = { v: 1, pairingId: p.consoleAccepted, key: toBase64(p.secret.key), pairedAt: Date.now() };
    try {
      await opts.storage.set(PAIRING_STORAGE_KEY, rec);
    } catch (e) {
      return drop(c, { code: 'store-failed', message: `The pairing key could not be stored: ${(e as Error).message}` });
    }
    stored = rec;
    key = p.secret.key;
    c.pairing = undefined;
    // Prove the new key at once: this also confirms the console derived the same one.
    c.auth = { pairingId: rec.pairingId, key: key, extNonce: randomHex(16) };
    c.phase = 'auth-begun';
    setState({ state: 'connecting', pairingCode: undefined, awaitingLocalConfirmation: undefined });
    post(c, { type: 'auth-begin', pairingId: rec.pairingId, nonce: c.auth.extNonce });
  }

  async function onAuthChallenge(c: Conn, msg: Extract<ConsoleToExtension, { type: 'auth-challenge' }>): Promise<void> {
    const a = c.auth as NonNullable<Conn['auth']>;
    a.consoleNonce = msg.nonce;
    const params = { protocolVersion: version, extensionId: opts.extensionId, pairingId: a.pairingId, extNonce: a.extNonce, consoleNonce: msg.nonce };
    if (!(await verifyAuthProof(a.key, { ...params, role: 'console' }, msg.proof))) {
      const message =
        'The program answering as Echo Console could not prove it holds this pairing key. Another program may be posing as the console. Check that Echo Console is running, then pair again if needed.';
      post(c, { type: 'error', code: 'auth-failed', message: 'console proof did not verify' });
      return drop(c, { code: 'auth-failed', message });
    }
    c.phase = 'auth-responded';
    post(c, { type: 'auth-response', proof: await authProof(a.key, { ...params, role: 'extension' }) });
  }

  async function onRequestMessage(c: Conn, msg: Extract<ConsoleToExtension, { type: 'request' }>): Promise<void> {
    const req = msg.request;
    if (req.op === 'cancel') {
      const ac = c.inflight.get(req.requestId);
      ac?.abort();
      post(c, { type: 'response', id: msg.id, result: { ok: true, value: { cancelled: !!ac } } });
      return;
    }
    const ac = new AbortController();
    c.inflight.set(msg.id, ac);
    // Requests run concurrently: do not hold the message queue while the page works.
    void (async () => {
      let result: Result<unknown>;
      try {
        result = await opts.onRequest(req, { requestId: msg.id, signal: ac.signal });
      } catch (e) {
        result = { ok: false, error: toErrorInfo(e) };
      }
      c.inflight.delete(msg.id);
      // A dropped link discards the answer: the console already failed the request with link-down.
      if (c.phase !== 'ready' || conn !== c) return;
      let out: ExtensionToConsole = { type: 'response', id: msg.id, result };
      const check = validateExtensionToConsole(out);
      if (!check.ok) {
        log.warn('the request handler produced an invalid result', { op: req.op, error: check.error.message });
        out = { type: 'response', id: msg.id, result: { ok: false, error: { code: 'internal', message: `invalid result: ${check.error.message}` } } };
      }
      if (!post(c, out)) {
        post(c, { type: 'response', id: msg.id, result: { ok: false, error: { code: 'too-large', message: 'The result did not fit in one link message.' } } });
      }
    })();
  }

  void connectNow();

  return {
    state: () => ({ ...current }),
    sendEvent(e) {
      const c = conn;
      if (!c || c.phase !== 'ready') return false;
      const msg: ExtensionToConsole = { type: 'event', event: e };
      const check = validateExtensionToConsole(msg);
      if (!check.ok) {
        log.warn('invalid event not sent', { error: check.error.message });
        return false;
      }
      return post(c, msg);
    },
    async unpair() {
      const c = conn;
      const error: ErrorInfo = { code: 'unpaired', message: 'This extension was unpaired. Pair again to reconnect.' };
      await forgetPairing();
      halted = true;
      if (retryTimer) clearTimeout(retryTimer);
      retryTimer = null;
      if (c && c.phase === 'ready' && post(c, { type: 'unpair' })) {
        // Let the console read `unpair` and close the link itself; Chrome may kill the host
        // as soon as we disconnect. Drop it ourselves if the console does not within 1 s.
        c.closingError = error;
        setTimeout(() => drop(c, error), 1000);
        setState({ state: 'refused', error, lastHeartbeatAt: undefined, retryAt: undefined });
      } else if (c) drop(c, error);
      else setState({ state: 'refused', error, retryAt: undefined });
    },
    async verifyGrant(grant) {
      if (!loaded) loaded = loadPairing();
      await loaded;
      return key ? verifyGrantMac(grant, key) : false;
    },
    confirmPairing(accept) {
      const c = conn;
      if (!c?.pairing?.secret || !c.pairing.needsLocal) return;
      if (!accept) {
        post(c, { type: 'error', code: 'pairing-rejected', message: 'The person rejected the pairing in the extension.' });
        drop(c, { code: 'pairing-rejected', message: 'Pairing was rejected in the extension.' });
        return;
      }
      c.pairing.localAccepted = true;
      setState({ awaitingLocalConfirmation: undefined });
      c.queue = c.queue.then(() => maybeFinishPairing(c));
    },
    retry() {
      if (stopped) return;
      halted = false;
      attempt = 0;
      if (retryTimer) clearTimeout(retryTimer);
      retryTimer = null;
      const c = conn;
      // Still waiting for the console to close after our `unpair`: stop waiting.
      if (c?.closingError) {
        c.closingError = undefined;
        drop(c, undefined, 'connecting');
        return;
      }
      if (!c) void connectNow();
    },
    pairing: () => ({ paired: stored !== null, pairingId: stored?.pairingId ?? null }),
    stop() {
      stopped = true;
      if (retryTimer) clearTimeout(retryTimer);
      retryTimer = null;
      const c = conn;
      if (c) {
        teardown(c);
        try {
          c.port.disconnect();
        } catch {
          /* gone */
        }
      }
      setState({ state: 'stopped', retryAt: undefined });
    },
  };
}
