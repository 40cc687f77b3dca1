/**
 * The broker: the console's side of every agent request, built from
 *  - the action pipeline (./pipeline.ts), the named steps every faculty shares;
 *  - the receipt trail (./trail.ts);
 *  - what it remembers between calls (./discoveries.ts: latest discoveries and
 *    outcome-unknown blocks);
 *  - the pending approvals (./approvals.ts);
 *  - the shared tabs (../sharing), whose events it listens to.
 * Faculties are constants outside it (src/main/core/faculties/*). It never
 * throws to its callers: every answer is a `BrokerAnswer` naming the request
 * and its last receipt. See docs/broker.md.
 */
import { AGENT_QUOTA_LIMITS } from '../agent/quotas';
import type { Faculty, ReceiptPage, ReceiptQuery } from '../../../shared/receipt';
import type { Result } from '../../../shared/result';
import type { DiscoveryResult, SharedTab } from '../../../shared/types';
import { MAX_STATUS_RECEIPTS, statusOf, type RequestStatus } from './request-status';
import { invokeValueOf, webmcpInvoke, type InvokeRequest, type InvokeValue } from '../faculties/webmcp-invoke';
import type { ExtensionLink } from '../ports';
import { ToolRouter } from '../policy';
import { Sharing } from '../sharing';
import { LIMITS } from '../../../shared/limits';
import { ApprovalQueue } from './approvals';
import { Discoveries, unheardIn, type ToolChanges } from './discoveries';
import { Pipeline, type ActionFaculty, type ActionRequestBase, type ActionValue, type AgentContext } from './pipeline';
import type { Turns } from '../turns';
import { Trail, type BrokerAnswer, type BrokerFailure, type ReceiptSink } from './trail';
import { ArgumentValidator, type ArgumentIssue } from './validator';
import { PictureStore } from '../faculties/semantic-picture';
import { LivePatches, revertFaculty } from '../faculties/live-patch';
import { ScriptRuns } from '../faculties/raw-js';
import type { LivePatchInfo } from '../../../shared/live-patch';
import { InFlight, type StopResult } from './in-flight';
import { TabRefresher } from './tab-refresh';

export { ApprovalQueue } from './approvals';
export { ArgumentValidator } from './validator';

/** The console discovers a tab of its own accord (a tools-changed notice) at most once per this interval (ms). */
export const REFRESH_MIN_INTERVAL_MS = 1_000;
/** Compile time spent marking a discovery's unusable schemas, at most (ms); the rest are checked at the call. */
export const USABILITY_BUDGET_MS = 250;
export type { ArgumentIssue } from './validator';
export type { ActionFaculty, ActionRequestBase, ActionValue, AgentContext, FacultyEnv, ResolvedAction } from './pipeline';
export type { AgentTokenRef } from './faculty';
export type { BrokerAnswer, BrokerFailure, ReceiptSink, RefusalDetail } from './trail';
export { refusalDetail } from './trail';
export type { InvokeRequest, InvokeValue } from '../faculties/webmcp-invoke';

export interface BrokerOptions {
  link: ExtensionLink;
  /** The ledger. `query` lets sharing seed its record of open shares at start. */
  receipts: ReceiptSink & { query?(q: ReceiptQuery): ReceiptPage };
  policy?: ToolRouter;
  /** The shared tabs (default: a Sharing over the same link and ledger). */
  sharing?: Sharing;
  /** Read at each approval request, so a settings change applies to the next one (ms). */
  approvalTimeoutMs?: () => number;
  /** Sent to the extension: after dispatch began, this long without a settle is outcome-unknown (ms). */
  dispatchTimeoutMs?: number;
  /** How long a form without toolautosubmit waits for the person's submit (ms; default FORM_WAIT_TIMEOUT_MS, pipeline.ts). */
  formWaitTimeoutMs?: number;
  /** How often the agent hears that such a form still waits (ms, default 10 s). */
  progressIntervalMs?: number;
  /** How much longer than `dispatchTimeoutMs` the console waits for the extension's own answer (ms). */
  linkGraceMs?: number;
  /** Timeout for reads (list-tabs, discover, read faculties) (ms). */
  readTimeoutMs?: number;
  validator?: ArgumentValidator;
  /** At most this many approvals wait at once; more are refused so an agent cannot flood the person (default 16). */
  maxPendingApprovals?: number;
  /** At most this many of them from one agent token (issue 9 item 10; default AGENT_QUOTA_LIMITS.maxPendingApprovals, 4). */
  maxPendingPerAgent?: number;
  /** Origins of the console's own pages: see Sharing.setConsoleOrigins. */
  consoleOrigins?: readonly string[];
  /** Requests resume after their receipts reach the disk one per pass of the event loop (../turns.ts); none: at once. */
  turns?: Turns;
}

