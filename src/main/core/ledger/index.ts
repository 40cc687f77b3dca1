/**
 * The receipt ledger: an append-only, hash-chained record of every step of
 * every request (src/shared/receipt.ts), kept in SQLite through better-sqlite3.
 *
 * - `append` is synchronous and durable when it returns (WAL, synchronous=FULL).
 * - Each receipt is chained to the previous one (chain.ts); `verify` recomputes
 *   the whole chain and names the first broken link; `checkpoint` +
 *   `verifyAgainst` detect a cut-off tail or a rewritten history.
 * - There is no update or delete path here, and triggers refuse both (schema.ts).
 * See docs/ledger.md.
 */
import { randomUUID } from 'node:crypto';
import { createWriteStream, statSync } from 'node:fs';
import path from 'node:path';
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import type Database from 'better-sqlite3';
import { OUTCOME_EVENTS, isOutcomeEvent, type Checkpoint, type Receipt, type ReceiptEvent, type ReceiptInput, type ReceiptPage, type ReceiptQuery, type VerifyReport } from '../../../shared/receipt';
import { nativeBindingPath, openDatabase, type OpenDatabaseOptions } from './sqlite';
import { VerifyPool, coreCount, verifyWorkerRuntime, type RangeResult } from './parallel';
import { prepareSchema } from './schema';
import {
  GENESIS_PREV_HASH, HASH_INPUT_SQL, HASH_INPUT_SQL_FORMAT_1, ROW_COLUMNS_SQL, ROW_COLUMNS_SQL_FORMAT_1, canonicalReceiptText, chainHash, sha256Hex,
  type RawRow,
} from './chain';
import { LedgerInputError, isReceiptEvent, normaliseInput, type NormalisedInput } from './input';

export { OUTCOME_EVENTS } from '../../../shared/receipt';
export { LedgerInputError, OPERATION_RE, boundedDetail, TRUNCATION_KEY, MAX_FIELD_CHARS } from './input';
export { LedgerFormatError, LEDGER_FORMAT } from './schema';
export { GENESIS_PREV_HASH, CHAINED_FIELDS, canonicalReceiptText, chainHash } from './chain';
export { openDatabase, NativeBindingMissingError } from './sqlite';

/** Default and maximum page size of `query`. */
export const DEFAULT_PAGE_LIMIT = 100;
export const MAX_PAGE_LIMIT = 500;

export interface LedgerOptions extends Pick<OpenDatabaseOptions, 'electronAbiDir' | 'timeoutMs'> {
  /**
   * Open read-only (CLI verify/export/tail): no schema changes (a format-1 file
   * is read as it is, not migrated), `append` throws. The file must exist.
   */
  readonly?: boolean;
  /** Clock, ms since the epoch (tests inject one). Default Date.now. */
  now?: () => number;
}

/** Thrown when the ledger is used after `close`, or appended to while read-only. */
export class LedgerStateError extends Error {
  readonly code = 'ledger-state';
  constructor(message: string) {
    super(message);
    this.name = 'LedgerStateError';
  }
}

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

type QueryKey = 'from' | 'to' | 'origin' | 'toolName' | 'event' | 'requestId' | 'id' | 'operation' | 'subjectHash';

/**
 * Verify's scan, params (after seq, up to seq, limit). One string per row:
 * "<seq>:<1 if actor and detail are JSON and both hashes 64 long>:<hash>:<prevHash || canonical>".
 * One string, not an array of columns, because per-row JS objects are most of verify's cost.
 * The worker threads of a parallel verify run this same statement (parallel.ts).
 */
const scanSql = (hashInput: string): string =>
  `SELECT concat(seq, ':', json_valid(actor) AND json_valid(detail) AND length(hash) = 64 AND length(prev_hash) = 64, ':', hash, ':', ${hashInput}) ` +
  'FROM receipts WHERE seq > ? AND seq <= ? ORDER BY seq LIMIT ?';

/** Request lifecycle events after which a request is still waiting for its outcome (`Ledger.openRequests`). */
export const OPEN_EVENTS: readonly ReceiptEvent[] = ['requested', 'validated', 'approval-shown', 'approved', 'dispatched'];
/** Default and largest look-back of `openRequests` and `unresolvedOutcomeUnknowns`. */
export const RECOVERY_LOOKBACK = 10_000;
export const MAX_RECOVERY_LOOKBACK = 100_000;

