/**
 * `request_status`: how one request stands, read from its receipts in the ledger (issue 8 item 4:
 * an agent whose call on a waiting form ended, timed out on its side, or was dropped can learn how
 * it ended). The receipts are the single record: nothing else is kept.
 */
import { outcomeOf, type OutcomeEvent, type Receipt, type ReceiptEvent } from '../../../shared/receipt';

/** At most this many receipts of one request are read (a request writes about eight). */
export const MAX_STATUS_RECEIPTS = 50;

/** One request's state as its receipts tell it. `detail` values may quote the page: UNTRUSTED. */
export interface RequestStatus {
  requestId: string;
  /**
   * `ended` once its receipts have an outcome (`outcomeOf`, src/shared/receipt.ts: an OUTCOME_EVENTS
   * receipt, or an ending one such as a discovery's `discovered`); else `in-progress` (e.g. waiting
   * for approval or for the person's submit).
   */
  state: 'in-progress' | 'ended';
  /** The outcome, once ended. */
  outcome?: OutcomeEvent;
  /** The code the outcome carries (e.g. `form-wait-timeout`, `form-cancelled`, `denied`), when it has one. */
  code?: string;
  toolName: string | null;
  origin: string | null;
  /** Every receipt's event and time (ms since the epoch), oldest first. */
  events: Array<{ event: ReceiptEvent; time: number; receiptId: string }>;
  /** The outcome receipt's detail (UNTRUSTED where it quotes the page). */
  detail?: unknown;
}

/** The status of `requestId` from its receipts (any order); `null` when there are none. */
export function statusOf(requestId: string, receipts: readonly Receipt[]): RequestStatus | null {
  const mine = receipts.filter((r) => r.requestId === requestId).sort((a, b) => a.seq - b.seq);
  if (mine.length === 0) return null;
  const outcome = outcomeOf(mine.map((r) => r.event));
  // The receipt that ended it: the newest outcome or ending event (`outcomeOf`'s rule).
  const last = outcome === null ? undefined : [...mine].reverse().find((r) => outcomeOf([r.event]) !== null);
  const first = mine[0] as Receipt;
  const code = (last?.detail as { code?: unknown; reason?: unknown } | undefined)?.code ?? (last?.detail as { reason?: unknown } | undefined)?.reason;
  return {
    requestId,
    state: outcome ? 'ended' : 'in-progress',
    ...(outcome ? { outcome } : {}),
    ...(typeof code === 'string' ? { code: code.slice(0, 64) } : {}),
    toolName: mine.find((r) => r.toolName)?.toolName ?? first.toolName ?? null,
    origin: mine.find((r) => r.origin)?.origin ?? null,
    events: mine.map((r) => ({ event: r.event, time: r.time, receiptId: r.id })),
    ...(last ? { detail: last.detail } : {}),
  };
}
