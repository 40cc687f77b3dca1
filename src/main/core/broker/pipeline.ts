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
 *
 * Receipts commit at once and reach the disk in the background; before every
 * effect outside the console — a request to the extension (a read, a `locate`,
 * a `form` read, the dispatch), the dialog shown to the person, the answer to
 * the agent — the pipeline waits until everything written so far is on disk
 * (`Trail.settle`, `durableFirst`; docs/ledger.md, "Durability").
 */
import { randomBytes } from 'node:crypto';
import type { ApprovalView } from '../../../shared/ipc';
import { LIMITS } from '../../../shared/limits';
import { ENDING_EVENTS, type Faculty } from '../../../shared/receipt';
import { err, ok, toErrorInfo, type Result } from '../../../shared/result';
import type { Grant, InvocationResult } from '../../../shared/types';
import type { ExtensionLink } from '../ports';
import type { ToolRouter } from '../policy';
import type { Sharing } from '../sharing';
import { CONSOLE_TAB_REFUSAL } from '../sharing';
import type { ApprovalDecision, ApprovalQueue } from './approvals';
import { shapeArguments } from './arguments';
import type { Discoveries } from './discoveries';
import type { ActionFaculty, ActionRequestBase, ActionValue, AgentContext, FacultyEnv, ResolvedAction } from './faculty';
import { mapOutcome } from './outcome';
import { facultyEnv } from './faculty-env';
import type { PictureStore } from '../faculties/semantic-picture';
import type { LivePatches } from '../faculties/live-patch';
import { LedgerUnavailable, Trail, ledgerUnavailableMessage, refusalDetail, type BrokerAnswer, type ReceiptSink, type TrailFields } from './trail';
import type { ArgumentValidator } from './validator';
import type { Turns } from '../turns';
import { stopReason, type Flight, type InFlight } from './in-flight';

export type { ActionFaculty, ActionRequestBase, ActionTarget, ActionValue, AgentContext, FacultyEnv, ResolvedAction } from './faculty';

export interface PipelineOptions {
  link: ExtensionLink;
  /** Where the targets' pictures are kept while their approvals are shown (default: a new store). */
  pictures?: PictureStore;
  /** The active Live Patches (default: a new store). */
  patches?: LivePatches;
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
  /** At most this many approvals wait at once. */
  maxPendingApprovals: number;
  /** At most this many of them from one agent token (issue 9 item 10), so one agent cannot take every slot. */
  maxPendingPerAgent: number;
  validator: ArgumentValidator;
  /** Timeout of the link reads a faculty makes while resolving (`locate`) (ms, default 15 s). */
  readTimeoutMs?: number;
  /** How long a form without toolautosubmit waits for the person to press the page's button after approval (ms, default FORM_WAIT_TIMEOUT_MS). */
  formWaitTimeoutMs?: number;
  /** How often the agent is told, while such a form waits, that it still waits (ms, default 10 s; the first notice goes at once). */
  progressIntervalMs?: number;
  /** Each request resumes after its receipts reach the disk on its own turn (../turns.ts). */
  turns?: Turns;
  /** The requests in flight: every action registers here, and Stop reaches it here (./in-flight.ts). */
  inFlight: InFlight;
}

/**
 * The bounded wait for the person's submit of a form that only fills (no toolautosubmit): 5 minutes.
 * Long enough to read the form and press the button; the agent's call stays open meanwhile, with
 * progress notifications, and `request_status` tells how it ended if the agent stopped waiting.
 */
export const FORM_WAIT_TIMEOUT_MS = 5 * 60_000;

/** The pipeline shared by every faculty. Never throws to its callers. */
export class Pipeline {
  private readonly env: FacultyEnv;

  constructor(private readonly o: PipelineOptions) {
    this.env = facultyEnv(o, () => this.durableFirst());
  }

  /** Every receipt written so far on disk before a link read (`ledger-unavailable` when it could not be). */
  private async durableFirst(): Promise<Result<void>> {
    try {
      await this.o.receipts.durable();
      return ok(undefined);
    } catch (e) {
      return err('ledger-unavailable', ledgerUnavailableMessage(e));
    }
  }

  /** A new trail (receipts) for one request of `faculty`. */
  trail(faculty: Faculty, fields: Partial<TrailFields> = {}): Trail {
    return new Trail(this.o.receipts, faculty, fields, undefined, this.o.turns);
  }

