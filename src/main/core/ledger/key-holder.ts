/**
 * Where the ledger's checkpoint signing key lives (docs/ledger.md, "Signed checkpoints"):
 * never in the data folder, so a writer who can change ledger.db cannot also sign.
 *
 * - The Electron host keeps it encrypted with `safeStorage` (the OS keychain),
 *   src/main/ledger-key.ts.
 * - Elsewhere (the web host, a machine without a keychain) `FileLedgerKeyHolder`
 *   keeps it as a 0600 PKCS#8 PEM file in a 0700 folder outside the data folder
 *   (`defaultLedgerKeyFile`). That protects against another user, not against a
 *   program of the person's own user, which can read the file: said plainly in
 *   `description` and in docs/ledger.md.
 *
 * Fails closed (docs/design.md, "Conventions" §5): a key file another user owns or could
 * read, or one that is not an Ed25519 key, is refused with `LedgerKeyError`; the console
 * then runs without signing and its verify says so. It is never silently replaced.
 */
import { createHash } from 'node:crypto';
import { chmodSync, closeSync, existsSync, fsyncSync, lstatSync, mkdirSync, openSync, readFileSync, realpathSync, renameSync, writeSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { LedgerSigningKey } from './checkpoints';

/** A loaded key, and whether it was created by this load (the first run with signing). */
export interface LoadedLedgerKey {
  key: LedgerSigningKey;
  created: boolean;
}

/** The source of the checkpoint signing key. */
export interface LedgerKeyHolder {
  /** Where the key is kept, in plain words (logged at start and written in the docs). */
  readonly description: string;
  /**
   * The key, creating and storing a new one when none is stored.
   * @throws LedgerKeyError when a stored key cannot be used (wrong owner or mode, corrupt,
   *   undecryptable) or a new one cannot be stored; nothing is overwritten then.
   */
  load(): LoadedLedgerKey;
}

/** Why the signing key cannot be used. `code` is stable. */
export class LedgerKeyError extends Error {
  constructor(
    readonly code: 'key-unsafe' | 'key-corrupt' | 'key-unavailable' | 'key-location',
    message: string,
  ) {
    super(message);
    this.name = 'LedgerKeyError';
  }
}

function isInside(child: string, parent: string): boolean {
  const rel = path.relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

function real(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}

/**
 * The default key file for a data folder (one key per data folder), outside it:
 * `$ECHO_CONSOLE_LEDGER_KEY_DIR`, else on Linux `$XDG_STATE_HOME` (absolute) or
 * `~/.local/state`, on macOS `~/Library/Application Support`, on Windows `%LOCALAPPDATA%`,
 * then `echo-console-keys/ledger-<first 16 hex of SHA-256 of the data folder's real path>.pem`.
 */
export function defaultLedgerKeyFile(dataDir: string, env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string {
  const id = createHash('sha256').update(real(dataDir)).digest('hex').slice(0, 16);
  let base: string;
  if (env.ECHO_CONSOLE_LEDGER_KEY_DIR) base = env.ECHO_CONSOLE_LEDGER_KEY_DIR;
  else if (platform === 'darwin') base = path.join(homedir(), 'Library', 'Application Support', 'echo-console-keys');
  else if (platform === 'win32') base = path.join(env.LOCALAPPDATA ?? path.join(homedir(), 'AppData', 'Local'), 'echo-console-keys');
  else {
    const state = env.XDG_STATE_HOME && path.isAbsolute(env.XDG_STATE_HOME) ? env.XDG_STATE_HOME : path.join(homedir(), '.local', 'state');
    base = path.join(state, 'echo-console-keys');
  }
  return path.join(base, `ledger-${id}.pem`);
}

/** Where the desktop app keeps its keychain-encrypted key beside the PEM path `pemFile` (src/main/ledger-key.ts). */
export function safeStorageKeyFile(pemFile: string): string {
  return pemFile.replace(/\.pem$/, '') + '.safestorage';
}

/**
 * The public key file beside a key (`<pemFile without .pem>.pub`: base64 of the raw Ed25519
 * public key), which the desktop app writes so that `npm run ledger -- verify` can check
 * signatures without the keychain. Another user cannot write it (0700 folder).
 */
export function publicKeyFile(pemFile: string): string {
  return pemFile.replace(/\.pem$/, '') + '.pub';
}

/** Write `data` to `file` atomically with mode 0600 (temporary file, fsync, rename). */
export function writePrivateFile(file: string, data: string | Buffer): void {
  const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
  const fd = openSync(tmp, 'wx', 0o600);
  try {
    writeSync(fd, typeof data === 'string' ? Buffer.from(data, 'utf8') : data);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, file);
}

/**
 * Check that `p` (a folder or file) is ours and closed to others: owned by this user, and
 * not readable or writable by group or others (`mask`). Windows has no POSIX modes: skipped.
 * @throws LedgerKeyError('key-unsafe').
 */
export function checkPrivate(p: string, what: string, mask = 0o077): void {
  if (process.platform === 'win32') return;
  const st = lstatSync(p);
  if (st.isSymbolicLink()) throw new LedgerKeyError('key-unsafe', `${what} ${p} is a symbolic link; refused`);
  const uid = process.getuid?.();
  if (uid !== undefined && st.uid !== uid) throw new LedgerKeyError('key-unsafe', `${what} ${p} belongs to another user (uid ${st.uid}); refused`);
  if ((st.mode & mask) !== 0) {
    throw new LedgerKeyError('key-unsafe', `${what} ${p} is open to other users (mode ${(st.mode & 0o777).toString(8)}); refused, not used to sign`);
  }
}

/** Create `dir` 0700 if missing (tightening a folder of ours that is open), then check it. */
export function ensurePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (process.platform !== 'win32') {
    const st = lstatSync(dir);
    if (st.isDirectory() && !st.isSymbolicLink() && st.uid === process.getuid?.() && (st.mode & 0o077) !== 0) chmodSync(dir, 0o700);
  }
  checkPrivate(dir, 'the key folder');
}

/**
 * The key as a 0600 PEM file outside the data folder. It keeps the key from another
 * user and from whoever gets only the data folder (a backup, a synced folder); a
 * program running as the person can read it and sign, which only the extension's
 * witness then catches (docs/ledger.md, "Threat model").
 */
export class FileLedgerKeyHolder implements LedgerKeyHolder {
  readonly description: string;

  /**
   * @param file    the key file (see defaultLedgerKeyFile).
   * @param dataDir the console's data folder: a key file inside it is refused.
   * @param opts.ignoreSafeStorageBlob for the desktop app's own fallback: do not refuse because of its blob.
   * @throws LedgerKeyError('key-location') when `file` is inside `dataDir`.
   */
  constructor(
    readonly file: string,
    dataDir: string,
    private readonly opts: { ignoreSafeStorageBlob?: boolean } = {},
  ) {
    if (isInside(path.resolve(file), real(dataDir)) || isInside(path.resolve(file), path.resolve(dataDir))) {
      throw new LedgerKeyError('key-location', `the ledger signing key must live outside the data folder (${dataDir}), not at ${file}`);
    }
    this.description = `a 0600 file outside the data folder, ${file} (readable by programs running as you; no keychain is used)`;
  }

  load(): LoadedLedgerKey {
    ensurePrivateDir(path.dirname(this.file));
    let pem: string | null = null;
    try {
      checkPrivate(this.file, 'the ledger signing key');
      pem = readFileSync(this.file, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
    if (pem !== null) {
      try {
        return { key: LedgerSigningKey.fromPkcs8(pem), created: false };
      } catch (e) {
        throw new LedgerKeyError('key-corrupt', `the ledger signing key ${this.file} cannot be read (${(e as Error).message}); it was left as it is`);
      }
    }
    // The desktop app keeps this data folder's key in the keychain: a second key would make
    // every checkpoint it signed look forged, so the web host signs nothing instead.
    const blob = safeStorageKeyFile(this.file);
    if (!this.opts.ignoreSafeStorageBlob && existsSync(blob)) {
      throw new LedgerKeyError('key-unavailable', `this data folder's signing key is in the desktop app's keychain (${blob}); the web host cannot use it, so it signs no checkpoint: run the desktop app to sign and verify`);
    }
    const key = LedgerSigningKey.generate();
    writePrivateFile(this.file, key.toPem());
    return { key, created: true };
  }
}
