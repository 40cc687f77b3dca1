/**
 * The Electron host's holder of the ledger's checkpoint signing key
 * (src/main/core/ledger/key-holder.ts, docs/ledger.md "Signed checkpoints"): the
 * Ed25519 private key is encrypted with Electron's `safeStorage` (the OS keychain:
 * Keychain on macOS, DPAPI on Windows, libsecret / KWallet on Linux) and written, 0600
 * in a 0700 folder, OUTSIDE the data folder (beside the web host's key file, with the
 * extension `.safestorage`). Without the keychain the blob is useless, so another user,
 * or whoever copies the data folder, cannot sign.
 *
 * The desktop app and the web host share one data folder, so they must share one key:
 * when the web host's PEM file already exists (and no blob), it is used as it is; the web
 * host refuses to make a new key while a blob exists (key-holder.ts).
 *
 * When the keychain cannot be used (no encryption, or Linux's hard-coded `basic_text`
 * fallback), it says so plainly and falls back to the 0600 key file outside the data
 * folder (`FileLedgerKeyHolder`). A blob that no longer decrypts is refused
 * (LedgerKeyError), never replaced: replacing the key would let the console sign over
 * whatever the ledger now holds.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { SafeStorage } from 'electron';
import { LedgerSigningKey } from './core/ledger/checkpoints';
import {
  FileLedgerKeyHolder, LedgerKeyError, checkPrivate, ensurePrivateDir, publicKeyFile, safeStorageKeyFile, writePrivateFile, type LedgerKeyHolder, type LoadedLedgerKey,
} from './core/ledger/key-holder';
import { SafeStorageSecretStore } from './secret-store';

type SafeStorageLike = Pick<SafeStorage, 'isEncryptionAvailable' | 'encryptString' | 'decryptString' | 'getSelectedStorageBackend'>;

/** `safeStorage`-backed LedgerKeyHolder, with the plainly stated file fallback. */
export class SafeStorageLedgerKeyHolder implements LedgerKeyHolder {
  readonly description: string;
  private readonly fallback: FileLedgerKeyHolder | null;
  private readonly file: string;
  private readonly pemFile: string;

  /**
   * @param safeStorage Electron's `safeStorage` (injected for tests).
   * @param pemFile     the web host's key file for this data folder (`defaultLedgerKeyFile(dataDir)`);
   *                    the blob is kept beside it as `<pemFile without .pem>.safestorage`.
   * @param dataDir     the console's data folder (refused as the key's place).
   * @param onWarning   told, in plain words, when the keychain cannot be used.
   * @param platform    `process.platform`.
   * @throws LedgerKeyError('key-location') when keyDir is inside the data folder.
   */
  constructor(
    private readonly safeStorage: SafeStorageLike,
    pemFile: string,
    dataDir: string,
    onWarning: (message: string) => void = () => {},
    platform: NodeJS.Platform = process.platform,
  ) {
    this.file = safeStorageKeyFile(pemFile);
    this.pemFile = pemFile;
    // Refuses a place inside the data folder; also the holder used when the keychain cannot be.
    const pem = new FileLedgerKeyHolder(pemFile, dataDir, { ignoreSafeStorageBlob: true });
    // The same test of the keychain as the pairing key's store (src/main/secret-store.ts).
    const why = new SafeStorageSecretStore(safeStorage, path.dirname(pemFile), () => {}, platform).unavailableReason();
    if (why) {
      this.fallback = pem;
      this.description = `${pem.description}, because the system keychain cannot be used here`;
      onWarning(`The ledger's signing key is kept in ${pem.file}, not in the system keychain: ${why} Another user cannot read it; a program running as you can.`);
    } else if (!existsSync(this.file) && existsSync(pemFile)) {
      // The web host made the key first: keep using it, so both hosts sign with one key.
      this.fallback = pem;
      this.description = `${pem.description}, made by the web host for this data folder (kept so both hosts sign with one key)`;
    } else {
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
      let key: LedgerSigningKey;
      try {
        key = LedgerSigningKey.fromPkcs8(pem);
      } catch (e) {
        throw new LedgerKeyError('key-corrupt', `the ledger signing key ${this.file} is not an Ed25519 key (${(e as Error).message})`);
      }
      this.writePublicKey(key);
      return { key, created: false };
    }
    const key = LedgerSigningKey.generate();
    writePrivateFile(this.file, this.safeStorage.encryptString(key.toPem()));
    this.writePublicKey(key);
    return { key, created: true };
  }

  /** The public key beside the blob, for the CLI (it cannot use the keychain); rewritten when it differs. */
  private writePublicKey(key: LedgerSigningKey): void {
    const pub = publicKeyFile(this.pemFile);
    let have: string | null = null;
    try {
      have = readFileSync(pub, 'utf8').trim();
    } catch {
      // absent: written below
    }
    if (have !== key.publicKey) writePrivateFile(pub, `${key.publicKey}\n`);
  }
}
