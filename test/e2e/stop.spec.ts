/// <reference types="chrome" />
// Stop and the kill switch (issue 12 item 5) and the badges (item 7) end to end on real parts:
// Chromium 156 with WebMCP and the built extension, the native host, the real core, the console
// UI over the web host, an MCP SDK client. The person's acts are clicks in the console page.
//
//  1. A page tool whose execute never returns: approved, then stopped from the dialog → the
//     agent's call answers outcome-unknown (stopped by the person), the receipt says so, and the
//     reload the dialog offers reloads the tab. Meanwhile the pending count shows on the
//     extension's action badge (read in its service worker) and in the console's title. Then a
//     second such call: the running dialog's deep link opens its timeline row, whose Stop stops
//     it; the reload offer is listed under the header. A discovery made meanwhile shows in the
//     timeline as succeeded, never open, and request_status says it ended.
//  2. Stop everything from the header: the pending request denied, the tab unshared, the agent's
//     session closed, developer mode off, with its one receipt; the badge is red while developer
//     mode is on.
// Build first: npx electron-vite build && npm run build:extension && npm run build:tools
import { expect, test } from '@playwright/test';
import type { Page, Worker } from '@playwright/test';
import { pairedMainJob, texts, untrustedBody, waitForApproval, waitForCore } from './support/main-job-fixture';

const w = pairedMainJob(test, 'stop-e2e');

/** The action badge as every tab without its own value shows it, and as `tabId` shows it. */
async function badge(worker: Worker, tabId?: number): Promise<{ text: string; color: number[] }> {
  return worker.evaluate(async (id) => {
    const at = id === undefined ? {} : { tabId: id };
    return { text: await chrome.action.getBadgeText(at), color: await chrome.action.getBadgeBackgroundColor(at) };
  }, tabId);
}

/** A real `webmcp_discover` of `tabId`: its tools and the receipt id its header names (the request's last receipt). */
async function discover(tabId: number): Promise<{ tools: Array<{ name: string; descriptorHash: string }>; receiptId: string; requestId: string }> {
  const r = await w.client.callTool({ name: 'webmcp_discover', arguments: { tabId } });
  expect(r.isError, texts(r)[0]).toBeFalsy();
  const header = JSON.parse((texts(r)[0] as string).split('\n')[0]!.replace(/^Discovery of tab \d+: /, '')) as { receiptId: string; requestId: string };
  return { tools: (JSON.parse(untrustedBody(texts(r)[1] as string)) as { tools: Array<{ name: string; descriptorHash: string }> }).tools, receiptId: header.receiptId, requestId: header.requestId };
}

async function toolsOf(tabId: number): Promise<Array<{ name: string; descriptorHash: string }>> {
  return (await discover(tabId)).tools;
}

let page: Page;
let tabId: number;
/** MCP sessions open now, over every agent token. */
const sessions = () => w.job.core.agentTokens().reduce((n, t) => n + t.sessions, 0);

