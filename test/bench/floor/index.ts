/**
 * The floor of the console's pipeline (issue 7, item 10): the same hops an agent
 * call takes, each done by the least code that can do it, with NO product code
 * (nothing from src/ or extension/; only node, the MCP SDK and Playwright):
 *
 * - `mcpEcho`: an MCP SDK client → Streamable HTTP on 127.0.0.1 with a bearer
 *   header → an SDK `Server` with one `echo` tool that answers its arguments;
 *   a tools/call round trip timed in Node;
 * - `nativeEcho`: this process → a Unix socket → the native host
 *   (native-host.mjs, started by Chrome) → Chrome → the floor extension's
 *   service worker (`connectNative`, echoes every message) → back; timed in Node;
 * - `swContentEcho`: the service worker → `chrome.tabs.sendMessage(tabId, msg,
 *   {frameId: 0})` → the content script, which answers the message; timed
 *   inside the service worker;
 * - `inPageExecuteTool`: `document.modelContext.executeTool` of a page tool that
 *   answers its arguments, on a page served from 127.0.0.1; timed in the page.
 *
 * Used by floor.bench.ts (the floor alone) and agent.bench.ts (the floor in
 * interleaved rounds with the agent's calls, for the ratio). Own Chromium, own
 * profile, own servers; `close()` ends them all. Never asserts timings.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server as HttpServer } from 'node:http';
import { createServer as createNetServer, type Server as NetServer, type Socket } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page, type Worker } from '@playwright/test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
// The same Chromium and flags as the end-to-end tests (test code, not product code: the floor stays independent of the pipeline).
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../../e2e/chromium';

const HERE = import.meta.dirname;
/** The floor extension (manifest, service worker, content script). */
export const FLOOR_EXTENSION_DIR = path.join(HERE, 'extension');
/** The floor native host script. */
export const FLOOR_HOST_SCRIPT = path.join(HERE, 'native-host.mjs');
/** The native host's name (its manifest is `<profile>/NativeMessagingHosts/<name>.json`). */
export const FLOOR_HOST_NAME = 'echo_console_floor';

/** The four floor series, in the order a round runs them. */
export const FLOOR_SERIES = ['mcpEcho', 'nativeEcho', 'swContentEcho', 'inPageExecuteTool'] as const;
export type FloorSeries = (typeof FLOOR_SERIES)[number];

/** Order statistics of one series (ms, rounded to 0.01). */
export interface Stats {
  n: number;
  p50: number;
  p95: number;
  mean: number;
  min: number;
  max: number;
}

/** p50/p95 (nearest rank), mean, min, max of `xs` (ms). Empty input gives NaN figures and n 0. */
export function stats(xs: readonly number[]): Stats {
  const s = [...xs].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))] ?? NaN;
  const r = (x: number) => Math.round(x * 100) / 100;
  return { n: s.length, p50: r(at(0.5)), p95: r(at(0.95)), mean: r(s.reduce((a, b) => a + b, 0) / s.length), min: r(s[0] ?? NaN), max: r(s[s.length - 1] ?? NaN) };
}

/** `os.loadavg()` rounded: the 1, 5 and 15 minute load averages. */
/**
 * Linux CPU pressure so far: the total time (µs) in which some runnable task waited for a CPU
 * (PSI, /proc/pressure/cpu `some total`, Documentation/accounting/psi.rst); null where PSI is
 * missing. Two readings and the wall time between them give the share of that time in which
 * something was kept off a CPU: on a shared 2-core machine, what a process cannot do anything about.
 */
