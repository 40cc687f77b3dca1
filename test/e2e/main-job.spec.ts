/// <reference types="chrome" />
// The main job end to end on real input (issue 4, items 6 and 7): Chromium 156 with
// WebMCP on and the built extension loaded, the native host, the real console core
// with the loopback web host, the console UI in a second page, the demo and hostile
// pages, and an MCP SDK client. Pairing and sharing go through the console UI; the
// person's decisions are clicks in the approval dialog. Negative cases each check
// what the agent is told, what the page did (nothing) and what the ledger recorded.
//
// Screenshots for the README ("Getting started") are taken on every run; they land in
// docs/screenshots/getting-started-*.png with ECHO_UPDATE_SCREENSHOTS=1, else in
// test-results/main-job-screenshots/ (ports, codes and times differ per run, and the docs
// should not churn with every test run).
// Build first: npx electron-vite build && npm run build:extension && npm run build:tools
import { request as httpRequest } from 'node:http';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { expect, test, type Page } from '@playwright/test';
import { argumentsHash, descriptorHash, fingerprint } from '../../src/shared/canonical';
import type { ConsoleRequest } from '../../src/shared/protocol';
import type { Receipt } from '../../src/shared/receipt';
import type { Grant } from '../../src/shared/types';
import { confirmInPopup } from './support/pairing';
import { headerJson, startMainJob, texts, untrustedBody, waitForApproval, waitForLink, type MainJob } from './support/main-job-fixture';
import { createAgentToken } from '../support/agent-token';

const SHOTS = process.env.ECHO_UPDATE_SCREENSHOTS === '1' ? path.resolve(import.meta.dirname, '../../docs/screenshots') : path.resolve('test-results/main-job-screenshots');
const AGENT = 'main-job-e2e';

interface DiscoveredTool {
  name: string;
  title: string;
  description: string;
  inputSchema: unknown;
  annotationClaims: Record<string, boolean> | null;
  descriptorHash: string;
  frameId: number;
  documentId: string;
  origin: string;
}

interface PageTool {
  name: string;
  title: string;
  description: string;
  inputSchema: unknown;
  annotations?: Record<string, boolean>;
  origin: string;
}

let job: MainJob;
let client: Client;
let store: Page;
let storeTabId: number;

/** The page's own account of its tools (document.modelContext.getTools()), as plain data. */
async function pageTools(page: Page): Promise<PageTool[]> {
  return page.evaluate(async () => {
    const mc = (globalThis as unknown as { document: { modelContext: { getTools(): Promise<Array<Record<string, unknown>>> } } }).document.modelContext;
    return (await mc.getTools()).map((t) => ({
      name: t.name as string,
      title: t.title as string,
      description: t.description as string,
      inputSchema: t.inputSchema,
      ...(t.annotations ? { annotations: t.annotations as Record<string, boolean> } : {}),
      origin: t.origin as string,
    }));
  });
}

async function discover(c: Client, tabId: number): Promise<{ header: Record<string, unknown>; tools: DiscoveredTool[] }> {
  const r = await c.callTool({ name: 'webmcp_discover', arguments: { tabId } });
  expect(r.isError, texts(r)[0]).toBeFalsy();
  const [head, block] = texts(r);
  return { header: headerJson(head as string, `Discovery of tab ${tabId}: `), tools: (JSON.parse(untrustedBody(block as string)) as { tools: DiscoveredTool[] }).tools };
}

function invoke(c: Client, tabId: number, tool: DiscoveredTool, args: Record<string, unknown>) {
  return c.callTool({ name: 'webmcp_invoke', arguments: { tabId, name: tool.name, descriptorHash: tool.descriptorHash, arguments: args } }, undefined, { timeout: 60_000 });
}

/** The store's committed state as the DOM shows it. */
async function storeState(page: Page): Promise<{ revision: number; mug: number; tee: number }> {
  return page.evaluate(() => {
    const doc = (globalThis as unknown as { document: { querySelector(s: string): { getAttribute(n: string): string | null } | null } }).document;
    const q = (id: string) => Number(doc.querySelector(`[data-testid=product-${id}]`)?.getAttribute('data-quantity') ?? 'NaN');
    return { revision: Number(doc.querySelector('[data-testid=store]')?.getAttribute('data-revision')), mug: q('mug'), tee: q('tee') };
  });
}

