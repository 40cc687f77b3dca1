/**
 * Opens better-sqlite3 databases in both worlds that run the console core:
 *
 * - plain Node (unit tests, the CLI, the loopback web host): the normal build
 *   in node_modules/better-sqlite3/build/Release, compiled for Node's ABI;
 * - Electron's main process (`process.versions.electron` is set): a second copy
 *   of the native module compiled for Electron's ABI, kept apart in
 *   `.electron-abi/<key>/better_sqlite3.node` (gitignored) and loaded through
 *   better-sqlite3's `nativeBinding` option.
 *
 * Keeping the two binaries apart is what lets `npm test` and `npm start` run in
 * either order on the same checkout with no rebuild step: neither ever
 * overwrites the other's file. scripts/electron-sqlite.mjs fetches or builds the
 * Electron copy (at `npm start` and packaging time); its key formula must match
 * `electronBindingKey` below (a unit test pins them together).
 */
import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';

const requireHere = createRequire(import.meta.url);

/** The folder, under a project root or the app's resources, that holds Electron-ABI binaries. */
export const ELECTRON_ABI_DIRNAME = '.electron-abi';

/**
 * Relative path of the Electron-ABI binary inside an `.electron-abi` folder:
 * `better-sqlite3-<version>/electron-<electronVersion>-<platform>-<arch>/better_sqlite3.node`.
 * Keyed by both versions, so upgrading either package never loads a stale binary.
 */
export function electronBindingKey(betterSqlite3Version: string, electronVersion: string, platform: string, arch: string): string {
  return path.join(`better-sqlite3-${betterSqlite3Version}`, `electron-${electronVersion}-${platform}-${arch}`, 'better_sqlite3.node');
}

/** What `chooseNativeBinding` looks at; all of it injectable so the choice is unit-tested without Electron. */
export interface BindingEnv {
  /** `process.versions`: `electron` is set only inside Electron. */
  versions: { electron?: string; node?: string; modules?: string };
  platform: string;
  arch: string;
  /** Version of the installed better-sqlite3 package. */
  betterSqlite3Version: string;
  /** `.electron-abi` folders to look in, in order of preference. */
  abiDirs: string[];
  /** File test (fs.existsSync in production). */
  exists: (file: string) => boolean;
}

/**
 * The binding decision:
 * - `node`: not in Electron; use better-sqlite3's own build (no `nativeBinding`);
 * - `electron`: in Electron and the Electron-ABI binary was found at `path`;
 * - `missing`: in Electron but no binary was found; `message` says what to run.
 *   Fail closed: loading Node's build inside Electron would crash with an ABI
 *   mismatch, so we never fall back to it.
 */
export type BindingChoice =
  | { kind: 'node' }
  | { kind: 'electron'; path: string }
  | { kind: 'missing'; tried: string[]; message: string };

/** Decide which native binary better-sqlite3 must load in `env` (pure; see BindingChoice). */
export function chooseNativeBinding(env: BindingEnv): BindingChoice {
  const electron = env.versions.electron;
  if (!electron) return { kind: 'node' };
  const key = electronBindingKey(env.betterSqlite3Version, electron, env.platform, env.arch);
  const tried: string[] = [];
  for (const dir of env.abiDirs) {
    const file = path.join(dir, key);
    tried.push(file);
    if (env.exists(file)) return { kind: 'electron', path: file };
  }
  return {
    kind: 'missing',
    tried,
    message:
      `better-sqlite3 ${env.betterSqlite3Version} has no binary for Electron ${electron} (${env.platform}-${env.arch}); ` +
      `run \`node scripts/electron-sqlite.mjs\` (npm start does this) to fetch or build it. Looked in: ${tried.join(', ') || '(no folders)'}`,
  };
}

/** Version of the installed better-sqlite3 package (read from its package.json). */
export function betterSqlite3Version(): string {
  return (requireHere('better-sqlite3/package.json') as { version: string }).version;
}

