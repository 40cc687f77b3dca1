/**
 * Request timeline benchmark (`npm run bench -- timeline`; issue 12, "Measured";
 * docs/timeline.md): the Timeline view in the loopback web host, in Chromium,
 * over the real console core, at 1,000,000 receipts (BENCH_TIMELINE_RECEIPTS).
 *
 * Figures (ms), medians of BENCH_TIMELINE_ROUNDS (default 5: single opens on a shared 2-core machine
 * move by ±50 ms, the floor's too) rounds, and every run:
 * - `firstScreen`: per filter matching 100%, 1%, 0.01% and none of the requests,
 *   a cold open of the deep link `#/timeline?…` (new document: HTML, the bundle,
 *   the socket, the page of requests, React) to the first paint of its rows
 *   (`screenMs`) and of the total count (`countMs`), from navigation start;
 *   beside `floorMs`: a static HTML table of the same visible rows, no script,
 *   served by a plain local HTTP server, to its first paint (the floor);
 * - `filterChange`: in the open console, from Apply to the paint of the new
 *   rows (`screenMs`) and of the new count (`countMs`);
 * - `scroll`: frame times (rAF deltas) while the list scrolls 10,000 rows at
 *   BENCH_TIMELINE_SCROLL_ROWS_PER_FRAME rows a frame (default 20), the older pages
 *   loading as it goes: p50, p99, max, frames over 50 ms; beside the same scroll of
 *   a static table of the same 10,000 rows (the floor);
 * - the load average at start and end.
 * Targets: first screenful ≤ 300 ms and ≤ 2× the floor; a filter change ≤ 100 ms;
 * no frame over 50 ms. Never asserts them: reading the figures is a person's job.
 *
 * The generated ledger (test/support/timeline-ledger.ts) is cached in the OS temp
 * folder across runs (about 4 minutes to build at a million on a loaded 2-core
 * machine) and copied into a throw-away data folder for the console.
 * Needs Chromium and the built renderer (`npm run build`).
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type Page } from '@playwright/test';
import { createConsoleCore } from '../../src/main/core';
import { Ledger } from '../../src/main/core/ledger/index';
import { startWebHost } from '../../src/main/web/server';
import type { RequestFilter, RequestSummary } from '../../src/shared/request-summary';
import { parseRoute, routeFragment } from '../../src/renderer/route';
import { sessionFromFragment } from '../../src/renderer/transport/token';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../e2e/chromium';
import { ABSENT_ORIGIN, ONE_PERCENT_ORIGIN, RARE_ORIGIN, generateTimelineLedger } from '../support/timeline-ledger';
import { loadAverage } from './floor';

const RECEIPTS = Number(process.env.BENCH_TIMELINE_RECEIPTS ?? 1_000_000);
const ROUNDS = Number(process.env.BENCH_TIMELINE_ROUNDS ?? 5);
const SCROLL_ROWS = Number(process.env.BENCH_TIMELINE_SCROLL_ROWS ?? 10_000);
const ROWS_PER_FRAME = Number(process.env.BENCH_TIMELINE_SCROLL_ROWS_PER_FRAME ?? 20);
/** A collapsed timeline row's height (components/Timeline.tsx ROW_PX). */
const ROW_PX = 32;
const RENDERER_DIR = path.resolve(process.env.ECHO_CONSOLE_RENDERER_DIR ?? 'out/renderer');
/** Bump when the generator changes, so a stale cache is not used. */
const GENERATOR_VERSION = 1;

const FILTERS: Array<[string, RequestFilter]> = [
  ['100%', {}],
  ['1%', { origin: ONE_PERCENT_ORIGIN }],
  ['0.01%', { origin: RARE_ORIGIN }],
  ['none', { origin: ABSENT_ORIGIN }],
];

const log = (m: string) => process.stderr.write(`timeline bench: ${m}\n`);
const round = (n: number) => Math.round(n * 10) / 10;
const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return round(s.length % 2 ? (s[(s.length - 1) / 2] as number) : ((s[s.length / 2 - 1] as number) + (s[s.length / 2] as number)) / 2);
};
function pct(sorted: number[], p: number): number {
  return round(sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN);
}

