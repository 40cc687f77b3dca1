/**
 * Invocation of one page tool under a one-use grant (DESIGN.md, capability 2),
 * and its cancellation. The checks before dispatch are lib/grant-checks.ts;
 * this module supplies their effects, dispatches to the content script of the
 * exact document (`chrome.tabs.sendMessage` with `documentId`), bounds and
 * redacts the result, and maps every ending to an InvocationResult outcome:
 * `succeeded`, `failed` (the page's tool threw), `cancelled` (AbortError
 * through the signal, FACTS.md), `refused` (a check failed; nothing ran),
 * `outcome-unknown` (dispatch began and then the timeout passed or the
 * document went away: the agent must look at the page before retrying).
 */
import { LIMITS, utf8Bytes } from '../../../src/shared/limits';
import { argumentsHash, canonicalJson } from '../../../src/shared/canonical';
import { err, ok, type Result } from '../../../src/shared/result';
import type { ConsoleRequest } from '../../../src/shared/protocol';
import type { Grant, InvocationResult, RefusalCode } from '../../../src/shared/types';
import { checkBeforeDispatch, type GrantCheckDeps } from '../lib/grant-checks';
import type { ExecuteValue } from '../lib/messages';
import { boundResult, truncateUtf8 } from '../../../src/shared/bounds';


export type InvokeRequest = Extract<ConsoleRequest, { op: 'invoke' }>;

/** The longest a dispatch may be told to wait (ms); longer requested timeouts are cut to this. */
export const MAX_DISPATCH_TIMEOUT_MS = 10 * 60_000;

function isInvokeShaped(r: InvokeRequest): boolean {
  return (
    Number.isInteger(r.tabId) && Number.isInteger(r.frameId) && typeof r.documentId === 'string' &&
    typeof r.toolName === 'string' && typeof r.descriptorHash === 'string' && !!r.grant && typeof r.grant === 'object'
  );
}

/** The chrome-side effects of dispatch, injectable for tests. */
export interface DispatchDeps {
  /** Send `echo:execute` to exactly this document. Rejects when it cannot be delivered or the document died meanwhile. */
  execute(target: { tabId: number; frameId: number; documentId: string }, msg: { requestId: string; toolName: string; expected: string; args: Record<string, unknown> }): Promise<Result<ExecuteValue>>;
  /** Send `echo:abort` for `requestId` to that document (best effort). */
  abort(target: { tabId: number; frameId: number; documentId: string }, requestId: string): void;
}

/** Chrome's error when a message reaches no listener: nothing was delivered, so nothing ran. */
const NOT_DELIVERED = /Receiving end does not exist|Could not establish connection|No tab with id|No frame with id|No document with id/i;

/** Invocations in progress by grant requestId. */
interface Running {
  phase: 'checking' | 'dispatched';
  cancelled: boolean;
  abort?: () => void;
}

/** The invocation faculty: one per service worker. */
export class Invoker {
  private readonly running = new Map<string, Running>();

  constructor(
    private readonly checks: Omit<GrantCheckDeps, 'argumentsHash' | 'argumentsBytes'>,
    private readonly dispatch: DispatchDeps,
  ) {}

  /**
   * Check, dispatch, bound. Always answers `ok(InvocationResult)` once the
   * request is well-formed; refusals are `outcome: 'refused'` with the RefusalCode.
   */
  async invoke(req: InvokeRequest, signal?: AbortSignal): Promise<Result<InvocationResult>> {
    if (!req || !isInvokeShaped(req)) return err('bad-request', 'malformed invoke request');
    const requestId = typeof (req.grant as Grant).requestId === 'string' ? (req.grant as Grant).requestId : '';
    const state: Running = { phase: 'checking', cancelled: false };
    // A second request with the same requestId carries the same nonce and is refused by the checks;
    // `cancel` keeps addressing the first.
    if (requestId && !this.running.has(requestId)) this.running.set(requestId, state);
    const onAbort = () => this.cancelState(state);
    if (signal?.aborted) state.cancelled = true;
    signal?.addEventListener('abort', onAbort);
    try {
      return ok(await this.run(req, requestId, state));
    } finally {
      signal?.removeEventListener('abort', onAbort);
      if (requestId && this.running.get(requestId) === state) this.running.delete(requestId);
    }
  }

