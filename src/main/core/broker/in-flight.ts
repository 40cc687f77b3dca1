/**
 * The requests in flight, and the one place that stops them (issue 12 item 5,
 * "Stop, and a kill switch"; docs/stop.md).
 *
 * Every reviewed action of every faculty registers here as it starts
 * (`Pipeline.action`, ./pipeline.ts: WebMCP invoke, the semantic controls, Live
 * Patch, raw JavaScript — whatever runs through the pipeline) and leaves when
 * its request has ended. The pipeline tells the registry which phase the
 * request is in; `stop(requestId)` then does what that phase allows:
 *
 *  - `resolving` / `approved` (before dispatch): the request is marked; the
 *    pipeline checks the mark before the person is asked and again right
 *    before the dispatch, and ends the request `cancelled` (actor: the person);
 *  - `awaiting-approval`: the pending approval is cancelled by the person
 *    (`cancelled`; Stop everything *denies* pending requests instead, before
 *    it stops the rest);
 *  - `dispatched`: the dispatch's own AbortController is aborted: the console
 *    stops waiting at once, the link asks the extension to cancel (which aborts
 *    `executeTool`'s signal, or the content script's work), and the pipeline
 *    records `outcome-unknown` (reason `stopped-by-person`), because the page's
 *    own code may still run (docs/browser-facts.md: aborting the signal
 *    rejects `executeTool` with AbortError even when `execute` never settles,
 *    but nothing stops the page's own script).
 *
 * "Stop everything" (src/main/core/stop.ts) stops every entry through
 * `stopAll`: a faculty that runs outside the pipeline must `begin` here too, or
 * the kill switch cannot reach it.
 *
 * Reads (discover, snapshot, wait, …) are not registered: they change nothing
 * on the page, end within their own bound, and end at once when the agent's
 * session closes (which Stop everything does).
 */
import type { Faculty } from '../../../shared/receipt';
import type { InFlightPhase, InFlightView } from '../../../shared/ipc';
import { err, ok, type Result } from '../../../shared/result';

export type { InFlightPhase, InFlightView } from '../../../shared/ipc';

/** Why a request was stopped: the person's Stop on it, or their Stop everything. */
export type StopCause = 'stop' | 'stop-everything';

/** What `stop` did to one request. */
export interface StopResult {
  requestId: string;
  /** The phase it was in when stopped. */
  phase: InFlightPhase;
  /** The shared tab it acts in: after dispatch the person is offered a reload of it. */
  tabId: number;
  /** True when the dispatch had begun: the outcome is unknown, and a tab reload is offered. */
  afterDispatch: boolean;
}

/** The pipeline's handle on one registered request. */
export interface Flight {
  readonly requestId: string;
  /** Set once the person stopped it (the pipeline ends the request at its next check). */
  readonly stopped: StopCause | null;
  /** The request now waits for the person's decision; `cancel` withdraws that approval. */
  awaitingApproval(cancel: (reason: string) => void): void;
  /** The person approved it (or a rule did): the grant is being made. */
  approved(): void;
  /** The dispatch began; `abort` aborts its link request. */
  dispatched(abort: () => void): void;
  /** The extension answered, or the console stopped waiting: nothing is left to stop (the outcome is being recorded). */
  answered(): void;
  /** The request ended and its answer is on its way to the agent (always called, once). */
  end(): void;
}

interface Entry {
  view: InFlightView;
  stopped: StopCause | null;
  /** Past the dispatch's answer: no longer listed, no longer stoppable. */
  answered?: boolean;
  cancelApproval?: (reason: string) => void;
  abort?: () => void;
}

/** The words a request's receipt and the agent's answer give for a stop. */
export function stopReason(cause: StopCause): string {
  return cause === 'stop-everything' ? 'the person pressed Stop everything' : 'the person stopped it';
}

/** The registry of requests in flight; one per console (Broker.inFlight). */
export class InFlight {
  private readonly entries = new Map<string, Entry>();
  private readonly listeners = new Set<(list: InFlightView[]) => void>();
  private readonly waiters = new Set<() => void>();