/** Every receipt of one request, oldest first. */
function receiptsOf(requestId: string): Receipt[] {
  return [...job.core.ledger.query({ requestId, limit: 100 }).receipts].sort((a, b) => a.seq - b.seq);
}

/** The error code and text of an MCP tool error result. */
function toolError(r: unknown): { code: string; text: string; requestId: string } {
  expect((r as { isError?: boolean }).isError).toBe(true);
  const text = texts(r).join('\n');
  const m = /^Error \(([^)]+)\): [\s\S]*?requestId: (\S+)/.exec(text);
  expect(m, text).not.toBeNull();
  return { code: (m as RegExpExecArray)[1] as string, text, requestId: (m as RegExpExecArray)[2] as string };
}

/** A screenshot of the console UI for the README; the console tab is brought to the front first (a background tab may never paint). */
async function shot(name: string): Promise<void> {
  const ui = job.consolePage as Page;
  await ui.bringToFront();
  await ui.screenshot({ path: path.join(SHOTS, name), timeout: 20_000 });
}

/** The dialog as the person sees it. */
const dialog = () => (job.consolePage as Page).getByTestId('approval-dialog');
const field = (id: string) => dialog().getByTestId(id);

/** Replace one method of the core's link for the duration of `fn` (the broker calls through the same object). */
async function withLinkPatch<K extends 'request' | 'signGrant', T>(key: K, make: (original: MainJob['core']['link'][K]) => MainJob['core']['link'][K], fn: () => Promise<T>): Promise<T> {
  const link = job.core.link as unknown as Record<string, unknown>;
  const original = (job.core.link[key] as (...a: unknown[]) => unknown).bind(job.core.link) as MainJob['core']['link'][K];
  link[key] = make(original);
  try {
    return await fn();
  } finally {
    delete link[key]; // back to the class method
  }
}

test.beforeAll(async () => {
  test.setTimeout(120_000);
  job = await startMainJob();
  const ui = job.consolePage as Page;

  // Pairing through the console UI: the code shown there must equal the popup's.
  await ui.getByTestId('nav-connection').click();
  await expect(ui.getByTestId('pairing-code')).toHaveText(/^\d{3} \d{3}$/, { timeout: 30_000 });
  const popup = await job.context.newPage();
  await popup.goto(`chrome-extension://${job.extensionId}/popup/popup.html`);
  await expect(popup.locator('#pairing-code')).toHaveText(/^\d{3} \d{3}$/);
  const consoleCode = await ui.getByTestId('pairing-code').textContent();
  expect(await popup.locator('#pairing-code').textContent()).toBe(consoleCode);
  expect(job.core.link.status().pairingCode).toBe(consoleCode);
  await popup.setViewportSize({ width: 380, height: 480 });
  await popup.screenshot({ path: path.join(SHOTS, 'getting-started-popup-code.png'), timeout: 20_000 });
  await shot('getting-started-pairing.png');
  // The person confirms in the popup too (issue 9 item 1), then in the console.
  await confirmInPopup(popup);
  await ui.getByTestId('pairing-confirm').click();
  await waitForLink(job.core, (s) => s.state === 'connected' && s.paired);
  await expect(ui.getByTestId('link-pill')).toHaveText('Connected');
  await expect(popup.locator('#link-dot')).toHaveAttribute('data-state', 'connected');
  await popup.close();

  // Share the store tab with the console's tab picker.
  store = await job.openPage(job.servers.url('store'));
  storeTabId = await job.tabIdOf(store);
  await ui.getByTestId('share-tab-open').click();
  await ui.getByTestId(`share-${storeTabId}`).click();
  await expect(ui.getByTestId('shared-tabs')).toContainText(await store.title());
  await shot('getting-started-shared-tab.png');
  await ui.getByTestId('nav-approvals').click();
  await expect(ui.getByTestId('approvals-empty')).toBeVisible();

  client = await job.mcpClient(AGENT);
});

test.afterAll(async () => {
  await job?.close();
});

