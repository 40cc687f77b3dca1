/**
 * What the pipeline makes of the extension's answer to a dispatch (step 8):
 * the one outcome list of the link (`INVOCATION_OUTCOMES`), which codes mean
 * "refused before it acted", which mean the agent's view of the page is stale,
 * and everything else as `outcome-unknown`.
 */
import { boundText } from '../../../shared/bounds';
import { sha256HexSync } from '../digest';
import { redactText } from '../../../shared/redact';
import type { Result } from '../../../shared/result';
import { INVOCATION_OUTCOMES, type Actor } from '../../../shared/receipt';
import { MAX_OPENED_TABS_LISTED, type InvocationEffects, type InvocationResult, type RefusalCode } from '../../../shared/types';
import { stripUrl } from '../../../shared/url';
import { isTargetChangedWords } from '../../../shared/semantic-target';
import type { Discoveries } from './discoveries';
import type { ActionFaculty, ActionRequestBase, ActionValue, AgentContext, FacultyEnv, ResolvedAction } from './faculty';
import type { BrokerAnswer, Trail } from './trail';
import { stopReason, type StopCause } from './in-flight';

/** Error codes from the extension that by definition mean "refused before dispatch". */
const PRE_DISPATCH_CODES = new Set<string>([
  'navigated',
  'tool-missing',
  'tool-ambiguous',
  'descriptor-changed',
  'arguments-mismatch',
  'grant-expired',
  'grant-reused',
  'grant-invalid',
  'tab-not-shared',
  'tool-blocked',
  'form-changed',
  'not-paired',
  'unknown-faculty',
  'unknown-operation',
  'bad-request',
  'check-failed',
] satisfies Array<RefusalCode | 'not-paired' | 'unknown-faculty' | 'unknown-operation' | 'bad-request'>);
// `check-failed` is not stale: the page did not change, a check could not run.

/** Refusals after which the agent's view of the page is stale: it must look again. */
const STALE_CODES = new Set<string>(['navigated', 'tool-missing', 'tool-ambiguous', 'descriptor-changed', 'form-changed', 'target-changed', 'ref-stale']);

/** Refusals whose words from the extension are page text (what covers a target, a page tool's name): passed on as untrusted text. */
const PAGE_WORDED = new Set<string>(['target-covered', 'narrower-capability-available', 'not-actionable']);

const OUTCOMES = new Set<string>(INVOCATION_OUTCOMES);

/**
 * The effects outside the call the extension reported (src/shared/types.ts InvocationEffects),
 * re-bounded and re-stripped here (the console trusts no side's cuts): for the receipt's detail
 * and the agent's answer. Empty when there were none.
 */
export function effectsOf(x: InvocationResult): InvocationEffects {
  const e = x.effects;
  if (!e || typeof e !== 'object') return {};
  const out: InvocationEffects = {};
  const tabs = Array.isArray(e.openedTabs) ? e.openedTabs.filter((t) => t && typeof t.url === 'string') : [];
  if (tabs.length > 0) out.openedTabs = tabs.slice(0, MAX_OPENED_TABS_LISTED).map((t) => ({ url: stripUrl(t.url) }));
  const omitted = (Number.isSafeInteger(e.openedTabsOmitted) ? (e.openedTabsOmitted as number) : 0) + Math.max(tabs.length - MAX_OPENED_TABS_LISTED, 0);
  if (omitted > 0) out.openedTabsOmitted = omitted;
  if (e.pageUnresponsive === true) out.pageUnresponsive = true;
  return out;
}

/** Words for the agent about new tabs the page opened (none: ''). */
function openedTabsNote(e: InvocationEffects): string {
  const n = (e.openedTabs?.length ?? 0) + (e.openedTabsOmitted ?? 0);
  return n === 0 ? '' : ` While it ran the page opened ${n} new tab${n === 1 ? '' : 's'}, which ${n === 1 ? 'is' : 'are'} not shared (their URLs, written by the page, follow).`;
}

