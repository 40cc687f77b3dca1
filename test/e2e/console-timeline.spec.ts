// The request timeline (issue 12 item 1; docs/timeline.md) in Chromium over the
// loopback web host and the REAL console core, on a generated ledger: filtered by
// origin, outcome and text with the counts the ledger's request index gives; a
// request expanded into its trail with every receipt's hash; a deep link to a
// receipt opening its request at it (the session kept in the fragment); and the
// live tail putting a new request on top, or where the ledger orders it after the
// clock stepped back.
import { expect, test, type Locator, type Page } from '@playwright/test';
import path from 'node:path';
import {
  DENY_REASON, ONE_PERCENT_ORIGIN, expectedMatches, generateTimelineLedger, type GeneratedTimeline,
} from '../support/timeline-ledger';
import type { RequestSummary } from '../../src/shared/request-summary';
import { RECEIPTS_MAX_ITEMS } from '../../src/renderer/stores/receipts';
import { TIMELINE_MAX_ROWS } from '../../src/renderer/stores/timeline';
import { startRealConsole, type RealConsole } from './support/real-console';

const RECEIPTS = 12_000;
// docs/screenshots/timeline.png with ECHO_UPDATE_SCREENSHOTS=1, else in test-results (README, docs/timeline.md).
const SHOTS = process.env.ECHO_UPDATE_SCREENSHOTS === '1' ? path.resolve(import.meta.dirname, '../../docs/screenshots') : path.resolve('test-results/timeline-screenshots');
let world: RealConsole;
let made: GeneratedTimeline;

/**
 * A virtual list's scroll box: its rows (test id `row`) named by their attribute `attr`.
 * `inView`: the ids of the rows wholly in the box, top to bottom; `rowTop`: where a row is in
 * the box (px from its top), null when it is not rendered; `settled`: waits until two readings
 * of the rows in view agree (the rows measured, the list at rest) and answers them.
 */
function listBox(scroller: Locator, row: string, attr: string) {
  const inView = () =>
    scroller.evaluate(
      (el, [r, a]) => {
        const box = el.getBoundingClientRect();
        return [...el.querySelectorAll(`[data-testid=${r}]`)]
          .filter((x) => x.getBoundingClientRect().top >= box.top && x.getBoundingClientRect().bottom <= box.bottom)
          .map((x) => x.getAttribute(a as string) as string);
      },
      [row, attr],
    );
  const rowTop = (id: string) =>
    scroller.evaluate(
      (el, [a, x]) => {
        const r = el.querySelector(`[${a}="${x}"]`);
        return r ? r.getBoundingClientRect().top - el.getBoundingClientRect().top : null;
      },
      [attr, id],
    );
  const settled = async () => {
    let seen = '';
    await expect.poll(async () => { const now = JSON.stringify(await inView()); const same = now === seen; seen = now; return same; }).toBe(true);
    return inView();
  };
  return { inView, rowTop, settled };
}

/** The total the count line shows ("12,345 requests match, newest first."). */
async function shownTotal(page: Page): Promise<number> {
  return Number(((await page.getByTestId('timeline-count').textContent()) ?? '').split(' ')[0]?.replace(/\D/g, ''));
}

test.beforeAll(async () => {
  world = await startRealConsole('echo-timeline-', { prepare: (dataDir) => void (made = generateTimelineLedger(path.join(dataDir, 'ledger.db'), RECEIPTS)) });
});

test.afterAll(async () => {
  await world?.close();
});