test('main job: list_tabs, discover, and an approved set_cart_quantity change the store, with every dialog field checked and a full receipt trail', async () => {
  const ui = job.consolePage as Page;

  // list_tabs: only the shared tab (the console UI tab and others are not shared).
  const tabsResult = await client.callTool({ name: 'list_tabs', arguments: {} });
  expect(tabsResult.isError).toBeFalsy();
  const tabs = JSON.parse(untrustedBody(texts(tabsResult)[1] as string)) as Array<Record<string, unknown>>;
  expect(tabs).toEqual([{ tabId: storeTabId, title: await store.title(), url: store.url(), origin: job.servers.demoOrigin }]);

  // webmcp_discover: the extension's account must equal the page's own getTools() and Chrome's documentId.
  const { header, tools } = await discover(client, storeTabId);
  const fromPage = await pageTools(store);
  expect(tools.map((t) => t.name).sort()).toEqual(fromPage.map((t) => t.name).sort());
  const documentId = await job.topDocumentId(storeTabId);
  expect(header).toMatchObject({ tabId: storeTabId, origin: job.servers.demoOrigin, documentId });
  const tool = tools.find((t) => t.name === 'set_cart_quantity') as DiscoveredTool;
  const pageTool = fromPage.find((t) => t.name === 'set_cart_quantity') as PageTool;
  expect(tool).toMatchObject({ title: pageTool.title, description: pageTool.description, inputSchema: pageTool.inputSchema, origin: pageTool.origin, frameId: 0, documentId });
  expect(tool.annotationClaims).toEqual(pageTool.annotations);
  const expectedDescriptorHash = await descriptorHash(pageTool);
  expect(tool.descriptorHash).toBe(expectedDescriptorHash);

  // The agent asks to set the mug quantity, based on the current revision.
  const before = await storeState(store);
  const runsBefore = await job.execCount(store, 'set_cart_quantity');
  const args = { productId: 'mug', quantity: before.mug + 3, expectedRevision: before.revision };
  const expectedArgsHash = await argumentsHash(args);
  const pending = invoke(client, storeTabId, tool, args);

  // While it waits: every field of the dialog equals what the page and extension reported.
  const view = await waitForApproval(job.core, (a) => a.subject.toolName === 'set_cart_quantity');
  await expect(dialog()).toBeVisible();
  await expect(field('field-agent')).toHaveText(AGENT);
  await expect(field('field-tool-name')).toHaveText(pageTool.name);
  await expect(field('field-title')).toHaveText(pageTool.title);
  await expect(field('field-origin')).toHaveText(pageTool.origin);
  await expect(field('field-tab-title')).toHaveText(await store.title());
  await expect(field('field-tab-url')).toHaveText(store.url());
  await expect(field('field-frame')).toHaveText('0 (top frame)');
  await expect(field('field-document-id')).toHaveText(documentId);
  await expect(field('field-descriptor-hash')).toHaveText(expectedDescriptorHash);
  await expect(field('field-descriptor-hash-fingerprint')).toHaveText(fingerprint(expectedDescriptorHash));
  await expect(field('field-arguments-hash')).toHaveText(expectedArgsHash);
  await expect(field('field-arguments-hash-fingerprint')).toHaveText(fingerprint(expectedArgsHash));
  const labels: Record<string, string> = { readOnlyHint: 'read-only', untrustedContentHint: 'returns untrusted content', consequentialHint: 'consequential', debugging: 'debugging tool' };
  const claims = Object.keys(labels)
    .filter((k) => pageTool.annotations?.[k] !== undefined)
    .map((k) => `The browser reports: ${labels[k]} — ${pageTool.annotations?.[k] ? 'yes' : 'no'}`);
  expect(claims.length).toBe(4); // Chromium reports all four booleans for an imperative tool (docs/browser-facts.md, "WebMCP: listing tools")
  await expect(field('field-annotations').locator('li')).toHaveText(claims);
  // Shown as pretty JSON, equal in value to what the agent sent (the console may order the keys).
  const shownArgs = (await field('field-arguments').textContent()) ?? '';
  expect(JSON.parse(shownArgs)).toEqual(args);
  expect(shownArgs).toBe(JSON.stringify(JSON.parse(shownArgs), null, 2));
  await expect(field('field-description')).toHaveText(pageTool.description);
  await expect(field('field-schema')).toHaveText(JSON.stringify(pageTool.inputSchema, null, 2));
  await expect(field('field-time-left')).toHaveText(/^\d+:\d{2} left$/);
  // The console's own view of the request says the same.
  expect(view).toMatchObject({
    agent: { name: AGENT, version: '1.0.0' },
    origin: pageTool.origin,
    documentId,
    faculty: 'webmcp-invoke',
    operation: 'invoke',
    frame: { frameId: 0 },
    subjectHash: expectedDescriptorHash,
    subject: { type: 'webmcp-tool', toolName: 'set_cart_quantity', descriptorHash: expectedDescriptorHash },
    argumentsHash: expectedArgsHash,
    arguments: args,
    tab: { tabId: storeTabId, title: await store.title(), url: store.url() },
  });
  await shot('getting-started-approval.png');

  // A stray Enter approves nothing.
  await expect(dialog()).toBeFocused();
  await ui.keyboard.press('Enter');
  await expect(dialog()).toBeVisible();
  expect(job.core.broker.approvals.list().map((a) => a.requestId)).toContain(view.requestId);
  expect(receiptsOf(view.requestId).map((r) => r.event)).not.toContain('approved');
  expect(await job.execCount(store, 'set_cart_quantity')).toBe(runsBefore);

  // "Approve once" (armed after a second) does.
  await field('end-of-request').scrollIntoViewIfNeeded(); // Approve arms once the whole request was seen
  await expect(field('approve-button')).toBeEnabled();
  const clickedAt = Date.now();
  await field('approve-button').click();
  const result = await pending;
  expect(result.isError, texts(result).join('\n')).toBeFalsy();

  // The page changed: DOM quantity and revision.
  await expect(store.getByTestId('product-mug')).toHaveAttribute('data-quantity', String(args.quantity));
  await expect(store.getByTestId('store')).toHaveAttribute('data-revision', String(before.revision + 1));
  expect(await job.execCount(store, 'set_cart_quantity')).toBe(runsBefore + 1);

  // The agent got the new revision and a receipt id.
  const [resultHead, resultBlock] = texts(result);
  const invocation = headerJson<{ outcome: string; requestId: string; receiptId: string; toolName?: string; origin: string }>(resultHead as string, 'Invocation ');
  expect(invocation).toMatchObject({ outcome: 'succeeded', requestId: view.requestId, origin: job.servers.demoOrigin });
  // The page's tool name is page text: it stays out of the console-made header (the agent knows what it called).
  expect(invocation.toolName).toBeUndefined();
  const pageAnswer = JSON.parse(untrustedBody(resultBlock as string)) as { ok: boolean; revision: number; committed: boolean };
  expect(pageAnswer).toMatchObject({ ok: true, revision: before.revision + 1, committed: true });

  // The ledger: the whole trail for that request, with matching hashes, and an intact chain.
  const trail = receiptsOf(view.requestId);
  expect(trail.map((r) => r.event)).toEqual(['requested', 'validated', 'approval-shown', 'approved', 'dispatched', 'succeeded']);
  for (const r of trail) expect(r).toMatchObject({ descriptorHash: expectedDescriptorHash, argumentsHash: expectedArgsHash, toolName: 'set_cart_quantity', tabId: storeTabId });
  for (const r of trail.slice(2)) expect(r).toMatchObject({ origin: job.servers.demoOrigin, frameId: 0, documentId });
  const approved = trail.find((r) => r.event === 'approved') as Receipt;
  expect(approved.actor).toEqual({ kind: 'person' });
  expect(approved.time).toBeGreaterThanOrEqual(clickedAt); // not the Enter: the approval came from the click
  expect(trail[0]?.actor).toMatchObject({ kind: 'agent', name: AGENT });
  expect(invocation.receiptId).toBe(trail[trail.length - 1]?.id);
  const verified = await job.core.api.verifyLedger();
  expect(verified).toMatchObject({ ok: true, value: { ok: true } });

  // The receipts view shows it and its own ledger check passes.
  await expect(dialog()).toBeHidden();
  await ui.getByTestId('nav-receipts').click();
  await expect(ui.getByTestId('receipt-row').first()).toContainText('succeeded');
  await ui.getByTestId('verify-ledger').click();
  await expect(ui.getByTestId('verify-report')).toHaveText(/^Chain intact: \d+ receipts?/);
  await shot('getting-started-receipts.png');
  await ui.getByTestId('nav-approvals').click();
  expect(job.consoleProblems).toEqual([]);
});