  // ---- reads ---------------------------------------------------------------------

  /**
   * A read: `requested` → policy → `work` → `succeeded` with `detail(value)`, or the
   * read's own success event (ENDING_EVENTS: `discovered`) with it and then the
   * outcome it stands for (`succeeded`, detail `{after: event}`). Tabs showing the console are refused before and
   * after the read (`console-tab`). Never throws.
   */
  async read<V>(
    p: { faculty: Faculty; operation: string; agentTool: string; tabId?: number; ctx: AgentContext; event?: 'succeeded' | keyof typeof ENDING_EVENTS; requested?: Record<string, unknown> },
    work: (trail: Trail) => Promise<Result<V>>,
    after: (v: V, trail: Trail) => { origin?: string | null; url?: string | null; detail: Record<string, unknown> },
  ): Promise<BrokerAnswer<V>> {
    const trail = this.trail(p.faculty, { operation: p.operation, ...(p.tabId !== undefined ? { tabId: p.tabId } : {}) });
    // The value goes to the agent only once its receipts are on disk.
    return trail.settled(await this.readSteps(p, trail, work, after), false);
  }

  private async readSteps<V>(
    p: { faculty: Faculty; operation: string; agentTool: string; tabId?: number; ctx: AgentContext; event?: 'succeeded' | keyof typeof ENDING_EVENTS; requested?: Record<string, unknown> },
    trail: Trail,
    work: (trail: Trail) => Promise<Result<V>>,
    after: (v: V, trail: Trail) => { origin?: string | null; url?: string | null; detail: Record<string, unknown> },
  ): Promise<BrokerAnswer<V>> {
    const { ctx } = p;
    try {
      trail.write('requested', ctx.actor, { agentTool: p.agentTool, ...p.requested });
      if (p.tabId !== undefined && this.o.sharing.isRefusedConsoleTab(p.tabId)) return trail.refuse(ctx.actor, 'console-tab', `Tab ${p.tabId} ${CONSOLE_TAB_REFUSAL}.`);
      const knownOrigin = p.tabId !== undefined ? (this.o.sharing.get(p.tabId)?.origin ?? null) : null;
      const before = this.o.policy.decide({ faculty: p.faculty, kind: ctx.kind, origin: knownOrigin, tabId: p.tabId ?? null });
      if (before.action !== 'allow') return trail.refuse(ctx.actor, 'policy-denied', `Denied by the console's policy: ${before.reason}.`);
      await trail.settle();
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
        const afterDecision = this.o.policy.decide({ faculty: p.faculty, kind: ctx.kind, origin: seen.origin, tabId: p.tabId ?? null });
        if (afterDecision.action !== 'allow') return trail.refuse(ctx.actor, 'policy-denied', `Denied by the console's policy: ${afterDecision.reason}.`);
      }
      const event = p.event ?? 'succeeded';
      trail.write(event, ctx.actor, seen.detail);
      // A read's own success event that is not an outcome (a discovery's `discovered`, which restart
      // recovery looks for) is followed by the outcome it stands for (ENDING_EVENTS), so the
      // request ends in the ledger as every other does: the Timeline, request_status, the export's
      // outcome filter and the signed checkpoint at every outcome (docs/broker.md, "Lifecycle").
      if (event !== 'succeeded') trail.write(ENDING_EVENTS[event], ctx.actor, { after: event });
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
    const trail = this.trail(f.faculty, { ...f.initialFields(req), operation: f.operation, argumentsHash: shaped.hash });
    try {
      ctx.onRequest?.(trail.requestId);
    } catch {
      /* the caller's notice must not break the request */
    }
    const state = { dispatched: false };
    // Registered for the whole request, so the person's Stop (and Stop everything) reaches it in any phase.
    const flight = this.o.inFlight.begin({
      requestId: trail.requestId,
      faculty: f.faculty,
      operation: f.operation,
      tabId: req.tabId,
      agent: ctx.byPerson ? 'person' : (ctx.actor.name ?? 'unknown agent'),
    });
    // Once its end is decided (denied, refused, cancelled, expired, …; after dispatch: the answer came),
    // a request is no longer stoppable while that end is written to disk: a Stop then says so
    // (`unknown-request`) instead of reporting a stop that did nothing.
    trail.whenAnswered(() => flight.answered());
    try {
      // The answer goes to the agent once every receipt of the request is on disk.
      return await trail.settled(await this.actionSteps(f, req, ctx, trail, shaped, state, flight), state.dispatched);
    } finally {
      flight.end();
    }
  }

