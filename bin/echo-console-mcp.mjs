#!/usr/bin/env node
/**
 * echo-console-mcp: the stdio MCP command for clients that launch servers
 * (Claude Desktop, Cursor, ...). It does not serve anything itself: it relays
 * MCP messages (newline-delimited JSON-RPC, the MCP stdio framing) between stdio
 * (the client) and the RUNNING Echo Console, unchanged, over the console's
 * PRIVATE AGENT SOCKET, never over TCP (issue 9 item 2).
 *
 *   echo-console-mcp [--data-dir DIR] [--token-file FILE]
 *
 * Why never TCP: a port is first come, first served for every local user. After a
 * crash, whoever bound the console's old port (or `[::1]` on the same port, where
 * `localhost` may lead) would have received the token. The agent socket is a Unix
 * socket (0600) in a folder (0700) that only this user owns, or a named pipe on
 * Windows; before sending anything this command checks, with lstat, that the
 * folder and the socket belong to this user and that no one else may open them.
 *
 * Where it connects: agentSocketPath(<data dir>) (src/main/data-dir.mjs, the rule
 * the console listens by), data dir from --data-dir, else the console's own rule
 * ($ECHO_CONSOLE_DATA_DIR, else the platform default).
 * The agent's token (made and named by the person in the console, one per agent):
 * $ECHO_CONSOLE_TOKEN, else --token-file FILE (a file only this user can read).
 * `--url` and $ECHO_CONSOLE_URL of older versions are ignored, with a warning.
 *
 * If the console is not running: a clear message on stderr and exit code 1.
 * stdout carries only MCP messages; everything else goes to stderr.
 *
 * Plain ESM JavaScript on purpose: it runs with `node` after `npm ci`, no build.
 */
import { lstatSync, readFileSync, realpathSync } from 'node:fs';
import { connect } from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { agentSocketPath, resolveDataDir } from '../src/main/data-dir.mjs';

// The one data-dir rule of the console (the Electron and web hosts call it too);
// exported again so a unit test can check it is the very same function.
export { agentSocketPath, resolveDataDir };

/** Longest answer line to the hello (bytes). */
const MAX_HELLO_ANSWER_BYTES = 4096;

/**
 * Parse `--data-dir DIR`, `--token-file FILE`, and the ignored `--url URL` (also `--x=value`).
 * Unknown flags are an error.
 * @returns {{dataDir?: string, tokenFile?: string, url?: string, help?: true}}
 */
export function parseArgs(argv) {
  const out = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const m = /^--(data-dir|url|token-file)(?:=(.*))?$/.exec(a);
    if (a === '--help' || a === '-h') return { help: true };
    if (!m) throw new Error(`unknown argument ${JSON.stringify(a)}`);
    const value = m[2] ?? argv[++i];
    if (value === undefined) throw new Error(`${a} needs a value`);
    out[{ 'data-dir': 'dataDir', url: 'url', 'token-file': 'tokenFile' }[m[1]]] = value;
  }
  return out;
}

/**
 * Refuse a path that another user owns or may write or open: the socket and its folder
 * must be this user's, with no group or other permission bits (Unix only; Windows pipes
 * are not files).
 * @param {string} p
 * @param {'socket'|'folder'|'file'} kind
 * @param {{uid?: number}} [o] the expected owner (default: this process's uid).
 * @throws Error naming the path and what is wrong; `code` 'ENOENT' when it does not exist.
 */
export function checkPrivate(p, kind, o = {}) {
  const st = lstatSync(p);
  const uid = o.uid ?? (typeof process.getuid === 'function' ? process.getuid() : undefined);
  const isKind = kind === 'socket' ? st.isSocket() : kind === 'folder' ? st.isDirectory() : st.isFile();
  if (!isKind) throw new Error(`${p} is not a ${kind} (a symlink or something else): refusing to use it`);
  if (uid !== undefined && st.uid !== uid) throw new Error(`${p} belongs to another user (uid ${st.uid}): refusing to send the token there`);
  if ((st.mode & 0o077) !== 0) throw new Error(`${p} can be opened by other users (mode ${(st.mode & 0o777).toString(8)}): refusing to send the token there`);
}

/**
 * Work out the socket and the token.
 * @returns {{socketPath: string, token: string, warnings: string[]}}
 * @throws Error with a message for people when something is missing or unsafe.
 */
export function resolveTarget(args, env = process.env, platform = process.platform) {
  const warnings = [];
  if (args.url || env.ECHO_CONSOLE_URL) {
    warnings.push('--url / ECHO_CONSOLE_URL are ignored: this command reaches the console over its private socket, never over TCP.');
  }
  const dataDir = args.dataDir ? path.resolve(args.dataDir) : resolveDataDir(env);
  const socketPath = agentSocketPath(dataDir, platform);
  let token = env.ECHO_CONSOLE_TOKEN || '';
  if (!token && args.tokenFile) {
    const file = path.resolve(args.tokenFile);
    if (platform !== 'win32') checkPrivate(file, 'file');
    token = readFileSync(file, 'utf8').trim();
  }
  if (!token) {
    throw new Error(
      'no agent token: in the Echo Console, Connection → Agent tokens → Create (one per agent), then give it to this command as ECHO_CONSOLE_TOKEN (or --token-file FILE).',
    );
  }
  if (!/^[A-Za-z0-9._~+/=-]{1,512}$/.test(token)) throw new Error('the agent token holds characters no token has: copy it again from the console');
  return { socketPath, token, warnings };
}

