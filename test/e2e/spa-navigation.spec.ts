// Same-document navigation end to end (issue 8, item 1; docs/broker.md, "Same-document
// navigation"): Chromium with the built extension, the native host, the real console core,
// the console UI (web host) and an MCP SDK client, on resources/demo/spa, whose
// `delete_current_item {}` deletes whatever item its route shows.
//  - A route change after the agent's discovery keeps the discovery: the person reviews the
//    page as it is (the dialog's URL), the tool runs there, and the agent is told the URL moved.
//  - A route change while the dialog is open refuses the request (navigated), nothing is
//    deleted, and the console says why; with the item id in a UUID path, in a query parameter
//    the console strips from the URL it shows, and in a hash route.
//  - A page that keeps rewriting its URL can never be approved, and the console says why.
import { expect, test, type Page } from '@playwright/test';
import { headerJson, pairedMainJob, texts, untrustedBody, waitForApproval } from './support/main-job-fixture';

const world = pairedMainJob(test, 'spa-e2e');

interface Item {
  n: number;
  uuid: string;
}

async function openSpa(route: string): Promise<{ page: Page; tabId: number; items: Item[] }> {
  const page = await world.job.openPage(`${world.job.servers.demoOrigin}${route}`);
  const tabId = await world.job.shareThroughApi(page);
  const items = (await page.evaluate('window.__spa.items')) as Item[];
  return { page, tabId, items };
}

async function discover(tabId: number): Promise<{ descriptorHash: string; documentId: string }> {
  const r = await world.client.callTool({ name: 'webmcp_discover', arguments: { tabId } });
  expect(r.isError, texts(r).join('\n')).toBeFalsy();
  const body = JSON.parse(untrustedBody(texts(r)[1] as string)) as { tools: Array<{ name: string; descriptorHash: string; documentId: string }> };
  const tool = body.tools.find((t) => t.name === 'delete_current_item');
  expect(tool).toBeTruthy();
  return tool as { descriptorHash: string; documentId: string };
}

const invoke = (tabId: number, descriptorHash: string) =>
  world.client.callTool({ name: 'webmcp_invoke', arguments: { tabId, name: 'delete_current_item', descriptorHash, arguments: {} } }, undefined, { timeout: 60_000 });

/**
 * Change the page's route in the same document, and wait until the console has heard of it (the
 * extension's `navigated` event for that tab), so that what follows does not race the event.
 */
async function moveTo(page: Page, tabId: number, url: string): Promise<void> {
  let off: () => void = () => undefined;
  const heard = new Promise<void>((resolve) => {
    off = world.job.core.link.onEvent((e) => {
      if (e.kind === 'navigated' && e.tabId === tabId) resolve();
    });
  });
  try {
    await page.evaluate((u) => (globalThis as unknown as { __spa: { go(u: string): void } }).__spa.go(u), url);
    await heard;
  } finally {
    off();
  }
}

const ui = () => world.job.consolePage as Page;
const deleted = (page: Page) => page.evaluate('window.__spa.deleted()') as Promise<number[]>;

test('after a pushState the discovery stays valid: the person reviews the page as it is, the tool deletes the item shown, the agent is told the URL moved', async () => {
  const { page, tabId, items } = await openSpa('/spa/?item=1');
  const tool = await discover(tabId);
  const item2 = items[1] as Item;
  // The console hears of the move before the agent asks (else the dialog would show the old
  // URL, and the move's late event would refuse it: safe, but not this test).
  await moveTo(page, tabId, `/spa/items/${item2.uuid}`);
  expect(world.job.core.broker.discoveries.hasMoved(tabId, 0)).toBe(true);

  const pending = invoke(tabId, tool.descriptorHash);
  const view = await waitForApproval(world.job.core, (a) => a.subject.toolName === 'delete_current_item' && a.tab.tabId === tabId);
  expect(view.tab.url).toBe(`${world.job.servers.demoOrigin}/spa/items/${item2.uuid}`);
  // The dialog opens by itself (the console shows its approvals page).
  await expect(ui().getByTestId('approval-dialog').getByTestId('field-tab-url')).toContainText(item2.uuid);
  expect(await world.job.core.api.decideApproval({ requestId: view.requestId, decision: 'approve' })).toEqual({ ok: true, value: null });
  const r = await pending;
  expect(r.isError, texts(r).join('\n')).toBeFalsy();
  const header = headerJson<{ outcome: string; requestId: string; movedSinceDiscovery: boolean }>(texts(r)[0] as string, 'Invocation ');
  expect(header).toMatchObject({ outcome: 'succeeded', movedSinceDiscovery: true });
  expect(JSON.parse(untrustedBody(texts(r)[1] as string))).toEqual({ deleted: 2, name: 'Quarterly report' });
  expect(untrustedBody(texts(r)[3] as string)).toBe(`${world.job.servers.demoOrigin}/spa/items/${item2.uuid}`);
  expect(await deleted(page)).toEqual([2]);
  const validated = world.job.core.ledger.query({ requestId: header.requestId, event: 'validated', limit: 1 }).receipts[0];
  expect(validated?.detail).toMatchObject({ url: `${world.job.servers.demoOrigin}/spa/items/${item2.uuid}`, movedSinceLook: true });
  await page.close();
});

