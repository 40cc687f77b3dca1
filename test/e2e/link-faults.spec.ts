/**
 * Link faults over the REAL link (issue 3, item 9.5): the native host killed
 * while a page tool runs, the extension's service worker stopped and
 * restarted, and the console not running. In each, the link comes back by
 * itself, a call in flight is never replayed, and one-use grants stay used.
 */
import type { Page } from '@playwright/test';
import type { DiscoveryResult, ToolDescriptor } from '../../src/shared/types';
import type { AgentContext } from '../../src/main/core/broker/index';
import { stopServiceWorker } from './support/service-worker';
import { test, expect, until, type LinkWorld } from './support/link-fixture';

const tool = (d: DiscoveryResult, name: string): ToolDescriptor => {
  const t = d.tools.find((x) => x.name === name);
  if (!t) throw new Error(`no tool ${name}`);
  return t;
};
const AGENT: AgentContext = { actor: { kind: 'agent', name: 'e2e-agent' }, kind: 'read' };

/** The only native host process of this world (Chrome started it through the launcher). */
async function onlyHostPid(w: LinkWorld): Promise<number> {
  const pids = await until(() => (w.hostPids().length === 1 ? w.hostPids() : null), 'exactly one native host process');
  return pids[0] as number;
}

/** Approve the next approval the console shows for `toolName`. */
async function approveNext(w: LinkWorld, toolName: string): Promise<void> {
  const view = await until(() => w.core.broker.approvals.list().find((v) => v.subject.toolName === toolName), `an approval for ${toolName}`);
  const r = await w.core.api.decideApproval({ requestId: view.requestId, decision: 'approve' });
  if (!r.ok) throw new Error(r.error.message);
}

async function waitHanging(w: LinkWorld, page: Page, n: number): Promise<void> {
  await expect.poll(() => w.execCount(page, 'hangs_forever')).toBe(n);
}

test('native host killed mid-call: link-down / outcome-unknown in the console, the link comes back by itself, nothing replayed', async ({ world }) => {
  const { page, tabId } = await world.openShared(world.demo.url('misbehaving'));
  const connectedBefore = world.receipts({ event: 'link-connected' }).length;

  // 1. A raw link request in flight when the host dies answers link-down.
  const hang = tool(await world.discover(tabId), 'hangs_forever');
  const firstPid = await onlyHostPid(world);
  const raw = world.invoke(await world.invokeRequest(hang, {}, {}, 60_000));
  await waitHanging(world, page, 1);
  process.kill(firstPid, 'SIGKILL');
  expect(await raw).toMatchObject({ ok: false, error: { code: 'link-down' } });
  await world.waitForCoreLink((s) => s.state === 'connected', 'connected again after the host was killed');
  const secondPid = await onlyHostPid(world);
  expect(secondPid).not.toBe(firstPid);

  // 2. The agent's path: the broker records outcome-unknown for the dispatched invocation.
  const d = await world.core.broker.discover({ tabId }, AGENT);
  if (!d.ok) throw new Error(d.error.message);
  const pending = world.core.broker.invoke({ tabId, name: 'hangs_forever', descriptorHash: tool(d.value, 'hangs_forever').descriptorHash, arguments: {} }, { ...AGENT, kind: 'mutation' });
  await approveNext(world, 'hangs_forever');
  await waitHanging(world, page, 2);
  process.kill(secondPid, 'SIGKILL');
  const answer = await pending;
  expect(answer).toMatchObject({ ok: false, error: { code: 'outcome-unknown' } });
  const trail = world.receipts({ requestId: answer.requestId }).map((r) => [r.event, (r.detail as { reason?: string }).reason ?? null]).reverse();
  expect(trail).toEqual([
    ['requested', null],
    ['validated', null],
    ['approval-shown', null],
    ['approved', null],
    ['dispatched', null],
    ['outcome-unknown', 'link-down'],
  ]);
  await expect.poll(() => world.receipts({ event: 'link-disconnected' }).length).toBeGreaterThanOrEqual(2);

  // 3. Back by itself (the extension's backoff), with a new host, and nothing was replayed.
  await world.waitForCoreLink((s) => s.state === 'connected', 'connected again after the second kill');
  expect(await onlyHostPid(world)).not.toBe(secondPid);
  await expect.poll(() => world.receipts({ event: 'link-connected' }).length).toBe(connectedBefore + 2);
  // The same call again is refused until the agent looks at the page (outcome-unknown rule) ...
  const retry = await world.core.broker.invoke({ tabId, name: 'hangs_forever', descriptorHash: tool(d.value, 'hangs_forever').descriptorHash, arguments: {} }, { ...AGENT, kind: 'mutation' });
  expect(retry).toMatchObject({ ok: false, error: { code: 'outcome-unknown-pending' } });
  // ... and a full round trip after the reconnect shows the page ran each call exactly once.
  expect((await world.discover(tabId)).tools.length).toBe(14);
  expect(await world.execCount(page, 'hangs_forever')).toBe(2);
});

