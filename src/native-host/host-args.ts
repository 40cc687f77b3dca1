/**
 * The native host's command line and exit codes, apart from host.ts (which
 * starts relaying as soon as it is loaded) so tests and the launcher writer
 * can use them.
 */

/** Reported in host-hello. */
export const HOST_VERSION = '0.1.0';

/**
 * Exit codes: 0 clean close, 1 protocol/frame error, 2 console not running, 3 other socket error,
 * 4 the socket is not served by this user's console (owner, mode or peer uid; peer-check.ts), 64 usage.
 */
export const HOST_EXIT = { ok: 0, frame: 1, consoleNotRunning: 2, socketError: 3, consoleUntrusted: 4, usage: 64 } as const;

/** Parsed host arguments. */
export interface HostArgs {
  callerOrigin: string | null;
  socket: string | undefined;
}

/** Read Chrome's origin argument and our `--socket` option from argv (without node and script). */
export function parseHostArgs(args: readonly string[]): HostArgs {
  let callerOrigin: string | null = null;
  let socket: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === '--socket') socket = args[++i];
    else if (a.startsWith('--socket=')) socket = a.slice('--socket='.length);
    else if (callerOrigin === null && a.startsWith('chrome-extension://')) callerOrigin = a;
  }
  return { callerOrigin, socket };
}