export class Broker {
  readonly approvals = new ApprovalQueue();
  readonly policy: ToolRouter;
  readonly sharing: Sharing;
  readonly discoveries = new Discoveries();
  /** The targets' pictures of the approvals shown lately, in memory only (ConsoleApi.getTargetPicture). */
  readonly pictures = new PictureStore();
  /** The active Live Patches per tab, in memory only (ConsoleApi.listPatches, revertPatches; ../faculties/live-patch.ts). */
  readonly patches = new LivePatches();
  /** Every raw-JavaScript run, live, with Stop (ConsoleApi.runConsoleLine, stopScript; ../faculties/raw-js.ts). */
  readonly scripts: ScriptRuns = new ScriptRuns(this);
  /** The reviewed actions in flight, and the one place that stops them (./in-flight.ts; docs/stop.md). */
  readonly inFlight = new InFlight();
  private readonly link: ExtensionLink;
  private readonly pipeline: Pipeline;
  private readonly readTimeoutMs: number;
  /** The ledger's query (none: every request is unknown). */
  private readonly receiptQuery: (q: ReceiptQuery) => ReceiptPage;
  private readonly validator: ArgumentValidator;
  private readonly unsubscribe: Array<() => void> = [];

  constructor(opts: BrokerOptions) {
    this.link = opts.link;
    this.policy = opts.policy ?? new ToolRouter();
    this.readTimeoutMs = opts.readTimeoutMs ?? 15_000;
    this.validator = opts.validator ?? new ArgumentValidator();
    const receipts = opts.receipts;
    this.receiptQuery = (q) => (receipts.query ? receipts.query(q) : { receipts: [], nextCursor: null });
    this.sharing =
      opts.sharing ??
      new Sharing({
        link: opts.link,
        ledger: { append: (i) => receipts.append(i), query: (q) => (receipts.query ? receipts.query(q) : { receipts: [], nextCursor: null }) },
        consoleOrigins: opts.consoleOrigins ?? [],
      });
    if (opts.sharing && opts.consoleOrigins) this.sharing.setConsoleOrigins(opts.consoleOrigins);
    this.pipeline = new Pipeline({
      link: opts.link,
      pictures: this.pictures,
      patches: this.patches,
      inFlight: this.inFlight,
      receipts,
      policy: this.policy,
      approvals: this.approvals,
      sharing: this.sharing,
      discoveries: this.discoveries,
      validator: this.validator,
      approvalTimeoutMs: opts.approvalTimeoutMs ?? (() => LIMITS.approvalTimeoutMs),
      dispatchTimeoutMs: opts.dispatchTimeoutMs ?? LIMITS.dispatchTimeoutMs,
      linkGraceMs: opts.linkGraceMs ?? 5_000,
      maxPendingApprovals: opts.maxPendingApprovals ?? 16,
      maxPendingPerAgent: opts.maxPendingPerAgent ?? AGENT_QUOTA_LIMITS.maxPendingApprovals,
      readTimeoutMs: this.readTimeoutMs,
      ...(opts.turns ? { turns: opts.turns } : {}),
      ...(opts.formWaitTimeoutMs !== undefined ? { formWaitTimeoutMs: opts.formWaitTimeoutMs } : {}),
      ...(opts.progressIntervalMs !== undefined ? { progressIntervalMs: opts.progressIntervalMs } : {}),
    });
    this.unsubscribe.push(this.link.onEvent((e) => this.onLinkEvent(e)));
    this.unsubscribe.push(this.sharing.onTabsGone((gone) => this.tabsGone(gone)));
  }