test('deny: the agent is told, with the reason; the page is unchanged; a denied receipt', async () => {
  const { tools } = await discover(client, storeTabId);
  const tool = tools.find((t) => t.name === 'set_cart_quantity') as DiscoveredTool;
  const before = await storeState(store);
  const runsBefore = await job.execCount(store, 'set_cart_quantity');
  const pending = invoke(client, storeTabId, tool, { productId: 'tee', quantity: before.tee + 2 });
  const view = await waitForApproval(job.core, (a) => a.subject.toolName === 'set_cart_quantity');
  await expect(dialog()).toBeVisible();
  await field('deny-reason').fill('Not the tee, please');
  await field('deny-button').click();

  const e = toolError(await pending);
  expect(e.code).toBe('denied');
  expect(e.text).toContain('Their reason: Not the tee, please');
  expect(e.requestId).toBe(view.requestId);
  expect(await storeState(store)).toEqual(before);
  expect(await job.execCount(store, 'set_cart_quantity')).toBe(runsBefore);
  const trail = receiptsOf(view.requestId);
  expect(trail.map((r) => r.event)).toEqual(['requested', 'validated', 'approval-shown', 'denied']);
  expect(trail[3]).toMatchObject({ actor: { kind: 'person' }, detail: { reason: 'Not the tee, please' } });
  await expect(dialog()).toBeHidden();
});

