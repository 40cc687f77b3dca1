/**
 * Dispatch of one reviewed action of any dispatch faculty under its one-use
 * grant (docs/design.md, "Request lifecycle"), and its cancellation. The
 * generic checks before dispatch are lib/grant-checks.ts (which calls the
 * faculty's own checks in their place); this module supplies their effects,
 * hands the run to the faculty's page-side runner in exactly the target
 * document, bounds and redacts the result, and maps every ending to an
 * InvocationResult outcome: `succeeded`, `failed` (the page's action threw),
 * `cancelled` (AbortError through the signal, docs/browser-facts.md, "WebMCP: running tools"), `refused` (a check
 * failed; nothing ran), `outcome-unknown` (dispatch began and then the timeout
 * passed or the document went away: the agent must look at the page before
 * retrying).
 */
import { LIMITS, utf8Bytes } from '../../../src/shared/limits';
import { argumentsHash, canonicalJson, urlHash } from '../../../src/shared/canonical';
import { err, ok, type Result } from '../../../src/shared/result';
import type { ConsoleRequest, DispatchTarget } from '../../../src/shared/protocol';
import type { Grant, InvocationEffects, InvocationResult, RefusalCode } from '../../../src/shared/types';
import { checkBeforeDispatch, type GrantCheckDeps } from '../lib/grant-checks';
import { boundResult, truncateUtf8 } from '../../../src/shared/bounds';
import { stripUrl } from '../../../src/shared/url';
import type { DispatchFaculty } from './faculties/registry';
import type { ExecuteValue } from '../lib/messages';

/** The `dispatch` ConsoleRequest (src/shared/protocol.ts). */
export type DispatchRequest = Extract<ConsoleRequest, { op: 'dispatch' }>;

/**
 * Content-side codes of a form that waited for the person and was never submitted (content/webmcp.ts):
 * `form-wait-timeout` (the wait ended before the person pressed the page's button), `form-cancelled`
 * (the page reset the form). Answered as `cancelled` with that code: nothing was submitted.
 */
export const FORM_NOT_SUBMITTED: ReadonlySet<string> = new Set(['form-wait-timeout', 'form-cancelled']);

/** `{formRestored}` from a content module's error detail, when it says (a form put back, or not, after a fill that was not submitted). */
function restoredOf(detail: unknown): { formRestored?: boolean } {
  const r = (detail as { formRestored?: unknown } | undefined)?.formRestored;
  return typeof r === 'boolean' ? { formRestored: r } : {};
}

/** The longest a dispatch may be told to wait (ms); longer requested timeouts are cut to this. */
export const MAX_DISPATCH_TIMEOUT_MS = 10 * 60_000;

/** The effects of the generic checks that the worker supplies (the URL read and the hashing come from the faculty and src/shared). */
export type DispatcherDeps = Omit<GrantCheckDeps, 'pageUrls' | 'urlHash' | 'argumentsHash' | 'argumentsBytes'> & {
  /**
   * After a tool answered: the exact URL the frame left for, or null when it did not: a
   * navigation that began, or a same-document URL change, in that frame since `since` (ms since
   * the epoch; navigations.ts).
   */
  leftFor?(target: DispatchTarget, since: number): Promise<string | null>;
  /** Resolves with the URL of another document that commits in the target frame while the run waits (navigations.ts `documentLeaves`). */
  documentLeaves?(target: DispatchTarget): { left: Promise<string>; cancel(): void };
  /**
   * Watch what the page does outside the call (effects.ts; the sign's "running" state) from
   * `since` (ms since the epoch: the moment the dispatch began, taken before the page was told);
   * `finish` when it settled, `timedOut` when no answer came in time.
   */
  watch?(target: DispatchTarget, since: number): EffectWatch;
};

