/**
 * WebMCP over the real link (`npm run bench -- webmcp`; issue 3, item 10).
 *
 * One world from test/e2e/support/link-fixture.ts: the console core in this
 * process, Chrome native messaging to the real native host, the built
 * extension, and the hostile many-tools page with 64 tools (`?count=64`, the
 * per-frame limit) shared through the core. Figures, each beside a direct call
 * on the same page in the same run:
 *
 * - discovery round trip: `core.link.request({op:'discover'})` (console → Bridge
 *   → socket → native host → Chrome → service worker → content script →
 *   getTools → back, all 64 tools validated and hashed) vs Playwright's
 *   `page.evaluate(() => document.modelContext.getTools())` returning the same
 *   fields;
 * - invocation round trip with a grant already issued: `request({op:'dispatch'})` (faculty `webmcp-invoke`)
 *   (MAC check, nonce record, rediscovery in the document, dispatch,
 *   executeTool, bounded result) vs `page.evaluate` running getTools + executeTool
 *   (the least a caller outside the page needs: the tool handle comes from getTools).
 *   Grants are signed in advance, outside the timed section (one nonce each).
 *
 * Reported per figure: p50 and p95 (ms) of each, and the added overhead
 * (link − direct). Also, for reading them: `inPageOnly` (the same browser calls
 * timed by the page's own clock, without Playwright's round trip) and
 * `linkRoundTripNoPageMs` (a `list-tabs` request: the link alone, no page). The
 * direct discovery returns 64 schemas through Playwright's protocol, which costs
 * more than the link's framing: there the link can come out ahead. Target: ≤ 5 ms added at p50. Timings are wall time in this
 * process (performance.now), N rounds after a warm-up, the two kinds
 * interleaved so that load on the machine affects both alike.
 * BENCH_WEBMCP_ROUNDS overrides N (default 200).
 *
 * Needs the builds: `npm run build:extension && npm run build:tools`.
 */
import type { Page } from '@playwright/test';
import { startLinkWorld, type InvokeRequest, type LinkWorld } from '../e2e/support/link-fixture';
import type { ToolDescriptor } from '../../src/shared/types';

const ROUNDS = Number(process.env.BENCH_WEBMCP_ROUNDS ?? 200);
const WARMUP = 20;
const TOOLS = 64;
const TOOL = 'tool_0007';

function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i] as number;
}
const round2 = (x: number) => Math.round(x * 100) / 100;

function stats(samples: number[]): { p50: number; p95: number; mean: number; n: number } {
  const s = [...samples].sort((a, b) => a - b);
  return { p50: round2(quantile(s, 0.5)), p95: round2(quantile(s, 0.95)), mean: round2(s.reduce((a, b) => a + b, 0) / s.length), n: s.length };
}

function compare(link: number[], direct: number[]) {
  const l = stats(link);
  const d = stats(direct);
  return { link: l, direct: d, addedP50Ms: round2(l.p50 - d.p50), addedP95Ms: round2(l.p95 - d.p95) };
}

async function time<T>(fn: () => Promise<T>): Promise<[number, T]> {
  const t0 = performance.now();
  const v = await fn();
  return [performance.now() - t0, v];
}

/** getTools from outside the page, returning what discovery returns (the handles' `window` cannot cross). */
const directGetTools = (page: Page) =>
  page.evaluate(async () => {
    const mc = (globalThis as unknown as { document: { modelContext: { getTools(): Promise<Record<string, unknown>[]> } } }).document.modelContext;
    return (await mc.getTools()).map((t) => ({ name: t.name, title: t.title, description: t.description, inputSchema: t.inputSchema, annotations: t.annotations, origin: t.origin }));
  });

/** executeTool from outside the page: look the tool up, run it. */
const directExecute = (page: Page, name: string, args: Record<string, unknown>) =>
  page.evaluate(
    async ([n, a]) => {
      const mc = (globalThis as unknown as { document: { modelContext: { getTools(): Promise<{ name: string }[]>; executeTool(t: unknown, a: unknown): Promise<unknown> } } }).document.modelContext;
      const t = (await mc.getTools()).find((x) => x.name === n);
      return mc.executeTool(t, a);
    },
    [name, args] as const,
  );

