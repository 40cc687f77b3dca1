/**
 * The request index: one row per request (src/shared/request-summary.ts), kept
 * in the `requests` table beside the receipts, in the same transaction as the
 * append that changes it, so the timeline pages and counts requests without
 * ever scanning receipts (docs/timeline.md).
 *
 * It is derived data, outside the hash chain: `verify` does not cover it, and a
 * request's trail (its receipts, found through `receipts_request`) is what the
 * chain vouches for. The migration that adds it (schema.ts, format 3) builds it
 * from the receipts with the same fold; format 5 ends the discoveries an older
 * fold left open (endOpenRequests).
 */
import type Database from 'better-sqlite3';
import { ENDING_EVENTS, FACULTIES, OUTCOME_EVENTS, type Actor, type Faculty, type OutcomeEvent, type ReceiptEvent } from '../../../shared/receipt';
import {
  REASON_EVENTS, eventBit, foldReceipt, type Decider, type FoldableReceipt, type RequestFilter, type RequestPage, type RequestQuery, type RequestSummary,
} from '../../../shared/request-summary';
import { encodeCursor, encodeTailCursor, newestFirst, tailCursorSeq } from '../../../shared/cursor';
import { LedgerInputError, decodeCursor, isReceiptEvent } from './input';

/**
 * The table and its indexes. `seq` is the seq of the request's first receipt, so
 * it is the rowid: every index below ends with it, and an index on (x, time)
 * walks in the timeline's order, (time DESC, seq DESC), for `x = ?` with or
 * without a time range, and counts `x = ?` by counting its entries.
 */
export const REQUESTS_SQL = `
CREATE TABLE IF NOT EXISTS requests (
  seq        INTEGER PRIMARY KEY,
  request_id TEXT    NOT NULL UNIQUE,
  time       INTEGER NOT NULL,
  last_seq   INTEGER NOT NULL,
  last_time  INTEGER NOT NULL,
  agent      TEXT,
  faculty    TEXT    NOT NULL,
  operation  TEXT,
  tool_name  TEXT,
  origin     TEXT,
  tab_id     INTEGER,
  outcome    TEXT,
  decided_by TEXT,
  steps      INTEGER NOT NULL,
  events     INTEGER NOT NULL,
  reason     TEXT
) STRICT;
CREATE INDEX IF NOT EXISTS requests_time ON requests(time);
CREATE INDEX IF NOT EXISTS requests_origin ON requests(origin, time);
CREATE INDEX IF NOT EXISTS requests_agent ON requests(agent, time);
CREATE INDEX IF NOT EXISTS requests_faculty ON requests(faculty, time);
CREATE INDEX IF NOT EXISTS requests_tool ON requests(tool_name, time);
CREATE INDEX IF NOT EXISTS requests_outcome ON requests(outcome, time);
`;

/** Most chunks (of `limit` receipts) one tail call reads before it answers `more`. */
export const MAX_TAIL_CHUNKS = 20;

const COLUMNS = 'seq, request_id, time, last_seq, last_time, agent, faculty, operation, tool_name, origin, tab_id, outcome, decided_by, steps, events, reason';

type Row = [number, string, number, number, number, string | null, string, string | null, string | null, string | null, number | null, string | null, string | null, number, number, string | null];

function rowToSummary(r: Row): RequestSummary {
  return {
    seq: r[0],
    requestId: r[1],
    time: r[2],
    lastSeq: r[3],
    lastTime: r[4],
    durationMs: Math.max(0, r[4] - r[2]),
    agent: r[5],
    faculty: r[6] as Faculty,
    operation: r[7],
    toolName: r[8],
    origin: r[9],
    tabId: r[10],
    outcome: r[11] as OutcomeEvent | null,
    decidedBy: r[12] as Decider | null,
    steps: r[13],
    events: r[14],
    reason: r[15],
  };
}

function summaryToRow(s: RequestSummary): Row {
  return [s.seq, s.requestId, s.time, s.lastSeq, s.lastTime, s.agent, s.faculty, s.operation, s.toolName, s.origin, s.tabId, s.outcome, s.decidedBy, s.steps, s.events, s.reason];
}