test('Stop on a tool that never answers: outcome-unknown, the agent told, a reload offered; the badge and the title count the waiting approval', async () => {
  test.setTimeout(120_000);
  const { job } = w;
  const ui = job.consolePage!;
  page = await job.openPage(job.servers.url('misbehaving'));
  tabId = await job.shareThroughApi(page);
  const hang = (await toolsOf(tabId)).find((t) => t.name === 'hangs_forever')!;
  const call = w.client.callTool({ name: 'webmcp_invoke', arguments: { tabId, name: hang.name, descriptorHash: hang.descriptorHash, arguments: {} } }, undefined, { timeout: 60_000 });
  const view = await waitForApproval(job.core, (a) => a.tab.tabId === tabId);

  // The count: on the extension's action badge (every tab, and the shared one), and in the title.
  await expect.poll(async () => (await badge(job.worker)).text).toBe('1');
  expect(await badge(job.worker, tabId)).toEqual({ text: '1', color: [232, 113, 10, 255] });
  await expect(ui).toHaveTitle('(1) Echo Console');

  await ui.bringToFront();
  const dialog = ui.getByTestId('approval-dialog');
  await expect(dialog).toHaveAttribute('data-request-id', view.requestId);
  // The dialog points at the request's row in the timeline (its deep link).
  await expect(dialog.getByTestId('field-request-link')).toHaveAttribute('href', new RegExp(`^#/timeline\\?request=${encodeURIComponent(view.requestId)}&session=`));
  await dialog.getByTestId('end-of-request').scrollIntoViewIfNeeded(); // Approve arms once the whole request was seen
  await expect(dialog.getByTestId('approve-button')).toBeEnabled();
  await dialog.getByTestId('approve-button').click();
  await expect(ui).toHaveTitle('Echo Console');
  await expect.poll(async () => (await badge(job.worker)).text).toBe('');

  // The dialog stays on the approved request while it runs, with its Stop.
  const running = ui.getByTestId('running-dialog');
  await expect(running).toHaveAttribute('data-phase', 'dispatched');
  // It keeps the keyboard inside it, as the approval dialog does (its link, Close and Stop; never the page behind).
  const focusInRunning = () => running.evaluate((d) => d.contains((globalThis as unknown as { document: { activeElement: unknown } }).document.activeElement as never));
  for (const key of ['Shift+Tab', 'Shift+Tab', 'Tab', 'Tab', 'Tab', 'Tab']) {
    await ui.keyboard.press(key);
    expect(await focusInRunning(), key).toBe(true);
  }
  // The Approvals page lists it under "Running now" too, with its own Stop (for after the dialog is closed).
  await expect(ui.getByTestId('running-item')).toHaveAttribute('data-request-id', view.requestId);
  // A script in the console's page clicks Stop (trust rule 19): dispatchEvent builds the event in the
  // page, as a script would (isTrusted false). Nothing is stopped, and the page says why.
  await running.getByTestId('stop-button').dispatchEvent('click');
  await expect(running.getByTestId('stop-untrusted-click')).toContainText('did not come from your mouse or keyboard was ignored');
  await expect(running).toHaveAttribute('data-phase', 'dispatched');
  expect(job.core.broker.inFlight.list().map((x) => x.requestId)).toEqual([view.requestId]);
  expect(job.core.ledger.query({ requestId: view.requestId, limit: 1 }).receipts[0]!.event).not.toBe('outcome-unknown');
  // The person's own click stops it.
  await running.getByTestId('stop-button').click();

  const r = await call;
  expect(r.isError).toBe(true);
  expect(texts(r).join('\n')).toContain('The person stopped this request after it was dispatched');
  expect(texts(r).join('\n')).toContain('outcome-unknown');
  const last = job.core.ledger.query({ requestId: view.requestId, limit: 1 }).receipts[0]!;
  expect(last).toMatchObject({ event: 'outcome-unknown', detail: { reason: 'stopped-by-person', by: 'stop' } });
  expect(job.core.broker.inFlight.list()).toEqual([]);

  // The dialog offers the reload; the tab reloads (a new document), receipted.
  await expect(running.getByTestId('stopped-unknown')).toBeVisible();
  const reloaded = page.waitForEvent('load');
  await running.getByTestId('running-reload').click();
  await reloaded;
  await waitForCore(job.core, () => (job.core.ledger.query({ event: 'tab-reloaded', limit: 1 }).receipts[0]?.tabId === tabId ? true : undefined));
  await expect(running).toHaveCount(0);

  // Stop from the timeline row: a second call, approved; the running dialog's link opens its row in the timeline, with the Stop.
  let again: { name: string; descriptorHash: string } | undefined;
  await expect.poll(async () => (again = (await toolsOf(tabId)).find((t) => t.name === 'hangs_forever')) !== undefined).toBe(true);
  const second = w.client.callTool({ name: 'webmcp_invoke', arguments: { tabId, name: again!.name, descriptorHash: again!.descriptorHash, arguments: {} } }, undefined, { timeout: 60_000 });
  const view2 = await waitForApproval(job.core, (a) => a.tab.tabId === tabId);
  await dialog.getByTestId('end-of-request').scrollIntoViewIfNeeded();
  await dialog.getByTestId('approve-button').click();
  await expect(running).toHaveAttribute('data-phase', 'dispatched');
  await running.getByTestId('running-request-link').click();
  await expect(running).toHaveCount(0);
  await expect(ui.getByTestId('nav-timeline')).toHaveAttribute('aria-current', 'page');
  const row = ui.locator(`[data-testid=request-row][data-request-id="${view2.requestId}"]`);
  await expect(row.getByTestId('request-expand')).toHaveAttribute('aria-expanded', 'true');
  await expect(row.getByTestId('request-outcome')).toContainText('open');
  // A script's click on the row's Stop: ignored, and the row says so whole, not cut by its cell.
  await row.getByTestId('stop-button').dispatchEvent('click');
  const ignored = row.getByTestId('stop-untrusted-click');
  await expect(ignored).toContainText('did not come from your mouse or keyboard was ignored');
  const whole = await ignored.evaluate((el) => {
    const b = el.getBoundingClientRect();
    const d = (globalThis as unknown as { document: { elementFromPoint(x: number, y: number): unknown } }).document;
    // Its last line's end and its first line's start are on screen, and are this notice (not the cell's clip, not the next row).
    return [d.elementFromPoint(b.right - 4, b.bottom - 4), d.elementFromPoint(b.left + 4, b.top + 4)].every((hit) => hit === el || el.contains(hit as never));
  });
  expect(whole).toBe(true);
  expect(job.core.broker.inFlight.list().map((x) => x.requestId)).toEqual([view2.requestId]);
  await row.getByTestId('stop-button').click();
  const r2 = await second;
  expect(texts(r2).join('\n')).toContain('outcome-unknown');
  await expect(row.getByTestId('request-outcome')).toHaveText('outcome-unknown');
  await expect(row.getByTestId('stop-button')).toHaveCount(0);
  // Its reload offer, with the dialog closed, is listed under the header.
  await expect(ui.getByTestId('reload-offer')).toHaveAttribute('data-tab-id', String(tabId));
  // The tab is shared, so the offer has its Reload button (withSharing; after Stop everything it would not).
  await expect(ui.getByTestId('reload-offer').getByTestId('reload-tab')).toBeVisible();
  await ui.getByTestId('reload-dismiss').click();

  // A discovery made while the whole timeline is shown ends: its row arrives by the live tail and
  // says succeeded, never open (its last receipts are discovered, then succeeded; a new user's
  // trial found it open), and request_status tells the agent it ended.
  await ui.getByTestId('filter-clear').click();
  await expect(ui.getByTestId('timeline-count')).toHaveText(/requests? match(es)?, newest first\.$/);
  const looked = await discover(tabId);
  // The answer names the request (as every tool's does), the one its final receipt belongs to.
  const discoveryId = looked.requestId;
  expect(job.core.ledger.query({ id: looked.receiptId }).receipts[0]!.requestId).toBe(discoveryId);
  expect(job.core.ledger.query({ requestId: discoveryId }).receipts.map((x) => x.event).reverse()).toEqual(['requested', 'discovered', 'succeeded']);
  const found = ui.locator(`[data-testid=request-row][data-request-id="${discoveryId}"]`);
  await expect(found.getByTestId('request-outcome')).toHaveText('succeeded');
  await expect(found.getByTestId('stop-button')).toHaveCount(0);
  // Every discovery of this test (the earlier ones loaded from the request index too): none is open.
  expect(job.core.ledger.countRequests({ faculty: 'webmcp-discover', outcome: 'open' })).toBe(0);
  await ui.getByTestId('filter-outcome').selectOption('open');
  const open = job.core.ledger.countRequests({ outcome: 'open' });
  await expect(ui.getByTestId('timeline-count')).toHaveText(open === 0 ? 'No request matches.' : `${open} request${open === 1 ? ' matches' : 's match'}, newest first.`);
  await expect(found).toHaveCount(0);
  await ui.getByTestId('filter-clear').click();
  const status = await w.client.callTool({ name: 'request_status', arguments: { requestId: discoveryId } });
  expect(status.isError, texts(status)[0]).toBeFalsy();
  expect(JSON.parse(texts(status)[0] as string)).toMatchObject({ requestId: discoveryId, state: 'ended', outcome: 'succeeded', events: ['requested', 'discovered', 'succeeded'] });
  await ui.getByTestId('nav-approvals').click();
});

