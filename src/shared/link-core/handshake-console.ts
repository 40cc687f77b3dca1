/**
 * The console's role in the link handshake: `consoleInit` and the pure
 * transition function `consoleStep` (the overview, and what is checked in
 * which order, is the header of handshake.ts). The bridge
 * (src/main/core/bridge) drives it through `StepRunner` (runner.ts).
 */
import type { LinkProblem, LinkStatus } from '../ipc';
import type { EphemeralKeyPair, PairingSecret } from '../pairing-crypto';
import {
  peekProtocolVersion,
  validateExtensionToConsole,
  type ConsoleToExtension,
  type ExtensionEvent,
  type ExtensionToConsole,
} from '../protocol';
import type { Result } from '../result';
import type { CryptoRequest, CryptoResult } from './crypto';
import type { HandshakeTimer, LinkAuditEvent, LinkError, Step } from './handshake-types';
import { pairAgainProblem, versionProblem } from './problems';

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