/** The cached generated ledger (built once). */
function cachedLedger(): string {
  const file = path.join(tmpdir(), `echo-timeline-bench-v${GENERATOR_VERSION}-${RECEIPTS}.db`);
  if (existsSync(file)) return file;
  log(`generating ${RECEIPTS} receipts (cached at ${file})`);
  const tmp = `${file}.building`;
  rmSync(tmp, { force: true });
  const s = performance.now();
  generateTimelineLedger(tmp, RECEIPTS, { onProgress: (n) => n % 100_000 === 0 && log(`  ${n} receipts, ${Math.round((performance.now() - s) / 1000)} s`) });
  renameSync(tmp, file);
  return file;
}

/**
 * Marks the page sets for the bench, installed before any script of each new document:
 * `__marks['ready<q>']` / `__marks['counted<q>']`: performance.now() at the first paint
 * after the timeline showed query q's rows / its count (rAF, then a task: after the frame).
 */
const MARKS_SCRIPT = `(() => {
  const marks = (window.__marks = {});
  const at = (key) => {
    if (key in marks) return;
    marks[key] = null;
    requestAnimationFrame(() => setTimeout(() => (marks[key] = performance.now())));
  };
  const check = () => {
    const c = document.querySelector('[data-testid=timeline-count]');
    if (!c) return;
    if (c.dataset.ready && c.dataset.ready !== '-1') at('ready' + c.dataset.ready);
    if (c.dataset.counted && c.dataset.counted !== '-1') at('counted' + c.dataset.counted);
  };
  new MutationObserver(check).observe(document, { subtree: true, childList: true, attributes: true, attributeFilter: ['data-ready', 'data-counted'] });
})();`;

/** Wait for both marks of query `want` (or of the newest query); answers them. Page code as text: it runs in the page as written. */
async function marksOf(page: Page, want: number | 'latest'): Promise<{ screen: number; count: number; query: number }> {
  return page.evaluate(`(async (want) => {
    for (;;) {
      const qs = Object.keys(window.__marks).filter((k) => k.startsWith('ready')).map((k) => Number(k.slice(5)));
      const q = want === 'latest' ? Math.max(-1, ...qs) : want;
      const r = window.__marks['ready' + q];
      const c = window.__marks['counted' + q];
      if (typeof r === 'number' && typeof c === 'number') return { screen: r, count: c, query: q };
      await new Promise((res) => setTimeout(res, 5));
    }
  })(${JSON.stringify(want)})`);
}

/** The rows in view, as the cells' text, for the floor's static table. */
async function visibleRows(page: Page): Promise<string[][]> {
  return page.evaluate(`(() => {
    const box = document.querySelector('[data-testid=timeline-scroll]')?.getBoundingClientRect();
    const rows = [...document.querySelectorAll('[data-testid=request-row]')].filter((r) => {
      const b = r.getBoundingClientRect();
      return box && b.bottom > box.top && b.top < box.bottom;
    });
    return rows.map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent ?? ''));
  })()`);
}

const HEAD = ['Time', 'Agent', 'Faculty · operation', 'Tool or target', 'Origin', 'Tab', 'Outcome', 'Duration', 'Decided by'];
const esc = (s: string) => s.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);

/** The floor: a static table of these rows, and a script that marks its first paint. */
function staticPage(rows: string[][], scrollBox: boolean): string {
  const body = rows.map((r) => `<tr>${r.map((c) => `<td>${esc(c)}</td>`).join('')}</tr>`).join('');
  return `<!doctype html><meta charset="utf-8"><title>floor</title>
<style>body{font:13px system-ui,sans-serif;margin:0}div{height:${scrollBox ? '600px' : 'auto'};overflow:auto}table{border-collapse:collapse;width:100%}
td,th{height:32px;padding:0 8px;border-bottom:1px solid #ddd;white-space:nowrap;text-align:left}</style>
<div id="s"><table><thead><tr>${HEAD.map((h) => `<th>${h}</th>`).join('')}</tr></thead><tbody>${body || '<tr><td colspan="9">No request matches.</td></tr>'}</tbody></table></div>
<script>requestAnimationFrame(() => setTimeout(() => (window.__painted = performance.now())));</script>`;
}

