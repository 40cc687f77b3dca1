/**
 * The link handshake as two pure transition functions, one per role:
 *
 *   consoleStep(state, input, env)   → { state, send[], effects[] }
 *   extensionStep(state, input, env) → { state, send[], effects[] }
 *
 * Inputs are everything that can happen: a message received (raw, validated
 * here), a timer that expired, the person's answer, the result of a crypto
 * request, the result of storing the key, or the transport dropping. Nothing
 * here does I/O, reads a clock or draws randomness:
 *   - crypto is requested by an effect `{kind:'crypto', req}` and its result
 *     (with any fresh nonces and key pairs) comes back as `{kind:'crypto', result}`
 *     (crypto.ts, which calls pairing-crypto.ts);
 *   - storing the pairing key is the effect `store`, answered by `{kind:'stored'}`;
 *   - a fresh pairing id and the time come in the person's `confirm` input.
 * The adapters (src/main/core/bridge for the socket, extension/src/background/link.ts
 * for the chrome.runtime Port) feed inputs one at a time through `StepRunner`
 * (runner.ts), which sends `send[]` first, then performs `effects[]` in order.
 * A test can drive both roles against each other in memory
 * (test/unit/link-core-handshake.test.ts).
 *
 * What is checked, and in which order, is docs/link.md "Message sequence" and
 * "Pairing crypto": protocol version first, then the message's shape; the
 * console proves first; the extension never sends its proof unless the
 * console's verified; a key already held is replaced only with the person's
 * word in the popup too.
 */
import type { LinkProblem, LinkStatus } from '../ipc';
import type { EphemeralKeyPair, PairingSecret } from '../pairing-crypto';
import {
  peekProtocolVersion,
  validateConsoleToExtension,
  validateExtensionToConsole,
  type ConsoleRequest,
  type ConsoleToExtension,
  type ExtensionEvent,
  type ExtensionToConsole,
} from '../protocol';
import type { ErrorInfo, Result } from '../result';
import type { CryptoRequest, CryptoResult } from './crypto';
import { pairAgainProblem, versionProblem } from './problems';

/** The named deadlines of a handshake. */
export type HandshakeTimer = 'handshake' | 'pairing';

/** An error shown to the person, with the plain-words problem when there is one. */
export type LinkError = ErrorInfo & { problem?: LinkProblem };

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

/** One transition's output. `send` goes out first, then `effects` run in order. */
export interface Step<S, M, E> {
  state: S;
  send: M[];
  effects: E[];
}

// =====================================================================================
// Console
// =====================================================================================

/** The console's pairing as the handshake needs it (the key store's record). */
export interface HeldPairing {
  pairingId: string;
  extensionId: string;
  key: Uint8Array;
}

/** What the console step reads but does not own. */
export interface ConsoleEnv {
  /** PROTOCOL_VERSION (tests may pretend another). */
  version: number;
  /** Reported in hello-ack. */
  consoleVersion: string;
  /** The stored pairing, or null. */
  held: HeldPairing | null;
  /** ms. */
  handshakeTimeoutMs: number;
  /** ms the person has to confirm a code. */
  pairingTimeoutMs: number;
}

/** Handshake phases on the console. `*-ing` phases wait for a crypto or store result. */
export type ConsolePhase =
  | 'hello'
  | 'pair-or-auth'
  | 'pair-keygen'
  | 'pair-offered'
  | 'pair-deriving'
  | 'pair-confirm'
  | 'await-auth'
  | 'auth-proving'
  | 'auth-challenged'
  | 'auth-verifying'
  | 'storing'
  | 'ready'
  | 'closed';

/** A pairing the person accepted, kept until the extension proves the same key. */
export interface AcceptedPairing {
  pairingId: string;
  extensionId: string;
  key: Uint8Array;
  pairedAt: number;
}

/** The console's handshake state for one connection (plain data; replaced on every step). */
export interface ConsoleState {
  phase: ConsolePhase;
  /** The origin Chrome gave the native host (host-hello, checked by the bridge). */
  callerOrigin: string;
  extensionId?: string;
  extensionVersion?: string;
  pair?: { extPublicKey: string; commitment: string; own?: EphemeralKeyPair; consoleNonce?: string; secret?: PairingSecret };
  accepted?: AcceptedPairing;
  auth?: { pairingId: string; key: Uint8Array; extNonce: string; consoleNonce?: string };
}

/** Inputs of the console step. */
export type ConsoleInput =
  | { kind: 'received'; raw: unknown }
  | { kind: 'timer'; timer: HandshakeTimer }
  /** The person's answer to the code; `pairingId` (fresh, 32 hex) and `now` (ms) come from the adapter. */
  | { kind: 'confirm'; accept: boolean; pairingId: string; now: number }
  | { kind: 'crypto'; result: CryptoResult }
  | { kind: 'stored'; ok: boolean; message?: string }
  /** The adapter ends the connection (`host-disconnected`, `heartbeat-timeout`, `console-stopping`, `unpaired`, ...). */
  | { kind: 'drop'; reason: string };

