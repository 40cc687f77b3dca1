/// <reference types="chrome" />
/**
 * The REAL link, end to end, for Playwright tests (issue 3 and later): the
 * console core (`createConsoleCore`, src/main/core/index.ts) running in the
 * test process with its Bridge on a Unix socket in a private temporary folder
 * (0700), the native host manifest and launcher written into a fresh Chromium
 * profile (`writeHostManifestForProfile`, so Chrome itself starts
 * out/tools/native-host.mjs through native messaging), Debian's Chromium with
 * WebMCP on and the BUILT extension (extension/dist) loaded, the demo and
 * hostile pages (test/support/demo-servers.ts), and helpers that drive the
 * whole path through the core: pairing (confirmed through `core.api`), tab
 * sharing, discovery, grants signed by the bridge, invocations.
 *
 * Nothing here replaces a part: requests go core → Bridge → socket → native
 * host → Chrome native messaging → service worker → content script → page and
 * back. Build first: `npm run build:extension && npm run build:tools`.
 *
 * Usage (one fresh browser + core per test, demo servers shared per worker):
 *
 *   import { test, expect } from './support/link-fixture';
 *   test('x', async ({ world }) => {              // a paired, connected world
 *     const { page, tabId } = await world.openShared(world.demo.url('store'));
 *     const d = await world.discover(tabId);
 *     const req = await world.invokeRequest(d.tools.find((t) => t.name === 'get_cart')!, {});
 *     expect(await world.invoke(req)).toMatchObject({ ok: true, value: { outcome: 'succeeded' } });
 *   });
 *   test('y', async ({ launchWorld }) => {        // other set-ups, closed after the test
 *     const w = await launchWorld({ startCore: false });
 *   });
 *
 * Or call `startLinkWorld(opts)` yourself and `close()` it (test/bench/webmcp.bench.ts
 * does, outside the Playwright runner).
 *
 * Notes for reuse: `openShared` waits for the demo pages' `<html data-ready=true>`
 * (pass `{waitReady: false}` for other pages); `world.events` records every
 * extension event the console received; `world.hostPids()` finds the native
 * host Chrome started (kill it to cut the link); after a service worker
 * restart call `world.worker()` again. Page-side callbacks must say
 * `globalThis`, not `window`: test files type-check under tsconfig.node.json,
 * which has no DOM lib.
 */
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { test as base, expect, type BrowserContext, type Page, type Worker } from '@playwright/test';
import { createConsoleCore, type ConsoleCore, type ConsoleCoreOptions } from '../../../src/main/core/index';
import { writeHostManifestForProfile } from '../../../src/main/core/bridge/host-manifest';
import { FileLedgerKeyHolder } from '../../../src/main/core/ledger/key-holder';
import { EXTENSION_ID } from '../../../src/shared/extension-id';
import type { LinkStatus } from '../../../src/shared/ipc';
import type { ConsoleRequest, ConsoleRequestValue, ExtensionEvent } from '../../../src/shared/protocol';
import type { Receipt, ReceiptQuery } from '../../../src/shared/receipt';
import type { Result } from '../../../src/shared/result';
import type { DiscoveryResult, Grant, InvocationResult, ToolDescriptor } from '../../../src/shared/types';
import { startDemoServers, type DemoServers } from '../../support/demo-servers';
import { launchExtension, type ExtensionHandle } from './extension-fixture';
import { EXEC_COUNTER, execCount, grantFields, invokeRequestFor } from './invocation';
import { confirmInPopup } from './pairing';

export { confirmInPopup } from './pairing';

/** The bundled native host that `npm run build:tools` writes. */
export const HOST_SCRIPT = resolve(import.meta.dirname, '../../../out/tools/native-host.mjs');
/** The popup, as the manifest's `action.default_popup` names it. */
export const POPUP_PATH = 'popup/popup.html';

export type InvokeRequest = Extract<ConsoleRequest, { op: 'dispatch' }>;

