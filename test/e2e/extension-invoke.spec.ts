/// <reference types="chrome" />
/**
 * Invocation end to end: grants signed with a pairing key stored the way the
 * link stores it (support/extension-fixture.ts installPairingKey), checked by
 * the extension right before dispatch, then executeTool in the page through
 * the content script. Each RefusalCode that a real page can produce is
 * produced here (tool-ambiguous cannot be: Chromium 156 keeps tool names
 * unique per document; it is proven in test/unit/extension-grant-checks.test.ts).
 */
import { randomBytes } from 'node:crypto';
import { expect, pairedTest, type ExtensionHandle } from './support/extension-fixture';
import { startTestPages, toolScript, type TestPages } from './support/extension-pages';
import { openShared, recordEvents, request } from './support/extension-helpers';
import { grantFields, invokeRequestFor } from './support/invocation';
import { signGrant } from '../../src/shared/grant';
import { LIMITS, utf8Bytes } from '../../src/shared/limits';
import type { ConsoleRequest } from '../../src/shared/protocol';
import type { Grant, ToolDescriptor } from '../../src/shared/types';

const KEY = new Uint8Array(randomBytes(32));

const test = pairedTest(KEY);

let pages: TestPages;
test.beforeAll(async () => {
  pages = await startTestPages();
  pages.set(
    '/tools',
    `<!doctype html><title>tools</title><body>
    <form toolname="login" tooldescription="Sign in" toolautosubmit><input name="user"><input name="pw" type="password"></form>
    <script>
      window.controllers = {};
      function reg(name, execute, description) {
        const c = new AbortController();
        window.controllers[name] = c;
        return document.modelContext.registerTool({ name, description: description || 'tool ' + name,
          inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } }, execute }, { signal: c.signal });
      }
      window.calls = 0;
      reg('add', async (i) => { window.calls++; return JSON.stringify({ sum: i.a + i.b }); });
      reg('slow', () => new Promise(() => {}));
      reg('boom', async () => { throw new Error('the page tool broke'); });
      reg('secret', async () => JSON.stringify({ ok: 1, password: 'hunter2', note: 'Bearer abcdefghijklmnopqrstuvwxyz0123456789' }));
      reg('big', async () => 'x'.repeat(${LIMITS.maxResultBytes + 50_000}));
      window.changeAdd = () => { window.controllers.add.abort(); reg('add', async () => '"changed"', 'now does something else'); };
      window.dropAdd = () => window.controllers.add.abort();
    </script>`,
  );
});
test.afterAll(async () => {
  await pages.close();
});

type Invoke = Extract<ConsoleRequest, { op: 'dispatch' }>;

async function discovered(ext: ExtensionHandle, tabId: number): Promise<Record<string, ToolDescriptor>> {
  const r = await request(ext.worker, { op: 'discover', tabId });
  if (!r.ok) throw new Error(r.error.message);
  return Object.fromEntries(r.value.tools.map((t) => [t.name, t]));
}

async function invokeReq(tool: ToolDescriptor, args: Record<string, unknown>, over: Partial<Omit<Grant, 'mac'>> = {}, key = KEY, timeoutMs = 10_000): Promise<Invoke> {
  return invokeRequestFor(tool, args, await signGrant(await grantFields(tool, args, over), key), timeoutMs);
}

async function setup(ext: ExtensionHandle) {
  const { page, tabId } = await openShared(ext.worker, () => ext.context.newPage(), `${pages.a}/tools`);
  return { page, tabId, tools: await discovered(ext, tabId) };
}

test('a valid grant runs the tool once and returns its result', async ({ paired: ext }) => {
  const { page, tools } = await setup(ext);
  const r = await request(ext.worker, await invokeReq(tools.add!, { a: 40, b: 2 }));
  expect(r).toMatchObject({ ok: true, value: { outcome: 'succeeded', result: '{"sum":42}', truncated: false, redacted: false } });
  expect(await page.evaluate(() => (globalThis as unknown as { calls: number }).calls)).toBe(1);
});

test('refusals before dispatch: grant-invalid, grant-expired, grant-reused, arguments-mismatch', async ({ paired: ext }) => {
  const { page, tools } = await setup(ext);
  const add = tools.add!;
  const code = async (req: Invoke) => {
    const r = await request(ext.worker, req);
    if (!r.ok) throw new Error(r.error.message);
    return r.value.outcome === 'refused' ? r.value.refusal : r.value.outcome;
  };
  // grant-invalid: signed with another key; a field changed after signing; a grant for another frame
  expect(await code(await invokeReq(add, { a: 1, b: 2 }, {}, new Uint8Array(randomBytes(32))))).toBe('grant-invalid');
  const tampered = await invokeReq(add, { a: 1, b: 2 });
  tampered.grant = { ...tampered.grant, expiresAt: tampered.grant.expiresAt + 60_000 };
  expect(await code(tampered)).toBe('grant-invalid');
  const otherFrame = await invokeReq(add, { a: 1, b: 2 });
  otherFrame.target.frameId = 7;
  expect(await code(otherFrame)).toBe('grant-invalid');
  // grant-expired
  expect(await code(await invokeReq(add, { a: 1, b: 2 }, { expiresAt: Date.now() - 1 }))).toBe('grant-expired');
  // arguments-mismatch: approved {a:1,b:2}, sent {a:1,b:3}
  const changedArgs = await invokeReq(add, { a: 1, b: 2 });
  changedArgs.arguments = { a: 1, b: 3 };
  expect(await code(changedArgs)).toBe('arguments-mismatch');
  // grant-reused: the same grant twice; the second never reaches the page
  const once = await invokeReq(add, { a: 2, b: 2 });
  expect(await code(once)).toBe('succeeded');
  expect(await code(once)).toBe('grant-reused');
  expect(await page.evaluate(() => (globalThis as unknown as { calls: number }).calls)).toBe(1);
});

