/**
 * Who may write the console's data folder (issue 9 item 8). The folder holds
 * the MCP token, the pairing secrets, the ledger and the native-host launcher
 * that Chrome runs as the person: a folder another user can write lets them
 * swap the launcher (code execution as the person the next time Chrome starts
 * the host) or rewrite the ledger. So, on Linux and macOS:
 *
 *  - the folder (and the launcher folder inside it) must be a real directory
 *    (not a symbolic link) owned by the console's user; one owned by anyone
 *    else is refused with a clear error (`DataFolderError`), never used;
 *  - a folder of ours that group or others may write or read is repaired to
 *    0700, and the repair is reported (the caller logs it);
 *  - its parent must not let another user replace it: owned by the user or
 *    root, and not writable by group or others unless sticky (`/tmp`);
 *  - files the console keeps there are 0600 (`tightenFile`).
 * Checked at every start, and before every write of the launcher and the
 * host manifests (src/main/core/bridge/host-manifest.ts).
 *
 * Windows has no POSIX modes: the folder is under the user's own profile
 * (%APPDATA%), whose ACL already excludes other users; nothing is checked there.
 */
import { chmodSync, existsSync, lstatSync, mkdirSync, statSync } from 'node:fs';
import path from 'node:path';

/** A data folder the console must not use. `message` says what is wrong and what to do. */
export class DataFolderError extends Error {
  readonly code = 'data-folder-unsafe';
}

/** Inputs of the checks, injectable so tests can play another user or platform. */
export interface FolderCheckEnv {
  /** Default `process.getuid()`. */
  uid?: number;
  /** Default `process.platform`. */
  platform?: NodeJS.Platform;
}

const S_ISVTX = 0o1000;

/**
 * Create `dir` (0700) if missing, then check it as above.
 * @returns the repairs made (e.g. "mode 0755 → 0700"), for the log; [] when none.
 * @throws DataFolderError when the folder, or its parent, is not safe to use.
 */
export function secureFolder(dir: string, env: FolderCheckEnv = {}): string[] {
  const platform = env.platform ?? process.platform;
  if (platform === 'win32') return [];
  const uid = env.uid ?? process.getuid?.() ?? -1;
  const repairs: string[] = [];
  if (!existsSync(dir)) mkdirSync(dir, { recursive: true, mode: 0o700 });
  const st = lstatSync(dir);
  if (st.isSymbolicLink()) throw new DataFolderError(`${dir} is a symbolic link; Echo Console keeps its secrets only in a real folder of its own. Remove the link, or set ECHO_CONSOLE_DATA_DIR to another folder.`);
  if (!st.isDirectory()) throw new DataFolderError(`${dir} is not a folder. Move it away, or set ECHO_CONSOLE_DATA_DIR to another folder.`);
  if (st.uid !== uid) {
    throw new DataFolderError(
      `${dir} belongs to another user (uid ${st.uid}, you are ${uid}), who could change what Echo Console runs and records. ` +
        'Echo Console will not use it: remove it, or set ECHO_CONSOLE_DATA_DIR to a folder of your own.',
    );
  }
  if ((st.mode & 0o077) !== 0) {
    chmodSync(dir, 0o700);
    repairs.push(`${dir}: mode ${(st.mode & 0o777).toString(8).padStart(4, '0')} → 0700 (other users could read or write it)`);
  }
  const parent = path.dirname(dir);
  if (parent !== dir) {
    const p = statSync(parent);
    const othersWrite = (p.mode & 0o022) !== 0 && (p.mode & S_ISVTX) === 0;
    if ((p.uid !== uid && p.uid !== 0) || othersWrite) {
      throw new DataFolderError(
        `${parent}, which holds ${path.basename(dir)}, can be changed by another user (owner uid ${p.uid}, mode ${(p.mode & 0o7777).toString(8)}), ` +
          'who could replace the whole folder. Echo Console will not use it: set ECHO_CONSOLE_DATA_DIR to a folder inside your home folder.',
      );
    }
  }
  return repairs;
}

/**
 * Make a file the console keeps in its folder 0600 (no-op when missing, and on Windows).
 * @returns a repair note, or null when nothing changed.
 * @throws DataFolderError when the file belongs to another user.
 */
export function tightenFile(file: string, env: FolderCheckEnv = {}): string | null {
  const platform = env.platform ?? process.platform;
  if (platform === 'win32' || !existsSync(file)) return null;
  const uid = env.uid ?? process.getuid?.() ?? -1;
  const st = lstatSync(file);
  if (st.uid !== uid || !st.isFile()) throw new DataFolderError(`${file} is not a file of yours (owner uid ${st.uid}); Echo Console will not use it. Remove it and start again.`);
  if ((st.mode & 0o077) === 0) return null;
  chmodSync(file, 0o600);
  return `${file}: mode ${(st.mode & 0o777).toString(8).padStart(4, '0')} → 0600`;
}
