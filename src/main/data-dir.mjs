/**
 * Where the console keeps its data (ledger, settings, pairing secrets): the ONE
 * rule, used by the Electron host (src/main/index.ts), the loopback web host
 * (src/main/web/index.ts) and the stdio MCP command (bin/echo-console-mcp.mjs),
 * so that all three find the same console. test/unit/contracts.test.ts fails if
 * a second implementation appears.
 *
 * Plain ESM JavaScript (typed by data-dir.d.mts) on purpose: the stdio command
 * runs with `node` without a build and imports this file as it is.
 */
import { createHash } from 'node:crypto';
import { homedir } from 'node:os';
import path from 'node:path';

/** The folder name under the platform's config folder (Electron's userData for this package). */
export const DATA_DIR_NAME = 'echo-console';

/**
 * The console's data folder (absolute; not created here), first that applies:
 * - `$ECHO_CONSOLE_DATA_DIR` when set and non-empty (resolved against the cwd);
 * - macOS: `~/Library/Application Support/echo-console`;
 * - Windows: `%APPDATA%\echo-console`, or `~\AppData\Roaming\echo-console` when
 *   APPDATA is unset, empty or relative;
 * - Linux and other Unixes: `$XDG_CONFIG_HOME/echo-console`, or
 *   `~/.config/echo-console` when XDG_CONFIG_HOME is unset, empty or relative.
 *   XDG Base Directory Specification 0.8: "If $XDG_CONFIG_HOME is either not set
 *   or empty, a default equal to $HOME/.config should be used", and "All paths
 *   set in these environment variables must be absolute. If an implementation
 *   encounters a relative path in any of these variables it should consider the
 *   path invalid and ignore it."
 * @param {Record<string, string | undefined>} [env] default `process.env`.
 * @param {string} [platform] a `process.platform` value; default the running one.
 * @param {string} [home] the user's home folder; default `os.homedir()`.
 * @returns {string}
 */
export function resolveDataDir(env = process.env, platform = process.platform, home = homedir()) {
  if (env.ECHO_CONSOLE_DATA_DIR) return path.resolve(env.ECHO_CONSOLE_DATA_DIR);
  if (platform === 'darwin') return path.posix.join(home, 'Library', 'Application Support', DATA_DIR_NAME);
  if (platform === 'win32') return path.win32.join(absoluteOr(path.win32, env.APPDATA, path.win32.join(home, 'AppData', 'Roaming')), DATA_DIR_NAME);
  return path.posix.join(absoluteOr(path.posix, env.XDG_CONFIG_HOME, path.posix.join(home, '.config')), DATA_DIR_NAME);
}

/** `value` when it is a non-empty absolute path for `flavour`, else `fallback`. */
function absoluteOr(flavour, value, fallback) {
  return typeof value === 'string' && value !== '' && flavour.isAbsolute(value) ? value : fallback;
}

/**
 * The console's private agent socket for a data folder: the ONE rule, used by the
 * console (to listen, src/main/core/index.ts) and by the stdio command (to connect,
 * bin/echo-console-mcp.mjs), so the command never needs a URL or a port (issue 9 item 2).
 * - Unix: `<dataDir>/run/agent.sock` (the folder is made 0700, the socket 0600, both owned by the user);
 * - Windows: the named pipe `\\.\pipe\echo-console-agent-<first 16 hex of SHA-256(dataDir)>`.
 * @param {string} dataDir the console's data folder (absolute).
 * @param {string} [platform] a `process.platform` value; default the running one.
 * @returns {string}
 */
export function agentSocketPath(dataDir, platform = process.platform) {
  if (platform === 'win32') return `\\\\.\\pipe\\echo-console-agent-${createHash('sha256').update(dataDir).digest('hex').slice(0, 16)}`;
  return path.posix.join(dataDir, 'run', 'agent.sock');
}
