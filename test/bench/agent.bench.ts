/**
 * Agent benchmark (`npm run bench -- agent`): one `webmcp_invoke` of the demo
 * store's `set_cart_quantity`, from an MCP SDK client over Streamable HTTP,
 * through the broker, the link (bridge → native host → extension → content
 * script) and the page, back to the client. The "person" approves the moment
 * the approval is shown: a core event listener calls `decideApproval` at once.
 *
 * Figures (ms), beside a reference measured in the same run on the same page:
 * - `agentOutsideApproval`: p50/p95 of (total − the time between the approval
 *   being shown and the approve call), i.e. what the console adds end to end;
 * - `directExecuteTool`: `document.modelContext.executeTool` of the same tool
 *   with the same kind of arguments, timed inside the page (`inPage`) and as a
 *   Playwright `page.evaluate` round trip from Node (`viaEvaluate`);
 * - `addedP50` = agentOutsideApproval.p50 − directExecuteTool.inPage.p50, against
 *   the target of ≤ 15 ms;
 * - `phasesP50`: where the time goes, from the moments the core's receipt events
 *   reach a listener (performance.now()) and the extension's own `elapsedMs`;
 * - `parts`: the pieces timed on their own in the same run: one durable receipt
 *   append, the grant MAC, the invoke's link round trip, a bare link round trip
 *   (`list-tabs`), a link discovery, and the extension's invoke and discovery
 *   timed inside its service worker (no link); `pageGetTools` is the page's own
 *   getTools(), which every rediscovery before dispatch repeats.
 *
 * BENCH_AGENT_N (default 60) measured calls after BENCH_AGENT_WARMUP (default 8).
 * Needs the builds (see test/e2e/support/main-job-fixture.ts) and Chromium.
 * Never asserts timings: reading them is a person's job.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { Page } from '@playwright/test';
import { argumentsHash } from '../../src/shared/canonical';
import { nodeSha256 } from '../../src/main/core/digest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { headerJson, pairThroughApi, startMainJob, texts, untrustedBody, type MainJob } from '../e2e/support/main-job-fixture';

const N = Number(process.env.BENCH_AGENT_N ?? 60);
const WARMUP = Number(process.env.BENCH_AGENT_WARMUP ?? 8);
const TARGET_ADDED_P50_MS = 15;

interface Stats {
  n: number;
  p50: number;
  p95: number;
  mean: number;
  min: number;
  max: number;
}

function stats(xs: number[]): Stats {
  const s = [...xs].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))] as number;
  const r = (x: number) => Math.round(x * 100) / 100;
  return { n: s.length, p50: r(at(0.5)), p95: r(at(0.95)), mean: r(s.reduce((a, b) => a + b, 0) / s.length), min: r(s[0] as number), max: r(s[s.length - 1] as number) };
}

interface Sample {
  total: number;
  approvalWait: number;
  phases: Record<string, number>;
}

/** One agent call, approved at once; answers its timings. */
async function agentCall(job: MainJob, client: Client, tabId: number, name: string, descriptorHash: string, quantity: number): Promise<Sample> {
  const marks: Record<string, number> = {};
  let requestId: string | null = null;
  let shownAt = 0;
  let approveCalledAt = 0;
  const unsub = job.core.onEvent((e) => {
    const now = performance.now();
    if (e.kind === 'receipt' && e.receipt.faculty === 'webmcp-invoke') {
      if (e.receipt.event === 'requested' && requestId === null) requestId = e.receipt.requestId;
      if (e.receipt.requestId === requestId) marks[e.receipt.event] = now;
    } else if (e.kind === 'approvals' && shownAt === 0) {
      const a = e.approvals.find((x) => x.requestId === requestId);
      if (a) {
        shownAt = now;
        approveCalledAt = performance.now();
        void job.core.api.decideApproval({ requestId: a.requestId, decision: 'approve' });
      }
    }
  });
  const t0 = performance.now();
  let r: Awaited<ReturnType<Client['callTool']>>;
  try {
    r = await client.callTool({ name: 'webmcp_invoke', arguments: { tabId, name, descriptorHash, arguments: { productId: 'mug', quantity } } });
  } finally {
    unsub();
  }
  const t1 = performance.now();
  if (r.isError) throw new Error(`invoke failed: ${texts(r)[0]}`);
  const head = headerJson<{ elapsedMs?: number }>(texts(r)[0] as string, 'Invocation ');
  const m = (k: string) => marks[k] ?? NaN;
  const dispatchToSucceeded = m('succeeded') - m('dispatched');
  return {
    total: t1 - t0,
    approvalWait: approveCalledAt - shownAt,
    phases: {
      clientToRequested: m('requested') - t0,
      requestedToValidated: m('validated') - m('requested'),
      validatedToApprovalShown: m('approval-shown') - m('validated'),
      approvalShownToEvent: shownAt - m('approval-shown'),
      approveCallToApproved: m('approved') - approveCalledAt,
      approvedToDispatched: m('dispatched') - m('approved'),
      dispatchedToSucceeded: dispatchToSucceeded,
      extensionElapsed: head.elapsedMs ?? NaN,
      linkAndChecksOutsideExecute: dispatchToSucceeded - (head.elapsedMs ?? NaN),
      succeededToClient: t1 - m('succeeded'),
    },
  };
}