const sqlList = (xs: readonly string[]): string => xs.map((x) => `'${x}'`).join(', ');

/**
 * `Ledger.openRequests`. The newest `@limit` `requested` receipts (one backward
 * walk of receipts_event), for each the highest seq of its request (a seek in
 * receipts_request, which ends with seq), and of those the rows whose event is
 * still an open one. Never a scan of the table.
 */
const openRequestsSql = (cols: string): string =>
  `SELECT ${cols} FROM receipts WHERE seq IN (` +
  'SELECT (SELECT max(r.seq) FROM receipts r WHERE r.request_id = q.request_id) FROM receipts q ' +
  "WHERE q.event = 'requested' AND q.request_id IS NOT NULL ORDER BY q.time DESC, q.seq DESC LIMIT @limit" +
  `) AND event IN (${sqlList(OPEN_EVENTS)}) ORDER BY seq`;

/**
 * `Ledger.unresolvedOutcomeUnknowns`. The newest `@limit` `outcome-unknown`
 * receipts (receipts_event) without a later outcome of the same request
 * (receipts_request) and without a later `discovered` receipt for the same tab
 * (the partial index receipts_discovered, whose WHERE the literal matches).
 */
const unresolvedUnknownsSql = (cols: string): string =>
  `SELECT ${cols} FROM receipts WHERE seq IN (SELECT u.seq FROM receipts u ` +
  "WHERE u.event = 'outcome-unknown' ORDER BY u.time DESC, u.seq DESC LIMIT @limit) " +
  "AND NOT EXISTS (SELECT 1 FROM receipts d WHERE d.event = 'discovered' AND d.tab_id = receipts.tab_id AND d.seq > receipts.seq) " +
  'AND NOT EXISTS (SELECT 1 FROM receipts o WHERE o.request_id = receipts.request_id AND o.seq > receipts.seq ' +
  `AND o.event IN (${sqlList(OUTCOME_EVENTS)})) ORDER BY seq`;

/** The SQL of `openRequests` and `unresolvedOutcomeUnknowns` (tests read their query plans). */
export const RECOVERY_SQL = {
  openRequests: openRequestsSql(ROW_COLUMNS_SQL),
  unresolvedOutcomeUnknowns: unresolvedUnknownsSql(ROW_COLUMNS_SQL),
} as const;


function rowToReceipt(r: RawRow): Receipt {
  return {
    seq: r[0],
    id: r[1],
    time: r[2],
    requestId: r[3],
    event: r[4] as Receipt['event'],
    faculty: r[5] as Receipt['faculty'],
    origin: r[6],
    tabId: r[7],
    frameId: r[8],
    documentId: r[9],
    toolName: r[10],
    descriptorHash: r[11],
    argumentsHash: r[12],
    actor: JSON.parse(r[13]) as Receipt['actor'],
    detail: JSON.parse(r[14]) as unknown,
    operation: r[17] ?? null,
    subjectHash: r[18] ?? null,
    prevHash: r[15],
    hash: r[16],
  };
}

function checkString(q: ReceiptQuery, key: 'origin' | 'toolName' | 'requestId' | 'id' | 'operation' | 'subjectHash'): void {
  const v = q[key];
  if (v !== undefined && typeof v !== 'string') throw new LedgerInputError(`query ${key} must be a string`);
}

function checkTime(q: ReceiptQuery, key: 'from' | 'to'): void {
  const v = q[key];
  if (v !== undefined && (typeof v !== 'number' || !Number.isSafeInteger(v))) {
    throw new LedgerInputError(`query ${key} must be an integer (ms since the epoch)`);
  }
}

/** Encode where the next page starts: below (time, seq) of the last receipt shown. Opaque to callers. */
function encodeCursor(time: number, seq: number): string {
  return `r1.${time.toString(36)}.${seq.toString(36)}`;
}