test('expiry: with a 10 s approval timeout set in Settings, an unanswered request expires', async () => {
  const ui = job.consolePage as Page;
  await ui.getByTestId('nav-settings').click();
  await ui.getByTestId('approval-timeout').fill('10');
  await ui.getByTestId('save-settings').click();
  await expect(ui.getByText('Saved.')).toBeVisible();
  await ui.getByTestId('nav-approvals').click();
  try {
    const { tools } = await discover(client, storeTabId);
    const tool = tools.find((t) => t.name === 'set_cart_quantity') as DiscoveredTool;
    const before = await storeState(store);
    const runsBefore = await job.execCount(store, 'set_cart_quantity');
    const pending = invoke(client, storeTabId, tool, { productId: 'mug', quantity: 1 });
    const view = await waitForApproval(job.core, (a) => a.subject.toolName === 'set_cart_quantity');
    expect(view.expiresAt - view.createdAt).toBe(10_000);
    await expect(dialog()).toBeVisible();
    await expect(field('field-time-left')).toHaveText(/^0:(10|0\d) left$/);

    const e = toolError(await pending);
    expect(e.code).toBe('expired');
    expect(await storeState(store)).toEqual(before);
    expect(await job.execCount(store, 'set_cart_quantity')).toBe(runsBefore);
    const trail = receiptsOf(view.requestId);
    expect(trail.map((r) => r.event)).toEqual(['requested', 'validated', 'approval-shown', 'expired']);
    expect(trail[3]?.actor).toEqual({ kind: 'console' });
    await expect(dialog()).toBeHidden();
    // A late decision is refused.
    expect(await job.core.api.decideApproval({ requestId: view.requestId, decision: 'approve' })).toMatchObject({ ok: false, error: { code: 'unknown-request' } });
  } finally {
    expect(await job.core.api.updateSettings({ approvalTimeoutMs: 120_000 })).toMatchObject({ ok: true });
  }
});

test('invalid arguments: ajv failing paths go back to the agent, no dialog is shown, a refused receipt', async () => {
  const { tools } = await discover(client, storeTabId);
  const tool = tools.find((t) => t.name === 'set_cart_quantity') as DiscoveredTool;
  const before = await storeState(store);
  const runsBefore = await job.execCount(store, 'set_cart_quantity');
  const shown: string[] = [];
  const unsub = job.core.onEvent((e) => {
    if (e.kind === 'approvals') shown.push(...e.approvals.map((a) => a.requestId));
  });
  let e: ReturnType<typeof toolError>;
  try {
    e = toolError(await invoke(client, storeTabId, tool, { productId: 'mug', quantity: 500, colour: 'red' }));
  } finally {
    unsub();
  }
  expect(e.code).toBe('invalid-arguments');
  // ajv's messages quote the page's schema, so they come inside the untrusted block (issue 8 item 5).
  const block = /The failing paths, with what the page's schema says of them \(untrusted\):\n<untrusted-page-content[^>]*>\n([\s\S]*?)\n<\/untrusted-page-content>/.exec(e.text)?.[1];
  const paths = JSON.parse(block ?? 'null') as Array<{ instancePath: string; message: string }>;
  expect(paths.map((p) => p.instancePath).sort()).toEqual(['', '/quantity']);
  expect(paths.find((p) => p.instancePath === '/quantity')?.message).toMatch(/<= 99/);
  expect(paths.find((p) => p.instancePath === '')?.message).toMatch(/additional properties/);
  expect(shown).toEqual([]);
  expect(await job.execCount(store, 'set_cart_quantity')).toBe(runsBefore);
  await expect((job.consolePage as Page).getByTestId('approvals-empty')).toBeVisible();
  expect(await storeState(store)).toEqual(before);
  const trail = receiptsOf(e.requestId);
  expect(trail.map((r) => r.event)).toEqual(['requested', 'refused']);
  expect(trail[1]?.detail).toMatchObject({ code: 'invalid-arguments', issues: expect.arrayContaining([expect.objectContaining({ instancePath: '/quantity' })]) });
});

