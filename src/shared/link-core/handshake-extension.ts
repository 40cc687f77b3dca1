/**
 * The extension's role in the link handshake: `extensionInit` and the pure
 * transition function `extensionStep` (the overview, and what is checked in
 * which order, is the header of handshake.ts). extension/src/background/link.ts
 * drives it through `StepRunner` (runner.ts).
 */
import type { LinkProblem } from '../ipc';
import type { EphemeralKeyPair, PairingSecret } from '../pairing-crypto';
import {
  peekProtocolVersion,
  validateConsoleToExtension,
  type ConsoleRequest,
  type ExtensionToConsole,
} from '../protocol';
import type { ErrorInfo } from '../result';
import type { CryptoRequest, CryptoResult } from './crypto';
import type { HandshakeTimer, LinkError, Step } from './handshake-types';
import { pairAgainProblem, versionProblem } from './problems';

/** What the extension step reads but does not own. */
export interface ExtensionEnv {
  version: number;
  extensionId: string;
  extensionVersion: string;
  /** The stored pairing, or null. */
  held: { pairingId: string; key: Uint8Array } | null;
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
    /**
     * The popup must confirm too. Always true (issue 9 item 1): whoever answers on the socket
     * may be a same-user impostor while the console is not running, so its `pair-result
     * {accepted:true}` alone is never the person's word. Kept as a field so the state says it.
     */
    needsLocal: true;
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
      // Every new pairing waits for the person in the popup too (issue 9 item 1): nothing is
      // stored, authenticated or served before it, whatever the peer says.
      return eOut({ phase: 'pair-keygen', pairing: { needsLocal: true } }, [], [
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
