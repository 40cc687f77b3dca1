/**
 * Invocation over the REAL link (issue 3, items 9.3 and 9.4): grants signed by
 * the console's Bridge (`core.link.signGrant`, the pairing key agreed in a
 * real pairing), sent by the console over native messaging, checked by the
 * extension right before dispatch, run in the page. A valid grant changes the
 * shop's DOM; each refusal code is produced by a hostile page or by a
 * forged, replayed or expired grant, and in each the page's tool never ran
 * (`window.__echoExecCount`, counted in the page's main world).
 */
import type { Page } from '@playwright/test';
import { descriptorHash } from '../../src/shared/canonical';
import type { Result } from '../../src/shared/result';
import type { DiscoveryResult, InvocationResult, ToolDescriptor } from '../../src/shared/types';
import { test, expect, until, type InvokeRequest, type LinkWorld } from './support/link-fixture';

const tool = (d: DiscoveryResult, name: string, frameId = 0): ToolDescriptor => {
  const t = d.tools.find((x) => x.name === name && x.frameId === frameId);
  if (!t) throw new Error(`no tool ${name} in frame ${frameId}: ${d.tools.map((x) => `${x.name}@${x.frameId}`).join(', ')}`);
  return t;
};

/** The outcome, or the refusal code when refused; throws when the link itself failed. */
async function outcome(w: LinkWorld, req: InvokeRequest): Promise<string> {
  const r: Result<InvocationResult> = await w.invoke(req);
  if (!r.ok) throw new Error(`link error ${r.error.code}: ${r.error.message}`);
  return r.value.outcome === 'refused' ? (r.value.refusal as string) : r.value.outcome;
}

const call = <T>(page: Page, fn: string, ...args: unknown[]): Promise<T> =>
  page.evaluate(([f, a]) => {
    const path = (f as string).split('.');
    let self: unknown = globalThis;
    let target: unknown = globalThis;
    for (const p of path) {
      self = target;
      target = (target as Record<string, unknown>)[p];
    }
    return (target as (...x: unknown[]) => unknown).apply(self, a as unknown[]);
  }, [fn, args] as const) as Promise<T>;

test('a valid grant signed by the bridge runs add_to_cart once and the shop DOM changes', async ({ world }) => {
  const { page, tabId } = await world.openShared(world.demo.url('store'));
  await expect(page.locator('[data-testid=product-mug]')).toHaveAttribute('data-quantity', '0');
  const d = await world.discover(tabId);
  const r = await world.invoke(await world.invokeRequest(tool(d, 'add_to_cart'), { productId: 'mug', quantity: 2 }));
  expect(r).toMatchObject({ ok: true, value: { outcome: 'succeeded', truncated: false } });
  const answer = JSON.parse((r.ok && r.value.result) || 'null') as { ok: boolean; committed: boolean; cart: unknown };
  expect(answer).toMatchObject({ ok: true, committed: true });
  await expect(page.locator('[data-testid=product-mug]')).toHaveAttribute('data-quantity', '2');
  await expect(page.locator('[data-testid=cart-total]')).toHaveAttribute('data-total-cents', '2400');
  await expect(page.locator('[data-testid=activity] li[data-actor=agent]')).toHaveCount(1);
  expect(await world.execCount(page, 'add_to_cart')).toBe(1);
});

test('the whole lifecycle: agent request → approval in the console → grant → dispatch over the link → DOM → receipts', async ({ world }) => {
  const { page, tabId } = await world.openShared(world.demo.url('store'));
  const agent = { actor: { kind: 'agent' as const, name: 'e2e-agent' }, kind: 'read' as const };
  const d = await world.core.broker.discover({ tabId }, agent);
  if (!d.ok) throw new Error(d.error.message);
  const add = tool(d.value, 'add_to_cart');
  const pending = world.core.broker.invoke({ tabId, name: 'add_to_cart', descriptorHash: add.descriptorHash, arguments: { productId: 'tee', quantity: 1 } }, { ...agent, kind: 'mutation' });
  const view = await until(() => world.core.broker.approvals.list().find((v) => v.subject.toolName === 'add_to_cart'), 'the approval to be shown');
  expect(view).toMatchObject({ origin: world.demo.demoOrigin, documentId: add.documentId, subjectHash: add.descriptorHash, subject: { descriptorHash: add.descriptorHash }, arguments: { productId: 'tee', quantity: 1 } });
  expect(await world.core.api.decideApproval({ requestId: view.requestId, decision: 'approve' })).toEqual({ ok: true, value: null });
  const r = await pending;
  expect(r).toMatchObject({ ok: true, value: { outcome: 'succeeded', toolName: 'add_to_cart', documentId: add.documentId } });
  await expect(page.locator('[data-testid=product-tee]')).toHaveAttribute('data-quantity', '1');
  const events = world.receipts({ requestId: r.requestId }).map((x) => x.event).reverse();
  expect(events).toEqual(['requested', 'validated', 'approval-shown', 'approved', 'dispatched', 'succeeded']);
  expect(world.core.ledger.verify().ok).toBe(true);
});

