/**
 * A stand-in for Electron's `safeStorage` (which cannot load outside Electron), for
 * the unit tests of the host's keychain-backed stores (src/main/secret-store.ts,
 * src/main/ledger-key.ts). Its "encryption" is a reversible scramble marked `enc:`,
 * enough to tell that nothing is written in plain text and that a blob the keychain
 * did not write fails to decrypt the way Electron's does (it throws).
 */

/** The storage backends Electron's `safeStorage.getSelectedStorageBackend()` names on Linux. */
export type Backend = 'basic_text' | 'gnome_libsecret' | 'kwallet' | 'kwallet5' | 'kwallet6' | 'unknown';

/**
 * A fake `safeStorage`.
 * @param available what `isEncryptionAvailable()` answers (false: no keychain at all).
 * @param backend what `getSelectedStorageBackend()` answers (`basic_text`: Linux's plain fallback).
 */
export function fakeSafeStorage(available = true, backend: Backend = 'gnome_libsecret') {
  return {
    isEncryptionAvailable: () => available,
    getSelectedStorageBackend: () => backend,
    encryptString: (s: string) => Buffer.from(`enc:${Buffer.from(s).toString('base64').split('').reverse().join('')}`),
    decryptString: (b: Buffer) => {
      const t = b.toString();
      if (!t.startsWith('enc:')) throw new Error('Error while decrypting the ciphertext provided to safeStorage.decryptString.');
      return Buffer.from(t.slice(4).split('').reverse().join(''), 'base64').toString();
    },
  };
}