  /** Stop listening to the link and cancel every pending approval (receipts `cancelled`). */
  dispose(): void {
    for (const u of this.unsubscribe.splice(0)) u();
    this.approvals.cancelAll('the console is shutting down');
  }

  // ---- shared tabs (delegates to Sharing) --------------------------------------------

  /** The shared tabs as last reported by the extension (copies). */
  getSharedTabs(): SharedTab[] {
    return this.sharing.list();
  }

  /** See Sharing.onChange. */
  onSharedTabs(listener: (tabs: SharedTab[], complete: boolean) => void): () => void {
    return this.sharing.onChange(listener);
  }

  /** Replace the shared-tab list with a whole list from the extension. */
  setSharedTabs(tabs: SharedTab[]): void {
    this.sharing.setAll(tabs);
  }

  /** One tab shared, as the extension's `share-tab` answer says. */
  putSharedTab(tab: SharedTab): void {
    this.sharing.put(tab);
  }

  /** One tab no longer shared. */
  dropSharedTab(tabId: number): void {
    this.sharing.drop(tabId);
  }

  /** See Sharing.setConsoleOrigins. */
  setConsoleOrigins(origins: readonly string[]): void {
    this.sharing.setConsoleOrigins(origins);
  }

  /** Whether this origin or URL is one of the console's own pages. */
  isConsoleOrigin(originOrUrl: string | null | undefined): boolean {
    return this.sharing.isConsoleOrigin(originOrUrl);
  }

  /** Whether this tab shows the console itself. */
  isConsoleTab(tab: Pick<SharedTab, 'origin' | 'url'>): boolean {
    return this.sharing.isConsoleTab(tab);
  }

  /** Drop the latest discovery of a tab (outcome-unknown blocks stay until a new discovery). */
  forgetTab(tabId: number): void {
    this.discoveries.forget(tabId);
  }

  /** The latest discovery of a tab, if any (for the console's tool inspector and tests). */
  latestDiscovery(tabId: number): DiscoveryResult | undefined {
    return this.discoveries.get(tabId);
  }

  private tabsGone(tabIds: number[]): void {
    const gone = new Set(tabIds);
    for (const tabId of gone) this.discoveries.forget(tabId);
    // Patches end with their document; a tab no longer shared cannot be reverted through us either.
    this.patches.dropTabs([...gone]);
    for (const v of this.approvals.list()) {
      if (gone.has(v.tab.tabId)) this.approvals.cancel(v.requestId, 'person', `tab ${v.tab.tabId} is no longer shared`);
    }
  }

  // ---- the person ----------------------------------------------------------------

  /**
   * The person's decision on one pending approval. `reason` (denials, at most
   * 500 characters) is shown to the agent.
   * @returns `unknown-request` if it is not pending (never existed, decided, expired, cancelled).
   */
  decide(requestId: string, decision: 'approve' | 'deny', reason?: string): Result<null> {
    return this.approvals.decide(requestId, decision, reason);
  }

  /**
   * The person's Stop on one request in flight (./in-flight.ts InFlight.stop): before dispatch it
   * ends `cancelled`, after dispatch `outcome-unknown` (the agent's pending call answers with that error).
   * Errors: `unknown-request`, `already-stopped`.
   */
  stop(requestId: string): Result<StopResult> {
    return this.inFlight.stop(requestId, 'stop');
  }

  // ---- calls refused at the door ---------------------------------------------------

