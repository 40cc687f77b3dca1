// Issue 12 items 2 and 3 in the built renderer over the loopback web host and the
// REAL console core: Verify ledger reports progress then its result (count, head,
// checkpoint, witness); an export of the ledger verifies with the CLI, and an export of a
// filtered timeline verifies with its left-out receipts reported as gaps; retention,
// driven by the core's injected clock, erases payloads and Verify still passes.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { expect, test } from '@playwright/test';
import type { ConsoleEvent } from '../../src/shared/ipc';
import type { LedgerProgress } from '../../src/shared/ledger-export';
import type { ReceiptInput } from '../../src/shared/receipt';
import { startRealConsole, type RealConsole } from './support/real-console';

const DAY = 86_400_000;
const T0 = Date.UTC(2026, 9, 1);
let clock = T0;
let world: RealConsole;

test.beforeAll(async () => {
  world = await startRealConsole('echo-ledger-', { now: () => clock });
});
test.afterAll(async () => {
  await world?.close();
});

/** Resolves with the first pushed event that `match` accepts (subscribed before the act that causes it). */
function nextEvent<T>(match: (e: ConsoleEvent) => T | undefined): Promise<T> {
  return new Promise((resolve) => {
    const off = world.core.onEvent((e) => {
      const v = match(e);
      if (v !== undefined) {
        off();
        resolve(v);
      }
    });
  });
}

function cliVerify(file: string, publicKey: string): { status: number | null; stdout: string; stderr: string } {
  return spawnSync(process.execPath, ['--import', 'tsx', path.resolve('scripts/ledger-cli.ts'), 'verify', file, '--public-key', publicKey], { encoding: 'utf8' });
}

