/**
 * What the popup shows of the link (`ExtLinkState`), and how the end of a
 * connection is shown: which errors need the person before a retry can help,
 * and which state and error the popup then shows. Pure; link.ts keeps the
 * state and reports it.
 */
import type { LinkProblem } from '../../../src/shared/ipc';
import type { LinkError } from '../../../src/shared/link-core';
import type { ErrorInfo } from '../../../src/shared/result';

/**
 * What the popup shows. States use the popup's vocabulary
 * (extension/src/lib/messages.ts PopupLinkState):
 * - `not-installed`: Chrome found no native host (the console writes it when it runs);
 * - `console-not-running`: the host ran but no console listens (host-error);
 * - `connecting`: handshake in progress, or waiting to retry (`retryAt`);
 * - `awaiting-pairing`: compare `pairingCode` with the console and confirm in both (the popup: `awaitingLocalConfirmation`);
 * - `connected`: authenticated and a pong arrived within LIMITS.heartbeatTimeoutMs;
 * - `version-mismatch`: console and extension speak different protocol versions;
 * - `refused`: see `error.code`: `pairing-rejected`, `pairing-timeout`, `unpaired`,
 *   `auth-failed` (the console could not prove the key: possibly an impostor),
 *   `origin-not-allowed`, `already-connected`, `console-untrusted` (the native
 *   host found the socket not served by this user's console), ... Those that
 *   need the person (all but `already-connected` and `console-untrusted`) stop
 *   retrying until `retry()`.
 */
export interface ExtLinkState {
  state: 'not-installed' | 'console-not-running' | 'connecting' | 'awaiting-pairing' | 'connected' | 'version-mismatch' | 'refused' | 'stopped';
  paired: boolean;
  /** The stored pairing was confirmed in the console only (before issue 9 item 1): the console may not share tabs through it. */
  unconfirmedPairing?: true;
  pairingCode?: string;
  /** The popup must call `confirmPairing` too: always while a code waits (issue 9 item 1). */
  awaitingLocalConfirmation?: boolean;
  /** ms since the epoch of the last pong. */
  lastHeartbeatAt?: number;
  /** ms since the epoch of the next reconnect attempt, while waiting to retry. */
  retryAt?: number;
  error?: ErrorInfo;
  /** Something only the person can fix, in plain words: update the extension or the console, or pair again. */
  problem?: LinkProblem;
}

/**
 * What the popup advises when Chrome finds no native host (or may not start it).
 * The console writes the host manifests each time it starts, into the profiles
 * that exist then: a browser first run after the console started has none yet.
 */
export const HOST_NOT_FOUND_ADVICE =
  'Echo Console registers its native host when it starts. If this browser had never run before the console started, restart the console, then click Try again.';

/** Errors after which retrying cannot help until the person acts (popup: retry / pair again). */
export const NEEDS_PERSON = new Set(['version-mismatch', 'pairing-rejected', 'pairing-timeout', 'unpaired', 'auth-failed', 'origin-not-allowed', 'pairing-failed']);

/**
 * The state patch once a connection ended: `shown` is the error to show (the
 * step's, else the native host's `host-error`), `state` the state a caller
 * names outright; otherwise version-mismatch, console-not-running, refused (for
 * errors that need the person, and `already-connected`) or connecting.
 */
export function endedView(shown: LinkError | undefined, state?: ExtLinkState['state']): Partial<ExtLinkState> {
  const next: ExtLinkState['state'] =
    state ??
    (shown?.code === 'version-mismatch'
      ? 'version-mismatch'
      : shown?.code === 'console-not-running'
        ? 'console-not-running'
        : shown && (NEEDS_PERSON.has(shown.code) || shown.code === 'already-connected' || shown.code === 'console-untrusted')
          ? 'refused'
          : 'connecting');
  const { problem, ...info } = shown ?? { problem: undefined };
  return {
    state: next,
    error: shown ? (info as ErrorInfo) : undefined,
    problem,
    pairingCode: undefined,
    awaitingLocalConfirmation: undefined,
    lastHeartbeatAt: undefined,
  };
}
