/**
 * The one request / response / cancel / timeout multiplexer of the link, per
 * connection. The console uses the calling half (`call`, `settle`, `failAll`),
 * the extension the serving half (`serve`, `abortAll`); both halves follow the
 * same rules (docs/link.md "Heartbeat, requests, reconnects"):
 *   - a call never throws: it answers the response, or `timeout`, `aborted`,
 *     `too-large` (could not be sent) or `link-down` (the connection ended);
 *   - on abort or timeout the peer is sent `request{op:'cancel', requestId}`,
 *     whose own answer is dropped quietly; the serving half aborts that
 *     request's AbortSignal;
 *   - nothing is ever replayed: `failAll` / `abortAll` end everything in flight,
 *     and a handler's answer after that is discarded.
 */
import type { ConsoleRequest } from '../protocol';
import { err, toErrorInfo, type ErrorInfo, type Result } from '../result';

/** Options of `LinkMux`. */
export interface LinkMuxOptions {
  /** Put `request{id, request}` on the wire; `false` when it cannot be sent (too large, closed). */
  sendRequest(id: string, request: ConsoleRequest): boolean;
  /** Put `response{id, result}` on the wire (the adapter validates it and answers too-large itself). */
  sendResponse(id: string, result: Result<unknown>): void;
  /** A fresh request id (FORMATS.requestId). */
  newId(): string;
  /** Check a successful answer's value for its op; an invalid one answers `bad-message`. Default: accept. */
  checkValue?(op: ConsoleRequest['op'], value: unknown): Result<unknown>;
  /** The peer's answer to `op` was invalid (the console tells the extension `bad-message`). */
  onInvalidValue?(op: ConsoleRequest['op'], message: string): void;
}

interface Pending {
  op: ConsoleRequest['op'];
  finish(r: Result<unknown>): void;
}

/** The multiplexer of one connection. */
export class LinkMux {
  private readonly pending = new Map<string, Pending>();
  /** Ids of our cancel requests, whose answers are dropped quietly (bounded). */
  private readonly ignored = new Set<string>();
  private readonly inflight = new Map<string, AbortController>();
  private closed = false;

  constructor(private readonly o: LinkMuxOptions) {}

  /** Requests waiting for an answer (calling half). */
  get pendingCount(): number {
    return this.pending.size;
  }

  /**
   * Send one request and wait for its answer (never throws).
   * @param timeoutMs how long to wait (ms) before `timeout` (the peer is asked to cancel).
   */
  call(req: ConsoleRequest, opts: { signal?: AbortSignal; timeoutMs: number }): Promise<Result<unknown>> {
    if (this.closed) return Promise.resolve(err('link-down', 'The extension is not connected.'));
    if (opts.signal?.aborted) return Promise.resolve(err('aborted', 'The request was aborted before it was sent.'));
    const id = this.o.newId();
    return new Promise((resolve) => {
      let settled = false;
      const finish = (r: Result<unknown>): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        opts.signal?.removeEventListener('abort', onAbort);
        this.pending.delete(id);
        resolve(r);
      };
      const onAbort = (): void => {
        this.cancel(id, req.op);
        finish(err('aborted', 'The request was aborted; the extension was asked to cancel it.'));
      };
      const timer = setTimeout(() => {
        this.cancel(id, req.op);
        finish(err('timeout', `No answer from the extension within ${opts.timeoutMs} ms.`));
      }, opts.timeoutMs);
      this.pending.set(id, { op: req.op, finish });
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      if (!this.o.sendRequest(id, req)) finish(err('too-large', 'The request does not fit in one link message.'));
    });
  }

  /**
   * The peer answered request `id`. Returns `false` when no such request is waiting
   * (finished, timed out, or never sent): such an answer is dropped.
   */
  settle(id: string, result: Result<unknown>): boolean {
    if (this.ignored.delete(id)) return true;
    const p = this.pending.get(id);
    if (!p) return false;
    if (!result.ok || !this.o.checkValue) {
      p.finish(result);
      return true;
    }
    const checked = this.o.checkValue(p.op, result.value);
    if (!checked.ok) {
      this.o.onInvalidValue?.(p.op, checked.error.message);
      p.finish(err('bad-message', `The extension answered ${p.op} with an invalid value: ${checked.error.message}`));
      return true;
    }
    p.finish(checked);
    return true;
  }

  /** The connection ended: every waiting call answers `error` (default `link-down`); later calls too. */
  failAll(error: ErrorInfo = { code: 'link-down', message: 'The link to the extension dropped before it answered; the request was not replayed and its outcome is unknown.' }): void {
    this.closed = true;
    for (const p of [...this.pending.values()]) p.finish({ ok: false, error });
  }

  private cancel(requestId: string, op: ConsoleRequest['op']): void {
    if (op === 'cancel' || this.closed) return;
    const id = this.o.newId();
    this.ignored.add(id);
    if (this.ignored.size > 1000) this.ignored.delete(this.ignored.values().next().value as string);
    this.o.sendRequest(id, { op: 'cancel', requestId });
  }

  /**
   * Serve one request from the peer. `cancel` is handled here (it aborts that
   * request's signal and is never passed on); the others run concurrently
   * through `handler`, whose answer is sent unless the connection ended first.
   * A throwing handler answers `{ok:false, error:{code:'internal'}}`.
   */
  serve(id: string, req: ConsoleRequest, handler: (req: ConsoleRequest, ctx: { requestId: string; signal: AbortSignal }) => Promise<Result<unknown>>): void {
    if (this.closed) return;
    if (req.op === 'cancel') {
      const ac = this.inflight.get(req.requestId);
      ac?.abort();
      this.o.sendResponse(id, { ok: true, value: { cancelled: !!ac } });
      return;
    }
    const ac = new AbortController();
    this.inflight.set(id, ac);
    void (async () => {
      let result: Result<unknown>;
      try {
        result = await handler(req, { requestId: id, signal: ac.signal });
      } catch (e) {
        result = { ok: false, error: toErrorInfo(e) };
      }
      this.inflight.delete(id);
      // A dropped link discards the answer: the caller already failed it with link-down.
      if (this.closed) return;
      this.o.sendResponse(id, result);
    })();
  }

  /** The connection ended: abort every handler in flight; their answers are discarded. */
  abortAll(): void {
    this.closed = true;
    for (const ac of this.inflight.values()) ac.abort();
    this.inflight.clear();
  }
}