test('forged, expired, replayed grants and changed arguments are refused before dispatch: grant-invalid, grant-expired, grant-reused, arguments-mismatch', async ({ world }) => {
  const { page, tabId } = await world.openShared(world.demo.url('store'));
  const add = tool(await world.discover(tabId), 'add_to_cart');
  const args = { productId: 'mug', quantity: 1 };

  // grant-invalid: a forged MAC (one hex digit changed), a field changed after signing, a grant for another frame.
  const forged = await world.invokeRequest(add, args);
  forged.grant = { ...forged.grant, mac: forged.grant.mac.slice(0, -1) + (forged.grant.mac.endsWith('0') ? '1' : '0') };
  expect(await outcome(world, forged)).toBe('grant-invalid');
  const tampered = await world.invokeRequest(add, args);
  tampered.grant = { ...tampered.grant, expiresAt: tampered.grant.expiresAt + 3_600_000 };
  expect(await outcome(world, tampered)).toBe('grant-invalid');
  const otherFrame = await world.invokeRequest(add, args);
  otherFrame.target.frameId = 3;
  expect(await outcome(world, otherFrame)).toBe('grant-invalid');

  // grant-expired: a correctly signed grant whose expiry has passed.
  expect(await outcome(world, await world.invokeRequest(add, args, { expiresAt: Date.now() - 1 }))).toBe('grant-expired');

  // arguments-mismatch: approved {mug, 1}, sent {mug, 99}.
  const changed = await world.invokeRequest(add, args);
  changed.arguments = { productId: 'mug', quantity: 99 };
  expect(await outcome(world, changed)).toBe('arguments-mismatch');
  expect(await world.execCount(page, 'add_to_cart')).toBe(0);
  await expect(page.locator('[data-testid=product-mug]')).toHaveAttribute('data-quantity', '0');

  // grant-reused: the same grant sent twice; the replay never reaches the page.
  const once = await world.invokeRequest(add, args);
  expect(await outcome(world, once)).toBe('succeeded');
  expect(await outcome(world, once)).toBe('grant-reused');
  expect(await world.execCount(page, 'add_to_cart')).toBe(1);
  await expect(page.locator('[data-testid=product-mug]')).toHaveAttribute('data-quantity', '1');
});

test('navigated: the page moved to a new document (identical descriptor) between grant and dispatch', async ({ world }) => {
  const { page, tabId } = await world.openShared(world.demo.url('navigation'));
  const d = await world.discover(tabId);
  const order = tool(d, 'place_order');
  const req = await world.invokeRequest(order, { item: 'book', quantity: 1 });
  await call(page, '__navigate', 'same-page');
  await page.waitForURL(/gen=2/);
  await page.locator('html[data-ready="true"]').waitFor({ state: 'attached' });
  // The new document offers a byte-identical place_order (same descriptorHash), yet the grant was for the old document.
  const after = await world.discover(tabId);
  expect(tool(after, 'place_order').descriptorHash).toBe(order.descriptorHash);
  expect(after.documentId).not.toBe(order.documentId);
  expect(await outcome(world, req)).toBe('navigated');
  expect(await world.execCount(page, 'place_order')).toBe(0);
  // The console heard of the navigation as an event too.
  await expect.poll(() => world.events.some((e) => e.kind === 'navigated' && e.tabId === tabId && e.documentId === after.documentId)).toBe(true);
});

test('tool-missing: the page unregistered the tool between grant and dispatch', async ({ world }) => {
  const { page, tabId } = await world.openShared(world.demo.url('changing'));
  expect(await call(page, '__changing.toggleExtra')).toBe(true);
  const req = await world.invokeRequest(tool(await world.discover(tabId), 'extra_tool'), {});
  expect(await call(page, '__changing.toggleExtra')).toBe(false);
  expect(await outcome(world, req)).toBe('tool-missing');
  expect(await world.execCount(page, 'extra_tool')).toBe(0);
});

test('descriptor-changed: a rug pull between grant and dispatch', async ({ world }) => {
  const { page, tabId } = await world.openShared(world.demo.url('rug-pull'));
  const weather = tool(await world.discover(tabId), 'get_weather');
  for (const variant of ['description', 'schema', 'annotations']) {
    const req = await world.invokeRequest(weather, { city: 'Paris' });
    await call(page, '__rugPull', variant);
    expect(await outcome(world, req), variant).toBe('descriptor-changed');
    await call(page, '__rugPullReset');
  }
  expect(await world.execCount(page, 'get_weather')).toBe(0);
  // Back to the original descriptor (same hash as approved): a fresh grant runs it.
  expect(tool(await world.discover(tabId), 'get_weather').descriptorHash).toBe(weather.descriptorHash);
  expect(await outcome(world, await world.invokeRequest(weather, { city: 'Paris' }))).toBe('succeeded');
  expect(await world.execCount(page, 'get_weather')).toBe(1);
});