test('a filtered timeline of a generated ledger, a request expanded into its trail, a deep link to a receipt, and the live tail', async () => {
  const { core, host, browser } = world;
  const page = await browser.newPage();
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(m.text());
  });
  await page.goto(host.newConsoleUrl());
  await page.getByTestId('nav-timeline').click();
  const count = page.getByTestId('timeline-count');
  const all = core.ledger.countRequests();
  expect(all).toBeGreaterThanOrEqual(made.requests);
  await expect(count).toHaveText(`${all.toLocaleString('en')} requests match, newest first.`);
  await expect(page.getByTestId('request-row').first()).toBeVisible();

  // Origin filter: every 100th request.
  await page.getByTestId('filter-origin').fill(ONE_PERCENT_ORIGIN);
  await page.getByTestId('filter-apply').click();
  const onePercent = expectedMatches(made.requests, 100, 37);
  await expect(count).toHaveText(`${onePercent} requests match, newest first.`);
  const origins = await page.getByTestId('request-origin').allTextContents();
  expect(origins.length).toBeGreaterThan(5);
  expect(new Set(origins)).toEqual(new Set([ONE_PERCENT_ORIGIN]));

  // Plus an outcome (a list: applied at once), then a text search over reasons instead of the origin.
  await page.getByTestId('filter-outcome').selectOption('refused');
  const refusedThere = core.ledger.countRequests({ origin: ONE_PERCENT_ORIGIN, outcome: 'refused' });
  expect(refusedThere).toBe(onePercent); // the generator refuses every request ≡ 7 (mod 10)
  await page.getByTestId('filter-outcome').selectOption('denied');
  await expect(count).toHaveText('No request matches.');
  await page.getByTestId('filter-outcome').selectOption('');
  await page.getByTestId('filter-origin').fill('');
  await page.getByTestId('filter-text').fill('my bank');
  await page.getByTestId('filter-apply').click();
  const denials = core.ledger.countRequests({ text: 'my bank' });
  expect(denials).toBe(core.ledger.countRequests({ outcome: 'denied' }));
  await expect(count).toHaveText(`${denials.toLocaleString('en')} requests match, newest first.`);

  // The newest denial expands into its trail: every receipt, oldest first, with its hash.
  const row = page.getByTestId('request-row').first();
  const requestId = (await row.getAttribute('data-request-id')) as string;
  await expect(row.getByTestId('request-decider')).toHaveText('you');
  await row.getByTestId('request-expand').click();
  const trail = page.getByTestId('request-trail');
  const receipts = core.ledger.query({ requestId }).receipts.reverse();
  await expect(trail.getByTestId('trail-step')).toHaveCount(receipts.length);
  expect(await trail.getByTestId('trail-step').evaluateAll((els) => els.map((e) => e.getAttribute('data-receipt-id')))).toEqual(receipts.map((r) => r.id));
  await expect(page.getByText(DENY_REASON).first()).toBeVisible();
  await page.setViewportSize({ width: 1400, height: 900 });
  await page.screenshot({ path: path.join(SHOTS, 'timeline.png'), timeout: 20_000 });
  await trail.getByTestId('trail-step-toggle').last().click();
  await expect(trail.getByTestId('receipt-detail-hash')).toHaveText((receipts.at(-1) as { hash: string }).hash);

  // A deep link to a receipt (the approval of an older semantic click) pasted into this tab.
  const rare = core.ledger.queryRequests({ faculty: 'semantic', limit: 500 }).requests[150];
  if (!rare) throw new Error('the generated ledger has too few semantic requests');
  const target = core.ledger.query({ requestId: rare.requestId }).receipts.find((r) => r.event === 'approved');
  if (!target) throw new Error('no requested receipt');
  await page.evaluate((id) => void ((globalThis as unknown as { location: { hash: string } }).location.hash = `#/receipt/${id}`), target.id);
  await expect(count).toHaveText('1 request matches, newest first.');
  await expect(page.getByTestId('request-row')).toHaveAttribute('data-request-id', rare.requestId);
  await expect(page.getByTestId('receipt-detail-id')).toHaveText(target.id);
  await expect(page.getByTestId('receipt-detail-hash')).toHaveText(target.hash);
  // The session stays in the fragment, so a reload of the deep link still finds the console.
  expect(new URL(page.url()).hash).toMatch(/^#\/receipt\/[^?]+\?session=[A-Za-z0-9_-]{32}$/);
  await page.reload();
  await expect(page.getByTestId('receipt-detail-id')).toHaveText(target.id);
  // A reload on a link naming no receipt (followed before the first render, main.tsx): the whole
  // list, and the notice saying why no request opened.
  await page.evaluate(() => void ((globalThis as unknown as { location: { hash: string } }).location.hash = '#/receipt/no-such-receipt'));
  await expect(page.getByTestId('timeline-notice')).toHaveText('No receipt has the id no-such-receipt.');
  expect(new URL(page.url()).hash).toMatch(/^#\/receipt\/no-such-receipt\?session=/);
  await page.reload();
  await expect(page.getByTestId('timeline-notice')).toHaveText('No receipt has the id no-such-receipt.');
  await expect(count).toHaveText(`${core.ledger.countRequests().toLocaleString('en')} requests match, newest first.`);

  // Live tail: a request that starts now appears on top of the unfiltered timeline.
  await page.getByTestId('filter-clear').click();
  await expect(count).toHaveText(`${core.ledger.countRequests().toLocaleString('en')} requests match, newest first.`);
  core.ledger.append({ requestId: 'live-tail-1', event: 'requested', faculty: 'webmcp-invoke', origin: 'https://live.example', toolName: 'live_tool', operation: 'invoke', actor: { kind: 'agent', name: 'Cursor' } });
  await expect(page.getByTestId('request-row').first()).toHaveAttribute('data-request-id', 'live-tail-1');
  await expect(page.getByTestId('request-row').first().getByTestId('request-outcome')).toHaveText('open');
  core.ledger.append({ requestId: 'live-tail-1', event: 'succeeded', faculty: 'webmcp-invoke', origin: 'https://live.example', toolName: 'live_tool', operation: 'invoke', actor: { kind: 'extension' } });
  await expect(page.getByTestId('request-row').first().getByTestId('request-outcome')).toHaveText('succeeded');
  expect(problems).toEqual([]);
  await page.close();
});

