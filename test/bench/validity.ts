/**
 * Whether an agent benchmark run measured the real path (issue 7, item 10): a
 * call that was fast because it skipped a check proves nothing. Pure: the agent
 * bench (agent.bench.ts) reads the inputs from the extension's check counters
 * (extension/src/background/stats.ts, through `echoConsole.stats()`) and from
 * the console's ledger; test/unit/bench-validity.test.ts covers each way to fail.
 */

/** The receipts every approved, successful invoke must have in the ledger (src/shared/receipt.ts RECEIPT_EVENTS). */
export const RECEIPTS_PER_CALL = ['requested', 'validated', 'approval-shown', 'approved', 'dispatched', 'succeeded'] as const;

/**
 * The effects of each call that wait for the ledger's fsync (docs/ledger.md, "Durability"): every
 * receipt written before each is on disk first. Each follows new receipts, so each takes its own
 * fsync of the log: a call must have at least this many completed fsyncs.
 */
export const DURABLE_EFFECTS_PER_CALL = ['the dialog (after approval-shown)', 'the dispatch (after dispatched)', 'the answer (after succeeded)'] as const;

/** SQLite's `PRAGMA synchronous` value for NORMAL, the least the ledger may run with (sqlite.org/pragma.html#pragma_synchronous). */
export const SYNCHRONOUS_NORMAL = 1;

/** The ledger's durability during one call (Ledger.durabilityCounts, after − before and at the answer). */
export interface CallDurability {
  /** fsyncs of the log completed during the call. */
  fsyncs: number;
  /** Commits not yet on disk when the answer reached the agent (must be 0). */
  pendingAtAnswer: number;
}

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
  /**
   * The counters read right after each call (outside its timing), one per entry of
   * `requestIds`; null when unreadable. Each call must move every counter by at
   * least one on its own: a total of one per call could also come from one call
   * counting twice while another skipped a check.
   */
  perCall: ReadonlyArray<CheckCounters | null>;
  /** The receipt events the ledger holds for a request. */
  eventsOf(requestId: string): readonly string[];
  /** `PRAGMA synchronous` of the ledger's own connection; null when unreadable. */
  synchronous: number | null;
  /**
   * The ledger's durability during each call, one per entry of `requestIds`: at least
   * DURABLE_EFFECTS_PER_CALL.length fsyncs, and nothing pending at the answer.
   */
  durabilityPerCall: ReadonlyArray<CallDurability | null>;
}

export interface Validity {
  calls: number;
  /** after − before for each counter (null when unreadable); each must be ≥ calls. */
  counters: Record<keyof CheckCounters, number | null>;
  /** Calls after which some counter had not moved since the call before (or was unreadable). */
  callsShortOfACheck: number;
  /** Up to 5 of those: the call's index (warm-up included), its requestId and the checks it did not count. */
  shortCalls: Array<{ index: number; requestId: string | null; missing: Array<keyof CheckCounters> }>;
  requestsWithAllReceipts: number;
  /** Up to 5 requests short of a receipt, with what they miss. */
  incomplete: Array<{ requestId: string | null; missing: string[] }>;
  ledgerSynchronous: number | null;
  /** Calls with fewer fsyncs than DURABLE_EFFECTS_PER_CALL, or a receipt not on disk at the answer (or none readable). */
  callsShortOfASync: number;
  /** True only when there were calls, every call moved every counter, waited for its fsyncs and answered with nothing pending, every request has every receipt, and synchronous is at least NORMAL. */
  valid: boolean;
}