test('service worker stopped and restarted: the link comes back, sharing survives, and a used grant stays used (grant-reused)', async ({ world }) => {
  const { page, tabId } = await world.openShared(world.demo.url('store'));
  expect(world.receipts({ event: 'link-disconnected' })).toHaveLength(0);
  const getCart = tool(await world.discover(tabId), 'get_cart');
  const used = await world.invokeRequest(getCart, {});
  expect(await world.invoke(used)).toMatchObject({ ok: true, value: { outcome: 'succeeded' } });
  const before = await world.worker();
  await before.evaluate(() => void ((globalThis as unknown as { __beforeRestart: boolean }).__beforeRestart = true));

  // Stop the worker as Chrome does when it idles (CDP from the test side; the extension has no debugger permission).
  const popup = await world.popup();
  const stopped = await stopServiceWorker(world, popup);
  // Its native port closed with it: the console sees the link drop.
  await expect.poll(() => world.receipts({ event: 'link-disconnected' }).length).toBe(1);

  // The open popup keeps asking the worker for its state, which wakes it; the new worker reconnects by itself.
  await world.waitForCoreLink((s) => s.state === 'connected', 'connected again from the restarted worker');
  await until(() => stopped.since().some((v) => v.runningStatus === 'running'), 'the worker to run again');
  const after = await world.worker();
  expect(await after.evaluate(() => (globalThis as unknown as { __beforeRestart?: boolean }).__beforeRestart ?? false)).toBe(false);
  await expect(popup.locator('#link-dot')).toHaveAttribute('data-state', 'connected');

  // The nonce record lives in chrome.storage.session: the replayed grant is refused and never runs.
  expect(await world.invoke(used)).toMatchObject({ ok: true, value: { outcome: 'refused', refusal: 'grant-reused' } });
  expect(await world.execCount(page, 'get_cart')).toBe(1);
  // Sharing survived too, and a fresh grant works.
  expect(await world.invoke(await world.invokeRequest(getCart, {}))).toMatchObject({ ok: true, value: { outcome: 'succeeded' } });
  expect(await world.execCount(page, 'get_cart')).toBe(2);
  await stopped.cdp.detach();
});

test('console not running: the popup says so, the extension retries with backoff, and connects by itself when the console starts', async ({ launchWorld }) => {
  const w = await launchWorld({ startCore: false });
  // Record the worker's link states from the start to see the retries (each one starts a native host that finds no console).
  const worker = await w.worker();
  await worker.evaluate(() => {
    const g = globalThis as unknown as { __states: { s: string; t: number }[]; echoConsole: { linkState(): { state: string } } };
    g.__states = [];
    setInterval(() => {
      const s = g.echoConsole.linkState().state;
      if (g.__states.at(-1)?.s !== s) g.__states.push({ s, t: Date.now() });
    }, 5);
  });
  const popup = await w.popup();
  await expect(popup.locator('#link-dot')).toHaveAttribute('data-state', 'console-not-running');
  await expect(popup.locator('#link-label')).toHaveText('The console is not running. Start Echo Console.');
  await expect(popup.locator('#retry')).toBeVisible();
  const states = () => worker.evaluate(() => (globalThis as unknown as { __states: { s: string; t: number }[] }).__states);
  const attemptStarts = async () => (await states()).filter((x, i, all) => x.s === 'connecting' && all[i - 1]?.s === 'console-not-running').map((x) => x.t);
  await expect.poll(async () => (await attemptStarts()).length, { timeout: 30_000 }).toBeGreaterThanOrEqual(3);
  // Backoff (0.5 s doubling): attempts are never closer than the first delay, and the gaps grow.
  const [a1, a2, a3] = await attemptStarts();
  expect(a2! - a1!).toBeGreaterThanOrEqual(400);
  expect(a3! - a2!).toBeGreaterThan(a2! - a1!);
  await expect.poll(() => w.hostPids()).toEqual([]); // each host exits once it told the extension (exit 2)

  // First run of the console: it pairs; then stop it and start it again: the extension reconnects on its own.
  await w.startCore();
  await w.pair();
  await w.stopCore();
  await expect(popup.locator('#link-dot')).toHaveAttribute('data-state', 'console-not-running');
  await w.startCore();
  await w.waitForCoreLink((s) => s.state === 'connected' && s.paired, 'connected after the console came back (no pairing needed)', 40_000);
  await expect(popup.locator('#link-dot')).toHaveAttribute('data-state', 'connected');
  expect(w.receipts({ event: 'paired' })).toHaveLength(1);
  expect(w.receipts({ event: 'link-connected' }).length).toBe(2);
});
