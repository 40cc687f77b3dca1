/**
 * The native messaging host: a dumb, bounded relay between Chrome and the
 * running console. Chrome starts it (through the launcher the console wrote,
 * src/main/core/bridge/host-manifest.ts) when the extension calls
 * `chrome.runtime.connectNative`, with the caller's origin
 * `chrome-extension://ID/` as an argument (developer.chrome.com/docs/extensions/
 * develop/concepts/native-messaging, "Native messaging protocol"; on Windows a
 * `--parent-window=N` argument may follow).
 *
 * What it does:
 *   1. connects to the console's local socket (`--socket PATH`, else
 *      $ECHO_CONSOLE_SOCKET, else the default of socket-path.ts);
 *   2. if that fails, writes ONE `host-error{code:'console-not-running'}` frame
 *      to stdout and exits 2 (3 for any other socket error);
 *   3. checks who serves the socket before relaying anything (peer-check.ts,
 *      issue 9 item 1): the socket and its folder must be this user's and
 *      closed to others (lstat), and on Linux every process holding the
 *      socket must run as this user (/proc/net/unix and /proc/<pid>/fd); if
 *      not, ONE `host-error{code:'console-untrusted'}` frame and exit 4. A
 *      process of the SAME user passes these checks: only the person's
 *      confirmation in the popup stops it;
 *   4. sends `host-hello{callerOrigin, hostVersion, pid}` to the console: the
 *      console decides whether that origin is its extension;
 *   5. relays frames both ways unchanged, refusing any frame over 1 MiB
 *      (Chrome's cap on host→browser messages; we apply it both ways) with a
 *      `host-error{code:'frame-too-large'}` and exit 1;
 *   6. exits when stdin closes (Chrome disconnected the port) or the socket
 *      closes (the console dropped the link).
 * It never interprets messages: pairing, auth and validation are the
 * console's and the extension's. stdout carries frames only; diagnostics go
 * to stderr, which Chrome shows in its own log.
 */
import net from 'node:net';
import { encodeFrame, encodePayload, FrameDecoder } from '../shared/framing';
import { LIMITS } from '../shared/limits';
import type { HostToConsole, HostToExtension } from '../shared/protocol';
import { HOST_EXIT, HOST_VERSION, parseHostArgs } from './host-args';
import { execFileSync } from 'node:child_process';
import { checkSocketFiles, checkSocketPeer, realProbe, type PeerProblem } from './peer-check';
import { checkPipe } from './pipe-acl';
import { isNamedPipe, resolveSocketPath } from './socket-path';

function log(msg: string): void {
  process.stderr.write(`echo-console native host [${process.pid}]: ${msg}\n`);
}

let exiting = false;
/** Write a last frame (if any) to stdout, then exit once it is flushed. */
function finish(code: number, last?: HostToExtension): void {
  if (exiting) return;
  exiting = true;
  const done = (): void => process.exit(code);
  if (!last) return done();
  try {
    process.stdout.write(encodeFrame(last), done);
  } catch {
    done();
  }
  // Chrome may have closed our stdout already; do not hang on a write that never completes.
  setTimeout(done, 2000).unref();
}

