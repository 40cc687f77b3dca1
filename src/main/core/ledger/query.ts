/**
 * The ledger's reads by filter (`Ledger.query` in index.ts): the checks of a
 * ReceiptQuery, the opaque page cursor, the SQL built (and cached) per
 * combination of filters, and `rowToReceipt`, the one mapping of a stored row
 * to a Receipt that every read of the ledger uses. See docs/ledger.md.
 */
import type Database from 'better-sqlite3';
import { OUTCOME_EVENTS, isOutcomeEvent, type Receipt, type ReceiptPage, type ReceiptQuery } from '../../../shared/receipt';
import type { RawRow } from './chain';
import { encodeCursor } from '../../../shared/cursor';
import { LedgerInputError, decodeCursor, isReceiptEvent } from './input';

/** Default and maximum page size of `query`. */
export const DEFAULT_PAGE_LIMIT = 100;
export const MAX_PAGE_LIMIT = 500;

/**
 * SQL for the columns a query reads, as the file was opened: the row columns,
 * and the format-2 columns' names (or NULL on a read-only format-1 file).
 */
export interface QueryColumns {
  rows: string;
  operation: string;
  subjectHash: string;
}

type QueryKey = 'from' | 'to' | 'origin' | 'toolName' | 'event' | 'requestId' | 'id' | 'operation' | 'subjectHash';

/**
 * The stored row (ROW_COLUMNS order, chain.ts) as the Receipt the ledger returns.
 * `payloadHash` is present exactly on rows of the payload-hash rule (format 4),
 * `erasedAt` exactly on those whose payload retention erased (`detail` null).
 */
export function rowToReceipt(r: RawRow): Receipt {
  const out = receiptFields(r);
  const payloadHash = r[19] ?? null;
  const erasedAt = r[20] ?? null;
  if (payloadHash !== null) out.payloadHash = payloadHash;
  if (erasedAt !== null) out.erasedAt = erasedAt;
  return out;
}

function receiptFields(r: RawRow): Receipt {
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

/**
 * `Ledger.query` on the open database `db`: see its docstring for the filters,
 * the order and the cursor. `cache` keeps one prepared statement per
 * combination of filters (keyed by their names), for the ledger's lifetime.
 * @throws LedgerInputError for a bad filter, limit or cursor.
 */
export function runQuery(db: Database.Database, cols: QueryColumns, cache: Map<string, Database.Statement>, q: ReceiptQuery): ReceiptPage {
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
  const cursor = q.cursor === undefined ? undefined : decodeCursor('r', q.cursor, 'query cursor');
  const keys = (Object.keys(values) as QueryKey[]).filter((k) => values[k] !== undefined);
  const cacheKey = keys.join(',') + (cursor ? ',cursor' : '');
  let stmt = cache.get(cacheKey);
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
        operation: `${cols.operation} = @operation`,
        subjectHash: `${cols.subjectHash} = @subjectHash`,
      }[k]);
    }
    // Row-value comparison: SQLite walks the index from (time, seq) downwards.
    if (cursor) where.push('(time, seq) < (@cursorTime, @cursorSeq)');
    const sql =
      `SELECT ${cols.rows} FROM receipts` +
      (where.length ? ` WHERE ${where.join(' AND ')}` : '') +
      ' ORDER BY time DESC, seq DESC LIMIT @limit';
    stmt = db.prepare(sql).raw();
    cache.set(cacheKey, stmt);
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
  return { receipts, nextCursor: more && last ? encodeCursor('r', last.time, last.seq) : null };
}