function decodeCursor(cursor: string): { time: number; seq: number } {
  const m = /^r1\.(-?[0-9a-z]{1,11})\.([0-9a-z]{1,11})$/.exec(cursor);
  const time = m ? parseInt(m[1] as string, 36) : NaN;
  const seq = m ? parseInt(m[2] as string, 36) : NaN;
  if (!Number.isSafeInteger(time) || !Number.isSafeInteger(seq) || seq < 1) {
    throw new LedgerInputError('query cursor is not one this ledger issued');
  }
  return { time, seq };
}

/**
 * The receipt ledger. One instance per database file and process is the normal
 * case; several connections to one file stay consistent because each append
 * reads the chain head inside its own write transaction.
 */
export class Ledger {
  readonly file: string;
  readonly readonly: boolean;
  private readonly openOpts: Pick<LedgerOptions, 'electronAbiDir' | 'timeoutMs'>;
  /** Absolute path and `dev:ino` of the file opened, for the worker threads of a parallel verify (null: none can be used). */
  private readonly identity: { path: string; id: string } | null;
  /**
   * Format of the file as opened: LEDGER_FORMAT, or 1 for a format-1 file
   * opened read-only (not migrated), whose missing columns are read as NULL.
   */
  readonly format: number;
  /** SQL for the format-2 columns: the column names, or NULL on a read-only format-1 file. */
  private readonly cols: { rows: string; operation: string; subjectHash: string; scan: string };
  /** null when read-only. */
  private readonly insert: Database.Statement | null;
  private db: Database.Database | null;
  private readonly now: () => number;
  private readonly listeners = new Set<(r: Receipt) => void>();
  private readonly queryCache = new Map<string, Database.Statement>();
  private readonly stmts: {
    head: Database.Statement;
    bySeq: Database.Statement;
    scan: Database.Statement;
    maxSeq: Database.Statement;
    count: Database.Statement;
    chunk: Database.Statement;
    highWater: Database.Statement;
    openRequests: Database.Statement;
    unresolvedUnknowns: Database.Statement;
  };
  private readonly appendTx: Database.Transaction<(items: NormalisedInput[]) => Receipt[]>;

  /**
   * Open (creating if needed, unless `readonly`) the ledger at `file`; a
   * read-write open migrates a format-1 file to format 2 (schema.ts).
   * @throws LedgerFormatError for a file that is not a ledger, is from a newer format, or failed to migrate;
   *   NativeBindingMissingError inside Electron without the Electron-ABI binary;
   *   better-sqlite3's SqliteError for I/O errors.
   */
  constructor(file: string, opts: LedgerOptions = {}) {
    this.file = file;
    this.readonly = opts.readonly ?? false;
    this.now = opts.now ?? Date.now;
    this.openOpts = { electronAbiDir: opts.electronAbiDir, timeoutMs: opts.timeoutMs };
    const db = openDatabase(file, { readonly: this.readonly, electronAbiDir: opts.electronAbiDir, timeoutMs: opts.timeoutMs });
    try {
      this.format = prepareSchema(db, this.readonly);
    } catch (e) {
      db.close();
      throw e;
    }
    this.db = db;
    this.identity = fileIdentity(file);
    this.cols = this.format >= 2
      ? { rows: ROW_COLUMNS_SQL, operation: 'operation', subjectHash: 'subject_hash', scan: scanSql(HASH_INPUT_SQL) }
      : { rows: ROW_COLUMNS_SQL_FORMAT_1, operation: 'NULL', subjectHash: 'NULL', scan: scanSql(HASH_INPUT_SQL_FORMAT_1) };
    const cols = this.cols.rows;
    this.insert = this.readonly ? null : db.prepare(`INSERT INTO receipts (${ROW_COLUMNS_SQL}) VALUES (${ROW_COLUMNS_SQL.replace(/\w+/g, '?')})`);
    this.stmts = {
      head: db.prepare('SELECT seq, hash FROM receipts ORDER BY seq DESC LIMIT 1').raw(),
      bySeq: db.prepare(`SELECT ${cols} FROM receipts WHERE seq = ?`).raw(),
      scan: db.prepare(this.cols.scan).pluck(),
      maxSeq: db.prepare('SELECT MAX(seq) FROM receipts').pluck(),
      count: db.prepare('SELECT count(*) FROM receipts').pluck(),
      chunk: db.prepare(`SELECT ${cols} FROM receipts WHERE seq > ? AND seq <= ? ORDER BY seq LIMIT ?`).raw(),
      highWater: db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'receipts'").pluck(),
      openRequests: db.prepare(openRequestsSql(cols)).raw(),
      unresolvedUnknowns: db.prepare(unresolvedUnknownsSql(cols)).raw(),
    };
    this.appendTx = db.transaction((items: NormalisedInput[]) => {
      const insert = this.insert;
      if (!insert) throw new LedgerStateError('the ledger was opened read-only');
      const head = this.stmts.head.get() as [number, string] | undefined;
      let seq = head ? head[0] : 0;
      let prevHash = head ? head[1] : GENESIS_PREV_HASH;
      const out: Receipt[] = [];
      for (const n of items) {
        seq += 1;
        const time = this.now();
        if (!Number.isSafeInteger(time)) throw new LedgerInputError('clock returned a non-integer time');
        const row = [
          seq, randomUUID(), time, n.requestId, n.event, n.faculty, n.origin, n.tabId, n.frameId, n.documentId,
          n.toolName, n.descriptorHash, n.argumentsHash, n.actorJson, n.detailJson, prevHash, '', n.operation, n.subjectHash,
        ] as RawRow;
        row[16] = chainHash(prevHash, canonicalReceiptText(row));
        insert.run(row);
        out.push(rowToReceipt(row));
        prevHash = row[16];
      }
      return out;
    });
  }