/** Options of `startLinkWorld`. */
export interface LinkWorldOptions {
  /** Demo servers to use (shared across tests); default: started here and closed with the world. */
  demo?: DemoServers;
  /** Start the console core before the browser (default true). With `false`, call `startCore()` later. */
  startCore?: boolean;
  /** Complete pairing through the core API before returning (default: true when the core starts). */
  pair?: boolean;
  /** Extra options for `createConsoleCore` (dataDir and socketPath are the world's). */
  core?: Partial<Omit<ConsoleCoreOptions, 'dataDir' | 'socketPath'>>;
  /**
   * Count every page tool execution in `window.__echoExecCount[name]` (an init
   * script in the page's main world wraps `registerTool`'s `execute`; the
   * descriptor, hence its hash, is unchanged). Default true.
   */
  countExecutions?: boolean;
  /**
   * Runs after the socket folder and the host manifest exist and before Chromium starts (with
   * `startCore: false`: e.g. put an impostor on the socket, issue 9 item 1).
   */
  beforeBrowser?: (w: { socketPath: string }) => Promise<void>;
  /** Playwright default flags to leave out (LaunchOptions.ignoreDefaultArgs), e.g. `--disable-popup-blocking`. */
  ignoreDefaultArgs?: string[];
  /** Extra Chromium flags (LaunchOptions.args), e.g. `--disable-features=WebMCPTesting` for a browser without WebMCP. */
  chromiumArgs?: string[];
}

/** A running console + browser + extension + pages. */
export interface LinkWorld {
  /** The running console core (throws while it is stopped). */
  readonly core: ConsoleCore;
  readonly coreRunning: boolean;
  readonly context: BrowserContext;
  readonly extensionId: string;
  readonly demo: DemoServers;
  /** `--user-data-dir` (holds NativeMessagingHosts/dev.echo_console.link.json). */
  readonly userDataDir: string;
  /** The console's data folder (ledger.db, settings.json, secrets.json). */
  readonly dataDir: string;
  /** The bridge's socket, in a private (0700) folder. */
  readonly socketPath: string;
  /** Warnings the core logged (kept quiet on the console; read them in a failing test). */
  readonly coreWarnings: string[];
  /** The extension's current service worker (a new one after a restart). */
  worker(): Promise<Worker>;
  /** Start (or restart, on the same data folder: the pairing survives) the console core. */
  startCore(): Promise<ConsoleCore>;
  /** Stop the console core; the extension then sees the console go away. */
  stopCore(): Promise<void>;
  /**
   * Complete pairing as a person would: wait for the code in the console
   * (`LinkStatus.pairingCode`), check the popup shows the same one, click
   * "The codes match" in the popup, confirm through
   * `core.api.confirmPairing({accept: true})`, and wait until both sides say
   * `connected`. Answers the code.
   */
  pair(): Promise<{ code: string }>;
  /** The extension's popup page (opened once, kept open). */
  popup(): Promise<Page>;
  /** The link state as the popup shows it (the worker's `echoConsole.linkState()`). */
  extensionLinkState(): Promise<{ state: string; paired: boolean; pairingCode?: string; message?: string; lastHeartbeatAt?: number }>;
  /** Wait until the console's LinkStatus satisfies `pred`. */
  waitForCoreLink(pred: (s: LinkStatus) => boolean, what: string, timeoutMs?: number): Promise<LinkStatus>;
  /** Open `url` in a new tab (optionally waiting for `<html data-ready=true>`) and share it through `core.api.shareTab`. */
  openShared(url: string, opts?: { waitReady?: boolean }): Promise<{ page: Page; tabId: number }>;
  /** `discover` through the core's link; throws on an error answer. */
  discover(tabId: number): Promise<DiscoveryResult>;
  /** One request through the core's link (`core.link.request`). */
  request<K extends ConsoleRequest['op']>(req: Extract<ConsoleRequest, { op: K }>, opts?: { timeoutMs?: number; signal?: AbortSignal }): Promise<Result<ConsoleRequestValue[K]>>;
  /** An invoke request for `tool` with `args` and a fresh grant signed by the bridge (`core.link.signGrant`); `over` changes grant fields before signing. */
  invokeRequest(tool: ToolDescriptor, args: Record<string, unknown>, over?: Partial<Omit<Grant, 'mac'>>, timeoutMs?: number): Promise<InvokeRequest>;
  /** Send an invoke through the core's link. */
  invoke(req: InvokeRequest, opts?: { timeoutMs?: number; signal?: AbortSignal }): Promise<Result<InvocationResult>>;
  /** Extension events as the console receives them (recorded from the start). */
  readonly events: ExtensionEvent[];
  /** Pids of the native host processes Chrome started for this world (found by the world's socket path in /proc). */
  hostPids(): number[];
  /** Receipts, newest first. */
  receipts(q?: ReceiptQuery): Receipt[];
  /** How often the page's tool `name` ran (needs `countExecutions`). */
  execCount(page: Page, name: string): Promise<number>;
  close(): Promise<void>;
}