  /**
   * ONE `refused` receipt for an HTTP request whose MCP content is malformed
   * (a JSON-RPC batch, a tools/call whose params the SDK cannot parse): at most
   * one receipt per HTTP request, so a single large body cannot write thousands
   * (issue 9 item 3). Never throws: a ledger failure is the ledger's to report.
   */
  refuseMalformed(p: { faculty: Faculty; actor: AgentContext['actor']; code: string; message: string; agentTool?: string }): void {
    try {
      this.pipeline.trail(p.faculty).write('refused', p.actor, { code: p.code, message: p.message.slice(0, 1000), ...(p.agentTool ? { agentTool: p.agentTool.slice(0, 128) } : {}) });
    } catch {
      /* reported by the ledger's own health check; the HTTP answer still goes out */
    }
  }

  /**
   * Receipts (`requested`, `refused`) for an agent call refused before the
   * lifecycle starts: malformed MCP arguments or an unknown agent tool.
   */
  rejectCall(p: { faculty: Faculty; agentTool: string; actor: AgentContext['actor']; code: string; message: string; issues?: ArgumentIssue[] }): BrokerFailure {
    const trail = this.pipeline.trail(p.faculty);
    try {
      trail.write('requested', p.actor, { agentTool: p.agentTool.slice(0, 128) });
      // These issues are about the agent tool's own schema (the console's words).
      return trail.refuse(p.actor, p.code, p.message, p.issues ? { issues: p.issues, issuesFromConsoleSchema: true } : undefined) as BrokerFailure;
    } catch (e) {
      return trail.internal(e) as BrokerFailure;
    }
  }

  // ---- reads -----------------------------------------------------------------------

  /** `list_tabs`: the tabs the person shared (policy: read, allowed unless a rule denies). */
  listTabs(ctx: AgentContext): Promise<BrokerAnswer<SharedTab[]>> {
    return this.pipeline.read(
      { faculty: 'list-tabs', operation: 'list', agentTool: 'list_tabs', ctx },
      async () => {
        const res = await this.link.request({ op: 'list-tabs' }, { signal: ctx.signal, timeoutMs: this.readTimeoutMs });
        if (!res.ok) return res;
        this.sharing.setAll(res.value);
        return { ok: true, value: this.sharing.list() };
      },
      (tabs) => ({ detail: { count: tabs.length } }),
    );
  }

  /**
   * `request_status`: one request's state and outcome from its receipts (./request-status.ts).
   * An agent learns only of its own requests: those its token made (the first receipt's
   * `actor.tokenId`); another agent's, or the person's, answer as if there were none, so an id
   * seen elsewhere (a shared link, a log) tells another agent nothing, not even that it exists.
   * Errors: `unknown-request` (no receipt has that id, or not this agent's), `ledger-unavailable`.
   */
  requestStatus(requestId: string, ctx: AgentContext): Promise<BrokerAnswer<RequestStatus>> {
    return this.pipeline.read(
      { faculty: 'console', operation: 'request-status', agentTool: 'request_status', ctx },
      async () => {
        const page = this.receiptQuery({ requestId, limit: MAX_STATUS_RECEIPTS });
        const first = page.receipts.filter((r) => r.requestId === requestId).sort((a, b) => a.seq - b.seq)[0];
        const mine = ctx.agentToken === undefined || (first?.actor.kind === 'agent' && first.actor.tokenId === ctx.agentToken.id);
        const status = mine ? statusOf(requestId, page.receipts) : null;
        return status ? { ok: true, value: status } : { ok: false, error: { code: 'unknown-request', message: `No request ${requestId} of this agent is in the receipts.` } };
      },
      (s) => ({ detail: { ofRequest: s.requestId, state: s.state, ...(s.outcome ? { outcome: s.outcome } : {}) } }),
    );
  }

  /** The rediscoveries after `tools-changed`: one pass per tab at a time, REFRESH_MIN_INTERVAL_MS apart (./tab-refresh.ts). */
  private readonly refresher = new TabRefresher(REFRESH_MIN_INTERVAL_MS);

