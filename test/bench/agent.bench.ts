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
 * - `floor`: the four echoes of floor/index.ts (no product code: MCP SDK echo,
 *   native-messaging echo through a host and Chrome, service worker ⇄ content
 *   script, in-page executeTool of a no-op tool), run in INTERLEAVED rounds with
 *   the agent calls (k agent calls, k of each echo, again);
 * - `ratioP50` / `ratioP95` = agentOutsideApproval / `floorSumP50`/`P95`: the
 *   three echoes plus `directExecuteTool.inPage`, the direct in-page executeTool
 *   of the same tool (each hop the call takes, once, and the tool's own run),
 *   against `targetRatio` 1.5; `ratioOverEchoTool*` divide by the four echoes
 *   instead (the no-op tool in place of the real one);
 * - `validity`: per agent call, the extension's counters (background/stats.ts:
 *   rediscovery before dispatch, grant MAC check, nonce check; read after every
 *   call, each must move on every call) and the ledger's
 *   durable receipts (all six of requested … succeeded for every request, an
 *   fsync completed before each of the call's three effects and nothing pending
 *   at its answer (Ledger.durabilityCounts), and `PRAGMA synchronous` at least
 *   NORMAL on the core's own connection); `valid: false`
 *   when any is short, since a fast call that skipped a check proves nothing;
 *   `validity.counterProbe`: three dispatches straight to the worker (broken MAC,
 *   good grant, replay) showing each counter moves at its own check only
 *   (validity.ts PROBE_EXPECTED); `valid` needs it too;
 * - `loadAtStart` / `loadAtEnd`: os.loadavg().
 *
 * BENCH_AGENT_N (default 200) measured calls, and as many of each echo, after
 * BENCH_AGENT_WARMUP (default 8), in rounds of BENCH_AGENT_ROUND (default 10).
 * Agent calls start at least MIN_CALL_SPACING_MS apart (an agent token's call rate).
 * Needs the builds (see test/e2e/support/main-job-fixture.ts) and Chromium.
 * Never asserts timings: reading them is a person's job.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { Page } from '@playwright/test';
import { argumentsHash, urlHash } from '../../src/shared/canonical';
import { nodeSha256 } from '../../src/main/core/digest';
import { AGENT_QUOTA_LIMITS } from '../../src/main/core/agent/quotas';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { headerJson, pairThroughApi, startMainJob, texts, untrustedBody, type MainJob } from '../e2e/support/main-job-fixture';
import { FLOOR_SERIES, loadAverage, startFloor, stats, type FloorSeries } from './floor';
import { judgeProbe, judgeValidity, type CallDurability, type CheckCounters, type ProbeObservation, type ProbeStep, type Validity } from './validity';
import type { DispatchRequest } from '../e2e/support/invocation';

const N = Number(process.env.BENCH_AGENT_N ?? 200);
const WARMUP = Number(process.env.BENCH_AGENT_WARMUP ?? 8);
const ROUND = Number(process.env.BENCH_AGENT_ROUND ?? 10);
const TARGET_ADDED_P50_MS = 15;
/** The least time between two agent calls' starts (ms): within the default 10 calls a second of one agent token (src/main/core/agent/quotas.ts). */
const MIN_CALL_SPACING_MS = 1000 / AGENT_QUOTA_LIMITS.callsPerSecond + 5;
/** Issue 7 item 10: the agent call outside the approval wait, at most 1.5 × the sum of its hops' floors. */
const TARGET_RATIO = 1.5;
/** The extension's check counters (extension/src/background/stats.ts), read in its service worker; null without `stats()`. */
async function checkCounters(job: MainJob): Promise<CheckCounters | null> {
  return job.worker.evaluate(() => {
    const ec = (globalThis as unknown as { echoConsole?: { stats?: () => CheckCounters } }).echoConsole;
    return typeof ec?.stats === 'function' ? ec.stats() : null;
  });
}

/** `PRAGMA synchronous` of the core ledger's own connection (a pragma is per connection); null when unreadable. */
function ledgerSynchronous(job: MainJob): number | null {
  try {
    const db = (job.core.ledger as unknown as { db?: { pragma(p: string, o: { simple: true }): unknown } }).db;
    const v = db?.pragma('synchronous', { simple: true });
    return typeof v === 'number' ? v : null;
  } catch {
    return null;
  }
}

interface Sample {
  requestId: string | null;
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
  // Marks at each append (the UI's receipt events are batched, so they would lag).
  const unsubAppend = job.core.ledger.onAppend((r) => {
    const now = performance.now();
    if (r.faculty !== 'webmcp-invoke') return;
    if (r.event === 'requested' && requestId === null) requestId = r.requestId;
    if (r.requestId === requestId) marks[r.event] = now;
  });
  const unsub = job.core.onEvent((e) => {
    const now = performance.now();
    if (e.kind === 'approvals' && shownAt === 0) {
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
    unsubAppend();
  }
  const t1 = performance.now();
  if (r.isError) throw new Error(`invoke failed: ${texts(r)[0]}`);
  const head = headerJson<{ elapsedMs?: number }>(texts(r)[0] as string, 'Invocation ');
  const m = (k: string) => marks[k] ?? NaN;
  const dispatchToSucceeded = m('succeeded') - m('dispatched');
  return {
    requestId,
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

/** The run's validity (validity.ts), from the counters read around and after each call and the core's ledger. */
function checkValidity(
  job: MainJob,
  requestIds: Array<string | null>,
  before: CheckCounters | null,
  after: CheckCounters | null,
  perCall: Array<CheckCounters | null>,
  durabilityPerCall: Array<CallDurability | null>,
): Validity {
  return judgeValidity({
    requestIds,
    before,
    after,
    perCall,
    durabilityPerCall,
    eventsOf: (id) => job.core.ledger.query({ requestId: id, limit: 50 }).receipts.map((r) => r.event),
    synchronous: ledgerSynchronous(job),
  });
}

/** One dispatch sent straight to the service worker's core, with the check counters' change across it (validity.ts, the counter probe). */
async function probeStep(job: MainJob, req: DispatchRequest): Promise<ProbeObservation> {
  return job.worker.evaluate(async (r) => {
    const ec = (globalThis as unknown as {
      echoConsole: { stats(): CheckCounters; handleRequest(x: unknown): Promise<{ ok: boolean; value?: { outcome?: string; refusal?: string } }> };
    }).echoConsole;
    const b = ec.stats();
    const out = await ec.handleRequest(r);
    const a = ec.stats();
    return {
      outcome: out.ok ? (out.value?.outcome ?? null) : null,
      ...(out.ok && out.value?.refusal ? { refusal: out.value.refusal } : {}),
      delta: { rediscoveries: a.rediscoveries - b.rediscoveries, macChecks: a.macChecks - b.macChecks, nonceChecks: a.nonceChecks - b.nonceChecks },
    };
  }, req);
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

/**
 * The same tool run by the page's own executeTool: timed in the page, and as a round trip from Node.
 * `form`: how this Chromium takes the arguments (the floor detects it: Floor.argumentForm).
 */
async function directCall(page: Page, quantity: number, form: 'object' | 'json-string'): Promise<{ inPage: number; viaEvaluate: number; getTools: number }> {
  const t0 = performance.now();
  const inPage = await page.evaluate(async ([q, f]) => {
    const mc = (globalThis as unknown as {
      document: { modelContext: { getTools(): Promise<Array<{ name: string }>>; executeTool(t: unknown, a: unknown): Promise<string | null> } };
    }).document.modelContext;
    const g = performance.now();
    const tool = (await mc.getTools()).find((t) => t.name === 'set_cart_quantity');
    const s = performance.now();
    const args = { productId: 'mug', quantity: q };
    const out = await mc.executeTool(tool, f === 'object' ? args : JSON.stringify(args));
    const d = performance.now() - s;
    if (!out || !(JSON.parse(out) as { ok?: boolean }).ok) throw new Error(`executeTool answered ${String(out)}`);
    return [d, s - g];
  }, [quantity, form] as const);
  return { inPage: inPage[0] as number, getTools: inPage[1] as number, viaEvaluate: performance.now() - t0 };
}

export async function run(): Promise<Record<string, unknown>> {
  const loadAtStart = loadAverage();
  const job = await startMainJob({ ui: false, countExecutions: false });
  const floor = await startFloor().catch(async (e: unknown) => {
    await job.close();
    throw e;
  });
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
      if (req.op === 'dispatch') linkInvokeMs.push(performance.now() - s);
      return out;
    };
    undo.push(() => delete (job.core.link as unknown as { request?: unknown }).request);

    const samples: Sample[] = [];
    const direct: Array<{ inPage: number; viaEvaluate: number; getTools: number }> = [];
    const floorSamples = Object.fromEntries(FLOOR_SERIES.map((s) => [s, [] as number[]])) as Record<FloorSeries, number[]>;
    const countersBefore = await checkCounters(job);
    const requestIds: Array<string | null> = [];
    const perCall: Array<CheckCounters | null> = [];
    const durabilityPerCall: Array<CallDurability | null> = [];
    // Interleaved rounds (k agent calls, then k of each floor echo), so a busy moment
    // of the machine falls on every series alike; the first WARMUP of each are dropped.
    let i = 0;
    let lastCallAt = -Infinity;
    for (let round = 0; i < WARMUP + N; round++) {
      const k = round === 0 ? WARMUP : Math.min(ROUND, WARMUP + N - i);
      for (let j = 0; j < k; j++, i++) {
        // Paced like an agent within its token's call rate (AGENT_QUOTA_LIMITS, 10 calls a second):
        // a faster machine otherwise drains the bucket and the console refuses calls at the door.
        // The wait is outside the call's timing.
        const wait = lastCallAt + MIN_CALL_SPACING_MS - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        lastCallAt = performance.now();
        const fsyncsBefore = job.core.ledger.durabilityCounts().fsyncs;
        const a = await agentCall(job, client, tabId, tool.name, tool.descriptorHash, 1 + (i % 40));
        const atAnswer = job.core.ledger.durabilityCounts();
        durabilityPerCall.push({ fsyncs: atAnswer.fsyncs - fsyncsBefore, pendingAtAnswer: atAnswer.commits - atAnswer.durableCommits });
        perCall.push(await checkCounters(job)); // outside the call's timing: proves this one call ran every check
        const b = await directCall(page, 41 + (i % 40), floor.argumentForm);
        requestIds.push(a.requestId);
        if (round > 0) {
          samples.push(a);
          direct.push(b);
        }
      }
      for (const s of FLOOR_SERIES) {
        const xs = await floor.run(s, k);
        if (round > 0) floorSamples[s].push(...xs);
      }
      if (round % 5 === 0) process.stderr.write(`bench: agent ${i}/${WARMUP + N}\n`);
    }
    const countersAfter = await checkCounters(job);
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
    // console signed (fresh nonce each), and a discovery; then the counter probe. A failure here is
    // reported, not fatal: the ratio does not depend on it (the validity does, through the probe).
    const extInvokeMs: number[] = [];
    const extDiscoverMs: number[] = [];
    let inWorkerError: string | null = null;
    const probeSeen: Partial<Record<ProbeStep, ProbeObservation>> = {};
    try {
      const found = (JSON.parse(untrustedBody(texts(await client.callTool({ name: 'webmcp_discover', arguments: { tabId } }))[1] as string)) as {
        tools: Array<{ name: string; descriptorHash: string; frameId: number; documentId: string; origin: string }>;
      }).tools.find((t) => t.name === 'set_cart_quantity');
      if (!found) throw new Error('set_cart_quantity not discovered');
      const signedDispatch = async (args: Record<string, unknown>): Promise<DispatchRequest> => {
        const signed = await job.core.link.signGrant({
          requestId: randomUUID(),
          tabId,
          frameId: found.frameId,
          documentId: found.documentId,
          origin: found.origin,
          faculty: 'webmcp-invoke',
          operation: 'invoke',
          urlHash: await urlHash(page.url(), page.url(), nodeSha256),
          subjectHash: found.descriptorHash,
          argumentsHash: await argumentsHash(args, nodeSha256),
          nonce: randomBytes(16).toString('hex'),
          expiresAt: Date.now() + 30_000,
        });
        if (!signed.ok) throw new Error(`signGrant: ${signed.error.message}`);
        // The link's v2 request (src/shared/protocol.ts): a `dispatch` of faculty webmcp-invoke, as the broker sends it.
        return {
          op: 'dispatch',
          faculty: 'webmcp-invoke',
          operation: 'invoke',
          target: { tabId, frameId: found.frameId, documentId: found.documentId },
          subject: { toolName: found.name, descriptorHash: found.descriptorHash },
          arguments: args,
          grant: signed.value,
          timeoutMs: 10_000,
        };
      };
      for (let i = 0; i < N; i++) {
        const req = await signedDispatch({ productId: 'mug', quantity: 1 + (i % 40) });
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
      // The counter probe (validity.ts PROBE_EXPECTED): each counter moves at its own check only.
      const good = await signedDispatch({ productId: 'mug', quantity: 3 });
      const badMac = { ...good, grant: { ...good.grant, mac: (good.grant.mac[0] === '0' ? '1' : '0') + good.grant.mac.slice(1) } };
      probeSeen['bad-mac'] = await probeStep(job, badMac);
      probeSeen.fresh = await probeStep(job, good);
      probeSeen.replay = await probeStep(job, good);
    } catch (e) {
      inWorkerError = e instanceof Error ? e.message : String(e);
    }
    const probe = judgeProbe(probeSeen);
    const outside = stats(samples.map((s) => s.total - s.approvalWait));
    const inPage = stats(direct.map((x) => x.inPage));
    const phaseNames = Object.keys(samples[0]?.phases ?? {});
    const phases = Object.fromEntries(phaseNames.map((k) => [k, stats(samples.map((s) => s.phases[k] as number)).p50]));
    const floorStats = Object.fromEntries(FLOOR_SERIES.map((s) => [s, stats(floorSamples[s])])) as Record<FloorSeries, ReturnType<typeof stats>>;
    const r2 = (x: number) => Math.round(x * 100) / 100;
    const floorSum = (q: 'p50' | 'p95') => r2(FLOOR_SERIES.reduce((a, s) => a + floorStats[s][q], 0));
    // The ratio's floor: the three echoes and the direct in-page executeTool of the SAME tool with
    // the same kind of arguments (what this call cannot do without). The no-op echo tool's
    // executeTool (floor.inPageExecuteTool) is reported too, with the ratio over it.
    const hopSum = (q: 'p50' | 'p95') => r2(FLOOR_SERIES.filter((s) => s !== 'inPageExecuteTool').reduce((a, s) => a + floorStats[s][q], 0) + inPage[q]);
    const calls = checkValidity(job, requestIds, countersBefore, countersAfter, perCall, durabilityPerCall);
    const validity = { ...calls, counterProbe: probe, valid: calls.valid && probe.ok };
    return {
      calls: N,
      unit: 'ms',
      roundSize: ROUND,
      loadAtStart,
      loadAtEnd: loadAverage(),
      valid: validity.valid,
      ratioP50: r2(outside.p50 / hopSum('p50')),
      ratioP95: r2(outside.p95 / hopSum('p95')),
      targetRatio: TARGET_RATIO,
      floorSumP50: hopSum('p50'),
      floorSumP95: hopSum('p95'),
      ratioOverEchoToolP50: r2(outside.p50 / floorSum('p50')),
      ratioOverEchoToolP95: r2(outside.p95 / floorSum('p95')),
      floor: { ...floorStats, sumP50: floorSum('p50'), sumP95: floorSum('p95'), inPageArgumentForm: floor.argumentForm },
      validity,
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
        extensionInvokeInWorker: inWorkerError === null ? stats(extInvokeMs) : { error: inWorkerError },
        extensionDiscoverInWorker: inWorkerError === null ? stats(extDiscoverMs) : { error: inWorkerError },
      },
    };
  } finally {
    await floor.close();
    await job.close();
  }
}