  private open(): Database.Database {
    if (!this.db) throw new LedgerStateError('the ledger is closed');
    return this.db;
  }

  private writable(): void {
    this.open();
    if (this.readonly) throw new LedgerStateError('the ledger was opened read-only');
  }

  /**
   * Append one receipt: validate, redact and bound `detail`, assign seq (next in
   * the chain), id (UUID v4), time (ms since the epoch, UTC), prevHash and hash,
   * and commit. Durable when it returns: the write-ahead log has been fsynced.
   * Listeners registered with `onAppend` are then called synchronously.
   * @returns the stored receipt, exactly as `query` will return it.
   * @throws LedgerInputError for bad input (see normaliseInput in input.ts);
   *   LedgerStateError when closed or read-only; SqliteError when the disk write fails
   *   (nothing is stored then).
   */
  append(input: ReceiptInput): Receipt {
    return this.appendBatch([input])[0] as Receipt;
  }

  /**
   * Append several receipts in one transaction: all are stored or none.
   * Durable when it returns, like `append`; cheaper per receipt (one fsync).
   * @returns the stored receipts, in order.
   * @throws as `append`; nothing is stored when any input is invalid.
   */
  appendBatch(inputs: readonly ReceiptInput[]): Receipt[] {
    this.writable();
    if (!Array.isArray(inputs)) throw new LedgerInputError('appendBatch expects an array of receipt inputs');
    const normalised = inputs.map((i) => normaliseInput(i));
    if (normalised.length === 0) return [];
    const stored = this.appendTx.immediate(normalised);
    for (const r of stored) {
      for (const l of this.listeners) {
        try {
          l(r);
        } catch {
          // A UI listener must never make a durable append look failed.
        }
      }
    }
    return stored;
  }

