/**
 * The Electron host's `SecretStore` (src/main/core/bridge/secret-store.ts) for
 * the pairing key: each secret is encrypted with Electron's `safeStorage` (the
 * OS keychain: Keychain on macOS, DPAPI on Windows, libsecret / KWallet on
 * Linux) and written to `<dataDir>/secrets/<name>.bin` (mode 0600, folder 0700).
 *
 * Fails closed (docs/design.md, "Conventions" §5):
 * - when encryption is unavailable, or on Linux when Chromium would fall back to
 *   its hard-coded `basic_text` password, nothing is written: `set` throws
 *   `secret-store-unavailable`, and `get` answers "no secret";
 * - a secret that cannot be read or decrypted is "no secret" (the extension must
 *   pair again), never a guess; the reason goes to `onWarning`.
 */
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { SafeStorage } from 'electron';
import type { SecretStore } from './core/bridge/secret-store';

/** Secret names: short, file-name-safe. */
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** An Error with a stable `code`, so the core can report it as a Result. */
export class SecretStoreError extends Error {
  constructor(
    readonly code: 'secret-store-unavailable' | 'invalid-name',
    message: string,
  ) {
    super(message);
  }
}

/** `safeStorage`-backed SecretStore. */
export class SafeStorageSecretStore implements SecretStore {
  private readonly dir: string;

  /**
   * @param safeStorage Electron's `safeStorage` (injected for tests).
   * @param dataDir     the console's data folder.
   * @param onWarning   told why a stored secret was ignored.
   * @param platform    `process.platform`.
   */
  constructor(
    private readonly safeStorage: Pick<SafeStorage, 'isEncryptionAvailable' | 'encryptString' | 'decryptString' | 'getSelectedStorageBackend'>,
    dataDir: string,
    private readonly onWarning: (message: string) => void = () => {},
    private readonly platform: NodeJS.Platform = process.platform,
  ) {
    this.dir = path.join(dataDir, 'secrets');
  }

  /** Why secrets cannot be kept safely here, or `null` when they can. */
  unavailableReason(): string | null {
    if (!this.safeStorage.isEncryptionAvailable()) {
      return 'The system keychain is not available, so the pairing key cannot be stored safely.';
    }
    if (this.platform === 'linux') {
      const backend = this.safeStorage.getSelectedStorageBackend();
      if (backend === 'basic_text' || backend === 'unknown') {
        return 'No system keyring (GNOME Keyring or KWallet) was found, so the pairing key cannot be stored safely. Start a keyring and restart Echo Console.';
      }
    }
    return null;
  }

  private file(name: string): string {
    if (!NAME.test(name)) throw new SecretStoreError('invalid-name', 'Invalid secret name.');
    return path.join(this.dir, `${name}.bin`);
  }

  async get(name: string): Promise<string | null> {
    const file = this.file(name);
    const why = this.unavailableReason();
    if (why) {
      this.onWarning(why);
      return null;
    }
    let data: Buffer;
    try {
      data = await readFile(file);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') this.onWarning(`cannot read ${file}: ${(e as Error).message}`);
      return null;
    }
    try {
      return this.safeStorage.decryptString(data);
    } catch {
      this.onWarning(`${file} could not be decrypted (did the keychain change?); pair the extension again`);
      return null;
    }
  }

  async set(name: string, value: string): Promise<void> {
    const file = this.file(name);
    const why = this.unavailableReason();
    if (why) throw new SecretStoreError('secret-store-unavailable', why);
    const data = this.safeStorage.encryptString(value);
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
    await writeFile(tmp, data, { mode: 0o600 });
    await rename(tmp, file);
  }

  async delete(name: string): Promise<void> {
    await rm(this.file(name), { force: true });
  }
}