  /** The request's end when the person stopped it before dispatch (`cancelled`, actor the person), else null. */
  private stoppedBeforeDispatch(trail: Trail, flight: Flight): BrokerAnswer<ActionValue> | null {
    return flight.stopped ? trail.cancelled({ kind: 'person' }, stopReason(flight.stopped)) : null;
  }

  private async actionSteps<R extends ActionRequestBase>(
    f: ActionFaculty<R>,
    req: R,
    ctx: AgentContext,
    trail: Trail,
    shaped: Awaited<ReturnType<typeof shapeArguments>>,
    state: { dispatched: boolean },
    flight: Flight,
  ): Promise<BrokerAnswer<ActionValue>> {
    const actor = ctx.actor;
    const operationId = typeof req.operationId === 'string' ? req.operationId.slice(0, 128) : undefined;
    try {
      trail.write('requested', actor, { agentTool: f.agentTool, operation: f.operation, argumentsBytes: shaped.bytes, ...(operationId ? { operationId } : {}) });

      // 1. shapeArguments: limits and shape (before anything else looks at them).
      if (!shaped.ok) return trail.refuse(actor, shaped.code, shaped.message);
      const args = shaped.args;
      const argsHash = shaped.hash;

      // 2. resolveSubject.
      // The share the request was made under: if it ends (unshared, Stop everything, shared anew)
      // before the dispatch, the request ends too (approvals already waiting are cancelled by the broker).
      const sharedAt = this.o.sharing.get(req.tabId)?.sharedAt;
      if (this.o.sharing.isRefusedConsoleTab(req.tabId)) return trail.refuse(actor, 'console-tab', `Tab ${req.tabId} ${CONSOLE_TAB_REFUSAL}.`);
      // The shaped arguments: what is hashed is what a form subject merges over the form's values.
      const resolved = await f.resolveSubject({ ...req, arguments: args }, this.env, ctx.signal);
      // The agent withdrew the request while the subject was being resolved (e.g. during a locate).
      if (ctx.signal?.aborted) return trail.cancelled(actor, 'the agent cancelled the request before it was shown');
      if (!resolved.ok) return trail.refuse(actor, resolved.error.code, resolved.error.message);
      const r = resolved.value;
      if (this.o.sharing.isConsoleOrigin(r.target.origin)) return trail.refuse(actor, 'console-tab', `Tab ${req.tabId} ${CONSOLE_TAB_REFUSAL}.`);
      trail.set({ origin: r.target.origin, frameId: r.target.frameId, documentId: r.target.documentId, ...r.receiptFields, subjectHash: r.subjectHash });
      const blocked = this.o.discoveries.blockedBy(f.faculty, r.target.tabId, r.target.documentId, r.subjectKey);
      if (blocked) {
        return trail.refuse(
          actor,
          'outcome-unknown-pending',
          `The outcome of an earlier request on the same tool or target in this document (request ${blocked}) is unknown: ` +
            `it may or may not have happened. Inspect the page first: ${f.lookAgain(r.target.tabId)}, then decide whether to retry.`,
        );
      }

      // 3. validate: against the exact reviewed subject; failures never reach the person.
      const v = f.validate(r, args, this.env);
      if (!v.ok) {
        return trail.refuse(actor, v.error.code, v.error.message, refusalDetail(v.error.detail));
      }
      // The stripped URLs the person reviews, and whether they changed since the agent's look.
      const where = { url: r.target.tabUrl, frameUrl: r.target.frameUrl, ...(r.movedSinceLook ? { movedSinceLook: true } : {}) };
      trail.write('validated', actor, { ...v.value, ...where });

      // 4. policy: the floor (review for every mutation) cannot be lowered; a rule may deny.
      const decision = this.o.policy.decide({ faculty: f.faculty, operation: f.operation, kind: ctx.kind, origin: r.target.origin, tabId: r.target.tabId, ...r.policy });
      if (decision.action === 'deny') return trail.refuse(actor, 'policy-denied', `Denied by the console's policy: ${decision.reason}.`);

      // 5. requestApproval — unless the person's own rule allows this low-impact
      // mutation in this one tab (src/main/core/policy: only a tab rule at the tab's
      // origin can, and never for a mutation). A read-kind tool that reaches here is
      // treated as a mutation: an action is never skipped on a declared 'read'.
      if (ctx.byPerson) {
        // The person's own act in the console (a Revert press): their press is the decision.
        if (this.o.link.status().state !== 'connected') {
          return trail.refuse(actor, 'link-down', 'The browser extension is not connected to the console; nothing was done. Try again once it is connected.');
        }
        trail.write('approved', { kind: 'person' }, { byPerson: 'console' });
        flight.approved();
      } else if (decision.action === 'allow' && ctx.kind === 'low-impact-mutation') {
        if (this.o.link.status().state !== 'connected') {
          return trail.refuse(actor, 'link-down', 'The browser extension is not connected to the console; nothing was done. Try again once it is connected.');
        }
        trail.write('approved', { kind: 'console' }, { byRule: decision.ruleIndex, policy: decision.reason });
        flight.approved();
      } else {
        const approval = await this.requestApproval(f, trail, ctx, r, args, argsHash, decision.reason, operationId, flight, sharedAt);
        if (approval) return approval;
      }

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
      // This request's turn before the last checks; the disk is waited for once, after `dispatched`.
      await this.o.turns?.take();
      const early = this.beforeSend(trail, f, ctx, r, 'while this request waited for approval', flight, sharedAt);
      if (early) return early;

      // 7. dispatch. From here on, not knowing the outcome means outcome-unknown.
      // A form that only fills waits for the person's press of the page's button, within a bounded wait.
      const waitsForPerson = r.subject.type === 'webmcp-tool' && r.subject.form !== undefined && !r.subject.form.autosubmit;
      const timeoutMs = waitsForPerson ? (this.o.formWaitTimeoutMs ?? FORM_WAIT_TIMEOUT_MS) : Math.min(f.dispatchTimeoutMs ?? Infinity, this.o.dispatchTimeoutMs);
      trail.write('dispatched', actor, { grantExpiresAt: signed.value.expiresAt, timeoutMs, ...(waitsForPerson ? { awaitingPerson: true } : {}) });
      // Nothing leaves for the page before its receipts are on disk (a failure: ledger-unavailable, nothing dispatched).
      await trail.settle({ turn: false });
      // That wait let other work run: what the checks above ruled out is checked again, with no await
      // between this and the send (an earlier request on this subject may have become outcome-unknown).
      const late = this.beforeSend(trail, f, ctx, r, 'while its receipts were written', flight, sharedAt);
      if (late) return late;
      state.dispatched = true;
      const stopProgress = waitsForPerson ? this.progressWhileWaiting(ctx, timeoutMs) : () => undefined;
      let res: Result<InvocationResult>;
      try {
        res = await this.dispatch(f, ctx, r, args, signed.value, timeoutMs, flight);
      } finally {
        stopProgress();
        // The extension has answered (or the console stopped waiting): from here a Stop has nothing left to stop.
        flight.answered();
      }

      // 8. mapOutcome.
      return mapOutcome(
        {
          f,
          trail,
          actor,
          ctx,
          r,
          argsHash,
          discoveries: this.o.discoveries,
          env: this.env,
          waitedMs: timeoutMs + this.o.linkGraceMs,
          ...(flight.stopped ? { stopped: flight.stopped } : {}),
        },
        res,
      );
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
    flight: Flight,
    sharedAt: number | undefined,
  ): Promise<BrokerAnswer<ActionValue> | null> {
    const actor = ctx.actor;
    const refused = this.admission(trail, f, ctx, flight) ?? this.shareEnded(trail, r.target.tabId, sharedAt);
    if (refused) return refused;
    // Evidence taken only now that the person is to be asked (the target's picture).
    const evidence = f.evidence ? await f.evidence(r, this.env, ctx.signal) : null;
    if (ctx.signal?.aborted) return trail.cancelled(actor, 'the agent cancelled the request before it was shown');
    const now = Date.now();
    const tab = this.o.sharing.get(r.target.tabId);
    const view: ApprovalView = {
      requestId: trail.requestId,
      createdAt: now,
      expiresAt: now + this.o.approvalTimeoutMs(),
      agent: {
        // The person's own manual invoke (the tool inspector, src/main/core/inspector.ts) says so.
        name: actor.kind === 'person' ? (actor.name ?? 'You (tool inspector)') : (actor.name ?? 'unknown agent'),
        ...(actor.version ? { version: actor.version } : {}),
        ...(actor.tokenId ? { tokenId: actor.tokenId } : {}),
        ...(actor.clientName ? { clientName: actor.clientName } : {}),
      },
      faculty: f.faculty,
      operation: f.operation,
      kind: ctx.kind,
      verb: f.verb,
      origin: r.target.origin,
      // The URLs the faculty resolved, read with the exact-URL hash the grant binds.
      tab: { tabId: r.target.tabId, title: tab?.title ?? '', url: r.target.tabUrl },
      frame: { frameId: r.target.frameId, url: r.target.frameUrl },
      documentId: r.target.documentId,
      subjectHash: r.subjectHash,
      subject: structuredClone(evidence?.subject ?? r.subject),
      argumentsHash: argsHash,
      arguments: structuredClone(args),
      ...(operationId ? { operationId } : {}),
    };
    trail.write('approval-shown', actor, { expiresAt: view.expiresAt, policy: policyReason, ...(operationId ? { operationId } : {}), ...(evidence?.detail ?? {}) });
    // The person sees the request only once its receipts are on disk. The wait lets other requests
    // run, so the caps and the link are checked again with no await between this and the queue.
    await trail.settle();
    const late = this.admission(trail, f, ctx, flight) ?? this.shareEnded(trail, r.target.tabId, sharedAt);
    if (late) return late;
    const asked = this.o.approvals.request(view, ctx.signal);
    // The person's Stop withdraws the pending approval (cancelled by the person).
    flight.awaitingApproval((reason) => this.o.approvals.cancel(trail.requestId, 'person', reason));
    const outcome: ApprovalDecision = await asked;
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
        flight.approved();
        return null;
    }
  }