  /**
   * Subscribe to receipts after they are committed (for the UI timeline).
   * @returns the unsubscribe function.
   */
  onAppend(listener: (receipt: Receipt) => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /** The stored receipt at `seq`, or null. */
  get(seq: number): Receipt | null {
    this.open();
    const row = this.stmts.bySeq.get(seq) as RawRow | undefined;
    return row ? rowToReceipt(row) : null;
  }

  /** Number of receipts (= seq of the newest) and the newest hash (GENESIS_PREV_HASH when empty). */
  head(): { count: number; headHash: string } {
    this.open();
    const h = this.stmts.head.get() as [number, string] | undefined;
    return h ? { count: h[0], headHash: h[1] } : { count: 0, headHash: GENESIS_PREV_HASH };
  }

  /**
   * One page of receipts, newest first (descending time, then descending seq for
   * equal times), matching every filter given:
   * `from`/`to` inclusive bounds on `time` (ms since the epoch); `origin`,
   * `toolName`, `requestId`, `id` (one receipt), `operation`, `subjectHash` exact; `event` one of RECEIPT_EVENTS; `outcome` one
   * of OUTCOME_EVENTS (receipts recording that outcome; with `event` too, both must agree).
   * `limit` 1..MAX_PAGE_LIMIT (default DEFAULT_PAGE_LIMIT). `cursor` continues
   * from a previous page's `nextCursor`, which is null on the last page.
   * Pages are stable while receipts are appended: a cursor names the (time, seq)
   * of the last receipt shown, and newer receipts sort above it. Each filter has
   * an index led by it and followed by (time, seq), so a page costs one index walk (schema.ts).
   * @throws LedgerInputError for a bad filter, limit or cursor.
   */
  query(q: ReceiptQuery = {}): ReceiptPage {
    const db = this.open();
    if (q === null || typeof q !== 'object') throw new LedgerInputError('query must be an object');
    const limit = q.limit ?? DEFAULT_PAGE_LIMIT;
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_PAGE_LIMIT) {
      throw new LedgerInputError(`query limit must be an integer from 1 to ${MAX_PAGE_LIMIT}`);
    }
    checkTime(q, 'from');
    checkTime(q, 'to');
    checkString(q, 'origin');
    checkString(q, 'toolName');
    checkString(q, 'requestId');
    checkString(q, 'id');
    checkString(q, 'operation');
    checkString(q, 'subjectHash');
    if (q.event !== undefined && !isReceiptEvent(q.event)) throw new LedgerInputError(`query event must be one of RECEIPT_EVENTS`);
    if (q.outcome !== undefined && !isOutcomeEvent(q.outcome)) {
      throw new LedgerInputError(`query outcome must be one of ${OUTCOME_EVENTS.join(', ')}`);
    }
    let event = q.event;
    if (q.outcome !== undefined) {
      if (event !== undefined && event !== q.outcome) return { receipts: [], nextCursor: null };
      event = q.outcome;
    }
    const values: Partial<Record<QueryKey, string | number>> = {
      from: q.from,
      to: q.to,
      origin: q.origin,
      toolName: q.toolName,
      event,
      requestId: q.requestId,
      id: q.id,
      operation: q.operation,
      subjectHash: q.subjectHash,
    };
    const cursor = q.cursor === undefined ? undefined : decodeCursor(String(q.cursor));
    const keys = (Object.keys(values) as QueryKey[]).filter((k) => values[k] !== undefined);
    const cacheKey = keys.join(',') + (cursor ? ',cursor' : '');
    let stmt = this.queryCache.get(cacheKey);
    if (!stmt) {
      const where: string[] = [];
      for (const k of keys) {
        where.push({
          from: 'time >= @from',
          to: 'time <= @to',
          origin: 'origin = @origin',
          toolName: 'tool_name = @toolName',
          event: 'event = @event',
          requestId: 'request_id = @requestId',
          // `id` is UNIQUE, so this is one index lookup (schema.ts).
          id: 'id = @id',
          // Partial indexes (schema.ts): `x = @x` implies `x IS NOT NULL`, so SQLite uses them.
          operation: `${this.cols.operation} = @operation`,
          subjectHash: `${this.cols.subjectHash} = @subjectHash`,
        }[k]);
      }
      // Row-value comparison: SQLite walks the index from (time, seq) downwards.
      if (cursor) where.push('(time, seq) < (@cursorTime, @cursorSeq)');
      const sql =
        `SELECT ${this.cols.rows} FROM receipts` +
        (where.length ? ` WHERE ${where.join(' AND ')}` : '') +
        ' ORDER BY time DESC, seq DESC LIMIT @limit';
      stmt = db.prepare(sql).raw();
      this.queryCache.set(cacheKey, stmt);
    }
    const params: Record<string, string | number> = { limit: limit + 1 };
    for (const k of keys) params[k] = values[k] as string | number;
    if (cursor) {
      params.cursorTime = cursor.time;
      params.cursorSeq = cursor.seq;
    }
    const rows = stmt.all(params) as RawRow[];
    const more = rows.length > limit;
    if (more) rows.pop();
    const receipts = rows.map(rowToReceipt);
    const last = receipts[receipts.length - 1];
    return { receipts, nextCursor: more && last ? encodeCursor(last.time, last.seq) : null };
  }

