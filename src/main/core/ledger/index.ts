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
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import type Database from 'better-sqlite3';
import type { Checkpoint, Receipt, ReceiptInput, ReceiptPage, ReceiptQuery, VerifyReport } from '../../../shared/receipt';
import { openDatabase, type OpenDatabaseOptions } from './sqlite';
import { prepareSchema } from './schema';
import { GENESIS_PREV_HASH, HASH_INPUT_SQL, ROW_COLUMNS_SQL, canonicalReceiptText, chainHash, sha256Hex, type RawRow } from './chain';
import { LedgerInputError, OUTCOME_EVENTS, isReceiptEvent, normaliseInput, type NormalisedInput } from './input';

export { LedgerInputError, OUTCOME_EVENTS, boundedDetail, TRUNCATION_KEY, MAX_FIELD_CHARS } from './input';
export { LedgerFormatError, LEDGER_FORMAT } from './schema';
export { GENESIS_PREV_HASH, CHAINED_FIELDS, canonicalReceiptText, chainHash } from './chain';
export { openDatabase, NativeBindingMissingError } from './sqlite';

/** Default and maximum page size of `query`. */
export const DEFAULT_PAGE_LIMIT = 100;
export const MAX_PAGE_LIMIT = 500;

export interface LedgerOptions extends Pick<OpenDatabaseOptions, 'electronAbiDir' | 'timeoutMs'> {
  /** Open read-only (CLI verify/export/tail): no schema changes, `append` throws. The file must exist. */
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
  /** Called after each chunk of VERIFY_CHUNK receipts with the count verified so far. */
  onProgress?: (count: number) => void;
}

/** Options of `Ledger.verifyAsync`. */
export interface VerifyAsyncOptions extends VerifyOptions {
  /** Abort between chunks; the promise then rejects with the signal's reason. */
  signal?: AbortSignal;
}

/** Receipts verified per chunk (one query, and for verifyAsync one turn of the event loop). */
export const VERIFY_CHUNK = 10_000;

/** Walk state of one verification. */
interface VerifyWalk {
  end: number;
  highWater: number;
  expected: number;
  prev: string;
  count: number;
}

type QueryKey = 'from' | 'to' | 'origin' | 'toolName' | 'event' | 'requestId';


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
    prevHash: r[15],
    hash: r[16],
  };
}