  /**
   * Register a request that starts now (phase `resolving`).
   * @param v what the console shows of it (faculty, operation, tab, agent).
   */
  begin(v: { requestId: string; faculty: Faculty; operation: string; tabId: number; agent: string }): Flight {
    const entry: Entry = { view: { ...v, phase: 'resolving', startedAt: Date.now() }, stopped: null };
    this.entries.set(v.requestId, entry);
    this.emit();
    const setPhase = (p: InFlightPhase, extra: Partial<InFlightView> = {}) => {
      if (this.entries.get(v.requestId) !== entry) return;
      entry.view = { ...entry.view, ...extra, phase: p };
      this.emit();
    };
    return {
      requestId: v.requestId,
      get stopped() {
        return entry.stopped;
      },
      awaitingApproval: (cancel) => {
        entry.cancelApproval = cancel;
        setPhase('awaiting-approval');
        if (entry.stopped) cancel(stopReason(entry.stopped));
      },
      approved: () => {
        entry.cancelApproval = undefined;
        setPhase('approved');
      },
      dispatched: (abort) => {
        entry.abort = abort;
        setPhase('dispatched', { dispatchedAt: Date.now() });
        if (entry.stopped) abort();
      },
      answered: () => {
        if (entry.answered) return;
        entry.answered = true;
        entry.abort = undefined;
        this.emit();
      },
      end: () => {
        if (this.entries.get(v.requestId) !== entry) return;
        this.entries.delete(v.requestId);
        for (const w of [...this.waiters]) w();
        this.emit();
      },
    };
  }

  /**
   * Stop one request in flight (see the header for what each phase allows).
   * Errors: `unknown-request` (not in flight: never was, or already ended), `already-stopped`.
   */
  stop(requestId: string, cause: StopCause = 'stop'): Result<StopResult> {
    const e = this.entries.get(requestId);
    if (!e || e.answered) return err('unknown-request', `Request ${JSON.stringify(requestId.slice(0, 64))} is not in flight: it already ended, or never existed.`);
    if (e.stopped) return err('already-stopped', 'This request was already stopped; it ends as soon as the console has recorded it.');
    e.stopped = cause;
    const phase = e.view.phase;
    if (phase === 'awaiting-approval') e.cancelApproval?.(stopReason(cause));
    else if (phase === 'dispatched') e.abort?.();
    e.view = { ...e.view, stopping: true };
    this.emit();
    return ok({ requestId, phase, tabId: e.view.tabId, afterDispatch: phase === 'dispatched' });
  }

  /**
   * Stop every request in flight (Stop everything) but those in `except` (already ended
   * otherwise, e.g. just denied); answers what each stop did.
   */
  stopAll(cause: StopCause = 'stop-everything', except: ReadonlySet<string> = new Set()): StopResult[] {
    const out: StopResult[] = [];
    for (const id of [...this.entries.keys()]) {
      if (except.has(id)) continue;
      const r = this.stop(id, cause);
      if (r.ok) out.push(r.value);
    }
    return out;
  }

  /** The requests in flight, oldest first (copies); a request whose outcome is being recorded is no longer listed. */
  list(): InFlightView[] {
    return [...this.entries.values()].filter((e) => !e.answered).map((e) => ({ ...e.view }));
  }

  /**
   * Resolves once none of `requestIds` is registered any more (their answers are on their way to
   * the agent), or after `maxMs` (ms) at the latest. Stop everything waits this long before it
   * closes the agents' sessions, so a stopped call's agent hears why.
   */
  whenEnded(requestIds: readonly string[], maxMs: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const check = () => {
        if (requestIds.some((id) => this.entries.has(id))) return;
        done();
      };
      const timer = setTimeout(() => done(), maxMs);
      timer.unref?.();
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve();
      };
      this.waiters.add(check);
      check();
    });
  }

  /** Listen to the list changing; returns the unsubscribe function. */
  onChange(listener: (list: InFlightView[]) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(): void {
    const list = this.list();
    for (const l of this.listeners) {
      try {
        l(list);
      } catch {
        /* a listener's failure is its own */
      }
    }
  }
}