/** Effects of the console step; the bridge performs them. */
export type ConsoleEffect =
  | { kind: 'arm'; timer: HandshakeTimer; ms: number }
  | { kind: 'disarm' }
  | { kind: 'crypto'; req: CryptoRequest }
  | { kind: 'status'; patch: Partial<LinkStatus> }
  | { kind: 'audit'; event: LinkAuditEvent }
  | { kind: 'log'; message: string; detail?: unknown }
  | { kind: 'start-heartbeat' }
  | { kind: 'pong' }
  /** Store the accepted pairing; answer `{kind:'stored', ok}` (on ok the adapter also holds it in memory). */
  | { kind: 'store'; pairing: AcceptedPairing }
  /** Forget the stored pairing (the extension unpaired). */
  | { kind: 'forget' }
  /** The handshake is done: requests may flow. */
  | { kind: 'established'; pairingId: string }
  | { kind: 'response'; id: string; result: Result<unknown> }
  | { kind: 'event'; event: ExtensionEvent }
  /** End the connection; `state` is what LinkStatus shows (when no other connection is active). */
  | { kind: 'close'; reason: string; error?: LinkError; state: LinkStatus['state'] };

type CStep = Step<ConsoleState, ConsoleToExtension, ConsoleEffect>;

/**
 * The console's first step for a connection whose host-hello the bridge accepted
 * (origin allowed, no other connection active): wait for the hello.
 */
export function consoleInit(callerOrigin: string, env: ConsoleEnv): CStep {
  return {
    state: { phase: 'hello', callerOrigin },
    send: [],
    effects: [
      { kind: 'arm', timer: 'handshake', ms: env.handshakeTimeoutMs },
      { kind: 'status', patch: { state: 'handshaking', extensionId: undefined, pairingCode: undefined, error: undefined, problem: undefined, lastHeartbeatAt: undefined } },
    ],
  };
}

const cOut = (state: ConsoleState, send: ConsoleToExtension[] = [], effects: ConsoleEffect[] = []): CStep => ({ state, send, effects });

/** End the connection: the audits a close implies, then `close`. */
function cClose(s: ConsoleState, reason: string, error?: LinkError, state: LinkStatus['state'] = error ? 'refused' : 'no-extension', send: ConsoleToExtension[] = [], pre: ConsoleEffect[] = []): CStep {
  const effects: ConsoleEffect[] = [...pre, { kind: 'disarm' }];
  if (s.phase === 'pair-confirm' && s.extensionId && reason === 'host-disconnected') {
    effects.push({ kind: 'audit', event: { kind: 'pairing-rejected', extensionId: s.extensionId, reason: 'link-dropped' } });
  }
  if (s.phase === 'ready') effects.push({ kind: 'audit', event: { kind: 'link-disconnected', extensionId: s.extensionId as string, reason } });
  effects.push({ kind: 'close', reason, error, state });
  return { state: { phase: 'closed', callerOrigin: s.callerOrigin, extensionId: s.extensionId }, send, effects };
}

/** Tell the peer why, log, audit `link-refused`, close. */
function cRefuse(s: ConsoleState, code: string, message: string, problem?: LinkProblem, state: LinkStatus['state'] = 'refused', extraSend: Partial<Extract<ConsoleToExtension, { type: 'error' }>> = {}): CStep {
  const error: LinkError = problem ? { code, message, problem } : { code, message };
  return cClose(s, code, error, state, [{ type: 'error', code, message, ...extraSend }], [
    { kind: 'log', message: `link refused: ${code}`, detail: { message } },
    { kind: 'audit', event: { kind: 'link-refused', code, message, extensionId: s.extensionId, callerOrigin: s.callerOrigin } },
  ]);
}

/** The console's transition function (see the file header). */
export function consoleStep(s: ConsoleState, input: ConsoleInput, env: ConsoleEnv): CStep {
  if (s.phase === 'closed') return cOut(s);
  switch (input.kind) {
    case 'drop':
      return cClose(s, input.reason);
    case 'timer': {
      if (input.timer === 'pairing') {
        const message = 'Nobody confirmed the pairing code in time.';
        const pre: ConsoleEffect[] = s.extensionId ? [{ kind: 'audit', event: { kind: 'pairing-rejected', extensionId: s.extensionId, reason: 'timeout' } }] : [];
        return cClose(s, 'pairing-timeout', undefined, 'no-extension', [{ type: 'error', code: 'pairing-timeout', message }], pre);
      }
      return cClose(s, 'handshake-timeout', undefined, 'no-extension', [{ type: 'error', code: 'handshake-timeout', message: 'The handshake did not complete in time.' }]);
    }
    case 'confirm':
      return consoleConfirm(s, input, env);
    case 'crypto':
      return consoleCrypto(s, input.result, env);
    case 'stored':
      return consoleStored(s, input);
    case 'received':
      return consoleReceived(s, input.raw, env);
  }
}

