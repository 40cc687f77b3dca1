/**
 * Effects outside the call (issue 8, item 8; docs/extension.md, "Effects outside the call"), end
 * to end through the console's pipeline (approval, grant, receipts), the real link and the real
 * extension on resources/hostile/effects.html:
 *  - a tool that opens a new tab (a `target=_blank` link, `window.open`): succeeded, and the
 *    answer and the receipt list the new tab's URL, stripped; the new tab is not shared
 *    (`list-tabs` does not list it, `page-info` refuses it);
 *  - a tool that blocks on `alert()` / `confirm()` / `beforeunload` ("Leave site?", shown because
 *    the page had a user gesture) while the dialog waits for the person: the
 *    console does not hang: outcome-unknown after the (injected, short) dispatch timeout, with
 *    the reason `page-unresponsive` (the page did not answer the extension's probe either), and
 *    the sign's "running" state ends;
 *  - what the extension cannot see: a tool runs without a user activation (Chromium 156's
 *    executeTool gives none), so the browser refuses a file chooser, and only the tool's own
 *    answer says so; a download has no event without the `downloads` permission (the answer
 *    lists nothing; the browser did download).
 */
import type { Dialog } from '@playwright/test';
import { test, expect, until, approveView, askInvoke, type LinkWorld } from './support/link-fixture';
import { badgeOf, signOf } from './support/sign';

/** One webmcp_invoke through the broker, approved by the person through the console API; the answer and its last receipt. */
async function run(world: LinkWorld, tabId: number, name: string) {
  const { pending, view } = await askInvoke(world, tabId, name, {}, 'effects-e2e');
  await approveView(world, view);
  const a = await pending;
  const last = world.receipts({ requestId: a.requestId })[0];
  return { a, last };
}

/** The id of the tab that shows `url` now. */
async function tabIdOf(world: LinkWorld, url: string): Promise<number> {
  const w = await world.worker();
  return w.evaluate(async (u) => (await chrome.tabs.query({})).find((t) => t.url === u)?.id ?? -1, url);
}

test('a tool that opens a new tab: the answer and the receipt list it (URL stripped), and the new tab is not shared', async ({ world }) => {
  const origin = world.demo.hostileOrigin;
  const { tabId } = await world.openShared(`${origin}/hostile/effects.html`);
  for (const [name, result, opened] of [
    ['open_link_in_new_tab', 'clicked', 'link'], // its href carries token=s3cret
    ['open_window', 'opened', 'window'], // its URL carries access_token=s3cret
  ] as const) {
    const popup = world.context.waitForEvent('page');
    const { a, last } = await run(world, tabId, name);
    const url = `${origin}/hostile/effects.html?opened=${opened}`;
    expect(a).toMatchObject({ ok: true, value: { outcome: 'succeeded', result, openedTabs: [{ url }] } });
    expect(last).toMatchObject({ event: 'succeeded', detail: { openedTabs: [{ url }] } });
    expect(JSON.stringify(last?.detail)).not.toContain('s3cret');

    // The new tab exists, and the agent can neither list it nor read it.
    const tab = await popup;
    await tab.waitForURL(/opened=/);
    const newTabId = await until(async () => {
      const id = await tabIdOf(world, tab.url());
      return id >= 0 ? id : null;
    }, 'the new tab');
    const listed = await world.request({ op: 'list-tabs' });
    expect(listed.ok && listed.value.map((t) => t.tabId)).toEqual([tabId]);
    const info = await world.request({ op: 'read', faculty: 'page-info', operation: 'info', tabId: newTabId, arguments: {} });
    expect(info).toMatchObject({ ok: false, error: { code: 'tab-not-shared' } });
    await tab.close();
  }
});