test('the live tail keeps the rows being read in place while scrolled down', async () => {
  const { core, host, browser } = world;
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  await page.goto(host.newConsoleUrl());
  await page.getByTestId('nav-timeline').click();
  await expect(page.getByTestId('timeline-count')).toHaveText(/requests match, newest first\.$/);
  const scroller = page.getByTestId('timeline-scroll');
  await scroller.evaluate((el) => void (el.scrollTop = 400));
  // The first row wholly in view, and where it is.
  const reading = () =>
    scroller.evaluate((el) => {
      const top = el.getBoundingClientRect().top + 40;
      const row = [...el.querySelectorAll('[data-testid=request-row]')].find((r) => r.getBoundingClientRect().top >= top);
      return { id: row?.getAttribute('data-request-id') ?? null, top: row?.getBoundingClientRect().top ?? null, scrollTop: el.scrollTop };
    });
  // Settled: the rows in view measured, two readings alike.
  let last = '';
  await expect.poll(async () => { const now = JSON.stringify(await reading()); const same = now === last; last = now; return same; }).toBe(true);
  const before = await reading();
  expect(before.id).not.toBeNull();
  for (let i = 0; i < 3; i++) {
    core.ledger.append({ requestId: `tail-keep-${i}`, event: 'requested', faculty: 'webmcp-invoke', origin: 'https://live.example', toolName: 'live_tool', operation: 'invoke', actor: { kind: 'agent', name: 'Cursor' } });
  }
  // The new rows went on top (the view moved down by them); the row being read stays where it was.
  await expect.poll(async () => (await reading()).scrollTop).toBeGreaterThan(400);
  const rowTop = (id: string) => scroller.evaluate((el, x) => el.querySelector(`[data-request-id="${x}"]`)?.getBoundingClientRect().top ?? null, id);
  await expect.poll(() => rowTop(before.id as string)).toBe(before.top);
  await page.close();
});

test('a request recorded after the clock stepped back goes among the rows above the view, where the ledger orders it, and the rows being read stay in place', async () => {
  let clock = Date.now();
  const w = await startRealConsole('echo-timeline-clock-', { now: () => clock, prepare: (dataDir) => void generateTimelineLedger(path.join(dataDir, 'ledger.db'), 3_000) });
  try {
    const page = await w.browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.goto(w.host.newConsoleUrl());
    await page.getByTestId('nav-timeline').click();
    const total = w.core.ledger.countRequests();
    await expect.poll(() => shownTotal(page)).toBe(total);
    const scroller = page.getByTestId('timeline-scroll');
    await scroller.evaluate((el) => void (el.scrollTop = 1_600)); // 50 rows down
    const { rowTop, settled } = listBox(scroller, 'request-row', 'data-request-id');
    const reading = (await settled())[0] as string;
    const before = await rowTop(reading);
    // A time between the 9th and 10th rows, above the view: the clock stepped back.
    const top = w.core.ledger.queryRequests({ limit: 40 }).requests;
    const [upper, lower] = [top[8], top[9]] as [RequestSummary, RequestSummary];
    expect(upper.time - lower.time).toBeGreaterThan(1);
    clock = lower.time + 1;
    w.core.ledger.append({ requestId: 'stepped-back', event: 'requested', faculty: 'webmcp-invoke', origin: 'https://live.example', toolName: 'live_tool', operation: 'invoke', actor: { kind: 'agent', name: 'Cursor' } });
    // The tail fetched it (the count says so, in the same render as the rows).
    await expect.poll(() => shownTotal(page)).toBe(total + 1);
    expect(await settled()).toContain(reading);
    expect(await rowTop(reading)).toBe(before);
    // Up there, between the two rows, as the ledger orders it.
    await scroller.evaluate((el) => void (el.scrollTop = 0));
    const ids = await settled();
    expect(ids.slice(ids.indexOf(upper.requestId), ids.indexOf(upper.requestId) + 3)).toEqual([upper.requestId, 'stepped-back', lower.requestId]);
    await page.close();
  } finally {
    await w.close();
  }
});

