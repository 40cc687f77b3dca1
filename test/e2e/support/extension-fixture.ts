/// <reference types="chrome" />
/**
 * Launch Debian's Chromium with the BUILT extension (extension/dist) loaded,
 * for end-to-end tests (docs/browser-facts.md, "Extensions: loading and ID":
 * `launchPersistentContext` with
 * `--load-extension` works headless; the service worker shows in
 * `context.serviceWorkers()`). Builds nothing: run `npm run build` (or
 * `npm run build:extension`) first.
 *
 * Use either `launchExtension()` directly or the `test` fixture below, which
 * gives each test a fresh profile, the extension's service worker and its ID:
 *
 *   import { test, expect } from './support/extension-fixture';
 *   test('x', async ({ ext }) => { await ext.worker.evaluate(() => 1); });
 */
import { mkdtempSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium, test as base, expect, type BrowserContext, type Worker } from '@playwright/test';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../chromium';
import { EXTENSION_ID } from '../../../src/shared/extension-id';
import { PAIRING_STORAGE_KEY } from '../../../extension/src/background/link';

/** The unpacked extension folder that `npm run build:extension` writes. */
export const EXTENSION_DIST = resolve(import.meta.dirname, '../../../extension/dist');

export interface ExtensionHandle {
  context: BrowserContext;
  /** The extension's service worker (background.js). */
  worker: Worker;
  /** The extension's ID (fixed by the manifest key: src/shared/extension-id.ts). */
  extensionId: string;
  /** The profile folder (`--user-data-dir`); write `NativeMessagingHosts/<name>.json` here before launching. */
  userDataDir: string;
  close(): Promise<void>;
}

export interface LaunchOptions {
  /** An existing profile folder (e.g. with a native messaging host manifest already written). Default: a new temporary one, removed on close. */
  userDataDir?: string;
  /** Extra Chromium flags. */
  args?: string[];
  /** Environment for the browser process (e.g. the console socket path for the native host). */
  env?: Record<string, string>;
  /** Playwright default flags to leave out, e.g. `--disable-popup-blocking` to test with Chrome's popup blocker on. */
  ignoreDefaultArgs?: string[];
}

/** Launch Chromium with extension/dist loaded and wait for its service worker. */
export async function launchExtension(opts: LaunchOptions = {}): Promise<ExtensionHandle> {
  if (!existsSync(join(EXTENSION_DIST, 'manifest.json'))) {
    throw new Error(`${EXTENSION_DIST} has no manifest.json: run "npm run build:extension" first`);
  }
  const own = opts.userDataDir === undefined;
  const userDataDir = opts.userDataDir ?? mkdtempSync(join(tmpdir(), 'echo-ext-profile-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [...CHROMIUM_ARGS, `--disable-extensions-except=${EXTENSION_DIST}`, `--load-extension=${EXTENSION_DIST}`, ...(opts.args ?? [])],
    ...(opts.env ? { env: { ...process.env, ...opts.env } as Record<string, string> } : {}),
    ...(opts.ignoreDefaultArgs ? { ignoreDefaultArgs: opts.ignoreDefaultArgs } : {}),
  });
  const isOurs = (w: Worker) => w.url().startsWith(`chrome-extension://${EXTENSION_ID}/`);
  const worker = context.serviceWorkers().find(isOurs) ?? (await context.waitForEvent('serviceworker', { predicate: isOurs, timeout: 20_000 }));
  return {
    context,
    worker,
    extensionId: new URL(worker.url()).host,
    userDataDir,
    async close() {
      await context.close().catch(() => undefined);
      if (own) rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Launch with a pairing key already stored, without a console: the key is
 * written exactly as the link stores it after pairing
 * (chrome.storage.local[PAIRING_STORAGE_KEY] = `{v: 1, pairingId, key: base64, pairedAt}`,
 * extension/src/background/link.ts) in a first launch, and the browser is
 * started again on the same profile so the link loads it at start. Tests
 * then sign grants with `signGrant(fields, key)` (src/shared/grant.ts) and the
 * extension verifies them with the same key.
 */
export async function launchPairedExtension(key: Uint8Array, opts: LaunchOptions & { pairingId?: string } = {}): Promise<ExtensionHandle> {
  const own = opts.userDataDir === undefined;
  const userDataDir = opts.userDataDir ?? mkdtempSync(join(tmpdir(), 'echo-ext-profile-'));
  const first = await launchExtension({ ...opts, userDataDir });
  const stored = { v: 1, pairingId: opts.pairingId ?? 'test-pairing', key: Buffer.from(key).toString('base64'), pairedAt: Date.now() };
  await first.worker.evaluate(([k, v]) => chrome.storage.local.set({ [k as string]: v }), [PAIRING_STORAGE_KEY, stored] as const);
  await first.close();
  const second = await launchExtension({ ...opts, userDataDir });
  return {
    ...second,
    async close() {
      await second.close();
      if (own) rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}

/** Playwright fixture: `ext` is a fresh browser with the extension, closed after the test. */
export const test = base.extend<{ ext: ExtensionHandle }>({
  ext: async ({}, use) => {
    const handle = await launchExtension();
    try {
      await use(handle);
    } finally {
      await handle.close();
    }
  },
});

/**
 * A Playwright test whose `paired` fixture is a fresh browser with the extension
 * already paired with `key` (so the test can sign grants), closed after each test.
 * `initScript` (e.g. the page-side execution counter) runs in every page first.
 */
export function pairedTest(key: Uint8Array, initScript?: string) {
  return base.extend<{ paired: ExtensionHandle }>({
    paired: async ({}, use) => {
      const ext = await launchPairedExtension(key);
      try {
        if (initScript) await ext.context.addInitScript(initScript);
        await use(ext);
      } finally {
        await ext.close();
      }
    },
  });
}

export { expect };
