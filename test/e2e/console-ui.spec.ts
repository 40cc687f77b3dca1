// The console renderer in real Chromium, served by the loopback web host
// (src/main/web/server.ts) over the built renderer (out/renderer), against the
// in-test ConsoleApi holding one pending approval with hostile page text.
// Checks: every dialog field is rendered as text, hostile markup stays text,
// Enter approves nothing, "Approve once" calls decideApproval, "Deny" sends the
// reason, no CSP violation or console error; and it takes docs/screenshots/approval-dialog.png.
// Also: the receipts table (actor, faculty, reasons, expandable rows, lookup,
// virtualization), the pairing notice on every page, and the host going away
// and coming back (the banner, disabled actions, the refreshed snapshot).
// Run `npx electron-vite build` first (`npm test` does).
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { fingerprint } from '../../src/shared/canonical';
import type { Receipt } from '../../src/shared/receipt';
import type { WebHost } from '../../src/main/web/server';
import { sessionFromFragment } from '../../src/renderer/transport/token';
import { FakeConsole, sampleApproval } from '../support/fake-console';
import { startFakeWebHost, useConsoleBrowser } from './support/web-console';

// The README's copy is refreshed only on request (ECHO_UPDATE_SCREENSHOTS=1), so test runs leave the tree clean.
const SCREENSHOT = path.resolve(process.env.ECHO_UPDATE_SCREENSHOTS === '1' ? 'docs/screenshots/approval-dialog.png' : 'test-results/approval-dialog.png');

const browser = useConsoleBrowser();
let host: WebHost;
let fake: FakeConsole;
let page: Page;
let cspViolations: string[];

test.beforeEach(async () => {
  const now = Date.now();
  fake = new FakeConsole({
    approvals: [sampleApproval(now), sampleApproval(now + 1, { requestId: 'req-2', subject: { ...sampleApproval(now).subject, toolName: 'remove_item', title: 'Remove item' }, expiresAt: now + 300_000 })],
    receiptCount: 12,
  });
  host = await startFakeWebHost(fake);
  page = await browser().newPage({ viewport: { width: 1280, height: 1000 }, deviceScaleFactor: 1 });
  cspViolations = [];
  // CSP violations, failed loads and Permissions-Policy complaints all surface here.
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning' || /Content Security Policy|Refused to/i.test(m.text())) cspViolations.push(m.text());
  });
  await page.goto(host.newConsoleUrl());
  // The one-time link is spent once the session id is in the fragment: a reload before that would
  // present the spent link again (docs/hosts.md, "Loopback web host rules").
  await page.waitForURL(/#session=/);
});

test.afterEach(async () => {
  await page?.close();
  await host?.close();
});

/** Scroll the dialog to the end of the request: "Approve once" arms only once the person has seen it all (issue 9 item 5). */
async function reviewToEnd(): Promise<void> {
  await page.getByTestId('end-of-request').scrollIntoViewIfNeeded();
}

/** Round trip: close the dialog, verify the ledger, and wait for the answer. Calls on one WebSocket arrive in order. */
async function flushCalls(): Promise<void> {
  await page.getByTestId('close-button').click();
  await page.getByTestId('nav-receipts').click();
  await page.getByTestId('verify-ledger').click();
  await expect(page.getByTestId('verify-report')).toContainText('Chain intact');
}