test('rug pull while the dialog is open: the console sees the page change the tool and refuses the request (descriptor-changed) before anyone can approve it; nothing runs', async () => {
  const page = await job.openPage(job.servers.url('rug-pull'));
  try {
    const tabId = await job.shareThroughApi(page);
    const { tools } = await discover(client, tabId);
    const tool = tools.find((t) => t.name === 'get_weather') as DiscoveredTool;
    expect(tool.description).toBe('Returns the current weather for a city.');
    const pending = invoke(client, tabId, tool, { city: 'Lisbon' });
    const view = await waitForApproval(job.core, (a) => a.subject.toolName === 'get_weather');
    await expect(field('field-description')).toHaveText('Returns the current weather for a city.');

    // The pull: a new descriptor under the same name. The page's toolchange reaches the console,
    // which discovers the tab again and refuses the waiting request (docs/broker.md, "Tool changes").
    expect(await page.evaluate(() => (globalThis as unknown as { __rugPull(v: string): Promise<{ variant: string }> }).__rugPull('description'))).toMatchObject({ variant: 'description' });
    const e = toolError(await pending);
    expect(e.code).toBe('descriptor-changed');
    await expect(dialog()).toBeHidden();
    await expect((job.consolePage as Page).getByTestId('approvals-notice')).toContainText('the page changed or removed this tool while it waited');
    expect(await job.core.api.decideApproval({ requestId: view.requestId, decision: 'approve' })).toMatchObject({ ok: false, error: { code: 'unknown-request' } });
    expect(await job.execCount(page, 'get_weather')).toBe(0); // neither the original nor the pulled tool ran
    const trail = receiptsOf(view.requestId);
    expect(trail.map((r) => r.event)).toEqual(['requested', 'validated', 'approval-shown', 'refused']);
    expect(trail[3]?.detail).toMatchObject({ code: 'descriptor-changed' });
    // The agent's next answer names the change; a new discovery shows the pulled descriptor under a new hash.
    const tabs = JSON.parse(untrustedBody(texts(await client.callTool({ name: 'list_tabs', arguments: {} }))[1] as string)) as Array<{ tabId: number; toolsChangedSinceDiscovery?: { changed: string[] } }>;
    expect(tabs.find((t) => t.tabId === tabId)?.toolsChangedSinceDiscovery?.changed).toContain('get_weather');
    const again = (await discover(client, tabId)).tools.find((t) => t.name === 'get_weather') as DiscoveredTool;
    expect(again.descriptorHash).not.toBe(tool.descriptorHash);
    expect(again.description).not.toBe(tool.description);
    await (job.consolePage as Page).getByTestId('approvals-notice').getByRole('button').click();
  } finally {
    await page.close();
  }
});

