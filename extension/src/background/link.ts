/**
 * The extension's end of the link to the console (docs/design.md, "The link between
 * console and extension"; docs/link.md). Platform-neutral on purpose: the port
 * and the storage are injected, so the same code runs in the MV3 service
 * worker (link-chrome.ts wires `chrome.runtime.connectNative` and
 * `chrome.storage.local`) and under Node in the unit tests against the real
 * console bridge and the real native host.
 *
 * A thin adapter over the shared link core (src/shared/link-core), written in
 * the same style as the console's bridge: this file owns only the port, the
 * native host's own `host-error` frames, the stored pairing, the reconnect
 * backoff (0.5 s doubling to 30 s, reset on success) and what the popup shows.
 * The handshake is `extensionStep` (pure, driven by a StepRunner: it checks
 * the CONSOLE's proof first, and no pairing key is kept without the
 * person's word in the popup), requests are served through the shared
 * `LinkMux`, liveness is the shared `Heartbeat`. A request in flight when the
 * link drops is aborted and its answer discarded: nothing is ever replayed.
 * What the popup shows (ExtLinkState, and how a closed link is shown) is link-view.ts.
 */
import { verifyGrantMac } from '../../../src/shared/grant';
import { LIMITS, utf8Bytes } from '../../../src/shared/limits';
import {
  extensionInit,
  extensionStep,
  Heartbeat,
  LinkMux,
  StepRunner,
  type ExtensionEffect,
  type ExtensionEnv,
  type ExtensionInput,
  type ExtensionState,
  type LinkError,
} from '../../../src/shared/link-core';
import { fromBase64, randomHex, toBase64 } from '../../../src/shared/pairing-crypto';
import {
  PROTOCOL_VERSION,
  validateExtensionToConsole,
  validateHostToExtension,
  type ConsoleRequest,
  type ExtensionEvent,
  type ExtensionToConsole,
} from '../../../src/shared/protocol';
import { toErrorInfo, type ErrorInfo, type Result } from '../../../src/shared/result';
import type { Grant } from '../../../src/shared/types';
import { HOST_NOT_FOUND_ADVICE, NEEDS_PERSON, endedView, type ExtLinkState } from './link-view';

export { HOST_NOT_FOUND_ADVICE, type ExtLinkState } from './link-view';

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
  /**
   * Whether a pairing key is stored, its id (never the key itself), and whether the person
   * confirmed it in the popup too (`false` for a pairing stored before issue 9 item 1).
   */
  pairing(): { paired: boolean; pairingId: string | null; confirmedInExtension: boolean };
  /** Disconnect and stop retrying (tests; worker shutdown). */
  stop(): void;
}

/** chrome.storage.local key of the pairing. */
export const PAIRING_STORAGE_KEY = 'echoConsole.linkPairing';

interface StoredPairing {
  v: 1;
  pairingId: string;
  key: string;
  pairedAt: number;
  /**
   * The person confirmed this pairing's code in the popup too. Every pairing stored since
   * issue 9 item 1 says so; a record without it was confirmed in the console only (possibly
   * by an impostor that held the socket), so the console may not share tabs through it.
   */
  confirmedInExtension?: true;
}

/**
 * The console's requests that only a pairing confirmed on both sides may make: sharing a tab
 * from the console (issue 9 item 1). The person's own "Share this tab" in the popup is theirs.
 */
export const NEEDS_BOTH_SIDES: ReadonlySet<ConsoleRequest['op']> = new Set(['share-tab']);

/** The refusal of a `NEEDS_BOTH_SIDES` request over a pairing confirmed in the console only. */
export const PAIRING_UNCONFIRMED: ErrorInfo = {
  code: 'pairing-unconfirmed',
  message:
    'This pairing was confirmed in Echo Console only, never in the extension, so the console may not share tabs through it. Unpair, pair again and confirm the code in the extension popup too; or share the tab from the popup.',
};