test('a tool that blocks on alert(), confirm() or a "Leave site?" dialog does not hang the console: outcome-unknown with the page unresponsive, after the dispatch timeout', async ({ launchWorld }) => {
  // The dispatch timeout is injected short so that the test does not wait 30 s.
  const world = await launchWorld({ core: { dispatchTimeoutMs: 2_000 } });
  const { page, tabId } = await world.openShared(`${world.demo.hostileOrigin}/hostile/effects.html`);
  // A listener keeps the dialog open (Playwright would otherwise dismiss it at once): the person has not answered.
  const dialogs: Dialog[] = [];
  page.on('dialog', (d) => void dialogs.push(d));
  await until(async () => (await signOf(world, tabId))?.open, 'the sign');

  // "Leave site?" needs the page to have been interacted with: Playwright's evaluate counts as a gesture.
  await page.evaluate(() => (globalThis as unknown as { __guardLeaving(): void }).__guardLeaving());
  for (const [name, kind] of [['show_alert', 'alert'], ['show_confirm', 'confirm'], ['leave_page', 'beforeunload']] as const) {
    const { a, last } = await run(world, tabId, name);
    expect(a.ok).toBe(false);
    if (a.ok) return;
    expect(a.error.code).toBe('outcome-unknown');
    expect(a.error.message).toMatch(/dialog \(alert, confirm/);
    expect(last).toMatchObject({ event: 'outcome-unknown', detail: { reason: 'page-unresponsive', pageUnresponsive: true } });
    // The dialog is still open (the page never answered); the running sign on the toolbar has ended.
    const open = dialogs.shift();
    expect(open?.type()).toBe(kind);
    expect(await badgeOf(world, tabId)).toBe('ON');
    // The person closes it (and stays on the page); the page answers again, and its sign says "shared".
    await (kind === 'beforeunload' ? open?.dismiss() : open?.accept());
    expect(await page.evaluate(() => 1 + 1)).toBe(2);
    await until(async () => (await signOf(world, tabId))?.text === 'Shared with Echo Console', 'the sign back to shared');
  }
});

/**
 * Open and share `url` in a tab that Playwright never evaluates in: its `page.evaluate` runs with
 * a user gesture (CDP `userGesture: true`), which would give the page the very activation under test.
 * Ready is read through the extension's isolated world.
 */
async function openUntouched(world: LinkWorld, url: string): Promise<number> {
  const w = await world.worker();
  const tabId = await w.evaluate(async (u) => (await chrome.tabs.create({ url: u })).id ?? -1, url);
  await until(
    () =>
      w.evaluate(async (id) => {
        const [r] = await chrome.scripting.executeScript({
          target: { tabId: id },
          func: () => (globalThis as unknown as { document: { documentElement: { dataset: Record<string, string> } } }).document.documentElement.dataset.ready === 'true',
        });
        return r?.result === true;
      }, tabId),
    'the untouched page to be ready',
  );
  const r = await world.core.api.shareTab({ tabId });
  if (!r.ok) throw new Error(r.error.message);
  return tabId;
}

test('tools run without a user activation, so a file chooser is refused; a download happens and the extension sees nothing of it', async ({ world }) => {
  const url = `${world.demo.hostileOrigin}/hostile/effects.html`;
  const pageOpened = world.context.waitForEvent('page');
  const tabId = await openUntouched(world, url);
  const page = await pageOpened;
  const d = await world.discover(tabId);
  const call = async (name: string) => {
    const tool = d.tools.find((t) => t.name === name);
    if (!tool) throw new Error(`${name} not discovered`);
    return world.invoke(await world.invokeRequest(tool, {}));
  };
  // executeTool gives the page's tool no user activation (Chromium 156)...
  expect(await call('user_activation')).toMatchObject({ ok: true, value: { outcome: 'succeeded', result: JSON.stringify({ isActive: false, hasBeenActive: false }) } });
  // ...so the browser refuses the file chooser a tool asks for; no extension event says so, only the tool's own answer.
  let choosers = 0;
  page.on('filechooser', () => void (choosers += 1));
  const chooser = await call('choose_file');
  expect(chooser).toMatchObject({ ok: true, value: { outcome: 'succeeded', result: 'picker refused: NotAllowedError' } });
  expect(chooser.ok && chooser.value.effects).toBeUndefined();
  expect(choosers).toBe(0);
  // A download happens, and the extension sees nothing of it.
  const download = page.waitForEvent('download');
  const dl = await call('download_file');
  expect(dl).toMatchObject({ ok: true, value: { outcome: 'succeeded', result: 'clicked' } });
  expect(dl.ok && dl.value.effects).toBeUndefined();
  expect((await download).suggestedFilename()).toBe('hello.txt');
});

test("with Chrome's popup blocker on (Playwright turns it off by default), a tool cannot open a tab: it has no user activation", async ({ launchWorld }) => {
  const world = await launchWorld({ ignoreDefaultArgs: ['--disable-popup-blocking'] });
  const tabId = await openUntouched(world, `${world.demo.hostileOrigin}/hostile/effects.html`);
  const d = await world.discover(tabId);
  const w = await world.worker();
  const tabCount = () => w.evaluate(async () => (await chrome.tabs.query({})).length);
  const before = await tabCount();
  for (const [name, result] of [['open_window', 'blocked'], ['open_link_in_new_tab', 'clicked']] as const) {
    const tool = d.tools.find((t) => t.name === name);
    if (!tool) throw new Error(`${name} not discovered`);
    const r = await world.invoke(await world.invokeRequest(tool, {}));
    expect(r).toMatchObject({ ok: true, value: { outcome: 'succeeded', result } });
    expect(r.ok && r.value.effects).toBeUndefined();
  }
  expect(await tabCount()).toBe(before);
});