  /**
   * The page said its tools changed (`tools-changed`, at most about once per
   * second per frame, extension/src/lib/change-throttle.ts): discover the tab
   * again, for the console's own knowledge (no receipt: the agent asked for
   * nothing), so only what changed or left stops resolving
   * (Discoveries.refresh). A pending approval whose tool changed or left is
   * refused `descriptor-changed` at once. Changes that come while a refresh
   * runs make one more. Never throws.
   */
  private refreshTools(tabId: number): void {
    if (!this.discoveries.get(tabId)) return; // the agent knows nothing of this tab to keep current
    this.refresher.request(tabId, async () => {
      const startedAt = this.discoveries.generation(tabId);
      const r = await this.link.request({ op: 'discover', tabId }, { timeoutMs: this.readTimeoutMs });
      if (!r.ok) {
        // Gone or no longer shared: what the console knew is stale. A dropped link: keep it (the checks at dispatch still hold).
        if (r.error.code === 'tab-not-shared' || r.error.code === 'navigated' || r.error.code === 'no-document') this.discoveries.forget(tabId);
        return 'stop';
      }
      if (this.discoveries.generation(tabId) !== startedAt) {
        // The agent discovered, or the page navigated, while this one was asked: its answer is
        // stale. Ask again (at the same bounded rate) so the change it was for is not lost.
        return this.discoveries.get(tabId) ? 'again' : undefined;
      }
      const fresh = this.withUsability(r.value);
      if (!this.discoveries.refresh(fresh, startedAt)) return;
      this.refuseChangedTools(fresh);
    });
  }

  /**
   * Refuse `descriptor-changed`, at once, each pending `webmcp-invoke` approval of `fresh.tabId`
   * whose tool (frame, document, name, descriptor hash) `fresh`, a new discovery of that tab, no
   * longer holds: the dialog must not stay up for a tool the page changed or removed (the
   * extension would refuse it at dispatch anyway). `only`: the request ids to judge, those pending
   * when that discovery was asked (one made later may be for a tool the page registered since).
   * Called after the broker's own refresh and after each inspection of the tool inspector (a tab no
   * agent discovered can still hold the person's manual invoke). A tool `fresh` did not hear from
   * (its frame unreached or past the limits, the tool dropped for size: `unheardIn`) is not judged:
   * silence is not departure, as `Discoveries.refresh` keeps such tools. Never throws.
   * @returns how many approvals left out by `only` name a tool `fresh` does not hold: the caller
   *   discovers once more to judge them (nothing else may come to).
   */
  refuseChangedTools(fresh: DiscoveryResult, only?: ReadonlySet<string>): number {
    const found = new Set(fresh.tools.map((t) => JSON.stringify([t.frameId, t.documentId, t.name, t.descriptorHash])));
    const unheard = unheardIn(fresh);
    let unjudged = 0;
    for (const v of this.approvals.list()) {
      if (v.tab.tabId !== fresh.tabId || v.faculty !== 'webmcp-invoke' || v.subject.type !== 'webmcp-tool') continue;
      const [frameId, name] = [v.frame.frameId, v.subject.toolName];
      if (unheard(frameId, name) && !fresh.tools.some((t) => t.frameId === frameId && t.name === name)) continue;
      if (found.has(JSON.stringify([frameId, v.documentId, name, v.subject.descriptorHash]))) continue;
      if (only && !only.has(v.requestId)) unjudged++;
      else this.approvals.refuse(v.requestId, 'descriptor-changed', 'the page changed or removed this tool while the request waited');
    }
    return unjudged;
  }

  /**
   * The discovery with `unusable` set on every tool whose schema the console cannot validate
   * against. Compiling is bounded per discovery (USABILITY_BUDGET_MS of compile time; cached
   * schemas cost nothing): tools past the budget are left unmarked and checked at their call,
   * so a page with thousands of costly schemas cannot hold the console's event loop.
   */
  withUsability(d: DiscoveryResult): DiscoveryResult {
    const started = performance.now();
    const tools = d.tools.map((t) => {
      if (performance.now() - started > USABILITY_BUDGET_MS) return t;
      const problem = this.validator.schemaProblem(t.descriptorHash, t.inputSchema);
      // The listing goes to the agent inside the untrusted block whole, so the page's words may stand beside ours here.
      return problem === null ? t : { ...t, unusable: `schema-rejected: ${problem.message}${problem.pageText ? `: ${problem.pageText}` : ''}` };
    });
    return { ...d, tools };
  }