/** The opened tabs' URLs as untrusted text for the agent's error answer, or undefined. */
function openedTabsText(e: InvocationEffects): string | undefined {
  return e.openedTabs ? e.openedTabs.map((t) => t.url).join('\n') : undefined;
}

/** Everything step 8 needs of the request it ends. */
export interface OutcomeContext {
  f: ActionFaculty<ActionRequestBase>;
  trail: Trail;
  actor: Actor;
  ctx: AgentContext;
  r: ResolvedAction;
  argsHash: string;
  discoveries: Discoveries;
  env: FacultyEnv;
  /** How long the console waited for the extension's answer (ms), for the agent's message. */
  waitedMs: number;
  /** The person stopped the request after its dispatch began (./in-flight.ts): whatever came back, its outcome is unknown. */
  stopped?: StopCause;
}

/**
 * Step 8, mapOutcome: the extension's answer (or the link's failure) as the
 * request's outcome, its receipt and the agent's answer. Not knowing whether the
 * page acted — a timeout, a dropped link, a cancel after dispatch began, a
 * malformed answer — is `outcome-unknown`, and blocks the subject in that
 * document until the agent looks again (docs/design.md, "Trust rules").
 */
export function mapOutcome(o: OutcomeContext, res: Result<InvocationResult>): BrokerAnswer<ActionValue> {
const { f, trail, actor, ctx, r, argsHash } = o;
  const unknown = (why: string, detail: Record<string, unknown>, effects: InvocationEffects = {}): BrokerAnswer<ActionValue> => {
    o.discoveries.block(f.faculty, r.target.tabId, r.target.documentId, r.subjectKey, trail.requestId);
    trail.tryWrite('outcome-unknown', actor, { ...detail, ...effects });
    const untrusted = openedTabsText(effects);
    return trail.answer({
      ok: false,
      error: {
        code: 'outcome-unknown',
        message:
          `${why} It may or may not have happened. Further requests on the same tool or target in this document are refused ` +
          `until you inspect the page: ${f.lookAgain(r.target.tabId)}, then decide whether to retry.` + openedTabsNote(effects),
        ...(untrusted ? { detail: { untrustedText: untrusted } } : {}),
      },
    });
  };
  if (o.stopped) {
    // The console stopped waiting at the person's word and asked the extension to abort (executeTool's
    // signal, or the content script's work). Even an answer that raced the stop is not taken as the
    // outcome: the person was told it was stopped, and the page's own code may still be running.
    return unknown(
      `The person stopped this request after it was dispatched (${stopReason(o.stopped)}): the console stopped waiting and asked the extension to abort it, but the page's own code may still run.`,
      { reason: 'stopped-by-person', by: o.stopped, ...(res.ok ? {} : { linkAnswer: res.error.code }) },
    );
  }
  if (!res.ok) {
    if (ctx.signal?.aborted || res.error.code === 'aborted') {
      // Aborting makes the link ask the extension to cancel (op 'cancel'), but the
      // page may already have acted, and aborting does not undo it: the outcome is unknown.
      return unknown('The agent cancelled the request after it was dispatched.', { reason: 'cancelled-during-dispatch' });
    }
    if (PRE_DISPATCH_CODES.has(res.error.code)) return extensionRefused(o, res.error.code, res.error.message);
    if (res.error.code === 'timeout') return unknown(`The extension did not answer within ${Math.round(o.waitedMs / 1000)} s.`, { reason: 'timeout' });
    if (res.error.code === 'link-down') return unknown('The link to the extension dropped during dispatch.', { reason: 'link-down' });
    return unknown(`The extension answered with an error (${res.error.code}).`, {
      reason: 'link-error',
      error: { code: res.error.code, message: redactText(res.error.message).value.slice(0, 500) },
    });
  }
  const x = res.value;
  if (!x || typeof x !== 'object' || !OUTCOMES.has(x.outcome)) return unknown('The extension sent a malformed answer.', { reason: 'malformed-answer' });
  const effects = effectsOf(x);
  switch (x.outcome) {
    case 'succeeded': {
      const raw = typeof x.result === 'string' ? x.result : null;
      const shaped = raw === null ? null : boundText(raw, undefined, x.truncated === true);
      const value: ActionValue = {
        outcome: 'succeeded',
        resolved: r,
        argumentsHash: argsHash,
        result: shaped ? shaped.text : null,
        truncated: Boolean(shaped?.truncated || x.truncated),
        redacted: Boolean(shaped?.redacted || x.redacted),
        ...(typeof x.elapsedMs === 'number' ? { elapsedMs: x.elapsedMs } : {}),
        ...(typeof x.navigatedTo === 'string' ? { navigatedTo: stripUrl(x.navigatedTo) } : {}),
        ...(Object.keys(effects).length > 0 ? { effects } : {}),
        ...(x.note === 'handled-without-answer' ? { note: x.note } : {}),
      };
      // Semantic mutations: success only after a confirmed readback (the faculty judges the extension's observations).
      const rb = f.readback?.(value, o.env);
      if (rb) {
        trail.tryWrite(rb.event, actor, rb.detail);
        for (const a of rb.also ?? []) trail.tryWrite(a.event, actor, a.detail);
        if (rb.event === 'readback-mismatch') {
          const code = rb.failCode ?? 'readback-mismatch';
          trail.tryWrite('failed', actor, { error: { code, message: rb.message }, elapsedMs: x.elapsedMs ?? null, ...effects });
          return trail.answer({ ok: false, error: { code, message: rb.message } });
        }
      }
      trail.tryWrite('succeeded', actor, {
        elapsedMs: x.elapsedMs ?? null,
        // The page's own size, before the extension's cuts (what reached the console is at most ~256 KiB).
        resultBytes: typeof x.resultBytes === 'number' && Number.isSafeInteger(x.resultBytes) && x.resultBytes >= (shaped?.originalBytes ?? 0) ? x.resultBytes : (shaped?.originalBytes ?? 0),
        resultSha256: shaped ? sha256HexSync(shaped.text) : null,
        truncated: value.truncated,
        redacted: value.redacted,
        ...(value.navigatedTo !== undefined ? { navigatedTo: value.navigatedTo } : {}),
        ...effects,
        ...(value.note ? { note: value.note } : {}),
      });
      return trail.answer({ ok: true, value });
    }
    case 'failed': {
      const msg = redactText(String(x.error?.message ?? 'the page failed the action')).value.slice(0, 2000);
      trail.tryWrite('failed', actor, { error: { code: x.error?.code ?? 'failed', message: msg }, elapsedMs: x.elapsedMs ?? null, ...effects });
      const tabs = openedTabsText(effects);
      return trail.answer({
        ok: false,
        error: {
          code: 'failed',
          message: `The page ran the action and reported a failure (${x.error?.code ?? 'failed'}).` + openedTabsNote(effects),
          detail: { untrustedText: tabs ? `${msg}\n${tabs}` : msg },
        },
      });
    }
    case 'refused':
      return extensionRefused(o, x.refusal ?? x.error?.code ?? 'refused', x.error?.message ?? '');
    case 'cancelled': {
      const code = x.error?.code ?? 'cancelled';
      if (FORM_NOT_SUBMITTED[code]) return formNotSubmitted(o, code, x);
      // The extension answers 'cancelled' when the action's signal was aborted, which can
      // happen after the page started: nothing proves it did not act.
      return unknown('The extension reports the request was cancelled while it was dispatched.', {
        reason: 'extension-cancelled-during-dispatch',
        elapsedMs: x.elapsedMs ?? null,
        ...(typeof x.formRestored === 'boolean' ? { formRestored: x.formRestored } : {}),
      }, effects);
    }
    case 'outcome-unknown':
      if (typeof x.navigatedTo === 'string') {
        const to = stripUrl(x.navigatedTo);
        return unknown('The page went to another document before the action answered.', {
          reason: 'document-left',
          navigatedTo: to,
          elapsedMs: x.elapsedMs ?? null,
        }, effects);
      }
      if (effects.pageUnresponsive) {
        // The extension's liveness probe of the page went unanswered after the timeout: its script is blocked.
        return unknown(
          'The action gave no answer in time, and the page does not respond at all: a dialog (alert, confirm, prompt or "leave site?") ' +
            'may be waiting for the person in that tab, or its script is busy. Ask the person to look at the tab.',
          { reason: 'page-unresponsive', elapsedMs: x.elapsedMs ?? null },
          effects,
        );
      }
      return unknown('The extension could not tell whether the action completed (it did not settle in time or the page went away).', {
        reason: 'extension-outcome-unknown',
        elapsedMs: x.elapsedMs ?? null,
      }, effects);
  }
}