test('navigation: while the dialog is open the request is refused (navigated); between approval and dispatch the extension refuses with navigated', async () => {
  const page = await job.openPage(job.servers.url('navigation'));
  const go = (p: Page) => p.evaluate(() => (globalThis as unknown as { __navigate(k: string, d: number): string }).__navigate('same-page', 50));
  try {
    const tabId = await job.shareThroughApi(page);

    // 1. The page navigates while the person is looking at the dialog.
    let tool = (await discover(client, tabId)).tools.find((t) => t.name === 'place_order') as DiscoveredTool;
    const first = invoke(client, tabId, tool, { item: 'book', quantity: 1 });
    const view = await waitForApproval(job.core, (a) => a.subject.toolName === 'place_order');
    await expect(dialog()).toBeVisible();
    const target = await go(page);
    await page.waitForURL(target);
    const e1 = toolError(await first);
    expect(e1.code).toBe('navigated');
    expect(await job.execCount(page, 'place_order')).toBe(0); // (a new document: nothing ran in it either)
    expect(e1.text).toMatch(/navigated away/);
    await expect(dialog()).toBeHidden();
    const trail1 = receiptsOf(view.requestId);
    expect(trail1.map((r) => r.event)).toEqual(['requested', 'validated', 'approval-shown', 'refused']);
    expect(trail1[3]?.detail).toMatchObject({ code: 'navigated' });
    expect(JSON.stringify(trail1[3]?.detail)).toMatch(/navigated away/);

    // 2. The page navigates after the approval, just before the invoke reaches the extension.
    await page.locator('html[data-ready="true"]').waitFor({ state: 'attached' });
    tool = (await discover(client, tabId)).tools.find((t) => t.name === 'place_order') as DiscoveredTool;
    const oldDocument = tool.documentId;
    const second = await withLinkPatch(
      'request',
      (original) =>
        (async (req: ConsoleRequest, o?: { signal?: AbortSignal; timeoutMs?: number }) => {
          if (req.op === 'dispatch') {
            const next = await go(page);
            await page.waitForURL(next);
            await page.locator('html[data-ready="true"]').waitFor({ state: 'attached' });
          }
          return original(req as never, o);
        }) as typeof original,
      async () => {
        const p = invoke(client, tabId, tool, { item: 'book', quantity: 2 });
        await waitForApproval(job.core, (a) => a.subject.toolName === 'place_order');
        await field('end-of-request').scrollIntoViewIfNeeded(); // Approve arms once the whole request was seen
        await expect(field('approve-button')).toBeEnabled();
        await field('approve-button').click();
        return p;
      },
    );
    const e2 = toolError(second);
    expect(e2.code).toBe('navigated');
    expect(await job.execCount(page, 'place_order')).toBe(0);
    expect(await job.topDocumentId(tabId)).not.toBe(oldDocument);
    const trail2 = receiptsOf(e2.requestId);
    expect(trail2.map((r) => r.event)).toEqual(['requested', 'validated', 'approval-shown', 'approved', 'dispatched', 'refused']);
    expect(trail2[5]?.detail).toMatchObject({ code: 'navigated', by: 'extension' });
  } finally {
    await page.close();
  }
});

test('a used grant is never accepted again: replayed on the link, and slipped into a later request, it is refused with grant-reused', async () => {
  const { tools } = await discover(client, storeTabId);
  const tool = tools.find((t) => t.name === 'set_cart_quantity') as DiscoveredTool;
  const before = await storeState(store);
  const runsBefore = await job.execCount(store, 'set_cart_quantity');
  let captured: Extract<ConsoleRequest, { op: 'dispatch' }> | null = null;

  // A normal approved invocation; the invoke the broker sends (with its grant) is captured on the way.
  const ok = await withLinkPatch(
    'request',
    (original) =>
      ((req: ConsoleRequest, o?: { signal?: AbortSignal; timeoutMs?: number }) => {
        if (req.op === 'dispatch') captured = structuredClone(req);
        return original(req as never, o);
      }) as typeof original,
    async () => {
      const p = invoke(client, storeTabId, tool, { productId: 'mug', quantity: before.mug + 1 });
      await waitForApproval(job.core, (a) => a.subject.toolName === 'set_cart_quantity');
      await field('end-of-request').scrollIntoViewIfNeeded(); // Approve arms once the whole request was seen
      await expect(field('approve-button')).toBeEnabled();
      await field('approve-button').click();
      return p;
    },
  );
  expect(ok.isError, texts(ok).join('\n')).toBeFalsy();
  await expect(store.getByTestId('store')).toHaveAttribute('data-revision', String(before.revision + 1));
  const used = captured as Extract<ConsoleRequest, { op: 'dispatch' }> | null;
  expect(used).not.toBeNull();
  const grant = (used as Extract<ConsoleRequest, { op: 'dispatch' }>).grant as Grant;
  expect(grant.expiresAt).toBeGreaterThan(Date.now()); // still within its 30 s: only the nonce stops it

  // 1. The very same request, grant and all, replayed on the link.
  const replay = await job.core.link.request(used as Extract<ConsoleRequest, { op: 'dispatch' }>, { timeoutMs: 20_000 });
  expect(replay).toMatchObject({ ok: true, value: { outcome: 'refused', refusal: 'grant-reused' } });
  expect((await storeState(store)).revision).toBe(before.revision + 1);
  expect(await job.execCount(store, 'set_cart_quantity')).toBe(runsBefore + 1);

  // 2. A new approved request dispatched with the used grant instead of a fresh one.
  const second = await withLinkPatch(
    'signGrant',
    () => (async () => ({ ok: true, value: grant })) as MainJob['core']['link']['signGrant'],
    async () => {
      const p = invoke(client, storeTabId, tool, { productId: 'mug', quantity: before.mug + 5 });
      await waitForApproval(job.core, (a) => a.subject.toolName === 'set_cart_quantity');
      await field('end-of-request').scrollIntoViewIfNeeded(); // Approve arms once the whole request was seen
      await expect(field('approve-button')).toBeEnabled();
      await field('approve-button').click();
      return p;
    },
  );
  const e = toolError(second);
  expect(e.code).toBe('grant-reused');
  const trail = receiptsOf(e.requestId);
  expect(trail.map((r) => r.event)).toEqual(['requested', 'validated', 'approval-shown', 'approved', 'dispatched', 'refused']);
  expect(trail[5]?.detail).toMatchObject({ code: 'grant-reused', by: 'extension' });
  expect((await storeState(store)).revision).toBe(before.revision + 1);
  expect(await job.execCount(store, 'set_cart_quantity')).toBe(runsBefore + 1);
});

