/// <reference types="chrome" />
/**
 * The whole main job on real parts, for the end-to-end test of issue 4
 * (test/e2e/main-job.spec.ts) and the agent benchmark (test/bench/agent.bench.ts):
 *
 *   Debian Chromium 156 (WebMCP on) with the BUILT extension loaded
 *     ⇄ native messaging host (out/tools/native-host.mjs, manifest written into the profile)
 *     ⇄ the real console core (ledger, settings, bridge, broker, MCP endpoint)
 *     ⇄ the loopback web host serving the built renderer (the console UI, a second page)
 *   plus the demo and hostile pages (test/support/demo-servers.ts) and an MCP SDK client.
 *
 * Builds nothing: run `npx electron-vite build && npm run build:extension && npm run build:tools`
 * first. The built extension, renderer and native host are COPIED into this run's
 * temporary folder at start, because other people's builds rewrite extension/dist and
 * out/ while a run is going; the extension id does not change (the manifest's key fixes it).
 *
 * Free of Playwright's test runner (no `test`, no `expect`), so the benchmark can use it
 * under plain tsx. Waits are on events (core events, Playwright locators), never sleeps.
 */
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page, type Worker, type test as PlaywrightTest } from '@playwright/test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createConsoleCore, type ConsoleCore } from '../../../src/main/core';
import { writeHostManifestForProfile } from '../../../src/main/core/bridge/host-manifest';
import { startWebHost, type WebHost } from '../../../src/main/web/server';
import { EXTENSION_ID } from '../../../src/shared/extension-id';
import type { ApprovalView, ConsoleEvent, LinkStatus } from '../../../src/shared/ipc';
import { startDemoServers, type DemoServers } from '../../support/demo-servers';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../chromium';
import { EXEC_COUNTER, execCount } from './invocation';
import { createAgentToken } from '../../support/agent-token';
import { confirmInPopup, popupCode } from './pairing';

const REPO = path.resolve(import.meta.dirname, '../../..');
/** What the builds write; copied per run (see the header). */
export const BUILT = {
  extension: path.join(REPO, 'extension/dist'),
  renderer: path.join(REPO, 'out/renderer'),
  nativeHost: path.join(REPO, 'out/tools/native-host.mjs'),
} as const;

export interface MainJobOptions {
  /** Open the console UI (the built renderer over the web host) in a second page. Default true. */
  ui?: boolean;
  /** Approval timeout for this core (ms); default: settings.json's (so the UI/API can change it). */
  approvalTimeoutMs?: number;
  /** Count each page tool execution (EXEC_COUNTER in ./invocation.ts). Default true; the benchmark turns it off. */
  countExecutions?: boolean;
}


export interface MainJob {
  /** The run's temporary folder (data, socket, profile, copies of the builds). */
  dir: string;
  dataDir: string;
  core: ConsoleCore;
  host: WebHost;
  servers: DemoServers;
  context: BrowserContext;
  /** The extension's service worker. */
  worker: Worker;
  extensionId: string;
  /** The console UI page (null with `ui: false`). */
  consolePage: Page | null;
  /** Console errors and warnings the console UI page logged. */
  consoleProblems: string[];
  /** Open `url` in a new tab and wait for the page's ready signal (`<html data-ready="true">`). */
  openPage(url: string): Promise<Page>;
  /** The extension's tab id of a page (matched by its exact URL). */
  tabIdOf(page: Page): Promise<number>;
  /** The top frame's documentId as Chrome reports it (chrome.webNavigation.getFrame), from the worker. */
  topDocumentId(tabId: number): Promise<string>;
  /** How often the page's tool `name` ran in this document (needs `countExecutions`). */
  execCount(page: Page, name: string): Promise<number>;
  /** Share a tab through the console API (the UI path is in the spec). */
  shareThroughApi(page: Page): Promise<number>;
  /** An MCP SDK client over Streamable HTTP with the bearer token. */
  mcpClient(name: string): Promise<Client>;
  close(): Promise<void>;
}