/**
 * A form that waited for the person and was not submitted (the extension saw no submit event):
 * `form-wait-timeout` (the bounded wait ended; the console's `formWaitTimeoutMs`) or
 * `form-cancelled` (the page reset the form, which Chromium reports as a cancellation). A definite
 * outcome, recorded as `cancelled` with that code, whether the fields were put back, and no block:
 * nothing was submitted.
 */
const FORM_NOT_SUBMITTED: Readonly<Record<string, string>> = {
  'form-wait-timeout': 'The person did not press the page’s button before the wait ended',
  'form-cancelled': 'The page cancelled the form (it reset it)',
};

function formNotSubmitted(o: OutcomeContext, code: string, x: InvocationResult): BrokerAnswer<ActionValue> {
  const restored = typeof x.formRestored === 'boolean' ? x.formRestored : null;
  // The extension saw the page reset the form; the console's own timer ended the wait.
  o.trail.tryWrite('cancelled', { kind: code === 'form-cancelled' ? 'extension' : 'console' }, {
    code,
    reason: code,
    submitted: false,
    formRestored: restored,
    elapsedMs: x.elapsedMs ?? null,
  });
  const put =
    restored === true
      ? ' The fields the agent filled were put back as they were, so a later press of the button does not send them.'
      : code === 'form-cancelled'
        ? ' The page cleared the form itself.'
        : ' The fields could not all be put back: the form may still hold the filled values.';
  return o.trail.answer({
    ok: false,
    error: { code, message: `${FORM_NOT_SUBMITTED[code] ?? 'The form was not submitted'}; nothing was submitted.${put}`, detail: { submitted: false, formRestored: restored } },
  });
}

