/**
 * What both roles of the link handshake share: the timers, the errors and
 * audit events they report, and the shape of one transition (`Step`).
 * The handshake itself is handshake.ts (overview), handshake-console.ts and
 * handshake-extension.ts (one transition function per role).
 */
import type { LinkProblem } from '../ipc';
import type { ErrorInfo } from '../result';

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
