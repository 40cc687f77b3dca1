// The console renderer in real Chromium, served by the loopback web host
// (src/main/web/server.ts) over the built renderer (out/renderer), against the
// in-test ConsoleApi holding one pending approval with hostile page text.
// Checks: every dialog field is rendered as text, hostile markup stays text,
// Enter approves nothing, "Approve once" calls decideApproval, "Deny" sends the
// reason, no CSP violation or console error; and it takes docs/screenshots/approval-dialog.png.
// Run `npx electron-vite build` first (`npm test` does).
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, expect, test, type Browser, type Page } from '@playwright/test';
import { fingerprint } from '../../src/shared/canonical';
import { startWebHost, type WebHost } from '../../src/main/web/server';
import { FakeConsole, sampleApproval } from '../support/fake-console';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from './chromium';

const RENDERER_DIR = path.resolve(process.env.ECHO_CONSOLE_RENDERER_DIR ?? 'out/renderer');
const SCREENSHOT = path.resolve('docs/screenshots/approval-dialog.png');

let browser: Browser;
let host: WebHost;
let fake: FakeConsole;
let page: Page;
let cspViolations: string[];

test.beforeAll(async () => {
  if (!existsSync(path.join(RENDERER_DIR, 'index.html'))) throw new Error(`The renderer is not built (${RENDERER_DIR}): run \`npx electron-vite build\` first.`);
  browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
});

test.afterAll(async () => {
  await browser?.close();
});

test.beforeEach(async () => {
  const now = Date.now();
  fake = new FakeConsole({
    approvals: [sampleApproval(now), sampleApproval(now + 1, { requestId: 'req-2', toolName: 'remove_item', title: 'Remove item', expiresAt: now + 300_000 })],
    receiptCount: 12,
  });
  host = await startWebHost({ api: fake, subscribe: (l) => fake.onEvent(l), rendererDir: RENDERER_DIR, port: 0 });
  page = await browser.newPage({ viewport: { width: 1280, height: 1000 }, deviceScaleFactor: 1 });
  cspViolations = [];
  // CSP violations, failed loads and Permissions-Policy complaints all surface here.
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning' || /Content Security Policy|Refused to/i.test(m.text())) cspViolations.push(m.text());
  });
  await page.goto(host.consoleUrl);
});

test.afterEach(async () => {
  await page?.close();
  await host?.close();
});

/** Round trip: close the dialog, verify the ledger, and wait for the answer. Calls on one WebSocket arrive in order. */
async function flushCalls(): Promise<void> {
  await page.getByTestId('close-button').click();
  await page.getByTestId('nav-receipts').click();
  await page.getByTestId('verify-ledger').click();
  await expect(page.getByTestId('verify-report')).toContainText('Chain intact');
}

