/**
 * Whether an agent benchmark run measured the real path (issue 7, item 10): a
 * call that was fast because it skipped a check proves nothing. Pure: the agent
 * bench (agent.bench.ts) reads the inputs from the extension's check counters
 * (extension/src/background/stats.ts, through `echoConsole.stats()`) and from
 * the console's ledger; test/unit/bench-validity.test.ts covers each way to fail.
 */

/** The receipts every approved, successful invoke must have in the ledger (src/shared/receipt.ts RECEIPT_EVENTS). */
export const RECEIPTS_PER_CALL = ['requested', 'validated', 'approval-shown', 'approved', 'dispatched', 'succeeded'] as const;

/** SQLite's `PRAGMA synchronous` value for FULL (sqlite.org/pragma.html#pragma_synchronous). */
export const SYNCHRONOUS_FULL = 2;

/** The extension's check counters: calls since its service worker started. */
export interface CheckCounters {
  rediscoveries: number;
  macChecks: number;
  nonceChecks: number;
}

export interface ValidityInput {
  /** One entry per agent call (warm-up included), in order; null when the call's requestId was never seen. */
  requestIds: ReadonlyArray<string | null>;
  /** The counters before the first call and after the last; null when unreadable (e.g. an extension without `stats()`). */
  before: CheckCounters | null;
  after: CheckCounters | null;
  /** The receipt events the ledger holds for a request. */
  eventsOf(requestId: string): readonly string[];
  /** `PRAGMA synchronous` of the ledger's own connection; null when unreadable. */
  synchronous: number | null;
}

export interface Validity {
  calls: number;
  /** after − before for each counter (null when unreadable); each must be ≥ calls. */
  counters: Record<keyof CheckCounters, number | null>;
  requestsWithAllReceipts: number;
  /** Up to 5 requests short of a receipt, with what they miss. */
  incomplete: Array<{ requestId: string | null; missing: string[] }>;
  ledgerSynchronous: number | null;
  /** True only when there were calls, every counter grew by at least one per call, every request has every receipt, and synchronous is FULL. */
  valid: boolean;
}

/** Judge one run. Never throws for short or missing figures: it answers `valid: false`. */
export function judgeValidity(input: ValidityInput): Validity {
  const calls = input.requestIds.length;
  const { before, after } = input;
  const delta = (k: keyof CheckCounters): number | null => (before && after ? after[k] - before[k] : null);
  const counters = { rediscoveries: delta('rediscoveries'), macChecks: delta('macChecks'), nonceChecks: delta('nonceChecks') };
  let withAll = 0;
  const incomplete: Validity['incomplete'] = [];
  for (const id of input.requestIds) {
    const have = new Set(id === null ? [] : input.eventsOf(id));
    const missing = RECEIPTS_PER_CALL.filter((e) => !have.has(e));
    if (missing.length === 0) withAll++;
    else if (incomplete.length < 5) incomplete.push({ requestId: id, missing });
  }
  const countersOk = Object.values(counters).every((v) => v !== null && v >= calls);
  return {
    calls,
    counters,
    requestsWithAllReceipts: withAll,
    incomplete,
    ledgerSynchronous: input.synchronous,
    valid: calls > 0 && countersOk && withAll === calls && input.synchronous === SYNCHRONOUS_FULL,
  };
}
