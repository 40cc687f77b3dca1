/**
 * Pairing over the REAL link (issue 3, item 9.1): the console core in this
 * process, Chrome's native messaging starting the real native host, the built
 * extension. The person compares the code shown in the popup with the
 * console's and answers in the popup ("The codes match") and in the console
 * (`core.api.confirmPairing`); an impostor on the socket gets nothing without the popup.
 */
import { PAIRING_STORAGE_KEY } from '../../extension/src/background/link';
import { EXTENSION_ID } from '../../src/shared/extension-id';
import { stopServiceWorker } from './support/service-worker';
import { test, expect, until } from './support/link-fixture';
import { startImpostorConsole, type ImpostorConsole } from './support/impostor-console';

test('pairing confirmed: the popup and the console show the same code; connected on heartbeats; a paired receipt', async ({ launchWorld }) => {
  const w = await launchWorld({ pair: false });
  const { code } = await w.pair();
  expect(code).toMatch(/^\d{3} \d{3}$/);
  const s = w.core.link.status();
  expect(s).toMatchObject({ state: 'connected', paired: true, extensionId: w.extensionId });
  // "connected" rests on heartbeats: a later pong moves lastHeartbeatAt on (LIMITS.heartbeatIntervalMs).
  const first = s.lastHeartbeatAt as number;
  await w.waitForCoreLink((x) => x.state === 'connected' && (x.lastHeartbeatAt ?? 0) > first, 'a heartbeat after pairing', 15_000);
  await expect.poll(async () => (await w.extensionLinkState()).lastHeartbeatAt ?? 0).toBeGreaterThan(first);
  const popup = await w.popup();
  await expect(popup.locator('#link-dot')).toHaveAttribute('data-state', 'connected');
  await expect(popup.locator('#pairing')).toBeHidden();
  const paired = w.receipts({ event: 'paired' });
  expect(paired).toHaveLength(1);
  expect(paired[0]).toMatchObject({ faculty: 'link', actor: { kind: 'person' }, detail: { extensionId: w.extensionId } });
  expect(w.receipts({ event: 'link-connected' }).length).toBeGreaterThanOrEqual(1);
  // The key is stored on both sides: the bridge can sign, the extension holds it in storage.local.
  expect((await w.core.link.signGrant({ requestId: 'r', faculty: 'webmcp-invoke', operation: 'invoke', tabId: 1, frameId: 0, documentId: 'd', origin: 'http://x', urlHash: 'd'.repeat(64), subjectHash: 'a'.repeat(64), argumentsHash: 'b'.repeat(64), nonce: 'c'.repeat(32), expiresAt: Date.now() + 1000 })).ok).toBe(true);
  const stored = await (await w.worker()).evaluate(async (k) => (await chrome.storage.local.get(k))[k] as { pairingId?: string } | undefined, PAIRING_STORAGE_KEY);
  expect(stored?.pairingId).toBe((paired[0]!.detail as { pairingId: string }).pairingId);
});

test('pairing rejected in the console: pairing-rejected receipt, the extension shows refused, no key stored on either side', async ({ launchWorld }) => {
  const w = await launchWorld({ pair: false });
  const s = await w.waitForCoreLink((x) => x.state === 'awaiting-pairing' && !!x.pairingCode, 'a pairing code');
  const popup = await w.popup();
  await expect(popup.locator('#pairing-code')).toHaveText(s.pairingCode as string);
  expect(await w.core.api.confirmPairing({ accept: false })).toEqual({ ok: true, value: null });

  await expect.poll(() => w.receipts({ event: 'pairing-rejected' }).length).toBe(1);
  expect(w.receipts({ event: 'pairing-rejected' })[0]).toMatchObject({ faculty: 'link', actor: { kind: 'person' }, detail: { reason: 'person', extensionId: w.extensionId } });
  expect(w.receipts({ event: 'paired' })).toHaveLength(0);
  await expect(popup.locator('#link-dot')).toHaveAttribute('data-state', 'refused');
  await expect(popup.locator('#link-message')).toContainText('rejected');
  await expect(popup.locator('#retry')).toBeVisible();
  await expect(popup.locator('#pairing')).toBeHidden();
  expect(await w.extensionLinkState()).toMatchObject({ state: 'refused', paired: false });
  const stored = await (await w.worker()).evaluate(async (k) => (await chrome.storage.local.get(k))[k] ?? null, PAIRING_STORAGE_KEY);
  expect(stored).toBeNull();
  expect(w.core.link.status().paired).toBe(false);
  expect(await w.core.link.signGrant({ requestId: 'r', faculty: 'webmcp-invoke', operation: 'invoke', tabId: 1, frameId: 0, documentId: 'd', origin: 'http://x', urlHash: 'd'.repeat(64), subjectHash: 'a'.repeat(64), argumentsHash: 'b'.repeat(64), nonce: 'c'.repeat(32), expiresAt: Date.now() + 1000 })).toMatchObject({ ok: false, error: { code: 'not-paired' } });
  // A rejection needs the person: the extension does not retry on its own, so no new code appears.
  expect(w.core.link.status().state).not.toBe('awaiting-pairing');
});

