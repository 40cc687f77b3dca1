/**
 * Receipts reach the console's UI in batches (issue 9 item 3).
 *
 * One pushed event per receipt meant one WebSocket frame or IPC message, and
 * one re-render, per receipt: under an agent flood that was most of the
 * console's own work (a CPU profile of the flood bench put more time in the
 * web host's socket writes of receipt events than in the ledger). Receipts are
 * gathered and pushed together: at most one event per `intervalMs`, and at
 * once when `maxBatch` are waiting, so memory stays bounded. Approvals are not
 * batched: the dialog shows without this delay.
 */
import type { Receipt } from '../../shared/receipt';

/** The longest a receipt waits before it is pushed to the UI (ms): below what a person notices in a timeline. */
export const RECEIPT_BATCH_MS = 25;
/** The most receipts in one pushed event: a full batch goes at once. */
export const RECEIPT_BATCH_MAX = 200;

/**
 * Gather the receipts `subscribe` reports and hand them to `deliver` in order,
 * in batches of 1..maxBatch, each receipt within `intervalMs` of its append.
 * @returns the stop function: it delivers what is waiting, then unsubscribes.
 */
export function batchReceiptEvents(
  subscribe: (listener: (r: Receipt) => void) => () => void,
  deliver: (receipts: Receipt[]) => void,
  o: { intervalMs?: number; maxBatch?: number } = {},
): () => void {
  const intervalMs = o.intervalMs ?? RECEIPT_BATCH_MS;
  const maxBatch = o.maxBatch ?? RECEIPT_BATCH_MAX;
  let waiting: Receipt[] = [];
  let timer: NodeJS.Timeout | null = null;
  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = null;
    if (waiting.length === 0) return;
    const batch = waiting;
    waiting = [];
    deliver(batch);
  };
  const unsubscribe = subscribe((r) => {
    waiting.push(r);
    if (waiting.length >= maxBatch) flush();
    else if (!timer) {
      timer = setTimeout(flush, intervalMs);
      timer.unref?.();
    }
  });
  return () => {
    unsubscribe();
    flush();
  };
}
