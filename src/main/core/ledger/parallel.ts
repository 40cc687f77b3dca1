/**
 * Parallel verify: worker threads check disjoint seq ranges of the chain at once;
 * the calling thread (Ledger.verify / verifyAsync, through verify.ts) joins the ranges
 * in order and stays the authority. See docs/ledger.md, "Parallel verify".
 *
 * The ranges are `(k * rangeRows, min((k + 1) * rangeRows, end)]`, k = 0, 1, …,
 * handed out through a shared counter (a thread that finishes early takes the
 * next one, so a core slowed by other work does not hold the rest back). For its
 * range a worker reports the longest prefix that passes the fast check (the
 * same one the single-thread walk uses, verify.ts `walkStep`): each row's seq is
 * the next one, the `json_valid`/length flag is set, its stored prevHash is the
 * hash computed for the row before it in the range, and SHA-256 of its hash
 * input equals its stored hash. The first row of a range has no row before it
 * there: the worker starts from that row's stored prevHash and reports it, and
 * the joining thread accepts the prefix only when that equals the hash it
 * reached at the end of the previous range. Everything a worker does not vouch
 * for (a suspect row, a range it could not check, a seam that does not match)
 * is walked by the joining thread with the single-thread code, which words the
 * reason; so the report is exactly the single-thread one.
 *
 * The worker is plain JavaScript evaluated from a string (`eval: true`), not a
 * file: electron-vite bundles the main process into out/main/index.js and does
 * not emit a file for `new Worker(new URL('./x.js', import.meta.url))` in a
 * Node (SSR) build, while its `?modulePath`/`?nodeWorker` imports do not resolve
 * under tsx or vitest. A string runs the same everywhere. It requires
 * better-sqlite3 by the absolute path this module resolves, loads the same
 * native binding as the main thread (Electron's ABI inside Electron), and gets
 * its SQL from the caller, so the hash input is defined once (chain.ts).
 *
 * If no worker can start, or one fails, the ranges it would have checked are
 * walked by the calling thread: parallelism only ever makes verify faster.
 */
