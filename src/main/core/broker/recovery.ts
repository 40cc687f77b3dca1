/**
 * Restart recovery: what the broker must know and write about requests that
 * the previous run of the console left unfinished. Standalone: the core's
 * start() calls it once it owns the link, before the MCP endpoint accepts any call:
 *
 *   const report = recoverAtStart(ledger);
 *   for (const b of report.blocks) refuse `b.subject` in (b.tabId, b.documentId) until the tab is discovered again
 *
 * The rules (docs/design.md, "Request lifecycle"; docs/broker.md, "outcome-unknown"):
 * - A request whose newest receipt is `dispatched` may or may not have run in
 *   the page: it gets an `outcome-unknown` receipt (detail
 *   `{reason: 'console-restarted'}`, actor console) and becomes a block.
 * - A request left before dispatch (newest receipt `requested`, `validated`,
 *   `approval-shown` or `approved`) can no longer be decided or dispatched, since
 *   its approval and grant lived in memory: it gets `cancelled` (detail
 *   `{reason: 'console restarted before a decision'}`, actor console).
 * - Outcome-unknown blocks survive restarts: every request whose latest outcome
 *   is `outcome-unknown`, whether written before or just now, and whose tab has
 *   not been discovered again since (no later `discovered` receipt for that tab),
 *   is returned as a block.
 *
 * Bounded, never a scan of the whole ledger: the newest RECOVERY_LOOKBACK
 * (10,000) requests are examined for open ones and the newest 10,000
 * `outcome-unknown` receipts for blocks, each through indexes
 * (Ledger.openRequests, Ledger.unresolvedOutcomeUnknowns). Idempotent: a second
 * run writes nothing and returns the same blocks.
 */
import type { Faculty, Receipt, ReceiptInput } from '../../../shared/receipt';
import { RECOVERY_LOOKBACK, type Ledger } from '../ledger/index';

/** `detail.reason` of the outcome-unknown receipt recovery writes for a dispatched request. */
export const RESTART_OUTCOME_REASON = 'console-restarted';
/** `detail.reason` of the cancelled receipt recovery writes for a request still waiting for a decision or dispatch. */
export const RESTART_CANCEL_REASON = 'console restarted before a decision';
/** `detail.reason` for a request left at `requested` (a read in flight, or an action not yet checked: no decision was asked for). */
export const RESTART_CANCEL_UNANSWERED_REASON = 'console restarted before the request was answered';

/** A request that was dispatched when the console stopped: recovery wrote `outcome-unknown` for it. */
export interface RecoveredUnknown {
  requestId: string;
  tabId: number | null;
  documentId: string | null;
  toolName: string | null;
  subjectHash: string | null;
  faculty: Faculty;
  operation: string | null;
}

/**
 * An outcome-unknown block: the broker refuses further calls of `subject` in
 * that document of that tab until a new discovery of the tab (which the
 * broker records as a `discovered` receipt, and which ends the block here too).
 */
export interface OutcomeUnknownBlock {
  /** The faculty of the request: only that faculty's look lifts the block. */
  faculty: Faculty;
  tabId: number;
  documentId: string;
  /** The tool name, or the subject hash for a faculty without tool names. */
  subject: string;
  /** The newest request whose outcome is unknown for this (tab, document, subject). */
  requestId: string;
}

/** What `recoverAtStart` did and found. */
export interface RecoveryReport {
  /** Dispatched requests now recorded as outcome-unknown (oldest first). */
  outcomeUnknown: RecoveredUnknown[];
  /** Request ids now recorded as cancelled (oldest first). */
  cancelled: string[];
  /** Every outcome-unknown block still standing, from earlier runs and this one (oldest first, one per key). */
  blocks: OutcomeUnknownBlock[];
}

/** Options of `recoverAtStart`. */
export interface RecoveryOptions {
  /** Clock, ms since the epoch, for `maxBlockAgeMs`. Default Date.now. (Receipt times come from the ledger's own clock.) */
  now?: () => number;
  /**
   * Requests (for open ones) and outcome-unknown receipts (for blocks) looked
   * back at, newest first. Default RECOVERY_LOOKBACK (10,000); at most
   * MAX_RECOVERY_LOOKBACK (100,000).
   */
  lookback?: number;
  /**
   * Leave out blocks whose outcome-unknown receipt is older than this (ms).
   * Default: no age limit (a block of a document that no longer exists is
   * harmless: Chrome's documentIds are never reused).
   */
  maxBlockAgeMs?: number;
}

const CONSOLE = { kind: 'console' } as const;

