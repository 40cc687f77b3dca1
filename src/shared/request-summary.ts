/**
 * The request timeline's row: one request (every receipt sharing a request id)
 * folded into one summary, and the filters the timeline pages it by
 * (docs/timeline.md). Pure code, used by the ledger's request index
 * (src/main/core/ledger/requests.ts), which folds each receipt in the same
 * transaction that appends it, and by the renderer's live tail, which folds the
 * receipts the console pushes into the rows it already shows: one fold, so both
 * always agree.
 */
import { RECEIPT_EVENTS, outcomeOf, type Actor, type Faculty, type OutcomeEvent, type ReceiptEvent } from './receipt';

/**
 * Who decided a request:
 * - `person`: the person approved or denied it in the console;
 * - `policy`: one of the person's policy rules approved it (src/shared/policy.ts);
 * - `console`: the console refused it by itself (a check, a limit) before anyone was asked;
 * - `timeout`: nobody answered and the approval expired.
 * null: nobody had to (a read the policy lets through without review), or not yet.
 */
export type Decider = 'person' | 'policy' | 'console' | 'timeout';

/** One row of the timeline: a request as its receipts tell it so far. */
export interface RequestSummary {
  requestId: string;
  /** Seq of the request's first receipt (unique: the row's key, with `time`). */
  seq: number;
  /** Time of the first receipt, ms since the epoch (the row's time). */
  time: number;
  /** Seq and time of its newest receipt. */
  lastSeq: number;
  lastTime: number;
  /** lastTime − time, ms: how long the request has taken so far (or took, once it has an outcome). */
  durationMs: number;
  /** The agent's token name (Actor.name of its first agent receipt): the person's word, never the client's. */
  agent: string | null;
  faculty: Faculty;
  /** The first operation any of its receipts names ('invoke', 'click', …). */
  operation: string | null;
  /** The first tool name any of its receipts names (WebMCP tools; semantic controls have none). */
  toolName: string | null;
  origin: string | null;
  tabId: number | null;
  /** Its outcome as `outcomeOf` (src/shared/receipt.ts) derives it from its receipts' events; null while it is still open. */
  outcome: OutcomeEvent | null;
  decidedBy: Decider | null;
  /** Number of receipts. */
  steps: number;
  /** Which RECEIPT_EVENTS its receipts hold: bit i is RECEIPT_EVENTS[i] (`hasEvent`). */
  events: number;
  /** The newest reason a receipt gave (a refusal's code and message, a denial's reason, …), at most REASON_INDEX_CHARS. */
  reason: string | null;
}

/** What the fold reads of one receipt. `detail` is called only for events that carry a reason. */
export interface FoldableReceipt {
  seq: number;
  time: number;
  requestId: string;
  event: ReceiptEvent;
  faculty: Faculty;
  origin: string | null;
  tabId: number | null;
  toolName: string | null;
  operation: string | null;
  actor: Actor;
  detail(): unknown;
}

/** Longest reason kept in a row (the receipt keeps all of it). */
export const REASON_INDEX_CHARS = 500;

/** Events whose receipt carries why (a refusal code and message, a person's reason, a failure). */
export const REASON_EVENTS: ReadonlySet<ReceiptEvent> = new Set<ReceiptEvent>([
  'refused',
  'denied',
  'failed',
  'outcome-unknown',
  'cancelled',
  'expired',
  'pairing-rejected',
  'link-disconnected',
  'readback-mismatch',
  'revert-mismatch',
]);

const EVENT_BIT = new Map<string, number>(RECEIPT_EVENTS.map((e, i) => [e, i]));

/** The bit of `event` in RequestSummary.events (its index in RECEIPT_EVENTS). */
export function eventBit(event: ReceiptEvent): number {
  return EVENT_BIT.get(event) as number;
}

/** Whether a request's `events` hold `event`. Arithmetic, not `&`: the mask may pass 31 bits. */
export function hasEvent(events: number, event: ReceiptEvent): boolean {
  return Math.floor(events / 2 ** eventBit(event)) % 2 === 1;
}

function withEvent(events: number, event: ReceiptEvent): number {
  return hasEvent(events, event) ? events : events + 2 ** eventBit(event);
}

const str = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v.trim() : null);

/**
 * Why, from a receipt's detail, in plain text (unbounded; the caller bounds it):
 * `code — message` (refusals, failures), the person's or the console's `reason`,
 * or what a denial or an expiry means. Null for events that carry no reason
 * (REASON_EVENTS), or when the detail says nothing.
 */
export function receiptReason(event: ReceiptEvent, detail: unknown): string | null {
  if (!REASON_EVENTS.has(event)) return null;
  const d = detail && typeof detail === 'object' && !Array.isArray(detail) ? (detail as Record<string, unknown>) : {};
  const inner = d.error && typeof d.error === 'object' ? (d.error as Record<string, unknown>) : {};
  const code = str(d.code) ?? str(inner.code);
  const message = str(d.message) ?? str(inner.message);
  const reason = str(d.reason);
  if (code && message) return `${code} — ${message}`;
  if (message) return message;
  if (code && reason) return `${code} — ${reason}`;
  if (reason) return reason;
  if (code) return code;
  if (event === 'denied') return 'Denied by the person (no reason given).';
  if (event === 'expired') return 'Nobody answered before the request expired.';
  return null;
}