interface Conn {
  port: LinkPort;
  closed: boolean;
  ready: boolean;
  runner: StepRunner<ExtensionState, ExtensionInput, ExtensionToConsole, ExtensionEffect>;
  mux: LinkMux;
  heartbeat: Heartbeat;
  /** Why the host said it could not help (host-error), if it did. */
  hostError?: ErrorInfo;
  /** Set when we asked the console to end the link (unpair): what to show once it has. */
  closingError?: ErrorInfo;
}

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
    const next: ExtLinkState = { ...current, ...patch, paired: stored !== null, unconfirmedPairing: stored !== null && stored.confirmedInExtension !== true ? true : undefined };
    for (const k of Object.keys(next) as (keyof ExtLinkState)[]) if (next[k] === undefined) delete next[k];
    if (JSON.stringify(next) === JSON.stringify(current)) return;
    current = next;
    try {
      opts.onState?.({ ...next });
    } catch (e) {
      log.warn('onState threw', { message: (e as Error).message });
    }
  };

  const env = (): ExtensionEnv => ({
    version,
    extensionId: opts.extensionId,
    extensionVersion: opts.extensionVersion,
    held: stored && key ? { pairingId: stored.pairingId, key } : null,
    handshakeTimeoutMs: t.handshakeTimeoutMs,
  });

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
    if (c.closed) return false;
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
    const c = { port, closed: false, ready: false } as Conn;
    conn = c;
    c.mux = new LinkMux({
      newId: () => randomHex(16),
      sendRequest: () => false, // the extension sends no requests
      sendResponse: (id, result) => {
        let out: ExtensionToConsole = { type: 'response', id, result };
        const check = validateExtensionToConsole(out);
        if (!check.ok) {
          log.warn('the request handler produced an invalid result', { error: check.error.message });
          out = { type: 'response', id, result: { ok: false, error: { code: 'internal', message: `invalid result: ${check.error.message}` } } };
        }
        if (!post(c, out)) {
          post(c, { type: 'response', id, result: { ok: false, error: { code: 'too-large', message: 'The result did not fit in one link message.' } } });
        }
      },
    });
    c.heartbeat = new Heartbeat({
      intervalMs: t.heartbeatIntervalMs,
      timeoutMs: t.heartbeatTimeoutMs,
      ping: (seq) => void post(c, { type: 'ping', seq }),
      onTimeout: () => {
        log.warn('no heartbeat answer from the console: reconnecting');
        drop(c, undefined, 'connecting');
      },
    });
    port.onMessage((m) => onMessage(c, m));
    port.onDisconnect((error) => onDisconnected(c, error));
    setState({ state: 'connecting', retryAt: undefined, pairingCode: undefined, awaitingLocalConfirmation: undefined });
    c.runner = new StepRunner(
      {
        step: (s, input) => extensionStep(s, input, env()),
        send: (m) => void post(c, m),
        perform: (e) => perform(c, e),
        onError: (e) => {
          log.warn('internal error handling a console message', { message: e instanceof Error ? e.message : String(e) });
          drop(c, { code: 'internal', message: 'The extension failed to handle a console message.' });
        },
      },
      extensionInit(env()),
    );
  }

  /** Perform one effect of the extension step. */
  async function perform(c: Conn, e: ExtensionEffect): Promise<ExtensionInput | void> {
    switch (e.kind) {
      case 'view':
        if (conn === c) setState(e.patch);
        return;
      case 'log':
        return log.warn(e.message, e.detail);
      case 'start-heartbeat':
        return c.heartbeat.start();
      case 'pong': {
        const at = c.heartbeat.pong();
        if (c.ready) setState({ lastHeartbeatAt: at });
        return;
      }
      case 'reset-backoff':
        attempt = 0;
        return;
      case 'store': {
        // The step stores only after the popup confirmed (handshake-extension.ts, needsLocal).
        const rec: StoredPairing = { v: 1, pairingId: e.pairingId, key: toBase64(e.key), pairedAt: Date.now(), confirmedInExtension: true };
        try {
          await opts.storage.set(PAIRING_STORAGE_KEY, rec);
        } catch (x) {
          return { kind: 'stored', ok: false, message: (x as Error).message };
        }
        stored = rec;
        key = e.key;
        return { kind: 'stored', ok: true };
      }
      case 'forget':
        return forgetPairing();
      case 'established':
        c.ready = true;
        attempt = 0;
        setState({ lastHeartbeatAt: c.heartbeat.touch() });
        return;
      case 'request':
        return c.mux.serve(e.id, e.request, (req, ctx) =>
          NEEDS_BOTH_SIDES.has(req.op) && stored?.confirmedInExtension !== true ? Promise.resolve({ ok: false as const, error: { ...PAIRING_UNCONFIRMED } }) : opts.onRequest(req, ctx),
        );
      case 'close':
        return drop(c, e.error, e.state);
      default:
        return; // arm / disarm / crypto are the runner's
    }
  }

  function onMessage(c: Conn, raw: unknown): void {
    if (c.closed) return;
    // The native host's own frames (not relayed from the console).
    if (raw && typeof raw === 'object' && (raw as { type?: unknown }).type === 'host-error') {
      const h = validateHostToExtension(raw);
      if (h.ok) {
        c.hostError = { code: h.value.code, message: h.value.message };
        if (h.value.code === 'console-not-running') setState({ state: 'console-not-running', error: c.hostError });
        return; // the host exits next; onDisconnect follows
      }
    }
    void c.runner.dispatch({ kind: 'received', raw });
  }

  /** Close our side and decide what the person sees; reconnects unless the error needs the person. */
  function drop(c: Conn, error?: LinkError, state?: ExtLinkState['state']): void {
    if (c.closed) return;
    teardown(c);
    try {
      c.port.disconnect();
    } catch {
      /* already gone */
    }
    after(c, error, state);
  }

  function teardown(c: Conn): void {
    c.closed = true;
    c.ready = false;
    c.runner.stop();
    c.heartbeat.stop();
    // Never replay: whatever was in flight is aborted and its answer discarded.
    c.mux.abortAll();
    if (conn === c) conn = null;
  }

  /** After a connection ended: show why, and reconnect unless the reason needs the person. */
  function after(c: Conn, error: LinkError | undefined, state?: ExtLinkState['state']): void {
    if (stopped) return;
    if (error && NEEDS_PERSON.has(error.code)) halted = true;
    setState(endedView(error ?? c.hostError, state));
    scheduleReconnect();
  }

  function onDisconnected(c: Conn, error?: string): void {
    if (c.closed) return;
    teardown(c);
    if (c.closingError) return after(c, c.closingError);
    if (c.hostError) return after(c, undefined);
    if (error && /not found|forbidden/i.test(error)) {
      // Chrome: "Specified native messaging host not found." / "Access to the specified native messaging host is forbidden."
      return after(c, { code: 'host-not-found', message: `${error} ${HOST_NOT_FOUND_ADVICE}` }, 'not-installed');
    }
    after(c, error ? { code: 'link-down', message: error } : undefined, 'connecting');
  }

  void connectNow();

  return {
    state: () => ({ ...current }),
    sendEvent(e) {
      const c = conn;
      if (!c || !c.ready) return false;
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
      if (c && c.ready && post(c, { type: 'unpair' })) {
        // Let the console read `unpair` and close the link itself; Chrome may kill the host
        // as soon as we disconnect. Drop it ourselves if the console does not within 1 s.
        c.closingError = error;
        setTimeout(() => drop(c, error), 1000);
        setState({ state: 'refused', error, problem: undefined, lastHeartbeatAt: undefined, retryAt: undefined });
      } else if (c) drop(c, error);
      else setState({ state: 'refused', error, problem: undefined, retryAt: undefined });
    },
    async verifyGrant(grant) {
      if (!loaded) loaded = loadPairing();
      await loaded;
      return key ? verifyGrantMac(grant, key) : false;
    },
    confirmPairing(accept) {
      const c = conn;
      const p = c?.runner.state.pairing;
      if (!c || !p?.secret || !p.needsLocal) return;
      void c.runner.dispatch({ kind: 'confirm', accept });
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
    pairing: () => ({ paired: stored !== null, pairingId: stored?.pairingId ?? null, confirmedInExtension: stored?.confirmedInExtension === true }),
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