  /** How the tab's tools changed since the agent's own latest discovery (names are UNTRUSTED page text), if they did. */
  toolChangesSinceDiscovery(tabId: number): ToolChanges | undefined {
    return this.discoveries.changesSinceLook(tabId);
  }

  /**
   * `webmcp_discover`: the page tools of one shared tab, remembered as the latest
   * discovery of that tab. A successful discovery lifts the outcome-unknown
   * blocks of that tab (the agent has looked at the page again).
   */
  discover(p: { tabId: number }, ctx: AgentContext): Promise<BrokerAnswer<DiscoveryResult>> {
    return this.pipeline.read(
      { faculty: 'webmcp-discover', operation: 'discover', agentTool: 'webmcp_discover', tabId: p.tabId, ctx, event: 'discovered' },
      (trail) => this.link.request({ op: 'discover', tabId: p.tabId }, { signal: ctx.signal, timeoutMs: this.readTimeoutMs }).then((r) => {
        if (r.ok) trail.set({ origin: r.value.origin, documentId: r.value.documentId, frameId: 0 });
        return r;
      }),
      (d) => ({
        origin: d.origin,
        url: d.url,
        detail: { tools: d.tools.length, blocked: d.tools.filter((t) => t.blocked).length, violations: d.violations.length, webmcp: d.support.modelContext },
      }),
    ).then((a) => {
      if (!a.ok) return a;
      // A schema the console cannot validate against is unusable: say so now, not only at the call.
      const d = this.withUsability(a.value);
      this.discoveries.put(d);
      return { ...a, value: d };
    });
  }

  /**
   * A read faculty of the extension's registry (`{op:'read', faculty, operation}`)
   * on one shared tab, with the faculty's own check of the value's shape.
   * @param check returns the value typed, with the origin, URL, document and frame
   *   it was read from (the receipt's; frame 0, the top frame, unless it names one),
   *   or a message why it is malformed (`bad-answer`).
   * `p.timeoutMs`: the link's bound for this read when longer than the default read timeout (ms).
   */
  readFaculty<V>(
    p: { faculty: Faculty; operation: string; agentTool: string; tabId: number; arguments?: Record<string, unknown>; timeoutMs?: number; requested?: Record<string, unknown> },
    ctx: AgentContext,
    check: (v: unknown) => { ok: true; value: V; origin: string; url: string; documentId: string; frameId?: number; detail: Record<string, unknown> } | { ok: false; message: string },
  ): Promise<BrokerAnswer<V>> {
    let seen: { origin: string; url: string; detail: Record<string, unknown> } | null = null;
    return this.pipeline.read(
      { faculty: p.faculty, operation: p.operation, agentTool: p.agentTool, tabId: p.tabId, ctx, ...(p.requested ? { requested: p.requested } : {}) },
      async (trail: Trail) => {
        const r = await this.link.request(
          { op: 'read', faculty: p.faculty, operation: p.operation, tabId: p.tabId, arguments: p.arguments ?? {} },
          // A read that waits in the page (page_wait) asks for its own, longer bound.
          { signal: ctx.signal, timeoutMs: Math.max(this.readTimeoutMs, p.timeoutMs ?? 0) },
        );
        if (!r.ok) return r;
        const c = check(r.value);
        if (!c.ok) return { ok: false, error: { code: 'bad-answer', message: `the extension's ${p.faculty} answer is malformed: ${c.message}` } };
        trail.set({ origin: c.origin, documentId: c.documentId, frameId: c.frameId ?? 0 });
        seen = { origin: c.origin, url: c.url, detail: c.detail };
        return { ok: true, value: c.value };
      },
      () => ({ origin: seen?.origin ?? null, url: seen?.url ?? null, detail: seen?.detail ?? {} }),
    );
  }

