/**
 * What the console shows of the link (LinkStatus, src/shared/ipc.ts): the
 * current status, merged from the patches the handshake and the bridge
 * report, published to listeners only when it changed, and always as copies
 * (callers cannot change the bridge's state).
 */
import type { LinkStatus } from '../../../shared/ipc';
import type { LinkError } from '../../../shared/link-core';

/** The bridge's LinkStatus and its listeners. */
export class LinkStatusCell {
  private current: LinkStatus = { state: 'no-extension', paired: false };
  private lastStatusJson = '';
  private readonly statusListeners = new Set<(s: LinkStatus) => void>();

  /** `warn` reports a listener that threw (the others are still called). */
  constructor(private readonly warn: (message: string, detail?: unknown) => void) {}

  /** A copy of the current status. */
  get(): LinkStatus {
    return structuredClone(this.current);
  }

  /** Call `listener` with a copy on every change (not immediately). @returns the unsubscribe function. */
  on(listener: (s: LinkStatus) => void): () => void {
    this.statusListeners.add(listener);
    return () => this.statusListeners.delete(listener);
  }

  /**
   * Merge `patch` into the status (a field patched to undefined is removed),
   * with `paired` as given, and tell the listeners when the result differs.
   */
  set(patch: Partial<LinkStatus>, paired: boolean): void {
    const next: LinkStatus = { ...this.current, ...patch, paired };
    for (const k of Object.keys(next) as (keyof LinkStatus)[]) if (next[k] === undefined) delete next[k];
    this.current = next;
    const json = JSON.stringify(next);
    if (json === this.lastStatusJson) return;
    this.lastStatusJson = json;
    for (const l of [...this.statusListeners]) {
      try {
        l(structuredClone(next));
      } catch (e) {
        this.warn('status listener threw', { message: (e as Error).message });
      }
    }
  }
}

/**
 * The status patch once the active connection ended, or a newcomer was refused
 * while none is active: `no-extension` after a plain close; with an error,
 * `state` (refused, version-mismatch, ...), the extension it named, the error
 * and its plain-words problem.
 */
export function endedStatus(error: LinkError | undefined, state: LinkStatus['state'], extensionId: string | undefined): Partial<LinkStatus> {
  const { problem, ...info } = error ?? { problem: undefined };
  return {
    state: error ? state : 'no-extension',
    extensionId: error ? extensionId : undefined,
    pairingCode: undefined,
    lastHeartbeatAt: undefined,
    error: error ? (info as LinkError) : undefined,
    problem,
  };
}