function consoleConfirm(s: ConsoleState, input: Extract<ConsoleInput, { kind: 'confirm' }>, env: ConsoleEnv): CStep {
  const secret = s.pair?.secret;
  if (s.phase !== 'pair-confirm' || !secret || !s.extensionId) return cOut(s); // the bridge answers no-pairing-pending
  if (!input.accept) {
    return cClose(s, 'pairing-rejected', { code: 'pairing-rejected', message: 'Pairing was rejected in the console.' }, 'refused', [{ type: 'pair-result', accepted: false }], [
      { kind: 'audit', event: { kind: 'pairing-rejected', extensionId: s.extensionId, reason: 'person' } },
    ]);
  }
  // Stored only once the extension proved it derived the same key (auth below):
  // a rejection in the popup, or a dropped link, leaves any earlier pairing untouched.
  const accepted: AcceptedPairing = { pairingId: input.pairingId, extensionId: s.extensionId, key: secret.key, pairedAt: input.now };
  return cOut({ ...s, phase: 'await-auth', pair: undefined, accepted }, [{ type: 'pair-result', accepted: true, pairingId: accepted.pairingId }], [
    // The extension may ask the person in its popup too before it proves the new key.
    { kind: 'arm', timer: 'pairing', ms: env.pairingTimeoutMs },
    { kind: 'status', patch: { state: 'handshaking', pairingCode: undefined } },
  ]);
}

function consoleCrypto(s: ConsoleState, r: CryptoResult, env: ConsoleEnv): CStep {
  if (r.op === 'console-offer' && s.phase === 'pair-keygen' && s.pair) {
    const pair = { ...s.pair, own: r.own, consoleNonce: r.nonce };
    return cOut({ ...s, phase: 'pair-offered', pair }, [{ type: 'pair-offer', publicKey: r.own.publicKey, nonce: r.nonce }], [
      { kind: 'arm', timer: 'handshake', ms: env.handshakeTimeoutMs },
    ]);
  }
  if (r.op === 'console-derive' && s.phase === 'pair-deriving' && s.pair) {
    if (!r.ok) return cRefuse(s, r.code, r.message);
    return cOut({ ...s, phase: 'pair-confirm', pair: { ...s.pair, secret: r.secret } }, [], [
      { kind: 'arm', timer: 'pairing', ms: env.pairingTimeoutMs },
      { kind: 'status', patch: { state: 'awaiting-pairing', pairingCode: r.secret.code } },
    ]);
  }
  if (r.op === 'console-challenge' && s.phase === 'auth-proving' && s.auth) {
    return cOut({ ...s, phase: 'auth-challenged', auth: { ...s.auth, consoleNonce: r.nonce } }, [{ type: 'auth-challenge', nonce: r.nonce, proof: r.proof }], [
      { kind: 'arm', timer: 'handshake', ms: env.handshakeTimeoutMs },
    ]);
  }
  if (r.op === 'console-verify' && s.phase === 'auth-verifying' && s.auth) {
    if (!r.ok) {
      return cRefuse(s, 'auth-failed', 'The extension could not prove it holds the pairing key.', pairAgainProblem('the extension could not prove it holds this console’s pairing key. Unpair in the console and pair the extension again.'));
    }
    if (s.accepted) return cOut({ ...s, phase: 'storing' }, [], [{ kind: 'store', pairing: s.accepted }]);
    return consoleEstablished(s, s.auth.pairingId);
  }
  return cOut(s, [], [{ kind: 'log', message: 'unexpected crypto result', detail: { op: r.op, phase: s.phase } }]);
}

function consoleStored(s: ConsoleState, input: Extract<ConsoleInput, { kind: 'stored' }>): CStep {
  if (s.phase !== 'storing' || !s.accepted) return cOut(s);
  if (!input.ok) {
    return cRefuse(s, 'store-failed', 'The console could not store the pairing key; pair again.', undefined, 'refused');
  }
  const a = s.accepted;
  const next = consoleEstablished({ ...s, accepted: undefined }, a.pairingId);
  next.effects.unshift({ kind: 'audit', event: { kind: 'paired', extensionId: a.extensionId, pairingId: a.pairingId } });
  return next;
}

function consoleEstablished(s: ConsoleState, pairingId: string): CStep {
  return cOut({ ...s, phase: 'ready', auth: undefined }, [{ type: 'auth-ok' }], [
    { kind: 'disarm' },
    { kind: 'established', pairingId },
    { kind: 'status', patch: { state: 'connected', error: undefined, problem: undefined, pairingCode: undefined } },
    {
      kind: 'audit',
      event: { kind: 'link-connected', extensionId: s.extensionId as string, extensionVersion: s.extensionVersion as string, pairingId },
    },
  ]);
}

