/**
 * The Electron host's holder of the ledger's checkpoint signing key
 * (src/main/core/ledger/key-holder.ts, docs/ledger.md "Signed checkpoints"): the
 * Ed25519 private key is encrypted with Electron's `safeStorage` (the OS keychain:
 * Keychain on macOS, DPAPI on Windows, libsecret / KWallet on Linux) and written, 0600
 * in a 0700 folder, OUTSIDE the data folder. Without the keychain the blob is useless,
 * so another user, or whoever copies the data folder, cannot sign.
 *
 * When the keychain cannot be used (no encryption, or Linux's hard-coded `basic_text`
 * fallback), it says so plainly and falls back to the 0600 key file outside the data
 * folder (`FileLedgerKeyHolder`). A blob that no longer decrypts is refused
 * (LedgerKeyError), never replaced: replacing the key would let the console sign over
 * whatever the ledger now holds.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { SafeStorage } from 'electron';
import { LedgerSigningKey } from './core/ledger/checkpoints';
import {
  FileLedgerKeyHolder, LedgerKeyError, checkPrivate, ensurePrivateDir, writePrivateFile, type LedgerKeyHolder, type LoadedLedgerKey,
} from './core/ledger/key-holder';
import { SafeStorageSecretStore } from './secret-store';

type SafeStorageLike = Pick<SafeStorage, 'isEncryptionAvailable' | 'encryptString' | 'decryptString' | 'getSelectedStorageBackend'>;

/** `safeStorage`-backed LedgerKeyHolder, with the plainly stated file fallback. */
export class SafeStorageLedgerKeyHolder implements LedgerKeyHolder {
  readonly description: string;
  private readonly fallback: FileLedgerKeyHolder | null;
  private readonly file: string;

  /**
   * @param safeStorage Electron's `safeStorage` (injected for tests).
   * @param keyDir      a folder outside the data folder (Electron: `<appData>/echo-console-keys`).
   * @param dataDir     the console's data folder (refused as the key's place).
   * @param onWarning   told, in plain words, when the keychain cannot be used.
   * @param platform    `process.platform`.
   * @throws LedgerKeyError('key-location') when keyDir is inside the data folder.
   */
  constructor(
    private readonly safeStorage: SafeStorageLike,
    keyDir: string,
    dataDir: string,
    onWarning: (message: string) => void = () => {},
    platform: NodeJS.Platform = process.platform,
  ) {
    this.file = path.join(keyDir, 'ledger-signing-key.bin');
    // The same test of the keychain as the pairing key's store (src/main/secret-store.ts).
    const why = new SafeStorageSecretStore(safeStorage, keyDir, () => {}, platform).unavailableReason();
    if (why) {
      this.fallback = new FileLedgerKeyHolder(path.join(keyDir, 'ledger-signing-key.pem'), dataDir);
      this.description = `${this.fallback.description}, because the system keychain cannot be used here`;
      onWarning(`The ledger's signing key is kept in ${this.fallback.file}, not in the system keychain: ${why} Another user cannot read it; a program running as you can.`);
    } else {
      // Refuse a key folder inside the data folder exactly as the file holder does.
      new FileLedgerKeyHolder(path.join(keyDir, 'probe.pem'), dataDir);
      this.fallback = null;
      this.description = `encrypted with the system keychain (Electron safeStorage) in ${this.file}, outside the data folder`;
    }
  }

  load(): LoadedLedgerKey {
    if (this.fallback) return this.fallback.load();
    ensurePrivateDir(path.dirname(this.file));
    let blob: Buffer | null = null;
    try {
      checkPrivate(this.file, 'the ledger signing key');
      blob = readFileSync(this.file);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
    if (blob !== null) {
      let pem: string;
      try {
        pem = this.safeStorage.decryptString(blob);
      } catch {
        throw new LedgerKeyError('key-unavailable', `the ledger signing key ${this.file} cannot be decrypted (did the keychain change?); it was left as it is, and no checkpoint is signed`);
      }
      try {
        return { key: LedgerSigningKey.fromPkcs8(pem), created: false };
      } catch (e) {
        throw new LedgerKeyError('key-corrupt', `the ledger signing key ${this.file} is not an Ed25519 key (${(e as Error).message})`);
      }
    }
    const key = LedgerSigningKey.generate();
    writePrivateFile(this.file, this.safeStorage.encryptString(key.toPem()));
    return { key, created: true };
  }
}