  private async run(req: InvokeRequest, requestId: string, state: Running): Promise<InvocationResult> {
    const refused = (refusal: RefusalCode, message: string): InvocationResult => ({ outcome: 'refused', refusal, error: { code: refusal, message } });
    let checked;
    try {
      checked = await checkBeforeDispatch(req, {
        ...this.checks,
        argumentsHash: (a) => argumentsHash(a),
        argumentsBytes: (a) => utf8Bytes(canonicalJson(a)),
      });
    } catch (e) {
      // A check that could not run is a refusal: nothing was dispatched.
      return refused('navigated', `a check could not complete: ${e instanceof Error ? e.message : String(e)}`);
    }
    if (!checked.ok) return refused(checked.refusal, checked.message);
    if (state.cancelled) return { outcome: 'cancelled', error: { code: 'cancelled', message: 'cancelled before dispatch' } };

    const target = { tabId: req.tabId, frameId: req.frameId, documentId: req.documentId };
    const timeoutMs = Math.min(Math.max(Number.isFinite(req.timeoutMs) ? req.timeoutMs : LIMITS.dispatchTimeoutMs, 1), MAX_DISPATCH_TIMEOUT_MS);
    const started = Date.now();
    state.phase = 'dispatched';
    state.abort = () => this.dispatch.abort(target, requestId);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), timeoutMs);
    });
    const sent = this.dispatch
      .execute(target, { requestId, toolName: req.toolName, expected: checked.tool.canonical, args: req.arguments })
      .then((r) => ({ kind: 'answer' as const, r }), (e: unknown) => ({ kind: 'error' as const, e }));
    const settled = await Promise.race([sent, timeout]);
    clearTimeout(timer);
    const elapsedMs = Date.now() - started;
    if (settled === 'timeout') {
      this.dispatch.abort(target, requestId);
      return { outcome: 'outcome-unknown', elapsedMs, error: { code: 'timeout', message: `no answer within ${timeoutMs} ms after dispatch began` } };
    }
    if (settled.kind === 'error') {
      const message = settled.e instanceof Error ? settled.e.message : String(settled.e);
      if (NOT_DELIVERED.test(message)) return refused('navigated', 'the document went away before dispatch');
      return { outcome: 'outcome-unknown', elapsedMs, error: { code: 'link-to-page-lost', message: 'the page went away while the tool ran' } };
    }
    const r = settled.r;
    if (!r || typeof r !== 'object') return { outcome: 'outcome-unknown', elapsedMs, error: { code: 'no-answer', message: 'the page gave no answer' } };
    if (r.ok) {
      const v = r.value;
      return { outcome: 'succeeded', elapsedMs: v.elapsedMs ?? elapsedMs, ...boundResult(typeof v.result === 'string' ? v.result : null, v.truncated === true) };
    }
    switch (r.error.code) {
      case 'aborted':
        return { outcome: 'cancelled', elapsedMs, error: { code: 'cancelled', message: 'the invocation was cancelled' } };
      case 'tool-failed': {
        const m = boundResult(r.error.message, false);
        return { outcome: 'failed', elapsedMs, error: { code: 'tool-failed', message: truncateUtf8(m.result ?? '', 2048).text }, ...(m.redacted ? { redacted: true } : {}) };
      }
      case 'tool-missing':
      case 'no-webmcp':
        return refused('tool-missing', 'the page no longer offers this tool');
      case 'tool-ambiguous':
        return refused('tool-ambiguous', 'the page offers several tools with this name');
      case 'descriptor-changed':
        return refused('descriptor-changed', 'the tool changed just before dispatch');
      case 'tool-blocked':
        return refused('tool-blocked', 'the tool is blocked');
      default:
        return { outcome: 'outcome-unknown', elapsedMs, error: { code: 'content-error', message: truncateUtf8(String(r.error.message), 1024).text } };
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

/** Dispatch through chrome.tabs.sendMessage to one document (Chrome 106+: `documentId` option). */
export const chromeDispatch: DispatchDeps = {
  execute(target, msg) {
    return chrome.tabs.sendMessage(target.tabId, { type: 'echo:execute', ...msg }, { frameId: target.frameId, documentId: target.documentId }) as Promise<Result<ExecuteValue>>;
  },
  abort(target, requestId) {
    chrome.tabs.sendMessage(target.tabId, { type: 'echo:abort', requestId }, { frameId: target.frameId, documentId: target.documentId }).catch(() => undefined);
  },
};