function consoleReceived(s: ConsoleState, raw: unknown, env: ConsoleEnv): CStep {
  // Version first, so a newer or older extension is told plainly even if its hello changed shape.
  const peer = peekProtocolVersion(raw);
  if (s.phase === 'hello' && peer !== null && peer !== env.version) {
    const problem = versionProblem('console', env.version, peer);
    const message = `Version mismatch: the extension speaks link protocol v${peer}, this console speaks v${env.version}. ${problem.message}`;
    return cRefuse(s, 'version-mismatch', message, problem, 'version-mismatch', { protocolVersion: env.version });
  }
  const v = validateExtensionToConsole(raw);
  if (!v.ok) {
    if (s.phase === 'ready') {
      return cOut(s, [{ type: 'error', code: 'bad-message', message: v.error.message }], [
        { kind: 'log', message: 'invalid message from the extension', detail: { phase: s.phase, error: v.error.message } },
      ]);
    }
    return cRefuse(s, 'bad-message', v.error.message);
  }
  const msg = v.value;

  // Allowed in every phase after hello.
  if (s.phase !== 'hello') {
    if (msg.type === 'ping') return cOut(s, [{ type: 'pong', seq: msg.seq }]);
    if (msg.type === 'pong') return cOut(s, [], [{ kind: 'pong' }]);
  }
  if (msg.type === 'error') return consoleOnPeerError(s, msg, env);

  switch (s.phase) {
    case 'hello':
      if (msg.type !== 'hello') return cRefuse(s, 'bad-message', `expected hello, got ${msg.type}`);
      return consoleOnHello(s, msg, env);
    case 'pair-or-auth':
      if (msg.type === 'pair-begin') {
        return cOut({ ...s, phase: 'pair-keygen', pair: { extPublicKey: msg.publicKey, commitment: msg.commitment } }, [], [{ kind: 'crypto', req: { op: 'console-offer' } }]);
      }
      if (msg.type === 'auth-begin') return consoleOnAuthBegin(s, msg, env);
      return cRefuse(s, 'bad-message', `expected pair-begin or auth-begin, got ${msg.type}`);
    case 'pair-offered': {
      if (msg.type !== 'pair-reveal') return cRefuse(s, 'bad-message', `expected pair-reveal, got ${msg.type}`);
      const p = s.pair as NonNullable<ConsoleState['pair']>;
      const own = p.own as EphemeralKeyPair;
      return cOut({ ...s, phase: 'pair-deriving' }, [], [
        {
          kind: 'crypto',
          req: {
            op: 'console-derive',
            own,
            commitment: p.commitment,
            transcript: {
              protocolVersion: env.version,
              extensionId: s.extensionId as string,
              extPublicKey: p.extPublicKey,
              extNonce: msg.nonce,
              consolePublicKey: own.publicKey,
              consoleNonce: p.consoleNonce as string,
            },
          },
        },
      ]);
    }
    case 'await-auth':
      if (msg.type !== 'auth-begin') return cRefuse(s, 'bad-message', `expected auth-begin, got ${msg.type}`);
      return consoleOnAuthBegin(s, msg, env);
    case 'auth-challenged': {
      if (msg.type !== 'auth-response') return cRefuse(s, 'bad-message', `expected auth-response, got ${msg.type}`);
      const a = s.auth as NonNullable<ConsoleState['auth']>;
      return cOut({ ...s, phase: 'auth-verifying' }, [], [
        { kind: 'crypto', req: { op: 'console-verify', key: a.key, inputs: consoleAuthInputs(s, env), proof: msg.proof } },
      ]);
    }
    case 'ready':
      return consoleOnReady(s, msg, env);
    default:
      // pair-confirm: only ping/pong/error (above) while the person decides; the *-ing phases
      // never see a message (the runner finishes a crypto or store step before the next input).
      return cRefuse(s, 'bad-message', `unexpected ${msg.type} while ${s.phase}`);
  }
}

function consoleOnPeerError(s: ConsoleState, msg: Extract<ExtensionToConsole, { type: 'error' }>, env: ConsoleEnv): CStep {
  const log: ConsoleEffect = { kind: 'log', message: 'the extension reported an error', detail: { code: msg.code, message: msg.message } };
  if (msg.code === 'pairing-rejected' && (s.phase === 'pair-confirm' || s.phase === 'await-auth') && s.extensionId) {
    // The person rejected the code in the popup.
    return cClose(s, 'pairing-rejected', { code: 'pairing-rejected', message: 'Pairing was rejected in the extension.' }, 'refused', [], [
      log,
      { kind: 'audit', event: { kind: 'pairing-rejected', extensionId: s.extensionId, reason: 'extension' } },
    ]);
  }
  if (msg.code === 'auth-failed') {
    const message = 'The extension could not verify this console with its pairing key. Unpair and pair again.';
    const problem = pairAgainProblem('the extension could not verify this console with its pairing key. Unpair in the console and pair the extension again.');
    return cClose(s, 'auth-failed', { code: 'auth-failed', message, problem }, 'refused', [], [
      log,
      { kind: 'audit', event: { kind: 'link-refused', code: 'auth-failed', message, extensionId: s.extensionId } },
    ]);
  }
  if (msg.code === 'version-mismatch') {
    const problem = versionProblem('console', env.version, msg.protocolVersion ?? null);
    return cClose(s, 'version-mismatch', { code: 'version-mismatch', message: msg.message, problem }, 'version-mismatch', [], [log]);
  }
  if (s.phase === 'ready') return cOut(s, [], [log]); // the link survives the extension's complaint about one message
  return cClose(s, msg.code, { code: msg.code, message: msg.message }, 'refused', [], [log]);
}