/** A receipt as the append path has it: the stored row's fields, actor and detail as their JSON text. */
export interface IndexedReceipt {
  seq: number;
  time: number;
  requestId: string | null;
  event: ReceiptEvent;
  faculty: Faculty;
  origin: string | null;
  tabId: number | null;
  toolName: string | null;
  operation: string | null;
  actorJson: string;
  detailJson: string;
}

function foldable(r: IndexedReceipt & { requestId: string }): FoldableReceipt {
  return {
    seq: r.seq,
    time: r.time,
    requestId: r.requestId,
    event: r.event,
    faculty: r.faculty,
    origin: r.origin,
    tabId: r.tabId,
    toolName: r.toolName,
    operation: r.operation,
    actor: JSON.parse(r.actorJson) as Actor,
    // Parsed only for the events whose detail the fold reads (reasons, a rule's approval).
    detail: () => JSON.parse(r.detailJson) as unknown,
  };
}

/** Whether changing `a` into `b` touches an indexed column (else only the row is rewritten). */
function indexedChange(a: RequestSummary, b: RequestSummary): boolean {
  return a.agent !== b.agent || a.origin !== b.origin || a.toolName !== b.toolName || a.outcome !== b.outcome || a.faculty !== b.faculty;
}

/** Keeps the index up to date; one per read-write Ledger. */
export class RequestIndexWriter {
  private readonly byId: Database.Statement;
  private readonly upsert: Database.Statement;
  private readonly progress: Database.Statement;
  private readonly dropStale: Database.Statement;

  constructor(db: Database.Database) {
    // In an intact ledger a seq begins at most one request. A row holding the seq a new request
    // begins at is left from receipts someone removed (a rollback, which verify reports): it goes,
    // so derived data never stops an append (a failed append would be a denial of service).
    this.dropStale = db.prepare('DELETE FROM requests WHERE seq = ? AND request_id <> ?');
    this.byId = db.prepare(`SELECT ${COLUMNS} FROM requests WHERE request_id = ?`).raw();
    this.upsert = db.prepare(
      `INSERT INTO requests (${COLUMNS}) VALUES (${COLUMNS.replace(/\w+/g, '?')}) ` +
        'ON CONFLICT(request_id) DO UPDATE SET last_seq = excluded.last_seq, last_time = excluded.last_time, agent = excluded.agent, ' +
        'operation = excluded.operation, tool_name = excluded.tool_name, origin = excluded.origin, tab_id = excluded.tab_id, outcome = excluded.outcome, ' +
        'decided_by = excluded.decided_by, steps = excluded.steps, events = excluded.events, reason = excluded.reason',
    );
    // No indexed column here: SQLite then rewrites the row only, not the six indexes.
    this.progress = db.prepare(
      'UPDATE requests SET last_seq = ?, last_time = ?, operation = ?, tab_id = ?, decided_by = ?, steps = ?, events = ?, reason = ? WHERE request_id = ?',
    );
  }

  /**
   * Fold receipts (in seq order, inside the caller's write transaction) into
   * their requests' rows: each request touched is read once and written once.
   * Receipts without a request id (console and link events) are not requests.
   */
  apply(receipts: readonly IndexedReceipt[]): void {
    const touched = new Map<string, { before: RequestSummary | null; now: RequestSummary }>();
    for (const r of receipts) {
      if (r.requestId === null) continue;
      let entry = touched.get(r.requestId);
      if (!entry) {
        const row = this.byId.get(r.requestId) as Row | undefined;
        const before = row ? rowToSummary(row) : null;
        entry = { before, now: foldReceipt(before, foldable(r as IndexedReceipt & { requestId: string })) };
        touched.set(r.requestId, entry);
      } else {
        entry.now = foldReceipt(entry.now, foldable(r as IndexedReceipt & { requestId: string }));
      }
    }
    for (const { before, now } of touched.values()) {
      if (before && !indexedChange(before, now)) {
        this.progress.run(now.lastSeq, now.lastTime, now.operation, now.tabId, now.decidedBy, now.steps, now.events, now.reason, now.requestId);
      } else {
        if (!before) this.dropStale.run(now.seq, now.requestId);
        this.upsert.run(summaryToRow(now));
      }
    }
  }
}