/** Resolve once `pred` holds for a core event (or already holds for `now()`), else reject after `timeoutMs`. */
export function waitForCore<T>(core: ConsoleCore, pick: (e: ConsoleEvent | null) => T | undefined, timeoutMs = 20_000, what = 'a core event'): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let done = false;
    const finish = (fn: () => void) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      unsub();
      fn();
    };
    const unsub = core.onEvent((e) => {
      let v: T | undefined;
      try {
        v = pick(e);
      } catch (x) {
        finish(() => reject(x));
        return;
      }
      if (v !== undefined) finish(() => resolve(v));
    });
    const timer = setTimeout(() => finish(() => reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`))), timeoutMs);
    const now = pick(null);
    if (now !== undefined) finish(() => resolve(now));
  });
}

/** Wait until the link status satisfies `pred`. */
export function waitForLink(core: ConsoleCore, pred: (s: LinkStatus) => boolean, timeoutMs = 30_000): Promise<LinkStatus> {
  return waitForCore(
    core,
    (e) => {
      const s = e === null ? core.link.status() : e.kind === 'link' ? e.link : undefined;
      return s && pred(s) ? s : undefined;
    },
    timeoutMs,
    'a link status',
  );
}

/** Wait until an approval matching `pred` is pending; answers its view. */
export function waitForApproval(core: ConsoleCore, pred: (a: ApprovalView) => boolean = () => true, timeoutMs = 20_000): Promise<ApprovalView> {
  return waitForCore(
    core,
    (e) => {
      const list = e === null ? core.broker.approvals.list() : e.kind === 'approvals' ? e.approvals : undefined;
      return list?.find(pred);
    },
    timeoutMs,
    'an approval request',
  );
}

/**
 * Start everything and leave the extension connected but NOT paired (the spec pairs
 * through the UI; `pairThroughApi` below does it without one).
 * @throws when a build is missing (with the command to run).
 */
export async function startMainJob(opts: MainJobOptions = {}): Promise<MainJob> {
  for (const [what, p] of Object.entries(BUILT)) {
    if (!existsSync(p)) throw new Error(`${what} is not built (${p}): run \`npx electron-vite build && npm run build:extension && npm run build:tools\` first.`);
  }
  // Short path: a Unix socket path must stay under ~103 bytes.
  const dir = mkdtempSync(path.join(tmpdir(), 'echo-mj-'));
  const cleanup: Array<() => Promise<unknown> | unknown> = [() => rmSync(dir, { recursive: true, force: true })];
  /** How many MCP clients were made under each name (each gets its own agent token). */
  const tokenNames = new Map<string, number>();
  const closeAll = async () => {
    for (const c of cleanup.splice(0).reverse()) await Promise.resolve().then(c).catch(() => undefined);
  };
  try {
    const extDir = path.join(dir, 'extension');
    const rendererDir = path.join(dir, 'renderer');
    const hostScript = path.join(dir, 'native-host.mjs');
    cpSync(BUILT.extension, extDir, { recursive: true });
    cpSync(BUILT.renderer, rendererDir, { recursive: true });
    cpSync(BUILT.nativeHost, hostScript);

    const dataDir = path.join(dir, 'data');
    const socketPath = path.join(dir, 'link.sock');
    const core = createConsoleCore({
      dataDir,
      socketPath,
      mcpPort: 0,
      ...(opts.approvalTimeoutMs !== undefined ? { approvalTimeoutMs: opts.approvalTimeoutMs } : {}),
      logger: { info: () => {}, warn: () => {} },
    });
    await core.start();
    cleanup.push(() => core.stop());
    const host = await startWebHost({ api: core.api, subscribe: (l) => core.onEvent(l), rendererDir, port: 0 });
    cleanup.push(() => host.close());
    // As src/main/web/index.ts does: the console's own tab is never shared with the agent.
    core.setConsoleOrigins(host.origins);
    const servers = await startDemoServers();
    cleanup.push(() => servers.close());

    const userDataDir = path.join(dir, 'profile');
    await writeHostManifestForProfile(userDataDir, { extensionIds: [EXTENSION_ID], socketPath, hostScript, nodePath: process.execPath });
    const context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM_PATH,
      headless: true,
      viewport: { width: 1280, height: 900 },
      args: [...CHROMIUM_ARGS, `--disable-extensions-except=${extDir}`, `--load-extension=${extDir}`],
    });
    cleanup.push(() => context.close());
    if (opts.countExecutions !== false) await context.addInitScript(EXEC_COUNTER);
    const isOurs = (w: Worker) => w.url().startsWith(`chrome-extension://${EXTENSION_ID}/`);
    const worker = context.serviceWorkers().find(isOurs) ?? (await context.waitForEvent('serviceworker', { predicate: isOurs, timeout: 20_000 }));

    let consolePage: Page | null = null;
    const consoleProblems: string[] = [];
    if (opts.ui !== false) {
      consolePage = await context.newPage();
      consolePage.on('console', (m) => {
        if (m.type() === 'error' || m.type() === 'warning') consoleProblems.push(m.text());
      });
      await consolePage.goto(host.newConsoleUrl());
      await consolePage.getByTestId('nav-approvals').waitFor();
    }

    const tabIdOf = async (page: Page): Promise<number> => {
      const url = page.url();
      const id = await worker.evaluate(async (u) => (await chrome.tabs.query({})).find((t) => t.url === u)?.id ?? -1, url);
      if (id < 0) throw new Error(`no tab shows ${url}`);
      return id;
    };

    const job: MainJob = {
      dir,
      dataDir,
      core,
      host,
      servers,
      context,
      worker,
      extensionId: new URL(worker.url()).host,
      consolePage,
      consoleProblems,
      async openPage(url) {
        const page = await context.newPage();
        await page.goto(url);
        await page.locator('html[data-ready="true"]').waitFor({ state: 'attached', timeout: 20_000 });
        return page;
      },
      tabIdOf,
      async topDocumentId(tabId) {
        const id = await worker.evaluate(async (t) => (await chrome.webNavigation.getFrame({ tabId: t, frameId: 0 }))?.documentId ?? '', tabId);
        if (!id) throw new Error(`no top frame for tab ${tabId}`);
        return id;
      },
      execCount,
      async shareThroughApi(page) {
        const tabId = await tabIdOf(page);
        const r = await core.api.shareTab({ tabId });
        if (!r.ok) throw new Error(`shareTab failed: ${r.error.code} ${r.error.message}`);
        return tabId;
      },
      async mcpClient(name) {
        const client = new Client({ name, version: '1.0.0' });
        // A token per client, made the way the person makes one (Connection → Agent tokens), named
        // after the client (the dialog and receipts show the token's name; a repeated name gets a number).
        const used = tokenNames.get(name) ?? 0;
        tokenNames.set(name, used + 1);
        const secret = await createAgentToken(core.api, used === 0 ? name : `${name} #${used + 1}`);
        const transport = new StreamableHTTPClientTransport(new URL(core.endpoint.url), {
          requestInit: { headers: { Authorization: `Bearer ${secret}` } },
        });
        await client.connect(transport);
        cleanup.push(() => client.close());
        return client;
      },
      close: closeAll,
    };
    return job;
  } catch (e) {
    await closeAll();
    throw e;
  }
}

