/**
 * Review of issue 7: a page that changes its URL (pushState) while the person's
 * dialog is open, end to end (console pipeline → real link → real extension →
 * real page). Passes, and pins what the report describes:
 *  - the console learns of the move (the extension's `navigated` event, same
 *    documentId, drops the discovery) but the dialog stays open, still showing
 *    the URL of the discovery; approving it yields a grant for the old URL hash,
 *    which the extension refuses (`navigated`) — the person was asked for nothing;
 *  - the grant binds the URL of the DISCOVERY, not of the review: a page that
 *    moves away while the dialog is open and comes back before the person
 *    approves runs the tool.
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

test('pushState while the dialog is open: the dialog stays open on the old URL and its grant is refused navigated; moving back before approval runs the tool', async ({ world }) => {
  const { page, tabId } = await world.openShared(world.demo.url('store'));
  const original = page.url();

  const first = await ask(world, tabId);
  expect(first.view.tab.url).toBe(first.discovery.url);
  await page.evaluate("history.pushState({}, '', '/account/2')");
  await until(() => world.core.broker.latestDiscovery(tabId) === undefined, 'the navigated event to reach the console');
  // The console knows the page moved, yet the request is still waiting for the person, unchanged.
  expect(world.core.broker.approvals.list().map((v) => v.requestId)).toContain(first.view.requestId);
  expect(world.core.broker.approvals.list().find((v) => v.requestId === first.view.requestId)!.tab.url).toBe(first.discovery.url);
  expect(await world.core.api.decideApproval({ requestId: first.view.requestId, decision: 'approve' })).toEqual({ ok: true, value: null });
  const a = await first.pending;
  expect(!a.ok && a.error.code).toBe('navigated');
  expect(world.receipts({ requestId: a.requestId }).map((x) => x.event).reverse()).toEqual(['requested', 'validated', 'approval-shown', 'approved', 'dispatched', 'refused']);
  expect(await world.execCount(page, 'add_to_cart')).toBe(0);

  // Back at the original URL: discover, ask, move away during the review, come back, approve.
  await page.evaluate(`history.replaceState({}, '', ${JSON.stringify(original)})`);
  await until(() => world.core.broker.getSharedTabs().find((t) => t.tabId === tabId)?.url === first.discovery.url, 'the tab back at its URL');
  const second = await ask(world, tabId);
  await page.evaluate("history.pushState({}, '', '/elsewhere')");
  await until(() => world.core.broker.latestDiscovery(tabId) === undefined, 'the navigated event');
  await page.evaluate(`history.replaceState({}, '', ${JSON.stringify(original)})`);
  await until(() => world.core.broker.getSharedTabs().find((t) => t.tabId === tabId)?.url === first.discovery.url, 'the tab back at its URL');
  expect(await world.core.api.decideApproval({ requestId: second.view.requestId, decision: 'approve' })).toEqual({ ok: true, value: null });
  const b = await second.pending;
  expect(b).toMatchObject({ ok: true, value: { outcome: 'succeeded' } });
  expect(await world.execCount(page, 'add_to_cart')).toBe(1);
});
