/**
 * Our semantic snapshot against Playwright's aria snapshot (`npm run bench --
 * snapshot`; issue 10, "Measured"): for each page, never averaged across
 * pages, side by side in one run and one browser.
 *
 * One world from test/e2e/support/link-fixture.ts: the console core in this
 * process, the real native host, Debian's Chromium with the built extension.
 * Each page is opened and shared, then measured in interleaved rounds:
 *
 * - **ours through MCP** (`mcp`): an MCP SDK client's `tools/call page_snapshot
 *   {tabId, maxBytes: 262144}` to its answer: the agent's whole path (endpoint,
 *   pipeline, receipts with their fsync, link, the `semantic-read` faculty, the
 *   isolated-world walk in the page, the console's redaction);
 * - **ours over the link alone** (`link`): `core.link.request({op: 'read',
 *   faculty: 'semantic-read', …})` from this process: the native host, Chrome,
 *   the worker and the page, without the MCP endpoint, the pipeline's checks
 *   and receipts, or the console's redaction;
 * - **ours in the service worker** (`worker`): the same faculty's read
 *   (`echoConsole.handleRequest({op: 'read', …})`), timed by the worker's own
 *   clock: injection check, tag, the walk, assembly, no link, no console;
 * - **Playwright**: `page.locator('body').ariaSnapshot()` from this process
 *   (playwright-core over CDP, on the same page in the same browser).
 *
 * Per page: bytes of each text (ours: the tree, without the MCP answer's
 * header and untrusted-block wrapper, which are given apart), p50/min/mean of
 * each time, the ratios (ours / Playwright; targets bytes ≤ 0.5, time ≤ 1.0;
 * `stringFloor`: the bytes of our names, values and text alone, unescaped,
 * over Playwright's: the least any format that keeps them all could reach),
 * the recall of Playwright's named nodes, text tokens and headings in ours
 * (test/bench/snapshot-recall.ts; targets 100% of named interactive nodes,
 * ≥ 99% of text and headings), and whether our text held a truncation marker
 * (it must not). Load average at start and end.
 *
 * `validity` proves the measured work was whole: every call of ours answered
 * untruncated with the same text in every round (the page does not change;
 * the worker's text is the MCP answer's tree), every MCP call left its
 * `requested` and `succeeded` receipts, Playwright's text was the same in every
 * round, and the recall was taken from the texts measured.
 *
 * Pages: the seeded generator (resources/bench/, `?seed=N`, about 5,000
 * elements; BENCH_SNAPSHOT_SEEDS, default "1") and each page of
 * resources/demo. BENCH_SNAPSHOT_ROUNDS: rounds per page (default 5, after one
 * warm-up). BENCH_SNAPSHOT_DUMP=<folder> writes each page's two texts there.
 * Needs the builds: `npm run build:extension && npm run build:tools`.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Page } from '@playwright/test';
import { startLinkWorld, type LinkWorld } from '../e2e/support/link-fixture';
import { createAgentToken } from '../support/agent-token';
import { SNAPSHOT_BYTES } from '../../src/shared/snapshot';
import { compareSnapshots, type Recall } from './snapshot-recall';

const ROUNDS = Math.max(1, Number(process.env.BENCH_SNAPSHOT_ROUNDS ?? 5));
const SEEDS = (process.env.BENCH_SNAPSHOT_SEEDS ?? '1').split(',').map((s) => Number(s.trim())).filter((n) => Number.isSafeInteger(n) && n >= 0);
/** The demo pages measured (resources/demo; ids of test/support/demo-servers.ts). */
const DEMO_IDS = ['store', 'forms', 'schedule', 'appointment', 'spa', 'changing'];
const MAX_BYTES = SNAPSHOT_BYTES.max;
/** A folder to write each page's two texts to (`<page>.ours.txt`, `<page>.playwright.yaml`), for reading the misses; unset: none. */
const DUMP = process.env.BENCH_SNAPSHOT_DUMP;
if (DUMP) mkdirSync(DUMP, { recursive: true });
export const TARGETS = { bytesRatio: 0.5, timeRatio: 1.0, namedInteractive: 1, text: 0.99, headings: 0.99 } as const;

const round2 = (x: number) => Math.round(x * 100) / 100;
const round4 = (x: number) => Math.round(x * 10_000) / 10_000;

function stats(samples: number[]): { p50: number; min: number; mean: number; n: number } {
  const s = [...samples].sort((a, b) => a - b);
  return { p50: round2(s[Math.ceil(0.5 * s.length) - 1] ?? NaN), min: round2(s[0] ?? NaN), mean: round2(s.reduce((a, b) => a + b, 0) / s.length), n: s.length };
}

async function time<T>(fn: () => Promise<T>): Promise<[number, T]> {
  const t0 = performance.now();
  const v = await fn();
  return [performance.now() - t0, v];
}

const textOf = (r: CallToolResult) => (r.content as Array<{ text: string }>).map((c) => c.text).join('\n');