  /**
   * Requests still waiting for an outcome, for restart recovery
   * (src/main/core/broker/recovery.ts): among the `limit` newest requests (by
   * their `requested` receipt, which the broker writes first for every request),
   * those whose newest receipt (highest seq) is one of OPEN_EVENTS (requested,
   * validated, approval-shown, approved, dispatched). Returns that newest
   * receipt of each, oldest first.
   *
   * Bounded: at most `limit` index lookups, never a table scan (RECOVERY_SQL;
   * test/unit/ledger-recovery.test.ts reads its query plan). A request opened
   * before the `limit` newest ones is not seen; since recovery runs at every
   * start, that needs `limit` newer requests in one session while it stays open.
   * @param limit 1..MAX_RECOVERY_LOOKBACK, default RECOVERY_LOOKBACK.
   * @throws LedgerInputError for a bad limit.
   */
  openRequests(limit: number = RECOVERY_LOOKBACK): Receipt[] {
    this.open();
    return (this.stmts.openRequests.all({ limit: lookback(limit) }) as RawRow[]).map(rowToReceipt);
  }

  /**
   * `outcome-unknown` receipts that still stand, for the outcome-unknown blocks
   * of restart recovery: among the `limit` newest outcome-unknown receipts,
   * those with no later outcome receipt (OUTCOME_EVENTS) of the same request
   * and no later `discovered` receipt for the same tab (a discovery is the
   * agent looking at the page again, which lifts the block). Oldest first.
   * A receipt without a tabId is never lifted by a discovery.
   *
   * Bounded like `openRequests`: `limit` rows of receipts_event, each checked by
   * a seek in receipts_request and in the partial index receipts_discovered.
   * @param limit 1..MAX_RECOVERY_LOOKBACK, default RECOVERY_LOOKBACK.
   * @throws LedgerInputError for a bad limit.
   */
  unresolvedOutcomeUnknowns(limit: number = RECOVERY_LOOKBACK): Receipt[] {
    this.open();
    return (this.stmts.unresolvedUnknowns.all({ limit: lookback(limit) }) as RawRow[]).map(rowToReceipt);
  }

  /**
   * Recompute the whole chain, oldest first. For each row it checks, in order:
   * that seq is the next one (a gap names the missing seq), that `prevHash` is the
   * previous row's hash (the genesis value for seq 1), that `actor` and `detail`
   * are JSON, and that `hash` = SHA-256(prevHash || canonical(row)). Then it checks
   * that no tail was deleted behind SQLite's back (sqlite_sequence). Stops at the
   * first broken link.
   *
   * Speed: SQLite builds each row's hash input (HASH_INPUT_SQL) and JS only hashes
   * and compares; any row that does not pass that way is re-checked field by field
   * in JS (`checkRow`, the authority), which also words the reason. From
   * PARALLEL_VERIFY_MIN_ROWS receipts, worker threads check ranges of the chain
   * at the same time and this thread joins them (parallel.ts; `opts.parallel`);
   * the report is the same either way. About 3.5 µs of CPU per receipt on a slow
   * machine, spread over its cores: a second or two at a million; prefer
   * `verifyAsync` on the Electron main thread.
   * @returns `{ok, count, headHash}`; when broken, `firstBroken: {seq, id?, reason}`
   *   (the lowest broken seq) and `count`/`headHash` describe the intact prefix before it.
   */
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

  /**
   * `verify` without blocking the event loop for long: worker threads check the
   * ranges (from PARALLEL_VERIFY_MIN_ROWS receipts) while this thread only joins
   * their results; on a smaller ledger, or when no worker can run, one chunk of
   * VERIFY_CHUNK receipts per turn (a few tens of ms), so the console's UI and
   * IPC stay responsive on a large ledger. Receipts appended meanwhile are not
   * covered (it verifies up to the head it found when it started).
   * @returns the same report as `verify`.
   * @throws the signal's reason when aborted; LedgerStateError when closed meanwhile.
   */
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