/** In the page: scroll `selector` by rowsPerFrame rows a frame until `rows` rows have gone by; rAF deltas (ms). */
async function scrollFrames(page: Page, selector: string, rows: number, rowsPerFrame: number): Promise<{ deltas: number[]; ms: number; rowsScrolled: number }> {
  return page.evaluate(`(async ({ selector, rows, rowsPerFrame, rowPx }) => {
    const el = document.querySelector(selector);
    const deltas = [];
    const target = rows * rowPx;
    const start = performance.now();
    let last = start;
    let scrolled = 0;
    await new Promise((done) => {
      const frame = (t) => {
        deltas.push(t - last);
        last = t;
        const before = el.scrollTop;
        el.scrollTop = before + rowsPerFrame * rowPx;
        scrolled += el.scrollTop - before;
        if (scrolled >= target || performance.now() - start > 120000) return done();
        requestAnimationFrame(frame);
      };
      requestAnimationFrame((t) => {
        last = t;
        requestAnimationFrame(frame);
      });
    });
    return { deltas, ms: performance.now() - start, rowsScrolled: Math.round(scrolled / rowPx) };
  })(${JSON.stringify({ selector, rows, rowsPerFrame, rowPx: ROW_PX })})`);
}

function frameStats(d: number[]): Record<string, number> {
  const s = [...d].sort((a, b) => a - b);
  return { frames: s.length, p50: pct(s, 50), p99: pct(s, 99), max: round(s[s.length - 1] ?? NaN), over50ms: s.filter((x) => x > 50).length };
}

/** A summary row as the static floor shows it (close to the Timeline's cells). */
function cells(s: RequestSummary): string[] {
  return [new Date(s.time).toISOString(), s.agent ?? '—', `${s.faculty}${s.operation ? ` · ${s.operation}` : ''}`, s.toolName ?? s.operation ?? '', s.origin ?? '—', String(s.tabId ?? '—'), s.outcome ?? 'open', `${s.durationMs} ms`, s.decidedBy ?? '—'];
}