/** Poll `fn` (every 25 ms) until it answers something truthy; throws after `timeoutMs` naming `what`. Waits for a condition, never a fixed time. */
export async function until<T>(fn: () => T | Promise<T>, what: string, timeoutMs = 15_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v as NonNullable<T>;
      last = v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (last: ${last instanceof Error ? last.message : JSON.stringify(last)})`);
    await new Promise((r) => setTimeout(r, 25));
  }
}


/**
 * An agent's `webmcp_invoke` through the broker, up to the approval the console builds: discover
 * the tab, invoke `name` with `args` as `actorName`, and wait for the request's ApprovalView.
 * `pending` settles once the person decides (`approveView`).
 */
export async function askInvoke(world: LinkWorld, tabId: number, name: string, args: Record<string, unknown>, actorName: string) {
  const agent = { actor: { kind: 'agent' as const, name: actorName }, kind: 'mutation' as const };
  const d = await world.core.broker.discover({ tabId }, { ...agent, kind: 'read' });
  if (!d.ok) throw new Error(d.error.message);
  const tool = d.value.tools.find((t) => t.name === name);
  if (!tool) throw new Error(`${name} not discovered: ${d.value.tools.map((t) => t.name).join(', ')}`);
  const pending = world.core.broker.invoke({ tabId, name, descriptorHash: tool.descriptorHash, arguments: args }, agent);
  const view = await until(() => world.core.broker.approvals.list().find((v) => v.subject.toolName === name), `the approval of ${name}`);
  return { pending, view, descriptorHash: tool.descriptorHash };
}

/** The person approves `view` through the console API (asserted to be accepted). */
export async function approveView(world: LinkWorld, view: { requestId: string }): Promise<void> {
  expect(await world.core.api.decideApproval({ requestId: view.requestId, decision: 'approve' })).toEqual({ ok: true, value: null });
}

/** Pids whose command line mentions `needle` (Linux /proc). */
function pidsWith(needle: string): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const cmd = readFileSync(`/proc/${d}/cmdline`, 'utf8');
      if (cmd.includes(needle) && cmd.includes('native-host')) out.push(Number(d));
    } catch {
      /* gone meanwhile */
    }
  }
  return out;
}

/**
 * Start a world: temp profile + host manifest, console core (unless
 * `startCore: false`), Chromium with the extension, demo servers, and
 * (by default) a completed pairing.
 */
export async function startLinkWorld(opts: LinkWorldOptions = {}): Promise<LinkWorld> {
  if (!existsSync(HOST_SCRIPT)) throw new Error(`${HOST_SCRIPT} is missing: run "npm run build:tools" first`);
  const ownDemo = !opts.demo;
  const demo = opts.demo ?? (await startDemoServers());
  // Short paths: a Unix socket path must stay under ~103 bytes.
  const runDir = mkdtempSync(join(tmpdir(), 'echo-lk-'));
  chmodSync(runDir, 0o700);
  const socketPath = join(runDir, 'link.sock');
  const dataDir = mkdtempSync(join(tmpdir(), 'echo-lk-data-'));
  const userDataDir = mkdtempSync(join(tmpdir(), 'echo-lk-profile-'));
  await writeHostManifestForProfile(userDataDir, { extensionIds: [EXTENSION_ID], hostScript: HOST_SCRIPT, socketPath, nodePath: process.execPath });

  const coreWarnings: string[] = [];
  const events: ExtensionEvent[] = [];
  let core: ConsoleCore | null = null;
  let unsubscribe: (() => void) | null = null;

  async function startCore(): Promise<ConsoleCore> {
    if (core) return core;
    const c = createConsoleCore({
      dataDir,
      socketPath,
      mcpPort: 0,
      logger: { info: () => {}, warn: (m, d) => void coreWarnings.push(`${m} ${d === undefined ? '' : JSON.stringify(d)}`.slice(0, 500)) },
      // The ledger's signing key outside the data folder, in this world's private folder (not the home folder).
      ledgerKeyHolder: new FileLedgerKeyHolder(join(runDir, 'ledger-key.pem'), dataDir),
      ...opts.core,
    });
    await c.start();
    unsubscribe = c.link.onEvent((e) => void events.push(e));
    core = c;
    return c;
  }
  async function stopCore(): Promise<void> {
    const c = core;
    core = null;
    unsubscribe?.();
    unsubscribe = null;
    await c?.stop();
  }

  if (opts.startCore !== false) await startCore();
  let ext: ExtensionHandle;
  try {
    await opts.beforeBrowser?.({ socketPath });
    ext = await launchExtension({ userDataDir, ...(opts.ignoreDefaultArgs ? { ignoreDefaultArgs: opts.ignoreDefaultArgs } : {}), ...(opts.chromiumArgs ? { args: opts.chromiumArgs } : {}) });
  } catch (e) {
    await stopCore();
    throw e;
  }
  if (opts.countExecutions !== false) await ext.context.addInitScript(EXEC_COUNTER);

  const isOurs = (w: Worker) => w.url().startsWith(`chrome-extension://${EXTENSION_ID}/`);
  let currentWorker: Worker = ext.worker;
  ext.context.on('serviceworker', (w) => {
    if (isOurs(w)) currentWorker = w;
  });
  let popupPage: Page | null = null;

  const world: LinkWorld = {
    get core() {
      if (!core) throw new Error('the console core is not running');
      return core;
    },
    get coreRunning() {
      return core !== null;
    },
    context: ext.context,
    extensionId: ext.extensionId,
    demo,
    userDataDir,
    dataDir,
    socketPath,
    coreWarnings,
    events,
    async worker() {
      const alive = ext.context.serviceWorkers().filter(isOurs);
      if (alive.includes(currentWorker)) return currentWorker;
      if (alive.length > 0) return (currentWorker = alive[alive.length - 1] as Worker);
      return (currentWorker = await ext.context.waitForEvent('serviceworker', { predicate: isOurs, timeout: 20_000 }));
    },
    startCore,
    stopCore,
    async popup() {
      if (popupPage && !popupPage.isClosed()) return popupPage;
      popupPage = await ext.context.newPage();
      await popupPage.goto(`chrome-extension://${ext.extensionId}/${POPUP_PATH}`);
      return popupPage;
    },
    async extensionLinkState() {
      const w = await world.worker();
      return w.evaluate(() => (globalThis as unknown as { echoConsole: { linkState(): never } }).echoConsole.linkState());
    },
    waitForCoreLink(pred, what, timeoutMs = 20_000) {
      return until(() => (core && pred(core.link.status()) ? core.link.status() : null), `the console link: ${what}`, timeoutMs);
    },
    async pair() {
      const c = world.core;
      const s = await world.waitForCoreLink((x) => x.state === 'awaiting-pairing' && !!x.pairingCode, 'a pairing code');
      const code = s.pairingCode as string;
      const popup = await world.popup();
      const shown = await until(async () => (await popup.locator('#pairing-code').textContent())?.trim(), 'the popup to show a pairing code');
      if (shown !== code) throw new Error(`the popup shows ${shown} but the console shows ${code}`);
      // Confirmed on both sides, as the person does (issue 9 item 1): "The codes match" in the
      // real popup page, and the console's confirmation.
      await confirmInPopup(popup);
      const r = await c.api.confirmPairing({ accept: true });
      if (!r.ok) throw new Error(`confirmPairing: ${r.error.code} ${r.error.message}`);
      await world.waitForCoreLink((x) => x.state === 'connected' && x.paired, 'connected after pairing');
      await until(async () => (await world.extensionLinkState()).state === 'connected', 'the extension to say connected');
      return { code };
    },
    async openShared(url, o = {}) {
      const page = await ext.context.newPage();
      await page.goto(url);
      if (o.waitReady !== false) await page.locator('html[data-ready="true"]').waitFor({ state: 'attached', timeout: 15_000 });
      const w = await world.worker();
      const tabId = await w.evaluate(async (u) => (await chrome.tabs.query({})).find((t) => t.url === u)?.id ?? -1, page.url());
      if (tabId < 0) throw new Error(`no tab shows ${page.url()}`);
      const r = await world.core.api.shareTab({ tabId });
      if (!r.ok) throw new Error(`shareTab: ${r.error.code} ${r.error.message}`);
      return { page, tabId };
    },
    async discover(tabId) {
      const r = await world.core.link.request({ op: 'discover', tabId }, { timeoutMs: 20_000 });
      if (!r.ok) throw new Error(`discover: ${r.error.code} ${r.error.message}`);
      return r.value;
    },
    request(req, o) {
      return world.core.link.request(req, o);
    },
    async invokeRequest(tool, args, over = {}, timeoutMs = 10_000) {
      const signed = await world.core.link.signGrant(await grantFields(tool, args, over));
      if (!signed.ok) throw new Error(`signGrant: ${signed.error.code} ${signed.error.message}`);
      return invokeRequestFor(tool, args, signed.value, timeoutMs);
    },
    invoke(req, o) {
      return world.core.link.request(req, o);
    },
    hostPids: () => pidsWith(socketPath),
    receipts: (q = {}) => world.core.ledger.query({ limit: 500, ...q }).receipts,
    execCount,
    async close() {
      await ext.context.close().catch(() => undefined);
      await stopCore().catch(() => undefined);
      if (ownDemo) await demo.close().catch(() => undefined);
      for (const d of [runDir, dataDir, userDataDir]) rmSync(d, { recursive: true, force: true });
    },
  };

  try {
    if (core && opts.pair !== false) await world.pair();
  } catch (e) {
    await world.close();
    throw e;
  }
  return world;
}

/**
 * Playwright fixtures:
 * - `demo` (worker scope): the demo and hostile servers, started once per worker;
 * - `world`: a fresh, paired and connected world per test;
 * - `launchWorld(opts)`: start worlds with other options; all are closed after the test.
 */
export const test = base.extend<{ world: LinkWorld; launchWorld: (o?: LinkWorldOptions) => Promise<LinkWorld> }, { demo: DemoServers }>({
  demo: [
    async ({}, use) => {
      const servers = await startDemoServers();
      await use(servers);
      await servers.close();
    },
    { scope: 'worker' },
  ],
  launchWorld: async ({ demo }, use) => {
    const started: LinkWorld[] = [];
    await use(async (o = {}) => {
      const w = await startLinkWorld({ demo, ...o });
      started.push(w);
      return w;
    });
    for (const w of started) await w.close();
  },
  world: async ({ launchWorld }, use) => {
    await use(await launchWorld());
  },
});

export { expect };
