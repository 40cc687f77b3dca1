/**
 * The console's private local socket: a Unix domain socket in a folder only
 * this user can open (0700, socket 0600), or a named pipe on Windows. No TCP
 * port is ever opened for the extension (docs/design.md, "The link between console and extension").
 *
 * Start-up rules:
 *   - the folder is created 0700; an existing one is tightened to 0700, and
 *     refused if another user owns it;
 *   - a socket file left by a crashed console (nobody accepts on it) is removed;
 *   - a socket where a live console accepts makes start fail with
 *     `console-already-running`: two consoles never share one extension;
 *   - anything else at that path (a regular file, a folder) is left alone and
 *     start fails with `socket-path-occupied`.
 */
import { promises as fs } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { err, ok, type Result } from '../../../shared/result';
import { execFileSync } from 'node:child_process';
import { isNamedPipe } from '../../../native-host/socket-path';
import { ownerOnlyPipeAclScript } from '../../../native-host/pipe-acl';

/** sun_path is 104 bytes on macOS and 108 on Linux, including the terminating NUL. */
export const MAX_UNIX_SOCKET_PATH_BYTES = 103;

/** True when something accepts connections at `socketPath` (within `timeoutMs`). */
export function probeSocket(socketPath: string, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.createConnection(socketPath);
    const done = (live: boolean): void => {
      clearTimeout(t);
      s.destroy();
      resolve(live);
    };
    const t = setTimeout(() => done(true), timeoutMs); // a hung listener is still someone's
    s.once('connect', () => done(true));
    s.once('error', () => done(false));
  });
}

async function preparePrivateDir(dir: string): Promise<Result<null>> {
  try {
    await fs.mkdir(dir, { recursive: true, mode: 0o700 });
    const st = await fs.lstat(dir);
    if (!st.isDirectory()) return err('socket-dir-insecure', `${dir} is not a folder`);
    if (typeof process.getuid === 'function' && st.uid !== process.getuid()) {
      return err('socket-dir-insecure', `${dir} belongs to another user (uid ${st.uid}); refusing to listen there`);
    }
    if ((st.mode & 0o077) !== 0) await fs.chmod(dir, 0o700);
    return ok(null);
  } catch (e) {
    return err('socket-dir-insecure', `cannot prepare ${dir}: ${(e as Error).message}`);
  }
}

/**
 * Listen on `socketPath` with the rules above.
 * @returns the listening server, or `{ok:false}` with code `console-already-running`,
 *   `socket-path-occupied`, `socket-path-too-long`, `socket-dir-insecure` or `listen-failed`.
 */
export async function listenPrivate(socketPath: string, onConnection: (s: net.Socket) => void): Promise<Result<net.Server>> {
  const pipe = isNamedPipe(socketPath);
  if (!pipe) {
    if (Buffer.byteLength(socketPath) > MAX_UNIX_SOCKET_PATH_BYTES) {
      return err('socket-path-too-long', `socket path is ${Buffer.byteLength(socketPath)} bytes; the OS limit is ${MAX_UNIX_SOCKET_PATH_BYTES}: ${socketPath}`);
    }
    const dir = await preparePrivateDir(path.dirname(socketPath));
    if (!dir.ok) return dir;
    let st: Awaited<ReturnType<typeof fs.lstat>> | null = null;
    try {
      st = await fs.lstat(socketPath);
    } catch {
      st = null;
    }
    if (st) {
      if (!st.isSocket()) return err('socket-path-occupied', `${socketPath} exists and is not a socket; remove it or choose another path`);
      if (await probeSocket(socketPath)) return err('console-already-running', `another Echo Console is already listening on ${socketPath}`);
      await fs.unlink(socketPath).catch(() => {});
    }
  }
  const server = net.createServer(onConnection);
  const listening = await new Promise<Result<null>>((resolve) => {
    server.once('error', (e: NodeJS.ErrnoException) =>
      resolve(
        e.code === 'EADDRINUSE'
          ? err('console-already-running', `another Echo Console is already listening on ${socketPath}`)
          : err('listen-failed', `cannot listen on ${socketPath}: ${e.message}`),
      ),
    );
    server.listen(socketPath, () => resolve(ok(null)));
  });
  if (!listening.ok) return listening;
  if (pipe && process.platform === 'win32') {
    // Owner-only DACL (issue 9 item 1; the host checks it, pipe-acl.ts). Fails closed: a pipe
    // other users may open is not what the host will accept, so say so at start.
    try {
      execFileSync('powershell.exe', ['-NoProfile', '-NonInteractive', '-Command', ownerOnlyPipeAclScript(socketPath)], { timeout: 15_000, windowsHide: true, stdio: ['ignore', 'ignore', 'pipe'] });
    } catch (e) {
      server.close();
      return err('listen-failed', `cannot restrict the pipe ${socketPath} to this user: ${(e as Error).message.split('\n')[0]}`);
    }
  }
  if (!pipe) {
    try {
      await fs.chmod(socketPath, 0o600);
    } catch (e) {
      server.close();
      return err('listen-failed', `cannot restrict ${socketPath} to this user: ${(e as Error).message}`);
    }
  }
  return ok(server);
}