/**
 * Build the index of a ledger that has none (the format 2 → 3 migration, inside
 * its transaction): every receipt with a request id, oldest first, in chunks, so
 * memory stays bounded whatever the ledger's size.
 * @param columns the receipts' SQL column list, as the file has them.
 */
export function buildRequestIndex(db: Database.Database, chunk = 20_000): void {
  const writer = new RequestIndexWriter(db);
  const read = db.prepare(
    'SELECT seq, time, request_id, event, faculty, origin, tab_id, tool_name, operation, actor, detail FROM receipts ' +
      'WHERE seq > ? AND request_id IS NOT NULL ORDER BY seq LIMIT ?',
  ).raw();
  let after = 0;
  for (;;) {
    const rows = read.all(after, chunk) as Array<[number, number, string, ReceiptEvent, Faculty, string | null, number | null, string | null, string | null, string, string]>;
    if (rows.length === 0) return;
    writer.apply(rows.map((r) => ({
      seq: r[0], time: r[1], requestId: r[2], event: r[3], faculty: r[4], origin: r[5], tabId: r[6], toolName: r[7], operation: r[8], actorJson: r[9],
      // Only reason events and approvals read their detail; the others never need the text.
      detailJson: REASON_EVENTS.has(r[3]) || r[3] === 'approved' || r[3] === 'denied' ? r[10] : 'null',
    })));
    after = rows[rows.length - 1]![0];
  }
}

/**
 * Format 4 → 5 (schema.ts): end the rows a request index built before `outcomeOf`
 * (src/shared/receipt.ts) left open although their receipts end them: a discovery
 * whose last receipt is `discovered` (ENDING_EVENTS) gets the outcome it stands
 * for. Only rows still open are touched, so a later outcome receipt keeps its
 * word, as in `outcomeOf`. Updates derived data only: no receipt is written or
 * changed, so the chain and the signed checkpoints verify as before.
 * One UPDATE per ending event, each one walk of receipts_event for that event.
 * @returns how many rows were ended.
 */
export function endOpenRequests(db: Database.Database): number {
  let ended = 0;
  for (const [event, outcome] of Object.entries(ENDING_EVENTS)) {
    ended += db
      .prepare('UPDATE requests SET outcome = ? WHERE outcome IS NULL AND request_id IN (SELECT request_id FROM receipts WHERE event = ? AND request_id IS NOT NULL)')
      .run(outcome, event).changes;
  }
  return ended;
}

/** Default and maximum page size of `queryRequests`. */
export const DEFAULT_REQUEST_PAGE = 100;
export const MAX_REQUEST_PAGE = 500;
/** Longest `text` filter. */
export const MAX_REQUEST_TEXT = 200;

const REQUEST_OUTCOMES: ReadonlySet<string> = new Set([...OUTCOME_EVENTS, 'open']);
const FACULTY_SET: ReadonlySet<string> = new Set(FACULTIES);

/** LIKE pattern for a substring, with `\` escaping LIKE's own wildcards. */
function likePattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

interface Where {
  sql: string[];
  params: Record<string, string | number>;
  key: string[];
}

/**
 * The WHERE of a filter. Each equality filter has its own index led by it and
 * followed by (time, seq), so SQLite walks one index; `event` and `text` are
 * checked on the rows that walk reaches (docs/timeline.md says what that costs).
 * @throws LedgerInputError for a bad filter.
 */
