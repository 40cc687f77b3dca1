/**
 * The ledger's chain check (`Ledger.verify` / `verifyAsync` in index.ts): the
 * walk that recomputes every link oldest first, the fast check SQLite feeds it,
 * `checkRow` (the authority on a row), and the joining of worker threads'
 * ranges (parallel.ts). It only reads; the Ledger owns the connection.
 * See docs/ledger.md.
 */
import { statSync } from 'node:fs';
import path from 'node:path';
import type Database from 'better-sqlite3';
import type { VerifyReport } from '../../../shared/receipt';
import { nativeBindingPath, type OpenDatabaseOptions } from './sqlite';
import { VerifyPool, coreCount, verifyWorkerRuntime, type RangeResult } from './parallel';
import { GENESIS_PREV_HASH, canonicalReceiptText, chainHash, payloadProblem, sha256Hex, type RawRow } from './chain';

/** Options of `Ledger.verify` and `Ledger.verifyAsync`. */
export interface VerifyOptions {
  /**
   * Called with the count verified so far (the intact prefix): after each chunk
   * of VERIFY_CHUNK receipts, or with worker threads after each range.
   */
  onProgress?: (count: number) => void;
  /** Worker threads (see ParallelVerifyOptions); `false` keeps the check on the calling thread. */
  parallel?: ParallelVerifyOptions | false;
  /** Called once at the end with how the work was shared (benchmarks and tests). */
  onStats?: (stats: VerifyStats) => void;
}

/**
 * How `verify` uses worker threads. Each worker opens the file read-only and
 * checks whole ranges of `rangeRows` receipts; the calling thread joins the
 * ranges in order (parallel.ts).
 */
export interface ParallelVerifyOptions {
  /** Use workers only for a ledger of at least this many receipts. Default PARALLEL_VERIFY_MIN_ROWS. */
  minRows?: number;
  /** Receipts per range. Default PARALLEL_VERIFY_RANGE_ROWS. */
  rangeRows?: number;
  /**
   * Threads checking ranges, the calling thread included in `verify` (which
   * blocks anyway, so it takes ranges too and starts one worker fewer);
   * `verifyAsync` starts this many workers and keeps its own thread free.
   * Default: the machine's cores, at most MAX_VERIFY_THREADS.
   */
  threads?: number;
}

/** What one verification did (VerifyOptions.onStats). */
export interface VerifyStats {
  /** Worker threads started (0: the calling thread alone). */
  workers: number;
  /** Ranges in the plan (0 without workers). */
  ranges: number;
  /** Ranges whose fast check a worker did / the calling thread did. */
  rangesByWorkers: number;
  rangesByCaller: number;
  /** Worker errors seen (the affected ranges were walked by the calling thread). */
  workerErrors: string[];
}

/** Ledgers from this many receipts are verified by worker threads (below, starting them costs more than it saves). */
export const PARALLEL_VERIFY_MIN_ROWS = 50_000;
/** Receipts per range handed to a worker. */
export const PARALLEL_VERIFY_RANGE_ROWS = 25_000;
/** Most threads one verification uses. */
export const MAX_VERIFY_THREADS = 8;
const HEX64 = /^[0-9a-f]{64}$/;

/** Options of `Ledger.verifyAsync`. */
export interface VerifyAsyncOptions extends VerifyOptions {
  /** Abort between chunks; the promise then rejects with the signal's reason. */
  signal?: AbortSignal;
}

/** Receipts verified per chunk (one query, and for verifyAsync one turn of the event loop). */
export const VERIFY_CHUNK = 10_000;

/** Walk state of one verification: the intact prefix so far is receipts 1..count, the last with hash `prev`. */
interface VerifyWalk {
  /** Highest seq to verify (the head when the walk started). */
  end: number;
  /** sqlite_sequence's highest seq ever issued. */
  highWater: number;
  /** seq of the next row, count + 1. */
  expected: number;
  prev: string;
  count: number;
}

/** Outcome of one walk step: the first broken link, or whether rows up to the step's end remain. */
type WalkStep = VerifyReport | 'more' | 'done';

/**
 * Verify's scan, params (after seq, up to seq, limit). One string per row:
 * "<seq>:<1 if actor and detail are JSON and both hashes 64 long>:<hash>:<prevHash || canonical>".
 * One string, not an array of columns, because per-row JS objects are most of verify's cost.
 * The worker threads of a parallel verify run this same statement (parallel.ts).
 */