test('an impostor console on the socket (the console not running) cannot pair the unpaired extension: no tab listed, shared or run before the person confirms in the popup; "They differ" ends it (issue 9 item 1)', async ({ launchWorld, demo }) => {
  const target = demo.url('store');
  let fake: ImpostorConsole | null = null;
  // The impostor is on the socket before Chrome starts the native host: no click, nobody watching.
  const w = await launchWorld({
    startCore: false,
    beforeBrowser: async ({ socketPath }) => {
      fake = await startImpostorConsole({ socketPath, extensionId: EXTENSION_ID, targetUrl: target, toolName: 'add_to_cart', args: { productId: 'p1', quantity: 1 } });
    },
  });
  const imp = fake as unknown as ImpostorConsole;
  try {
    const page = await w.context.newPage();
    await page.goto(target);
    await page.locator('html[data-ready="true"]').waitFor({ state: 'attached', timeout: 15_000 });
    // The impostor said "accepted" and the extension has handled it (the pong after the accept).
    await until(() => imp.acceptHandled, 'the extension to handle the impostor\'s pair-result{accepted:true}');
    expect(imp.got).toEqual(expect.arrayContaining(['host-hello', 'hello', 'pair-begin', 'pair-reveal']));
    // Nothing trusted: no key proved, no request answered, nothing stored or shared, nothing run.
    expect(imp.got).not.toContain('auth-begin');
    expect(imp.got).not.toContain('response');
    expect(imp.answers).toEqual([]);
    expect(await w.extensionLinkState()).toMatchObject({ state: 'awaiting-pairing', paired: false, awaitingLocalConfirmation: true });
    const worker = await w.worker();
    expect(await worker.evaluate(async (k) => (await chrome.storage.local.get(k))[k] ?? null, PAIRING_STORAGE_KEY)).toBeNull();
    expect(await worker.evaluate(`globalThis.echoConsole.handleRequest({ op: 'list-tabs' })`)).toEqual({ ok: true, value: [] });
    expect(await w.execCount(page, 'add_to_cart')).toBe(0);

    // The popup asks the person; the codes cannot be compared with a console that shows none.
    const popup = await w.popup();
    await expect(popup.locator('#confirm-pairing')).toBeVisible();
    await expect(popup.locator('#link-label')).toHaveText('Pairing: compare the codes, then confirm here and in the console');
    await popup.locator('#pair-no').click();
    await expect(popup.locator('#link-dot')).toHaveAttribute('data-state', 'refused');
    await expect(popup.locator('#link-message')).toContainText('rejected');
    await until(() => imp.got.includes('error'), 'the impostor to be told the pairing was rejected');
    expect(imp.got).not.toContain('auth-begin');
    expect(imp.answers).toEqual([]);
    expect(await w.extensionLinkState()).toMatchObject({ state: 'refused', paired: false });
    expect(await worker.evaluate(async (k) => (await chrome.storage.local.get(k))[k] ?? null, PAIRING_STORAGE_KEY)).toBeNull();
    expect(await worker.evaluate(`globalThis.echoConsole.handleRequest({ op: 'list-tabs' })`)).toEqual({ ok: true, value: [] });
    expect(await w.execCount(page, 'add_to_cart')).toBe(0);
  } finally {
    await imp.close();
  }
});

test('a pairing confirmed in the console only (stored before the popup asked too) cannot share a tab from the console; the popup says why; reads still work (issue 9 item 1)', async ({ world }) => {
  const page = await world.context.newPage();
  await page.goto(world.demo.url('store'));
  await page.locator('html[data-ready="true"]').waitFor({ state: 'attached', timeout: 15_000 });
  const worker = await world.worker();
  const tabId = await worker.evaluate(async (u) => (await chrome.tabs.query({})).find((t) => t.url === u)?.id ?? -1, page.url());
  // The record as a pairing made before this rule looks: no confirmedInExtension.
  await worker.evaluate(async (k) => {
    const rec = (await chrome.storage.local.get(k))[k] as Record<string, unknown>;
    delete rec.confirmedInExtension;
    await chrome.storage.local.set({ [k]: rec });
  }, PAIRING_STORAGE_KEY);
  // A new worker reads it (Chrome stops idle workers; here through CDP, from the test side).
  const popup = await world.popup();
  const stopped = await stopServiceWorker(world, popup);
  await until(async () => world.core.link.status().state === 'connected' && (await world.extensionLinkState()).state === 'connected', 'connected again from the new worker');
  await stopped.cdp.detach();

  expect(await world.core.api.shareTab({ tabId })).toMatchObject({ ok: false, error: { code: 'pairing-unconfirmed' } });
  expect(await (await world.worker()).evaluate(`globalThis.echoConsole.handleRequest({ op: 'list-tabs' })`)).toEqual({ ok: true, value: [] });
  expect((await world.core.link.request({ op: 'list-tabs' })).ok).toBe(true); // reads still work
  await expect(popup.locator('#unconfirmed-pairing')).toBeVisible();
  await expect(popup.locator('#unconfirmed-pairing')).toContainText('confirmed in Echo Console only');
});