function consoleOnHello(s: ConsoleState, msg: Extract<ExtensionToConsole, { type: 'hello' }>, env: ConsoleEnv): CStep {
  if (`chrome-extension://${msg.extensionId}/` !== s.callerOrigin) {
    return cRefuse(s, 'origin-not-allowed', `hello names ${msg.extensionId}, but Chrome started the host for ${s.callerOrigin}.`);
  }
  const h = env.held;
  const paired = !!h && msg.pairingId === h.pairingId && h.extensionId === msg.extensionId;
  const next: ConsoleState = { ...s, phase: 'pair-or-auth', extensionId: msg.extensionId, extensionVersion: msg.extensionVersion };
  const problem =
    msg.pairingId !== null && !paired
      ? pairAgainProblem('the extension holds a pairing this console does not know (it was removed here, or this console lost its key store). Compare the codes in the console and the popup to pair again.')
      : undefined;
  return cOut(next, [{ type: 'hello-ack', protocolVersion: env.version, consoleVersion: env.consoleVersion, paired }], [
    { kind: 'arm', timer: 'handshake', ms: env.handshakeTimeoutMs },
    { kind: 'start-heartbeat' },
    { kind: 'status', patch: { state: 'handshaking', extensionId: msg.extensionId, problem } },
  ]);
}

function consoleOnAuthBegin(s: ConsoleState, msg: Extract<ExtensionToConsole, { type: 'auth-begin' }>, env: ConsoleEnv): CStep {
  const p = s.accepted ?? env.held;
  if (!p || p.pairingId !== msg.pairingId || p.extensionId !== s.extensionId) {
    return cRefuse(
      s,
      'not-paired',
      'This console does not know that pairing. Pair the extension again.',
      pairAgainProblem('this console does not know the extension’s pairing. Pair the extension again.'),
    );
  }
  const next: ConsoleState = { ...s, phase: 'auth-proving', auth: { pairingId: p.pairingId, key: p.key, extNonce: msg.nonce } };
  const inputs = consoleAuthInputs(next, env);
  const { consoleNonce: _unused, ...challengeInputs } = inputs;
  return cOut(next, [], [{ kind: 'crypto', req: { op: 'console-challenge', key: p.key, inputs: challengeInputs } }]);
}

function consoleAuthInputs(s: ConsoleState, env: ConsoleEnv) {
  const a = s.auth as NonNullable<ConsoleState['auth']>;
  return {
    protocolVersion: env.version,
    extensionId: s.extensionId as string,
    pairingId: a.pairingId,
    extNonce: a.extNonce,
    consoleNonce: a.consoleNonce ?? '',
  };
}

function consoleOnReady(s: ConsoleState, msg: ExtensionToConsole, env: ConsoleEnv): CStep {
  switch (msg.type) {
    case 'response':
      return cOut(s, [], [{ kind: 'response', id: msg.id, result: msg.result }]);
    case 'event':
      return cOut(s, [], [{ kind: 'event', event: msg.event }]);
    case 'unpair': {
      const h = env.held;
      const pre: ConsoleEffect[] = [{ kind: 'forget' }];
      if (h) pre.push({ kind: 'audit', event: { kind: 'unpaired', by: 'extension', pairingId: h.pairingId, extensionId: h.extensionId } });
      return cClose(s, 'unpaired-by-extension', undefined, 'no-extension', [], pre);
    }
    default:
      return cOut(s, [{ type: 'error', code: 'bad-message', message: `unexpected ${msg.type} on an established link` }]);
  }
}

// =====================================================================================
// Extension
// =====================================================================================

/** What the extension step reads but does not own. */
export interface ExtensionEnv {
  version: number;
  extensionId: string;
  extensionVersion: string;
  /** The stored pairing, or null. */
  held: { pairingId: string; key: Uint8Array } | null;
  /** Ask the popup too before keeping a new key (always so when a key is already held). */
  requireLocalPairingConfirmation: boolean;
  /** ms to wait for hello-ack. */
  handshakeTimeoutMs: number;
}

/** Handshake phases on the extension. */
export type ExtensionPhase =
  | 'hello-sent'
  | 'pair-keygen'
  | 'pair-begun'
  | 'pair-deriving'
  | 'pair-revealed'
  | 'storing'
  | 'auth-nonce'
  | 'auth-begun'
  | 'auth-answering'
  | 'auth-responded'
  | 'ready'
  | 'closed';

