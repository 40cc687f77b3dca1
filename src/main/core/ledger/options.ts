/** How a Ledger is opened (index.ts), and the error for using it in the wrong state. */
import type { OpenDatabaseOptions } from './sqlite';
import type { LedgerSigningKey } from './checkpoints';
import type { SyncFd } from './durability';

export interface LedgerOptions extends Pick<OpenDatabaseOptions, 'electronAbiDir' | 'timeoutMs'> {
  /**
   * Open read-only (CLI verify/export/tail): no schema changes (a format-1 file
   * is read as it is, not migrated), `append` throws. The file must exist.
   */
  readonly?: boolean;
  /** Clock, ms since the epoch (tests inject one). Default Date.now. */
  now?: () => number;
  /**
   * Sign checkpoints with this key (read-write opens; docs/ledger.md, "Signed checkpoints"):
   * in the same transaction as any commit that holds an outcome receipt or would leave
   * more than MAX_UNSIGNED_TAIL receipts unsigned. Its public key also checks signatures
   * in `verify`. At open, the console checks the newest checkpoint and the tail; when
   * they fail it stops signing (`signing().held`), so it never signs over a tampered file.
   */
  signingKey?: LedgerSigningKey;
  /**
   * The key was created just now (the first run with signing). Only then is a ledger
   * that holds receipts but no checkpoint adopted: its head is signed at open. With an
   * older key, a ledger without checkpoints fails the tail check instead (they were removed).
   */
  signingKeyCreated?: boolean;
  /** For a reader without the private key (the CLI): the Ed25519 public key, raw 32 bytes in base64, that checks the signatures. */
  publicKey?: string;
  /** The fsync of the write-ahead log (default `fs.fsync`); tests replace it only to make it fail. */
  syncFd?: SyncFd;
}

/** Thrown when the ledger is used after `close`, or appended to while read-only. */
export class LedgerStateError extends Error {
  readonly code = 'ledger-state';
  constructor(message: string) {
    super(message);
    this.name = 'LedgerStateError';
  }
}
