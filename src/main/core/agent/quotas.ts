/**
 * Per-agent rate limits and quotas (issue 9 items 3 and 10): one agent token
 * must not be able to wedge the console, fill the person's approval queue or
 * push other agents out.
 *
 * Before, one token holder could send 131 calls/s and push the console UI's
 * latency from 2 ms to about 1 s, fill all 16 shared approval slots, and evict
 * other agents' MCP sessions. Now every agent token (issue 9 item 2: each
 * agent has its own) has its own budget:
 *
 * - `requests`: HTTP requests to the MCP endpoint, checked before the body is
 *   read (a token bucket: `requestsPerSecond` sustained, `requestBurst` at once);
 * - `calls`: `tools/call` messages (`callsPerSecond`, `callBurst`);
 * - `bytes`: request body bytes (`bytesPerSecond`, `byteBurst`);
 * - `maxPendingApprovals`: requests of this token waiting for the person at
 *   once, of the console's 16 (enforced by the broker's pipeline, which refuses
 *   the request `too-many-pending` with its own receipts);
 * - `maxSessions`: MCP sessions of this token at once, of the endpoint's 32
 *   (enforced by the endpoint: a token at its cap closes its own least recently
 *   used idle session, and at the global cap the token holding the most
 *   sessions gives one up, so one token cannot push the others out).
 *
 * A rate limit that bites gives the agent a clear error (HTTP 429 with
 * `Retry-After`, or a tool error with code `rate-limited`) and is receipted,
 * but boundedly: the first refusal of an episode writes one
 * `refused` receipt at once, and the refusals that follow within
 * `RECEIPT_WINDOW_MS` are counted and written as one more receipt when the
 * window closes. A flood of 400 calls/s thus writes at most two receipts per
 * second per token and limit, not 400 fsync'd ones.
 *
 * Token buckets as in RFC 2697's single-rate meter (a committed rate and a
 * burst size); time is `now()` in ms, injectable for tests.
 */

/** The budget of one agent token. Rates are per second; bytes are bytes. */
export interface AgentQuotaLimits {
  requestsPerSecond: number;
  requestBurst: number;
  callsPerSecond: number;
  callBurst: number;
  bytesPerSecond: number;
  byteBurst: number;
  /** Requests of one token waiting for the person at once. */
  maxPendingApprovals: number;
  /** MCP sessions of one token at once. */
  maxSessions: number;
}

/**
 * The defaults: far above what a person can review (an agent that needs more
 * than 10 calls a second is not waiting for anyone), far below what wedged the
 * console (131 calls/s from one token).
 */
export const AGENT_QUOTA_LIMITS: Readonly<AgentQuotaLimits> = Object.freeze({
  requestsPerSecond: 20,
  requestBurst: 40,
  callsPerSecond: 10,
  callBurst: 20,
  bytesPerSecond: 1024 * 1024,
  byteBurst: 4 * 1024 * 1024,
  maxPendingApprovals: 4,
  maxSessions: 8,
});

/** How long the refusals after an episode's first are gathered into one receipt (ms). */
export const RECEIPT_WINDOW_MS = 1000;

/** The metered kinds; each has its own bucket per token. */
export type QuotaKind = 'requests' | 'calls' | 'bytes';

/** A refusal to receipt: `count` refusals of `kind` for `token` (1 for an episode's first). */
export interface QuotaRefusal {
  token: AgentQuotaSubject;
  kind: QuotaKind;
  count: number;
  message: string;
}

/** The token as limits know it: a stable id and the name the person gave it. */
export interface AgentQuotaSubject {
  tokenId: string;
  tokenName: string;
}

/** What `take` answers: admitted, or refused with how long to wait (ms) and the agent's message. */
export type QuotaDecision = { ok: true } | { ok: false; retryAfterMs: number; message: string };

interface Bucket {
  level: number;
  at: number;
}

interface Episode {
  /** Refusals counted since the last receipt. */
  pending: number;
  timer: ReturnType<typeof setTimeout> | null;
  subject: AgentQuotaSubject;
  message: string;
}