export async function run(): Promise<Record<string, unknown>> {
  const loadAtStart = loadAverage();
  if (!existsSync(path.join(RENDERER_DIR, 'index.html'))) throw new Error(`the renderer is not built (${RENDERER_DIR}): run \`npm run build\``);
  const source = cachedLedger();
  const dir = mkdtempSync(path.join(tmpdir(), 'echo-timeline-bench-'));
  process.env.ECHO_CONSOLE_LEDGER_KEY_DIR ??= path.join(dir, 'keys');
  const dataDir = path.join(dir, 'data');
  mkdirSync(dataDir, { mode: 0o700 });
  copyFileSync(source, path.join(dataDir, 'ledger.db'));
  let floorHtml = '';
  const server: Server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end(floorHtml);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const floorUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}/floor.html`;
  const core = createConsoleCore({ dataDir, mcpPort: 0, socketPath: path.join(dir, 'link.sock'), agentSocketPath: path.join(dir, 'agent.sock'), logger: { info: () => {}, warn: () => {} } });
  await core.start();
  const host = await startWebHost({ api: core.api, subscribe: (l) => core.onEvent(l), rendererDir: RENDERER_DIR, port: 0 });
  core.setConsoleOrigins(host.origins);
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
  try {
    const receipts = core.ledger.head().count;
    const requests = core.ledger.countRequests();
    log(`${receipts} receipts, ${requests} requests, ledger ${Math.round(statSync(path.join(dataDir, 'ledger.db')).size / 1e6)} MB`);
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.addInitScript(MARKS_SCRIPT);
    await page.goto(host.newConsoleUrl());
    await page.waitForFunction('/session=/.test(location.hash)');
    const sid = sessionFromFragment(new URL(page.url()).hash);

    // 1. Cold open of each filter's deep link, beside the static floor of the same rows.
    const firstScreen: Record<string, unknown> = {};
    for (const [name, filter] of FILTERS) {
      const runs: Array<{ screenMs: number; countMs: number; floorMs: number }> = [];
      const link = `${host.origin}/${routeFragment({ view: 'timeline', filter, request: null }, sid)}`;
      if (parseRoute(new URL(link).hash)?.view !== 'timeline') throw new Error('bad deep link');
      for (let i = 0; i < ROUNDS + 1; i++) {
        await page.goto('about:blank');
        await page.goto(link);
        const m = await marksOf(page, 'latest');
        floorHtml = staticPage(await visibleRows(page), false);
        await page.goto('about:blank');
        await page.goto(floorUrl);
        const floorMs = (await (await page.waitForFunction('window.__painted')).jsonValue()) as number;
        // The first round warms the caches (bundle, SQLite pages) and is left out.
        if (i > 0) runs.push({ screenMs: round(m.screen), countMs: round(m.count), floorMs: round(floorMs) });
      }
      const count = core.ledger.countRequests(filter);
      firstScreen[name] = {
        matching: count,
        screenMs: median(runs.map((r) => r.screenMs)),
        countMs: median(runs.map((r) => r.countMs)),
        floorMs: median(runs.map((r) => r.floorMs)),
        ratioToFloor: round(median(runs.map((r) => r.screenMs)) / median(runs.map((r) => r.floorMs))),
        runs,
      };
      log(`first screen ${name}: ${JSON.stringify(firstScreen[name])}`);
    }

    // 2. Filter changes in the open console.
    await page.goto('about:blank');
    await page.goto(`${host.origin}/${routeFragment({ view: 'timeline', filter: {}, request: null }, sid)}`);
    await marksOf(page, 'latest');
    const filterChange: Record<string, unknown> = {};
    for (const [name, filter] of [...FILTERS.slice(1), FILTERS[0]] as Array<[string, RequestFilter]>) {
      const runs: Array<{ screenMs: number; countMs: number }> = [];
      for (let i = 0; i < ROUNDS; i++) {
        // Another filter first, so each run is a change.
        const other: RequestFilter = { origin: filter.origin === RARE_ORIGIN ? ONE_PERCENT_ORIGIN : RARE_ORIGIN };
        for (const f of [other, filter]) {
          await page.getByTestId('filter-origin').fill(f.origin ?? '');
          const before = await marksOf(page, 'latest');
          const t0 = (await page.evaluate(`(() => {
            const t = performance.now();
            document.querySelector('[data-testid=timeline-filters]').requestSubmit();
            return t;
          })()`)) as number;
          const m = await marksOf(page, before.query + 1);
          if (f === filter) runs.push({ screenMs: round(m.screen - t0), countMs: round(m.count - t0) });
        }
      }
      filterChange[name] = { screenMs: median(runs.map((r) => r.screenMs)), countMs: median(runs.map((r) => r.countMs)), runs };
      log(`filter change to ${name}: ${JSON.stringify(filterChange[name])}`);
    }

    // 3. Scrolling 10,000 rows of the unfiltered timeline (the last filter applied above), pages loading as it goes.
    const timelineScroll = await scrollFrames(page, '[data-testid=timeline-scroll]', SCROLL_ROWS, ROWS_PER_FRAME);
    log(`scroll: ${JSON.stringify(frameStats(timelineScroll.deltas))}`);
    const reader = new Ledger(path.join(dataDir, 'ledger.db'), { readonly: true });
    const floorRows: string[][] = [];
    try {
      let cursor: string | undefined;
      while (floorRows.length < SCROLL_ROWS + 40) {
        const p = reader.queryRequests({ limit: 500, ...(cursor ? { cursor } : {}) });
        floorRows.push(...p.requests.map(cells));
        if (!p.nextCursor) break;
        cursor = p.nextCursor;
      }
    } finally {
      reader.close();
    }
    floorHtml = staticPage(floorRows, true);
    await page.goto(floorUrl);
    await page.waitForFunction('window.__painted');
    const floorScroll = await scrollFrames(page, '#s', SCROLL_ROWS, ROWS_PER_FRAME);
    const scroll = {
      rows: timelineScroll.rowsScrolled,
      rowsPerFrame: ROWS_PER_FRAME,
      ms: round(timelineScroll.ms),
      ...frameStats(timelineScroll.deltas),
      floor: { rows: floorScroll.rowsScrolled, ms: round(floorScroll.ms), ...frameStats(floorScroll.deltas) },
    };
    return {
      unit: 'ms',
      receipts,
      requests,
      rounds: ROUNDS,
      firstScreen,
      filterChange,
      scroll,
      targets: { firstScreenMs: 300, firstScreenToFloor: 2, filterChangeMs: 100, frameMaxMs: 50 },
      loadAtStart,
      loadAtEnd: loadAverage(),
    };
  } finally {
    await browser.close();
    await host.close();
    await core.stop();
    server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
