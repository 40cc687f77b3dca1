/**
 * A page that changes its URL (pushState, replaceState) while the person's
 * dialog is open, end to end (console pipeline → real link → real extension →
 * real page; found by the outside review of issue 7, fixed since). The grant
 * binds the exact URL the person reviewed, so:
 *  - a same-document URL change while the dialog is open refuses the request
 *    (`navigated`) at once: the person is never asked to approve something that
 *    can no longer run as shown, and a late "approve" is `unknown-request`;
 *  - a page that moves away and comes back while the dialog is open does not get
 *    its tool run either: the request was refused when it moved.
 */
import { test, expect, until, type LinkWorld } from './support/link-fixture';

const reader = { actor: { kind: 'agent' as const, name: 'review-e2e' }, kind: 'read' as const };

async function ask(world: LinkWorld, tabId: number) {
  const d = await world.core.broker.discover({ tabId }, reader);
  if (!d.ok) throw new Error(d.error.message);
  const add = d.value.tools.find((t) => t.name === 'add_to_cart' && t.frameId === 0)!;
  const pending = world.core.broker.invoke({ tabId, name: 'add_to_cart', descriptorHash: add.descriptorHash, arguments: { productId: 'mug', quantity: 1 } }, { ...reader, kind: 'mutation' });
  const view = await until(() => world.core.broker.approvals.list().find((v) => v.subject.toolName === 'add_to_cart'), 'the approval to be shown');
  return { discovery: d.value, pending, view };
}

test('pushState while the dialog is open refuses the request (navigated) at once; moving away and back during the review runs nothing', async ({ world }) => {
  const { page, tabId } = await world.openShared(world.demo.url('store'));
  const original = page.url();

  const first = await ask(world, tabId);
  expect(first.view.tab.url).toBe(first.discovery.url);
  await page.evaluate("history.pushState({}, '', '/account/2')");
  const a = await first.pending;
  expect(!a.ok && a.error.code).toBe('navigated');
  expect(world.core.broker.approvals.list().map((v) => v.requestId)).not.toContain(first.view.requestId);
  expect(await world.core.api.decideApproval({ requestId: first.view.requestId, decision: 'approve' })).toMatchObject({ ok: false, error: { code: 'unknown-request' } });
  expect(world.receipts({ requestId: a.requestId }).map((x) => x.event).reverse()).toEqual(['requested', 'validated', 'approval-shown', 'refused']);
  expect(await world.execCount(page, 'add_to_cart')).toBe(0);

  // Back at the original URL: discover, ask, move away during the review, come back.
  await page.evaluate(`history.replaceState({}, '', ${JSON.stringify(original)})`);
  await until(() => world.core.broker.getSharedTabs().find((t) => t.tabId === tabId)?.url === first.discovery.url, 'the tab back at its URL');
  const second = await ask(world, tabId);
  await page.evaluate("history.pushState({}, '', '/elsewhere')");
  await page.evaluate(`history.replaceState({}, '', ${JSON.stringify(original)})`);
  const b = await second.pending;
  expect(!b.ok && b.error.code).toBe('navigated');
  expect(await world.execCount(page, 'add_to_cart')).toBe(0);

  // A review with no move in between runs the tool, once.
  await until(() => world.core.broker.getSharedTabs().find((t) => t.tabId === tabId)?.url === first.discovery.url, 'the tab back at its URL');
  const third = await ask(world, tabId);
  expect(await world.core.api.decideApproval({ requestId: third.view.requestId, decision: 'approve' })).toEqual({ ok: true, value: null });
  expect(await third.pending).toMatchObject({ ok: true, value: { outcome: 'succeeded' } });
  expect(await world.execCount(page, 'add_to_cart')).toBe(1);
});