/** Time every call of `obj[key]` (sync or async) into `into`; answers the undo function. */
function timeMethod(obj: object, key: string, into: number[]): () => void {
  const o = obj as Record<string, unknown>;
  const original = (o[key] as (...a: unknown[]) => unknown).bind(obj);
  o[key] = (...a: unknown[]) => {
    const s = performance.now();
    const out = original(...a);
    if (out instanceof Promise) return out.finally(() => into.push(performance.now() - s));
    into.push(performance.now() - s);
    return out;
  };
  return () => delete o[key];
}

/** The same tool run by the page's own executeTool: timed in the page, and as a round trip from Node. */
async function directCall(page: Page, quantity: number): Promise<{ inPage: number; viaEvaluate: number; getTools: number }> {
  const t0 = performance.now();
  const inPage = await page.evaluate(async (q) => {
    const mc = (globalThis as unknown as {
      document: { modelContext: { getTools(): Promise<Array<{ name: string }>>; executeTool(t: unknown, a: unknown): Promise<string | null> } };
    }).document.modelContext;
    const g = performance.now();
    const tool = (await mc.getTools()).find((t) => t.name === 'set_cart_quantity');
    const s = performance.now();
    const out = await mc.executeTool(tool, { productId: 'mug', quantity: q });
    const d = performance.now() - s;
    if (!out || !(JSON.parse(out) as { ok?: boolean }).ok) throw new Error(`executeTool answered ${String(out)}`);
    return [d, s - g];
  }, quantity);
  return { inPage: inPage[0] as number, getTools: inPage[1] as number, viaEvaluate: performance.now() - t0 };
}

