/// <reference types="chrome" />
/**
 * The whole chain, nothing replaced: the console's Bridge on a private Unix
 * socket, the bundled native host (out/tools/native-host.mjs, from
 * `npm run build`) started by Chromium itself through a host manifest in
 * `<user-data-dir>/NativeMessagingHosts/` (docs/browser-facts.md, "Native
 * messaging"), the built extension's
 * link, pairing confirmed by the person (here: the test) after comparing the
 * code the popup shows, then share → discover → grant → invoke over real
 * native messaging, and the popup's "connected" following live heartbeats.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { test, expect, launchExtension, type ExtensionHandle } from './support/extension-fixture';
import { grantFields, invokeRequestFor } from './support/invocation';
import { confirmInPopup } from './support/pairing';
import { startTestPages, toolScript, type TestPages } from './support/extension-pages';
import { Bridge, MemorySecretStore } from '../../src/main/core/bridge/index';
import { writeHostManifestForProfile } from '../../src/main/core/bridge/host-manifest';
import { EXTENSION_ID } from '../../src/shared/extension-id';
import type { ExtensionEvent } from '../../src/shared/protocol';
import type { LinkStatus } from '../../src/shared/ipc';

const HOST_SCRIPT = resolve(import.meta.dirname, '../../out/tools/native-host.mjs');

let dir: string;
let bridge: Bridge;
let ext: ExtensionHandle;
let pages: TestPages;
const events: ExtensionEvent[] = [];

function until(pred: (s: LinkStatus) => boolean, what: string, timeoutMs = 20_000): Promise<LinkStatus> {
  return new Promise((resolveStatus, reject) => {
    if (pred(bridge.status())) return resolveStatus(bridge.status());
    const timer = setTimeout(() => {
      off();
      reject(new Error(`timed out waiting for ${what}; console=${JSON.stringify(bridge.status())}`));
    }, timeoutMs);
    const off = bridge.onStatus((s) => {
      if (!pred(s)) return;
      clearTimeout(timer);
      off();
      resolveStatus(s);
    });
  });
}

test.describe.configure({ mode: 'serial' });
test.beforeAll(async () => {
  test.setTimeout(120_000);
  if (!existsSync(HOST_SCRIPT)) throw new Error(`${HOST_SCRIPT} is missing: run "npm run build" first`);
  dir = mkdtempSync(join(tmpdir(), 'echo-l-')); // short: Unix socket paths must stay under ~100 bytes
  const socketPath = join(dir, 'c.sock');
  const profile = join(dir, 'profile');
  bridge = new Bridge({
    socketPath,
    expectedExtensionIds: [EXTENSION_ID],
    secretStore: new MemorySecretStore(),
    logger: { info: () => {}, warn: () => {} },
    timing: { heartbeatIntervalMs: 1_000, heartbeatTimeoutMs: 10_000 },
  });
  const started = await bridge.start();
  if (!started.ok) throw new Error(started.error.message);
  bridge.onEvent((e) => events.push(e));
  await writeHostManifestForProfile(profile, { extensionIds: [EXTENSION_ID], hostScript: HOST_SCRIPT, socketPath, nodePath: process.execPath });
  pages = await startTestPages();
  pages.set('/shop', `<!doctype html><title>Shop</title><script>${toolScript('add')}</script>`);
  ext = await launchExtension({ userDataDir: profile });
});
test.afterAll(async () => {
  await ext?.close();
  await bridge?.stop();
  await pages?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('pairs after the person compares the code the popup shows, then shows "connected" from live heartbeats', async () => {
  const awaiting = await until((s) => s.state === 'awaiting-pairing' && !!s.pairingCode, 'the pairing code');
  const popup = await ext.context.newPage();
  await popup.goto(`chrome-extension://${ext.extensionId}/popup/popup.html`);
  await expect(popup.locator('#link-dot')).toHaveAttribute('data-state', 'awaiting-pairing');
  await expect(popup.locator('#pairing-code')).toHaveText(awaiting.pairingCode!);
  await confirmInPopup(popup); // the person confirms in the popup too (issue 9 item 1)
  const confirmed = await bridge.confirmPairing(true);
  expect(confirmed.ok).toBe(true);
  await until((s) => s.state === 'connected', 'connected');
  await expect(popup.locator('#link-dot')).toHaveAttribute('data-state', 'connected');
  await expect(popup.locator('#link-label')).toHaveText('Connected to the console');
  await popup.close();
});

test('share → discover → grant → invoke over real native messaging', async () => {
  const page = await ext.context.newPage();
  await page.goto(`${pages.a}/shop?token=SECRET`);
  const shareable = await bridge.request({ op: 'list-shareable-tabs' });
  if (!shareable.ok) throw new Error(shareable.error.message);
  const tab = shareable.value.find((t) => t.url.startsWith(`${pages.a}/shop`))!;
  expect(tab.url).toBe(`${pages.a}/shop`); // the token never left the browser
  const shared = await bridge.request({ op: 'share-tab', tabId: tab.tabId });
  expect(shared.ok).toBe(true);
  await expect.poll(() => events.some((e) => e.kind === 'tabs-changed' && e.tabs.some((t) => t.tabId === tab.tabId))).toBe(true);

  const d = await bridge.request({ op: 'discover', tabId: tab.tabId });
  if (!d.ok) throw new Error(d.error.message);
  const add = d.value.tools.find((t) => t.name === 'add')!;
  const args = { a: 40, b: 2 };
  const grant = await bridge.signGrant(await grantFields(add, args));
  if (!grant.ok) throw new Error(grant.error.message);
  const req = invokeRequestFor(add, args, grant.value, 10_000);
  const r = await bridge.request(req);
  expect(r).toMatchObject({ ok: true, value: { outcome: 'succeeded', result: '{"sum":42}' } });
  const again = await bridge.request(req);
  expect(again).toMatchObject({ ok: true, value: { outcome: 'refused', refusal: 'grant-reused' } });
  await page.close();
});

test('when the console goes away the popup stops saying "connected"', async () => {
  const popup = await ext.context.newPage();
  await popup.goto(`chrome-extension://${ext.extensionId}/popup/popup.html`);
  await expect(popup.locator('#link-dot')).toHaveAttribute('data-state', 'connected');
  await bridge.stop();
  await expect(popup.locator('#link-dot')).not.toHaveAttribute('data-state', 'connected', { timeout: 20_000 });
});
