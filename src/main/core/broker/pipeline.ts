/**
 * The action pipeline: the request lifecycle of docs/design.md ("Request
 * lifecycle") as a sequence of named steps, shared by every faculty —
 *
 *   reviewed action:  shapeArguments → resolveSubject → validate → policy →
 *                     requestApproval → issueGrant → dispatch → mapOutcome
 *   read:             policy → read (link) → check value
 *
 * A faculty supplies only what is its own (an `ActionFaculty`: how to resolve
 * its subject, validate the arguments against it, and what to tell the agent
 * when the page changed); everything else — limits, receipts, the policy floor,
 * the approval, the one-use grant, outcome-unknown handling — is here, once.
 * See docs/broker.md for the rules and the choices made.
 */
import { randomBytes } from 'node:crypto';
import { argumentsHash as hashArguments, canonicalJson } from '../../../shared/canonical';
import { nodeSha256, sha256HexSync } from '../digest';
import type { ApprovalSubject, ApprovalView } from '../../../shared/ipc';
import { LIMITS, jsonDepth, utf8Bytes } from '../../../shared/limits';
import { INVOCATION_OUTCOMES, type Actor, type Faculty } from '../../../shared/receipt';
import { boundText } from '../../../shared/bounds';
import { redactText } from '../../../shared/redact';
import { toErrorInfo, type Result } from '../../../shared/result';
import type { Grant, InvocationResult, RefusalCode, ToolAnnotations } from '../../../shared/types';
import type { ExtensionLink } from '../ports';
import type { ToolKind, ToolRouter } from '../policy';
import type { Sharing } from '../sharing';
import { CONSOLE_TAB_REFUSAL } from '../sharing';
import type { ApprovalDecision, ApprovalQueue } from './approvals';
import type { Discoveries } from './discoveries';
import { LedgerUnavailable, Trail, type BrokerAnswer, type ReceiptSink, type TrailFields } from './trail';
import type { ArgumentIssue, ArgumentValidator } from './validator';

/** Who is calling and how the agent-facing tool is marked (from the tool registry, never from the page). */
export interface AgentContext {
  actor: Actor;
  kind: ToolKind;
  /** The MCP request's cancellation (`extra.signal` in the SDK; MCP spec, "Cancellation"). */
  signal?: AbortSignal;
}

/** What every reviewed action's request carries, whatever its faculty. */
export interface ActionRequestBase {
  tabId: number;
  /** Exactly what the faculty acts with: hashed, validated, shown, granted and dispatched as given. */
  arguments: Record<string, unknown>;
  /** The agent's own id for the operation: recorded and shown, never injected into `arguments`. */
  operationId?: string;
}

/** Where a resolved action acts, as the extension reported it at discovery. */
export interface ActionTarget {
  tabId: number;
  frameId: number;
  documentId: string;
  origin: string;
  /** SHA-256 of the exact tab and frame URLs at discovery (src/shared/canonical.ts `urlHash`). */
  urlHash: string;
  /** The frame's URL, stripped, for the person. */
  frameUrl: string;
}

/** A faculty's subject, resolved from what the console knows (e.g. the latest discovery). */
export interface ResolvedAction {
  target: ActionTarget;
  /** What the grant binds as the subject (WebMCP: the descriptorHash). */
  subjectHash: string;
  /** Key of outcome-unknown blocks inside the document (WebMCP: the tool name). */
  subjectKey: string;
  /** What the approval dialog shows of the subject. */
  subject: ApprovalSubject;
  /** What the extension's faculty receives as `subject`. */
  linkSubject: Record<string, unknown>;
  /** Receipt fields of this faculty (WebMCP: toolName, descriptorHash). */
  receiptFields: Partial<TrailFields>;
  /** Inputs of the policy beyond faculty, kind, origin and tab. */
  policy: { toolName?: string; annotations?: ToolAnnotations };
}

/** What a faculty's steps may read: the console's knowledge of the shared tabs. */
export interface FacultyEnv {
  discoveries: Discoveries;
  sharing: Sharing;
  validator: ArgumentValidator;
}