for (const [variant, from, to] of [
  ['a UUID in the path', (i: Item[]) => `/spa/items/${(i[0] as Item).uuid}`, (i: Item[]) => `/spa/items/${(i[1] as Item).uuid}`],
  ['a query parameter the console strips from what it shows', () => '/spa/?ticket=1', () => '/spa/?ticket=2'],
  ['a hash route', () => '/spa/#/items/1', () => '#/items/2'],
] as const) {
  test(`never deletes item 2 after the person approved on item 1 (${variant}): a route change while the dialog is open, or between approval and dispatch, refuses it, and the console says why`, async () => {
    const page0 = await world.job.openPage(`${world.job.servers.demoOrigin}/spa/?item=3`);
    const items = (await page0.evaluate('window.__spa.items')) as Item[];
    await page0.close();
    const { page, tabId } = await openSpa(from(items));
    const go = (url: string) => page.evaluate((u) => (globalThis as unknown as { __spa: { go(u: string): void } }).__spa.go(u), url);
    expect(await page.evaluate('window.__spa.current()')).toBe(1);
    const tool = await discover(tabId);

    // 1. While the dialog is open.
    const pending = invoke(tabId, tool.descriptorHash);
    const view = await waitForApproval(world.job.core, (a) => a.subject.toolName === 'delete_current_item' && a.tab.tabId === tabId);
    await expect(ui().getByTestId('approval-dialog')).toBeVisible();
    await moveTo(page, tabId, to(items));
    expect(await page.evaluate('window.__spa.current()')).toBe(2);
    const r = await pending;
    expect(r.isError).toBe(true);
    expect(texts(r).join('\n')).toMatch(/^Error \(navigated\)/);
    // The person's late approval finds nothing to approve; nothing was deleted.
    expect(await world.job.core.api.decideApproval({ requestId: view.requestId, decision: 'approve' })).toMatchObject({ ok: false, error: { code: 'unknown-request' } });
    await expect(ui().getByTestId('approvals-notice')).toContainText("the page's URL changed while it waited");
    expect(await deleted(page)).toEqual([]);
    await ui().getByTestId('approvals-notice').getByRole('button').click();

    // 2. Approved on item 1; the route moves to item 2 after the approval, before the dispatch
    //    reaches the page (the console's dispatch is held until the page has moved).
    await moveTo(page, tabId, from(items).startsWith('/spa/#') ? from(items).slice('/spa/'.length) : from(items));
    expect(await page.evaluate('window.__spa.current()')).toBe(1);
    expect(world.job.core.broker.discoveries.hasMoved(tabId, 0)).toBe(true);
    const link = world.job.core.link as unknown as Record<string, unknown>;
    const original = world.job.core.link.request.bind(world.job.core.link);
    link.request = async (req: { op: string }, opts: unknown) => {
      if (req.op === 'dispatch') await go(to(items));
      return original(req as never, opts as never);
    };
    try {
      const second = invoke(tabId, tool.descriptorHash);
      const v2 = await waitForApproval(world.job.core, (a) => a.subject.toolName === 'delete_current_item' && a.tab.tabId === tabId);
      expect(await world.job.core.api.decideApproval({ requestId: v2.requestId, decision: 'approve' })).toEqual({ ok: true, value: null });
      const r2 = await second;
      expect(r2.isError).toBe(true);
      expect(texts(r2).join('\n')).toMatch(/^Error \(navigated\)/);
    } finally {
      delete link.request; // back to the class method
    }
    expect(await page.evaluate('window.__spa.current()')).toBe(2);
    expect(await deleted(page)).toEqual([]);
    await page.close();
  });
}

test('a page that keeps rewriting its URL can never be approved, and the console says why', async () => {
  const { page, tabId } = await openSpa('/spa/?item=1');
  const tool = await discover(tabId);
  await page.evaluate('window.__spa.startChurn(50)');
  try {
    for (let attempt = 0; attempt < 2; attempt++) {
      const r = await invoke(tabId, tool.descriptorHash);
      expect(r.isError).toBe(true);
      expect(texts(r).join('\n')).toMatch(/^Error \(navigated\)/);
    }
    expect(await deleted(page)).toEqual([]);
    await expect(ui().getByTestId('approvals-notice')).toContainText('A page that keeps changing its URL cannot be approved');
  } finally {
    await page.evaluate('window.__spa.stopChurn()');
  }
  await page.close();
});