  /**
   * The tab's share that the request was made under (`sharedAt`) has ended: the person unshared
   * it (or pressed Stop everything), or it is shared anew. Refused `tab-not-shared` by the console;
   * else null. Unknown at resolve (no list from the extension yet): not judged here (the extension
   * refuses an unshared tab at dispatch).
   */
  private shareEnded(trail: Trail, tabId: number, sharedAt: number | undefined): BrokerAnswer<ActionValue> | null {
    if (sharedAt === undefined || this.o.sharing.get(tabId)?.sharedAt === sharedAt) return null;
    return trail.refuse({ kind: 'console' }, 'tab-not-shared', `Tab ${tabId} stopped being shared while this request was on its way (the person unshared it, or shared it anew); nothing was dispatched.`);
  }

  /** The faculty's own standing condition (ActionFaculty.refusedNow) no longer holds: refused by the console, else null. */
  private facultyRefuses(trail: Trail, f: ActionFaculty<ActionRequestBase>): BrokerAnswer<ActionValue> | null {
    const no = f.refusedNow?.() ?? null;
    return no ? trail.refuse({ kind: 'console' }, no.code, `${no.message} Nothing was dispatched.`) : null;
  }

  /** The checks before a request joins the person's queue: the link, the agent's cancel, the global and per-agent caps. */
  private admission(trail: Trail, f: ActionFaculty<ActionRequestBase>, ctx: AgentContext, flight: Flight): BrokerAnswer<ActionValue> | null {
    const actor = ctx.actor;
    const stopped = this.stoppedBeforeDispatch(trail, flight);
    if (stopped) return stopped;
    const gone = this.facultyRefuses(trail, f);
    if (gone) return gone;
    if (this.o.link.status().state !== 'connected') {
      return trail.refuse(actor, 'link-down', 'The browser extension is not connected to the console; nothing was shown to the person. Try again once it is connected.');
    }
    if (ctx.signal?.aborted) return trail.cancelled(actor, 'the agent cancelled the request before it was shown to the person');
    if (this.o.approvals.list().length >= this.o.maxPendingApprovals) {
      return trail.refuse(actor, 'too-many-pending', `${this.o.maxPendingApprovals} requests are already waiting for the person; wait for them to be decided before asking again.`);
    }
    // Per agent token (issue 9 item 10): one token holder filled all 16 shared slots, and no other agent could ask.
    const tokenId = ctx.agentToken?.id ?? actor.tokenId;
    if (tokenId !== undefined) {
      const mine = this.o.approvals.list().filter((x) => x.agent.tokenId === tokenId).length;
      if (mine >= this.o.maxPendingPerAgent) {
        return trail.refuse(
          actor,
          'too-many-pending',
          `Agent token "${actor.name ?? tokenId}" already has ${mine} requests waiting for the person (at most ${this.o.maxPendingPerAgent} per agent); wait for them to be decided before asking again.`,
        );
      }
    }
    return null;
  }

