// The safeStorage-backed SecretStore (src/main/secret-store.ts) with a fake
// safeStorage: round trip, never plaintext on disk, mode 0600, and fail-closed
// when the keychain is missing or Linux would use its basic_text fallback.
import { readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { fakeSafeStorage, type Backend } from '../support/fake-safe-storage';
import { useTempDirs } from '../support/temp-dirs';
import { SafeStorageSecretStore } from '../../src/main/secret-store';

const tmp = useTempDirs('echo-secrets-');

describe('SafeStorageSecretStore', () => {
  it('round-trips a secret, encrypted, in a 0600 file', async () => {
    const dir = tmp();
    const store = new SafeStorageSecretStore(fakeSafeStorage(), dir, undefined, 'linux');
    expect(await store.get('pairing-key')).toBeNull();
    await store.set('pairing-key', 'c2VjcmV0LWtleS1ieXRlcw==');
    expect(await store.get('pairing-key')).toBe('c2VjcmV0LWtleS1ieXRlcw==');
    const file = path.join(dir, 'secrets', 'pairing-key.bin');
    expect(readFileSync(file, 'utf8')).not.toContain('c2VjcmV0LWtleS1ieXRlcw==');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(path.dirname(file)).mode & 0o777).toBe(0o700);
    expect(readdirSync(path.dirname(file))).toEqual(['pairing-key.bin']);
    await store.delete('pairing-key');
    await store.delete('pairing-key');
    expect(await store.get('pairing-key')).toBeNull();
  });

  it.each<[boolean, Backend, NodeJS.Platform]>([
    [false, 'gnome_libsecret', 'linux'],
    [true, 'basic_text', 'linux'],
    [true, 'unknown', 'linux'],
    [false, 'unknown', 'darwin'],
  ])('refuses to store when encryption=%s backend=%s on %s', async (available, backend, platform) => {
    const dir = tmp();
    const warn = vi.fn();
    const store = new SafeStorageSecretStore(fakeSafeStorage(available, backend), dir, warn, platform);
    await expect(store.set('pairing-key', 'k')).rejects.toMatchObject({ code: 'secret-store-unavailable' });
    expect(await store.get('pairing-key')).toBeNull();
    expect(warn).toHaveBeenCalled();
    expect(() => readdirSync(path.join(dir, 'secrets'))).toThrow();
  });

  it('treats an undecryptable secret as absent, with a warning', async () => {
    const dir = tmp();
    const warn = vi.fn();
    const store = new SafeStorageSecretStore(fakeSafeStorage(), dir, warn, 'linux');
    await store.set('pairing-key', 'k');
    writeFileSync(path.join(dir, 'secrets', 'pairing-key.bin'), 'garbage');
    expect(await store.get('pairing-key')).toBeNull();
    expect(warn.mock.calls[0]![0]).toMatch(/could not be decrypted/);
  });

  it('refuses names that could escape the folder', async () => {
    const store = new SafeStorageSecretStore(fakeSafeStorage(), tmp(), undefined, 'linux');
    for (const name of ['../x', 'a/b', '', '.hidden', 'x'.repeat(65)]) {
      await expect(store.set(name, 'v')).rejects.toMatchObject({ code: 'invalid-name' });
    }
  });
});
