/**
 * The console renderer in real Chromium against an in-test console API: the built
 * renderer (out/renderer, or $ECHO_CONSOLE_RENDERER_DIR) served by the REAL loopback
 * web host (src/main/web/server.ts) over a FakeConsole (test/support/fake-console.ts).
 * Shared by the e2e files that test the console UI and its web session.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { chromium, test, type Browser } from '@playwright/test';
import { startWebHost, type WebHost, type WebHostOptions } from '../../../src/main/web/server';
import type { FakeConsole } from '../../support/fake-console';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../chromium';

/** The built renderer's folder. */
export const RENDERER_DIR = path.resolve(process.env.ECHO_CONSOLE_RENDERER_DIR ?? 'out/renderer');

/**
 * Launch Chromium for the console's pages, once the renderer is known to be built.
 * @throws Error naming the build command when out/renderer has no index.html.
 */
async function launchConsoleBrowser(): Promise<Browser> {
  if (!existsSync(path.join(RENDERER_DIR, 'index.html'))) throw new Error(`The renderer is not built (${RENDERER_DIR}): run \`npx electron-vite build\` first.`);
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
}

/**
 * One Chromium for the whole spec file: launched before its first test (once the
 * renderer is known to be built), closed after its last. Call at the file's top level.
 * @returns the browser, once launched (call it inside tests and hooks).
 */
export function useConsoleBrowser(): () => Browser {
  let browser: Browser | undefined;
  test.beforeAll(async () => {
    browser = await launchConsoleBrowser();
  });
  test.afterAll(async () => {
    await browser?.close();
  });
  return () => {
    if (!browser) throw new Error('The console browser is not launched yet (use it inside a test or a hook).');
    return browser;
  };
}

/**
 * Serve the renderer over `fake` on a loopback web host (a free port unless `more.port` says).
 * @param more further host options (port, token, sessionKey: a host that comes back on the same address).
 */
export function startFakeWebHost(fake: FakeConsole, more: Partial<Omit<WebHostOptions, 'api' | 'subscribe' | 'rendererDir'>> = {}): Promise<WebHost> {
  return startWebHost({ api: fake, subscribe: (l) => fake.onEvent(l), rendererDir: RENDERER_DIR, port: 0, ...more });
}
