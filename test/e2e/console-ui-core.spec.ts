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

test('the console shows the real core: endpoint, link, agent tokens (the secret once, never in what the page receives), settings, ledger', async () => {
  // A token the person made earlier: its secret must never reach this page again (issue 9 items 2 and 4).
  const earlier = await core.api.createAgentToken({ name: 'Earlier agent' });
  if (!earlier.ok) throw new Error(earlier.error.message);
  const page = await browser.newPage();
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') problems.push(m.text());
  });
  // Everything the page receives from the host (the snapshot, events, answers).
  const received: string[] = [];
  page.on('websocket', (ws) => ws.on('framereceived', (f) => received.push(String(f.payload))));
  await page.goto(host.newConsoleUrl());
  await expect(page.getByTestId('approvals-empty')).toBeVisible();

  await page.getByTestId('nav-connection').click();
  await expect(page.getByTestId('endpoint-url')).toHaveText(core.endpoint.url);
  await expect(page.getByTestId('link-status')).toContainText('Not connected');
  await expect(page.getByTestId(`agent-token-${earlier.value.token.id}`)).toContainText('Earlier agent');
  expect(received.length).toBeGreaterThan(0);
  expect(received.filter((f) => f.includes(earlier.value.secret))).toEqual([]);
  // The person creates a token: its secret is shown once, and works.
  await page.getByTestId('token-name').fill('Claude Desktop');
  await page.getByTestId('create-token').click();
  const secret = (await page.getByTestId('new-token-secret').textContent()) ?? '';
  expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
  const made = core.agentTokens().find((t) => t.name === 'Claude Desktop')!;
  expect(core.settings.findAgentToken(secret)?.id).toBe(made.id);
  await page.getByTestId('new-token-done').click();
  await expect(page.getByTestId('new-token')).toHaveCount(0);
  // Revoked from the console: gone from the list, and its secret matches nothing.
  await page.getByTestId(`revoke-${made.id}`).click();
  await page.getByTestId(`revoke-confirm-${made.id}`).click();
  await expect(page.getByTestId(`agent-token-${made.id}`)).toHaveCount(0);
  expect(core.settings.findAgentToken(secret)).toBeNull();

  await page.getByTestId('nav-settings').click();
  await page.getByTestId('approval-timeout').fill('45');
  await page.getByTestId('save-settings').click();
  await expect(page.getByText('Saved.')).toBeVisible();
  expect(await core.api.getSnapshot()).toMatchObject({ ok: true, value: { settings: { approvalTimeoutMs: 45_000 } } });

  await page.getByTestId('nav-receipts').click();
  await expect(page.getByTestId('receipt-row').first()).toContainText('token-revoked');
  await page.getByTestId('verify-ledger').click();
  await expect(page.getByTestId('verify-report')).toHaveText(/^Chain intact: \d+ receipts?/);
  // Only the answer to the person's own Create carried a secret; no snapshot or event did.
  expect(received.filter((f) => f.includes(earlier.value.secret))).toEqual([]);
  expect(received.filter((f) => f.includes(secret)).map((f) => (JSON.parse(f) as { id?: unknown }).id !== undefined)).toEqual([true]);
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
  const created = await core.api.createAgentToken({ name: 'Made while away' });
  expect(created.ok).toBe(true);
  // The same session key: the tab's cookie still opens it (a real restart ends every session; unit/host-web).
  host = world.host = await world.startHost({ port, token, sessionKey });
  await expect(page.getByTestId('console-banner')).toHaveCount(0, { timeout: 15_000 });
  await expect(page.getByTestId('receipt-row').first()).toContainText('token-created');
  await expect(page.getByTestId('receipt-row').first().getByTestId('receipt-actor')).toHaveText('person');
  await expect(page.getByTestId('receipt-row').first().getByTestId('receipt-subject')).toHaveText('console');
  await page.getByTestId('verify-ledger').click();
  await expect(page.getByTestId('verify-report')).toHaveText(/^Chain intact: \d+ receipts?/);
  await page.getByTestId('nav-connection').click();
  await expect(page.getByTestId('link-status')).toContainText('Not connected');
  await expect(page.getByTestId('agent-tokens')).toContainText('Made while away');
  expect(problems).toEqual([]);
  await page.close();
});