/**
 * The console-side part of a reviewed faculty: a constant (src/main/core/faculties/<name>.ts),
 * all state comes in through `env`.
 */
export interface ActionFaculty<R extends ActionRequestBase> {
  faculty: Faculty;
  operation: string;
  /** The agent tool's name, recorded in the `requested` receipt. */
  agentTool: string;
  /** Receipt fields readable from the raw request before any check (only in shapes the ledger stores). */
  initialFields(req: R): Partial<TrailFields>;
  /** Step 2. `{ok:false}` is refused with its code; nothing reaches the person. */
  resolveSubject(req: R, env: FacultyEnv): Result<ResolvedAction>;
  /**
   * Step 3: the arguments against the resolved subject (WebMCP: ajv against the
   * reviewed inputSchema). `ok` carries the `validated` receipt's detail; a
   * failure's `detail.issues` (ArgumentIssue[]) reaches the agent.
   */
  validate(resolved: ResolvedAction, args: Record<string, unknown>, env: FacultyEnv): Result<Record<string, unknown>>;
  /** What the agent should call to look at the page again (stale subject, outcome unknown). */
  lookAgain(tabId: number): string;
  /** The page changed so that this faculty's knowledge of the tab is stale (e.g. forget the discovery). */
  onStale?(tabId: number, env: FacultyEnv): void;
  /** Words for the person: what the agent asks to do ("run a page tool"). */
  verb: string;
}

/** A reviewed action that ran. `result` is UNTRUSTED page text. */
export interface ActionValue {
  outcome: 'succeeded';
  resolved: ResolvedAction;
  argumentsHash: string;
  result: string | null;
  truncated: boolean;
  redacted: boolean;
  elapsedMs?: number;
}

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
  'not-paired',
  'unknown-faculty',
  'unknown-operation',
  'bad-request',
] satisfies Array<RefusalCode | 'not-paired' | 'unknown-faculty' | 'unknown-operation' | 'bad-request'>);

/** Refusals after which the agent's view of the page is stale: it must look again. */
const STALE_CODES = new Set<string>(['navigated', 'tool-missing', 'tool-ambiguous', 'descriptor-changed']);

const OUTCOMES = new Set<string>(INVOCATION_OUTCOMES);

export interface PipelineOptions {
  link: ExtensionLink;
  receipts: ReceiptSink;
  policy: ToolRouter;
  approvals: ApprovalQueue;
  sharing: Sharing;
  discoveries: Discoveries;
  /** Read at each approval request (ms). */
  approvalTimeoutMs: () => number;
  /** Sent to the extension: after dispatch began, this long without a settle is outcome-unknown (ms). */
  dispatchTimeoutMs: number;
  /** How much longer than `dispatchTimeoutMs` the console waits for the extension's own answer (ms). */
  linkGraceMs: number;
  /** Timeout for reads (ms). */
  readTimeoutMs: number;
  /** At most this many approvals wait at once. */
  maxPendingApprovals: number;
  validator: ArgumentValidator;
}

/** The pipeline shared by every faculty. Never throws to its callers. */
export class Pipeline {
  private readonly env: FacultyEnv;

  constructor(private readonly o: PipelineOptions) {
    this.env = { discoveries: o.discoveries, sharing: o.sharing, validator: o.validator };
  }

  /** A new trail (receipts) for one request of `faculty`. */
  trail(faculty: Faculty, fields: Partial<TrailFields> = {}): Trail {
    return new Trail(this.o.receipts, faculty, fields);
  }

  // ---- reads ---------------------------------------------------------------------

