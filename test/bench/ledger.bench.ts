/**
 * Receipt ledger benchmark (`npm run bench -- ledger`). Figures, each beside a
 * reference measured in the same run:
 *
 * - append rate of `Ledger.append` (validate, redact, chain, durable commit)
 *   vs raw better-sqlite3 INSERTs of the very same rows into an identical
 *   schema, one commit per row (target ratio ≥ 0.5); and the same with 1,000
 *   rows per commit (`appendBatch` vs a raw transaction), where the fsync no
 *   longer hides the ledger's CPU cost;
 * - time to verify the whole chain at 1,000,000 receipts (target ≤ 3 s), wall
 *   and CPU (all threads), single-threaded (`parallel: false`), with worker
 *   threads as `verify` uses them by default, and with `verifyAsync` (plus the
 *   longest event-loop stall meanwhile), beside a bare scan of the same rows with
 *   no hashing; in alternating rounds (BENCH_LEDGER_VERIFY_ROUNDS, default 3) so
 *   that load from elsewhere falls on all alike; medians, and every run;
 * - p50/p95 of one filtered page of 200 receipts at 1,000,000 (target p95 ≤ 10 ms),
 *   per filter, beside the unfiltered newest page;
 * - `append.signedOutcome`: what signing a checkpoint at every outcome costs a durable
 *   append (wall and CPU µs), beside the same appends without a key (issue 9 item 6).
 *
 * BENCH_LEDGER_ROWS overrides the 1,000,000 (for a quick run). BENCH_LEDGER_SUBJECT=1
 * gives every receipt the format-2 fields as the broker will write them
 * (`operation: 'invoke'`, and `subjectHash` = the descriptor hash once it is
 * known), so the partial indexes and the longer hash input are exercised;
 * without it the rows are format-1 shaped, the same as before format 2. The database lives
 * in the OS temp folder and is removed afterwards.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { Ledger, LedgerSigningKey, type VerifyOptions, type VerifyStats } from '../../src/main/core/ledger/index';
import { coreCount } from '../../src/main/core/ledger/parallel';
import { prepareSchema } from '../../src/main/core/ledger/schema';
import { ROW_COLUMNS_SQL, type RawRow } from '../../src/main/core/ledger/chain';
import type { OutcomeEvent, ReceiptEvent, ReceiptInput, ReceiptQuery } from '../../src/shared/receipt';

const ROWS = Number(process.env.BENCH_LEDGER_ROWS ?? 1_000_000);
const VERIFY_ROUNDS = Number(process.env.BENCH_LEDGER_VERIFY_ROUNDS ?? 3);
const PAGE = 200;
const SUBJECT = process.env.BENCH_LEDGER_SUBJECT === '1';

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

const ORIGINS = Array.from({ length: 50 }, (_, i) => `https://site-${i}.example`);
const TOOLS = Array.from({ length: 30 }, (_, i) => `tool_${i}`);
// One request's lifecycle, then an occasional console event.
const LIFECYCLE: ReceiptEvent[] = ['requested', 'validated', 'approval-shown', 'approved', 'dispatched', 'succeeded'];
const ENDINGS: ReceiptEvent[] = ['succeeded', 'succeeded', 'succeeded', 'failed', 'denied', 'outcome-unknown', 'expired'];

/** A deterministic, realistic stream of receipt inputs: six receipts per request. */
function inputs(seed: number): (i: number) => ReceiptInput {
  const rand = rng(seed);
  let origin = ORIGINS[0] as string;
  let tool = TOOLS[0] as string;
  let ending: ReceiptEvent = 'succeeded';
  return (i) => {
    const step = i % 6;
    if (step === 0) {
      origin = ORIGINS[Math.floor(rand() * ORIGINS.length)] as string;
      tool = TOOLS[Math.floor(rand() * TOOLS.length)] as string;
      ending = ENDINGS[Math.floor(rand() * ENDINGS.length)] as ReceiptEvent;
    }
    const event = step === 5 ? ending : (LIFECYCLE[step] as ReceiptEvent);
    const invoke = step >= 3;
    return {
      requestId: `req-${Math.floor(i / 6)}`,
      event,
      faculty: 'webmcp-invoke',
      origin,
      tabId: 100 + (i % 7),
      frameId: 0,
      documentId: `doc-${Math.floor(i / 60)}`,
      toolName: tool,
      descriptorHash: invoke ? 'ab'.repeat(32) : null,
      argumentsHash: invoke ? 'cd'.repeat(32) : null,
      ...(SUBJECT ? { operation: 'invoke', subjectHash: invoke ? 'ab'.repeat(32) : null } : {}),
      actor: step === 3 ? { kind: 'person' } : { kind: 'agent', name: 'claude-code', version: '2.0.1' },
      detail: { step, ms: i % 1000 },
    };
  };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

const round = (n: number, d = 2): number => Number(n.toFixed(d));

/** Run `fn` `runs` times after `warm` warm-ups; return p50/p95/max in ms. */
function timeIt(runs: number, warm: number, fn: (i: number) => void): { p50: number; p95: number; max: number } {
  for (let i = 0; i < warm; i++) fn(i);
  const t: number[] = [];
  for (let i = 0; i < runs; i++) {
    const s = performance.now();
    fn(i);
    t.push(performance.now() - s);
  }
  t.sort((a, b) => a - b);
  return { p50: round(percentile(t, 50), 3), p95: round(percentile(t, 95), 3), max: round(t[t.length - 1] as number, 3) };
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? (s[(s.length - 1) / 2] as number) : ((s[s.length / 2 - 1] as number) + (s[s.length / 2] as number)) / 2;
};

interface Timed {
  ms: number;
  cpuMs: number;
}

/** Wall and CPU time (every thread of the process) of `fn`. */
async function timed(fn: () => unknown): Promise<Timed> {
  const cpu0 = process.cpuUsage();
  const s = performance.now();
  await fn();
  const ms = performance.now() - s;
  const cpu = process.cpuUsage(cpu0);
  return { ms, cpuMs: (cpu.user + cpu.system) / 1000 };
}

/** Median wall and CPU over the runs, and each run's wall time. */
function summary(runs: Timed[]): { ms: number; cpuMs: number; runsMs: number[]; runsCpuMs: number[] } {
  return {
    ms: Math.round(median(runs.map((r) => r.ms))),
    cpuMs: Math.round(median(runs.map((r) => r.cpuMs))),
    runsMs: runs.map((r) => Math.round(r.ms)),
    runsCpuMs: runs.map((r) => Math.round(r.cpuMs)),
  };
}

/** A raw better-sqlite3 database with the ledger's exact schema, pragmas and triggers. */
function rawTwin(file: string): { db: Database.Database; insert: Database.Statement } {
  const db = new Database(file);
  prepareSchema(db, false);
  const insert = db.prepare(`INSERT INTO receipts (${ROW_COLUMNS_SQL}) VALUES (${ROW_COLUMNS_SQL.replace(/\w+/g, '?')})`);
  return { db, insert };
}

function rowsOf(ledgerFile: string, fromSeq: number, toSeq: number): RawRow[] {
  const db = new Database(ledgerFile, { readonly: true });
  const rows = db.prepare(`SELECT ${ROW_COLUMNS_SQL} FROM receipts WHERE seq BETWEEN ? AND ? ORDER BY seq`).raw().all(fromSeq, toSeq) as RawRow[];
  db.close();
  return rows;
}

/**
 * Append rate, ledger vs raw, alternating rounds so that load from elsewhere on
 * the machine falls on both alike. `perCommit` rows per transaction.
 */
function appendRates(dir: string, label: string, total: number, perCommit: number): Record<string, number> {
  const ledgerFile = path.join(dir, `${label}-ledger.db`);
  const ledger = new Ledger(ledgerFile);
  const raw = rawTwin(path.join(dir, `${label}-raw.db`));
  const rawBatch = raw.db.transaction((rows: RawRow[]) => {
    for (const r of rows) raw.insert.run(r);
  });
  const gen = inputs(1);
  let ledgerMs = 0;
  let rawMs = 0;
  let done = 0;
  const roundSize = Math.max(perCommit, Math.floor(total / 5));
  while (done < total) {
    const n = Math.min(roundSize, total - done);
    const batch = Array.from({ length: n }, (_, k) => gen(done + k));
    let s = performance.now();
    if (perCommit === 1) for (const input of batch) ledger.append(input);
    else for (let k = 0; k < n; k += perCommit) ledger.appendBatch(batch.slice(k, k + perCommit));
    ledgerMs += performance.now() - s;
    const rows = rowsOf(ledgerFile, done + 1, done + n);
    s = performance.now();
    if (perCommit === 1) for (const r of rows) raw.insert.run(r);
    else for (let k = 0; k < n; k += perCommit) rawBatch(rows.slice(k, k + perCommit));
    rawMs += performance.now() - s;
    done += n;
  }
  ledger.close();
  raw.db.close();
  const ledgerPerSec = (total / ledgerMs) * 1000;
  const rawPerSec = (total / rawMs) * 1000;
  return { rows: total, rowsPerCommit: perCommit, ledgerPerSec: Math.round(ledgerPerSec), rawPerSec: Math.round(rawPerSec), ratio: round(ledgerPerSec / rawPerSec, 3) };
}

/**
 * What signing costs on the agent's path (issue 9 item 6, docs/ledger.md "Signed
 * checkpoints"): durable appends of outcome receipts (each one signs a checkpoint in its
 * commit) into a ledger with a signing key, against the same appends without one,
 * alternating one by one so load falls on both alike. Wall and CPU time per append (µs).
 */
export function signedOutcomeCost(dir: string, n = 400): Record<string, unknown> {
  const plain = new Ledger(path.join(dir, 'outcome-plain.db'));
  const signed = new Ledger(path.join(dir, 'outcome-signed.db'), { signingKey: LedgerSigningKey.generate(), signingKeyCreated: true });
  const input: ReceiptInput = { requestId: 'r', event: 'succeeded', faculty: 'webmcp-invoke', actor: { kind: 'agent', name: 'bench' } };
  const t = { plain: [] as number[], signed: [] as number[] };
  const c = { plain: [] as number[], signed: [] as number[] };
  for (let i = 0; i < n + 20; i++) {
    for (const [name, l] of [['plain', plain], ['signed', signed]] as const) {
      const c0 = process.cpuUsage();
      const s = performance.now();
      l.append(input);
      const wall = (performance.now() - s) * 1000;
      const cpu = process.cpuUsage(c0);
      if (i >= 20) {
        t[name].push(wall);
        c[name].push(cpu.user + cpu.system);
      }
    }
  }
  const checkpoints = signed.latestSignedCheckpoint()?.count ?? 0;
  plain.close();
  signed.close();
  const p = (xs: number[], q: number) => Math.round(percentile([...xs].sort((a, b) => a - b), q));
  return {
    appends: n,
    checkpointsSigned: checkpoints,
    wallUs: { plain: { p50: p(t.plain, 50), p95: p(t.plain, 95) }, signed: { p50: p(t.signed, 50), p95: p(t.signed, 95) } },
    cpuUs: { plain: { p50: p(c.plain, 50) }, signed: { p50: p(c.signed, 50) } },
  };
}

export async function run(): Promise<Record<string, unknown>> {
  const dir = mkdtempSync(path.join(tmpdir(), 'ledger-bench-'));
  try {
    const log = (m: string): boolean => process.stderr.write(`  ledger: ${m}\n`);
    log('append rates');
    const appendDurable = appendRates(dir, 'durable', 1500, 1);
    const appendBatched = appendRates(dir, 'batched', 30_000, 1000);
    log('signed outcome appends');
    const signedOutcome = signedOutcomeCost(dir);

    log(`building ${ROWS} receipts`);
    const file = path.join(dir, 'big.db');
    let t = Date.UTC(2026, 0, 1);
    const ledger = new Ledger(file, { now: () => (t += 2591) }); // about 30 days per million receipts
    const gen = inputs(2);
    let s = performance.now();
    const BATCH = 10_000;
    for (let i = 0; i < ROWS; i += BATCH) ledger.appendBatch(Array.from({ length: Math.min(BATCH, ROWS - i) }, (_, k) => gen(i + k)));
    const buildSec = (performance.now() - s) / 1000;
    const firstTime = Date.UTC(2026, 0, 1);
    const lastTime = t;

    log('verify');
    const db = new Database(file, { readonly: true });
    const scanStmt = db.prepare(`SELECT ${ROW_COLUMNS_SQL} FROM receipts ORDER BY seq`).raw();
    const loadBefore = loadavg().map((x) => round(x, 1));
    const runs: Record<'scan' | 'single' | 'parallel' | 'async', Timed[]> = { scan: [], single: [], parallel: [], async: [] };
    let parallelStats: VerifyStats | undefined;
    let asyncStats: VerifyStats | undefined;
    const gaps: number[] = [];
    const check = (report: { ok: boolean; count: number }, what: string): void => {
      if (!report.ok || report.count !== ROWS) throw new Error(`${what} failed: ${JSON.stringify(report)}`);
    };
    for (let round = 0; round < VERIFY_ROUNDS; round++) {
      // Reference: the same rows read the same way, without hashing.
      runs.scan.push(
        await timed(() => {
          let scanned = 0;
          for (const _row of scanStmt.iterate()) scanned++;
          if (scanned !== ROWS) throw new Error(`scan saw ${scanned} rows`);
        }),
      );
      runs.single.push(await timed(() => check(ledger.verify({ parallel: false }), 'verify (single thread)')));
      const opts: VerifyOptions = { onStats: (st) => (parallelStats = st) };
      runs.parallel.push(await timed(() => check(ledger.verify(opts), 'verify (parallel)')));
      // verifyAsync: the event loop must keep turning; record its longest stall.
      let last = performance.now();
      let maxGap = 0;
      const tick = setInterval(() => {
        const now = performance.now();
        maxGap = Math.max(maxGap, now - last);
        last = now;
      }, 5);
      runs.async.push(await timed(async () => check(await ledger.verifyAsync({ onStats: (st) => (asyncStats = st) }), 'verifyAsync')));
      clearInterval(tick);
      gaps.push(Math.round(Math.max(maxGap, performance.now() - last)));
    }
    const single = summary(runs.single);
    const parallel = summary(runs.parallel);

    log('queries');
    const rand = rng(3);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)] as T;
    const day = 86_400_000;
    const randomWindow = (): { from: number; to: number } => {
      const from = firstTime + Math.floor(rand() * (lastTime - firstTime - day));
      return { from, to: from + day };
    };
    const deepCursor = (q: ReceiptQuery): string | undefined => {
      let c: string | undefined;
      for (let i = 0; i < 10; i++) c = ledger.query({ ...q, limit: PAGE, cursor: c }).nextCursor ?? undefined;
      return c;
    };
    const filters: Record<string, () => ReceiptQuery> = {
      origin: () => ({ origin: pick(ORIGINS) }),
      toolName: () => ({ toolName: pick(TOOLS) }),
      event: () => ({ event: pick<ReceiptEvent>(['failed', 'approved', 'denied']) }),
      outcome: () => ({ outcome: pick<OutcomeEvent>(['denied', 'expired', 'outcome-unknown']) }),
      requestId: () => ({ requestId: `req-${Math.floor(rand() * (ROWS / 6))}` }),
      timeRange1Day: () => randomWindow(),
      originAndTimeRange: () => ({ origin: pick(ORIGINS), ...randomWindow() }),
      // Format 2's partial indexes (only with BENCH_LEDGER_SUBJECT=1 do the rows carry the fields).
      ...(SUBJECT
        ? { operationAndTimeRange: () => ({ operation: 'invoke', ...randomWindow() }), subjectHash: () => ({ subjectHash: 'ab'.repeat(32) }) }
        : {}),
    };
    const pageCounts: number[] = [];
    const queries: Record<string, unknown> = {};
    const all: number[] = [];
    for (const [name, make] of Object.entries(filters)) {
      const qs = Array.from({ length: 60 }, make);
      const times: number[] = [];
      const r = timeIt(50, 10, (i) => {
        const st = performance.now();
        pageCounts.push(ledger.query({ ...(qs[i % qs.length] as ReceiptQuery), limit: PAGE }).receipts.length);
        times.push(performance.now() - st);
      });
      all.push(...times.slice(10));
      queries[name] = r;
    }
    // Deep paging: the 11th page of an origin filter, from its cursor.
    const deep = Array.from({ length: 20 }, () => {
      const q = { origin: pick(ORIGINS) };
      return { ...q, cursor: deepCursor(q) };
    });
    queries.originPage11 = timeIt(40, 5, (i) => ledger.query({ ...(deep[i % deep.length] as ReceiptQuery), limit: PAGE }));
    // Two equality filters: one index, the other checked row by row (no composite index).
    queries.originAndEvent = timeIt(50, 10, () => ledger.query({ origin: pick(ORIGINS), event: 'failed', limit: PAGE }));
    const reference = timeIt(50, 10, () => ledger.query({ limit: PAGE }));
    all.sort((a, b) => a - b);
    const sizeMb = (statSync(file).size + (statSync(file + '-wal', { throwIfNoEntry: false })?.size ?? 0)) / 2 ** 20;
    db.close();
    ledger.close();
    return {
      append: { durable: appendDurable, batched: appendBatched, signedOutcome },
      build: { rows: ROWS, seconds: round(buildSec, 1), rowsPerSec: Math.round(ROWS / buildSec), fileMb: round(sizeMb, 0) },
      verify: {
        rows: ROWS,
        targetMs: 3000,
        cores: coreCount(),
        loadAverage: { before: loadBefore, after: loadavg().map((x) => round(x, 1)) },
        rounds: VERIFY_ROUNDS,
        parallel: { ...parallel, threads: (parallelStats?.workers ?? 0) + 1, stats: parallelStats },
        singleThread: single,
        speedup: round(single.ms / parallel.ms),
        async: { ...summary(runs.async), eventLoopMaxStallMs: gaps, stats: asyncStats },
        referenceScanOnly: summary(runs.scan),
      },
      query: {
        pageSize: PAGE,
        singleFilterP95Ms: round(percentile(all, 95), 3),
        targetP95Ms: 10,
        minRowsPerPage: Math.min(...pageCounts.filter((n) => n > 0)),
        referenceUnfilteredNewestPage: reference,
        byFilter: queries,
      },
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