test('a flood of new requests while the timeline is open: it holds a bounded window, scrolling down continues in order after the last row kept, and past the bound the newest wait behind Show the newest', async () => {
  test.setTimeout(120_000);
  const { core, host, browser } = world;
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  await page.goto(host.newConsoleUrl());
  await page.getByTestId('nav-timeline').click();
  await expect(page.getByTestId('timeline-count')).toHaveText(/requests match, newest first\.$/);
  const oldTop = await page.getByTestId('request-row').first().getAttribute('data-request-id');
  // TIMELINE_MAX_ROWS new requests on top, in batches, as a flooding agent leaves them: the live tail takes them all in.
  const flood = TIMELINE_MAX_ROWS;
  for (let b = 0; b < flood; b += 1_000) {
    core.ledger.appendBatch(Array.from({ length: 1_000 }, (_, i) => ({ requestId: `flood-${b + i}`, event: 'requested' as const, faculty: 'list-tabs' as const, origin: 'https://flood.example', actor: { kind: 'agent' as const, name: 'Flood' } })));
  }
  await expect(page.getByTestId('request-row').first()).toHaveAttribute('data-request-id', `flood-${flood - 1}`);
  // It holds TIMELINE_MAX_ROWS rows, not the 200 it had plus the flood.
  await expect(page.getByTestId('timeline-list')).toHaveAttribute('data-rows', String(TIMELINE_MAX_ROWS));
  const scroller = page.getByTestId('timeline-scroll');
  const ids = () => scroller.evaluate((el) => [...el.querySelectorAll('[data-testid=request-row]')].map((r) => r.getAttribute('data-request-id')));
  // The rows held end with the oldest flood rows: the older ones (the page's first rows before) were let go.
  const newestFirst: string[] = [];
  for (let cursor: string | null = null; newestFirst.length < flood + 200; ) {
    const p = core.ledger.queryRequests({ limit: 500, ...(cursor ? { cursor } : {}) });
    newestFirst.push(...p.requests.map((r) => r.requestId));
    if (!(cursor = p.nextCursor)) break;
  }
  const order = newestFirst.slice(flood - 300);
  expect(order.indexOf(oldTop as string)).toBe(300);
  // To the bottom once: the next page comes, past the bound the newest rows go, and the view stays
  // on the rows being read (the oldest flood rows), not moved by the rows let go above it.
  await scroller.evaluate((el) => void (el.scrollTop = el.scrollHeight));
  await expect(page.getByTestId('timeline-newer-hidden')).toBeVisible();
  expect(await listBox(scroller, 'request-row', 'data-request-id').settled()).toContain('flood-5');
  // What comes after the last row kept is the ledger's next row, none lost or twice (the rows just
  // below the view are rendered too: the list's overscan).
  const shown = (await ids()) as string[];
  const at = shown.indexOf(oldTop as string);
  expect(at).toBeGreaterThan(0);
  expect(shown.slice(Math.max(0, at - 5), at + 5)).toEqual(order.slice(300 - Math.min(5, at), 305));
  // Past the bound the newest were let go: the live tail waits, and says so.
  await expect(page.getByTestId('timeline-newer-hidden')).toBeVisible();
  core.ledger.append({ requestId: 'after-the-flood', event: 'requested', faculty: 'list-tabs', origin: 'https://flood.example', actor: { kind: 'agent', name: 'Flood' } });
  // Not put above the gap, but counted: the count line is the ledger's.
  await expect.poll(() => shownTotal(page)).toBe(core.ledger.countRequests());
  await expect(page.locator('[data-request-id="after-the-flood"]')).toHaveCount(0);
  await page.getByTestId('timeline-show-newest').click();
  await expect(page.getByTestId('timeline-newer-hidden')).toHaveCount(0);
  await expect(page.getByTestId('request-row').first()).toHaveAttribute('data-request-id', 'after-the-flood');
  await page.close();
});

