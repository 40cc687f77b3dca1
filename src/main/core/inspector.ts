/**
 * The tool inspector (issue 12 items 4 and 6; docs/inspector.md): per shared tab, the page's WebMCP
 * tools as the person sees them in the console, kept live, with page lint, and the person's own
 * manual invoke through the agent's pipeline.
 *
 *  - `inspect(tabId)`: the console's own discovery of the tab (the link's `discover`, the same
 *    limits and hashes as an agent's) and page lint (the extension's `webmcp-discover`/`lint` DOM
 *    facts judged with the discovery, src/shared/page-lint.ts). Not receipted: the person looks at
 *    their own tab and nothing reaches an agent (as the broker's own refresh on a tools change).
 *    Kept in the inspector's OWN Discoveries, never the agent's: a look by the person neither
 *    lifts an agent's outcome-unknown block nor hides from the agent what changed since its look.
 *  - live: a tab once inspected is inspected again when the page says its tools changed
 *    (`tools-changed`, at most once per REFRESH_MIN_INTERVAL_MS) or its top frame holds a new
 *    document; each new view is pushed (`ConsoleEvent` `inspector`). It ends with the share.
 *  - `invoke(...)`: one tool of the latest inspection, run through the SAME pipeline as an agent's
 *    `webmcp_invoke` (faculty `webmcp-invoke`: arguments shaped and validated with ajv against the
 *    reviewed schema, the policy, the approval dialog, a one-use grant, the extension's checks,
 *    receipts), with the person as actor (`{kind: 'person'}`). The dialog is never skipped
 *    (`AgentContext.byPerson` is not set), and the API call that starts it is gated as the
 *    person's decision (src/main/core/trusted-input.ts, rule 19). Answers the request id at once;
 *    the outcome comes as a `inspector-call` event (an approval may wait minutes).
 */
import type { InspectorCall, InspectorView } from '../../shared/ipc';
import { lintTab, type PageLintFacts } from '../../shared/page-lint';
import { err, ok, toErrorInfo, type Result } from '../../shared/result';
import type { Actor } from '../../shared/receipt';
import { REFRESH_MIN_INTERVAL_MS, type Broker } from './broker';
import { TabRefresher } from './broker/tab-refresh';
import { Discoveries } from './broker/discoveries';
import type { ActionFaculty, AgentContext } from './broker/pipeline';
import { invokeValueOf, webmcpInvoke, type InvokeRequest } from './faculties/webmcp-invoke';
import type { ExtensionLink } from './ports';

/** The person, as receipts and the dialog name them for a manual invoke. */
export const INSPECTOR_ACTOR: Actor = { kind: 'person' };

/** What the `requested` receipt records as the tool that asked (an agent's says `webmcp_invoke`). */
export const INSPECTOR_TOOL = 'console_inspector_invoke';

/** Timeout of the inspector's link reads (ms), as the broker's reads. */
const READ_TIMEOUT_MS = 15_000;

/** The parts the inspector works with. */
export interface InspectorParts {
  link: ExtensionLink;
  broker: Broker;
  /** Push a view (null: the tab is no longer inspected) or a call's end. */
  emit(e: { kind: 'inspector'; tabId: number; view: InspectorView | null } | { kind: 'inspector-call'; call: InspectorCall }): void;
}

/** A manual invoke as the console API receives it (already schema-checked). */
export interface InspectorInvoke {
  tabId: number;
  frameId: number;
  name: string;
  descriptorHash: string;
  documentId: string;
  arguments: Record<string, unknown>;
}

export class Inspector {
  /** The inspector's own latest discovery per tab (never the agent's). */
  readonly discoveries = new Discoveries();
  private readonly views = new Map<number, InspectorView>();
  /** Re-inspections after a change: one pass per tab at a time, REFRESH_MIN_INTERVAL_MS apart (broker/tab-refresh.ts). */
  private readonly refresher = new TabRefresher(REFRESH_MIN_INTERVAL_MS);
  private readonly unsubscribe: Array<() => void> = [];
  private disposed = false;
  /** The webmcp-invoke faculty, resolving descriptors against the inspector's discoveries. */
  private readonly faculty: ActionFaculty<InvokeRequest>;