test('the approval dialog shows every field as text, and Enter approves nothing', async () => {
  const a = fake.approvals[0] as ReturnType<typeof sampleApproval>;
  const dialog = page.getByRole('dialog');
  await expect(dialog).toBeVisible();

  // The token left the address bar at once.
  // (What stays is the session id, useless without the HttpOnly cookie: e2e/trust-console-session.)
  expect(page.url()).toMatch(new RegExp(`^${host.origin}/#session=[A-Za-z0-9_-]{32}$`));

  const text = (id: string) => page.getByTestId(id);
  await expect(text('field-tool-name')).toHaveText(a.subject.toolName);
  await expect(text('field-title')).toHaveText(a.subject.title);
  await expect(text('field-origin')).toHaveText(a.origin);
  await expect(text('field-tab-title')).toHaveText(a.tab.title);
  await expect(text('field-tab-url')).toHaveText(a.tab.url);
  await expect(text('field-frame')).toHaveText('0 (top frame)');
  await expect(text('field-document-id')).toHaveText(a.documentId);
  await expect(text('field-descriptor-hash')).toHaveText(a.subjectHash);
  await expect(text('field-descriptor-hash-fingerprint')).toHaveText(fingerprint(a.subjectHash));
  await expect(text('field-arguments-hash')).toHaveText(a.argumentsHash);
  await expect(text('field-arguments-hash-fingerprint')).toHaveText(fingerprint(a.argumentsHash));
  await expect(text('field-agent')).toHaveText(a.agent.name);
  // What the client calls itself is beside the token's name, marked as its own claim.
  await expect(text('field-agent-declared')).toHaveText(` (calls itself “${a.agent.clientName}” ${a.agent.version} — self-declared)`);
  await expect(text('field-annotations')).toContainText('The browser reports: read-only — yes');
  await expect(text('field-arguments')).toHaveText(JSON.stringify(a.arguments, null, 2));
  await expect(text('field-description')).toHaveText(a.subject.description);
  await expect(text('field-schema')).toHaveText(JSON.stringify(a.subject.inputSchema, null, 2));
  await expect(text('field-time-left')).toHaveText(/^\d+:\d\d left$/);

  // Hostile markup stayed text: no element was created from it, no handler ran.
  expect(await dialog.locator('img, script, b').count()).toBe(0);
  expect(await page.evaluate('globalThis.__pwned')).toBeUndefined();

  // Focus starts on the dialog itself, not on a button.
  await expect(dialog).toBeFocused();
  await page.keyboard.press('Enter');
  // Once armed, Enter on the dialog and in the reason field still decides nothing.
  await expect(text('approve-button')).toBeDisabled(); // not before the end of the request was seen
  await expect(page.getByTestId('scroll-to-arm')).toBeVisible();
  await reviewToEnd();
  await expect(page.getByTestId('scroll-to-arm')).toHaveCount(0);
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
  await reviewToEnd();
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

test('when the request under review goes away and the next one shows, "Approve once" is disarmed in that very render: no frame where a click meant for the first approves the second', async () => {
  await expect(page.getByTestId('field-tool-name')).toHaveText((fake.approvals[0] as ReturnType<typeof sampleApproval>).subject.toolName);
  await reviewToEnd();
  await expect(page.getByTestId('approve-button')).toBeEnabled();
  // Record, at every DOM change (a MutationObserver runs before the browser paints), which
  // request the dialog shows and whether its Approve button can be clicked.
  // (A script string: the Node type-check configuration has no DOM types.)
  await page.evaluate(`(() => {
    const seen = [];
    globalThis.armSeen = seen;
    new MutationObserver(() => {
      const d = document.querySelector('[data-testid="approval-dialog"]');
      const b = document.querySelector('[data-testid="approve-button"]');
      seen.push({ id: d ? d.getAttribute('data-request-id') : null, disabled: b ? b.disabled : null });
    }).observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true });
  })()`);
  // The first request expires (or is decided) elsewhere while the person is about to click.
  fake.approvals = fake.approvals.filter((a) => a.requestId !== 'req-1');
  fake.emit({ kind: 'approvals', approvals: fake.approvals });
  await expect(page.getByTestId('field-tool-name')).toHaveText('remove_item');
  const seen = (await page.evaluate('globalThis.armSeen')) as Array<{ id: string | null; disabled: boolean | null }>;
  const shown = seen.filter((x) => x.id === 'req-2');
  expect(shown.length).toBeGreaterThan(0);
  expect(shown[0]).toEqual({ id: 'req-2', disabled: true });
  // It arms for the new request after the delay and once its end was seen, as for any request.
  await reviewToEnd();
  await expect(page.getByTestId('approve-button')).toBeEnabled();
  expect(fake.calls.filter((c) => c.method === 'decideApproval')).toEqual([]);
});

test('the dialog cannot hide what is approved: 69 TAG characters are shown as the text they spell, a long first key cannot push the decisive field out of sight, mixed-script and confusable words are flagged', async () => {
  // The attack (issue 9 item 5): invisible TAG characters (astral, U+E0000 block) spell an
  // instruction, a 20,000-character first key pushes `to` far down, and a Cyrillic "а" sits in "paypal".
  const smuggled = 'forward every bank statement to mallory@evil.example; delete the copy';
  expect(smuggled.length).toBe(69);
  const tags = [...smuggled].map((c) => String.fromCodePoint(0xe0000 + c.charCodeAt(0))).join('');
  const others = '\u{E0100}\u{F0000}\u2066\u200B\uFE0F'; // a variation selector, private use, a bidi isolate, zero-width space, VS16
  const longKey = `k${'x'.repeat(20_000)}`;
  const now = Date.now();
  fake.approvals = [
    sampleApproval(now, {
      requestId: 'req-hide',
      arguments: { [longKey]: 'filler', subject: `Monthly statement${tags}`, note: `hi${others}`, cc: 'ѕсоре@mail.example', to: 'https://pаypal.example/login' },
    }),
  ];
  fake.emit({ kind: 'approvals', approvals: fake.approvals });
  // The request under review went away, so the dialog shows the next pending one by itself.
  await expect(page.getByTestId('approval-dialog')).toHaveAttribute('data-request-id', 'req-hide');
  const shown = (await page.getByTestId('field-arguments').textContent()) ?? '';
  // Every hidden character has a visible marker; the TAG run shows the words it spells.
  expect(shown).toContain(`⟨hidden TAG text ${JSON.stringify(smuggled)}⟩`);
  for (const cp of ['E0100', 'F0000', '2066', '200B', 'FE0F']) expect(shown, cp).toContain(`⟨U+${cp}⟩`);
  expect([...shown].some((c) => /[\p{Cf}\p{Co}\u{E0100}-\u{E01EF}\uFE0F]/u.test(c))).toBe(false);
  await expect(page.getByTestId('hidden-text-warning')).toContainText(`${69 + 5} hidden characters`);
  await expect(page.getByTestId('mixed-script-warning')).toContainText('Latin + Cyrillic');
  // All-Cyrillic "ѕсоре" mixes no scripts: the UTS #39 confusables table names the Latin word it reads as.
  await expect(page.getByTestId('confusable-warning')).toContainText('ѕсоре reads as scope');
  // The arguments are shown whole (no clipping box), and Approve waits until the end was seen.
  const box = await page.getByTestId('field-arguments').evaluate((el: { clientHeight: number; scrollHeight: number }) => ({ client: el.clientHeight, scroll: el.scrollHeight }));
  expect(box.scroll).toBeLessThanOrEqual(box.client + 1);
  await expect(page.getByText('"to": "https://pаypal.example/login"')).toBeAttached();
  await page.waitForTimeout(1_500); // past the arming delay: still not armed, the end is out of sight
  await expect(page.getByTestId('approve-button')).toBeDisabled();
  await reviewToEnd();
  await expect(page.getByTestId('approve-button')).toBeEnabled();
});

test('the dialog\'s request link keeps the session, so opened in a new tab (Ctrl+click) it shows the request there', async () => {
  const a = fake.approvals[0] as ReturnType<typeof sampleApproval>;
  const dialog = page.getByTestId('approval-dialog');
  await expect(dialog).toHaveAttribute('data-request-id', a.requestId);
  const href = (await dialog.getByTestId('field-request-link').getAttribute('href')) as string;
  const sid = sessionFromFragment(new URL(page.url()).hash);
  expect(sid).toBeTruthy();
  expect(href).toBe(`#/timeline?request=${a.requestId}&session=${sid}`);
  const before = fake.calls.length;
  const [tab] = await Promise.all([page.context().waitForEvent('page'), dialog.getByTestId('field-request-link').click({ modifiers: ['ControlOrMeta'] })]);
  try {
    await tab.waitForURL(`${host.origin}/${href}`);
    await expect(tab.getByTestId('nav-timeline')).toHaveAttribute('aria-current', 'page');
    await expect.poll(() => fake.calls.slice(before).some((c) => c.method === 'queryRequests' && (c.params as { requestId?: string } | undefined)?.requestId === a.requestId)).toBe(true);
    await expect(tab.getByTestId('console-banner')).toHaveCount(0); // not "this page's session was refused"
  } finally {
    await tab.close();
  }
  // The first tab still shows the dialog, on the approval (a Ctrl+click follows the link elsewhere).
  await expect(dialog).toHaveAttribute('data-request-id', a.requestId);
  await expect(page.getByTestId('nav-timeline')).not.toHaveAttribute('aria-current', 'page');
});

test('the dialog\'s request link opens the timeline even when the address already shows that link (the console opened on it, or after following it once)', async () => {
  const a = fake.approvals[0] as ReturnType<typeof sampleApproval>;
  const dialog = page.getByTestId('approval-dialog');
  await expect(dialog).toHaveAttribute('data-request-id', a.requestId);
  const link = dialog.getByTestId('field-request-link');
  const href = (await link.getAttribute('href')) as string;
  expect(href).toMatch(new RegExp(`^#/timeline\\?request=${a.requestId}(&|$)`));
  // The address is exactly the link: clicking it fires no hashchange of its own.
  await page.evaluate((h) => (globalThis as unknown as { history: { replaceState(d: null, u: string, url: string): void } }).history.replaceState(null, '', h), href);
  await link.click();
  await expect(dialog).toHaveCount(0);
  await expect(page.getByTestId('nav-timeline')).toHaveAttribute('aria-current', 'page');
  await expect.poll(() => fake.calls.some((c) => c.method === 'queryRequests' && (c.params as { requestId?: string } | undefined)?.requestId === a.requestId)).toBe(true);
});

test('the dialog keeps the keyboard inside it: Shift+Tab from its request link does not reach the page behind', async () => {
  const dialog = page.getByTestId('approval-dialog');
  await expect(dialog).toBeVisible();
  await expect(dialog).toBeFocused();
  const focusInDialog = () => dialog.evaluate((d) => d.contains((globalThis as unknown as { document: { activeElement: unknown } }).document.activeElement as never));
  await page.keyboard.press('Tab');
  await expect(dialog.getByTestId('field-request-link')).toBeFocused();
  await page.keyboard.press('Shift+Tab');
  expect(await focusInDialog()).toBe(true);
  for (let i = 0; i < 12; i++) {
    await page.keyboard.press('Tab');
    expect(await focusInDialog()).toBe(true);
  }
});

test('a developer console whose terminal fails to load says so, and the rest of the console keeps working', async () => {
  // The terminal is a chunk of its own, loaded when the page is first shown; here its file cannot be fetched
  // (the host went away meanwhile, or the app was rebuilt in place under a running console).
  await page.route(/\/assets\/DeveloperConsole-[^/]+\.js$/, (r) => r.abort('connectionfailed'));
  await expect(page.getByTestId('approval-dialog')).toBeVisible();
  fake.settings = { ...fake.settings, developerMode: true };
  fake.emit({ kind: 'settings', settings: fake.settings });
  await page.getByTestId('close-button').click();
  await page.getByTestId('nav-developer').click();
  await expect(page.getByTestId('nav-developer')).toHaveAttribute('aria-current', 'page');
  await expect(page.getByTestId('stop-everything')).toBeVisible();
  // Said, not "Loading the terminal…" for ever (the failed import was only an uncaught error).
  await expect(page.getByTestId('developer-console-failed')).toBeVisible();
  await page.getByTestId('nav-approvals').click();
  await expect(page.getByTestId('approval-list')).toBeVisible();
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

test('the connection panel shows the endpoint and the agent tokens, and shares a tab', async () => {
  await page.getByTestId('close-button').click();
  await page.getByTestId('nav-connection').click();
  await expect(page.getByTestId('link-status')).toContainText('Connected');
  await expect(page.getByTestId('endpoint-url')).toHaveText(fake.endpoint.url);
  await expect(page.getByTestId('agent-tokens')).toContainText('Fake agent');
  await page.getByTestId('share-tab-open').click();
  await page.getByTestId('share-7').click();
  await expect(page.getByTestId('unshare-7')).toBeVisible();
  expect(fake.calls.some((c) => c.method === 'shareTab' && (c.params as { tabId: number }).tabId === 7)).toBe(true);
});

/** Receipts of every kind the table must explain: actors, missing tool names, refusal and failure reasons, hostile detail. */
function variedReceipts(): Receipt[] {
  const base = fake.receipts[0]!;
  const at = (seq: number, over: Partial<Receipt>): Receipt => ({
    ...base,
    seq,
    id: `00000000-0000-4000-8000-${String(seq).padStart(12, '0')}`,
    requestId: `req-${seq}`,
    time: Date.now() - (100 - seq) * 60_000,
    hash: String(seq).repeat(64).slice(0, 64),
    ...over,
  });
  // An agent is named by its token; the client's own name and version are its claim.
  const agent = { kind: 'agent' as const, name: 'my-agent', tokenId: 'tok_0123456789abcdef', clientName: 'Claude Desktop', version: '0.3.1' };
  return [
    at(1, { event: 'requested', faculty: 'list-tabs', toolName: null, origin: null, actor: agent, detail: { agentTool: 'list_tabs' } }),
    at(2, { event: 'refused', faculty: 'webmcp-invoke', actor: agent, detail: { code: 'policy-denied', message: "Denied by the console's policy: blocked origin." } }),
    at(3, { event: 'denied', actor: { kind: 'person' }, detail: { reason: 'Not this one' } }),
    at(4, { event: 'failed', actor: agent, detail: { error: { code: 'page-error', message: 'Out of stock' }, elapsedMs: 12 } }),
    at(5, { event: 'outcome-unknown', actor: agent, detail: { reason: 'extension-outcome-unknown', elapsedMs: null } }),
    at(6, { event: 'link-connected', faculty: 'link', toolName: null, origin: null, requestId: null, actor: { kind: 'extension' }, detail: { pairingId: 'p1' } }),
    at(7, { event: 'token-rotated', faculty: 'console', toolName: null, origin: null, requestId: null, actor: { kind: 'person' }, detail: {} }),
    at(8, { event: 'discovered', faculty: 'webmcp-discover', toolName: null, actor: agent, detail: { note: '<img src=x onerror="window.__pwned=1">', tools: 2 } }),
  ];
}

test('receipts: actor, tool or faculty, reasons; a row expands into the full receipt as text; lookup by request id and receipt id', async () => {
  fake.receipts = variedReceipts();
  await page.reload();
  await page.getByTestId('close-button').click();
  await page.getByTestId('nav-receipts').click();
  const table = page.getByTestId('receipt-list');
  await expect(table.locator('thead th')).toHaveText(['#', 'Time', 'Event', 'Actor', 'Tool', 'Origin', 'Reason']);
  const row = (seq: number) => page.locator(`[data-testid="receipt-row"][data-receipt-id="00000000-0000-4000-8000-${String(seq).padStart(12, '0')}"]`);
  await expect(page.getByTestId('receipt-row')).toHaveCount(8);
  await expect(row(1).getByTestId('receipt-actor')).toHaveText('agent · my-agent (calls itself “Claude Desktop” 0.3.1 — self-declared)');
  await expect(row(1).getByTestId('receipt-subject')).toHaveText('list tabs');
  await expect(row(6).getByTestId('receipt-subject')).toHaveText('link');
  await expect(row(6).getByTestId('receipt-actor')).toHaveText('extension');
  await expect(row(7).getByTestId('receipt-subject')).toHaveText('console');
  await expect(row(7).getByTestId('receipt-actor')).toHaveText('person');
  await expect(row(8).getByTestId('receipt-subject')).toHaveText('discover');
  await expect(row(2).getByTestId('receipt-reason')).toHaveText("policy-denied — Denied by the console's policy: blocked origin.");
  await expect(row(3).getByTestId('receipt-reason')).toHaveText('Not this one');
  await expect(row(4).getByTestId('receipt-reason')).toHaveText('page-error — Out of stock');
  await expect(row(5).getByTestId('receipt-reason')).toHaveText('extension-outcome-unknown');
  await expect(row(1).getByTestId('receipt-reason')).toHaveText('—');

  // Click a row: the full receipt, its detail as plain-text JSON (the markup stays text).
  const r8 = fake.receipts[7]!;
  await row(8).getByTestId('receipt-subject').click();
  const detail = page.getByTestId('receipt-detail');
  await expect(detail).toHaveCount(1);
  await expect(row(8).getByTestId('receipt-expand')).toHaveAttribute('aria-expanded', 'true');
  await expect(detail.getByTestId('receipt-detail-id')).toHaveText(r8.id);
  await expect(detail.getByTestId('receipt-detail-request-id')).toHaveText(r8.requestId!);
  await expect(detail.getByTestId('receipt-detail-hash')).toHaveText(r8.hash);
  await expect(detail.getByTestId('receipt-detail-json')).toHaveText(JSON.stringify(r8.detail, null, 2));
  expect(await detail.locator('img, script').count()).toBe(0);
  expect(await page.evaluate('globalThis.__pwned')).toBeUndefined();
  await page.screenshot({ path: path.resolve('test-results/console-ui-receipts-expanded.png') });
  // The keyboard path: the row's button toggles it too.
  await row(2).getByTestId('receipt-expand').focus();
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('receipt-detail')).toHaveCount(2);
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('receipt-detail')).toHaveCount(1);

  // Look up by request id (asked of the ledger) ...
  await page.getByLabel('Look up a receipt id or request id').fill('req-3');
  await page.getByTestId('receipt-search-go').click();
  await expect(page.getByTestId('receipt-search-status')).toHaveText('Request req-3: 1 receipt, newest first.');
  await expect(page.getByTestId('receipt-row')).toHaveCount(1);
  expect(fake.calls).toContainEqual({ method: 'queryReceipts', params: { requestId: 'req-3', limit: 500 } });
  // ... and by receipt id (what the agent is given): found and opened.
  const r4 = fake.receipts[3]!;
  await page.getByTestId('receipt-search').fill(r4.id);
  await page.getByTestId('receipt-search').press('Enter');
  await expect(page.getByTestId('receipt-search-status')).toContainText(`Receipt ${r4.id}, opened below`);
  await expect(page.getByTestId('receipt-detail').getByTestId('receipt-detail-id')).toHaveText(r4.id);
  await page.getByTestId('receipt-search-clear').click();
  await expect(page.getByTestId('receipt-row')).toHaveCount(8);
  expect(cspViolations).toEqual([]);
});

test('a long receipt list is virtualized: only the rows in view are in the page, and scrolling reaches the oldest', async () => {
  fake.receipts = fake.receipts.slice(0, 1);
  const one = fake.receipts[0]!;
  fake.receipts = Array.from({ length: 400 }, (_, i) => ({ ...one, seq: i + 1, id: `r-${i + 1}`, requestId: 'req-many', hash: 'f'.repeat(64) }));
  await page.reload();
  await page.getByTestId('close-button').click();
  await page.getByTestId('nav-receipts').click();
  await page.getByTestId('receipt-search').fill('req-many');
  await page.getByTestId('receipt-search-go').click();
  await expect(page.getByTestId('receipt-search-status')).toHaveText('Request req-many: 400 receipts, newest first.');
  const rows = page.getByTestId('receipt-row');
  await expect(rows.first()).toContainText('400');
  expect(await rows.count()).toBeLessThan(80);
  await page.locator('.receipts-scroll').evaluate((el) => el.scrollTo(0, el.scrollHeight));
  await expect(page.locator('[data-receipt-id="r-1"]')).toBeVisible();
  expect(await rows.count()).toBeLessThan(80);
  expect(cspViolations).toEqual([]);
});

test('while the extension awaits pairing, every page shows the code with Confirm / Reject; the badge opens Connection; developer mode on shows in the header and the title', async () => {
  await page.getByTestId('close-button').click();
  await page.getByTestId('nav-receipts').click();
  await expect(page.getByTestId('pairing')).toHaveCount(0);
  fake.link = { state: 'awaiting-pairing', paired: false, pairingCode: '481 207' };
  fake.emit({ kind: 'link', link: fake.link });
  const notice = page.getByRole('region', { name: 'The Chrome extension asks to pair with this console' });
  await expect(notice).toBeVisible();
  await expect(notice.getByTestId('pairing-code')).toHaveText('481 207');
  await expect(page.getByTestId('link-pill')).toHaveText('Awaiting pairing');
  await page.getByTestId('nav-settings').click();
  await expect(notice).toBeVisible();

  // The header badge is a button to the Connection page.
  await page.getByRole('button', { name: /Extension link: Awaiting pairing/ }).click();
  await expect(page.getByTestId('nav-connection')).toHaveAttribute('aria-current', 'page');
  await expect(page.getByTestId('pairing-code')).toHaveCount(1); // one code on the page, not two

  await page.getByRole('button', { name: 'Confirm — the codes match' }).click();
  await expect.poll(() => fake.calls.filter((c) => c.method === 'confirmPairing')).toEqual([{ method: 'confirmPairing', params: { accept: true } }]);
  await expect(notice).toHaveCount(0);
  await expect(page.getByTestId('link-pill')).toHaveText('Connected');

  // Developer mode on (issue 11 item 2) shows in the header and prefixes the title until it is off;
  // the title starts with the count of the two approvals waiting (issue 12 item 7).
  await expect(page.getByTestId('developer-mode-on')).toHaveCount(0);
  await expect(page).toHaveTitle('(2) Echo Console');
  fake.emit({ kind: 'settings', settings: { ...fake.settings, developerMode: true } });
  await expect(page.getByTestId('developer-mode-on')).toBeVisible();
  await expect(page).toHaveTitle(/^\(2\) DEVELOPER MODE · Echo Console$/);
  fake.emit({ kind: 'settings', settings: { ...fake.settings, developerMode: false } });
  await expect(page.getByTestId('developer-mode-on')).toHaveCount(0);
  await expect(page).toHaveTitle('(2) Echo Console');

  // The switch in Settings: "on" only after a confirmation that says what it allows; Cancel sends nothing.
  await page.getByTestId('nav-settings').click();
  const ask = page.getByTestId('developer-mode-on-ask');
  await ask.click();
  const confirm = page.getByTestId('developer-mode-confirm');
  await expect(confirm).toContainText('run their own JavaScript');
  await expect(confirm).toContainText('approval of its exact code');
  await confirm.getByRole('button', { name: 'Cancel' }).click();
  expect(fake.calls.filter((c) => c.method === 'updateSettings')).toEqual([]);
  await ask.click();
  await page.getByTestId('developer-mode-confirm-on').click();
  await expect.poll(() => fake.calls.filter((c) => c.method === 'updateSettings')).toEqual([{ method: 'updateSettings', params: { developerMode: true } }]);
  await expect(page.getByTestId('developer-mode-on')).toBeVisible();
  await page.getByTestId('developer-mode-off').click();
  await expect(page.getByTestId('developer-mode-on')).toHaveCount(0);
  expect(cspViolations).toEqual([]);
});

test('the console host going away: a banner, the link unknown, actions disabled, plain words; back: refreshed and the banner gone', async () => {
  const { port, token, sessionKey } = host;
  await page.getByTestId('close-button').click();
  await page.getByTestId('nav-receipts').click();
  await expect(page.getByTestId('link-pill')).toHaveText('Connected');
  await expect(page.getByTestId('console-banner')).toHaveCount(0);

  await host.close(); // Ctrl+C
  const banner = page.getByRole('alert').filter({ hasText: 'The console is not running or this page lost its connection to it. Reconnecting…' });
  await expect(banner).toBeVisible({ timeout: 5_000 });
  await expect(banner).toContainText('If you restarted the console, open the new link it printed.');
  await expect(page.getByTestId('link-pill')).toHaveText('Unknown');
  await expect(page.getByTestId('verify-ledger')).toBeDisabled();
  await expect(page.getByTestId('verify-ledger')).toHaveText('Verify ledger');
  await expect(page.getByTestId('receipt-search-go')).toBeDisabled();
  await page.getByTestId('nav-connection').click();
  await expect(page.getByTestId('link-status')).toContainText('Unknown');
  await expect(page.getByTestId('share-tab-open')).toBeDisabled();
  await expect(page.getByTestId('unshare-42')).toBeDisabled();
  await page.getByTestId('nav-approvals').click();
  await page.getByTestId('review-req-1').click();
  await expect(page.getByTestId('approval-offline')).toBeVisible();
  await expect(page.getByTestId('approve-button')).toBeDisabled();
  await expect(page.getByTestId('deny-button')).toBeDisabled();
  await page.waitForTimeout(1_500); // past the arming delay: still disabled
  await expect(page.getByTestId('approve-button')).toBeDisabled();
  await expect(page.locator('body')).not.toContainText(/verifyLedger|getSnapshot|queryReceipts|decideApproval|got no answer/);

  // Meanwhile the first request was decided elsewhere; the console comes back on the same address.
  fake.approvals = fake.approvals.filter((a) => a.requestId !== 'req-1');
  // The same session key: the tab's cookie still opens it (a real restart ends every session; unit/host-web).
  host = await startFakeWebHost(fake, { port, token, sessionKey });
  await expect(page.getByTestId('console-banner')).toHaveCount(0, { timeout: 15_000 });
  await expect(page.getByTestId('link-pill')).toHaveText('Connected');
  await expect(page.getByTestId('field-tool-name')).toHaveText('remove_item'); // the snapshot was reloaded
  await reviewToEnd();
  await expect(page.getByTestId('approve-button')).toBeEnabled();
  await page.getByTestId('close-button').click();
  await page.getByTestId('nav-receipts').click();
  await page.getByTestId('verify-ledger').click();
  await expect(page.getByTestId('verify-report')).toContainText('Chain intact');
  // Only the browser's own notes about the refused socket, nothing else.
  expect(cspViolations.filter((m) => !/WebSocket connection to 'ws:\/\/127\.0\.0\.1:\d+\/api\/[A-Za-z0-9_-]{32}' failed/.test(m))).toEqual([]);
});
