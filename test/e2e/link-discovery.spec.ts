/**
 * Discovery over the REAL link (issue 3, item 9.2): the console asks
 * (`core.link.request({op:'discover'})`, and the agent path `broker.discover`)
 * → Bridge → socket → native host → Chrome native messaging → service worker →
 * content script in each same-origin frame → back. Every demo page, the
 * same-name frames, the password form, and the hostile pages that break a
 * limit; `toolchange` reaching the console as a `tools-changed` event.
 */
import { DEMO_PAGES } from '../support/demo-servers';
import { LIMITS } from '../../src/shared/limits';
import type { DiscoveryResult } from '../../src/shared/types';
import { test, expect } from './support/link-fixture';

const HEX64 = /^[0-9a-f]{64}$/;
const names = (d: DiscoveryResult) => d.tools.map((t) => t.name).sort();

test('every demo page (store, forms, changing) is discovered through the console, with its own origin, document and hashes', async ({ world }) => {
  for (const id of ['store', 'forms', 'changing']) {
    const promised = DEMO_PAGES.find((p) => p.id === id)!;
    const { tabId } = await world.openShared(world.demo.url(id));
    const shared = world.core.broker.getSharedTabs().find((t) => t.tabId === tabId)!;
    const d = await world.discover(tabId);
    expect(names(d), id).toEqual([...promised.tools].sort());
    expect(d).toMatchObject({ tabId, origin: world.demo.demoOrigin, documentId: shared.documentId, violations: [], support: { modelContext: true, argumentForm: 'object' } });
    for (const t of d.tools) {
      expect(t).toMatchObject({ tabId, frameId: 0, documentId: shared.documentId, origin: world.demo.demoOrigin });
      expect(t.descriptorHash).toMatch(HEX64);
      expect(t.blocked).toBeUndefined();
      expect(t.kind).toBe(id === 'forms' ? 'declarative' : 'imperative');
    }
  }
  // The agent's path: the broker keeps the discovery and writes a receipt.
  const store = world.core.broker.getSharedTabs().find((t) => t.url.includes('/store/'))!;
  const viaBroker = await world.core.broker.discover({ tabId: store.tabId }, { actor: { kind: 'agent', name: 'e2e' }, kind: 'read' });
  expect(viaBroker.ok && names(viaBroker.value)).toEqual(['add_to_cart', 'get_cart', 'list_products', 'set_cart_quantity']);
  expect(world.receipts({ event: 'discovered', requestId: viaBroker.requestId })).toHaveLength(1);
  // Identical descriptors hash identically on every discovery (the grant binds the hash).
  const again = await world.discover(store.tabId);
  expect(viaBroker.ok && viaBroker.value.tools.map((t) => t.descriptorHash)).toEqual(again.tools.map((t) => t.descriptorHash));
});

test('same-name frames: the same-origin iframe is listed as its own frame, cross-origin and sandboxed iframes are excluded', async ({ world }) => {
  const { page, tabId } = await world.openShared(world.demo.url('same-name'));
  await page.locator('[data-testid=frames-state][data-frames-ready="4"]').waitFor({ state: 'attached' });
  const d = await world.discover(tabId);
  const hostile = world.demo.hostileOrigin;
  // Chromium lists the same-origin iframe's tools in the TOP document's getTools() too (docs/demo.md);
  // the extension reports each tool once, in the frame that registered it.
  const top = d.tools.filter((t) => t.frameId === 0);
  const inFrame = d.tools.filter((t) => t.frameId !== 0);
  expect(top.map((t) => t.name)).toEqual(['search']);
  expect(inFrame.map((t) => t.name).sort()).toEqual(['frame_info', 'search']);
  expect(new Set(inFrame.map((t) => t.frameId)).size).toBe(1);
  expect(inFrame[0]!.documentId).not.toBe(top[0]!.documentId);
  const [topSearch, frameSearch] = [top[0]!, inFrame.find((t) => t.name === 'search')!];
  expect(frameSearch.descriptorHash).not.toBe(topSearch.descriptorHash);
  // Nothing from another origin, and each cross-origin / opaque frame is reported.
  for (const t of d.tools) expect(t.origin).toBe(hostile);
  expect(JSON.stringify(d.tools)).not.toContain(world.demo.crossOrigin);
  const crossFrames = d.violations.filter((v) => v.reason === 'cross-origin-frame');
  expect(crossFrames).toHaveLength(3); // cross-origin (allow="tools"), cross-origin without allow, sandboxed
  expect(crossFrames.map((v) => v.frameId)).not.toContain(inFrame[0]!.frameId);
});