  constructor(private readonly p: InspectorParts) {
    const mine = this.discoveries;
    this.faculty = {
      ...webmcpInvoke,
      agentTool: INSPECTOR_TOOL,
      resolveSubject: (req, env, signal) => webmcpInvoke.resolveSubject(req, { ...env, discoveries: mine }, signal),
      // The page changed under the person's call: what the inspector and the agent knew of the tab is stale.
      onStale: (tabId, env) => {
        webmcpInvoke.onStale?.(tabId, env);
        mine.forget(tabId);
        this.refresh(tabId);
      },
    };
    this.unsubscribe.push(
      p.link.onEvent((e) => {
        if (e.kind === 'tools-changed' && this.views.has(e.tabId)) this.refresh(e.tabId);
        else if (e.kind === 'navigated' && this.views.has(e.tabId)) this.navigated(e);
      }),
    );
    this.unsubscribe.push(
      p.broker.onSharedTabs((tabs, complete) => {
        if (!complete) return;
        const shared = new Set(tabs.map((t) => t.tabId));
        for (const tabId of [...this.views.keys()]) if (!shared.has(tabId)) this.drop(tabId);
      }),
    );
  }

  /** Stop listening; views are dropped. */
  dispose(): void {
    this.disposed = true;
    for (const u of this.unsubscribe.splice(0)) u();
    this.views.clear();
  }

  /**
   * A frame of an inspected tab navigated. Told to the inspector's discoveries as the broker tells
   * the agent's (Discoveries.frameNavigated): a same-document move (pushState, a fragment) keeps the
   * tools but marks the frame moved, so a run first reads where the page is now (webmcp-invoke's
   * `locate`) instead of binding the old URL; a new document in the frame is inspected again.
   */
  private navigated(e: { tabId: number; frameId: number; documentId: string }): void {
    const d = this.discoveries.get(e.tabId);
    const before = e.frameId === 0 ? d?.documentId : d?.tools.find((t) => t.frameId === e.frameId)?.documentId;
    this.discoveries.frameNavigated(e);
    if (before !== e.documentId) this.refresh(e.tabId);
  }

  /** The latest view of a tab, if it was inspected. */
  view(tabId: number): InspectorView | undefined {
    return this.views.get(tabId);
  }

  private drop(tabId: number): void {
    this.views.delete(tabId);
    this.discoveries.forget(tabId);
    this.p.emit({ kind: 'inspector', tabId, view: null });
  }

  /**
   * Inspect a shared tab now: discovery and page lint. Errors: `tab-not-shared` (also for the
   * console's own tab), the link's (`link-down`, `timeout`), `navigated`, `no-document`.
   */
  async inspect(tabId: number): Promise<Result<InspectorView>> {
    if (!this.p.broker.sharing.get(tabId) || this.p.broker.sharing.isRefusedConsoleTab(tabId)) return err('tab-not-shared', `Tab ${tabId} is not shared; share it on the Connection page to inspect it.`);
    const pendingWhenAsked = new Set(this.p.broker.approvals.list().map((v) => v.requestId));
    const d = await this.p.link.request({ op: 'discover', tabId }, { timeoutMs: READ_TIMEOUT_MS });
    if (!d.ok) return d;
    if (this.p.broker.isConsoleOrigin(d.value.origin)) return err('tab-not-shared', `Tab ${tabId} shows the console itself.`);
    const discovery = this.p.broker.withUsability(d.value);
    // What the page holds now: a waiting dialog for a tool it changed or removed goes (the broker's
    // own refresh does this only for tabs an agent discovered; a manual invoke needs none). One that
    // opened while this was asked is judged by one more inspection (the page may have added its tool since).
    const unjudged = this.p.broker.refuseChangedTools(discovery, pendingWhenAsked);
    // Lint's DOM facts are best effort: an older extension without `lint` still gets the descriptor rules.
    const facts = await this.p.link.request({ op: 'read', faculty: 'webmcp-discover', operation: 'lint', tabId, arguments: {} }, { timeoutMs: READ_TIMEOUT_MS });
    const frames = facts.ok ? pageFactsOf(facts.value) : null;
    this.discoveries.put(discovery);
    const view: InspectorView = {
      tabId,
      inspectedAt: Date.now(),
      discovery,
      lint: lintTab(discovery, frames?.frames ?? []),
      lintPage: frames ? { frames: frames.frames.length, unreached: frames.unreached, scriptsScanned: frames.frames.reduce((n, f) => n + f.scripts.scanned, 0), scriptsSkipped: frames.frames.reduce((n, f) => n + f.scripts.skipped, 0) } : { error: facts.ok ? 'malformed answer' : `${facts.error.code}: ${facts.error.message}`.slice(0, 300) },
    };
    if (this.disposed) return ok(view);
    this.views.set(tabId, view);
    this.p.emit({ kind: 'inspector', tabId, view });
    if (unjudged > 0) this.refresh(tabId);
    return ok(view);
  }