  /**
   * The checks right before the dispatch, made after the approval and again after the last wait
   * for the disk (`meanwhile` says when): the agent's cancel, the link, and an outcome-unknown on
   * this subject that arose meanwhile. null: send; else the request's final answer.
   */
  private beforeSend(
    trail: Trail,
    f: ActionFaculty<ActionRequestBase>,
    ctx: AgentContext,
    r: ResolvedAction,
    meanwhile: string,
    flight: Flight,
    sharedAt: number | undefined,
  ): BrokerAnswer<ActionValue> | null {
    const actor = ctx.actor;
    const stopped = this.stoppedBeforeDispatch(trail, flight);
    if (stopped) return stopped;
    const unshared = this.shareEnded(trail, r.target.tabId, sharedAt);
    if (unshared) return unshared;
    const gone = this.facultyRefuses(trail, f);
    if (gone) return gone;
    if (ctx.signal?.aborted) return trail.cancelled(actor, `the agent cancelled the request ${meanwhile}, before dispatch`);
    if (this.o.link.status().state !== 'connected') {
      return trail.refuse(actor, 'link-down', `The browser extension disconnected ${meanwhile}; nothing was dispatched. Try again once it is connected.`);
    }
    const unknown = this.o.discoveries.blockedBy(f.faculty, r.target.tabId, r.target.documentId, r.subjectKey);
    if (unknown) {
      return trail.refuse(
        actor,
        'outcome-unknown-pending',
        `The outcome of an earlier request on the same tool or target in this document (request ${unknown}) became unknown ${meanwhile}: ` +
          `it may or may not have happened, so this one was not dispatched. Inspect the page first: ${f.lookAgain(r.target.tabId)}, then decide whether to retry.`,
      );
    }
    return null;
  }