export async function run(): Promise<Record<string, unknown>> {
  const job = await startMainJob({ ui: false, countExecutions: false });
  try {
    await pairThroughApi(job);
    const page = await job.openPage(job.servers.url('store'));
    const tabId = await job.shareThroughApi(page);
    const client = await job.mcpClient('agent-bench');
    const d = await client.callTool({ name: 'webmcp_discover', arguments: { tabId } });
    const tool = (JSON.parse(untrustedBody(texts(d)[1] as string)) as { tools: Array<{ name: string; descriptorHash: string }> }).tools.find((t) => t.name === 'set_cart_quantity');
    if (!tool) throw new Error('set_cart_quantity not discovered');

    // Where the time goes: the ledger's durable appends, the grant MAC, the invoke's link round trip.
    const appendMs: number[] = [];
    const signMs: number[] = [];
    const linkInvokeMs: number[] = [];
    const undo = [timeMethod(job.core.ledger, 'append', appendMs), timeMethod(job.core.link, 'signGrant', signMs)];
    const linkRequest = job.core.link.request.bind(job.core.link);
    (job.core.link as unknown as { request: unknown }).request = async (req: { op: string }, o: unknown) => {
      const s = performance.now();
      const out = await linkRequest(req as never, o as never);
      if (req.op === 'invoke') linkInvokeMs.push(performance.now() - s);
      return out;
    };
    undo.push(() => delete (job.core.link as unknown as { request?: unknown }).request);

    const samples: Sample[] = [];
    const direct: Array<{ inPage: number; viaEvaluate: number; getTools: number }> = [];
    // Interleaved, so a busy moment of the machine falls on both sides alike.
    for (let i = 0; i < WARMUP + N; i++) {
      const q = 1 + (i % 40);
      const a = await agentCall(job, client, tabId, tool.name, tool.descriptorHash, q);
      const b = await directCall(page, 41 + (i % 40));
      if (i >= WARMUP) {
        samples.push(a);
        direct.push(b);
      }
    }
    for (const u of undo) u();
    // The bare link (bridge → native host → service worker and back) and a rediscovery, which every dispatch repeats.
    const listTabsMs: number[] = [];
    const discoverMs: number[] = [];
    for (let i = 0; i < N; i++) {
      let s = performance.now();
      await job.core.link.request({ op: 'list-tabs' }, { timeoutMs: 10_000 });
      listTabsMs.push(performance.now() - s);
      s = performance.now();
      await job.core.link.request({ op: 'discover', tabId }, { timeoutMs: 10_000 });
      discoverMs.push(performance.now() - s);
    }
    // The extension alone, timed inside its service worker (no link): an invoke with a grant the
    // console signed (fresh nonce each), and a discovery.
    const found = (JSON.parse(untrustedBody(texts(await client.callTool({ name: 'webmcp_discover', arguments: { tabId } }))[1] as string)) as {
      tools: Array<{ name: string; descriptorHash: string; frameId: number; documentId: string; origin: string }>;
    }).tools.find((t) => t.name === 'set_cart_quantity');
    if (!found) throw new Error('set_cart_quantity not discovered');
    const extInvokeMs: number[] = [];
    const extDiscoverMs: number[] = [];
    for (let i = 0; i < N; i++) {
      const args = { productId: 'mug', quantity: 1 + (i % 40) };
      const signed = await job.core.link.signGrant({
        requestId: randomUUID(),
        tabId,
        frameId: found.frameId,
        documentId: found.documentId,
        origin: found.origin,
        toolName: found.name,
        descriptorHash: found.descriptorHash,
        argumentsHash: await argumentsHash(args, nodeSha256),
        nonce: randomBytes(16).toString('hex'),
        expiresAt: Date.now() + 30_000,
      });
      if (!signed.ok) throw new Error(`signGrant: ${signed.error.message}`);
      const req = { op: 'invoke', tabId, frameId: found.frameId, documentId: found.documentId, toolName: found.name, descriptorHash: found.descriptorHash, arguments: args, grant: signed.value, timeoutMs: 10_000 };
      const [inv, disc] = await job.worker.evaluate(async ([r, t]) => {
        const ec = (globalThis as unknown as { echoConsole: { handleRequest(x: unknown): Promise<{ ok: boolean; value?: { outcome?: string } }> } }).echoConsole;
        let s = performance.now();
        const out = await ec.handleRequest(r);
        const a = performance.now() - s;
        if (!out.ok || out.value?.outcome !== 'succeeded') throw new Error(`in-worker invoke: ${JSON.stringify(out).slice(0, 300)}`);
        s = performance.now();
        await ec.handleRequest({ op: 'discover', tabId: t });
        return [a, performance.now() - s];
      }, [req, tabId] as const);
      extInvokeMs.push(inv);
      extDiscoverMs.push(disc);
    }
    const outside = stats(samples.map((s) => s.total - s.approvalWait));
    const inPage = stats(direct.map((x) => x.inPage));
    const phaseNames = Object.keys(samples[0]?.phases ?? {});
    const phases = Object.fromEntries(phaseNames.map((k) => [k, stats(samples.map((s) => s.phases[k] as number)).p50]));
    return {
      calls: N,
      unit: 'ms',
      agentOutsideApproval: outside,
      agentTotal: stats(samples.map((s) => s.total)),
      approvalWait: stats(samples.map((s) => s.approvalWait)),
      directExecuteTool: { inPage, viaEvaluate: stats(direct.map((x) => x.viaEvaluate)) },
      pageGetTools: stats(direct.map((x) => x.getTools)),
      addedP50: Math.round((outside.p50 - inPage.p50) * 100) / 100,
      addedP95: Math.round((outside.p95 - inPage.p95) * 100) / 100,
      targetAddedP50: TARGET_ADDED_P50_MS,
      phasesP50: phases,
      parts: {
        receiptAppend: stats(appendMs),
        receiptAppendsPerCall: Math.round((appendMs.length / (WARMUP + N)) * 10) / 10,
        signGrant: stats(signMs),
        linkInvokeRoundTrip: stats(linkInvokeMs),
        linkListTabsRoundTrip: stats(listTabsMs),
        linkDiscoverRoundTrip: stats(discoverMs),
        extensionInvokeInWorker: stats(extInvokeMs),
        extensionDiscoverInWorker: stats(extDiscoverMs),
      },
    };
  } finally {
    await job.close();
  }
}