function whereOf(f: RequestFilter): Where {
  if (f === null || typeof f !== 'object') throw new LedgerInputError('request filter must be an object');
  const w: Where = { sql: [], params: {}, key: [] };
  const add = (name: string, sql: string, value: string | number) => {
    w.sql.push(sql);
    w.params[name] = value;
    w.key.push(name);
  };
  for (const k of ['from', 'to'] as const) {
    const v = f[k];
    if (v === undefined) continue;
    if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw new LedgerInputError(`request filter ${k} must be an integer (ms since the epoch)`);
    add(k, k === 'from' ? 'time >= @from' : 'time <= @to', v);
  }
  for (const [k, col] of [['origin', 'origin'], ['agent', 'agent'], ['toolName', 'tool_name'], ['requestId', 'request_id']] as const) {
    const v = f[k];
    if (v === undefined) continue;
    if (typeof v !== 'string') throw new LedgerInputError(`request filter ${k} must be a string`);
    add(k, `${col} = @${k}`, v);
  }
  if (f.faculty !== undefined) {
    if (!FACULTY_SET.has(f.faculty)) throw new LedgerInputError('request filter faculty must be one of FACULTIES');
    add('faculty', 'faculty = @faculty', f.faculty);
  }
  if (f.outcome !== undefined) {
    if (!REQUEST_OUTCOMES.has(f.outcome)) throw new LedgerInputError(`request filter outcome must be one of ${[...REQUEST_OUTCOMES].join(', ')}`);
    if (f.outcome === 'open') {
      w.sql.push('outcome IS NULL');
      w.key.push('open');
    } else add('outcome', 'outcome = @outcome', f.outcome);
  }
  if (f.event !== undefined) {
    if (!isReceiptEvent(f.event)) throw new LedgerInputError('request filter event must be one of RECEIPT_EVENTS');
    add('eventBit', '((events >> @eventBit) & 1) = 1', eventBit(f.event));
  }
  if (f.text !== undefined) {
    if (typeof f.text !== 'string' || f.text.length < 1 || f.text.length > MAX_REQUEST_TEXT) {
      throw new LedgerInputError(`request filter text must be 1 to ${MAX_REQUEST_TEXT} characters`);
    }
    add('text', "(tool_name LIKE @text ESCAPE '\\' OR reason LIKE @text ESCAPE '\\')", likePattern(f.text));
  }
  return w;
}

/** The timeline's reads on one connection: pages and counts, one prepared statement per combination of filters. */
export class RequestIndexReader {
  private readonly cache = new Map<string, Database.Statement>();

  constructor(private readonly db: Database.Database) {}

  private stmt(key: string, sql: () => string): Database.Statement {
    let s = this.cache.get(key);
    if (!s) {
      s = this.db.prepare(sql());
      this.cache.set(key, s);
    }
    return s;
  }

  /**
   * A page's SQL: the filters, and where it starts. `older` (a `cursor`) and `first` walk an
   * index in the timeline's order (time DESC, seq DESC). `newer` (an `after`, the live tail)
   * reads the requests that changed since the cursor: those with a receipt whose seq is in
   * (@aSeq, @bSeq], found by the receipts' rowid range and looked up by request id, matching the
   * filters now. So a request recorded after the clock stepped back is new all the same, and one
   * that comes to match a filter on a later receipt (its outcome, an event, a reason, a read's
   * origin) is found.
   */
  private pageSql(q: RequestQuery, limit: number): { sql: string; key: string; params: Record<string, string | number>; mode: 'first' | 'older' | 'newer'; after: number } {
    const w = whereOf(q);
    if (q.cursor !== undefined && q.after !== undefined) throw new LedgerInputError('give cursor or after, not both');
    if (q.after !== undefined) {
      const after = tailCursorSeq(q.after);
      if (after === null) throw new LedgerInputError('request after is not one this ledger issued');
      // The receipts' rowid range drives the lookups: INDEXED BY keeps SQLite from walking a
      // filter's own index over all its rows instead.
      const where = ['request_id IN (SELECT request_id FROM receipts WHERE seq > @aSeq AND seq <= @bSeq AND request_id IS NOT NULL)', ...w.sql];
      const sql = `SELECT ${COLUMNS} FROM requests INDEXED BY sqlite_autoindex_requests_1 WHERE ${where.join(' AND ')}`;
      return { sql, key: `page:newer:${w.key.join(',')}`, params: { ...w.params, aSeq: after, bSeq: after + limit }, mode: 'newer', after };
    }
    const params: Record<string, string | number> = { ...w.params, limit: limit + 1 };
    const where = [...w.sql];
    if (q.cursor !== undefined) {
      const c = decodeCursor('q', q.cursor, 'request cursor');
      where.push('(time, seq) < (@cTime, @cSeq)');
      Object.assign(params, { cTime: c.time, cSeq: c.seq });
    }
    const mode = q.cursor !== undefined ? 'older' : 'first';
    const sql = `SELECT ${COLUMNS} FROM requests${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY time DESC, seq DESC LIMIT @limit`;
    return { sql, key: `page:${mode}:${w.key.join(',')}`, params, mode, after: 0 };
  }

