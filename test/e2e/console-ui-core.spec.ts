// The built renderer in Chromium over the loopback web host, wired to the REAL
// console core (ledger, settings, bridge, MCP endpoint) in a temporary data
// folder: the snapshot, the endpoint, token rotation, a settings change and the
// ledger check all go through the same path as `npm run start:web`; and the
// host stopping and coming back (the banner, then the core's newer state). (The
// full run with the extension loaded lives with the end-to-end tests of the core.)
import { expect, test, type Browser } from '@playwright/test';
import type { ConsoleCore } from '../../src/main/core';
import type { WebHost } from '../../src/main/web/server';
import { startRealConsole, type RealConsole } from './support/real-console';


let world: RealConsole;
let browser: Browser;
let core: ConsoleCore;
let host: WebHost;

test.beforeAll(async () => {
  world = await startRealConsole('echo-ui-core-');
  ({ core, host, browser } = world);
});

test.afterAll(async () => {
  await world?.close();
});

test('the console shows the real core: endpoint, link, token rotation, settings, ledger', async () => {
  const page = await browser.newPage();
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') problems.push(m.text());
  });
  await page.goto(host.newConsoleUrl());
  await expect(page.getByTestId('approvals-empty')).toBeVisible();

  await page.getByTestId('nav-connection').click();
  await expect(page.getByTestId('endpoint-url')).toHaveText(core.endpoint.url);
  await expect(page.getByTestId('link-status')).toContainText('Not connected');
  const before = core.endpoint.token;
  await page.getByTestId('rotate-token').click();
  await page.getByTestId('rotate-confirm').click();
  await page.getByTestId('toggle-token').click();
  await expect(page.getByTestId('endpoint-token')).toHaveText(core.endpoint.token);
  expect(core.endpoint.token).not.toBe(before);

  await page.getByTestId('nav-settings').click();
  await page.getByTestId('approval-timeout').fill('45');
  await page.getByTestId('save-settings').click();
  await expect(page.getByText('Saved.')).toBeVisible();
  expect(await core.api.getSnapshot()).toMatchObject({ ok: true, value: { settings: { approvalTimeoutMs: 45_000 } } });

  await page.getByTestId('nav-receipts').click();
  await expect(page.getByTestId('receipt-row').first()).toContainText('token-rotated');
  await page.getByTestId('verify-ledger').click();
  await expect(page.getByTestId('verify-report')).toHaveText(/^Chain intact: \d+ receipts?/);
  expect(problems).toEqual([]);
  await page.close();
});

test('the web host stops and comes back: the banner, the link unknown, verify disabled; then the real core’s newer state', async () => {
  const page = await browser.newPage();
  const problems: string[] = [];
  page.on('console', (m) => {
    // The browser's own notes about refused connections are expected while the host is down
    // (the socket's reconnect attempts; under load Chromium also logs them as a failed resource load).
    if ((m.type() === 'error' || m.type() === 'warning') && !/WebSocket connection to .* failed|Failed to load resource: net::ERR_CONNECTION_REFUSED/.test(m.text())) problems.push(m.text());
  });
  await page.goto(host.newConsoleUrl());
  await page.getByTestId('nav-receipts').click();
  await expect(page.getByTestId('receipt-row').first()).toBeVisible();
  await expect(page.getByTestId('console-banner')).toHaveCount(0);
  const { port, token, sessionKey } = host;

  await host.close(); // what Ctrl+C does (src/main/web/index.ts)
  await expect(page.getByTestId('console-banner')).toContainText('The console is not running or this page lost its connection to it. Reconnecting…');
  await expect(page.getByTestId('link-pill')).toHaveText('Unknown');
  await expect(page.getByTestId('verify-ledger')).toBeDisabled();

  // While the page cannot see it, the core moves on; then the host serves again on the same address.
  const rotated = await core.api.rotateToken();
  expect(rotated.ok).toBe(true);
  // The same session key: the tab's cookie still opens it (a real restart ends every session; unit/host-web).
  host = world.host = await world.startHost({ port, token, sessionKey });
  await expect(page.getByTestId('console-banner')).toHaveCount(0, { timeout: 15_000 });
  await expect(page.getByTestId('receipt-row').first()).toContainText('token-rotated');
  await expect(page.getByTestId('receipt-row').first().getByTestId('receipt-actor')).toHaveText('person');
  await expect(page.getByTestId('receipt-row').first().getByTestId('receipt-subject')).toHaveText('console');
  await page.getByTestId('verify-ledger').click();
  await expect(page.getByTestId('verify-report')).toHaveText(/^Chain intact: \d+ receipts?/);
  await page.getByTestId('nav-connection').click();
  await expect(page.getByTestId('link-status')).toContainText('Not connected');
  await page.getByTestId('toggle-token').click();
  await expect(page.getByTestId('endpoint-token')).toHaveText(core.endpoint.token);
  expect(problems).toEqual([]);
  await page.close();
});