/** Judge one run. Never throws for short or missing figures: it answers `valid: false`. */
export function judgeValidity(input: ValidityInput): Validity {
  const calls = input.requestIds.length;
  const { before, after } = input;
  const delta = (k: keyof CheckCounters): number | null => (before && after ? after[k] - before[k] : null);
  const counters = { rediscoveries: delta('rediscoveries'), macChecks: delta('macChecks'), nonceChecks: delta('nonceChecks') };
  const CHECKS = ['rediscoveries', 'macChecks', 'nonceChecks'] as const;
  let short = 0;
  const shortCalls: Validity['shortCalls'] = [];
  for (let i = 0; i < calls; i++) {
    const prev = i === 0 ? before : (input.perCall[i - 1] ?? null);
    const cur = input.perCall[i] ?? null;
    const missing = CHECKS.filter((k) => !prev || !cur || !(cur[k] - prev[k] >= 1));
    if (missing.length === 0) continue;
    short++;
    if (shortCalls.length < 5) shortCalls.push({ index: i, requestId: input.requestIds[i] ?? null, missing });
  }
  let withAll = 0;
  const incomplete: Validity['incomplete'] = [];
  for (const id of input.requestIds) {
    const have = new Set(id === null ? [] : input.eventsOf(id));
    const missing = RECEIPTS_PER_CALL.filter((e) => !have.has(e));
    if (missing.length === 0) withAll++;
    else if (incomplete.length < 5) incomplete.push({ requestId: id, missing });
  }
  const countersOk = Object.values(counters).every((v) => v !== null && v >= calls);
  let shortOfSync = 0;
  for (let i = 0; i < calls; i++) {
    const d = input.durabilityPerCall[i];
    if (!d || !(d.fsyncs >= DURABLE_EFFECTS_PER_CALL.length) || d.pendingAtAnswer !== 0) shortOfSync++;
  }
  return {
    calls,
    counters,
    callsShortOfACheck: short,
    shortCalls,
    requestsWithAllReceipts: withAll,
    incomplete,
    ledgerSynchronous: input.synchronous,
    callsShortOfASync: shortOfSync,
    valid: calls > 0 && countersOk && short === 0 && shortOfSync === 0 && withAll === calls && input.synchronous !== null && input.synchronous >= SYNCHRONOUS_NORMAL,
  };
}

/**
 * The counter probe: three dispatches sent straight to the service worker
 * (`echoConsole.handleRequest`) after the measured calls, showing that each
 * counter moves at its own check and nowhere else (so "one per call" means the
 * check ran, not merely that a request arrived): a grant with a broken MAC is
 * refused at the MAC check; a good grant runs every check; the same request
 * again is refused at the nonce check, before the rediscovery.
 */
export const PROBE_EXPECTED: Readonly<Record<ProbeStep, { outcome: string; refusal?: string; delta: CheckCounters }>> = {
  'bad-mac': { outcome: 'refused', refusal: 'grant-invalid', delta: { rediscoveries: 0, macChecks: 1, nonceChecks: 0 } },
  fresh: { outcome: 'succeeded', delta: { rediscoveries: 1, macChecks: 1, nonceChecks: 1 } },
  replay: { outcome: 'refused', refusal: 'grant-reused', delta: { rediscoveries: 0, macChecks: 1, nonceChecks: 1 } },
};

/** The probe's steps, in the order they are sent. */
export type ProbeStep = 'bad-mac' | 'fresh' | 'replay';

/** What one probe step observed: the InvocationResult's outcome and refusal, and the counters' change (null when unreadable). */
export interface ProbeObservation {
  outcome: string | null;
  refusal?: string;
  delta: CheckCounters | null;
}

/** Judge the probe: `ok` only when every step was observed exactly as PROBE_EXPECTED says. Never throws. */
export function judgeProbe(seen: Partial<Record<ProbeStep, ProbeObservation>>): { ok: boolean; seen: Partial<Record<ProbeStep, ProbeObservation>> } {
  const ok = (Object.keys(PROBE_EXPECTED) as ProbeStep[]).every((step) => {
    const want = PROBE_EXPECTED[step];
    const got = seen[step];
    if (!got || !got.delta || got.outcome !== want.outcome || (got.refusal ?? undefined) !== want.refusal) return false;
    return (Object.keys(want.delta) as Array<keyof CheckCounters>).every((k) => got.delta?.[k] === want.delta[k]);
  });
  return { ok, seen };
}
