/// <reference types="chrome" />
/**
 * The extension against the hostile and demo pages of resources/ (served by
 * test/support/demo-servers.ts on three loopback origins). One paired browser
 * for the file; each test uses its own tab.
 */
import { randomBytes } from 'node:crypto';
import { test, expect, launchPairedExtension, type ExtensionHandle } from './support/extension-fixture';
import { openShared, request } from './support/extension-helpers';
import { grantFields, invokeRequestFor } from './support/invocation';
import { startDemoServers, type DemoServers } from '../support/demo-servers';
import { signGrant } from '../../src/shared/grant';
import { LIMITS, utf8Bytes } from '../../src/shared/limits';
import type { DiscoveryResult, InvocationResult, ToolDescriptor } from '../../src/shared/types';

const KEY = new Uint8Array(randomBytes(32));
let ext: ExtensionHandle;
let demo: DemoServers;

test.describe.configure({ mode: 'serial' });
test.beforeAll(async () => {
  test.setTimeout(120_000);
  demo = await startDemoServers();
  ext = await launchPairedExtension(KEY);
});
test.afterAll(async () => {
  await ext?.close();
  await demo?.close();
});

async function open(id: string, query = '') {
  const { page, tabId } = await openShared(ext.worker, () => ext.context.newPage(), demo.url(id) + query);
  await page.waitForSelector('html[data-ready="true"]', { timeout: 20_000 });
  return { page, tabId };
}

async function discover(tabId: number): Promise<DiscoveryResult> {
  const r = await request(ext.worker, { op: 'discover', tabId });
  if (!r.ok) throw new Error(`${r.error.code}: ${r.error.message}`);
  return r.value;
}

async function invoke(tool: ToolDescriptor, args: Record<string, unknown>, timeoutMs = 10_000): Promise<InvocationResult> {
  const req = invokeRequestFor(tool, args, await signGrant(await grantFields(tool, args), KEY), timeoutMs);
  const r = await request(ext.worker, req);
  if (!r.ok) throw new Error(`${r.error.code}: ${r.error.message}`);
  return r.value;
}

const named = (d: DiscoveryResult, name: string, frameId = 0) => d.tools.find((t) => t.name === name && t.frameId === frameId)!;

test('same name in frames: each tool listed once in its own frame; invoking the top one is not ambiguous', async () => {
  const { page, tabId } = await open('same-name');
  await page.waitForSelector('[data-testid=frames-state][data-frames-ready="4"]', { timeout: 20_000 });
  const d = await discover(tabId);
  // Chromium lists the same-origin frame's tools in the top document's getTools() too; the extension attributes each to its document.
  expect(d.tools.map((t) => [t.name, t.frameId === 0 ? 'top' : 'frame']).sort()).toEqual([['frame_info', 'frame'], ['search', 'frame'], ['search', 'top']]);
  expect(d.violations.filter((v) => v.reason === 'cross-origin-frame').length).toBe(3);
  const top = await invoke(named(d, 'search'), { query: 'shoes' });
  expect(top.outcome).toBe('succeeded');
  expect(JSON.parse(top.result ?? 'null')).toMatchObject({ frame: 'top', query: 'shoes' });
  const frameSearch = d.tools.find((t) => t.name === 'search' && t.frameId !== 0)!;
  const inFrame = await invoke(frameSearch, { query: 'hats' });
  expect(inFrame.outcome).toBe('succeeded');
  expect(JSON.parse(inFrame.result ?? 'null')).not.toMatchObject({ frame: 'top' });
});

test('rug pull after discovery: descriptor-changed, nothing runs', async () => {
  const { page, tabId } = await open('rug-pull');
  const d = await discover(tabId);
  for (const variant of ['description', 'schema', 'title', 'annotations']) {
    await page.evaluate(() => (globalThis as unknown as { __rugPullReset(): void }).__rugPullReset());
    const fresh = named(await discover(tabId), 'get_weather');
    await page.evaluate((v) => (globalThis as unknown as { __rugPull(v: string): void }).__rugPull(v), variant);
    const r = await invoke(fresh, { city: 'Paris' });
    expect([variant, r.outcome, r.refusal]).toEqual([variant, 'refused', 'descriptor-changed']);
  }
  expect(named(d, 'list_cities')).toBeTruthy();
});