  /**
   * A checkpoint of the current head: `{count, headHash, time}` (time in ms since
   * the epoch). Store or export it somewhere the ledger file does not live
   * (a backup, another machine, a printout); `verifyAgainst` then detects a tail
   * cut off after it and any rewrite of the history up to it.
   */
  checkpoint(): Checkpoint {
    const h = this.head();
    return { count: h.count, headHash: h.headHash, time: this.now() };
  }

  /**
   * `verify`, plus the checks against an earlier checkpoint: the ledger still
   * holds at least `checkpoint.count` receipts, and the receipt at that seq has
   * hash `checkpoint.headHash` (so the history up to it was not rewritten, even
   * with recomputed hashes).
   * `opts` as for `verify`.
   * @throws LedgerInputError when `checkpoint` is not a Checkpoint.
   */
  verifyAgainst(checkpoint: Checkpoint, opts: VerifyOptions = {}): VerifyReport {
    if (
      !checkpoint || typeof checkpoint !== 'object' || !Number.isSafeInteger(checkpoint.count) || checkpoint.count < 0 ||
      typeof checkpoint.headHash !== 'string' || !/^[0-9a-f]{64}$/.test(checkpoint.headHash)
    ) {
      throw new LedgerInputError('checkpoint must be {count: integer >= 0, headHash: 64 hex, time}');
    }
    const report = this.verify(opts);
    if (!report.ok) return report;
    if (report.count < checkpoint.count) {
      return {
        ...report,
        ok: false,
        firstBroken: {
          seq: report.count + 1,
          reason: `tail cut off: the checkpoint recorded ${checkpoint.count} receipts, the ledger ends at ${report.count}`,
        },
      };
    }
    const at = checkpoint.count === 0 ? GENESIS_PREV_HASH : this.get(checkpoint.count)?.hash;
    if (at !== checkpoint.headHash) {
      return {
        ...report,
        ok: false,
        firstBroken: { seq: checkpoint.count, reason: `history rewritten: receipt ${checkpoint.count} has a different hash than the checkpoint recorded` },
      };
    }
    return report;
  }

  /**
   * Write every receipt, oldest first, as JSON Lines (one Receipt object per
   * line, UTF-8, "\n" after each) to a file path (created or replaced) or a
   * writable stream (left open). Reads in chunks, so appends may continue
   * meanwhile; the export covers the receipts present when it started.
   * @returns the number of receipts written and the hash of the last one.
   */
  async export(target: string | Writable): Promise<{ count: number; headHash: string }> {
    this.open();
    const { count: end, headHash } = this.head();
    const toFile = typeof target === 'string';
    const out: Writable = toFile ? createWriteStream(target) : target;
    try {
      let after = 0;
      while (after < end) {
        this.open();
        const rows = this.stmts.chunk.all(after, end, 1000) as RawRow[];
        if (rows.length === 0) break;
        let text = '';
        for (const r of rows) text += JSON.stringify(rowToReceipt(r)) + '\n';
        after = (rows[rows.length - 1] as RawRow)[0];
        if (!out.write(text)) await once(out, 'drain');
      }
    } finally {
      if (toFile) {
        out.end();
        await once(out, 'finish');
      }
    }
    return { count: end, headHash };
  }

  /** Close the database; later calls throw LedgerStateError. Idempotent. */
  close(): void {
    this.listeners.clear();
    this.queryCache.clear();
    if (this.db) {
      this.db.close();
      this.db = null;
    }
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
  return null;
}

/**
 * Where worker threads find the file this ledger opened: its absolute path (the
 * working directory may change later) and `dev:ino`, which a worker compares
 * after opening so that it never checks another file put at the same path.
 * Null for an in-memory or URI database, or when the file cannot be stat'ed.
 */
function fileIdentity(file: string): { path: string; id: string } | null {
  if (file === '' || file === ':memory:' || file.startsWith('file:')) return null;
  try {
    const abs = path.resolve(file);
    const st = statSync(abs, { bigint: true });
    return { path: abs, id: `${st.dev}:${st.ino}` };
  } catch {
    return null;
  }
}

function lookback(limit: number): number {
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_RECOVERY_LOOKBACK) {
    throw new LedgerInputError(`look-back must be an integer from 1 to ${MAX_RECOVERY_LOOKBACK}`);
  }
  return limit;
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