/** In-page cost only (no Playwright round trip): getTools timed with the page's clock. */
const inPageGetToolsMs = (page: Page) =>
  page.evaluate(async () => {
    const mc = (globalThis as unknown as { document: { modelContext: { getTools(): Promise<unknown[]> } } }).document.modelContext;
    const t0 = performance.now();
    await mc.getTools();
    return performance.now() - t0;
  });

/** In-page cost only (no Playwright round trip): getTools + executeTool timed with the page's clock. */
const inPageExecuteMs = (page: Page, name: string) =>
  page.evaluate(async (n) => {
    const mc = (globalThis as unknown as { document: { modelContext: { getTools(): Promise<{ name: string }[]>; executeTool(t: unknown, a: unknown): Promise<unknown> } } }).document.modelContext;
    const t0 = performance.now();
    const t = (await mc.getTools()).find((x) => x.name === n);
    await mc.executeTool(t, { value: 1 });
    return performance.now() - t0;
  }, name);

async function measure(world: LinkWorld, page: Page, tabId: number): Promise<Record<string, unknown>> {
  const d = await world.discover(tabId);
  if (d.tools.length !== TOOLS) throw new Error(`expected ${TOOLS} tools, discovery listed ${d.tools.length}`);
  const tool = d.tools.find((t) => t.name === TOOL) as ToolDescriptor;
  const args = { value: 1 };
  const expected = JSON.stringify({ tool: TOOL, value: 1 });

  // Warm-up: JIT, content script injected, connections hot.
  for (let i = 0; i < WARMUP; i++) {
    await world.discover(tabId);
    await directGetTools(page);
    const r = await world.invoke(await world.invokeRequest(tool, args));
    if (!r.ok || r.value.outcome !== 'succeeded') throw new Error(`warm-up invoke failed: ${JSON.stringify(r)}`);
    await directExecute(page, TOOL, args);
  }

  // The link alone (console → host → Chrome → worker → back, no page): list-tabs reads one storage key.
  const transport: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const [ms, r] = await time(() => world.request({ op: 'list-tabs' }));
    if (!r.ok) throw new Error(`list-tabs failed: ${r.error.code}`);
    transport.push(ms);
  }

  const discLink: number[] = [];
  const discDirect: number[] = [];
  const discInPage: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const [ms, r] = await time(() => world.request({ op: 'discover', tabId }));
    if (!r.ok || r.value.tools.length !== TOOLS) throw new Error(`discover failed: ${JSON.stringify(r).slice(0, 300)}`);
    discLink.push(ms);
    const [dms, tools] = await time(() => directGetTools(page));
    if (tools.length !== TOOLS) throw new Error('getTools listed another number of tools');
    discDirect.push(dms);
    discInPage.push(await inPageGetToolsMs(page));
  }

  const invLink: number[] = [];
  const invDirect: number[] = [];
  const inPage: number[] = [];
  const BATCH = 50; // grants live LIMITS.grantTtlMs (30 s): sign a batch just before it is used, never inside the timing
  for (let done = 0; done < ROUNDS; done += BATCH) {
    const grants: InvokeRequest[] = [];
    for (let i = 0; i < Math.min(BATCH, ROUNDS - done); i++) grants.push(await world.invokeRequest(tool, args));
    for (const req of grants) {
      const [ms, r] = await time(() => world.invoke(req));
      if (!r.ok || r.value.outcome !== 'succeeded' || r.value.result !== expected) throw new Error(`invoke failed: ${JSON.stringify(r).slice(0, 300)}`);
      invLink.push(ms);
      const [dms, out] = await time(() => directExecute(page, TOOL, args));
      if (out !== expected) throw new Error(`direct executeTool answered ${String(out)}`);
      invDirect.push(dms);
      inPage.push(await inPageExecuteMs(page, TOOL));
    }
  }

  return {
    page: `many-tools ?count=${TOOLS}`,
    rounds: ROUNDS,
    linkRoundTripNoPageMs: stats(transport),
    discovery: { ...compare(discLink, discDirect), inPageOnly: stats(discInPage) },
    invocation: { ...compare(invLink, invDirect), inPageOnly: stats(inPage) },
    targetAddedP50Ms: 5,
  };
}

export async function run(): Promise<Record<string, unknown>> {
  const world = await startLinkWorld({ countExecutions: false });
  try {
    const { page, tabId } = await world.openShared(world.demo.at('hostile', `/hostile/many-tools.html?count=${TOOLS}`));
    return await measure(world, page, tabId);
  } finally {
    await world.close();
  }
}