  /**
   * A read: `requested` → policy → `work` → `succeeded` (or the read's own success
   * event) with `detail(value)`. Tabs showing the console are refused before and
   * after the read (`console-tab`). Never throws.
   */
  async read<V>(
    p: { faculty: Faculty; agentTool: string; tabId?: number; ctx: AgentContext; event?: 'succeeded' | 'discovered' },
    work: (trail: Trail) => Promise<Result<V>>,
    after: (v: V, trail: Trail) => { origin?: string | null; url?: string | null; detail: Record<string, unknown> },
  ): Promise<BrokerAnswer<V>> {
    const { ctx } = p;
    const trail = this.trail(p.faculty, p.tabId !== undefined ? { tabId: p.tabId } : {});
    try {
      trail.write('requested', ctx.actor, { agentTool: p.agentTool });
      if (p.tabId !== undefined && this.o.sharing.isRefusedConsoleTab(p.tabId)) return trail.refuse(ctx.actor, 'console-tab', `Tab ${p.tabId} ${CONSOLE_TAB_REFUSAL}.`);
      const knownOrigin = p.tabId !== undefined ? (this.o.sharing.get(p.tabId)?.origin ?? null) : null;
      const before = this.o.policy.decide({ faculty: p.faculty, kind: ctx.kind, origin: knownOrigin });
      if (before.action !== 'allow') return trail.refuse(ctx.actor, 'policy-denied', `Denied by the console's policy: ${before.reason}.`);
      const res = await work(trail);
      if (!res.ok) return trail.readFailed(ctx.actor, ctx.signal, res.error);
      const seen = after(res.value, trail);
      if (seen.origin !== undefined) trail.set({ origin: seen.origin });
      if (p.tabId !== undefined && (this.o.sharing.isConsoleOrigin(seen.origin) || this.o.sharing.isConsoleOrigin(seen.url))) {
        // Shared behind our back and not yet reported (tabs-changed is debounced): never hand it over.
        this.o.sharing.askUnshare(p.tabId);
        return trail.refuse(ctx.actor, 'console-tab', `Tab ${p.tabId} ${CONSOLE_TAB_REFUSAL}.`);
      }
      if (seen.origin) {
        const afterDecision = this.o.policy.decide({ faculty: p.faculty, kind: ctx.kind, origin: seen.origin });
        if (afterDecision.action !== 'allow') return trail.refuse(ctx.actor, 'policy-denied', `Denied by the console's policy: ${afterDecision.reason}.`);
      }
      trail.write(p.event ?? 'succeeded', ctx.actor, seen.detail);
      return trail.answer({ ok: true, value: res.value });
    } catch (e) {
      return trail.internal(e);
    }
  }

  // ---- reviewed actions --------------------------------------------------------------

