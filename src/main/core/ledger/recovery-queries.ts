/**
 * The ledger's restart-recovery reads (`Ledger.openRequests` and
 * `Ledger.unresolvedOutcomeUnknowns` in index.ts, used by
 * src/main/core/broker/recovery.ts): their SQL, each bounded to a look-back
 * of the newest requests and never a scan of the table. See docs/ledger.md.
 */
import type Database from 'better-sqlite3';
import { OUTCOME_EVENTS, type Receipt, type ReceiptEvent } from '../../../shared/receipt';
import { ROW_COLUMNS_SQL, type RawRow } from './chain';
import { LedgerInputError } from './input';
import { rowToReceipt } from './query';

/** Request lifecycle events after which a request is still waiting for its outcome (`Ledger.openRequests`). */
export const OPEN_EVENTS: readonly ReceiptEvent[] = ['requested', 'validated', 'approval-shown', 'approved', 'dispatched'];
/** Default and largest look-back of `openRequests` and `unresolvedOutcomeUnknowns`. */
export const RECOVERY_LOOKBACK = 10_000;
export const MAX_RECOVERY_LOOKBACK = 100_000;

const sqlList = (xs: readonly string[]): string => xs.map((x) => `'${x}'`).join(', ');

/**
 * `Ledger.openRequests`. Two look-backs, each one backward walk of
 * receipts_event: the newest `@limit` `requested` receipts, and the newest
 * `@limit` `dispatched` receipts — reads never write `dispatched`, so no flood
 * of reads (each writes `requested`) can push a dispatched request out of
 * reach. For each, the highest seq of its request (a seek in receipts_request,
 * which ends with seq), and of those the rows whose event is still an open one.
 * Never a scan of the table.
 */
const newestOf = (event: string): string =>
  'SELECT m FROM (SELECT (SELECT max(r.seq) FROM receipts r WHERE r.request_id = q.request_id) AS m FROM receipts q ' +
  `WHERE q.event = '${event}' AND q.request_id IS NOT NULL ORDER BY q.time DESC, q.seq DESC LIMIT @limit)`;
const openRequestsSql = (cols: string): string =>
  `SELECT ${cols} FROM receipts WHERE seq IN (${newestOf('requested')} UNION ALL ${newestOf('dispatched')}) ` +
  `AND event IN (${sqlList(OPEN_EVENTS)}) ORDER BY seq`;

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

/** The prepared statements of the two recovery reads, on one connection. */
export interface RecoveryStatements {
  openRequests: Database.Statement;
  unresolvedUnknowns: Database.Statement;
}

/** Prepare the recovery reads on `db`, reading the row columns `cols` (ROW_COLUMNS_SQL, or its format-1 form). */
export function prepareRecoveryStatements(db: Database.Database, cols: string): RecoveryStatements {
  return {
    openRequests: db.prepare(openRequestsSql(cols)).raw(),
    unresolvedUnknowns: db.prepare(unresolvedUnknownsSql(cols)).raw(),
  };
}

/**
 * `Ledger.openRequests` (see its docstring): the newest receipt of each still
 * open request among the `limit` newest, oldest first.
 * @throws LedgerInputError for a bad limit.
 */
export function openRequests(stmts: RecoveryStatements, limit: number): Receipt[] {
  return (stmts.openRequests.all({ limit: lookback(limit) }) as RawRow[]).map(rowToReceipt);
}

/**
 * `Ledger.unresolvedOutcomeUnknowns` (see its docstring): the standing
 * `outcome-unknown` receipts among the `limit` newest, oldest first.
 * @throws LedgerInputError for a bad limit.
 */
export function unresolvedOutcomeUnknowns(stmts: RecoveryStatements, limit: number): Receipt[] {
  return (stmts.unresolvedUnknowns.all({ limit: lookback(limit) }) as RawRow[]).map(rowToReceipt);
}

function lookback(limit: number): number {
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_RECOVERY_LOOKBACK) {
    throw new LedgerInputError(`look-back must be an integer from 1 to ${MAX_RECOVERY_LOOKBACK}`);
  }
  return limit;
}