export const scanSql = (hashInput: string, payloadCheck = '1'): string =>
  `SELECT concat(seq, ':', json_valid(actor) AND json_valid(detail) AND length(hash) = 64 AND length(prev_hash) = 64 AND ${payloadCheck}, ':', hash, ':', ${hashInput}) ` +
  'FROM receipts WHERE seq > ? AND seq <= ? ORDER BY seq LIMIT ?';

/** What the chain check reads through: the Ledger's connection and what it knows of the file. */
export interface VerifySource {
  /** The open database; throws LedgerStateError once the ledger is closed (called before each chunk). */
  open: () => Database.Database;
  /** The Ledger's statement for the row at seq (raw, ROW_COLUMNS order). */
  bySeq: Database.Statement;
  /** The scan statement's SQL (`scanSql` of the file's hash input). */
  scanSql: string;
  /** Absolute path and `dev:ino` of the file opened, for the worker threads (null: none can be used). */
  identity: { path: string; id: string } | null;
  /** How the Ledger opened the file; workers open it the same way. */
  openOpts: Pick<OpenDatabaseOptions, 'electronAbiDir' | 'timeoutMs'>;
}

/** The chain check of one Ledger (see `Ledger.verify`). */
export class ChainVerifier {
  private readonly open: () => Database.Database;
  private readonly openOpts: Pick<OpenDatabaseOptions, 'electronAbiDir' | 'timeoutMs'>;
  private readonly identity: { path: string; id: string } | null;
  private readonly cols: { scan: string };
  private readonly stmts: {
    bySeq: Database.Statement;
    scan: Database.Statement;
    maxSeq: Database.Statement;
    count: Database.Statement;
    highWater: Database.Statement;
  };

  /** Prepare the check's statements on `db`, the connection `src.open()` returns. */
  constructor(db: Database.Database, src: VerifySource) {
    this.open = src.open;
    this.openOpts = src.openOpts;
    this.identity = src.identity;
    this.cols = { scan: src.scanSql };
    this.stmts = {
      bySeq: src.bySeq,
      scan: db.prepare(src.scanSql).pluck(),
      maxSeq: db.prepare('SELECT MAX(seq) FROM receipts').pluck(),
      count: db.prepare('SELECT count(*) FROM receipts').pluck(),
      highWater: db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'receipts'").pluck(),
    };
  }

  /** `Ledger.verify` (see its docstring). */
  verify(opts: VerifyOptions = {}): VerifyReport {
    const w = this.startWalk();
    const pool = this.startPool(w, opts, 'sync');
    if (pool) {
      try {
        return this.joinRangesSync(w, pool, opts);
      } finally {
        pool.stopSync();
        this.reportStats(opts, pool);
      }
    }
    this.reportStats(opts, null);
    for (;;) {
      const step = this.walkStep(w, w.end);
      if (step === 'done') return this.finishWalk(w);
      if (step !== 'more') return step;
      opts.onProgress?.(w.count);
    }
  }