function checkString(q: ReceiptQuery, key: 'origin' | 'toolName' | 'requestId'): void {
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
  private db: Database.Database | null;
  private readonly now: () => number;
  private readonly listeners = new Set<(r: Receipt) => void>();
  private readonly queryCache = new Map<string, Database.Statement>();
  private readonly stmts: {
    head: Database.Statement;
    insert: Database.Statement;
    bySeq: Database.Statement;
    scan: Database.Statement;
    maxSeq: Database.Statement;
    chunk: Database.Statement;
    highWater: Database.Statement;
  };
  private readonly appendTx: Database.Transaction<(items: NormalisedInput[]) => Receipt[]>;

  /**
   * Open (creating if needed, unless `readonly`) the ledger at `file`.
   * @throws LedgerFormatError for a file that is not a ledger or is from a newer format;
   *   NativeBindingMissingError inside Electron without the Electron-ABI binary;
   *   better-sqlite3's SqliteError for I/O errors.
   */
  constructor(file: string, opts: LedgerOptions = {}) {
    this.file = file;
    this.readonly = opts.readonly ?? false;
    this.now = opts.now ?? Date.now;
    const db = openDatabase(file, { readonly: this.readonly, electronAbiDir: opts.electronAbiDir, timeoutMs: opts.timeoutMs });
    try {
      prepareSchema(db, this.readonly);
    } catch (e) {
      db.close();
      throw e;
    }
    this.db = db;
    this.stmts = {
      head: db.prepare('SELECT seq, hash FROM receipts ORDER BY seq DESC LIMIT 1').raw(),
      insert: db.prepare(`INSERT INTO receipts (${ROW_COLUMNS_SQL}) VALUES (${ROW_COLUMNS_SQL.replace(/\w+/g, '?')})`),
      bySeq: db.prepare(`SELECT ${ROW_COLUMNS_SQL} FROM receipts WHERE seq = ?`).raw(),
      // One string per row: "<seq>:<1 if actor and detail are JSON and both hashes 64 long>:<hash>:<prevHash || canonical>".
      // One string, not an array of columns, because per-row JS objects are most of verify's cost.
      scan: db.prepare(
        `SELECT concat(seq, ':', json_valid(actor) AND json_valid(detail) AND length(hash) = 64 AND length(prev_hash) = 64, ':', hash, ':', ${HASH_INPUT_SQL}) ` +
          'FROM receipts WHERE seq > ? AND seq <= ? ORDER BY seq LIMIT ?',
      ).pluck(),
      maxSeq: db.prepare('SELECT MAX(seq) FROM receipts').pluck(),
      chunk: db.prepare(`SELECT ${ROW_COLUMNS_SQL} FROM receipts WHERE seq > ? AND seq <= ? ORDER BY seq LIMIT ?`).raw(),
      highWater: db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'receipts'").pluck(),
    };
    this.appendTx = db.transaction((items: NormalisedInput[]) => {
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
          n.toolName, n.descriptorHash, n.argumentsHash, n.actorJson, n.detailJson, prevHash, '',
        ] as RawRow;
        row[16] = chainHash(prevHash, canonicalReceiptText(row));
        this.stmts.insert.run(row);
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
   * `toolName`, `requestId` exact; `event` one of RECEIPT_EVENTS; `outcome` one
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
    if (q.event !== undefined && !isReceiptEvent(q.event)) throw new LedgerInputError(`query event must be one of RECEIPT_EVENTS`);
    if (q.outcome !== undefined && !OUTCOME_EVENTS.includes(q.outcome)) {
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
        }[k]);
      }
      // Row-value comparison: SQLite walks the index from (time, seq) downwards.
      if (cursor) where.push('(time, seq) < (@cursorTime, @cursorSeq)');
      const sql =
        `SELECT ${ROW_COLUMNS_SQL} FROM receipts` +
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
   * Recompute the whole chain, oldest first. For each row it checks, in order:
   * that seq is the next one (a gap names the missing seq), that `prevHash` is the
   * previous row's hash (the genesis value for seq 1), that `actor` and `detail`
   * are JSON, and that `hash` = SHA-256(prevHash || canonical(row)). Then it checks
   * that no tail was deleted behind SQLite's back (sqlite_sequence). Stops at the
   * first broken link.
   *
   * Speed: SQLite builds each row's hash input (HASH_INPUT_SQL) and JS only hashes
   * and compares; any row that does not pass that way is re-checked field by field
   * in JS (`checkRow`, the authority), which also words the reason.
   * Synchronous: about 4 µs of CPU per receipt on a slow machine, so seconds at a
   * million; prefer `verifyAsync` on the Electron main thread.
   * @returns `{ok, count, headHash}`; when broken, `firstBroken: {seq, id?, reason}`
   *   and `count`/`headHash` describe the intact prefix before it.
   */
  verify(opts: VerifyOptions = {}): VerifyReport {
    const walk = this.startWalk();
    for (;;) {
      const done = this.walkChunk(walk);
      if (done) return done;
      opts.onProgress?.(walk.count);
    }
  }

  /**
   * `verify` without blocking the event loop for long: one chunk of
   * VERIFY_CHUNK receipts per turn (a few tens of ms), so the console's UI and
   * IPC stay responsive on a large ledger. Receipts appended meanwhile are not
   * covered (it verifies up to the head it found when it started).
   * @returns the same report as `verify`.
   * @throws the signal's reason when aborted; LedgerStateError when closed meanwhile.
   */
  async verifyAsync(opts: VerifyAsyncOptions = {}): Promise<VerifyReport> {
    const walk = this.startWalk();
    for (;;) {
      opts.signal?.throwIfAborted();
      const done = this.walkChunk(walk);
      if (done) return done;
      opts.onProgress?.(walk.count);
      await new Promise<void>((resolve) => setImmediate(resolve));
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

  /** Verify the next chunk; returns the final report when done or broken, else null. */
  private walkChunk(w: VerifyWalk): VerifyReport | null {
    this.open();
    const broken = (seq: number, reason: string, id?: string): VerifyReport => ({
      ok: false,
      count: w.count,
      headHash: w.prev,
      firstBroken: id === undefined ? { seq, reason } : { seq, id, reason },
    });
    const rows = this.stmts.scan.all(w.count, w.end, VERIFY_CHUNK) as string[];
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
    if (rows.length === VERIFY_CHUNK && w.count < w.end) return null;
    if (w.highWater > w.count) {
      return broken(w.count + 1, `receipts ${w.count + 1}..${w.highWater} are missing: the tail was deleted`);
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
   * @throws LedgerInputError when `checkpoint` is not a Checkpoint.
   */
  verifyAgainst(checkpoint: Checkpoint): VerifyReport {
    if (
      !checkpoint || typeof checkpoint !== 'object' || !Number.isSafeInteger(checkpoint.count) || checkpoint.count < 0 ||
      typeof checkpoint.headHash !== 'string' || !/^[0-9a-f]{64}$/.test(checkpoint.headHash)
    ) {
      throw new LedgerInputError('checkpoint must be {count: integer >= 0, headHash: 64 hex, time}');
    }
    const report = this.verify();
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

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