test('the approval dialog shows every field as text, and Enter approves nothing', async () => {
  const a = fake.approvals[0]!;
  const dialog = page.getByRole('dialog');
  await expect(dialog).toBeVisible();

  // The token left the address bar at once.
  expect(page.url()).toBe(`${host.origin}/`);

  const text = (id: string) => page.getByTestId(id);
  await expect(text('field-tool-name')).toHaveText(a.toolName);
  await expect(text('field-title')).toHaveText(a.title);
  await expect(text('field-origin')).toHaveText(a.origin);
  await expect(text('field-tab-title')).toHaveText(a.tab.title);
  await expect(text('field-tab-url')).toHaveText(a.tab.url);
  await expect(text('field-frame')).toHaveText('0 (top frame)');
  await expect(text('field-document-id')).toHaveText(a.documentId);
  await expect(text('field-descriptor-hash')).toHaveText(a.descriptorHash);
  await expect(text('field-descriptor-hash-fingerprint')).toHaveText(fingerprint(a.descriptorHash));
  await expect(text('field-arguments-hash')).toHaveText(a.argumentsHash);
  await expect(text('field-arguments-hash-fingerprint')).toHaveText(fingerprint(a.argumentsHash));
  await expect(text('field-agent')).toHaveText(a.agent.name);
  await expect(text('field-annotations')).toContainText('The page says: read-only — yes');
  await expect(text('field-arguments')).toHaveText(JSON.stringify(a.arguments, null, 2));
  await expect(text('field-description')).toHaveText(a.description);
  await expect(text('field-schema')).toHaveText(JSON.stringify(a.inputSchema, null, 2));
  await expect(text('field-time-left')).toHaveText(/^\d+:\d\d left$/);

  // Hostile markup stayed text: no element was created from it, no handler ran.
  expect(await dialog.locator('img, script, b').count()).toBe(0);
  expect(await page.evaluate('globalThis.__pwned')).toBeUndefined();

  // Focus starts on the dialog itself, not on a button.
  await expect(dialog).toBeFocused();
  await page.keyboard.press('Enter');
  // Once armed, Enter on the dialog and in the reason field still decides nothing.
  await expect(text('approve-button')).toBeEnabled();
  await page.keyboard.press('Enter');
  await text('deny-reason').fill('typing a reason');
  await page.keyboard.press('Enter');
  await expect(dialog).toBeVisible();

  await flushCalls();
  expect(fake.calls.map((c) => c.method)).toContain('verifyLedger');
  expect(fake.calls.filter((c) => c.method === 'decideApproval')).toEqual([]);
  expect(cspViolations).toEqual([]);
});

test('"Approve once" calls decideApproval for exactly that request (and takes the screenshot)', async () => {
  const dialog = page.getByRole('dialog');
  await expect(dialog).toBeVisible();
  await expect(page.getByTestId('approve-button')).toBeEnabled();
  mkdirSync(path.dirname(SCREENSHOT), { recursive: true });
  await page.screenshot({ path: SCREENSHOT });

  await page.getByTestId('approve-button').click();
  await expect.poll(() => fake.calls.filter((c) => c.method === 'decideApproval')).toEqual([
    { method: 'decideApproval', params: { requestId: 'req-1', decision: 'approve' } },
  ]);
  // The next pending request opens by itself, its own dialog, focus on nothing.
  await expect(page.getByTestId('field-tool-name')).toHaveText('remove_item');
  await expect(dialog).toBeFocused();
  expect(cspViolations).toEqual([]);
});

test('"Deny" sends the optional reason', async () => {
  await expect(page.getByRole('dialog')).toBeVisible();
  await page.getByTestId('deny-reason').fill('Not this one');
  await page.getByTestId('deny-button').click();
  await expect.poll(() => fake.calls.filter((c) => c.method === 'decideApproval')).toEqual([
    { method: 'decideApproval', params: { requestId: 'req-1', decision: 'deny', reason: 'Not this one' } },
  ]);
});

test('receipts are listed newest first and page through queryReceipts; the ledger verifies', async () => {
  await page.getByTestId('close-button').click();
  await page.getByTestId('nav-receipts').click();
  const rows = page.getByTestId('receipt-row');
  await expect(rows).toHaveCount(12);
  await expect(rows.first()).toContainText('12');
  await page.getByTestId('verify-ledger').click();
  await expect(page.getByTestId('verify-report')).toHaveText(/Chain intact: 12 receipts/);
});

test('the connection panel shows the endpoint and shares a tab', async () => {
  await page.getByTestId('close-button').click();
  await page.getByTestId('nav-connection').click();
  await expect(page.getByTestId('link-status')).toContainText('Connected');
  await expect(page.getByTestId('endpoint-url')).toHaveText(fake.endpoint.url);
  await expect(page.getByTestId('endpoint-token')).not.toContainText(fake.endpoint.token);
  await page.getByTestId('toggle-token').click();
  await expect(page.getByTestId('endpoint-token')).toHaveText(fake.endpoint.token);
  await page.getByTestId('share-tab-open').click();
  await page.getByTestId('share-7').click();
  await expect(page.getByTestId('unshare-7')).toBeVisible();
  expect(fake.calls.some((c) => c.method === 'shareTab' && (c.params as { tabId: number }).tabId === 7)).toBe(true);
});