  /** `Ledger.verifyAsync` (see its docstring). */
  async verifyAsync(opts: VerifyAsyncOptions = {}): Promise<VerifyReport> {
    const w = this.startWalk();
    const pool = this.startPool(w, opts, 'async');
    try {
      if (pool) {
        const joined = await this.joinRangesAsync(w, pool, opts);
        if (joined) return joined;
        // No worker left to finish the rest: carry on from the intact prefix on this thread.
      }
      for (;;) {
        opts.signal?.throwIfAborted();
        const step = this.walkStep(w, w.end);
        if (step === 'done') return this.finishWalk(w);
        if (step !== 'more') return step;
        opts.onProgress?.(w.count);
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    } finally {
      await pool?.stopAsync();
      this.reportStats(opts, pool);
    }
  }

  private startWalk(): VerifyWalk {
    this.open();
    return {
      end: (this.stmts.maxSeq.get() as number | null) ?? 0,
      highWater: (this.stmts.highWater.get() as number | undefined) ?? 0,
      expected: 1,
      prev: GENESIS_PREV_HASH,
      count: 0,
    };
  }

  /** Worker threads for this walk, or null when it stays on this thread (small ledger, option, no worker started). */
  private startPool(w: VerifyWalk, opts: VerifyOptions, mode: 'sync' | 'async'): VerifyPool | null {
    if (opts.parallel === false) return null;
    const p = opts.parallel ?? {};
    const minRows = p.minRows ?? PARALLEL_VERIFY_MIN_ROWS;
    const rangeRows = Math.max(1, Math.floor(p.rangeRows ?? PARALLEL_VERIFY_RANGE_ROWS));
    const threads = Math.min(p.threads ?? Math.min(coreCount(), MAX_VERIFY_THREADS), Math.ceil(w.end / rangeRows));
    // In verify() this thread takes ranges too (it would only wait otherwise).
    const workers = mode === 'sync' ? threads - 1 : threads;
    if (w.end < minRows || workers < 1 || !this.identity) return null;
    // Ranges are planned by seq. Fewer rows than the highest seq means a gap, so the
    // chain is broken anyway: the walk here finds it, and a seq forged far beyond
    // the head cannot make the plan huge.
    if (this.stmts.count.get() !== w.end) return null;
    let pool: VerifyPool;
    try {
      pool = new VerifyPool({
        file: this.identity.path,
        fileId: this.identity.id,
        nativeBinding: nativeBindingPath(this.openOpts.electronAbiDir),
        timeoutMs: this.openOpts.timeoutMs ?? 5000,
        scanSql: this.cols.scan,
        end: w.end,
        rangeRows,
        batch: VERIFY_CHUNK,
        workers,
        mode,
      });
    } catch {
      return null; // better-sqlite3 not resolvable for workers: verify here
    }
    if (pool.started === 0) return null;
    return pool;
  }

  private reportStats(opts: VerifyOptions, pool: VerifyPool | null): void {
    opts.onStats?.({
      workers: pool?.started ?? 0,
      ranges: pool?.ranges ?? 0,
      rangesByWorkers: pool?.byWorkers ?? 0,
      rangesByCaller: pool?.byCaller ?? 0,
      workerErrors: pool ? [...pool.failures] : [],
    });
  }

  /** verify() with workers: take results in range order, checking ranges here whenever none is ready. */
  private joinRangesSync(w: VerifyWalk, pool: VerifyPool, opts: VerifyOptions): VerifyReport {
    for (let k = 0; k < pool.ranges; k++) {
      this.open();
      let r = pool.take(k);
      let waitingSince = 0;
      while (!r) {
        const mine = pool.claim();
        if (mine !== null) {
          pool.put(this.checkRangeHere(pool, mine));
        } else if (waitingSince === 0) {
          waitingSince = performance.now();
        } else if (performance.now() - waitingSince > verifyWorkerRuntime.stalledRangeMs) {
          pool.put(this.checkRangeHere(pool, k));
        } else {
          pool.waitSync(50);
        }
        r = pool.take(k);
      }
      let step = this.joinRange(w, pool, r);
      while (step === 'more') step = this.walkStep(w, rangeEnd(pool, k));
      if (step !== 'done') return step;
      opts.onProgress?.(w.count);
    }
    return this.finishWalk(w);
  }

  /**
   * verifyAsync() with workers: await results in range order. Returns null when
   * the workers all ended before finishing (the caller then walks the rest).
   */
  private async joinRangesAsync(w: VerifyWalk, pool: VerifyPool, opts: VerifyAsyncOptions): Promise<VerifyReport | null> {
    for (let k = 0; k < pool.ranges; k++) {
      this.open();
      let r = pool.take(k);
      while (!r) {
        opts.signal?.throwIfAborted();
        if (pool.allExited) return null;
        await pool.waitAsync(1000, opts.signal);
        this.open();
        r = pool.take(k);
      }
      opts.signal?.throwIfAborted();
      let step = this.joinRange(w, pool, r);
      while (step === 'more') {
        step = this.walkStep(w, rangeEnd(pool, k));
        if (step === 'more') {
          await new Promise<void>((resolve) => setImmediate(resolve));
          opts.signal?.throwIfAborted();
        }
      }
      if (step !== 'done') return step;
      opts.onProgress?.(w.count);
    }
    return this.finishWalk(w);
  }

  /**
   * Extend the walk by range r's checked prefix when it continues the chain
   * exactly (the range starts right after the walk's last receipt, and its first
   * row's prevHash is the walk's last hash). Then the rest of the range, if any,
   * must be walked here: returns 'more' for that, 'done' when the range is covered.
   */
  private joinRange(w: VerifyWalk, pool: VerifyPool, r: RangeResult): WalkStep {
    const lo = r.k * pool.rangeRows;
    if (!r.error && r.good > lo && r.hash !== null && w.count === lo && r.firstPrev === w.prev) {
      w.count = r.good;
      w.expected = r.good + 1;
      w.prev = r.hash;
    }
    return w.count < rangeEnd(pool, r.k) ? 'more' : 'done';
  }

  /**
   * The fast check of range k on this thread, as a worker would do it: from the
   * stored prevHash of its first row, with the single-thread walk (so a suspect
   * row that is in fact intact does not end the prefix).
   */
  private checkRangeHere(pool: VerifyPool, k: number): RangeResult {
    const lo = k * pool.rangeRows;
    const first = this.stmts.bySeq.get(lo + 1) as RawRow | undefined;
    const firstPrev: unknown = first?.[15];
    if (typeof firstPrev !== 'string' || !HEX64.test(firstPrev)) return { k, good: lo, firstPrev: null, hash: null };
    const d: VerifyWalk = { end: rangeEnd(pool, k), highWater: 0, expected: lo + 1, prev: firstPrev, count: lo };
    while (this.walkStep(d, d.end) === 'more');
    return { k, good: d.count, firstPrev, hash: d.count > lo ? d.prev : null };
  }

  /**
   * Verify the next rows after the walk's position, up to seq `end`, at most
   * VERIFY_CHUNK of them: the first broken link's report, 'done' when no rows up
   * to `end` remain, else 'more'.
   */
  private walkStep(w: VerifyWalk, end: number): WalkStep {
    this.open();
    const broken = (seq: number, reason: string, id?: string): VerifyReport => ({
      ok: false,
      count: w.count,
      headHash: w.prev,
      firstBroken: id === undefined ? { seq, reason } : { seq, id, reason },
    });
    const rows = this.stmts.scan.all(w.count, end, VERIFY_CHUNK) as string[];
    for (const s of rows) {
      const c1 = s.indexOf(':');
      const seq = Number(s.slice(0, c1));
      if (seq !== w.expected) {
        return broken(w.expected, seq > w.expected
          ? `receipt ${w.expected} is missing (the next row has seq ${seq})`
          : `seq ${s.slice(0, c1)} out of order after ${w.expected - 1}`);
      }
      const start = c1 + 68; // c1 ':' flag ':' 64-hex hash ':'
      let hash: string;
      // startsWith at an offset compares in place, without cutting substrings.
      if (s.charCodeAt(c1 + 1) === 49 /* '1' */ && s.startsWith(w.prev, start) && s.startsWith((hash = sha256Hex(s.slice(start))), c1 + 3)) {
        w.prev = hash;
      } else {
        const row = this.stmts.bySeq.get(seq) as RawRow;
        const reason = checkRow(row, w.prev);
        if (reason) return broken(seq, reason, typeof row[1] === 'string' ? row[1] : undefined);
        w.prev = row[16];
      }
      w.count = seq;
      w.expected = seq + 1;
    }
    return rows.length === VERIFY_CHUNK && w.count < end ? 'more' : 'done';
  }

  /** The end of a walk that found no broken link: the tail check, then the report. */
  private finishWalk(w: VerifyWalk): VerifyReport {
    if (w.highWater > w.count) {
      return {
        ok: false,
        count: w.count,
        headHash: w.prev,
        firstBroken: { seq: w.count + 1, reason: `receipts ${w.count + 1}..${w.highWater} are missing: the tail was deleted` },
      };
    }
    return { ok: true, count: w.count, headHash: w.prev };
  }

}

/**
 * The authoritative check of one row against the previous hash, field by field
 * in JS (canonicalReceiptText + chainHash, the code append uses).
 * @returns null when the row is intact, else the reason.
 */
function checkRow(row: RawRow, prev: string): string | null {
  const seq = row[0];
  if (row[15] !== prev) {
    return seq === 1 ? 'prevHash is not the genesis value' : `prevHash does not match the hash of receipt ${seq - 1}`;
  }
  const actor: unknown = row[13];
  const detail: unknown = row[14];
  // JSON-validity of the two spliced columns keeps row -> canonical text one-to-one.
  if (typeof actor !== 'string' || typeof detail !== 'string' || !isJson(actor) || !isJson(detail)) {
    return 'actor or detail is not valid JSON';
  }
  if (chainHash(prev, canonicalReceiptText(row)) !== row[16]) return 'hash does not match the receipt content (a field was altered)';
  // Format 4: the hash covers the payload hash; the payload, while kept, must match it.
  return payloadProblem(row);
}

/**
 * Where worker threads find the file this ledger opened: its absolute path (the
 * working directory may change later) and `dev:ino`, which a worker compares
 * after opening so that it never checks another file put at the same path.
 * Null for an in-memory or URI database, or when the file cannot be stat'ed.
 */
export function fileIdentity(file: string): { path: string; id: string } | null {
  if (file === '' || file === ':memory:' || file.startsWith('file:')) return null;
  try {
    const abs = path.resolve(file);
    const st = statSync(abs, { bigint: true });
    return { path: abs, id: `${st.dev}:${st.ino}` };
  } catch {
    return null;
  }
}


/** Highest seq of range k. */
function rangeEnd(pool: VerifyPool, k: number): number {
  return Math.min((k + 1) * pool.rangeRows, pool.end);
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
