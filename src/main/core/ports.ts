/**
 * The ports between parts of the console core. The bridge (src/main/core/bridge)
 * implements ExtensionLink; the broker (src/main/core/broker) consumes it. Tests
 * replace nothing here: end-to-end tests run the real bridge against the real
 * extension.
 */
import type { ConsoleRequest, ConsoleRequestValue, ExtensionEvent } from '../../shared/protocol';
import type { Result } from '../../shared/result';
import type { LinkStatus } from '../../shared/ipc';

export type { LinkStatus };
import type { Grant } from '../../shared/types';

/** The console's side of the link to the extension. */
export interface ExtensionLink {
  /**
   * Send one request and wait for its response. Never throws: a dropped link,
   * a timeout or an abort answers `{ok:false}` with code `link-down`,
   * `timeout` or `aborted`. A dropped link never replays the request.
   */
  request<K extends ConsoleRequest['op']>(
    req: Extract<ConsoleRequest, { op: K }>,
    opts?: { signal?: AbortSignal; timeoutMs?: number },
  ): Promise<Result<ConsoleRequestValue[K]>>;
  /** Subscribe to extension events; returns the unsubscribe function. */
  onEvent(listener: (e: ExtensionEvent) => void): () => void;
  status(): LinkStatus;
  onStatus(listener: (s: LinkStatus) => void): () => void;
  /** MAC a grant with the pairing key (src/shared/grant.ts). Fails with `not-paired` when no key. */
  signGrant(fields: Omit<Grant, 'mac'>): Promise<Result<Grant>>;
  /** The person's answer to the pairing code shown in the console. */
  confirmPairing(accept: boolean): Promise<Result<null>>;
  /** Forget the pairing key and tell the extension. */
  unpair(): Promise<Result<null>>;
}