  /**
   * The whole lifecycle of one reviewed action. Resolves when the request has
   * ended (succeeded, or any refusal, denial, expiry, cancellation, failure or
   * outcome-unknown); never throws. Error codes: invalid-arguments
   * (detail.issues), arguments-too-large, arguments-too-deep, the faculty's
   * resolve and validate codes, console-tab, outcome-unknown-pending,
   * policy-denied, link-down, too-many-pending, denied, expired, cancelled,
   * grant-unavailable, a refusal code from the extension, failed,
   * outcome-unknown, ledger-unavailable, internal.
   */
  async action<R extends ActionRequestBase>(f: ActionFaculty<R>, req: R, ctx: AgentContext): Promise<BrokerAnswer<ActionValue>> {
    const shaped = await shapeArguments(req.arguments);
    const trail = this.trail(f.faculty, { ...f.initialFields(req), argumentsHash: shaped.hash });
    const actor = ctx.actor;
    const operationId = typeof req.operationId === 'string' ? req.operationId.slice(0, 128) : undefined;
    try {
      trail.write('requested', actor, { agentTool: f.agentTool, operation: f.operation, argumentsBytes: shaped.bytes, ...(operationId ? { operationId } : {}) });

      // 1. shapeArguments: limits and shape (before anything else looks at them).
      if (!shaped.ok) return trail.refuse(actor, shaped.code, shaped.message);
      const args = shaped.args;
      const argsHash = shaped.hash;

      // 2. resolveSubject.
      if (this.o.sharing.isRefusedConsoleTab(req.tabId)) return trail.refuse(actor, 'console-tab', `Tab ${req.tabId} ${CONSOLE_TAB_REFUSAL}.`);
      const resolved = f.resolveSubject(req, this.env);
      if (!resolved.ok) return trail.refuse(actor, resolved.error.code, resolved.error.message);
      const r = resolved.value;
      if (this.o.sharing.isConsoleOrigin(r.target.origin)) return trail.refuse(actor, 'console-tab', `Tab ${req.tabId} ${CONSOLE_TAB_REFUSAL}.`);
      trail.set({ origin: r.target.origin, frameId: r.target.frameId, documentId: r.target.documentId, ...r.receiptFields });
      const blocked = this.o.discoveries.blockedBy(r.target.tabId, r.target.documentId, r.subjectKey);
      if (blocked) {
        return trail.refuse(
          actor,
          'outcome-unknown-pending',
          `The outcome of an earlier request on ${JSON.stringify(r.subjectKey)} in this document (request ${blocked}) is unknown: ` +
            `it may or may not have happened. Inspect the page first: ${f.lookAgain(r.target.tabId)}, then decide whether to retry.`,
        );
      }

      // 3. validate: against the exact reviewed subject; failures never reach the person.
      const v = f.validate(r, args, this.env);
      if (!v.ok) {
        const issues = (v.error.detail as { issues?: ArgumentIssue[] } | undefined)?.issues;
        return trail.refuse(actor, v.error.code, v.error.message, issues ? { issues } : undefined);
      }
      trail.write('validated', actor, v.value);

      // 4. policy: the floor (review for every mutation) cannot be lowered; a rule may deny.
      const decision = this.o.policy.decide({ faculty: f.faculty, kind: ctx.kind, origin: r.target.origin, ...r.policy });
      if (decision.action === 'deny') return trail.refuse(actor, 'policy-denied', `Denied by the console's policy: ${decision.reason}.`);

      // 5. requestApproval.
      const approval = await this.requestApproval(f, trail, ctx, r, args, argsHash, decision.reason, operationId);
      if (approval) return approval;

      // 6. issueGrant: fresh nonce, short expiry, bound to exactly what was approved.
      const signed = await this.o.link.signGrant({
        requestId: trail.requestId,
        faculty: f.faculty,
        operation: f.operation,
        tabId: r.target.tabId,
        frameId: r.target.frameId,
        documentId: r.target.documentId,
        origin: r.target.origin,
        urlHash: r.target.urlHash,
        subjectHash: r.subjectHash,
        argumentsHash: argsHash,
        nonce: randomBytes(16).toString('hex'),
        expiresAt: Date.now() + LIMITS.grantTtlMs,
      });
      if (!signed.ok) {
        return trail.refuse(actor, 'grant-unavailable', `The approval could not be turned into a grant (${signed.error.code}: ${signed.error.message}); nothing was dispatched.`);
      }
      if (ctx.signal?.aborted) return trail.cancelled(actor, 'the agent cancelled the request after approval, before dispatch');
      if (this.o.link.status().state !== 'connected') {
        return trail.refuse(actor, 'link-down', 'The browser extension disconnected after the approval; nothing was dispatched. Try again once it is connected.');
      }
      // An earlier request on this subject may have become outcome-unknown while this one waited.
      const unknownNow = this.o.discoveries.blockedBy(r.target.tabId, r.target.documentId, r.subjectKey);
      if (unknownNow) {
        return trail.refuse(
          actor,
          'outcome-unknown-pending',
          `While this request waited for approval, the outcome of an earlier request on ${JSON.stringify(r.subjectKey)} in this document (request ${unknownNow}) became unknown: ` +
            `it may or may not have happened, so this one was not dispatched. Inspect the page first: ${f.lookAgain(r.target.tabId)}, then decide whether to retry.`,
        );
      }

      // 7. dispatch. From here on, not knowing the outcome means outcome-unknown.
      trail.write('dispatched', actor, { grantExpiresAt: signed.value.expiresAt, timeoutMs: this.o.dispatchTimeoutMs });
      const res = await this.dispatch(f, ctx, r, args, signed.value);

      // 8. mapOutcome.
      return this.mapOutcome(f, trail, actor, ctx, r, argsHash, res);
    } catch (e) {
      if (e instanceof LedgerUnavailable) return trail.answer({ ok: false, error: { code: e.code, message: e.message } });
      return trail.internal(e);
    }
  }