/** The tree of a page_snapshot answer (inside the untrusted block, without its `url` line) and its header. */
function parseAnswer(r: CallToolResult): { tree: string; header: { truncated: boolean; bytes: number; refs: number; receiptId: string }; answerBytes: number } {
  const t = textOf(r);
  if (r.isError) throw new Error(`page_snapshot failed: ${t.slice(0, 300)}`);
  const header = JSON.parse(/^Snapshot of tab \d+: (\{.*\})$/m.exec(t)?.[1] ?? 'null') as { truncated: boolean; bytes: number; refs: number; receiptId: string } | null;
  const block = /<untrusted-page-content source="page_snapshot tab \d+ [^"]+">\n([\s\S]*)\n<\/untrusted-page-content>$/.exec(t)?.[1];
  if (!header || block === undefined) throw new Error(`page_snapshot answered another shape: ${t.slice(0, 300)}`);
  return { tree: block.split('\n').slice(1).join('\n'), header, answerBytes: Buffer.byteLength(t) };
}

/** The faculty's read in the service worker, timed by the worker's clock. */
async function workerSnapshot(world: LinkWorld, tabId: number): Promise<{ ms: number; text: string; truncated: boolean }> {
  const w = await world.worker();
  const r = await w.evaluate(
    async ([tab, maxBytes]) => {
      const ec = (globalThis as unknown as { echoConsole: { handleRequest(q: unknown): Promise<{ ok: boolean; value?: { text: string; truncated: boolean }; error?: unknown }> } }).echoConsole;
      const t0 = performance.now();
      const a = await ec.handleRequest({ op: 'read', faculty: 'semantic-read', operation: 'snapshot', tabId: tab, arguments: { maxBytes } });
      return { ms: performance.now() - t0, a };
    },
    [tabId, MAX_BYTES] as const,
  );
  if (!r.a.ok || !r.a.value) throw new Error(`worker snapshot failed: ${JSON.stringify(r.a.error).slice(0, 300)}`);
  return { ms: r.ms, text: r.a.value.text, truncated: r.a.value.truncated };
}

const ariaSnapshot = (page: Page) => page.locator('body').ariaSnapshot({ timeout: 120_000 });

const recallOut = (r: Recall) => ({ recall: round4(r.recall), held: r.held, total: r.total, ...(r.misses.length ? { misses: r.misses } : {}) });