/** One dispatch's watch of its effects outside the call (effects.ts). */
export interface EffectWatch {
  /** Stop watching; what was seen, or undefined for nothing. Never rejects. */
  finish(timedOut: boolean): Promise<InvocationEffects | undefined>;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function isDispatchShaped(r: DispatchRequest): boolean {
  const t = r.target as Partial<DispatchTarget> | undefined;
  return (
    isObj(t) && Number.isInteger(t.tabId) && Number.isInteger(t.frameId) && typeof t.documentId === 'string' &&
    isObj(r.subject) && isObj(r.arguments)
  );
}

/** Chrome's error when a message reaches no listener: nothing was delivered, so nothing ran. */
/** How long a run whose page link was lost waits for the browser to report its document left (ms). */
export const LEAVE_GRACE_MS = 1_000;

const errorText = (e: unknown): string => (e instanceof Error ? e.message : String(e));

const NOT_DELIVERED = /Receiving end does not exist|Could not establish connection|No tab with id|No frame with id|No document with id/i;

/** Invocations in progress by grant requestId. */
interface Running {
  phase: 'checking' | 'dispatched';
  cancelled: boolean;
  abort?: () => void;
}

/** The dispatcher: one per service worker, shared by every dispatch faculty. */
export class Dispatcher {
  private readonly running = new Map<string, Running>();

  constructor(private readonly checks: DispatcherDeps) {}

  /**
   * Check (the faculty's request check, then lib/grant-checks.ts), run in the
   * page, bound. `faculty` is the one the registry resolved for
   * `req.faculty`/`req.operation`. Errors: `bad-request` for a malformed
   * request or one the faculty's request check refuses; otherwise always
   * `ok(InvocationResult)`, refusals being `outcome: 'refused'` with the RefusalCode.
   */
  async dispatch(req: DispatchRequest, faculty: DispatchFaculty<unknown>, signal?: AbortSignal): Promise<Result<InvocationResult>> {
    if (!req || !isDispatchShaped(req)) return err('bad-request', 'malformed dispatch request');
    const problem = faculty.checkRequest(req.operation, req.subject, req.arguments);
    if (problem !== null) return err('bad-request', problem);
    // The grant's shape is checked once, by the generic checks (validateGrantShape): a malformed one is refused there.
    const grant = req.grant as Partial<Grant> | null | undefined;
    const requestId = isObj(grant) && typeof grant.requestId === 'string' ? grant.requestId : '';
    const state: Running = { phase: 'checking', cancelled: false };
    // A second request with the same requestId carries the same nonce and is refused by the checks;
    // `cancel` keeps addressing the first.
    if (requestId && !this.running.has(requestId)) this.running.set(requestId, state);
    const onAbort = () => this.cancelState(state);
    if (signal?.aborted) state.cancelled = true;
    signal?.addEventListener('abort', onAbort);
    try {
      return ok(await this.run(req, faculty, requestId, state));
    } finally {
      signal?.removeEventListener('abort', onAbort);
      if (requestId && this.running.get(requestId) === state) this.running.delete(requestId);
    }
  }