/** The extension's handshake state for one connection. */
export interface ExtensionState {
  phase: ExtensionPhase;
  pairing?: {
    own?: EphemeralKeyPair;
    extNonce?: string;
    secret?: PairingSecret;
    /** The pairingId once the console accepted. */
    consoleAccepted?: string;
    localAccepted?: boolean;
    /** The popup must confirm too: with requireLocalPairingConfirmation, and whenever a key is already held. */
    needsLocal: boolean;
  };
  auth?: { pairingId: string; key: Uint8Array; extNonce?: string };
}

/** What the popup should show, as a patch (ExtLinkState in extension/src/background/link.ts). */
export interface ExtensionViewPatch {
  state?: 'connecting' | 'awaiting-pairing' | 'connected';
  pairingCode?: string;
  awaitingLocalConfirmation?: boolean;
  error?: ErrorInfo;
  problem?: LinkProblem;
}

/** Inputs of the extension step. */
export type ExtensionInput =
  | { kind: 'received'; raw: unknown }
  | { kind: 'timer'; timer: HandshakeTimer }
  /** The person's answer in the popup ("The codes match" / "They differ"). */
  | { kind: 'confirm'; accept: boolean }
  | { kind: 'crypto'; result: CryptoResult }
  | { kind: 'stored'; ok: boolean; message?: string };

/** Effects of the extension step; link.ts performs them. */
export type ExtensionEffect =
  | { kind: 'arm'; timer: HandshakeTimer; ms: number }
  | { kind: 'disarm' }
  | { kind: 'crypto'; req: CryptoRequest }
  | { kind: 'view'; patch: ExtensionViewPatch }
  | { kind: 'log'; message: string; detail?: unknown }
  | { kind: 'start-heartbeat' }
  | { kind: 'pong' }
  /** The console said `not-paired`: retry at once (the next hello gets paired:false). */
  | { kind: 'reset-backoff' }
  /** Keep the new pairing; answer `{kind:'stored', ok}`. */
  | { kind: 'store'; pairingId: string; key: Uint8Array }
  | { kind: 'forget' }
  | { kind: 'established' }
  | { kind: 'request'; id: string; request: ConsoleRequest }
  /** End the connection; `error` decides what the popup shows and whether to retry (link.ts). */
  | { kind: 'close'; error?: LinkError; state?: 'version-mismatch' };

type EStep = Step<ExtensionState, ExtensionToConsole, ExtensionEffect>;

const eOut = (state: ExtensionState, send: ExtensionToConsole[] = [], effects: ExtensionEffect[] = []): EStep => ({ state, send, effects });

function eClose(error: LinkError | undefined, send: ExtensionToConsole[] = [], pre: ExtensionEffect[] = [], state?: 'version-mismatch'): EStep {
  return { state: { phase: 'closed' }, send, effects: [...pre, { kind: 'disarm' }, state ? { kind: 'close', error, state } : { kind: 'close', error }] };
}

/** The extension's first step on a new port: say hello and wait (handshake timer) for hello-ack. */
export function extensionInit(env: ExtensionEnv): EStep {
  return eOut(
    { phase: 'hello-sent' },
    [{ type: 'hello', protocolVersion: env.version, extensionId: env.extensionId, extensionVersion: env.extensionVersion, pairingId: env.held?.pairingId ?? null }],
    [{ kind: 'arm', timer: 'handshake', ms: env.handshakeTimeoutMs }],
  );
}

/** The extension's transition function (see the file header). */
export function extensionStep(s: ExtensionState, input: ExtensionInput, env: ExtensionEnv): EStep {
  if (s.phase === 'closed') return eOut(s);
  switch (input.kind) {
    case 'timer':
      return eClose({ code: 'handshake-timeout', message: 'The console did not answer the handshake in time.' });
    case 'confirm':
      return extensionConfirm(s, input.accept);
    case 'crypto':
      return extensionCrypto(s, input.result, env);
    case 'stored': {
      if (s.phase !== 'storing' || !s.pairing?.secret || !s.pairing.consoleAccepted) return eOut(s);
      if (!input.ok) return eClose({ code: 'store-failed', message: `The pairing key could not be stored: ${input.message ?? 'unknown error'}` });
      // Prove the new key at once: this also confirms the console derived the same one.
      return eOut({ phase: 'auth-nonce', auth: { pairingId: s.pairing.consoleAccepted, key: s.pairing.secret.key } }, [], [
        { kind: 'view', patch: { state: 'connecting', pairingCode: undefined, awaitingLocalConfirmation: undefined } },
        { kind: 'crypto', req: { op: 'ext-nonce' } },
      ]);
    }
    case 'received':
      return extensionReceived(s, input.raw, env);
  }
}