test('rows let go from the top while scrolled far down keep the rows being read in place, expanded rows among them too', async () => {
  test.setTimeout(180_000);
  const { core, host, browser } = world;
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  await page.goto(host.newConsoleUrl());
  await page.getByTestId('nav-timeline').click();
  await expect(page.getByTestId('timeline-count')).toHaveText(/requests match, newest first\.$/);
  // A full window: TIMELINE_MAX_ROWS new requests taken in by the live tail.
  for (let b = 0; b < TIMELINE_MAX_ROWS; b += 1_000) {
    core.ledger.appendBatch(Array.from({ length: 1_000 }, (_, i) => ({ requestId: `keep-${b + i}`, event: 'requested' as const, faculty: 'list-tabs' as const, origin: 'https://keep.example', actor: { kind: 'agent' as const, name: 'Flood' } })));
  }
  await expect(page.getByTestId('request-row').first()).toHaveAttribute('data-request-id', `keep-${TIMELINE_MAX_ROWS - 1}`);
  await expect(page.getByTestId('timeline-list')).toHaveAttribute('data-rows', String(TIMELINE_MAX_ROWS));
  // Three rows at the top opened into their trails (taller than a row): they are among the rows let go.
  for (let i = 0; i < 3; i++) {
    await page.locator(`[data-request-id="keep-${TIMELINE_MAX_ROWS - 1 - i}"] [data-testid=request-expand]`).click();
  }
  await expect(page.getByTestId('request-trail')).toHaveCount(3);
  const scroller = page.getByTestId('timeline-scroll');
  // Far down, short of where the next page is asked.
  await scroller.evaluate((el) => void (el.scrollTop = el.scrollHeight - el.clientHeight - 80 * 33));
  const rows = listBox(scroller, 'request-row', 'data-request-id');
  // The last row wholly in view, and where it is in the box.
  const id = (await rows.settled()).at(-1);
  expect(id).toBeDefined();
  const before = { id: id as string, top: (await rows.rowTop(id as string)) as number };
  await expect(page.getByTestId('timeline-newer-hidden')).toHaveCount(0);
  // On down until that row is near the top of the box: the next page is asked, and past the bound the newest rows (the open ones too) go.
  const down = Math.round(before.top) - 100;
  expect(down).toBeGreaterThan(400);
  await scroller.evaluate((el, by) => void (el.scrollTop += by), down);
  await expect(page.getByTestId('timeline-newer-hidden')).toBeVisible();
  await expect(page.getByTestId('request-trail')).toHaveCount(0);
  // Where it was, less the scroll (within a pixel: the box scrolls by whole device pixels).
  await expect.poll(async () => Math.abs(((await rows.rowTop(before.id)) ?? Infinity) - (before.top - down))).toBeLessThanOrEqual(1);
  await page.close();
});