/**
 * Connect to the console's agent socket, after checking who owns it, and say the hello.
 * @returns {Promise<{socket: import('node:net').Socket, agent: {id: string, name: string}}>}
 * @throws Error: not running (no socket, nobody listening), unsafe socket, or refused token.
 */
export async function connectConsole(socketPath, token, platform = process.platform) {
  if (platform !== 'win32') {
    try {
      checkPrivate(path.dirname(socketPath), 'folder');
      checkPrivate(socketPath, 'socket');
    } catch (e) {
      if (e && e.code === 'ENOENT') throw new Error(`Echo Console is not running (no agent socket at ${socketPath}). Start the console, then try again.`);
      throw e;
    }
  }
  const socket = await new Promise((resolve, reject) => {
    const s = connect(socketPath);
    s.once('connect', () => resolve(s));
    s.once('error', (e) =>
      reject(
        e && (e.code === 'ECONNREFUSED' || e.code === 'ENOENT')
          ? new Error(`Echo Console is not running (nobody answers at ${socketPath}). Start the console, then try again.`)
          : e,
      ),
    );
  });
  socket.write(`${JSON.stringify({ echoConsoleAgent: 1, token })}\n`);
  const answer = await new Promise((resolve, reject) => {
    let buf = Buffer.alloc(0);
    const onData = (chunk) => {
      buf = Buffer.concat([buf, chunk]);
      const nl = buf.indexOf(0x0a);
      if (nl < 0) {
        if (buf.length > MAX_HELLO_ANSWER_BYTES) done(new Error('the console answered the hello with too long a line'));
        return;
      }
      socket.off('data', onData);
      socket.pause();
      const rest = buf.subarray(nl + 1);
      if (rest.length) socket.unshift(rest);
      try {
        resolve(JSON.parse(buf.subarray(0, nl).toString('utf8')));
      } catch {
        done(new Error('the console answered the hello with something that is not JSON'));
      }
      socket.off('close', onClose);
    };
    const onClose = () => done(new Error('the console closed the connection before answering'));
    const done = (e) => {
      socket.off('data', onData);
      socket.destroy();
      reject(e);
    };
    socket.on('data', onData);
    socket.once('close', onClose);
  });
  if (!answer || answer.ok !== true) {
    socket.destroy();
    const msg = answer?.error?.message ?? 'the console refused the connection';
    throw new Error(`${msg}${answer?.error?.code === 'unauthorized' ? ' (was the token revoked?)' : ''}`);
  }
  return { socket, agent: answer.agent };
}

function fail(message) {
  process.stderr.write(`echo-console-mcp: ${message}\n`);
  process.exit(1);
}

async function main() {
  let args;
  try {
    args = parseArgs(process.argv.slice(2));
  } catch (e) {
    fail(`${e.message}. Usage: echo-console-mcp [--data-dir DIR] [--token-file FILE]`);
  }
  if (args.help) {
    process.stderr.write('Usage: echo-console-mcp [--data-dir DIR] [--token-file FILE]\nRelays MCP over stdio to the running Echo Console (its private socket). The token: $ECHO_CONSOLE_TOKEN or --token-file.\n');
    process.exit(0);
  }
  let target;
  try {
    target = resolveTarget(args);
  } catch (e) {
    fail(e.message);
  }
  for (const w of target.warnings) process.stderr.write(`echo-console-mcp: ${w}\n`);
  let conn;
  try {
    conn = await connectConsole(target.socketPath, target.token);
  } catch (e) {
    fail(e instanceof Error ? e.message : String(e));
  }
  const { socket } = conn;
  // From here on a byte relay: both sides speak newline-delimited JSON-RPC (MCP stdio framing).
  process.stdin.pipe(socket);
  socket.pipe(process.stdout);
  socket.resume();
  socket.on('error', (e) => process.stderr.write(`echo-console-mcp: ${e.message}\n`));
  socket.on('close', () => {
    // The console went away (stopped, or revoked the token): end, so the client sees the server stop.
    if (!process.stdin.readableEnded) process.stderr.write('echo-console-mcp: the console closed the connection (stopped, or the token was revoked).\n');
    process.exit(process.stdin.readableEnded ? 0 : 1);
  });
  process.stdin.on('end', () => socket.end());
}

/** Whether this module is the program (also through an npm bin symlink), not an import. */
function isMain() {
  try {
    return import.meta.url === pathToFileURL(realpathSync(process.argv[1] ?? '')).href;
  } catch {
    return false;
  }
}

// Run only as a command (the unit test imports the helpers).
if (isMain()) {
  main().catch((e) => fail(e instanceof Error ? e.message : String(e)));
}