async function measurePage(world: LinkWorld, client: Client, label: string, url: string): Promise<{ figures: Record<string, unknown>; valid: boolean; why: string[] }> {
  const { page, tabId } = await world.openShared(url);
  const elements = await page.evaluate(() => (globalThis as unknown as { document: { getElementsByTagName(t: string): { length: number } } }).document.getElementsByTagName('*').length);
  const why: string[] = [];
  const receiptsBefore = world.receipts({ limit: 500 }).filter((x) => x.faculty === 'semantic-read' && x.event === 'succeeded').length;
  const call = () => client.callTool({ name: 'page_snapshot', arguments: { tabId, maxBytes: MAX_BYTES } }, undefined, { timeout: 120_000 }) as Promise<CallToolResult>;

  // Warm-up: the content module injected, the document's tag handed out, JIT.
  const warm = parseAnswer(await call());
  await workerSnapshot(world, tabId);
  const pwWarm = await ariaSnapshot(page);

  const mcpMs: number[] = [];
  const workerMs: number[] = [];
  const linkMs: number[] = [];
  const pwMs: number[] = [];
  const trees = new Set<string>([warm.tree]);
  const pwTexts = new Set<string>([pwWarm]);
  const receiptIds: string[] = [];
  let last = warm;
  let lastPw = pwWarm;
  let anyTruncated = warm.header.truncated;
  let workerText = '';
  for (let i = 0; i < ROUNDS; i++) {
    const [ms, r] = await time(call);
    last = parseAnswer(r);
    mcpMs.push(ms);
    receiptIds.push(last.header.receiptId);
    trees.add(last.tree);
    anyTruncated ||= last.header.truncated || /^\[truncated/m.test(last.tree);
    const [lms, lr] = await time(() => world.request({ op: 'read', faculty: 'semantic-read', operation: 'snapshot', tabId, arguments: { maxBytes: MAX_BYTES } }, { timeoutMs: 120_000 }));
    if (!lr.ok) throw new Error(`link snapshot failed: ${lr.error.code}`);
    linkMs.push(lms);
    const wk = await workerSnapshot(world, tabId);
    workerMs.push(wk.ms);
    workerText = wk.text;
    anyTruncated ||= wk.truncated;
    const [pms, pw] = await time(() => ariaSnapshot(page));
    pwMs.push(pms);
    pwTexts.add(pw);
    lastPw = pw;
  }
  const receiptsAfter = world.receipts({ limit: 500 }).filter((x) => x.faculty === 'semantic-read' && x.event === 'succeeded').length;
  // Warm-up MCP call + ROUNDS: each a succeeded receipt (worker reads do not pass the console, so leave none).
  const receiptsOk = receiptsAfter - receiptsBefore === ROUNDS + 1;
  if (anyTruncated) why.push('our snapshot was truncated');
  if (trees.size !== 1) why.push(`our text differed between rounds (${trees.size} versions)`);
  if (workerText !== last.tree) why.push("the worker's text is not the MCP answer's tree");
  if (pwTexts.size !== 1) why.push(`Playwright's text differed between rounds (${pwTexts.size} versions)`);
  if (!receiptsOk) why.push(`receipts: ${receiptsAfter - receiptsBefore} succeeded for ${ROUNDS + 1} calls`);

  const cmp = compareSnapshots(last.tree, lastPw);
  if (cmp.ours.truncated) why.push('a truncation marker in our text');
  const oursBytes = Buffer.byteLength(last.tree);
  const pwBytes = Buffer.byteLength(lastPw);
  const m = stats(mcpMs);
  const wk = stats(workerMs);
  const p = stats(pwMs);
  // stringFloor: our names, values and text alone against Playwright's whole text (no format keeping them all can go below it).
  const ratios = { bytes: round4(oursBytes / pwBytes), stringFloor: round4(cmp.ours.stringBytes / pwBytes), timeMcpP50: round4(m.p50 / p.p50), timeWorkerP50: round4(wk.p50 / p.p50) };
  const recall = {
    namedInteractive: recallOut(cmp.namedInteractive),
    named: { ...recallOut(cmp.named), missesByRole: cmp.namedMissesByRole },
    text: recallOut(cmp.text),
    headings: recallOut(cmp.headings),
  };
  const recallMet = cmp.namedInteractive.recall >= TARGETS.namedInteractive && cmp.text.recall >= TARGETS.text && cmp.headings.recall >= TARGETS.headings;
  const met = {
    // A snapshot that is smaller because it lost text does not count (issue 10).
    bytes: ratios.bytes <= TARGETS.bytesRatio && recallMet,
    timeMcp: ratios.timeMcpP50 <= TARGETS.timeRatio,
    namedInteractive: cmp.namedInteractive.recall >= TARGETS.namedInteractive,
    text: cmp.text.recall >= TARGETS.text,
    headings: cmp.headings.recall >= TARGETS.headings,
    noTruncation: !anyTruncated && !cmp.ours.truncated,
  };
  if (DUMP) {
    const base = join(DUMP, label.replace(/[^a-z0-9]+/gi, '-'));
    writeFileSync(`${base}.ours.txt`, last.tree);
    writeFileSync(`${base}.playwright.yaml`, lastPw);
  }
  await page.close();
  return {
    figures: {
      page: label,
      path: new URL(url).pathname + new URL(url).search,
      elements,
      ours: { bytes: oursBytes, stringBytes: cmp.ours.stringBytes, lines: cmp.ours.lines, refs: last.header.refs, mcpAnswerBytes: last.answerBytes, mcpMs: m, linkMs: stats(linkMs), workerMs: wk, truncated: anyTruncated },
      playwright: { bytes: pwBytes, lines: cmp.playwright.lines, ms: p },
      ratios,
      recall,
      met,
    },
    valid: why.length === 0,
    why,
  };
}

export async function run(): Promise<Record<string, unknown>> {
  const loadAtStart = loadavg().map(round2);
  const world = await startLinkWorld({ countExecutions: false });
  const client = new Client({ name: 'snapshot-bench', version: '1.0.0' });
  try {
    await client.connect(
      new StreamableHTTPClientTransport(new URL(world.core.endpoint.url), { requestInit: { headers: { Authorization: `Bearer ${await createAgentToken(world.core.api)}` } } }),
    );
    const pages: Array<{ label: string; url: string }> = [
      ...SEEDS.map((s) => ({ label: `generated seed=${s}`, url: world.demo.at('demo', `/bench/?seed=${s}`) })),
      ...DEMO_IDS.map((id) => ({ label: `demo ${id}`, url: world.demo.url(id) })),
    ];
    const out: Record<string, unknown>[] = [];
    const invalid: Record<string, string[]> = {};
    for (const p of pages) {
      process.stderr.write(`bench: snapshot: ${p.label}\n`);
      const r = await measurePage(world, client, p.label, p.url);
      out.push(r.figures);
      if (!r.valid) invalid[p.label] = r.why;
    }
    const ua = await world.worker().then((w) => w.evaluate(() => (globalThis as unknown as { navigator: { userAgent: string } }).navigator.userAgent));
    return {
      chromium: /Chrom(?:e|ium)\/([\d.]+)/.exec(ua)?.[1] ?? ua,
      rounds: ROUNDS,
      maxBytes: MAX_BYTES,
      targets: TARGETS,
      loadAtStart,
      loadAtEnd: loadavg().map(round2),
      pages: out,
      validity: { valid: Object.keys(invalid).length === 0, ...(Object.keys(invalid).length ? { invalid } : {}) },
    };
  } finally {
    await client.close().catch(() => undefined);
    await world.close();
  }
}