test('refusals after the page changed: tab-not-shared, navigated, tool-missing, descriptor-changed, tool-blocked', async ({ paired: ext }) => {
  const { page, tabId, tools } = await setup(ext);
  const code = async (req: Invoke) => {
    const r = await request(ext.worker, req);
    if (!r.ok) throw new Error(r.error.message);
    return r.value.outcome === 'refused' ? r.value.refusal : r.value.outcome;
  };
  // tool-blocked: a form holding a password field
  expect(tools.login!.blocked).toBe('password-field');
  expect(await code(await invokeReq(tools.login!, { user: 'a', pw: 'b' }))).toBe('tool-blocked');
  // descriptor-changed: the page re-registered `add` with another description
  await page.evaluate(() => (globalThis as unknown as { changeAdd(): void }).changeAdd());
  expect(await code(await invokeReq(tools.add!, { a: 1, b: 2 }))).toBe('descriptor-changed');
  // tool-missing: the page unregistered it
  await page.evaluate(() => (globalThis as unknown as { dropAdd(): void }).dropAdd());
  expect(await code(await invokeReq(tools.add!, { a: 1, b: 2 }))).toBe('tool-missing');
  // navigated: same origin, new document
  const before = (await discovered(ext, tabId)).boom!;
  await page.reload();
  expect(await code(await invokeReq(before, {}))).toBe('navigated');
  // tab-not-shared
  const fresh = (await discovered(ext, tabId)).boom!;
  await request(ext.worker, { op: 'unshare-tab', tabId });
  expect(await code(await invokeReq(fresh, {}))).toBe('tab-not-shared');
});

test('outcomes: failed, cancelled, outcome-unknown; results redacted and bounded', async ({ paired: ext }) => {
  const { tools } = await setup(ext);
  const failed = await request(ext.worker, await invokeReq(tools.boom!, {}));
  expect(failed).toMatchObject({ ok: true, value: { outcome: 'failed', error: { code: 'tool-failed' } } });

  const secret = await request(ext.worker, await invokeReq(tools.secret!, {}));
  expect(secret).toMatchObject({ ok: true, value: { outcome: 'succeeded', redacted: true } });
  expect(JSON.stringify(secret)).not.toContain('hunter2');
  expect(JSON.stringify(secret)).not.toContain('abcdefghijklmnopqrstuvwxyz0123456789');

  const big = await request(ext.worker, await invokeReq(tools.big!, {}));
  if (!big.ok) throw new Error(big.error.message);
  expect(big.value.truncated).toBe(true);
  expect(utf8Bytes(big.value.result ?? '')).toBeLessThanOrEqual(LIMITS.maxResultBytes);

  // cancelled: the page's execute never settles; cancel aborts executeTool's signal (AbortError)
  const slow = await invokeReq(tools.slow!, {});
  const pending = request(ext.worker, slow);
  // The nonce is recorded in chrome.storage.session before dispatch (survives a worker restart).
  await expect.poll(() => ext.worker.evaluate(async (k) => k in (await chrome.storage.session.get(k)), `usedNonce:${slow.grant.nonce}`)).toBe(true);
  await expect.poll(() => request(ext.worker, { op: 'cancel', requestId: slow.grant.requestId }).then((r) => r.ok && r.value.cancelled)).toBe(true);
  expect(await pending).toMatchObject({ ok: true, value: { outcome: 'cancelled' } });

  // outcome-unknown: dispatch began and nothing settled within timeoutMs
  const unknown = await request(ext.worker, await invokeReq(tools.slow!, {}, {}, KEY, 700));
  expect(unknown).toMatchObject({ ok: true, value: { outcome: 'outcome-unknown', error: { code: 'timeout' } } });
});

test('events: toolchange → tools-changed; same-origin navigation → navigated; cross-origin navigation ends sharing', async ({ paired: ext }) => {
  const rec = await recordEvents(ext.worker);
  const { page, tabId } = await setup(ext);
  await page.evaluate(() => (globalThis as unknown as { changeAdd(): void }).changeAdd());
  await expect.poll(async () => (await rec.events()).some((e) => e.kind === 'tools-changed' && e.tabId === tabId && e.frameId === 0)).toBe(true);

  await page.goto(`${pages.a}/tools?token=SECRET&x=1`);
  await expect.poll(async () => (await rec.events()).find((e) => e.kind === 'navigated' && e.tabId === tabId && e.url.includes('x=1'))).toBeTruthy();
  expect(JSON.stringify(await rec.events())).not.toContain('SECRET');
  expect((await request(ext.worker, { op: 'list-tabs' })).ok).toBe(true);
  const still = await request(ext.worker, { op: 'list-tabs' });
  expect(still.ok && still.value.map((t) => t.tabId)).toEqual([tabId]);

  await page.goto(`${pages.b}/tools`);
  await expect.poll(async () => {
    const r = await request(ext.worker, { op: 'list-tabs' });
    return r.ok ? r.value.length : -1;
  }).toBe(0);
  // The share ended on the extension's own authority, and the event says why.
  await expect.poll(async () => (await rec.events()).filter((e) => e.kind === 'tabs-changed').at(-1)).toEqual({ kind: 'tabs-changed', tabs: [], ended: [{ tabId, reason: 'left-origin' }] });
  expect(await request(ext.worker, { op: 'discover', tabId })).toMatchObject({ ok: false, error: { code: 'tab-not-shared' } });
});