function extensionConfirm(s: ExtensionState, accept: boolean): EStep {
  const p = s.pairing;
  if (s.phase !== 'pair-revealed' || !p?.secret || !p.needsLocal || p.localAccepted) return eOut(s);
  if (!accept) {
    return eClose({ code: 'pairing-rejected', message: 'Pairing was rejected in the extension.' }, [
      { type: 'error', code: 'pairing-rejected', message: 'The person rejected the pairing in the extension.' },
    ]);
  }
  const next = extensionMaybeFinish({ ...s, pairing: { ...p, localAccepted: true } });
  next.effects.unshift({ kind: 'view', patch: { awaitingLocalConfirmation: undefined } });
  return next;
}

function extensionMaybeFinish(s: ExtensionState): EStep {
  const p = s.pairing;
  if (!p?.secret || !p.consoleAccepted) return eOut(s);
  if (p.needsLocal && !p.localAccepted) return eOut(s);
  return eOut({ ...s, phase: 'storing' }, [], [{ kind: 'store', pairingId: p.consoleAccepted, key: p.secret.key }]);
}

function extensionCrypto(s: ExtensionState, r: CryptoResult, env: ExtensionEnv): EStep {
  if (r.op === 'ext-begin' && s.phase === 'pair-keygen' && s.pairing) {
    return eOut({ ...s, phase: 'pair-begun', pairing: { ...s.pairing, own: r.own, extNonce: r.nonce } }, [
      { type: 'pair-begin', publicKey: r.own.publicKey, commitment: r.commitment },
    ]);
  }
  if (r.op === 'ext-derive' && s.phase === 'pair-deriving' && s.pairing) {
    if (!r.ok) {
      const message = `The console's pairing key was not usable: ${r.message}`;
      return eClose({ code: 'pairing-failed', message }, [{ type: 'error', code: 'pairing-failed', message }]);
    }
    const p = { ...s.pairing, secret: r.secret };
    return eOut({ ...s, phase: 'pair-revealed', pairing: p }, [{ type: 'pair-reveal', nonce: p.extNonce as string }], [
      { kind: 'view', patch: { state: 'awaiting-pairing', pairingCode: r.secret.code, awaitingLocalConfirmation: p.needsLocal ? true : undefined, error: undefined } },
    ]);
  }
  if (r.op === 'ext-nonce' && s.phase === 'auth-nonce' && s.auth) {
    return eOut({ ...s, phase: 'auth-begun', auth: { ...s.auth, extNonce: r.nonce } }, [{ type: 'auth-begin', pairingId: s.auth.pairingId, nonce: r.nonce }]);
  }
  if (r.op === 'ext-answer' && s.phase === 'auth-answering' && s.auth) {
    if (!r.ok) {
      const message =
        'The program answering as Echo Console could not prove it holds this pairing key. Another program may be posing as the console. Check that Echo Console is running, then pair again if needed.';
      return eClose({ code: 'auth-failed', message, problem: pairAgainProblem('the console could not prove it holds this extension’s pairing key. If Echo Console is running, unpair in the console and pair again; otherwise another program may be posing as the console.') }, [
        { type: 'error', code: 'auth-failed', message: 'console proof did not verify' },
      ]);
    }
    return eOut({ ...s, phase: 'auth-responded' }, [{ type: 'auth-response', proof: r.proof }]);
  }
  void env;
  return eOut(s, [], [{ kind: 'log', message: 'unexpected crypto result', detail: { op: r.op, phase: s.phase } }]);
}