  /**
   * While a form waits for the person: MCP progress notifications to the agent (through
   * `ctx.progress`, when its client asked for them), one at once and then every
   * `progressIntervalMs`; `progress` is the ms waited, `total` the bounded wait. Returns the stop.
   */
  private progressWhileWaiting(ctx: AgentContext, timeoutMs: number): () => void {
    if (!ctx.progress) return () => undefined;
    const started = Date.now();
    const tell = () => {
      try {
        ctx.progress?.({ progress: Date.now() - started, total: timeoutMs, message: "The form is filled; waiting for the person to press the page's button to submit it." });
      } catch {
        /* a notice that cannot be sent changes nothing */
      }
    };
    tell();
    const timer = setInterval(tell, this.o.progressIntervalMs ?? 10_000);
    timer.unref?.();
    return () => clearInterval(timer);
  }

  /** Step 7: the one `dispatch` link request; never throws (a throw is an unknown outcome). */
  private async dispatch(
    f: ActionFaculty<ActionRequestBase>,
    ctx: AgentContext,
    r: ResolvedAction,
    args: Record<string, unknown>,
    grant: Grant,
    timeoutMs: number,
    flight: Flight,
  ): Promise<Result<InvocationResult>> {
    // Our own controller: the agent's signal and the person's Stop (./in-flight.ts) abort it, and nothing else shares it.
    const ctl = new AbortController();
    const onAbort = () => ctl.abort();
    ctx.signal?.addEventListener('abort', onAbort, { once: true });
    flight.dispatched(onAbort);
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
          timeoutMs,
        },
        { signal: ctl.signal, timeoutMs: timeoutMs + this.o.linkGraceMs },
      );
    } catch (e) {
      // ExtensionLink promises never to throw; if it does, the outcome is unknown.
      return { ok: false, error: toErrorInfo(e) };
    } finally {
      ctx.signal?.removeEventListener('abort', onAbort);
    }
  }

}