export function cpuWaitUs(): number | null {
  try {
    const m = /^some .*total=(\d+)/m.exec(readFileSync('/proc/pressure/cpu', 'utf8'));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

export function loadAverage(): { '1m': number; '5m': number; '15m': number } {
  const [a, b, c] = loadavg().map((x) => Math.round(x * 100) / 100) as [number, number, number];
  return { '1m': a, '5m': b, '15m': c };
}

/** A running floor. Each method runs `k` round trips one after the other and answers their times (ms). */
export interface Floor {
  mcpEcho(k: number): Promise<number[]>;
  nativeEcho(k: number): Promise<number[]>;
  swContentEcho(k: number): Promise<number[]>;
  inPageExecuteTool(k: number): Promise<number[]>;
  /**
   * The form `executeTool` takes its arguments in on this Chromium: `object` (the
   * current draft, docs/browser-facts.md, "WebMCP: running tools") or `json-string` (older builds; Debian's
   * Chromium 150 rejects an object with "UnknownError: Failed to parse input arguments").
   */
  argumentForm: 'object' | 'json-string';
  /** Run `k` of the named series. */
  run(series: FloorSeries, k: number): Promise<number[]>;
  close(): Promise<void>;
}

/** The page: one tool, `echo`, that answers its arguments; `<html data-ready>` once registered. */
const PAGE = `<!doctype html><html><head><title>floor</title></head><body><script>
(async () => {
  // awaited whether registerTool answers a promise or (this build) undefined
  await document.modelContext.registerTool({
    name: 'echo',
    description: 'Answers its arguments.',
    inputSchema: { type: 'object', properties: { i: { type: 'number' } } },
    execute: (args) => args,
  });
})().then(() => { document.documentElement.dataset.ready = 'true'; },
          (e) => { document.documentElement.dataset.ready = 'failed: ' + e; });
</script></body></html>`;

/** Frame one JSON value the native-messaging way: 4-byte little-endian length, then UTF-8. */
function frame(value: unknown): Buffer {
  const body = Buffer.from(JSON.stringify(value), 'utf8');
  const head = Buffer.alloc(4);
  head.writeUInt32LE(body.length, 0);
  return Buffer.concat([head, body]);
}

/** Reads frames from `sock`; `next()` resolves with the next frame's JSON. */
function frameReader(sock: Socket): { next(timeoutMs: number): Promise<unknown> } {
  let buf: Buffer = Buffer.alloc(0);
  const ready: unknown[] = [];
  let waiting: ((v: unknown) => void) | null = null;
  sock.on('data', (chunk: Buffer) => {
    buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
    while (buf.length >= 4) {
      const n = buf.readUInt32LE(0);
      if (buf.length < 4 + n) break;
      const v: unknown = JSON.parse(buf.subarray(4, 4 + n).toString('utf8'));
      buf = buf.subarray(4 + n);
      if (waiting) {
        const w = waiting;
        waiting = null;
        w(v);
      } else ready.push(v);
    }
  });
  return {
    next(timeoutMs) {
      if (ready.length) return Promise.resolve(ready.shift());
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => {
          waiting = null;
          reject(new Error(`no native echo within ${timeoutMs} ms`));
        }, timeoutMs);
        waiting = (v) => {
          clearTimeout(t);
          resolve(v);
        };
      });
    },
  };
}

function listen(server: HttpServer | NetServer, at: number | string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    if (typeof at === 'number') server.listen(at, '127.0.0.1', () => resolve());
    else server.listen(at, () => resolve());
  });
}

function portOf(server: HttpServer): number {
  const a = server.address();
  if (!a || typeof a === 'string') throw new Error('server has no port');
  return a.port;
}

/** Try the echo tool once with an object; if this build refuses to parse it, with a JSON string. */
async function executeToolArgumentForm(page: Page): Promise<'object' | 'json-string'> {
  return page.evaluate(async () => {
    const mc = (globalThis as unknown as {
      document: { modelContext: { getTools(): Promise<Array<{ name: string }>>; executeTool(t: unknown, a: unknown): Promise<string | null> } };
    }).document.modelContext;
    const tool = (await mc.getTools()).find((t) => t.name === 'echo');
    try {
      await mc.executeTool(tool, { i: 0 });
      return 'object' as const;
    } catch (e) {
      if (!String(e).includes('Failed to parse input arguments')) throw e;
      await mc.executeTool(tool, JSON.stringify({ i: 0 }));
      return 'json-string' as const;
    }
  });
}