test('the password form is listed but blocked; hostile pages report their limit violations', async ({ world }) => {
  const pw = await world.discover((await world.openShared(world.demo.url('password-form'))).tabId);
  expect(pw.tools.map((t) => [t.name, t.blocked, t.kind])).toEqual([['sign_in', 'password-field', 'declarative']]);

  // 1,000 tools: the first LIMITS.maxToolsPerFrame are listed, the rest reported as too-many-tools.
  const many = await world.discover((await world.openShared(world.demo.url('many-tools'))).tabId);
  expect(many.tools).toHaveLength(LIMITS.maxToolsPerFrame);
  expect(many.tools[0]!.name).toBe('tool_0000');
  const tooMany = many.violations.filter((v) => v.reason === 'too-many-tools');
  expect(tooMany.length).toBeGreaterThan(0);
  expect(tooMany[0]).toMatchObject({ frameId: 0, name: 'tool_0064' });
  expect(many.violations.every((v) => v.reason === 'too-many-tools')).toBe(true);

  // 1 MiB description, 1 MiB title, ~1 MiB schema: reported with their reason, never sent whole.
  const huge = await world.discover((await world.openShared(world.demo.url('huge-description'))).tabId);
  expect(names(huge)).toEqual(['normal_tool']);
  expect(huge.violations.map((v) => [v.name, v.reason]).sort()).toEqual([
    ['huge_description', 'description-too-long'],
    ['huge_schema', 'schema-too-large'],
    ['huge_title', 'title-too-long'],
  ]);
  expect(JSON.stringify(huge).length).toBeLessThan(64 * 1024);

  // 100-level schemas: schema-too-deep.
  const deep = await world.discover((await world.openShared(world.demo.url('deep-schema'))).tabId);
  expect(names(deep)).toEqual(['normal_tool']);
  expect(deep.violations.map((v) => [v.name, v.reason]).sort()).toEqual([
    ['deep_array_schema', 'schema-too-deep'],
    ['deep_schema', 'schema-too-deep'],
  ]);
});

test('toolchange in the page reaches the console as a tools-changed event, and the next discovery shows the change', async ({ world }) => {
  const { page, tabId } = await world.openShared(world.demo.url('changing'));
  const before = await world.discover(tabId);
  expect(names(before)).toEqual(['get_time', 'unlock_advanced_tools']);
  const seen = world.events.length;
  expect(await page.evaluate(() => (globalThis as unknown as { __changing: { toggleExtra(): Promise<boolean> } }).__changing.toggleExtra())).toBe(true);
  await expect
    .poll(() => world.events.slice(seen).find((e) => e.kind === 'tools-changed'))
    .toEqual({ kind: 'tools-changed', tabId, frameId: 0, documentId: before.documentId });
  expect(names(await world.discover(tabId))).toEqual(['extra_tool', 'get_time', 'unlock_advanced_tools']);
  // A declarative tool added to the DOM counts as a change too.
  const seen2 = world.events.length;
  await page.evaluate(() => (globalThis as unknown as { __changing: { addForm(): unknown } }).__changing.addForm());
  await expect.poll(() => world.events.slice(seen2).some((e) => e.kind === 'tools-changed' && e.tabId === tabId)).toBe(true);
  expect(names(await world.discover(tabId))).toContain('dynamic_form');
});
