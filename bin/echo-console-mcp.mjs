#!/usr/bin/env node
/**
 * echo-console-mcp: the stdio MCP command for clients that launch servers
 * (Claude Desktop, Cursor, ...). It does not serve anything itself: it relays
 * MCP messages between stdio (the client) and the RUNNING Echo Console's
 * Streamable HTTP endpoint, unchanged, with the console's bearer token.
 *
 *   echo-console-mcp [--data-dir DIR] [--url URL]
 *
 * Where it connects (first that is set):
 *   URL:   --url, $ECHO_CONSOLE_URL, the `endpoint.url` the running console wrote
 *          into <data dir>/settings.json
 *   token: $ECHO_CONSOLE_TOKEN, the `token` in <data dir>/settings.json
 *   data dir: --data-dir, else the console's own rule (src/main/data-dir.mjs:
 *          $ECHO_CONSOLE_DATA_DIR, else the platform default), imported, not repeated
 * Only http://127.0.0.1 and http://localhost URLs are accepted: the token must
 * never travel off this machine.
 *
 * If the console is not running: a clear message on stderr and exit code 1.
 * stdout carries only MCP messages; everything else goes to stderr.
 *
 * Plain ESM JavaScript on purpose: it runs with `node` after `npm ci`, no build.
 */
import { readFileSync, realpathSync } from 'node:fs';
import { connect } from 'node:net';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { resolveDataDir } from '../src/main/data-dir.mjs';

// The one data-dir rule of the console (the Electron and web hosts call it too);
// exported again so a unit test can check it is the very same function.
export { resolveDataDir };

/** Parse `--data-dir DIR`, `--url URL` (also `--x=value`). Unknown flags are an error. */
export function parseArgs(argv) {
  const out = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const m = /^--(data-dir|url)(?:=(.*))?$/.exec(a);
    if (a === '--help' || a === '-h') return { help: true };
    if (!m) throw new Error(`unknown argument ${JSON.stringify(a)}`);
    const value = m[2] ?? argv[++i];
    if (value === undefined) throw new Error(`${a} needs a value`);
    out[m[1] === 'data-dir' ? 'dataDir' : 'url'] = value;
  }
  return out;
}

/**
 * Work out the endpoint URL and token.
 * @returns {{url: URL, token: string}}
 * @throws Error with a message for people when something is missing.
 */
export function resolveTarget(args, env = process.env) {
  const dataDir = args.dataDir ? path.resolve(args.dataDir) : resolveDataDir(env);
  const file = path.join(dataDir, 'settings.json');
  let settings = null;
  try {
    settings = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    if (!(env.ECHO_CONSOLE_TOKEN && (args.url || env.ECHO_CONSOLE_URL))) {
      throw new Error(
        e && e.code === 'ENOENT'
          ? `Echo Console has no settings at ${file}: start the console once (or pass --data-dir, or set ECHO_CONSOLE_URL and ECHO_CONSOLE_TOKEN).`
          : `cannot read ${file}: ${e instanceof Error ? e.message : String(e)}`,
      );
    }
  }
  const rawUrl = args.url || env.ECHO_CONSOLE_URL || settings?.endpoint?.url;
  if (!rawUrl) throw new Error(`Echo Console is not running (no live endpoint in ${file}). Start the console, then try again.`);
  let url;
  try {
    url = new URL(rawUrl);
  } catch {
    throw new Error(`not a URL: ${JSON.stringify(rawUrl)}`);
  }
  if (url.protocol !== 'http:' || (url.hostname !== '127.0.0.1' && url.hostname !== 'localhost')) {
    throw new Error(`refusing ${url.origin}: the console endpoint is only ever http://127.0.0.1 or http://localhost`);
  }
  const token = env.ECHO_CONSOLE_TOKEN || settings?.token;
  if (typeof token !== 'string' || !token) throw new Error(`no token: set ECHO_CONSOLE_TOKEN or check ${file}`);
  return { url, token };
}

/** Resolves true when something accepts TCP connections at url's host:port within `ms`. */
function reachable(url, ms = 2000) {
  return new Promise((resolve) => {
    const sock = connect({ host: url.hostname, port: Number(url.port || 80) });
    const done = (v) => {
      sock.destroy();
      resolve(v);
    };
    sock.setTimeout(ms, () => done(false));
    sock.once('connect', () => done(true));
    sock.once('error', () => done(false));
  });
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
    fail(`${e.message}. Usage: echo-console-mcp [--data-dir DIR] [--url URL]`);
  }
  if (args.help) {
    process.stderr.write('Usage: echo-console-mcp [--data-dir DIR] [--url URL]\nRelays MCP over stdio to the running Echo Console.\n');
    process.exit(0);
  }
  let target;
  try {
    target = resolveTarget(args);
  } catch (e) {
    fail(e.message);
  }
  if (!(await reachable(target.url))) {
    fail(`Echo Console is not running: nothing answers at ${target.url.origin}. Start the console, then try again.`);
  }

  const http = new StreamableHTTPClientTransport(target.url, {
    requestInit: { headers: { Authorization: `Bearer ${target.token}` } },
  });
  const stdio = new StdioServerTransport();
  let closing = false;
  const shutdown = async (code, message) => {
    if (closing) return;
    closing = true;
    if (message) process.stderr.write(`echo-console-mcp: ${message}\n`);
    await http.terminateSession().catch(() => undefined);
    await http.close().catch(() => undefined);
    await stdio.close().catch(() => undefined);
    process.exit(code);
  };

  // Client → console. A request that cannot be delivered is answered with a
  // JSON-RPC error, so the client never waits forever.
  stdio.onmessage = (msg) => {
    http.send(msg).catch((e) => {
      const text = e instanceof Error ? e.message : String(e);
      const hint = e?.code === 401 ? ' (the token was rejected: was it rotated? restart this command)' : '';
      process.stderr.write(`echo-console-mcp: could not relay a message: ${text}${hint}\n`);
      const reply = msg && 'id' in msg && 'method' in msg
        ? stdio.send({ jsonrpc: '2.0', id: msg.id, error: { code: -32000, message: `Echo Console unreachable: ${text}${hint}` } }).catch(() => undefined)
        : Promise.resolve();
      // The console went away: end, so the client sees the server stop instead of hanging.
      if (/ECONNREFUSED|fetch failed/i.test(`${text} ${e?.cause?.code ?? ''}`)) void reply.then(() => shutdown(1, 'Echo Console stopped.'));
    });
  };
  // Console → client. The protocol version agreed at initialize goes into later HTTP headers.
  http.onmessage = (msg) => {
    const v = msg && 'result' in msg && msg.result && typeof msg.result.protocolVersion === 'string' ? msg.result.protocolVersion : null;
    if (v) http.setProtocolVersion(v);
    stdio.send(msg).catch(() => undefined);
  };
  http.onerror = (e) => process.stderr.write(`echo-console-mcp: ${e instanceof Error ? e.message : String(e)}\n`);
  http.onclose = () => void shutdown(0);
  stdio.onclose = () => void shutdown(0);
  process.stdin.on('end', () => void shutdown(0));

  await http.start();
  await stdio.start();
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