test('Stop everything from the header: pending denied, tab unshared, session closed, developer mode off, one receipt; the badge is red in developer mode', async () => {
  test.setTimeout(120_000);
  const { job } = w;
  const ui = job.consolePage!;
  await page.locator('html[data-ready="true"]').waitFor({ state: 'attached' });
  // The web host cannot switch developer mode on (trust rule 19): the person does it in the desktop app; here the core's switch stands in.
  job.core.developerMode.switchOn();
  const tool = (await toolsOf(tabId)).find((t) => t.name === 'returns_function')!;
  const call = w.client.callTool({ name: 'webmcp_invoke', arguments: { tabId, name: tool.name, descriptorHash: tool.descriptorHash, arguments: {} } }, undefined, { timeout: 60_000 });
  const view = await waitForApproval(job.core, (a) => a.tab.tabId === tabId);
  await expect.poll(async () => (await badge(job.worker)).text).toBe('1');
  expect((await badge(job.worker)).color).toEqual([217, 48, 37, 255]);
  await expect(ui).toHaveTitle('(1) DEVELOPER MODE · Echo Console');
  expect(sessions()).toBe(1);

  // The header's button stays reachable above the open dialog.
  await ui.bringToFront();
  await expect(ui.getByTestId('approval-dialog')).toBeVisible();
  await ui.getByTestId('stop-everything').click();
  await expect(ui.getByTestId('stop-report')).toContainText('1 request denied');
  await expect(ui.getByTestId('stop-report')).toContainText('1 tab unshared');

  // The agent was told why before its session closed.
  const r = await call;
  expect(r.isError).toBe(true);
  expect(texts(r).join('\n')).toContain('Stop everything');
  const act = job.core.ledger.query({ event: 'stopped-everything', limit: 5 }).receipts;
  expect(act).toHaveLength(1);
  expect(act[0]).toMatchObject({ actor: { kind: 'person' }, detail: { denied: [view.requestId], unshared: [tabId], sessionsClosed: 1, developerModeSwitchedOff: true } });
  expect(job.core.ledger.query({ requestId: view.requestId, limit: 1 }).receipts[0]).toMatchObject({ event: 'denied', actor: { kind: 'person' } });
  expect(job.core.broker.getSharedTabs()).toEqual([]);
  expect(job.core.developerMode.on).toBe(false);
  expect(sessions()).toBe(0);
  await expect(ui).toHaveTitle('Echo Console');
  await expect.poll(async () => badge(job.worker)).toEqual({ text: '', color: [95, 99, 104, 255] });
  // The extension no longer lists the tab as shared: its own badge is back to nothing, and it
  // refuses to reload the tab for the console (a shared tab only).
  await expect.poll(async () => (await badge(job.worker, tabId)).text).toBe('');
  const refused = await job.worker.evaluate(
    (id) => (globalThis as unknown as { echoConsole: { handleRequest(r: unknown): Promise<unknown> } }).echoConsole.handleRequest({ op: 'reload-tab', tabId: id }),
    tabId,
  );
  expect(refused).toMatchObject({ ok: false, error: { code: 'tab-not-shared' } });
});
