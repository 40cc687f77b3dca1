/**
 * The sign of a shared tab (issue 8, item 8; docs/extension.md, "The sign in the page"), end to
 * end on real Chromium with the real extension, console core and link, on
 * resources/hostile/effects.html:
 *  - while shared: a badge in the page's top layer ("Shared with Echo Console", in a closed
 *    shadow root the page cannot open) and "ON" on the toolbar badge of that tab; gone on unshare;
 *  - while an action runs: "Agent action running…" in red with an outline, and "RUN" on the toolbar;
 *  - what the page can do about it: cover it with its own popover or modal dialog (the sign is
 *    raised above, as the rendered pixels show), remove the host, restyle it, hide it (each
 *    repaired), and fight forever (the repairs stop at their budget; the page stays responsive
 *    and the toolbar badge, which the page cannot touch, stays).
 */
import type { Page } from '@playwright/test';
import { test, expect, until, type LinkWorld } from './support/link-fixture';
import { COLOURS, badgeOf, hostile, near, pixelOf, signOf } from './support/sign';

/** Where the pill is drawn (content/sign.ts: 12 px from the bottom right corner) and a point of the running outline. */
function points(page: Page) {
  const v = page.viewportSize() ?? { width: 1280, height: 720 };
  return { pill: [v.width - 18, v.height - 27] as const, middle: [v.width / 2, v.height / 2] as const, edge: [1, v.height / 2] as const };
}

async function signShows(world: LinkWorld, tabId: number, text: string) {
  return until(async () => {
    const s = await signOf(world, tabId);
    return s && s.open && s.text === text ? s : null;
  }, `the sign to show "${text}"`);
}

async function pillColour(world: LinkWorld, page: Page, scratch: Page, want: readonly number[]) {
  const { pill } = points(page);
  return until(async () => near(await pixelOf(page, scratch, pill[0], pill[1]), want), `the pill to be drawn in ${want.join(',')}`);
}

test('a shared tab shows its sign in the page and on the toolbar; the page can neither read it nor keep it covered', async ({ world }) => {
  const origin = world.demo.hostileOrigin;
  const { page, tabId } = await world.openShared(`${origin}/hostile/effects.html`);
  const scratch = await world.context.newPage();
  const s = await signShows(world, tabId, 'Shared with Echo Console');
  expect(s.last).toBe(true);
  expect(await badgeOf(world, tabId)).toBe('ON');
  await pillColour(world, page, scratch, COLOURS.shared);

  // The page sees a host node and nothing in it: the root is closed, its text is not the page's.
  expect(await hostile(page, 'shadowRoot')).toBeNull();
  expect(await page.evaluate(() => (globalThis as unknown as { document: { documentElement: { innerText: string } } }).document.documentElement.innerText)).not.toContain('Echo Console');
  // Nor does it change what WebMCP lists.
  const d = await world.discover(tabId);
  expect(d.tools.map((t) => t.name).sort()).toEqual(['choose_file', 'download_file', 'leave_page', 'open_link_in_new_tab', 'open_window', 'show_alert', 'show_confirm', 'user_activation', 'wait_for_release']);

  // The page's own top-layer elements: the sign is raised above them.
  const { middle } = points(page);
  await hostile(page, 'cover');
  await until(async () => near(await pixelOf(page, scratch, middle[0], middle[1]), COLOURS.pageCover), 'the page cover to show');
  await pillColour(world, page, scratch, COLOURS.shared);
  await hostile(page, 'uncover');
  await hostile(page, 'modal');
  await until(async () => near(await pixelOf(page, scratch, middle[0], middle[1]), COLOURS.pageCover), 'the modal dialog to show');
  await pillColour(world, page, scratch, COLOURS.shared);
  await hostile(page, 'closeModal');

  // Removed, hidden, restyled: put back each time.
  for (const attack of ['remove', 'hide', 'restyle']) {
    await hostile(page, attack);
    await signShows(world, tabId, 'Shared with Echo Console');
    await pillColour(world, page, scratch, COLOURS.shared);
  }

  // Unshared: the sign and the toolbar badge go.
  expect(await world.core.api.unshareTab({ tabId })).toMatchObject({ ok: true });
  await until(async () => (await signOf(world, tabId)) === null, 'the sign to be removed');
  await until(async () => (await badgeOf(world, tabId)) === '', 'the toolbar badge to clear');
});

test('while an action runs in the tab the sign says so, in the page and on the toolbar, and goes back after', async ({ world }) => {
  const { page, tabId } = await world.openShared(`${world.demo.hostileOrigin}/hostile/effects.html`);
  const scratch = await world.context.newPage();
  await signShows(world, tabId, 'Shared with Echo Console');
  const d = await world.discover(tabId);
  const tool = d.tools.find((t) => t.name === 'wait_for_release');
  if (!tool) throw new Error('wait_for_release not discovered');
  const running = world.invoke(await world.invokeRequest(tool, {}));
  await signShows(world, tabId, 'Agent action running\u2026');
  expect(await badgeOf(world, tabId)).toBe('RUN');
  await pillColour(world, page, scratch, COLOURS.running);
  const { edge } = points(page);
  expect(near(await pixelOf(page, scratch, edge[0], edge[1]), COLOURS.running)).toBe(true);
  await page.evaluate(() => (globalThis as unknown as { __release(): void }).__release());
  expect(await running).toMatchObject({ ok: true, value: { outcome: 'succeeded', result: 'released' } });
  await signShows(world, tabId, 'Shared with Echo Console');
  await until(async () => (await badgeOf(world, tabId)) === 'ON', 'the toolbar badge back to ON');
});

test('a page that removes the sign every time it comes back cannot make the extension loop; the toolbar badge stays', async ({ world }) => {
  const { page, tabId } = await world.openShared(`${world.demo.hostileOrigin}/hostile/effects.html`);
  await signShows(world, tabId, 'Shared with Echo Console');
  await hostile(page, 'fight');
  // The sign's budget (content/sign.ts MAX_REPAIRS = 40 per window) runs out...
  await until(async () => ((await hostile(page, 'removals')) as number) >= 40, 'the page to have removed the sign 40 times');
  // ...and the page still answers (nothing loops in it), while the toolbar badge still says the tab is shared.
  expect(await page.evaluate(() => 1 + 1)).toBe(2);
  expect(await badgeOf(world, tabId)).toBe('ON');
});

test('the sign follows the share: a new same-origin document gets it (page and toolbar); leaving the origin ends both', async ({ world }) => {
  const origin = world.demo.hostileOrigin;
  const { page, tabId } = await world.openShared(`${origin}/hostile/effects.html`);
  await signShows(world, tabId, 'Shared with Echo Console');
  await page.goto(`${origin}/hostile/effects.html?again=1`);
  await signShows(world, tabId, 'Shared with Echo Console');
  await until(async () => (await badgeOf(world, tabId)) === 'ON', 'the toolbar badge on the new document');
  // Another origin: sharing ends (docs/extension.md, "Sharing"), and so do its signs.
  await page.goto(world.demo.url('store'));
  await until(async () => (await badgeOf(world, tabId)) === '', 'the toolbar badge to clear');
  expect(await signOf(world, tabId)).toBeNull();
});