  /** Step 5: show the request to the person; `null` when approved, else the request's final answer. */
  private async requestApproval(
    f: ActionFaculty<ActionRequestBase>,
    trail: Trail,
    ctx: AgentContext,
    r: ResolvedAction,
    args: Record<string, unknown>,
    argsHash: string,
    policyReason: string,
    operationId: string | undefined,
  ): Promise<BrokerAnswer<ActionValue> | null> {
    const actor = ctx.actor;
    if (this.o.link.status().state !== 'connected') {
      return trail.refuse(actor, 'link-down', 'The browser extension is not connected to the console; nothing was shown to the person. Try again once it is connected.');
    }
    if (ctx.signal?.aborted) return trail.cancelled(actor, 'the agent cancelled the request before it was shown to the person');
    if (this.o.approvals.list().length >= this.o.maxPendingApprovals) {
      return trail.refuse(actor, 'too-many-pending', `${this.o.maxPendingApprovals} requests are already waiting for the person; wait for them to be decided before asking again.`);
    }
    const now = Date.now();
    const tab = this.o.sharing.get(r.target.tabId);
    const discovery = this.o.discoveries.get(r.target.tabId);
    const view: ApprovalView = {
      requestId: trail.requestId,
      createdAt: now,
      expiresAt: now + this.o.approvalTimeoutMs(),
      agent: { name: actor.name ?? 'unknown agent', ...(actor.version ? { version: actor.version } : {}) },
      faculty: f.faculty,
      operation: f.operation,
      kind: ctx.kind,
      verb: f.verb,
      origin: r.target.origin,
      tab: { tabId: r.target.tabId, title: tab?.title ?? '', url: discovery?.url ?? tab?.url ?? '' },
      frame: { frameId: r.target.frameId, url: r.target.frameUrl },
      documentId: r.target.documentId,
      subjectHash: r.subjectHash,
      subject: structuredClone(r.subject),
      argumentsHash: argsHash,
      arguments: structuredClone(args),
      ...(operationId ? { operationId } : {}),
    };
    trail.write('approval-shown', actor, { expiresAt: view.expiresAt, policy: policyReason, ...(operationId ? { operationId } : {}) });
    const outcome: ApprovalDecision = await this.o.approvals.request(view, ctx.signal);
    switch (outcome.kind) {
      case 'denied':
        trail.write('denied', { kind: 'person' }, outcome.reason ? { reason: outcome.reason } : {});
        return trail.answer({
          ok: false,
          error: {
            code: 'denied',
            message: outcome.reason ? `The person denied this request. Their reason: ${outcome.reason}` : 'The person denied this request.',
            ...(outcome.reason ? { detail: { reason: outcome.reason } } : {}),
          },
        });
      case 'expired':
        trail.write('expired', { kind: 'console' }, { expiresAt: view.expiresAt });
        return trail.answer({
          ok: false,
          error: { code: 'expired', message: `The person did not answer within ${Math.round((view.expiresAt - view.createdAt) / 1000)} s; the request expired and nothing was done.` },
        });
      case 'cancelled':
        return trail.cancelled(outcome.by === 'agent' ? actor : { kind: outcome.by }, outcome.reason);
      case 'refused':
        return trail.refuse({ kind: 'console' }, outcome.code, `Refused before dispatch: ${outcome.reason}. Nothing was dispatched; ${f.lookAgain(r.target.tabId)}.`);
      case 'approved':
        trail.write('approved', { kind: 'person' }, {});
        return null;
    }
  }

