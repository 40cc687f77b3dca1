/**
 * The extension as the ledger's witness (docs/ledger.md, "Signed checkpoints"): it keeps
 * the newest signed checkpoint the console handed over, in `chrome.storage.local` (closed
 * to content scripts: TRUSTED_CONTEXTS, set in index.ts), and gives it back when the
 * console verifies. So a ledger rolled back below this checkpoint, or rewritten under
 * it, fails verify even when whoever changed the file could also change the console's
 * own checkpoints.
 *
 * Rules (a witness only ever moves forward):
 * - the checkpoint's Ed25519 signature must verify with the key it names (WebCrypto);
 * - the first checkpoint pins the key: one of another key is refused (`another-key`),
 *   so a console whose key was replaced cannot make the witness forget the old head;
 * - a lower count is refused (`rollback`), the same count with another head hash too
 *   (`conflict`); the held checkpoint stays.
 * Operations run one at a time, so two hand-overs cannot race the storage.
 */
import { verifyCheckpointWebCrypto, type SignedCheckpoint } from '../../../src/shared/checkpoint';
import type { KeyValueArea } from './store';

/** The storage key of the witness in chrome.storage.local. */
export const WITNESS_KEY = 'ledgerWitness';

/** The ledger witness over one storage area. */
export class LedgerWitness {
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly area: KeyValueArea) {}

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.queue.then(fn, fn);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** The checkpoint kept, or null. */
  read(): Promise<SignedCheckpoint | null> {
    return this.serial(async () => {
      const v = (await this.area.get(WITNESS_KEY))[WITNESS_KEY];
      return v && typeof v === 'object' ? (v as SignedCheckpoint) : null;
    });
  }

  /**
   * Offer a newer checkpoint. Kept when its signature verifies, it is of the pinned key
   * (or the first one), and it does not go back.
   * @returns `{kept: true}`, or `{kept: false, reason}` naming the rule that refused it.
   */
  offer(cp: SignedCheckpoint): Promise<{ kept: boolean; reason?: string }> {
    return this.serial(async () => {
      if (!(await verifyCheckpointWebCrypto(cp))) return { kept: false, reason: 'signature: the checkpoint does not verify' };
      const held = (await this.area.get(WITNESS_KEY))[WITNESS_KEY] as SignedCheckpoint | undefined;
      if (held && typeof held === 'object') {
        if (held.keyId !== cp.keyId) {
          return { kept: false, reason: `another-key: the witness holds checkpoint #${held.count} signed by key ${held.keyId.slice(0, 16)}…` };
        }
        if (cp.count < held.count) return { kept: false, reason: `rollback: the witness holds checkpoint #${held.count}, newer than #${cp.count}` };
        if (cp.count === held.count && cp.headHash !== held.headHash) {
          return { kept: false, reason: `conflict: the witness holds another head hash for #${cp.count}` };
        }
      }
      await this.area.set({ [WITNESS_KEY]: cp });
      return { kept: true };
    });
  }
}
