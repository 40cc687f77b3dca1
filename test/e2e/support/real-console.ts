/**
 * The real console core (ledger, settings, bridge, MCP endpoint) in a temporary
 * data folder, its loopback web host serving the BUILT renderer, and a Chromium
 * to open it in — what the console-UI end-to-end tests share. No extension: the
 * link stays unconnected.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type Browser } from '@playwright/test';
import { createConsoleCore, type ConsoleCore, type ConsoleCoreOptions } from '../../../src/main/core';
import { startWebHost, type WebHost } from '../../../src/main/web/server';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../chromium';

/** The built renderer (`npx electron-vite build`), or $ECHO_CONSOLE_RENDERER_DIR. */
export const RENDERER_DIR = path.resolve(process.env.ECHO_CONSOLE_RENDERER_DIR ?? 'out/renderer');

export interface RealConsole {
  core: ConsoleCore;
  /** The web host; a test that stops it may start another on the same port, token and session key (`startHost`). */
  host: WebHost;
  browser: Browser;
  /** The temporary folder: `data/` is the console's data folder. */
  dir: string;
  /** A web host for this core (port 0: any free one). */
  startHost(opts?: { port?: number; token?: string; sessionKey?: Buffer }): Promise<WebHost>;
  /** Close the browser, the current host and the core; remove the folder. */
  close(): Promise<void>;
}

/**
 * Start the real core, its web host and a Chromium.
 * @param prefix of the temporary folder's name.
 * @param opts.prepare called with the data folder (created, 0700) before the core opens it: e.g. to write a generated ledger.db.
 * @param opts further core options (an injected clock, say).
 * @throws Error when the renderer is not built.
 */
export async function startRealConsole(prefix: string, opts: { prepare?(dataDir: string): void } & Partial<ConsoleCoreOptions> = {}): Promise<RealConsole> {
  if (!existsSync(path.join(RENDERER_DIR, 'index.html'))) throw new Error(`The renderer is not built (${RENDERER_DIR}): run \`npx electron-vite build\` first.`);
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  const { prepare, ...more } = opts;
  if (prepare) {
    mkdirSync(path.join(dir, 'data'), { mode: 0o700 });
    prepare(path.join(dir, 'data'));
  }
  const core = createConsoleCore({ dataDir: path.join(dir, 'data'), socketPath: path.join(dir, 'link.sock'), mcpPort: 0, logger: { info: () => {}, warn: () => {} }, ...more });
  await core.start();
  const startHost = (opts: { port?: number; token?: string; sessionKey?: Buffer } = {}) =>
    startWebHost({
      api: core.api,
      subscribe: (l) => core.onEvent(l),
      rendererDir: RENDERER_DIR,
      port: opts.port ?? 0,
      ...(opts.token ? { token: opts.token } : {}),
      ...(opts.sessionKey ? { sessionKey: opts.sessionKey } : {}),
    });
  const world: RealConsole = {
    core,
    host: await startHost(),
    browser: await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS }),
    dir,
    startHost,
    async close() {
      await world.browser.close();
      await world.host.close();
      await core.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return world;
}