import { availableParallelism, cpus } from 'node:os';
import { MessageChannel, Worker, receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import { betterSqlite3Entry } from './sqlite';
import { SHA256_SQL_FUNCTION } from './chain';

/** One range's outcome, from a worker or from the calling thread. */
export interface RangeResult {
  /** Range index: seqs `(k * rangeRows, min((k + 1) * rangeRows, end)]`. */
  k: number;
  /** Highest seq of the range's checked prefix (the range's lower bound when nothing passed). */
  good: number;
  /** Stored prevHash of the range's first row, when that row is seq lo + 1 and it is 64 lowercase hex. */
  firstPrev: string | null;
  /** Hash of receipt `good`, when good > the range's lower bound. */
  hash: string | null;
  /** Why the range could not be checked (the joining thread then walks it itself). */
  error?: string;
}

/** Slots of the shared control array. */
const NEXT = 0; // next range to claim
const POSTED = 1; // results posted by workers (wakes a waiting verify())
const STOP = 2; // non-zero: claim nothing more, stop after the current query
const ACTIVE = 3; // workers that may be using better-sqlite3

/**
 * The worker, as CommonJS source for `new Worker(source, { eval: true })`.
 * Keep it in step with `walkStep` (verify.ts): it must never accept a row
 * that the single-thread fast path would not (test/unit/ledger-parallel.test.ts
 * runs the tamper cases through it). It may reject more: those rows are re-walked.
 */
export const VERIFY_WORKER_SOURCE = String.raw`'use strict';
const { workerData } = require('node:worker_threads');
const crypto = require('node:crypto');
const fs = require('node:fs');
const { port, control, sqliteEntry, nativeBinding, file, fileId, timeout, scanSql, sha256SqlFunction, rangeRows, end, ranges, batch } = workerData;
const ctl = new Int32Array(control);
const NEXT = 0, POSTED = 1, STOP = 2, ACTIVE = 3;
const HEX64 = /^[0-9a-f]{64}$/;
const sha256Hex = typeof crypto.hash === 'function'
  ? (text) => crypto.hash('sha256', text, 'hex')
  : (text) => crypto.createHash('sha256').update(text).digest('hex');
const post = (result) => {
  port.postMessage(result);
  Atomics.add(ctl, POSTED, 1);
  Atomics.notify(ctl, POSTED);
};
// Each scan row is one string: "<seq>:<flag>:<hash>:<prevHash || canonical>" (verify.ts, the scan statement).
const checkRange = (scan, k) => {
  const lo = k * rangeRows;
  const hi = Math.min(lo + rangeRows, end);
  let good = lo;
  let prev = null;
  let firstPrev = null;
  const result = () => ({ k, good, firstPrev, hash: good > lo ? prev : null });
  for (;;) {
    const rows = scan.all(good, hi, batch);
    for (const s of rows) {
      const c1 = s.indexOf(':');
      if (Number(s.slice(0, c1)) !== good + 1 || s.charCodeAt(c1 + 1) !== 49) return result();
      const start = c1 + 68;
      if (prev === null) {
        // An early exit only: the caller's seam comparison (firstPrev === its hash) decides.
        firstPrev = s.slice(start, start + 64);
        if (!HEX64.test(firstPrev)) {
          firstPrev = null;
          return result();
        }
        prev = firstPrev;
      }
      if (!s.startsWith(prev, start)) return result();
      const h = sha256Hex(s.slice(start));
      if (!s.startsWith(h, c1 + 3)) return result();
      prev = h;
      good += 1;
    }
    if (rows.length < batch || good >= hi || Atomics.load(ctl, STOP) !== 0) return result();
  }
};
// Counted active before STOP is read: the caller waits for ACTIVE to reach 0
// after setting STOP, so no worker is inside better-sqlite3 once it returns.
Atomics.add(ctl, ACTIVE, 1);
let db = null;
try {
  if (Atomics.load(ctl, STOP) === 0) {
    const Database = require(sqliteEntry);
    db = new Database(file, { readonly: true, fileMustExist: true, timeout, ...(nativeBinding ? { nativeBinding } : {}) });
    const st = fs.statSync(file, { bigint: true });
    if (st.dev + ':' + st.ino !== fileId) throw new Error('the file at ' + file + ' is not the one the ledger opened');
    // The payload check of format 4 (chain.ts payloadCheckSql) calls this function.
    db.function(sha256SqlFunction, { deterministic: true }, (text) => (typeof text === 'string' ? sha256Hex(text) : null));
    const scan = db.prepare(scanSql).pluck();
    while (Atomics.load(ctl, STOP) === 0) {
      const k = Atomics.add(ctl, NEXT, 1);
      if (k >= ranges) break;
      let r;
      try {
        r = checkRange(scan, k);
      } catch (e) {
        r = { k, good: k * rangeRows, firstPrev: null, hash: null, error: String((e && e.message) || e) };
      }
      post(r);
    }
  }
} catch (e) {
  post({ k: -1, good: 0, firstPrev: null, hash: null, error: String((e && e.message) || e) });
} finally {
  try {
    if (db) db.close();
  } catch {
    // closing a read-only connection cannot lose anything
  }
  port.close();
  Atomics.sub(ctl, ACTIVE, 1);
  Atomics.notify(ctl, ACTIVE);
}
`;

/**
 * What the pool runs and with which module; tests swap these to make workers
 * fail and check that verify falls back to the calling thread.
 */
export const verifyWorkerRuntime = {
  source: VERIFY_WORKER_SOURCE,
  sqliteEntry: betterSqlite3Entry,
  /**
   * `verify` checks a range itself when a worker claimed it and has not posted
   * its result after this long, while nothing else is left to do (a worker
   * that died mid-range; a merely slow one just loses the race).
   */
  stalledRangeMs: 15_000,
};

/** Threads this machine offers (os.availableParallelism where it exists). */
export function coreCount(): number {
  return typeof availableParallelism === 'function' ? availableParallelism() : Math.max(1, cpus().length);
}

/** Longest wait for workers to stop after a verification (normally at most one query of VERIFY_CHUNK rows). */
const STOP_WAIT_MS = 10_000;

export interface VerifyPoolOptions {
  /** Absolute path of the ledger file (workers open it read-only). */
  file: string;
  /** `dev:ino` of the file the ledger opened; a worker that finds another file at the path checks nothing. */
  fileId: string;
  /** `nativeBinding` for better-sqlite3 (sqlite.ts nativeBindingPath), or undefined. */
  nativeBinding: string | undefined;
  timeoutMs: number;
  /** SQL of the scan statement: params (after seq, up to seq, limit), one string per row. */
  scanSql: string;
  /** Highest seq to verify. */
  end: number;
  rangeRows: number;
  /** Rows per query inside a range. */
  batch: number;
  /** Worker threads to start. */
  workers: number;
  /** 'sync': the caller blocks (Atomics.wait) and takes ranges itself; 'async': it awaits events. */
  mode: 'sync' | 'async';
}

/** Worker threads checking ranges, and their results. */
export class VerifyPool {
  readonly ranges: number;
  readonly rangeRows: number;
  readonly end: number;
  /** Worker threads started. */
  readonly started: number;
  /** Errors reported by workers (one that could not start, a range that threw). */
  readonly failures: string[] = [];
  /** Ranges whose result came from a worker / from the calling thread. */
  byWorkers = 0;
  byCaller = 0;
  private readonly mode: 'sync' | 'async';
  private readonly ctl: Int32Array;
  private readonly ports: MessagePort[] = [];
  private readonly workers: Worker[] = [];
  private readonly results = new Map<number, RangeResult>();
  private seen = 0;
  private exited = 0;
  private waiter: (() => void) | null = null;

  constructor(opts: VerifyPoolOptions) {
    this.mode = opts.mode;
    this.rangeRows = opts.rangeRows;
    this.end = opts.end;
    this.ranges = Math.ceil(opts.end / opts.rangeRows);
    this.ctl = new Int32Array(new SharedArrayBuffer(4 * Int32Array.BYTES_PER_ELEMENT));
    const sqliteEntry = verifyWorkerRuntime.sqliteEntry();
    for (let i = 0; i < opts.workers; i++) {
      const { port1, port2 } = new MessageChannel();
      let worker: Worker;
      try {
        worker = new Worker(verifyWorkerRuntime.source, {
          eval: true,
          // The worker is plain JavaScript: no loader (tsx) to start in it.
          execArgv: [],
          workerData: {
            port: port2,
            control: this.ctl.buffer,
            sqliteEntry,
            nativeBinding: opts.nativeBinding,
            file: opts.file,
            fileId: opts.fileId,
            timeout: opts.timeoutMs,
            scanSql: opts.scanSql,
            sha256SqlFunction: SHA256_SQL_FUNCTION,
            rangeRows: opts.rangeRows,
            end: opts.end,
            ranges: this.ranges,
            batch: opts.batch,
          },
          transferList: [port2],
        });
      } catch (e) {
        port1.close();
        this.failures.push(`worker did not start: ${e instanceof Error ? e.message : String(e)}`);
        continue;
      }
      worker.on('error', (e: unknown) => {
        this.failures.push(`worker failed: ${e instanceof Error ? e.message : String(e)}`);
      });
      worker.on('exit', () => {
        this.exited += 1;
        this.wake();
      });
      if (this.mode === 'async') {
        port1.on('message', (r: RangeResult) => {
          this.put(r, true);
          this.wake();
        });
      }
      this.ports.push(port1);
      this.workers.push(worker);
    }
    this.started = this.workers.length;
  }

  /** Claim the next unclaimed range for the calling thread, or null when all are claimed. */
  claim(): number | null {
    const k = Atomics.add(this.ctl, NEXT, 1);
    return k < this.ranges ? k : null;
  }

  /** Record a result (the first one for a range wins; they agree anyway). */
  put(r: RangeResult, fromWorker = false): void {
    if (r.k < 0) {
      if (r.error) this.failures.push(`worker could not start: ${r.error}`);
      return;
    }
    if (r.error) this.failures.push(`range ${r.k}: ${r.error}`);
    if (this.results.has(r.k)) return;
    this.results.set(r.k, r);
    if (fromWorker) this.byWorkers += 1;
    else this.byCaller += 1;
  }

  /** The result of range k, if in. */
  take(k: number): RangeResult | undefined {
    if (this.mode === 'sync' || this.exited > 0) this.drain();
    const r = this.results.get(k);
    if (r) this.results.delete(k);
    return r;
  }

  /** Sync mode: block until a worker posts a result (or `ms` pass). */
  waitSync(ms: number): void {
    Atomics.wait(this.ctl, POSTED, this.seen, ms);
  }

  /** Async mode: resolve at the next result, worker exit, or after `ms`. */
  waitAsync(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        this.waiter = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal?.addEventListener('abort', done, { once: true });
      this.waiter = done;
    });
  }

  /** True when every worker has exited (no result can arrive any more). */
  get allExited(): boolean {
    return this.exited >= this.started;
  }

  /**
   * Stop handing out ranges and block until no worker is inside better-sqlite3
   * any more (at most the query under way, VERIFY_CHUNK rows; STOP_WAIT_MS at
   * worst). Workers are never terminated: terminating a thread while
   * better-sqlite3 raises an error aborts the whole process (seen with a file
   * removed under a starting worker), so they are asked to stop and end by
   * themselves. Idempotent.
   */
  stopSync(): void {
    Atomics.store(this.ctl, STOP, 1);
    const deadline = performance.now() + STOP_WAIT_MS;
    for (let active = Atomics.load(this.ctl, ACTIVE); active > 0 && performance.now() < deadline; active = Atomics.load(this.ctl, ACTIVE)) {
      Atomics.wait(this.ctl, ACTIVE, active, 50);
    }
    this.closePorts();
  }

  /** `stopSync` for verifyAsync: waits, without blocking, until every worker has exited. */
  async stopAsync(): Promise<void> {
    Atomics.store(this.ctl, STOP, 1);
    const deadline = performance.now() + STOP_WAIT_MS;
    while (!this.allExited && performance.now() < deadline) await this.waitAsync(50);
    this.closePorts();
  }

  private closePorts(): void {
    for (const p of this.ports) p.close();
    this.ports.length = 0;
  }

  private drain(): void {
    this.seen = Atomics.load(this.ctl, POSTED);
    for (const p of this.ports) {
      for (let m = receiveMessageOnPort(p); m; m = receiveMessageOnPort(p)) this.put(m.message as RangeResult, true);
    }
  }

  private wake(): void {
    this.waiter?.();
  }
}
