/**
 * Honest results (issue 8 item 5), end to end through the console's pipeline, the real link and
 * the real extension on resources/hostile/leaving.html: outcomes come from what the browser saw
 * (webNavigation, documentId), not from the shape of the answer.
 *  - a tool that starts a navigation and returns: succeeded with its string, and the page left
 *    (navigatedTo: the new document's URL, stripped), for the agent and in the receipt, or, when
 *    the new document commits before the answer arrives, outcome-unknown at once with where it went;
 *  - one that changes the URL in the same document and returns: the same, with the new URL;
 *  - a toolautosubmit form without respondWith: the browser answers null, then the submission
 *    navigates: succeeded, result null, navigatedTo (or outcome-unknown at once, as above);
 *  - a tool that answers and stays: no navigatedTo.
 */
import { test, expect, approveView, askInvoke, type LinkWorld } from './support/link-fixture';

/** One approved webmcp_invoke: the answer and its succeeded receipt. */
async function run(world: LinkWorld, tabId: number, name: string, args: Record<string, unknown>) {
  const { pending, view } = await askInvoke(world, tabId, name, args, 'honest-e2e');
  await approveView(world, view);
  const a = await pending;
  const receipt = world.receipts({ requestId: a.requestId }).find((r) => r.event === 'succeeded');
  return { a, receipt };
}

test('a tool that answers and then leaves: succeeded with what it returned, and where the page went, as the browser saw it', async ({ world }) => {
  const origin = world.demo.hostileOrigin;
  {
    // A tool that answers and stays: nothing about leaving.
    const { page, tabId } = await world.openShared(world.demo.url('store'));
    const { a, receipt } = await run(world, tabId, 'get_cart', {});
    expect(a.ok && a.value.navigatedTo).toBeUndefined();
    expect((receipt?.detail as Record<string, unknown>).navigatedTo).toBeUndefined();
    await page.close();
  }
  // One tab for the rest, brought back to the page between calls (a same-origin navigation keeps the share).
  const { page, tabId } = await world.openShared(`${origin}/hostile/leaving.html`);
  const back = async (leftTo: RegExp) => {
    await page.waitForURL(leftTo); // the page's own navigation first, then ours
    await page.goto(`${origin}/hostile/leaving.html`);
    await page.locator('html[data-ready="true"]').waitFor({ state: 'attached' });
  };
  {
    // Which comes first, the tool's answer or the new document, is the browser's race: either way the
    // outcome says what the browser saw, at once (a page kept in the back/forward cache would
    // otherwise hold the answer until the dispatch timeout).
    const { a, receipt } = await run(world, tabId, 'navigate_and_return', {});
    const left = `${origin}/hostile/leaving.html?left=1`;
    if (a.ok) {
      expect(a.value).toMatchObject({ outcome: 'succeeded', result: 'navigation started', navigatedTo: left });
      expect(receipt?.detail).toMatchObject({ navigatedTo: left });
    } else {
      expect(a.error.code).toBe('outcome-unknown');
      const unknown = world.receipts({ requestId: a.requestId }).find((r) => r.event === 'outcome-unknown');
      expect(unknown?.detail).toMatchObject({ reason: 'document-left', navigatedTo: left });
    }
  }
  await back(/left=1/);
  {
    const { a } = await run(world, tabId, 'push_state_and_return', {});
    expect(a).toMatchObject({ ok: true, value: { outcome: 'succeeded', result: 'url changed', navigatedTo: `${origin}/hostile/leaving.html?step=2` } });
  }
  await back(/step=2/);
  {
    const { a, receipt } = await run(world, tabId, 'submit_and_leave', { note: 'hello' });
    if (a.ok) {
      expect(a.value.result).toBeNull();
      expect(a.value).toMatchObject({ outcome: 'succeeded' });
      expect(a.value.navigatedTo).toMatch(new RegExp(`^${origin}/hostile/leaving\\.html\\?.*submitted=1`));
      expect(receipt?.detail).toMatchObject({ navigatedTo: expect.stringContaining('submitted=1') });
    } else {
      expect(a.error.code).toBe('outcome-unknown');
      const unknown = world.receipts({ requestId: a.requestId }).find((r) => r.event === 'outcome-unknown');
      expect(unknown?.detail).toMatchObject({ reason: 'document-left', navigatedTo: expect.stringContaining('submitted=1') });
    }
  }
});
