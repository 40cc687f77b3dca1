/**
 * Where the console listens for its native host: one place, used by the
 * console's bridge (to listen) and by the native host (to connect), so the two
 * can never disagree about the default. The launcher the console writes also
 * passes the path explicitly (`--socket`), because Chrome may start the host
 * with an environment that differs from the console's.
 *
 * - Linux and other Unixes: `$XDG_RUNTIME_DIR/echo-console/link.sock` (a per-user
 *   tmpfs, 0700 by spec), else `~/.config/echo-console/run/link.sock`.
 * - macOS: `~/Library/Application Support/Echo Console/run/link.sock`.
 * - Windows: the named pipe `\\.\pipe\echo-console-<user>`.
 * The folder holding a Unix socket is created 0700 and the socket chmod 0600
 * by the bridge; only the user can reach it.
 */
import { homedir, userInfo } from 'node:os';
import path from 'node:path';

/** Environment variable that overrides the default socket path (tests, unusual setups). */
export const SOCKET_ENV = 'ECHO_CONSOLE_SOCKET';

/** Inputs of `defaultSocketPath`, injectable so tests can compute every platform's answer. */
export interface SocketPathEnv {
  platform?: NodeJS.Platform;
  env?: Record<string, string | undefined>;
  home?: string;
  username?: string;
}

/** The default socket (or named pipe) path for this user on this platform. */
export function defaultSocketPath(o: SocketPathEnv = {}): string {
  const platform = o.platform ?? process.platform;
  const env = o.env ?? process.env;
  if (platform === 'win32') {
    const user = (o.username ?? safeUsername()).replace(/[^A-Za-z0-9_.-]/g, '_') || 'user';
    return `\\\\.\\pipe\\echo-console-${user}`;
  }
  const p = path.posix;
  const home = o.home ?? homedir();
  if (platform === 'darwin') return p.join(home, 'Library', 'Application Support', 'Echo Console', 'run', 'link.sock');
  const xdg = env.XDG_RUNTIME_DIR;
  if (xdg && p.isAbsolute(xdg)) return p.join(xdg, 'echo-console', 'link.sock');
  return p.join(home, '.config', 'echo-console', 'run', 'link.sock');
}

/** `--socket` wins, then $ECHO_CONSOLE_SOCKET, then the platform default. */
export function resolveSocketPath(fromArgs: string | undefined, o: SocketPathEnv = {}): string {
  const env = o.env ?? process.env;
  return fromArgs || env[SOCKET_ENV] || defaultSocketPath(o);
}

/** True when `p` names a Windows named pipe rather than a file-system socket. */
export function isNamedPipe(p: string): boolean {
  return p.startsWith('\\\\.\\pipe\\') || p.startsWith('\\\\?\\pipe\\');
}

function safeUsername(): string {
  try {
    return userInfo().username;
  } catch {
    return process.env.USERNAME ?? process.env.USER ?? 'user';
  }
}