  /** Step 7: the one `dispatch` link request; never throws (a throw is an unknown outcome). */
  private async dispatch(f: ActionFaculty<ActionRequestBase>, ctx: AgentContext, r: ResolvedAction, args: Record<string, unknown>, grant: Grant): Promise<Result<InvocationResult>> {
    // Our own controller: the agent's signal aborts it, and nothing else shares it.
    const ctl = new AbortController();
    const onAbort = () => ctl.abort();
    ctx.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      return await this.o.link.request(
        {
          op: 'dispatch',
          faculty: f.faculty,
          operation: f.operation,
          target: { tabId: r.target.tabId, frameId: r.target.frameId, documentId: r.target.documentId },
          subject: r.linkSubject,
          arguments: args,
          grant,
          timeoutMs: this.o.dispatchTimeoutMs,
        },
        { signal: ctl.signal, timeoutMs: this.o.dispatchTimeoutMs + this.o.linkGraceMs },
      );
    } catch (e) {
      // ExtensionLink promises never to throw; if it does, the outcome is unknown.
      return { ok: false, error: toErrorInfo(e) };
    } finally {
      ctx.signal?.removeEventListener('abort', onAbort);
    }
  }

  /** Step 8: the extension's answer as the request's outcome and its receipt. */
  private mapOutcome(
    f: ActionFaculty<ActionRequestBase>,
    trail: Trail,
    actor: Actor,
    ctx: AgentContext,
    r: ResolvedAction,
    argsHash: string,
    res: Result<InvocationResult>,
  ): BrokerAnswer<ActionValue> {
    const unknown = (why: string, detail: Record<string, unknown>): BrokerAnswer<ActionValue> => {
      this.o.discoveries.block(r.target.tabId, r.target.documentId, r.subjectKey, trail.requestId);
      trail.tryWrite('outcome-unknown', actor, detail);
      return trail.answer({
        ok: false,
        error: {
          code: 'outcome-unknown',
          message:
            `${why} It may or may not have happened. Further requests on ${JSON.stringify(r.subjectKey)} in this document are refused ` +
            `until you inspect the page: ${f.lookAgain(r.target.tabId)}, then decide whether to retry.`,
        },
      });
    };
    if (!res.ok) {
      if (ctx.signal?.aborted || res.error.code === 'aborted') {
        // Aborting makes the link ask the extension to cancel (op 'cancel'), but the
        // page may already have acted, and aborting does not undo it: the outcome is unknown.
        return unknown('The agent cancelled the request after it was dispatched.', { reason: 'cancelled-during-dispatch' });
      }
      if (PRE_DISPATCH_CODES.has(res.error.code)) return this.extensionRefused(f, trail, actor, r, res.error.code, res.error.message);
      if (res.error.code === 'timeout') return unknown(`The extension did not answer within ${Math.round((this.o.dispatchTimeoutMs + this.o.linkGraceMs) / 1000)} s.`, { reason: 'timeout' });
      if (res.error.code === 'link-down') return unknown('The link to the extension dropped during dispatch.', { reason: 'link-down' });
      return unknown(`The extension answered with an error (${res.error.code}).`, {
        reason: 'link-error',
        error: { code: res.error.code, message: redactText(res.error.message).value.slice(0, 500) },
      });
    }
    const x = res.value;
    if (!x || typeof x !== 'object' || !OUTCOMES.has(x.outcome)) return unknown('The extension sent a malformed answer.', { reason: 'malformed-answer' });
    switch (x.outcome) {
      case 'succeeded': {
        const raw = typeof x.result === 'string' ? x.result : null;
        const shaped = raw === null ? null : boundText(raw);
        const value: ActionValue = {
          outcome: 'succeeded',
          resolved: r,
          argumentsHash: argsHash,
          result: shaped ? shaped.text : null,
          truncated: Boolean(shaped?.truncated || x.truncated),
          redacted: Boolean(shaped?.redacted || x.redacted),
          ...(typeof x.elapsedMs === 'number' ? { elapsedMs: x.elapsedMs } : {}),
        };
        trail.tryWrite('succeeded', actor, {
          elapsedMs: x.elapsedMs ?? null,
          resultBytes: shaped?.originalBytes ?? 0,
          resultSha256: shaped ? sha256HexSync(shaped.text) : null,
          truncated: value.truncated,
          redacted: value.redacted,
        });
        return trail.answer({ ok: true, value });
      }
      case 'failed': {
        const msg = redactText(String(x.error?.message ?? 'the page failed the action')).value.slice(0, 2000);
        trail.tryWrite('failed', actor, { error: { code: x.error?.code ?? 'failed', message: msg }, elapsedMs: x.elapsedMs ?? null });
        return trail.answer({
          ok: false,
          error: { code: 'failed', message: `The page ran the action and reported a failure (${x.error?.code ?? 'failed'}).`, detail: { untrustedText: msg } },
        });
      }
      case 'refused':
        return this.extensionRefused(f, trail, actor, r, x.refusal ?? x.error?.code ?? 'refused', x.error?.message ?? '');
      case 'cancelled':
        // The extension answers 'cancelled' when the action's signal was aborted, which can
        // happen after the page started: nothing proves it did not act.
        return unknown('The extension reports the request was cancelled while it was dispatched.', {
          reason: 'extension-cancelled-during-dispatch',
          elapsedMs: x.elapsedMs ?? null,
        });
      case 'outcome-unknown':
        return unknown('The extension could not tell whether the action completed (it did not settle in time or the page went away).', {
          reason: 'extension-outcome-unknown',
          elapsedMs: x.elapsedMs ?? null,
        });
    }
    return unknown('Unreachable.', { reason: 'unreachable' });
  }

  private extensionRefused(f: ActionFaculty<ActionRequestBase>, trail: Trail, actor: Actor, r: ResolvedAction, code: string, message: string): BrokerAnswer<ActionValue> {
    const stale = STALE_CODES.has(code);
    if (stale) f.onStale?.(r.target.tabId, this.env);
    const text = redactText(String(message)).value.slice(0, 500);
    trail.tryWrite('refused', actor, { code, message: text, by: 'extension' });
    return trail.answer({
      ok: false,
      error: {
        code,
        message: `The extension refused the request before running it (${code}); nothing was done.` + (stale ? ` The page changed since you looked: ${f.lookAgain(r.target.tabId)}.` : ''),
      },
    });
  }
}