  private async run(req: DispatchRequest, faculty: DispatchFaculty<unknown>, requestId: string, state: Running): Promise<InvocationResult> {
    const refused = (refusal: RefusalCode, message: string): InvocationResult => ({ outcome: 'refused', refusal, error: { code: refusal, message } });
    let checked;
    try {
      checked = await checkBeforeDispatch(req, faculty, {
        ...this.checks,
        pageUrls: (t, h) => faculty.pageUrls(t, h),
        urlHash: (tab, frame) => urlHash(tab, frame),
        argumentsHash: (a) => argumentsHash(a),
        argumentsBytes: (a) => utf8Bytes(canonicalJson(a)),
      });
    } catch (e) {
      // A check that could not run is a refusal: nothing was dispatched.
      return refused('check-failed', `a check could not complete: ${e instanceof Error ? e.message : String(e)}`);
    }
    if (!checked.ok) return refused(checked.refusal, checked.message);
    if (state.cancelled) return { outcome: 'cancelled', error: { code: 'cancelled', message: 'cancelled before dispatch' } };

    const target: DispatchTarget = { tabId: req.target.tabId, frameId: req.target.frameId, documentId: req.target.documentId };
    const timeoutMs = Math.min(Math.max(Number.isFinite(req.timeoutMs) ? req.timeoutMs : LIMITS.dispatchTimeoutMs, 1), MAX_DISPATCH_TIMEOUT_MS);
    const started = Date.now();
    state.phase = 'dispatched';
    state.abort = () => faculty.abort(target, requestId);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), timeoutMs);
    });
    // The page is told first: the watch's own browser calls (the sign's "running", effects.ts) follow
    // in the same task, so they cannot delay the message that runs the action (about 1 ms of
    // chrome.action calls), and the watch still covers the whole run from `started`.
    let execution: Promise<Result<ExecuteValue>>;
    try {
      execution = faculty.execute(target, { requestId, operation: req.operation, prepared: checked.prepared, urls: checked.urls, args: req.arguments, timeoutMs });
    } catch (e) {
      execution = Promise.reject(e);
    }
    const sent = execution.then((r) => ({ kind: 'answer' as const, r }), (e: unknown) => ({ kind: 'error' as const, e }));
    const watch = this.checks.watch?.(target, started);
    const leaving = this.checks.documentLeaves?.(target);
    const gone = leaving ? leaving.left.then((url) => ({ kind: 'left' as const, url })) : new Promise<never>(() => {});
    let settled = await Promise.race([sent, timeout, gone]);
    clearTimeout(timer);
    const linkLost =
      typeof settled === 'object' &&
      ((settled.kind === 'error' && !NOT_DELIVERED.test(errorText(settled.e))) || (settled.kind === 'answer' && (!settled.r || typeof settled.r !== 'object')));
    if (linkLost && leaving) {
      // The page's end of the message closed under the run: its document is going away, and the
      // browser's navigation event may come a moment after (seen in e2e/honest-results). Wait for
      // it, bounded, so the outcome says the document left and where, as the browser saw it.
      let grace: ReturnType<typeof setTimeout> | undefined;
      const late = await Promise.race([gone, new Promise<null>((resolve) => (grace = setTimeout(() => resolve(null), LEAVE_GRACE_MS)))]);
      clearTimeout(grace);
      if (late) settled = late;
    }
    leaving?.cancel();
    const result = await this.outcomeOf(settled, { target, requestId, faculty, timeoutMs, started });
    const effects = watch ? await watch.finish(settled === 'timeout').catch(() => undefined) : undefined;
    if (!effects) return result;
    if (effects.pageUnresponsive && result.error?.code === 'timeout') {
      result.error = {
        code: 'timeout',
        message: `${result.error.message}; the page does not respond either (a dialog such as alert() or confirm() may be waiting for the person, or its script is busy)`,
      };
    }
    return { ...result, effects };
  }

  /** The InvocationResult of how the run settled (the page's answer, the timeout, or the document leaving). */
  private async outcomeOf(
    settled: 'timeout' | { kind: 'left'; url: string } | { kind: 'error'; e: unknown } | { kind: 'answer'; r: Result<ExecuteValue> },
    c: { target: DispatchTarget; requestId: string; faculty: DispatchFaculty<unknown>; timeoutMs: number; started: number },
  ): Promise<InvocationResult> {
    const { target, requestId, faculty, timeoutMs, started } = c;
    const refused = (refusal: RefusalCode, message: string): InvocationResult => ({ outcome: 'refused', refusal, error: { code: refusal, message } });
    const elapsedMs = Date.now() - started;
    if (settled === 'timeout') {
      faculty.abort(target, requestId);
      return { outcome: 'outcome-unknown', elapsedMs, error: { code: 'timeout', message: `no answer within ${timeoutMs} ms after dispatch began` } };
    }
    if (settled.kind === 'left') {
      // The document the tool ran in was replaced before its answer came: whether it did its work is unknown.
      return {
        outcome: 'outcome-unknown',
        elapsedMs,
        navigatedTo: stripUrl(settled.url),
        error: { code: 'document-left', message: 'the page went to another document before the tool answered' },
      };
    }
    if (settled.kind === 'error') {
      const message = errorText(settled.e);
      if (NOT_DELIVERED.test(message)) return refused('navigated', 'the document went away before dispatch');
      return { outcome: 'outcome-unknown', elapsedMs, error: { code: 'link-to-page-lost', message: 'the page went away while the tool ran' } };
    }
    const r = settled.r;
    if (!r || typeof r !== 'object') return { outcome: 'outcome-unknown', elapsedMs, error: { code: 'no-answer', message: 'the page gave no answer' } };
    if (r.ok) {
      const v = r.value;
      const text = typeof v.result === 'string' ? v.result : null;
      // The size the page gave, before the content module's and this cut (else the bytes that reached here).
      const resultBytes = Number.isSafeInteger(v.resultBytes) && (v.resultBytes as number) >= 0 ? (v.resultBytes as number) : text === null ? 0 : utf8Bytes(text);
      // What the browser saw after the answer: did the page leave? (The answer's shape cannot say.)
      const left = await this.checks.leftFor?.(target, started).catch(() => null);
      return {
        outcome: 'succeeded',
        elapsedMs: v.elapsedMs ?? elapsedMs,
        resultBytes,
        ...(left ? { navigatedTo: stripUrl(left) } : {}),
        ...boundResult(text, v.truncated === true),
      };
    }
    switch (r.error.code) {
      case 'aborted':
        return { outcome: 'cancelled', elapsedMs, error: { code: 'cancelled', message: 'the dispatch was cancelled' }, ...restoredOf(r.error.detail) };
      case 'tool-failed': {
        const m = boundResult(r.error.message, false);
        return { outcome: 'failed', elapsedMs, error: { code: 'tool-failed', message: truncateUtf8(m.result ?? '', 2048).text }, ...(m.redacted ? { redacted: true } : {}) };
      }
      case 'navigated':
        // The page's own last comparison of the exact URLs, in the task that would have acted.
        return refused('navigated', 'the page URL changed just before dispatch');
      default: {
        const own = faculty.refusalFor(String(r.error.code));
        // form-changed: the content script's own fixed words for what differs (content/webmcp.ts formDiffers).
        if (own === 'form-changed') return refused(own, truncateUtf8(String(r.error.message), 256).text);
        // A form that waited for the person and was not submitted: the wait ended (timeout) or the page
        // cancelled it (form.reset()). The content module saw no submit event, so nothing was submitted.
        if (FORM_NOT_SUBMITTED.has(String(r.error.code))) {
          return { outcome: 'cancelled', elapsedMs, error: { code: String(r.error.code), message: truncateUtf8(String(r.error.message), 512).text }, ...restoredOf(r.error.detail) };
        }
        if (r.error.code === 'submitted-no-answer') {
          return { outcome: 'outcome-unknown', elapsedMs, error: { code: 'submitted-no-answer', message: 'the form was submitted, but the page did not answer in time' } };
        }
        if (r.error.code === 'handled-without-answer') {
          // The page's submit handler ran and prevented the default without respondWith: it took the
          // submission itself and gave no answer. Neither a failure of ours nor a silent null.
          const left = await this.checks.leftFor?.(target, started).catch(() => null);
          return { outcome: 'succeeded', elapsedMs, result: null, truncated: false, redacted: false, resultBytes: 0, note: 'handled-without-answer', ...(left ? { navigatedTo: stripUrl(left) } : {}) };
        }
        if (own !== null) return refused(own, faculty.refusalText?.(own, String(r.error.message)) ?? `refused in the page (${own})`);
        return { outcome: 'outcome-unknown', elapsedMs, error: { code: 'content-error', message: truncateUtf8(String(r.error.message), 1024).text } };
      }
    }
  }

  /** `cancel`: abort a running dispatch (its executeTool signal) or stop one still being checked. */
  cancel(requestId: string): { cancelled: boolean } {
    const s = this.running.get(requestId);
    return { cancelled: s ? this.cancelState(s) : false };
  }

  private cancelState(s: Running): boolean {
    if (s.cancelled) return false;
    s.cancelled = true;
    if (s.phase === 'dispatched') s.abort?.();
    return true;
  }
}