function deciderOf(r: FoldableReceipt): Decider | null {
  if (r.event === 'approved' || r.event === 'denied') {
    if (r.actor.kind === 'person') return 'person';
    const d = r.detail();
    const byRule = d && typeof d === 'object' && 'byRule' in d;
    return byRule ? 'policy' : 'console';
  }
  if (r.event === 'expired') return 'timeout';
  if (r.event === 'refused') return 'console';
  return null;
}

/**
 * Fold one receipt into its request's row (`prev` null for the request's first
 * receipt). Receipts must come in seq order. The first value wins for agent,
 * operation, tool, origin and tab (what the request was about); the newest for
 * outcome (as `outcomeOf`: an outcome-unknown later lifted by a readback says the
 * latter; `discovered` ends a discovery as `succeeded`) and
 * reason; the first approval, denial or expiry for the decider (a console
 * refusal only while nobody decided).
 */
export function foldReceipt(prev: RequestSummary | null, r: FoldableReceipt): RequestSummary {
  const agent = r.actor.kind === 'agent' && typeof r.actor.name === 'string' ? r.actor.name : null;
  // The receipt's own outcome, if it has one (`outcomeOf` of this event alone; the newest wins below).
  const outcome = outcomeOf([r.event]);
  const why = REASON_EVENTS.has(r.event) ? receiptReason(r.event, r.detail()) : null;
  const reason = why === null ? null : why.length > REASON_INDEX_CHARS ? `${why.slice(0, REASON_INDEX_CHARS - 1)}…` : why;
  if (!prev) {
    return {
      requestId: r.requestId,
      seq: r.seq,
      time: r.time,
      lastSeq: r.seq,
      lastTime: r.time,
      durationMs: 0,
      agent,
      faculty: r.faculty,
      operation: r.operation,
      toolName: r.toolName,
      origin: r.origin,
      tabId: r.tabId,
      outcome,
      decidedBy: deciderOf(r),
      steps: 1,
      events: withEvent(0, r.event),
      reason,
    };
  }
  const decider = deciderOf(r);
  return {
    ...prev,
    lastSeq: r.seq,
    lastTime: r.time,
    durationMs: Math.max(0, r.time - prev.time),
    agent: prev.agent ?? agent,
    operation: prev.operation ?? r.operation,
    toolName: prev.toolName ?? r.toolName,
    origin: prev.origin ?? r.origin,
    tabId: prev.tabId ?? r.tabId,
    outcome: outcome ?? prev.outcome,
    decidedBy: prev.decidedBy === null || (prev.decidedBy === 'console' && decider !== null && decider !== 'console') ? (decider ?? prev.decidedBy) : prev.decidedBy,
    steps: prev.steps + 1,
    events: withEvent(prev.events, r.event),
    reason: reason ?? prev.reason,
  };
}

/** `RequestFilter.outcome`: an outcome event, or `open` for requests without one yet. */
export type RequestOutcomeFilter = OutcomeEvent | 'open';

/**
 * The timeline's filters; every one given must hold. Exact matches except `text`.
 * Which index serves which filter: docs/timeline.md.
 */
export interface RequestFilter {
  /** Inclusive bounds on the request's first receipt's time, ms since the epoch. */
  from?: number;
  to?: number;
  origin?: string;
  /** The agent's token name. */
  agent?: string;
  faculty?: Faculty;
  toolName?: string;
  outcome?: RequestOutcomeFilter;
  /** Requests holding at least one receipt of this event (e.g. `readback-mismatch`). */
  event?: ReceiptEvent;
  /** Case-insensitive substring (ASCII case folding, SQLite LIKE) of the tool name or the reason, 1–200 characters. */
  text?: string;
  /** One request, by id. */
  requestId?: string;
}

/** A page request: the filters, and where to continue. */
export interface RequestQuery extends RequestFilter {
  /** Opaque, from a previous page's `nextCursor` (older requests) ... */
  cursor?: string;
  /**
   * ... or from a page's `newestCursor`: the live tail, the requests that changed since it (a
   * receipt of theirs recorded after it: new ones, and those a later receipt brought to match
   * the filters), newest first in the timeline's order. By seq, the order of recording: a request
   * recorded after the clock stepped back is given too, although its time is older than the
   * newest shown.
   */
  after?: string;
  /** 1..500, default 100. */
  limit?: number;
}

/** One page of the timeline, newest first. */
export interface RequestPage {
  requests: RequestSummary[];
  /** Continue with `cursor` for older requests; null on the last page. */
  nextCursor: string | null;
  /**
   * On a first page or a tail: where the live tail goes on, past every receipt read (matching
   * or not). Pass it as `after` for what changed since. Null on older pages.
   */
  newestCursor: string | null;
  /** On a tail: more changed than one page holds; ask again with `newestCursor`. */
  more?: true;
}

/** The deep link to one request in the console's timeline (a URL fragment; docs/timeline.md). */
export function requestLink(requestId: string): string {
  return `#/timeline?request=${encodeURIComponent(requestId)}`;
}

/** The deep link to one receipt: its request's row, opened at that receipt. */
export function receiptLink(receiptId: string): string {
  return `#/receipt/${encodeURIComponent(receiptId)}`;
}