test('navigation: a new document with the identical tool is refused (navigated); another origin ends sharing', async () => {
  const { page, tabId } = await open('navigation');
  const before = named(await discover(tabId), 'place_order');
  await page.evaluate(() => (globalThis as unknown as { __navigate(k: string): void }).__navigate('same-page'));
  await expect.poll(async () => (await discover(tabId)).documentId).not.toBe(before.documentId);
  await page.waitForSelector('html[data-ready="true"]');
  const r = await invoke(before, { item: 'book', quantity: 1 });
  expect([r.outcome, r.refusal]).toEqual(['refused', 'navigated']);
  const after = named(await discover(tabId), 'place_order');
  expect(after.descriptorHash).toBe(before.descriptorHash); // identical tool, other document
  expect((await invoke(after, { item: 'book', quantity: 1 })).outcome).toBe('succeeded');

  await page.evaluate(() => (globalThis as unknown as { __navigate(k: string): void }).__navigate('cross-origin'));
  await expect.poll(async () => (await request(ext.worker, { op: 'discover', tabId })).ok).toBe(false);
  const list = await request(ext.worker, { op: 'list-tabs' });
  expect(list.ok && list.value.some((t) => t.tabId === tabId)).toBe(false);
});

test('misbehaving tools: failures, a hang, 5 MiB, odd values', async () => {
  const { tabId } = await open('misbehaving');
  const d = await discover(tabId);
  expect((await invoke(named(d, 'throws_error'), {})).outcome).toBe('failed');
  expect((await invoke(named(d, 'rejects_async'), {})).outcome).toBe('failed');
  const hang = await invoke(named(d, 'hangs_forever'), {}, 800);
  expect([hang.outcome, hang.error?.code]).toEqual(['outcome-unknown', 'timeout']);
  const big = await invoke(named(d, 'returns_5mb'), {});
  expect(big.outcome).toBe('succeeded');
  expect(big.truncated).toBe(true);
  expect(utf8Bytes(big.result ?? '')).toBeLessThanOrEqual(LIMITS.maxResultBytes);
  // The size is the page's whole result, before any cut (issue 8 item 5: it was the size after).
  expect(big.resultBytes).toBeGreaterThanOrEqual(5 * 1024 * 1024);
  for (const name of ['returns_undefined', 'returns_nan', 'returns_plain_string', 'returns_function', 'returns_circular', 'returns_bigint']) {
    const r = await invoke(named(d, name), {});
    expect([name, ['succeeded', 'failed'].includes(r.outcome)]).toEqual([name, true]);
  }
});

test('limits on hostile metadata: 1,000 tools, 1 MiB texts, 100-deep schemas', async () => {
  const many = await discover((await open('many-tools')).tabId);
  expect(many.tools.length).toBe(LIMITS.maxToolsPerFrame);
  expect(many.violations.filter((v) => v.reason === 'too-many-tools').at(-1)?.detail).toMatch(/872 more tools/);
  expect(utf8Bytes(JSON.stringify(many))).toBeLessThan(LIMITS.maxMessageBytes);

  const huge = await discover((await open('huge-description')).tabId);
  expect(huge.tools.map((t) => t.name)).toEqual(['normal_tool']);
  expect(Object.fromEntries(huge.violations.map((v) => [v.name, v.reason]))).toEqual({
    huge_description: 'description-too-long', huge_title: 'title-too-long', huge_schema: 'schema-too-large',
  });
  const deep = await discover((await open('deep-schema')).tabId);
  expect(deep.tools.map((t) => t.name)).toEqual(['normal_tool']);
  expect(deep.violations.map((v) => v.reason)).toEqual(['schema-too-deep', 'schema-too-deep']);
});

test('names, hidden instructions and a password form are flagged or blocked, never rewritten', async () => {
  const names = await discover((await open('names')).tabId);
  for (const n of ['paypal_login', 'paypa1_login', 'send_money', 'Send_Money']) expect([n, named(names, n).flags]).toEqual([n, expect.arrayContaining(['confusable-name'])]);
  expect(named(names, 'open_invoice').flags).toContain('bidi-control');

  const hidden = await discover((await open('hidden-instructions')).tabId);
  for (const t of hidden.tools) expect([t.name, t.flags ?? []]).toEqual([t.name, expect.arrayContaining(['hidden-instructions'])]);

  const { page, tabId } = await open('password-form');
  const signIn = named(await discover(tabId), 'sign_in');
  expect(signIn.blocked).toBe('password-field');
  const r = await invoke(signIn, { username: 'a', password: 'b' });
  expect([r.outcome, r.refusal]).toEqual(['refused', 'tool-blocked']);
  await expect(page.locator('[data-testid=submissions]')).toHaveAttribute('data-count', '0');
});

test('a tool that crashes the renderer: outcome-unknown, never a false success', async () => {
  const { tabId } = await open('crash');
  const r = await invoke(named(await discover(tabId), 'returns_symbol'), {}, 5_000);
  expect(r.outcome).toBe('outcome-unknown');
});