/**
 * Pair without the console's UI (the benchmark): wait for the code, click "The codes match" in
 * the extension's real popup page (issue 9 item 1), confirm through the console API, wait for
 * `connected`.
 */
export async function pairThroughApi(job: MainJob): Promise<void> {
  const s = await waitForLink(job.core, (x) => x.state === 'awaiting-pairing' && !!x.pairingCode);
  const popup = await job.context.newPage();
  await popup.goto(`chrome-extension://${job.extensionId}/popup/popup.html`);
  const shown = await popupCode(popup);
  if (shown !== s.pairingCode) throw new Error(`the popup shows ${shown} but the console shows ${s.pairingCode}`);
  await confirmInPopup(popup);
  await popup.close();
  const r = await job.core.api.confirmPairing({ accept: true });
  if (!r.ok) throw new Error(`confirmPairing failed: ${r.error.code} ${r.error.message}`);
  await waitForLink(job.core, (s) => s.state === 'connected' && s.paired);
}

// ---- reading MCP results --------------------------------------------------------------

/** The text parts of an MCP tool result. */
export function texts(result: unknown): string[] {
  const content = (result as { content?: Array<{ type: string; text?: string }> }).content ?? [];
  return content.filter((c) => c.type === 'text').map((c) => c.text ?? '');
}

/** The body of the `<untrusted-page-content>` block in `text` (between the opening and closing lines). */
export function untrustedBody(text: string): string {
  const m = /^<untrusted-page-content source="[^"]*">\n([\s\S]*)\n<\/untrusted-page-content>$/.exec(text);
  if (!m) throw new Error(`not an untrusted-page-content block: ${text.slice(0, 120)}`);
  return m[1] as string;
}

/** The JSON header the console puts on the first line after `prefix` (e.g. "Invocation "). */
export function headerJson<T = Record<string, unknown>>(text: string, prefix: string): T {
  const line = text.split('\n')[0] ?? '';
  const at = line.indexOf(prefix);
  if (at < 0) throw new Error(`no "${prefix}" header in: ${line.slice(0, 120)}`);
  return JSON.parse(line.slice(at + prefix.length)) as T;
}

/**
 * One main job for a whole spec file, paired through the API, with an MCP client named `agent`:
 * started in `beforeAll` (serial mode), closed in `afterAll`. Read `job` and `client` inside tests.
 */
export function pairedMainJob(t: typeof PlaywrightTest, agent: string): { readonly job: MainJob; readonly client: Client } {
  let job: MainJob | undefined;
  let client: Client | undefined;
  t.describe.configure({ mode: 'serial' });
  t.beforeAll(async () => {
    t.setTimeout(120_000);
    job = await startMainJob();
    await pairThroughApi(job);
    client = await job.mcpClient(agent);
  });
  t.afterAll(async () => {
    await job?.close();
  });
  return {
    get job(): MainJob {
      if (!job) throw new Error('the main job has not started');
      return job;
    },
    get client(): Client {
      if (!client) throw new Error('the main job has not started');
      return client;
    },
  };
}
