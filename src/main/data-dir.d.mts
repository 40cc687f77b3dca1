/** Types of data-dir.mjs (plain JS so that bin/echo-console-mcp.mjs can import it without a build). */

/** The folder name under the platform's config folder. */
export declare const DATA_DIR_NAME: 'echo-console';

/**
 * The console's data folder (absolute; not created here): `$ECHO_CONSOLE_DATA_DIR`,
 * else the platform's config folder + `echo-console`; an empty or relative
 * `XDG_CONFIG_HOME` (or `APPDATA`) is ignored (XDG Base Directory Specification).
 */
export declare function resolveDataDir(env?: Record<string, string | undefined>, platform?: NodeJS.Platform | string, home?: string): string;

/**
 * The console's private agent socket for a data folder (the stdio command connects here,
 * the console listens here): `<dataDir>/run/agent.sock` on Unix, a named pipe on Windows.
 */
export declare function agentSocketPath(dataDir: string, platform?: NodeJS.Platform | string): string;
