/// <reference types="chrome" />
/**
 * Version skew over the whole real chain (console Bridge on a Unix socket, the
 * bundled native host started by Chromium, the built extension): a console of
 * another link protocol version is never a silent failure. The popup says
 * which side to update, in plain words, and so does the console's link label
 * (the text of the Connection panel and the badge, `linkLabel`).
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { test, expect, launchExtension, type ExtensionHandle } from './support/extension-fixture';
import { Bridge, MemorySecretStore } from '../../src/main/core/bridge/index';
import { writeHostManifestForProfile } from '../../src/main/core/bridge/host-manifest';
import { EXTENSION_ID } from '../../src/shared/extension-id';
import type { LinkStatus } from '../../src/shared/ipc';
import { PROTOCOL_VERSION } from '../../src/shared/protocol';
import { linkLabel } from '../../src/renderer/stores/connection';

const HOST_SCRIPT = resolve(import.meta.dirname, '../../out/tools/native-host.mjs');

let dir: string | undefined;
let bridge: Bridge | undefined;
let ext: ExtensionHandle | undefined;

test.afterEach(async () => {
  await ext?.close();
  await bridge?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
  ext = bridge = dir = undefined;
});

/** A console speaking `version`, its host registered in a fresh profile, and the extension loaded there. */
async function world(version: number): Promise<{ bridge: Bridge; ext: ExtensionHandle }> {
  if (!existsSync(HOST_SCRIPT)) throw new Error(`${HOST_SCRIPT} is missing: run "npm run build" first`);
  dir = mkdtempSync(join(tmpdir(), 'echo-v-')); // short: Unix socket paths stay under ~100 bytes
  const socketPath = join(dir, 'c.sock');
  const profile = join(dir, 'profile');
  bridge = new Bridge({
    socketPath,
    expectedExtensionIds: [EXTENSION_ID],
    secretStore: new MemorySecretStore(),
    logger: { info: () => {}, warn: () => {} },
    protocolVersion: version,
  });
  const started = await bridge.start();
  if (!started.ok) throw new Error(started.error.message);
  await writeHostManifestForProfile(profile, { extensionIds: [EXTENSION_ID], hostScript: HOST_SCRIPT, socketPath, nodePath: process.execPath });
  ext = await launchExtension({ userDataDir: profile });
  return { bridge, ext };
}

function until(b: Bridge, pred: (s: LinkStatus) => boolean, what: string): Promise<LinkStatus> {
  return new Promise((res, rej) => {
    if (pred(b.status())) return res(b.status());
    const timer = setTimeout(() => {
      off();
      rej(new Error(`timed out waiting for ${what}; console=${JSON.stringify(b.status())}`));
    }, 20_000);
    const off = b.onStatus((s) => {
      if (!pred(s)) return;
      clearTimeout(timer);
      off();
      res(s);
    });
  });
}

test('a console newer than the extension: both say "update the extension"', async () => {
  const w = await world(PROTOCOL_VERSION + 1);
  const status = await until(w.bridge, (s) => s.state === 'version-mismatch', 'the console sees the mismatch');
  expect(status.problem?.code).toBe('extension-outdated');
  expect(linkLabel(status, Date.now())).toMatchObject({ tone: 'bad', text: 'Update the extension', detail: expect.stringMatching(/^Update the Echo Console extension: it is older than the console/) });

  const popup = await w.ext.context.newPage();
  await popup.goto(`chrome-extension://${w.ext.extensionId}/popup/popup.html`);
  await expect(popup.locator('#link-dot')).toHaveAttribute('data-state', 'version-mismatch');
  await expect(popup.locator('#link-dot')).toHaveAttribute('data-problem', 'extension-outdated');
  await expect(popup.locator('#link-label')).toHaveText('Update the extension: it is older than Echo Console.');
  await expect(popup.locator('#link-message')).toContainText(`the extension speaks link protocol v${PROTOCOL_VERSION}, the console v${PROTOCOL_VERSION + 1}`);
  await expect(popup.locator('#retry')).toBeVisible();
});

test('a console older than the extension: both say "update Echo Console"', async () => {
  const w = await world(PROTOCOL_VERSION - 1);
  const status = await until(w.bridge, (s) => s.state === 'version-mismatch', 'the console sees the mismatch');
  expect(status.problem?.code).toBe('console-outdated');
  expect(linkLabel(status, Date.now()).text).toBe('Update Echo Console');

  const popup = await w.ext.context.newPage();
  await popup.goto(`chrome-extension://${w.ext.extensionId}/popup/popup.html`);
  await expect(popup.locator('#link-dot')).toHaveAttribute('data-problem', 'console-outdated');
  await expect(popup.locator('#link-label')).toHaveText('Update Echo Console: it is older than this extension.');
  await expect(popup.locator('#link-message')).toContainText('Update Echo Console');
});