/** Step 1's result: the arguments as a private copy parsed from their canonical text, or why not. */
type Shaped =
  | { ok: true; args: Record<string, unknown>; hash: string; bytes: number }
  | { ok: false; code: string; message: string; hash: string | null; bytes: number };

/**
 * Step 1, shapeArguments: the arguments must be a JSON object within
 * LIMITS.maxArgumentsBytes (canonical JSON) and LIMITS.maxArgumentsDepth (the
 * link carries no deeper). What is validated, shown, granted and dispatched
 * afterwards is a copy parsed from the canonical text: exactly what was hashed.
 */
export async function shapeArguments(raw: unknown): Promise<Shaped> {
  let canon: string;
  let hash: string;
  try {
    canon = canonicalJson(raw);
    hash = await hashArguments(raw, nodeSha256);
  } catch (e) {
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return { ok: false, code: 'invalid-arguments', message: '`arguments` must be a JSON object.', hash: null, bytes: 0 };
    return { ok: false, code: 'invalid-arguments', message: `\`arguments\` is not plain JSON: ${e instanceof Error ? e.message : String(e)}.`, hash: null, bytes: 0 };
  }
  const bytes = utf8Bytes(canon);
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return { ok: false, code: 'invalid-arguments', message: '`arguments` must be a JSON object.', hash, bytes };
  if (bytes > LIMITS.maxArgumentsBytes) return { ok: false, code: 'arguments-too-large', message: `\`arguments\` is ${bytes} bytes of canonical JSON; the limit is ${LIMITS.maxArgumentsBytes}.`, hash, bytes };
  const args = JSON.parse(canon) as Record<string, unknown>;
  if (jsonDepth(args, LIMITS.maxArgumentsDepth) > LIMITS.maxArgumentsDepth) {
    return { ok: false, code: 'arguments-too-deep', message: `\`arguments\` is nested deeper than ${LIMITS.maxArgumentsDepth} levels; the link to the extension carries no deeper arguments.`, hash, bytes };
  }
  return { ok: true, args, hash, bytes };
}