/** Per-token buckets and bounded refusal receipts; see the file header. */
export class AgentQuotas {
  readonly limits: AgentQuotaLimits;
  private readonly buckets = new Map<string, Bucket>();
  private readonly episodes = new Map<string, Episode>();

  /**
   * @param receipt writes one receipt for a refusal (or a counted run of them); must not throw
   *   (errors are swallowed: the agent's answer still goes out).
   * @param limits overrides of AGENT_QUOTA_LIMITS.
   * @param now the clock in ms (default `Date.now`).
   */
  constructor(
    private readonly receipt: (r: QuotaRefusal) => void,
    limits: Partial<AgentQuotaLimits> = {},
    private readonly now: () => number = Date.now,
  ) {
    this.limits = { ...AGENT_QUOTA_LIMITS, ...limits };
  }

  /**
   * Take `amount` (1 for requests and calls; bytes for bytes) from `subject`'s
   * bucket of `kind`. Refused when the bucket holds less; a refusal takes
   * nothing and is receipted (boundedly, see the file header). An amount over
   * the burst counts as the whole burst, so it passes once the bucket is full.
   */
  take(subject: AgentQuotaSubject, kind: QuotaKind, amount = 1): QuotaDecision {
    const [rate, burst] = this.rateOf(kind);
    const need = Math.min(amount, burst);
    const key = `${subject.tokenId}\u0000${kind}`;
    const t = this.now();
    const b = this.buckets.get(key) ?? { level: burst, at: t };
    b.level = Math.min(burst, b.level + ((t - b.at) / 1000) * rate);
    b.at = t;
    this.buckets.set(key, b);
    if (b.level >= need) {
      b.level -= need;
      return { ok: true };
    }
    const retryAfterMs = Math.ceil(((need - b.level) / rate) * 1000);
    const unit = kind === 'bytes' ? 'bytes' : kind === 'calls' ? 'tool calls' : 'requests';
    const message =
      `Rate limit of agent token "${subject.tokenName}": at most ${rate} ${unit} per second (bursts of ${burst}). ` +
      `Try again in ${retryAfterMs} ms.`;
    this.refused(subject, kind, message);
    return { ok: false, retryAfterMs, message };
  }

  /** Forget a revoked token's buckets (its receipts already written stay). */
  forget(tokenId: string): void {
    for (const k of [...this.buckets.keys()]) if (k.startsWith(`${tokenId}\u0000`)) this.buckets.delete(k);
  }

  /** Write the counted refusals now and stop the timers (console shutdown). */
  flush(): void {
    for (const [key, e] of this.episodes) {
      if (e.timer) clearTimeout(e.timer);
      this.writeCounted(key, e);
    }
    this.episodes.clear();
  }

  private rateOf(kind: QuotaKind): [number, number] {
    const l = this.limits;
    if (kind === 'requests') return [l.requestsPerSecond, l.requestBurst];
    if (kind === 'calls') return [l.callsPerSecond, l.callBurst];
    return [l.bytesPerSecond, l.byteBurst];
  }

  private refused(subject: AgentQuotaSubject, kind: QuotaKind, message: string): void {
    const key = `${subject.tokenId}\u0000${kind}`;
    const open = this.episodes.get(key);
    if (open) {
      open.pending++;
      open.message = message;
      return;
    }
    this.write({ token: subject, kind, count: 1, message });
    const e: Episode = { pending: 0, timer: null, subject, message };
    e.timer = setTimeout(() => {
      this.episodes.delete(key);
      this.writeCounted(key, e);
    }, RECEIPT_WINDOW_MS);
    e.timer.unref?.();
    this.episodes.set(key, e);
  }

  private writeCounted(key: string, e: Episode): void {
    if (e.pending === 0) return;
    const kind = key.slice(key.indexOf('\u0000') + 1) as QuotaKind;
    this.write({ token: e.subject, kind, count: e.pending, message: `${e.pending} more refused in ${RECEIPT_WINDOW_MS} ms. ${e.message}` });
  }

  private write(r: QuotaRefusal): void {
    try {
      this.receipt(r);
    } catch {
      /* the ledger reports its own health; the agent's answer still goes out */
    }
  }
}