  /** See Ledger.queryRequests. */
  page(q: RequestQuery): RequestPage {
    const limit = q.limit ?? DEFAULT_REQUEST_PAGE;
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_REQUEST_PAGE) throw new LedgerInputError(`request page limit must be an integer from 1 to ${MAX_REQUEST_PAGE}`);
    const p = this.pageSql(q, limit);
    const stmt = this.stmt(p.key, () => p.sql).raw();
    if (p.mode === 'newer') return this.tail(stmt, p.params, p.after, limit);
    // The tail starts where this read did: the head first, so nothing appended after it is skipped.
    const through = p.mode === 'first' ? this.lastReceiptSeq() : 0;
    const rows = stmt.all(p.params) as Row[];
    const more = rows.length > limit;
    if (more) rows.pop();
    const requests = rows.map(rowToSummary);
    const last = requests[requests.length - 1];
    return {
      requests,
      nextCursor: more && last ? encodeCursor('q', last.time, last.seq) : null,
      newestCursor: p.mode === 'first' ? encodeTailCursor(through) : null,
    };
  }

  /**
   * The live tail: the receipts recorded since `after`, `limit` receipts at a time (so at most
   * `limit` requests each), until the newest, until `limit` requests are in hand, or after
   * MAX_TAIL_CHUNKS (so one call never holds the console for a long backlog: a page that was
   * away, a hand-made `after`). A request with receipts in several chunks is given once, as it
   * is now. The cursor ends where the walk stopped: every receipt up to it was read, matching or
   * not, so the next ask reads only what came since. `more`: the walk stopped before the newest.
   */
  private tail(stmt: Database.Statement, params: Record<string, string | number>, after: number, limit: number): RequestPage {
    const head = this.lastReceiptSeq();
    const rows = new Map<string, Row>();
    let at = after;
    for (let chunks = 0; at < head && chunks < MAX_TAIL_CHUNKS; chunks++) {
      const to = Math.min(head, at + limit);
      const chunk = stmt.all({ ...params, aSeq: at, bSeq: to }) as Row[];
      if (rows.size + chunk.filter((r) => !rows.has(r[1])).length > limit) break;
      for (const r of chunk) rows.set(r[1], r);
      at = to;
    }
    return { requests: [...rows.values()].map(rowToSummary).sort(newestFirst), nextCursor: null, newestCursor: encodeTailCursor(at), ...(at < head ? { more: true } : {}) };
  }

  /** The seq of the newest receipt (the rowid's maximum: one step down the table's b-tree), 0 when none. */
  private lastReceiptSeq(): number {
    return (this.stmt('last-receipt-seq', () => 'SELECT max(seq) FROM receipts').pluck().get() as number | null) ?? 0;
  }

  /**
   * How many requests match `f` (Ledger.countRequests): an equality filter counts its own index's
   * entries, without reading rows; `event` and `text` read every row the walk reaches.
   */
  count(f: RequestFilter): number {
    const w = whereOf(f);
    const stmt = this.stmt(`count:${w.key.join(',')}`, () => `SELECT COUNT(*) FROM requests${w.sql.length ? ` WHERE ${w.sql.join(' AND ')}` : ''}`).pluck();
    return stmt.get(w.params) as number;
  }

  /** count, and `through`: the newest receipt's seq when counted (a request first recorded after it is not in the count). */
  countAt(f: RequestFilter): { count: number; through: number } {
    return { count: this.count(f), through: this.lastReceiptSeq() };
  }

  /** The SQLite query plan of a page (tests assert a page walks an index of `requests`, and the tail the receipts recorded since). */
  plan(q: RequestQuery): string[] {
    const p = this.pageSql(q, 100);
    return (this.db.prepare(`EXPLAIN QUERY PLAN ${p.sql}`).all(p.params) as Array<{ detail: string }>).map((r) => r.detail);
  }

  clear(): void {
    this.cache.clear();
  }
}