  // ---- reviewed actions ----------------------------------------------------------------

  /** Any reviewed action of any faculty, through the one pipeline (./pipeline.ts). */
  action<R extends ActionRequestBase>(f: ActionFaculty<R>, req: R, ctx: AgentContext): Promise<BrokerAnswer<ActionValue>> {
    return this.pipeline.action(f, req, ctx);
  }

  /**
   * `webmcp_invoke`: the whole lifecycle for one page tool call (faculty
   * `webmcp-invoke`). Error codes: those of Pipeline.action, plus
   * descriptor-unknown, descriptor-ambiguous, navigated, tool-blocked,
   * schema-rejected.
   */
  async invoke(req: InvokeRequest, ctx: AgentContext): Promise<BrokerAnswer<InvokeValue>> {
    const a = await this.pipeline.action(webmcpInvoke, req, ctx);
    return a.ok ? { ...a, value: invokeValueOf(a.value) } : a;
  }

  /**
   * The person reverts Live Patches of one tab from the console (ConsoleApi.revertPatches): these
   * `patchIds`, or every active patch of the tab (one document at a time, newest first). Through the
   * one pipeline with the person as actor and no dialog (their press is the decision; AgentContext.byPerson):
   * receipts `requested` … `reverted` / `revert-mismatch`. Answers the tab's patches still active.
   */
  async revertPatches(p: { tabId: number; patchIds?: string[] }): Promise<Result<LivePatchInfo[]>> {
    const ctx: AgentContext = { actor: { kind: 'person' }, kind: 'low-impact-mutation', byPerson: true };
    if (p.patchIds !== undefined) {
      const a = await this.pipeline.action(revertFaculty, { tabId: p.tabId, patchIds: p.patchIds, arguments: {} }, ctx);
      return a.ok ? { ok: true, value: this.patches.list(p.tabId) } : a;
    }
    // Revert all: one document per request; at most one round per document patched.
    for (let round = 0; round < 64 && this.patches.list(p.tabId).length > 0; round++) {
      const a = await this.pipeline.action(revertFaculty, { tabId: p.tabId, all: true, arguments: {} }, ctx);
      if (!a.ok) return a;
    }
    return { ok: true, value: this.patches.list(p.tabId) };
  }

  // ---- link events ----------------------------------------------------------------

  private onLinkEvent(e: Parameters<Parameters<ExtensionLink['onEvent']>[0]>[0]): void {
    try {
      if (e.kind === 'tabs-changed') {
        this.sharing.setAll(e.tabs, e.ended);
      } else if (e.kind === 'tools-changed') {
        this.refreshTools(e.tabId);
      } else if (e.kind === 'navigated') {
        this.discoveries.frameNavigated(e);
        // A new document in a frame dropped that frame's Live Patches (they lived in the old document only).
        this.patches.frameNavigated(e);
        // The grant binds the exact tab and frame URLs the person reviewed: a pending
        // approval whose document is gone, or whose tab (top frame) or own frame changed
        // its URL even within the same document (pushState, replaceState, a fragment),
        // can never be dispatched as reviewed. A refusal, not a cancellation: nobody withdrew it.
        for (const v of this.approvals.list()) {
          if (v.tab.tabId !== e.tabId) continue;
          if (v.frame.frameId === e.frameId && v.documentId !== e.documentId) {
            this.approvals.refuse(v.requestId, 'navigated', 'the page navigated away from the document this request was for');
          } else if (e.frameId === 0 || v.frame.frameId === e.frameId) {
            this.approvals.refuse(v.requestId, 'navigated', "the page's URL changed while the request waited (the approval binds the exact URL the page had)");
          }
        }
      }
    } catch {
      /* an odd event must not break the broker */
    }
  }
}