  /** Inspect again after a change, at most once per REFRESH_MIN_INTERVAL_MS per tab; changes meanwhile make one more. Never throws. */
  private refresh(tabId: number): void {
    this.refresher.request(tabId, async () => {
      if (this.disposed || !this.views.has(tabId)) return 'stop';
      const r = await this.inspect(tabId);
      if (!r.ok && (r.error.code === 'tab-not-shared' || r.error.code === 'navigated')) this.drop(tabId);
    });
  }

  /**
   * Start the person's manual invoke of one tool of the tab's latest inspection. Answers the request
   * id once the pipeline has one (before anything is checked); the call's end is pushed as an
   * `inspector-call` event. Errors before the pipeline: `not-inspected` (inspect the tab first).
   */
  async invoke(req: InspectorInvoke): Promise<Result<{ requestId: string }>> {
    if (!this.discoveries.get(req.tabId)) return err('not-inspected', `Tab ${req.tabId} has not been inspected since it was shared or changed; inspect it again.`);
    let started: (id: string) => void = () => undefined;
    const requestId = new Promise<string>((resolve) => (started = resolve));
    const ctx: AgentContext = { actor: INSPECTOR_ACTOR, kind: 'mutation', onRequest: (id) => started(id) };
    const done = this.p.broker.action(this.faculty, { ...req }, ctx).then(
      (a) => {
        const call: InspectorCall = a.ok
          ? { requestId: a.requestId, tabId: req.tabId, toolName: req.name, descriptorHash: req.descriptorHash, ok: true, value: { ...invokeValueOf(a.value) } }
          : { requestId: a.requestId, tabId: req.tabId, toolName: req.name, descriptorHash: req.descriptorHash, ok: false, error: a.error };
        this.p.emit({ kind: 'inspector-call', call });
        started(a.requestId);
      },
      (e: unknown) => {
        // Pipeline.action never throws; if it did, say so rather than leave the renderer waiting.
        started('');
        this.p.emit({ kind: 'inspector-call', call: { requestId: '', tabId: req.tabId, toolName: req.name, descriptorHash: req.descriptorHash, ok: false, error: toErrorInfo(e) } });
      },
    );
    void done;
    const id = await requestId;
    return id ? ok({ requestId: id }) : err('internal', 'The invocation could not be started.');
  }
}

/** The extension's `lint` answer, if it has the shape `{frames: PageLintFacts[], unreached}` (the worker cleaned each frame). */
function pageFactsOf(v: unknown): { frames: PageLintFacts[]; unreached: number } | null {
  const x = v as { frames?: unknown; unreached?: unknown } | null;
  if (!x || typeof x !== 'object' || !Array.isArray(x.frames)) return null;
  const frames = x.frames.filter((f): f is PageLintFacts => !!f && typeof f === 'object' && Number.isSafeInteger((f as PageLintFacts).frameId) && Array.isArray((f as PageLintFacts).forms) && Array.isArray((f as PageLintFacts).legacyApi) && !!(f as PageLintFacts).scripts);
  return { frames: frames.slice(0, 64), unreached: Number.isSafeInteger(x.unreached) ? (x.unreached as number) : 0 };
}