/** The request fields every receipt of a request repeats (the broker's trail). */
function requestFields(r: Receipt): Omit<ReceiptInput, 'event' | 'actor' | 'detail'> {
  return {
    requestId: r.requestId,
    faculty: r.faculty,
    origin: r.origin,
    tabId: r.tabId,
    frameId: r.frameId,
    documentId: r.documentId,
    toolName: r.toolName,
    descriptorHash: r.descriptorHash,
    argumentsHash: r.argumentsHash,
    operation: r.operation,
    subjectHash: r.subjectHash,
  };
}

/**
 * Close what the previous run left open and list the outcome-unknown blocks
 * that still stand. Call once at start, before the broker takes agent calls
 * (a request opened meanwhile would look abandoned). All receipts are written
 * in one transaction (`appendBatch`), so a crash during recovery leaves either
 * all of them or none, and the next start does the same work again.
 * @returns the report; `blocks` is what the broker must enforce.
 * @throws what `Ledger.appendBatch` throws (LedgerStateError when closed or
 *   read-only; SqliteError on a disk failure): the caller should then treat
 *   the ledger as unavailable, as for any failed write.
 */
export function recoverAtStart(ledger: Ledger, opts: RecoveryOptions = {}): RecoveryReport {
  const lookback = opts.lookback ?? RECOVERY_LOOKBACK;
  const outcomeUnknown: RecoveredUnknown[] = [];
  const cancelled: string[] = [];
  const writes: ReceiptInput[] = [];
  for (const last of ledger.openRequests(lookback)) {
    const requestId = last.requestId;
    if (requestId === null) continue; // openRequests selects by request id; never null
    const fields = requestFields(last);
    if (last.event === 'dispatched') {
      writes.push({ ...fields, event: 'outcome-unknown', actor: CONSOLE, detail: { reason: RESTART_OUTCOME_REASON } });
      outcomeUnknown.push({
        requestId,
        tabId: last.tabId,
        documentId: last.documentId,
        toolName: last.toolName,
        subjectHash: last.subjectHash,
        faculty: last.faculty,
        operation: last.operation,
      });
    } else {
      const reason = last.event === 'requested' ? RESTART_CANCEL_UNANSWERED_REASON : RESTART_CANCEL_REASON;
      writes.push({ ...fields, event: 'cancelled', actor: CONSOLE, detail: { reason } });
      cancelled.push(requestId);
    }
  }
  if (writes.length > 0) ledger.appendBatch(writes);
  return { outcomeUnknown, cancelled, blocks: standingBlocks(ledger, lookback, opts) };
}

/** The blocks of every outcome-unknown receipt that still stands, one per (tab, document, subject), newest request kept. */
function standingBlocks(ledger: Ledger, lookback: number, opts: RecoveryOptions): OutcomeUnknownBlock[] {
  const oldest = opts.maxBlockAgeMs === undefined ? -Infinity : (opts.now ?? Date.now)() - opts.maxBlockAgeMs;
  const byKey = new Map<string, OutcomeUnknownBlock>();
  for (const u of ledger.unresolvedOutcomeUnknowns(lookback)) {
    // The tab must be on the receipt itself: it is what a later discovery is matched against.
    if (u.time < oldest || u.requestId === null || u.tabId === null) continue;
    const f = u.documentId !== null && (u.toolName ?? u.subjectHash) !== null ? u : fillFromRequest(ledger, u.requestId, u);
    const subject = f.toolName ?? f.subjectHash;
    // Without a document and a subject the broker could not match a call to the
    // block; it never dispatches without both.
    if (f.documentId === null || subject === null) continue;
    const key = JSON.stringify([u.faculty, u.tabId, f.documentId, subject]);
    byKey.delete(key); // re-insert so that the order stays oldest first by the newest request
    byKey.set(key, { faculty: u.faculty, tabId: u.tabId, documentId: f.documentId, subject, requestId: u.requestId });
  }
  return [...byKey.values()];
}

/**
 * An outcome-unknown receipt missing its document or subject (written by code
 * that did not repeat every field): take them from the newest receipt of the
 * same request that has them. One indexed page of the request's receipts.
 */
function fillFromRequest(ledger: Ledger, requestId: string, u: Receipt): Pick<Receipt, 'documentId' | 'toolName' | 'subjectHash'> {
  const out = { documentId: u.documentId, toolName: u.toolName, subjectHash: u.subjectHash };
  for (const r of ledger.query({ requestId, limit: 100 }).receipts) {
    out.documentId ??= r.documentId;
    out.toolName ??= r.toolName;
    out.subjectHash ??= r.subjectHash;
  }
  return out;
}
