// What the person sees is current (issue 8, item 7), end to end: Chromium with the built
// extension, the native host, the real console core, the console UI (web host) and an MCP
// SDK client.
//  - the extension's page-text flags reach the dialog;
//  - a page without <title> does not keep the previous page's title;
//  - an unshare on the extension's own authority (another origin, the tab closed) is
//    receipted with the extension as actor and its reason;
//  - an empty iframe and a srcdoc one are not cross-origin violations.
import { expect, test, type Page } from '@playwright/test';
import { pairedMainJob, texts, untrustedBody, waitForApproval } from './support/main-job-fixture';

const world = pairedMainJob(test, 'current-view-e2e');

async function discover(tabId: number): Promise<{ tools: Array<{ name: string; descriptorHash: string; flags?: string[] }>; violations: Array<{ reason: string; frameId: number }> }> {
  const r = await world.client.callTool({ name: 'webmcp_discover', arguments: { tabId } });
  expect(r.isError, texts(r).join('\n')).toBeFalsy();
  return JSON.parse(untrustedBody(texts(r)[1] as string));
}

const ui = () => world.job.consolePage as Page;
const unshared = (tabId: number) => world.job.core.ledger.query({ event: 'tab-unshared', limit: 50 }).receipts.filter((r) => r.tabId === tabId);

test("the extension's flags on a tool's text are in the dialog", async () => {
  const page = await world.job.openPage(`${world.job.servers.hostileOrigin}/hostile/hidden-instructions.html`);
  const tabId = await world.job.shareThroughApi(page);
  const d = await discover(tabId);
  const tool = d.tools.find((t) => t.name === 'summarize_page')!;
  expect(tool.flags).toContain('hidden-instructions');
  const pending = world.client.callTool({ name: 'webmcp_invoke', arguments: { tabId, name: tool.name, descriptorHash: tool.descriptorHash, arguments: {} } });
  const view = await waitForApproval(world.job.core, (a) => a.subject.toolName === 'summarize_page');
  const flags = ui().getByTestId('approval-dialog').getByTestId('field-flags');
  await expect(flags).toBeVisible();
  await expect(flags.locator('[data-flag="hidden-instructions"]')).toContainText('speaks to the agent');
  await expect(ui().getByTestId('approval-dialog').getByTestId('field-annotations')).toContainText('The browser reports: read-only — yes');
  expect(await world.job.core.api.decideApproval({ requestId: view.requestId, decision: 'deny' })).toEqual({ ok: true, value: null });
  await pending;
  await page.close();
});

test("a page without <title> does not keep the previous page's title in list_tabs", async () => {
  const page = await world.job.openPage(`${world.job.servers.demoOrigin}/forms/`);
  const tabId = await world.job.shareThroughApi(page);
  const before = await page.title();
  expect(before).not.toBe('');
  await page.goto(`${world.job.servers.demoOrigin}/common/untitled.html`);
  const chromeTitle = await world.job.worker.evaluate(async (id) => (await chrome.tabs.get(id)).title ?? '', tabId);
  await expect
    .poll(async () => {
      const r = await world.client.callTool({ name: 'list_tabs', arguments: {} });
      return (JSON.parse(untrustedBody(texts(r)[1] as string)) as Array<{ tabId: number; title: string; url: string }>).find((t) => t.tabId === tabId);
    })
    .toMatchObject({ title: chromeTitle, url: `${world.job.servers.demoOrigin}/common/untitled.html` });
  expect(chromeTitle).not.toBe(before);
  await page.close();
});

test('an unshare on the extension\'s own authority is receipted with the extension as actor and why: another origin, the tab closed', async () => {
  const away = await world.job.openPage(`${world.job.servers.demoOrigin}/forms/`);
  const awayId = await world.job.shareThroughApi(away);
  await away.goto(`${world.job.servers.hostileOrigin}/hostile/hidden-instructions.html`);
  await expect.poll(() => unshared(awayId).length).toBe(1);
  expect(unshared(awayId)[0]).toMatchObject({ actor: { kind: 'extension' }, detail: { reason: 'left-origin' } });

  const closing = await world.job.openPage(`${world.job.servers.demoOrigin}/forms/`);
  const closingId = await world.job.shareThroughApi(closing);
  await closing.close();
  await expect.poll(() => unshared(closingId).length).toBe(1);
  expect(unshared(closingId)[0]).toMatchObject({ actor: { kind: 'extension' }, detail: { reason: 'tab-closed' } });

  // The person's own unshare (the console's button) names the person.
  const mine = await world.job.openPage(`${world.job.servers.demoOrigin}/forms/`);
  const mineId = await world.job.shareThroughApi(mine);
  expect((await world.job.core.api.unshareTab({ tabId: mineId })).ok).toBe(true);
  await expect.poll(() => unshared(mineId).length).toBe(1);
  expect(unshared(mineId)[0]).toMatchObject({ actor: { kind: 'person' } });
  await away.close();
  await mine.close();
});

test('an empty iframe and a srcdoc iframe are not cross-origin violations', async () => {
  const page = await world.job.openPage(`${world.job.servers.demoOrigin}/spa/?item=1`);
  const tabId = await world.job.shareThroughApi(page);
  const frames = await world.job.worker.evaluate(async (id) => (await chrome.webNavigation.getAllFrames({ tabId: id })) ?? [], tabId);
  const about = frames.filter((f) => f.url.startsWith('about:'));
  expect(about.map((f) => f.url).sort()).toEqual(['about:blank', 'about:srcdoc']);
  const d = await discover(tabId);
  expect(d.violations.filter((v) => about.some((f) => f.frameId === v.frameId)), JSON.stringify(d.violations)).toEqual([]);
  await page.close();
});

test("a tool in an iframe: the dialog shows the frame's stripped URL, not only its number", async () => {
  const page = await world.job.openPage(`${world.job.servers.hostileOrigin}/hostile/same-name.html`);
  const tabId = await world.job.shareThroughApi(page);
  const r = await world.client.callTool({ name: 'webmcp_discover', arguments: { tabId } });
  const body = JSON.parse(untrustedBody(texts(r)[1] as string)) as { tools: Array<{ name: string; descriptorHash: string; frameId: number }> };
  const inFrame = body.tools.find((t) => t.name === 'search' && t.frameId !== 0)!;
  expect(inFrame).toBeTruthy();
  const frameUrl = (world.job.core.broker.latestDiscovery(tabId)?.tools.find((t) => t.frameId === inFrame.frameId)?.frameUrl) as string;
  expect(frameUrl).toContain('/hostile/frames/same-name-frame.html');
  const pending = world.client.callTool({ name: 'webmcp_invoke', arguments: { tabId, frameId: inFrame.frameId, name: 'search', descriptorHash: inFrame.descriptorHash, arguments: { query: 'x' } } });
  const view = await waitForApproval(world.job.core, (a) => a.subject.toolName === 'search' && a.frame.frameId === inFrame.frameId);
  await expect(ui().getByTestId('approval-dialog').getByTestId('field-frame')).toHaveText(String(inFrame.frameId));
  await expect(ui().getByTestId('approval-dialog').getByTestId('field-frame-url')).toHaveText(frameUrl);
  expect(await world.job.core.api.decideApproval({ requestId: view.requestId, decision: 'deny' })).toEqual({ ok: true, value: null });
  await pending;
  await page.close();
});
