// The Electron host's holder of the ledger's checkpoint signing key (src/main/ledger-key.ts)
// with a fake safeStorage in place of Electron's: the key is kept encrypted outside the
// data folder, never in plain text, 0600 in a 0700 folder; a blob that no longer decrypts
// is refused and left as it is (never replaced, which would let the console sign over
// anything); without a usable keychain it says so plainly and falls back to the 0600 file.
import { readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { fakeSafeStorage } from '../support/fake-safe-storage';
import { useTempDirs } from '../support/temp-dirs';
import { SafeStorageLedgerKeyHolder } from '../../src/main/ledger-key';
import { FileLedgerKeyHolder, LedgerKeyError } from '../../src/main/core/ledger/key-holder';

const tmp = useTempDirs('echo-ledger-key-');

describe('SafeStorageLedgerKeyHolder', () => {
  it('creates the key once, encrypted with the keychain, 0600 in a 0700 folder outside the data folder, and loads the same key again', () => {
    const root = tmp();
    const dataDir = path.join(root, 'echo-console');
    const keyDir = path.join(root, 'echo-console-keys');
    const pem = path.join(keyDir, 'ledger-0123.pem');
    const holder = new SafeStorageLedgerKeyHolder(fakeSafeStorage(), pem, dataDir, () => {}, 'linux');
    expect(holder.description).toMatch(/encrypted with the system keychain \(Electron safeStorage\).*outside the data folder/);
    const first = holder.load();
    expect(first.created).toBe(true);
    const file = path.join(keyDir, 'ledger-0123.safestorage');
    expect(readdirSync(keyDir).sort()).toEqual(['ledger-0123.pub', 'ledger-0123.safestorage']);
    // The public key beside it, for `npm run ledger -- verify`, which cannot use the keychain.
    expect(readFileSync(path.join(keyDir, 'ledger-0123.pub'), 'utf8').trim()).toBe(first.key.publicKey);
    expect(readFileSync(file, 'utf8')).not.toContain('PRIVATE KEY');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(keyDir).mode & 0o777).toBe(0o700);
    const again = new SafeStorageLedgerKeyHolder(fakeSafeStorage(), pem, dataDir, () => {}, 'linux').load();
    expect(again.created).toBe(false);
    expect(again.key.keyId).toBe(first.key.keyId);
    // The web host, on the same data folder, makes no second key (it would make every checkpoint look forged).
    expect(() => new FileLedgerKeyHolder(pem, dataDir).load()).toThrow(/in the desktop app's keychain/);
    expect(readdirSync(keyDir).sort()).toEqual(['ledger-0123.pub', 'ledger-0123.safestorage']);
  });

  it("keeps using the web host's key file when it came first, so both hosts sign with one key", () => {
    const root = tmp();
    const pem = path.join(root, 'keys', 'ledger-0123.pem');
    const web = new FileLedgerKeyHolder(pem, path.join(root, 'data')).load();
    const desktop = new SafeStorageLedgerKeyHolder(fakeSafeStorage(), pem, path.join(root, 'data'), () => {}, 'linux');
    expect(desktop.description).toMatch(/made by the web host/);
    expect(desktop.load()).toMatchObject({ created: false, key: { keyId: web.key.keyId } });
  });

  it('refuses a key folder inside the data folder', () => {
    const dataDir = tmp();
    expect(() => new SafeStorageLedgerKeyHolder(fakeSafeStorage(), path.join(dataDir, 'keys', 'k.pem'), dataDir, () => {}, 'linux')).toThrow(LedgerKeyError);
  });

  it('a blob that no longer decrypts (the keychain changed, or someone swapped it) is refused and left as it is, never replaced', () => {
    const root = tmp();
    const pem = path.join(root, 'keys', 'ledger-0123.pem');
    new SafeStorageLedgerKeyHolder(fakeSafeStorage(), pem, path.join(root, 'data'), () => {}, 'linux').load();
    const file = path.join(root, 'keys', 'ledger-0123.safestorage');
    writeFileSync(file, 'garbage');
    const holder = new SafeStorageLedgerKeyHolder(fakeSafeStorage(), pem, path.join(root, 'data'), () => {}, 'linux');
    expect(() => holder.load()).toThrow(/cannot be decrypted.*left as it is/);
    expect(readFileSync(file, 'utf8')).toBe('garbage');
  });

  it.each([
    ['no encryption at all', fakeSafeStorage(false)],
    ["Linux's basic_text fallback", fakeSafeStorage(true, 'basic_text')],
  ])('without a usable keychain (%s) it says so plainly and keeps a 0600 PEM file outside the data folder', (_name, safe) => {
    const root = tmp();
    const pem = path.join(root, 'keys', 'ledger-0123.pem');
    const warnings: string[] = [];
    const holder = new SafeStorageLedgerKeyHolder(safe, pem, path.join(root, 'data'), (m) => warnings.push(m), 'linux');
    expect(warnings).toEqual([expect.stringMatching(/not in the system keychain.*Another user cannot read it; a program running as you can\./)]);
    expect(holder.description).toMatch(/0600 file outside the data folder.*because the system keychain cannot be used here/);
    const k = holder.load();
    expect(k.created).toBe(true);
    expect(readFileSync(pem, 'utf8')).toMatch(/BEGIN PRIVATE KEY/);
    expect(statSync(pem).mode & 0o777).toBe(0o600);
  });
});