test('the MCP endpoint: no or a wrong bearer token is 401, any browser Origin header is 403', async () => {
  const url = new URL(job.core.endpoint.url);
  const post = (headers: Record<string, string>) =>
    new Promise<{ status: number; auth: string | undefined }>((resolve, reject) => {
      const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'probe', version: '0' } } });
      const req = httpRequest(
        url,
        { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers } },
        (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode ?? 0, auth: res.headers['www-authenticate'] }));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  const token = await createAgentToken(job.core.api);
  const none = await post({});
  expect(none.status).toBe(401);
  expect(none.auth).toMatch(/^Bearer/);
  expect((await post({ Authorization: `Bearer ${token}x` })).status).toBe(401);
  expect((await post({ Authorization: token })).status).toBe(401);
  expect((await post({ Authorization: `Bearer ${token}`, Origin: job.servers.demoOrigin })).status).toBe(403);
  expect((await post({ Authorization: `Bearer ${token}`, Origin: 'null' })).status).toBe(403);
  expect((await post({ Authorization: `Bearer ${token}`, Origin: url.origin })).status).toBe(403);
  // The same request without Origin and with the token is served.
  expect((await post({ Authorization: `Bearer ${token}` })).status).toBe(200);
});

test('the stdio command (bin/echo-console-mcp.mjs) against the same console: list_tabs and a discover', async () => {
  const stdio = new Client({ name: 'main-job-stdio', version: '1.0.0' });
  // The person made this agent a token; the command reaches the console over its private socket with it.
  const secret = await createAgentToken(job.core.api, 'Stdio agent');
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [path.resolve(import.meta.dirname, '../../bin/echo-console-mcp.mjs'), '--data-dir', job.dataDir],
    env: { ...getDefaultEnvironment(), ECHO_CONSOLE_TOKEN: secret },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  await stdio.connect(transport);
  try {
    const tabsResult = await stdio.callTool({ name: 'list_tabs', arguments: {} });
    expect(tabsResult.isError, stderr).toBeFalsy();
    const tabs = JSON.parse(untrustedBody(texts(tabsResult)[1] as string)) as Array<{ tabId: number }>;
    expect(tabs.map((t) => t.tabId).sort()).toEqual(job.core.broker.getSharedTabs().map((t) => t.tabId).sort());
    expect(tabs.map((t) => t.tabId)).toContain(storeTabId);

    const viaStdio = await discover(stdio, storeTabId);
    const viaHttp = await discover(client, storeTabId);
    expect(viaStdio.tools.map((t) => [t.name, t.descriptorHash])).toEqual(viaHttp.tools.map((t) => [t.name, t.descriptorHash]));
    expect(viaStdio.header).toMatchObject({ tabId: storeTabId, origin: job.servers.demoOrigin });
    // The console knows who asked: the token's name, with the stdio client's own name as self-declared.
    const discovered = job.core.ledger.query({ event: 'requested', limit: 20 }).receipts.filter((r) => r.faculty === 'webmcp-discover');
    expect(discovered.some((r) => r.actor.name === 'Stdio agent' && r.actor.clientName === 'main-job-stdio')).toBe(true);
  } finally {
    await stdio.close();
  }
});