/**
 * Start the floor: the MCP echo server and its client, the page server, the
 * native socket, and Chromium with the floor extension; the native host is
 * connected when this resolves.
 * @throws when Chromium does not start, the extension's worker does not appear,
 *   the page's tool does not register or the native host does not connect (20 s each).
 */
export async function startFloor(): Promise<Floor> {
  // Short path: a Unix socket path must stay under ~103 bytes.
  const dir = mkdtempSync(path.join(tmpdir(), 'echo-floor-'));
  const cleanup: Array<() => unknown> = [() => rmSync(dir, { recursive: true, force: true })];
  const close = async () => {
    for (const c of cleanup.splice(0).reverse()) await Promise.resolve().then(c).catch(() => undefined);
  };
  try {
    // 1. MCP: one SDK server (one session), behind a bearer check, on loopback.
    const token = randomBytes(24).toString('base64url');
    const mcp = new Server({ name: 'floor-echo', version: '1.0.0' }, { capabilities: { tools: {} } });
    mcp.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: [{ name: 'echo', description: 'Answers its arguments.', inputSchema: { type: 'object' as const } }],
    }));
    mcp.setRequestHandler(CallToolRequestSchema, (req) => ({ content: [{ type: 'text' as const, text: JSON.stringify(req.params.arguments ?? {}) }] }));
    const serverTransport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomBytes(16).toString('hex') });
    await mcp.connect(serverTransport);
    const http = createServer((req, res) => {
      if (req.url !== '/mcp' || req.headers.authorization !== `Bearer ${token}`) {
        res.statusCode = req.url !== '/mcp' ? 404 : 401;
        res.end();
        return;
      }
      void serverTransport.handleRequest(req, res);
    });
    await listen(http, 0);
    cleanup.push(() => new Promise((r) => http.close(r)), () => mcp.close());
    const client = new Client({ name: 'floor-bench', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${portOf(http)}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }),
    );
    cleanup.push(() => client.close());

    // 2. The page with the echo tool.
    const pages = createServer((req, res) => {
      res.setHeader('Content-Type', 'text/html; charset=utf-8');
      res.end(PAGE);
    });
    await listen(pages, 0);
    cleanup.push(() => new Promise((r) => pages.close(r)));
    const pageUrl = `http://127.0.0.1:${portOf(pages)}/`;

    // 3. The socket the native host connects to.
    const socketPath = path.join(dir, 'n.sock');
    const sockets = createNetServer();
    const hostConnected = new Promise<Socket>((resolve) => sockets.once('connection', resolve));
    await listen(sockets, socketPath);
    cleanup.push(() => new Promise((r) => sockets.close(r)));

    // 4. Chromium with the floor extension.
    const userDataDir = path.join(dir, 'profile');
    const context: BrowserContext = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM_PATH,
      headless: true,
      args: [...CHROMIUM_ARGS, `--disable-extensions-except=${FLOOR_EXTENSION_DIR}`, `--load-extension=${FLOOR_EXTENSION_DIR}`],
    });
    cleanup.push(() => context.close());
    const isOurs = (w: Worker) => w.url().startsWith('chrome-extension://') && w.url().endsWith('/sw.js');
    const worker = context.serviceWorkers().find(isOurs) ?? (await context.waitForEvent('serviceworker', { predicate: isOurs, timeout: 20_000 }));
    const extensionId = new URL(worker.url()).host;

    // The host manifest, for the ID Chrome gave the unpacked extension; Chrome reads it at connectNative.
    const wrapper = path.join(dir, 'host.sh');
    writeFileSync(wrapper, `#!/bin/sh\nexec '${process.execPath}' '${FLOOR_HOST_SCRIPT}' '${socketPath}' "$@"\n`);
    chmodSync(wrapper, 0o700);
    mkdirSync(path.join(userDataDir, 'NativeMessagingHosts'), { recursive: true });
    writeFileSync(
      path.join(userDataDir, 'NativeMessagingHosts', `${FLOOR_HOST_NAME}.json`),
      JSON.stringify({ name: FLOOR_HOST_NAME, description: 'Echo Console floor benchmark host', path: wrapper, type: 'stdio', allowed_origins: [`chrome-extension://${extensionId}/`] }),
    );
    await worker.evaluate((name) => (globalThis as unknown as { floorConnect(n: string): boolean }).floorConnect(name), FLOOR_HOST_NAME);
    const host = await Promise.race([
      hostConnected,
      new Promise<never>((_, reject) =>
        setTimeout(() => {
          void worker
            .evaluate(() => (globalThis as unknown as { floorNativeError: string | null }).floorNativeError)
            .then((why) => reject(new Error(`the floor native host did not connect within 20 s (${why ?? 'no disconnect'})`)), reject);
        }, 20_000),
      ),
    ]);
    const reader = frameReader(host);

    const page: Page = await context.newPage();
    const pageErrors: string[] = [];
    page.on('pageerror', (e) => pageErrors.push(e.message));
    await page.goto(pageUrl);
    await page
      .locator('html[data-ready]')
      .waitFor({ state: 'attached', timeout: 20_000 })
      .catch((e: unknown) => {
        throw new Error(`the floor page did not get ready (${pageErrors.join('; ') || String(e)})`);
      });
    const readyState = await page.locator('html').getAttribute('data-ready');
    if (readyState !== 'true') throw new Error(`the floor page's tool did not register: ${readyState}`);
    const tabId = await worker.evaluate((u) => (globalThis as unknown as { floorTabId(u: string): Promise<number> }).floorTabId(u), pageUrl);
    if (tabId < 0) throw new Error('the floor page has no tab id');
    const argumentForm = await executeToolArgumentForm(page);

    const floor: Floor = {
      async mcpEcho(k) {
        const out: number[] = [];
        for (let i = 0; i < k; i++) {
          const s = performance.now();
          const r = await client.callTool({ name: 'echo', arguments: { i } });
          const d = performance.now() - s;
          const text = (r.content as Array<{ text?: string }>)[0]?.text;
          if (text !== JSON.stringify({ i })) throw new Error(`MCP echo answered ${String(text)}`);
          out.push(d);
        }
        return out;
      },
      async nativeEcho(k) {
        const out: number[] = [];
        for (let i = 0; i < k; i++) {
          const s = performance.now();
          host.write(frame({ echo: i }));
          const v = (await reader.next(10_000)) as { echo?: number };
          const d = performance.now() - s;
          if (v?.echo !== i) throw new Error(`native echo answered ${JSON.stringify(v)}`);
          out.push(d);
        }
        return out;
      },
      swContentEcho(k) {
        return worker.evaluate(
          ([t, n]) => (globalThis as unknown as { floorSwContent(t: number, n: number): Promise<number[]> }).floorSwContent(t, n),
          [tabId, k] as const,
        );
      },
      inPageExecuteTool(k) {
        return page.evaluate(
          async ([n, form]) => {
            const mc = (globalThis as unknown as {
              document: { modelContext: { getTools(): Promise<Array<{ name: string }>>; executeTool(t: unknown, a: unknown): Promise<string | null> } };
            }).document.modelContext;
            const tool = (await mc.getTools()).find((t) => t.name === 'echo');
            if (!tool) throw new Error('no echo tool on the floor page');
            const out: number[] = [];
            for (let i = 0; i < n; i++) {
              const s = performance.now();
              const r = await mc.executeTool(tool, form === 'object' ? { i } : JSON.stringify({ i }));
              const d = performance.now() - s;
              if (r === null || (JSON.parse(r) as { i?: number }).i !== i) throw new Error(`executeTool answered ${String(r)}`);
              out.push(d);
            }
            return out;
          },
          [k, argumentForm] as const,
        );
      },
      argumentForm,
      run(series, k) {
        return floor[series](k);
      },
      close,
    };
    return floor;
  } catch (e) {
    await close();
    throw e;
  }
}
