/// <reference types="chrome" />
/**
 * Sharing from the extension's popup, on the real link (test/e2e/support/link-fixture.ts):
 *
 * - the console's own page (the loopback web host, serving the built renderer) shared
 *   from the popup is unshared by the console at once, recorded as refused, and never
 *   reaches the agent (list_tabs, webmcp_discover), nor the console's share picker;
 * - an ordinary page shared and stopped from the popup gets its tab-shared /
 *   tab-unshared receipts (via the extension), once each.
 *
 * Build first: `npm run build` (renderer, extension, native host).
 */
import path from 'node:path';
import type { Page } from '@playwright/test';
import type { AgentContext } from '../../src/main/core/broker';
import { startWebHost } from '../../src/main/web/server';
import type { Result } from '../../src/shared/result';
import { test, expect, until, type LinkWorld } from './support/link-fixture';

const RENDERER_DIR = path.resolve(import.meta.dirname, '../../out/renderer');
const AGENT: AgentContext = { actor: { kind: 'agent', name: 'e2e-agent' }, kind: 'read' };

/** What the popup's "Share this tab" / "Stop" send (extension/src/popup/popup.ts), from the popup page itself. */
function fromPopup(popup: Page, msg: { type: 'popup:share' | 'popup:unshare'; tabId: number }): Promise<Result<unknown>> {
  return popup.evaluate((m) => chrome.runtime.sendMessage(m), msg) as Promise<Result<unknown>>;
}

async function tabIdOf(world: LinkWorld, urlPrefix: string): Promise<number> {
  const w = await world.worker();
  const id = await w.evaluate(async (u) => (await chrome.tabs.query({})).find((t) => t.url?.startsWith(u))?.id ?? -1, urlPrefix);
  if (id < 0) throw new Error(`no tab shows ${urlPrefix}`);
  return id;
}

/** The tab ids the extension itself has shared right now. */
async function extensionShared(world: LinkWorld): Promise<number[]> {
  const w = await world.worker();
  const r = (await w.evaluate(() =>
    (globalThis as unknown as { echoConsole: { handleRequest(x: unknown): Promise<unknown> } }).echoConsole.handleRequest({ op: 'list-tabs' }),
  )) as Result<Array<{ tabId: number }>>;
  if (!r.ok) throw new Error(`list-tabs: ${r.error.code}`);
  return r.value.map((t) => t.tabId);
}

test("the console's own page shared from the popup is unshared at once and never reaches the agent", async ({ world }) => {
  const core = world.core;
  const host = await startWebHost({ api: core.api, subscribe: (l) => core.onEvent(l), rendererDir: RENDERER_DIR, port: 0 });
  try {
    core.setConsoleOrigins(host.origins);
    const consolePage = await world.context.newPage();
    await consolePage.goto(host.newConsoleUrl());
    const tabId = await tabIdOf(world, host.origin);

    const other = await world.context.newPage();
    await other.goto(world.demo.url('store'));
    const otherId = await tabIdOf(world, other.url());

    // "Share a tab…" does not offer it (the extension does: to it, it is just an http page), and the console refuses to share it.
    const raw = await world.request({ op: 'list-shareable-tabs' });
    expect(raw.ok && raw.value.map((t) => t.tabId)).toContain(tabId);
    const offered = await core.api.listShareableTabs();
    expect(offered.ok && offered.value.map((t) => t.tabId)).toContain(otherId);
    expect(offered.ok && offered.value.map((t) => t.tabId)).not.toContain(tabId);
    const viaConsole = await core.api.shareTab({ tabId });
    expect(!viaConsole.ok && viaConsole.error.code).toBe('console-tab');

    // The popup shares it anyway (it cannot tell the console from any http page)...
    const popup = await world.popup();
    const shared = await fromPopup(popup, { type: 'popup:share', tabId });
    expect(shared.ok).toBe(true);
    // ...and the console, told by tabs-changed, has the extension stop sharing it.
    await until(async () => !(await extensionShared(world)).includes(tabId), 'the extension to stop sharing the console tab');
    await until(() => world.receipts({ event: 'refused' }).some((r) => r.tabId === tabId && (r.detail as { code?: string }).code === 'console-tab' && r.faculty === 'console'), 'the refused receipt');

    // The agent never saw it.
    const tabs = await core.broker.listTabs(AGENT);
    expect(tabs.ok).toBe(true);
    expect(tabs.ok && tabs.value.map((t) => t.tabId)).not.toContain(tabId);
    expect(tabs.ok && tabs.value.some((t) => t.origin === host.origin)).toBe(false);
    const disc = await core.broker.discover({ tabId }, AGENT);
    expect(!disc.ok && disc.error.code).toBe('console-tab');
    expect(core.broker.getSharedTabs().map((t) => t.tabId)).not.toContain(tabId);
    expect(world.receipts({ event: 'tab-shared' }).some((r) => r.tabId === tabId)).toBe(false);
    expect(core.ledger.verify().ok).toBe(true);
  } finally {
    await host.close();
  }
});

test('sharing and stopping from the popup writes tab-shared and tab-unshared receipts, once each', async ({ world }) => {
  const page = await world.context.newPage();
  await page.goto(world.demo.url('store'));
  const tabId = await tabIdOf(world, page.url());
  const popup = await world.popup();

  expect((await fromPopup(popup, { type: 'popup:share', tabId })).ok).toBe(true);
  const shared = await until(() => world.receipts({ event: 'tab-shared' }).find((r) => r.tabId === tabId), 'a tab-shared receipt');
  const origin = new URL(page.url()).origin;
  expect(shared).toMatchObject({ faculty: 'console', actor: { kind: 'person' }, origin, detail: { via: 'extension' } });
  expect(shared.documentId).toBeTruthy();
  await until(() => world.core.broker.getSharedTabs().some((t) => t.tabId === tabId), 'the console to list the tab');

  expect((await fromPopup(popup, { type: 'popup:unshare', tabId })).ok).toBe(true);
  const unshared = await until(() => world.receipts({ event: 'tab-unshared' }).find((r) => r.tabId === tabId), 'a tab-unshared receipt');
  expect(unshared).toMatchObject({ faculty: 'console', actor: { kind: 'person' }, origin, detail: { via: 'extension' } });
  expect(world.receipts({ event: 'tab-shared' }).filter((r) => r.tabId === tabId)).toHaveLength(1);
  expect(world.receipts({ event: 'tab-unshared' }).filter((r) => r.tabId === tabId)).toHaveLength(1);
});