function extensionReceived(s: ExtensionState, raw: unknown, env: ExtensionEnv): EStep {
  const peer = peekProtocolVersion(raw);
  if (s.phase === 'hello-sent' && peer !== null && peer !== env.version) {
    const problem = versionProblem('extension', env.version, peer);
    const message = `Version mismatch: the console speaks link protocol v${peer}, this extension speaks v${env.version}. ${problem.message}`;
    return eClose({ code: 'version-mismatch', message, problem }, [{ type: 'error', code: 'version-mismatch', message, protocolVersion: env.version }]);
  }
  const v = validateConsoleToExtension(raw);
  if (!v.ok) {
    const send: ExtensionToConsole[] = [{ type: 'error', code: 'bad-message', message: v.error.message }];
    const log: ExtensionEffect = { kind: 'log', message: 'invalid message from the console', detail: { phase: s.phase, error: v.error.message } };
    if (s.phase === 'ready') return eOut(s, send, [log]);
    return eClose({ code: 'bad-message', message: v.error.message }, send, [log]);
  }
  const msg = v.value;

  if (msg.type === 'ping') return eOut(s, [{ type: 'pong', seq: msg.seq }]);
  if (msg.type === 'pong') return eOut(s, [], [{ kind: 'pong' }]);
  if (msg.type === 'error') {
    const log: ExtensionEffect = { kind: 'log', message: 'the console refused', detail: { code: msg.code, message: msg.message } };
    if (s.phase === 'ready' && msg.code === 'bad-message') return eOut(s, [], [log]); // the link survives one bad message
    if (msg.code === 'version-mismatch') {
      // A v2+ console names its version; a v1 console does not, so it is the older one.
      const problem = versionProblem('extension', env.version, msg.protocolVersion ?? null);
      return eClose({ code: 'version-mismatch', message: `${msg.message} ${problem.message}`, problem }, [], [log]);
    }
    const pre: ExtensionEffect[] = [log];
    // `not-paired`: the next hello gets paired:false and pairing starts. The stored key is
    // kept until a new pairing replaces it: an unauthenticated peer must not be able to wipe it.
    if (msg.code === 'not-paired') pre.push({ kind: 'reset-backoff' });
    const problem =
      msg.code === 'not-paired' || msg.code === 'auth-failed'
        ? pairAgainProblem(msg.code === 'not-paired' ? 'Echo Console does not know this extension’s pairing. Compare the codes to pair again.' : 'Echo Console could not verify this extension’s pairing key. Unpair and pair again.')
        : undefined;
    return eClose(problem ? { code: msg.code, message: msg.message, problem } : { code: msg.code, message: msg.message }, [], pre);
  }

  const unexpected = (): EStep => {
    const message = `unexpected ${msg.type} while ${s.phase}`;
    return eClose({ code: 'bad-message', message }, [{ type: 'error', code: 'bad-message', message }]);
  };

  switch (s.phase) {
    case 'hello-sent': {
      if (msg.type !== 'hello-ack') return unexpected();
      const h = env.held;
      const effects: ExtensionEffect[] = [{ kind: 'disarm' }, { kind: 'start-heartbeat' }];
      if (msg.paired && h) {
        return eOut({ phase: 'auth-nonce', auth: { pairingId: h.pairingId, key: h.key } }, [], [...effects, { kind: 'crypto', req: { op: 'ext-nonce' } }]);
      }
      // The console does not know our pairing (or we have none). An old key is kept until a
      // new pairing replaces it; and because one is held, replacing it takes the person's word
      // here too: a program that grabbed the socket must not pair itself in (a silent downgrade).
      if (h) {
        effects.push({
          kind: 'view',
          patch: {
            problem: pairAgainProblem(
              'Echo Console does not know this extension’s pairing. If you removed it or reinstalled the console, compare the codes and confirm here; if you did not, another program may be posing as the console.',
            ),
          },
        });
      }
      return eOut({ phase: 'pair-keygen', pairing: { needsLocal: env.requireLocalPairingConfirmation || h !== null } }, [], [
        ...effects,
        { kind: 'crypto', req: { op: 'ext-begin' } },
      ]);
    }
    case 'pair-begun': {
      if (msg.type !== 'pair-offer') return unexpected();
      const p = s.pairing as NonNullable<ExtensionState['pairing']>;
      const own = p.own as EphemeralKeyPair;
      return eOut({ ...s, phase: 'pair-deriving' }, [], [
        {
          kind: 'crypto',
          req: {
            op: 'ext-derive',
            own,
            transcript: {
              protocolVersion: env.version,
              extensionId: env.extensionId,
              extPublicKey: own.publicKey,
              extNonce: p.extNonce as string,
              consolePublicKey: msg.publicKey,
              consoleNonce: msg.nonce,
            },
          },
        },
      ]);
    }
    case 'pair-revealed': {
      if (msg.type !== 'pair-result') return unexpected();
      if (!msg.accepted) return eClose({ code: 'pairing-rejected', message: 'Pairing was rejected in Echo Console.' });
      const p = s.pairing as NonNullable<ExtensionState['pairing']>;
      return extensionMaybeFinish({ ...s, pairing: { ...p, consoleAccepted: msg.pairingId } });
    }
    case 'auth-begun': {
      if (msg.type !== 'auth-challenge') return unexpected();
      const a = s.auth as NonNullable<ExtensionState['auth']>;
      return eOut({ ...s, phase: 'auth-answering' }, [], [
        {
          kind: 'crypto',
          req: {
            op: 'ext-answer',
            key: a.key,
            consoleProof: msg.proof,
            inputs: { protocolVersion: env.version, extensionId: env.extensionId, pairingId: a.pairingId, extNonce: a.extNonce as string, consoleNonce: msg.nonce },
          },
        },
      ]);
    }
    case 'auth-responded':
      if (msg.type !== 'auth-ok') return unexpected();
      return eOut({ phase: 'ready' }, [], [
        { kind: 'established' },
        { kind: 'view', patch: { state: 'connected', error: undefined, problem: undefined, pairingCode: undefined, awaitingLocalConfirmation: undefined } },
      ]);
    case 'ready':
      if (msg.type === 'request') return eOut(s, [], [{ kind: 'request', id: msg.id, request: msg.request }]);
      if (msg.type === 'unpaired') {
        return eClose({ code: 'unpaired', message: 'Echo Console removed this pairing. Pair again to reconnect.' }, [], [{ kind: 'forget' }]);
      }
      return eOut(s, [{ type: 'error', code: 'bad-message', message: `unexpected ${msg.type} on an established link` }]);
    default:
      return unexpected();
  }
}