test('Receipts: Show the newest, after scrolling far down a full list, shows the newest receipt at the top', async () => {
  test.setTimeout(180_000);
  const { core, host, browser } = world;
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  await page.goto(host.newConsoleUrl());
  await page.getByTestId('nav-receipts').click();
  await expect(page.getByTestId('receipt-row').first()).toBeVisible();
  // A full list: RECEIPTS_MAX_ITEMS pushed receipts.
  for (let b = 0; b < RECEIPTS_MAX_ITEMS; b += 1_000) {
    core.ledger.appendBatch(Array.from({ length: 1_000 }, (_, i) => ({ requestId: `rflood-${b + i}`, event: 'requested' as const, faculty: 'list-tabs' as const, origin: 'https://rflood.example', actor: { kind: 'agent' as const, name: 'Flood' } })));
  }
  const newest = () => core.ledger.query({ limit: 1 }).receipts[0]!.id;
  await expect(page.getByTestId('receipt-row').first()).toHaveAttribute('data-receipt-id', newest());
  await expect(page.getByTestId('receipt-list')).toHaveAttribute('aria-rowcount', String(RECEIPTS_MAX_ITEMS + 1));
  // Older receipts loaded at the bottom: the newest go.
  await page.getByTestId('receipts-more').click();
  await expect(page.getByTestId('receipts-newer-hidden')).toBeVisible();
  const scroller = page.locator('.receipts-scroll');
  await scroller.evaluate((el) => void (el.scrollTop = el.scrollHeight));
  await expect.poll(() => scroller.evaluate((el) => el.scrollTop)).toBeGreaterThan(0);
  core.ledger.append({ requestId: 'rflood-after', event: 'requested', faculty: 'list-tabs', origin: 'https://rflood.example', actor: { kind: 'agent', name: 'Flood' } });
  await page.getByTestId('receipts-show-newest').click();
  await expect(page.getByTestId('receipts-newer-hidden')).toHaveCount(0);
  // The newest receipt is in the list's box, at its top.
  const inBox = (id: string) =>
    scroller.evaluate((el, x) => {
      const r = el.querySelector(`[data-receipt-id="${x}"]`);
      if (!r) return false;
      const box = el.getBoundingClientRect();
      const at = r.getBoundingClientRect();
      return at.top >= box.top && at.bottom <= box.bottom;
    }, id);
  await expect.poll(() => inBox(newest())).toBe(true);
  await page.close();
});

test('Receipts under a flood: a full list loading older receipts keeps the view on the receipts being read, and the one after the oldest kept is the ledger\'s next', async () => {
  test.setTimeout(180_000);
  const { core, host, browser } = world;
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  await page.goto(host.newConsoleUrl());
  await page.getByTestId('nav-receipts').click();
  const first = page.getByTestId('receipt-row').first();
  await expect(first).toBeVisible();
  const oldTop = (await first.getAttribute('data-receipt-id')) as string;
  let newest = '';
  for (let b = 0; b < RECEIPTS_MAX_ITEMS; b += 1_000) {
    const stored = core.ledger.appendBatch(Array.from({ length: 1_000 }, (_, i) => ({ requestId: `rkeep-${b + i}`, event: 'requested' as const, faculty: 'list-tabs' as const, actor: { kind: 'agent' as const, name: 'Flood' } })));
    newest = stored[stored.length - 1]!.id;
  }
  await expect(first).toHaveAttribute('data-receipt-id', newest);
  await expect(page.getByTestId('receipt-list')).toHaveAttribute('aria-rowcount', String(RECEIPTS_MAX_ITEMS + 1));
  const scroller = page.locator('.receipts-scroll');
  const { settled, rowTop } = listBox(scroller, 'receipt-row', 'data-receipt-id');
  await scroller.evaluate((el) => void (el.scrollTop = el.scrollHeight));
  const reading = await settled();
  const mid = reading[Math.floor(reading.length / 2)] as string;
  const midTop = (await rowTop(mid)) as number;
  // Older receipts load below the last kept; past the bound the newest go, and the view stays.
  await page.getByTestId('receipts-more').click();
  await expect(page.getByTestId('receipts-newer-hidden')).toBeVisible();
  await expect(page.getByTestId('receipt-list')).toHaveAttribute('aria-rowcount', String(RECEIPTS_MAX_ITEMS + 1));
  await settled();
  await expect.poll(async () => Math.abs(((await rowTop(mid)) ?? Infinity) - midTop)).toBeLessThanOrEqual(1);
  const ids = await scroller.evaluate((el) => [...el.querySelectorAll('[data-testid=receipt-row]')].map((r) => r.getAttribute('data-receipt-id')));
  // Right below the oldest receipt of the flood (in view) comes the list's newest from before it (rendered
  // just below the view: the list's overscan): none lost or twice.
  const at = ids.indexOf(oldTop);
  expect(at).toBeGreaterThan(0);
  expect(ids[at - 1]).toBe(core.ledger.query({ requestId: 'rkeep-0', limit: 1 }).receipts[0]!.id);
  await page.close();
});