/**
 * The `.electron-abi` folders searched at run time, in order:
 * `opts.electronAbiDir`; `$ECHO_ELECTRON_ABI_DIR`; `<process.resourcesPath>/.electron-abi`
 * (a packaged app ships it as an extra resource, outside the asar archive,
 * because a native module cannot be loaded from inside one); the project root
 * that holds node_modules/better-sqlite3 (development checkout); the working directory.
 */
export function defaultAbiDirs(explicit?: string): string[] {
  const dirs: string[] = [];
  if (explicit) dirs.push(explicit);
  if (process.env.ECHO_ELECTRON_ABI_DIR) dirs.push(process.env.ECHO_ELECTRON_ABI_DIR);
  const resourcesPath = (process as { resourcesPath?: string }).resourcesPath;
  if (resourcesPath) dirs.push(path.join(resourcesPath, ELECTRON_ABI_DIRNAME));
  try {
    // node_modules/better-sqlite3/package.json -> project root
    const pkg = requireHere.resolve('better-sqlite3/package.json');
    dirs.push(path.join(path.dirname(pkg), '..', '..', ELECTRON_ABI_DIRNAME));
  } catch {
    /* not resolvable: the open below will fail with better-sqlite3's own message */
  }
  dirs.push(path.join(process.cwd(), ELECTRON_ABI_DIRNAME));
  return [...new Set(dirs.map((d) => path.resolve(d)))];
}

/** Thrown by `openDatabase` inside Electron when the Electron-ABI binary is missing. */
export class NativeBindingMissingError extends Error {
  readonly code = 'sqlite-binding-missing';
}

export interface OpenDatabaseOptions {
  /** Open read-only; the file must exist. */
  readonly?: boolean;
  /** Refuse to create the file when it does not exist (default false; implied by readonly). */
  fileMustExist?: boolean;
  /** Extra `.electron-abi` folder searched first (Electron only). */
  electronAbiDir?: string;
  /** Busy timeout in ms when another connection holds the write lock (default 5000). */
  timeoutMs?: number;
}

/**
 * Open a SQLite database with the native binding that fits this runtime
 * (see the file header and `chooseNativeBinding`).
 * @param file path of the database file (created unless readonly/fileMustExist).
 * @throws NativeBindingMissingError inside Electron when the Electron-ABI binary is absent;
 *   better-sqlite3's SqliteError for I/O or format errors.
 */
export function openDatabase(file: string, opts: OpenDatabaseOptions = {}): Database.Database {
  const nativeBinding = nativeBindingPath(opts.electronAbiDir);
  return new Database(file, {
    readonly: opts.readonly ?? false,
    fileMustExist: opts.fileMustExist ?? opts.readonly ?? false,
    timeout: opts.timeoutMs ?? 5000,
    ...(nativeBinding ? { nativeBinding } : {}),
  });
}

/**
 * The `nativeBinding` path better-sqlite3 must load in this runtime: undefined in
 * plain Node (its own build), the Electron-ABI binary inside Electron. Worker
 * threads that open the same file (parallel verify) pass it on, so they load the
 * binary the main thread loads.
 * @throws NativeBindingMissingError inside Electron when the Electron-ABI binary is absent.
 */
export function nativeBindingPath(electronAbiDir?: string): string | undefined {
  const choice = chooseNativeBinding({
    versions: process.versions,
    platform: process.platform,
    arch: process.arch,
    betterSqlite3Version: process.versions.electron ? betterSqlite3Version() : '',
    abiDirs: process.versions.electron ? defaultAbiDirs(electronAbiDir) : [],
    exists: existsSync,
  });
  if (choice.kind === 'missing') throw new NativeBindingMissingError(choice.message);
  return choice.kind === 'electron' ? choice.path : undefined;
}

/** Absolute path of the better-sqlite3 package's entry, for worker threads to `require` (they do not share our module graph). */
export function betterSqlite3Entry(): string {
  return requireHere.resolve('better-sqlite3');
}