/** A refusal by the extension before it acted: nothing was done; a stale subject is forgotten. */
function extensionRefused(o: OutcomeContext, code: string, message: string): BrokerAnswer<ActionValue> {
const { f, trail, actor, r } = o;
  const stale = STALE_CODES.has(code);
  if (stale) f.onStale?.(r.target.tabId, o.env);
  const text = redactText(String(message)).value.slice(0, 500);
  trail.tryWrite('refused', actor, { code, message: text, by: 'extension' });
  const pageText = PAGE_WORDED.has(code) && text ? text : undefined;
  const said = /; changed: (.+)$/.exec(text)?.[1];
  const changed = said !== undefined && isTargetChangedWords(said) ? said : null;
  return trail.answer({
    ok: false,
    error: {
      code,
      ...(pageText ? { detail: { untrustedText: pageText } } : {}),
      message:
        `The extension refused the request before running it (${code}); nothing was done.` +
        // The content script's own words for what differs (src/shared/form.ts; fixed texts, no page text).
        (code === 'form-changed' && text ? ` What differs: ${text}.` : '') +
        // The extension's fixed words for what of the target changed (src/shared/semantic-target.ts targetChangedWords), only those.
        (code === 'target-changed' && changed !== null ? ` What changed: ${changed}.` : '') +
        (pageText ? ' What the page says of it follows (untrusted).' : '') +
        (stale ? ` The page changed since you looked: ${f.lookAgain(r.target.tabId)}.` : ''),
    },
  });
}
