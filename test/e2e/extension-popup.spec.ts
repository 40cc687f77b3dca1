/// <reference types="chrome" />
/**
 * The popup, opened as a page of the extension (headless Chromium has no
 * toolbar to click): link state shown plainly, refusal reasons for pages that
 * are never shared, the shared-tab list and "Stop".
 */
import { test, expect } from './support/extension-fixture';
import { startTestPages, type TestPages } from './support/extension-pages';
import { openShared, request } from './support/extension-helpers';

let pages: TestPages;
test.beforeAll(async () => {
  pages = await startTestPages();
  pages.set('/p', '<!doctype html><title>Shop page</title><p>hi</p>');
});
test.afterAll(async () => {
  await pages.close();
});

test('shows the link state, refuses extension pages with a reason, lists and stops shared tabs', async ({ ext }) => {
  const { tabId } = await openShared(ext.worker, () => ext.context.newPage(), `${pages.a}/p?session=SECRET`);
  const popup = await ext.context.newPage();
  await popup.goto(`chrome-extension://${ext.extensionId}/popup/popup.html`);
  // No native host is installed in this profile: the popup says so, never "connected".
  await expect(popup.locator('#link-dot')).toHaveAttribute('data-state', 'not-installed');
  await expect(popup.locator('#link-label')).toHaveText("Echo Console's native host is not registered for this browser.");
  // The advice is right even while the console runs (the host is registered at the console's start, for the browsers present then).
  await expect(popup.locator('#link-message')).toContainText(
    'Echo Console registers its native host when it starts. If this browser had never run before the console started, restart the console, then click Try again.',
  );
  await expect(popup.locator('#link-message')).not.toContainText('Start Echo Console once');
  await expect(popup.locator('#retry')).toBeVisible();
  // The active tab is the popup itself (an extension page): never shareable, and the reason is shown.
  await expect(popup.locator('#share')).toBeHidden();
  await expect(popup.locator('#active-reason')).toHaveText('Extension pages are never shared.');
  // The shared tab is listed by its title; its URL (stripped) is the tooltip.
  const item = popup.locator('#shared li');
  await expect(item).toHaveCount(1);
  await expect(item.locator('span')).toHaveText('Shop page');
  await expect(item.locator('span')).toHaveAttribute('title', `${pages.a}/p`);
  await item.locator('button').click();
  await expect(popup.locator('#shared li')).toHaveCount(0);
  await expect(popup.locator('#none-shared')).toBeVisible();
  const list = await request(ext.worker, { op: 'list-tabs' });
  expect(list.ok && list.value).toEqual([]);
  expect(tabId).toBeGreaterThan(0);
});

test('"Share this tab" shares the active tab of the last focused window; "Stop sharing" stops it', async ({ ext }) => {
  const page = await ext.context.newPage();
  await page.goto(`${pages.a}/p`);
  // The popup in its own window, with the page's window focused: the popup's "active tab" is the page, as with the toolbar popup.
  const popupOpened = ext.context.waitForEvent('page');
  const focusPage = () =>
    ext.worker.evaluate(async (url) => {
      const [tab] = await chrome.tabs.query({ url: `${url}*` });
      await chrome.windows.update(tab!.windowId, { focused: true });
      return tab!.id!;
    }, `${pages.a}/p`);
  await ext.worker.evaluate(() => chrome.windows.create({ url: chrome.runtime.getURL('popup/popup.html'), type: 'popup', focused: false }));
  const tabId = await focusPage();
  const popup = await popupOpened;
  await expect(popup.locator('#active-title')).toHaveText('Shop page');
  // dispatchEvent, not click(): Playwright's click would focus the popup's window, making it the "active tab".
  await popup.locator('#share').dispatchEvent('click');
  await expect(popup.locator('#shared li span')).toHaveText('Shop page');
  const list = await request(ext.worker, { op: 'list-tabs' });
  expect(list.ok && list.value.map((t) => t.tabId)).toEqual([tabId]);
  await expect(popup.locator('#unshare')).toBeVisible();
  await popup.locator('#unshare').dispatchEvent('click');
  await expect(popup.locator('#shared li')).toHaveCount(0);
  const after = await request(ext.worker, { op: 'list-tabs' });
  expect(after.ok && after.value).toEqual([]);
});
