/**
 * Where the console keeps its data (ledger, settings, pairing secrets), shared
 * by the Electron host and the loopback web host so that both run the same
 * console: `$ECHO_CONSOLE_DATA_DIR` when set, else `~/.config/echo-console` on
 * Linux (`$XDG_CONFIG_HOME` honoured), `~/Library/Application Support/echo-console`
 * on macOS, `%APPDATA%\echo-console` on Windows — the folder Electron's
 * `app.getPath('userData')` names for this package. Plain Node.
 */
import { homedir } from 'node:os';
import path from 'node:path';

/** The console's data folder (absolute; not created here). */
export function resolveDataDir(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string {
  if (env.ECHO_CONSOLE_DATA_DIR) return path.resolve(env.ECHO_CONSOLE_DATA_DIR);
  const home = homedir();
  if (platform === 'darwin') return path.join(home, 'Library', 'Application Support', 'echo-console');
  if (platform === 'win32') return path.join(env.APPDATA ?? path.join(home, 'AppData', 'Roaming'), 'echo-console');
  return path.join(env.XDG_CONFIG_HOME ?? path.join(home, '.config'), 'echo-console');
}