test('Verify ledger with progress and result, an export that verifies, a filtered export whose gaps are reported, and retention erasing payloads while verify passes', async () => {
  const { core, host, browser } = world;
  // 25,000 receipts of an agent's typing, so verify and export report progress in several chunks.
  const typed: ReceiptInput = {
    requestId: 'req-typing', event: 'succeeded', faculty: 'semantic', operation: 'type', origin: 'https://bank.example', toolName: null,
    actor: { kind: 'agent', name: 'Claude', tokenId: 'tok_0123456789abcdef' }, detail: { text: 'my street address 12', url: 'https://bank.example/profile' },
  };
  for (let k = 0; k < 25; k++) core.ledger.appendBatch(Array.from({ length: 1000 }, () => typed));
  const publicKey = core.ledger.signing()?.publicKey;
  expect(publicKey).toBeTruthy();

  const page = await browser.newPage();
  const progress: LedgerProgress[] = [];
  page.on('websocket', (ws) =>
    ws.on('framereceived', (f) => {
      const text = String(f.payload);
      if (!text.includes('ledger-progress')) return;
      const m = JSON.parse(text) as { event?: ConsoleEvent };
      if (m.event?.kind === 'ledger-progress') progress.push(m.event.progress);
    }),
  );
  await page.goto(host.newConsoleUrl());
  await page.getByTestId('nav-receipts').click();

  // Verify ledger: progress events in chunks, then the result, item by item.
  await page.getByTestId('verify-ledger').click();
  const count = core.ledger.head().count;
  await expect(page.getByTestId('verify-report')).toContainText(`Chain intact: ${count} receipts`);
  await expect(page.getByTestId('verify-count')).toHaveText(count.toLocaleString('en'));
  await expect(page.getByTestId('verify-head')).toHaveText(core.ledger.head().headHash);
  await expect(page.getByTestId('verify-checkpoint')).toContainText(`#${core.ledger.latestSignedCheckpoint()?.count}`);
  await expect(page.getByTestId('verify-witness')).toContainText('not checked');
  const verifySteps = progress.filter((p) => p.task === 'verify').map((p) => p.done);
  expect(verifySteps.length).toBeGreaterThanOrEqual(3);
  expect(verifySteps).toContain(10_000);
  expect(verifySteps.at(-1)).toBe(count);

  // Export everything as JSON Lines (from the timeline, with no filter set): progress, then the file, which the CLI verifies with no gaps.
  await page.getByTestId('nav-timeline').click();
  const exported = nextEvent((e) => (e.kind === 'ledger-progress' && e.progress.task === 'export' && e.progress.state !== 'running' ? e.progress : undefined));
  await page.getByTestId('export-start').click();
  const done = await exported;
  expect(done.state).toBe('done');
  await expect(page.getByTestId('export-status')).toHaveAttribute('data-state', 'done');
  await expect(page.getByTestId('export-status')).toContainText(`Exported ${done.result?.rows} receipts`);
  expect(progress.filter((p) => p.task === 'export' && p.state === 'running').length).toBeGreaterThanOrEqual(3);
  const file = done.result?.file as string;
  expect(path.dirname(file)).toBe(path.join(world.dir, 'data', 'exports'));
  const first = cliVerify(file, publicKey as string);
  expect(first.stdout).toMatch(/^ok: \d+ receipts, every hash intact, no gaps; signed checkpoint #\d+ verifies/);
  expect(first.status).toBe(0);

  // An export of a filtered timeline (one origin): the receipts it leaves out are reported as gaps, by range, and it still verifies.
  const shop: ReceiptInput = { ...typed, requestId: 'req-shop', event: 'requested', operation: 'click', origin: 'https://shop.example', detail: { url: 'https://shop.example/cart' } };
  const [asked, , , clicked] = core.ledger.appendBatch([shop, typed, typed, { ...shop, event: 'succeeded' }]);
  const [s1, s2] = [asked?.seq as number, clicked?.seq as number];
  await page.getByTestId('filter-origin').fill('https://shop.example');
  await page.getByTestId('filter-apply').click();
  await expect(page.getByTestId('timeline-count')).toHaveText(/^1 request matches/);
  const filtered = nextEvent((e) => (e.kind === 'ledger-progress' && e.progress.task === 'export' && e.progress.state !== 'running' ? e.progress : undefined));
  await page.getByTestId('export-start').click();
  const part = await filtered;
  expect(part).toMatchObject({ state: 'done', result: { rows: 2 } });
  const gapped = cliVerify(part.result?.file as string, publicKey as string);
  expect(gapped.stdout).toMatch(/^ok: 2 receipts, every hash intact, \d gaps \(\d+ receipts not in the export\)/);
  expect(gapped.stdout).toContain(`gaps: #1..#${s1 - 1}, #${s1 + 1}..#${s2 - 1}`);
  expect(gapped.status).toBe(0);
  await page.getByTestId('filter-clear').click();

  // Retention: 40 days later, the person keeps payloads for 30 days: they are erased, the chain verifies.
  clock = T0 + 40 * DAY;
  const erasedReceipt = nextEvent((e) => (e.kind === 'receipts' ? e.receipts.find((r) => r.event === 'payloads-erased') : undefined));
  await page.getByTestId('retention-days').fill('30');
  await page.getByTestId('save-retention').click();
  await expect(page.getByTestId('retention-saved')).toBeVisible();
  const erased = await erasedReceipt;
  expect(erased.detail).toMatchObject({ retentionDays: 30, oldRuleKept: 0 });
  expect((erased.detail as { erased: number }).erased).toBeGreaterThanOrEqual(25_000);
  expect(core.settings.get().retentionDays).toBe(30);
  const one = core.ledger.get(1);
  expect(one).toMatchObject({ detail: null, erasedAt: T0 + 40 * DAY });
  expect(JSON.stringify(core.ledger.query({ limit: 500, to: T0 }).receipts)).not.toContain('street address');

  await page.getByTestId('nav-receipts').click();
  await page.getByTestId('verify-ledger').click();
  await expect(page.getByTestId('verify-report')).toContainText(`Chain intact: ${core.ledger.head().count} receipts`);
  await expect(page.getByTestId('verify-details')).not.toContainText('First broken link');
  await page.getByTestId('nav-timeline').click();

  // An export after the erasure verifies too, and holds no payload.
  const second = nextEvent((e) => (e.kind === 'ledger-progress' && e.progress.task === 'export' && e.progress.state === 'done' ? e.progress : undefined));
  await page.getByTestId('export-start').click();
  const file2 = (await second).result?.file as string;
  const again = cliVerify(file2, publicKey as string);
  expect(again.stdout).toMatch(/^ok: .* no gaps/);
  expect(again.status).toBe(0);
  await page.close();
});