function main(): void {
  const args = parseHostArgs(process.argv.slice(2));
  if (!args.callerOrigin) {
    log('no chrome-extension:// origin argument: this program is started by Chrome (native messaging), not by hand');
    process.exit(HOST_EXIT.usage);
  }
  const socketPath = resolveSocketPath(args.socket);
  const unix = !isNamedPipe(socketPath) && process.platform !== 'win32';
  const refuse = (p: PeerProblem): void => {
    log(p.message);
    finish(HOST_EXIT.consoleUntrusted, { type: 'host-error', code: p.code, message: p.message });
  };
  const probe = realProbe();
  if (unix) {
    // Owner and mode before connecting: never talk to a socket another user could have made.
    const files = checkSocketFiles(socketPath, probe);
    if (files !== null && files !== 'missing') return refuse(files);
  }
  if (isNamedPipe(socketPath) && process.platform === 'win32') {
    // The pipe must carry the owner-only DACL the console gives it (pipe-acl.ts); fail closed.
    const why = checkPipe(socketPath, (script) =>
      execFileSync('powershell.exe', ['-NoProfile', '-NonInteractive', '-Command', script], { encoding: 'utf8', timeout: 15_000, windowsHide: true, stdio: ['ignore', 'pipe', 'pipe'] }),
    );
    if (why && !/cannot find|not found|does not exist|ENOENT/i.test(why)) return refuse({ code: 'console-untrusted', message: `Not trusted: ${why}.` });
  }
  const sock = net.createConnection(socketPath);
  let connected = false;
  // Chrome may terminate the host when the port disconnects: flush what we relayed first.
  process.once('SIGTERM', () => {
    sock.end();
    setTimeout(() => process.exit(HOST_EXIT.ok), 500).unref();
  });

  sock.once('connect', () => {
    connected = true;
    // Who accepted us: on Linux, every holder of the socket must run as this user.
    const peer = unix && process.platform === 'linux' ? checkSocketPeer(socketPath, probe) : null;
    if (peer) {
      sock.destroy();
      return refuse(peer);
    }
    const hello: HostToConsole = { type: 'host-hello', callerOrigin: args.callerOrigin as string, hostVersion: HOST_VERSION, pid: process.pid };
    sock.write(encodeFrame(hello));
    relay(sock);
  });

  sock.on('error', (e: NodeJS.ErrnoException) => {
    if (!connected) {
      const notRunning = e.code === 'ENOENT' || e.code === 'ECONNREFUSED' || e.code === 'ENOTDIR';
      log(`cannot reach the console at ${socketPath}: ${e.code ?? e.message}`);
      finish(notRunning ? HOST_EXIT.consoleNotRunning : HOST_EXIT.socketError, {
        type: 'host-error',
        code: notRunning ? 'console-not-running' : 'socket-error',
        message: notRunning
          ? 'Echo Console is not running. Start the Echo Console app, then try again.'
          : `The native host could not reach Echo Console (${e.code ?? 'error'}).`,
      });
      return;
    }
    log(`socket error: ${e.code ?? e.message}`);
    finish(HOST_EXIT.socketError, { type: 'host-error', code: 'socket-error', message: `The link to Echo Console failed (${e.code ?? 'error'}).` });
  });
}

function relay(sock: net.Socket): void {
  const fromChrome = new FrameDecoder(LIMITS.maxMessageBytes);
  const fromConsole = new FrameDecoder(LIMITS.maxMessageBytes);

  process.stdin.on('data', (chunk: Buffer) => {
    for (const f of fromChrome.pushRaw(chunk)) {
      if (!f.ok) {
        log(`from Chrome: ${f.error.message}`);
        sock.destroy();
        return finish(HOST_EXIT.frame, { type: 'host-error', code: 'frame-too-large', message: f.error.message });
      }
      // Backpressure: stop reading Chrome while the console is slow to drain.
      if (!sock.write(encodePayload(f.payload))) {
        process.stdin.pause();
        sock.once('drain', () => process.stdin.resume());
      }
    }
  });
  process.stdin.on('end', () => {
    // Chrome disconnected the port (or quit): deliver what we relayed (e.g. a last `unpair`), then go.
    sock.end(() => finish(HOST_EXIT.ok));
    setTimeout(() => finish(HOST_EXIT.ok), 1000).unref();
  });

  sock.on('data', (chunk: Buffer) => {
    for (const f of fromConsole.pushRaw(chunk)) {
      if (!f.ok) {
        // Chrome would kill us for a frame over 1 MB; tell the extension why instead.
        log(`from the console: ${f.error.message}`);
        sock.destroy();
        return finish(HOST_EXIT.frame, { type: 'host-error', code: 'frame-too-large', message: f.error.message });
      }
      if (!process.stdout.write(encodePayload(f.payload, LIMITS.maxMessageBytes))) {
        sock.pause();
        process.stdout.once('drain', () => sock.resume());
      }
    }
  });
  sock.on('close', () => {
    // The console closed the link: let stdout drain, then go.
    process.stdout.write(new Uint8Array(0), () => finish(HOST_EXIT.ok));
  });
  process.stdout.on('error', () => {
    // EPIPE: Chrome is gone.
    sock.destroy();
    finish(HOST_EXIT.ok);
  });
}

main();
