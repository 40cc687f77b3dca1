/**
 * Pending approval requests: one per agent request, each with its own expiry
 * (docs/design.md, "Request lifecycle"). The queue only holds and settles them; the
 * broker writes the receipts. Invariants:
 *  - each request settles exactly once (approved, denied, expired or cancelled);
 *  - a decision names one requestId and settles only that request, so one
 *    approval can never release another request;
 *  - deciding an unknown or already-settled request is an error.
 */
import type { ApprovalView } from '../../../shared/ipc';
import { err, ok, type Result } from '../../../shared/result';

/** How one approval request ended. */
export type ApprovalDecision =
  | { kind: 'approved' }
  | { kind: 'denied'; reason?: string }
  | { kind: 'expired' }
  | { kind: 'cancelled'; by: 'agent' | 'person' | 'console'; reason: string }
  /** The console refused the request while it waited (e.g. code `navigated`: its document is gone). */
  | { kind: 'refused'; code: string; reason: string };

/** A denial reason is person-written text the agent will see; bounded (chars). */
export const MAX_DENIAL_REASON_CHARS = 500;

interface Pending {
  view: ApprovalView;
  settle: (d: ApprovalDecision) => void;
  timer: ReturnType<typeof setTimeout>;
}

export class ApprovalQueue {
  private readonly pending = new Map<string, Pending>();
  private readonly listeners = new Set<(views: ApprovalView[]) => void>();

  /**
   * Show `view` (in creation order) and wait for its decision. Expires at
   * `view.expiresAt` (ms since the epoch). Aborting `signal` cancels it (`by: 'agent'`).
   */
  request(view: ApprovalView, signal?: AbortSignal): Promise<ApprovalDecision> {
    return new Promise<ApprovalDecision>((resolve) => {
      if (this.pending.has(view.requestId)) {
        resolve({ kind: 'cancelled', by: 'console', reason: 'duplicate request id' });
        return;
      }
      const onAbort = () => this.settle(view.requestId, { kind: 'cancelled', by: 'agent', reason: 'the agent cancelled the request' });
      const timer = setTimeout(() => this.settle(view.requestId, { kind: 'expired' }), Math.max(0, view.expiresAt - Date.now()));
      this.pending.set(view.requestId, {
        view,
        timer,
        settle: (d) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(d);
        },
      });
      if (signal?.aborted) {
        onAbort();
        return;
      }
      signal?.addEventListener('abort', onAbort, { once: true });
      this.emit();
    });
  }

  /**
   * The person's decision on one request.
   * @returns `unknown-request` when no such request is pending (never was,
   *   already decided, expired or cancelled).
   */
  decide(requestId: string, decision: 'approve' | 'deny', reason?: string): Result<null> {
    if (!this.pending.has(requestId)) {
      return err('unknown-request', `No pending approval request ${JSON.stringify(requestId.slice(0, 64))}: it was already decided, expired or cancelled, or never existed.`);
    }
    const trimmed = reason?.trim().slice(0, MAX_DENIAL_REASON_CHARS);
    this.settle(requestId, decision === 'approve' ? { kind: 'approved' } : { kind: 'denied', ...(trimmed ? { reason: trimmed } : {}) });
    return ok(null);
  }

  /** Cancel one pending request (e.g. its tab was unshared). False when not pending. */
  cancel(requestId: string, by: 'agent' | 'person' | 'console', reason: string): boolean {
    return this.settle(requestId, { kind: 'cancelled', by, reason });
  }

  /**
   * Pending requests, oldest first. Deep copies: the UI gets plain data, and no
   * consumer can change the arguments, schema or tab another one is shown.
   */
  list(): ApprovalView[] {
    return [...this.pending.values()].map((p) => structuredClone(p.view));
  }

  /** Listen to the pending list changing; returns the unsubscribe function. */
  onChange(listener: (views: ApprovalView[]) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Refuse one pending request on the console's own authority, with a refusal
   * code the agent and the receipt carry (e.g. `navigated`). False when not pending.
   */
  refuse(requestId: string, code: string, reason: string): boolean {
    return this.settle(requestId, { kind: 'refused', code, reason });
  }

  /** Cancel everything (console shutdown). */
  cancelAll(reason: string): void {
    for (const id of [...this.pending.keys()]) this.settle(id, { kind: 'cancelled', by: 'console', reason });
  }

  private settle(requestId: string, d: ApprovalDecision): boolean {
    const p = this.pending.get(requestId);
    if (!p) return false;
    this.pending.delete(requestId);
    clearTimeout(p.timer);
    p.settle(d);
    this.emit();
    return true;
  }

  private emit(): void {
    const views = this.list();
    for (const l of this.listeners) {
      try {
        l(views);
      } catch {
        /* a listener's failure must not break the queue */
      }
    }
  }
}
