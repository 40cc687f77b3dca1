/**
 * `request_status`: how one request stands, read from its receipts in the ledger (issue 8 item 4:
 * an agent whose call on a waiting form ended, timed out on its side, or was dropped can learn how
 * it ended). The receipts are the single record: nothing else is kept.
 */
import { isOutcomeEvent, type OutcomeEvent, type Receipt, type ReceiptEvent } from '../../../shared/receipt';

/** At most this many receipts of one request are read (a request writes about eight). */
export const MAX_STATUS_RECEIPTS = 50;

/** One request's state as its receipts tell it. `detail` values may quote the page: UNTRUSTED. */
export interface RequestStatus {
  requestId: string;
  /** `ended` once an outcome receipt (OUTCOME_EVENTS) was written; else `in-progress` (e.g. waiting for approval or for the person's submit). */
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
  const last = [...mine].reverse().find((r) => isOutcomeEvent(r.event));
  const first = mine[0] as Receipt;
  const code = (last?.detail as { code?: unknown; reason?: unknown } | undefined)?.code ?? (last?.detail as { reason?: unknown } | undefined)?.reason;
  return {
    requestId,
    state: last ? 'ended' : 'in-progress',
    ...(last ? { outcome: last.event as OutcomeEvent } : {}),
    ...(typeof code === 'string' ? { code: code.slice(0, 64) } : {}),
    toolName: mine.find((r) => r.toolName)?.toolName ?? first.toolName ?? null,
    origin: mine.find((r) => r.origin)?.origin ?? null,
    events: mine.map((r) => ({ event: r.event, time: r.time, receiptId: r.id })),
    ...(last ? { detail: last.detail } : {}),
  };
}