test('tool-blocked (password form) and tab-not-shared (sharing ended) even with valid grants', async ({ world }) => {
  const { page, tabId } = await world.openShared(world.demo.url('password-form'));
  const signIn = tool(await world.discover(tabId), 'sign_in');
  expect(signIn.blocked).toBe('password-field');
  expect(await outcome(world, await world.invokeRequest(signIn, { username: 'alice', password: 'hunter2' }))).toBe('tool-blocked');
  await expect(page.locator('[data-testid=submissions]')).toHaveAttribute('data-count', '0');

  const store = await world.openShared(world.demo.url('store'));
  const req = await world.invokeRequest(tool(await world.discover(store.tabId), 'get_cart'), {});
  expect(await world.core.api.unshareTab({ tabId: store.tabId })).toEqual({ ok: true, value: null });
  expect(await outcome(world, req)).toBe('tab-not-shared');
  expect(await world.execCount(store.page, 'get_cart')).toBe(0);
});

test('same-name frames: no tool-ambiguous in Chromium 156; each frame runs its own `search`, by frameId and documentId', async ({ world }) => {
  // Chromium lists the same-origin iframe's `search` in the top document's getTools() as well, so the
  // top "sees" two tools named search. The extension keeps only the tools each document registered
  // itself (tool.window), so each `search` is unique in its own frame and the grant's frameId picks it.
  // tool-ambiguous therefore cannot come from a real page in this build (duplicate names are refused
  // within one document); its check is unit-tested in test/unit/extension-grant-checks.test.ts.
  const { page, tabId } = await world.openShared(world.demo.url('same-name'));
  await page.locator('[data-testid=frames-state][data-frames-ready="4"]').waitFor({ state: 'attached' });
  const d = await world.discover(tabId);
  const frameId = d.tools.find((t) => t.frameId !== 0)!.frameId;
  const top = await world.invoke(await world.invokeRequest(tool(d, 'search', 0), { query: 'a' }));
  const frame = await world.invoke(await world.invokeRequest(tool(d, 'search', frameId), { query: 'b' }));
  expect(top.ok && JSON.parse(top.value.result as string)).toMatchObject({ frame: 'top', query: 'a' });
  expect(frame.ok && JSON.parse(frame.value.result as string)).toMatchObject({ frame: 'same-origin', query: 'b' });
  // A grant for the top's search presented with the iframe's address is not a way around the binding.
  const crossed = await world.invokeRequest(tool(d, 'search', 0), { query: 'c' });
  crossed.target.frameId = frameId;
  crossed.target.documentId = tool(d, 'search', frameId).documentId;
  expect(await outcome(world, crossed)).toBe('grant-invalid');
});

test('a tool past the per-frame limit is never run, even with a grant carrying its true descriptor hash', async ({ world }) => {
  // The rediscovery before dispatch asks the content script for one name only; it must still apply the
  // limit of a full discovery (only the first LIMITS.maxToolsPerFrame tools of a frame count).
  const { page, tabId } = await world.openShared(world.demo.url('many-tools'));
  const d = await world.discover(tabId);
  expect(d.tools.some((t) => t.name === 'tool_0100')).toBe(false);
  const pageHash = async (name: string) => {
    const raw = await page.evaluate(async (n) => {
      const mc = (globalThis as unknown as { document: { modelContext: { getTools(): Promise<Record<string, unknown>[]> } } }).document.modelContext;
      const t = (await mc.getTools()).find((x) => x.name === n)!;
      return { name: t.name, title: t.title, description: t.description, inputSchema: t.inputSchema, annotations: t.annotations, origin: t.origin } as Record<string, unknown>;
    }, name);
    return descriptorHash(raw as never);
  };
  const listed = tool(d, 'tool_0001');
  expect(await pageHash('tool_0001')).toBe(listed.descriptorHash); // the hash below is computed the extension's way
  const beyond = { ...listed, name: 'tool_0100', descriptorHash: await pageHash('tool_0100') };
  expect(await outcome(world, await world.invokeRequest(beyond, { value: 1 }))).toBe('descriptor-changed');
  expect(await world.execCount(page, 'tool_0100')).toBe(0);
  // The same request shape for a listed tool runs.
  expect(await outcome(world, await world.invokeRequest(listed, { value: 1 }))).toBe('succeeded');
});
