/**
 * The broker: the request lifecycle of DESIGN.md for agent calls —
 *
 *   agent call → validate (schema, limits) → policy → approval request →
 *   grant (one use) → dispatch (ExtensionLink 'invoke') → result → receipt
 *
 * with a receipt for every step (requested, validated, refused, approval-shown,
 * approved, denied, expired, cancelled, dispatched, succeeded, failed,
 * outcome-unknown; reads: requested, discovered/succeeded, failed, refused).
 * See docs/broker.md for the rules and the choices made here.
 *
 * The broker owns: the latest discovery of each shared tab (descriptors are
 * resolved only from it), the outcome-unknown blocks, the pending approvals
 * and the grants. It never throws to its callers: every answer is a
 * `BrokerAnswer` naming the request and its last receipt.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { argumentsHash as hashArguments, canonicalJson } from '../../../shared/canonical';
import { nodeSha256, sha256HexSync } from '../digest';
import type { ApprovalView } from '../../../shared/ipc';
import { LIMITS, jsonDepth, utf8Bytes } from '../../../shared/limits';
import { INVOCATION_OUTCOMES, type Actor, type Faculty, type Receipt, type ReceiptEvent, type ReceiptInput } from '../../../shared/receipt';
import { redactText } from '../../../shared/redact';
import { toErrorInfo, type Err, type ErrorInfo, type Result } from '../../../shared/result';
import type { DiscoveryResult, Grant, InvocationResult, RefusalCode, SharedTab, ToolDescriptor } from '../../../shared/types';
import type { ExtensionLink } from '../ports';
import { ToolRouter, type ToolKind } from '../policy';
import { ApprovalQueue, type ApprovalDecision } from './approvals';
import { boundText } from '../../../shared/bounds';
import { ArgumentValidator, type ArgumentIssue } from './validator';

export { ApprovalQueue } from './approvals';
export { ArgumentValidator } from './validator';
export type { ArgumentIssue } from './validator';

/** Where receipts go: the Ledger (src/main/core/ledger) satisfies this. */
export interface ReceiptSink {
  /** Append one receipt; may throw when the store is unavailable. */
  append(input: ReceiptInput): Receipt;
}

/** Who is calling and how the agent-facing tool is marked (from the tool table, never from the page). */
export interface AgentContext {
  actor: Actor;
  kind: ToolKind;
  /** The MCP request's cancellation (`extra.signal` in the SDK; MCP spec, "Cancellation"). */
  signal?: AbortSignal;
}

/** `webmcp_invoke` as the agent asks it. */
export interface InvokeRequest {
  tabId: number;
  /** Needed only when the same descriptor is offered by several frames. */
  frameId?: number;
  name: string;
  descriptorHash: string;
  /**
   * The `documentId` discovery gave for this descriptor (optional). When given it
   * must be the resolved descriptor's document, else the request is refused
   * (`navigated`: the page moved to a new document since that discovery).
   */
  documentId?: string;
  /** Passed to `executeTool` exactly as reviewed and hashed. */
  arguments: Record<string, unknown>;
  /** The agent's own id for the operation: recorded and shown, never injected into `arguments`. */
  operationId?: string;
}

/** A successful invocation. `result` is UNTRUSTED page text. */
export interface InvokeValue {
  outcome: 'succeeded';
  tabId: number;
  frameId: number;
  documentId: string;
  origin: string;
  toolName: string;
  descriptorHash: string;
  argumentsHash: string;
  result: string | null;
  truncated: boolean;
  redacted: boolean;
  elapsedMs?: number;
}

/**
 * A broker answer: a Result plus the request id and the id of the last receipt
 * written for it (empty only when even the first receipt could not be written).
 * On failure `error.detail` may carry `issues` (ArgumentIssue[]) or
 * `untrustedText` (page-provided text that must be labelled for the agent).
 */
export type BrokerAnswer<T> = Result<T> & { requestId: string; receiptId: string };

/** A broker answer that is a failure. */
export type BrokerFailure = Err & { requestId: string; receiptId: string };

export interface BrokerOptions {
  link: ExtensionLink;
  receipts: ReceiptSink;
  policy?: ToolRouter;
  /** Read at each approval request, so a settings change applies to the next one (ms). */
  approvalTimeoutMs?: () => number;
  /** Sent to the extension: after dispatch began, this long without a settle is outcome-unknown (ms). */
  dispatchTimeoutMs?: number;
  /** How much longer than `dispatchTimeoutMs` the console waits for the extension's own answer (ms). */
  linkGraceMs?: number;
  /** Timeout for reads (list-tabs, discover) (ms). */
  readTimeoutMs?: number;
  validator?: ArgumentValidator;
  /** At most this many approvals wait at once; more are refused so an agent cannot flood the person (default 16). */
  maxPendingApprovals?: number;
  /**
   * Origins of the console's own pages (the loopback web host, `http://127.0.0.1:<port>`).
   * A tab showing one is never the agent's: see `setConsoleOrigins`.
   */
  consoleOrigins?: readonly string[];
}

/** What the agent is told about a tab that shows the console itself. */
const CONSOLE_TAB_REFUSAL = 'shows the Echo Console itself, which is never shared with the agent';

/** `new URL(s).origin`, or null for anything without a real origin. */
function originOf(s: string | null | undefined): string | null {
  if (typeof s !== 'string' || !s) return null;
  try {
    const o = new URL(s).origin;
    return o === 'null' ? null : o;
  } catch {
    return null;
  }
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
] satisfies Array<RefusalCode | 'not-paired'>);

/** Refusals after which the agent's descriptor is stale: it must discover again. */
const STALE_DESCRIPTOR_CODES = new Set<string>(['navigated', 'tool-missing', 'tool-ambiguous', 'descriptor-changed']);

const HEX64 = /^[0-9a-f]{64}$/;

const OUTCOMES = new Set<string>(INVOCATION_OUTCOMES);

interface Trail {
  base: Omit<ReceiptInput, 'event' | 'actor' | 'detail'>;
  lastReceiptId: string;
}

/** Thrown internally when a receipt cannot be written before dispatch (fail closed). */
class LedgerUnavailable extends Error {
  readonly code = 'ledger-unavailable';
}

export class Broker {
  readonly approvals = new ApprovalQueue();
  readonly policy: ToolRouter;
  private readonly link: ExtensionLink;
  private readonly receipts: ReceiptSink;
  private readonly validator: ArgumentValidator;
  private readonly approvalTimeoutMs: () => number;
  private readonly dispatchTimeoutMs: number;
  private readonly linkGraceMs: number;
  private readonly readTimeoutMs: number;
  private readonly maxPendingApprovals: number;
  /** Latest discovery per tab; descriptors resolve only from here. */
  private readonly discoveries = new Map<number, DiscoveryResult>();
  /** `${tabId}|${documentId}|${toolName}` → requestId of the invocation whose outcome is unknown. */
  private readonly unknownOutcomes = new Map<string, string>();
  private sharedTabs: SharedTab[] = [];
  /** The console's own origins (normalised); tabs showing them never reach the agent. */
  private consoleOrigins = new Set<string>();
  /** Console tabs the extension reported shared: tabId → sharedAt of the share that was refused (one receipt per share). */
  private readonly consoleTabs = new Map<number, number>();
  private readonly sharedTabListeners = new Set<(tabs: SharedTab[], complete: boolean) => void>();
  /** Whether the extension has given a whole list yet (until then the list holds only the console's own shares). */
  private listed = false;
  private readonly unsubscribe: Array<() => void> = [];

  constructor(opts: BrokerOptions) {
    this.link = opts.link;
    this.receipts = opts.receipts;
    this.policy = opts.policy ?? new ToolRouter();
    this.validator = opts.validator ?? new ArgumentValidator();
    this.approvalTimeoutMs = opts.approvalTimeoutMs ?? (() => LIMITS.approvalTimeoutMs);
    this.dispatchTimeoutMs = opts.dispatchTimeoutMs ?? LIMITS.dispatchTimeoutMs;
    this.linkGraceMs = opts.linkGraceMs ?? 5_000;
    this.readTimeoutMs = opts.readTimeoutMs ?? 15_000;
    this.maxPendingApprovals = opts.maxPendingApprovals ?? 16;
    this.consoleOrigins = new Set((opts.consoleOrigins ?? []).map(originOf).filter((o): o is string => o !== null));
    this.unsubscribe.push(this.link.onEvent((e) => this.onLinkEvent(e)));
  }

  /** Stop listening to the link and cancel every pending approval (receipts `cancelled`). */
  dispose(): void {
    for (const u of this.unsubscribe.splice(0)) u();
    this.approvals.cancelAll('the console is shutting down');
  }

  // ---- shared tabs -------------------------------------------------------------

  /** The shared tabs as last reported by the extension (copies). */
  getSharedTabs(): SharedTab[] {
    return this.sharedTabs.map((t) => ({ ...t }));
  }

  /**
   * Listen to the shared-tab list changing; returns the unsubscribe function.
   * `complete` is false until the extension has given a whole list: a tab missing
   * from the list then proves nothing.
   */
  onSharedTabs(listener: (tabs: SharedTab[], complete: boolean) => void): () => void {
    this.sharedTabListeners.add(listener);
    return () => this.sharedTabListeners.delete(listener);
  }

  /**
   * Replace the shared-tab list with a whole list from the extension (its
   * `tabs-changed` events and `list-tabs` answers). Forgets discoveries of tabs no
   * longer shared and cancels their pending approvals.
   */
  setSharedTabs(tabs: SharedTab[]): void {
    this.listed = true;
    this.applySharedTabs(tabs);
  }

  /** One tab shared, as the extension's `share-tab` answer says, without claiming to know the rest. */
  putSharedTab(tab: SharedTab): void {
    this.applySharedTabs([...this.sharedTabs.filter((t) => t.tabId !== tab.tabId), tab]);
  }

  /** One tab no longer shared (the extension's `unshare-tab` answered). */
  dropSharedTab(tabId: number): void {
    this.applySharedTabs(this.sharedTabs.filter((t) => t.tabId !== tabId));
  }

  private applySharedTabs(tabs: SharedTab[]): void {
    // The console's own page is never shared with the agent, whoever shared it (the popup
    // offers "Share this tab" on any http page): it is dropped here, refused and unshared.
    const own = tabs.filter((t) => this.isConsoleTab(t));
    const rest = tabs.filter((t) => !this.isConsoleTab(t));
    for (const t of rest) this.consoleTabs.delete(t.tabId);
    for (const t of own) this.refuseConsoleTab(t);
    this.sharedTabs = rest.map((t) => ({ ...t }));
    const shared = new Set(rest.map((t) => t.tabId));
    for (const tabId of [...this.discoveries.keys()]) if (!shared.has(tabId)) this.forgetTab(tabId);
    for (const v of this.approvals.list()) {
      if (!shared.has(v.tab.tabId)) this.approvals.cancel(v.requestId, 'person', `tab ${v.tab.tabId} is no longer shared`);
    }
    for (const l of this.sharedTabListeners) {
      try {
        l(this.getSharedTabs(), this.listed);
      } catch {
        /* listeners must not break the broker */
      }
    }
  }

  /**
   * The console's own origins (the web host passes `http://127.0.0.1:<port>` and
   * `http://localhost:<port>` once it has bound). A tab showing one is left out of
   * the shared tabs, refused for discover and invoke, and unshared at once if the
   * extension reports it shared. Applies to the tabs already listed too.
   */
  setConsoleOrigins(origins: readonly string[]): void {
    this.consoleOrigins = new Set(origins.map(originOf).filter((o): o is string => o !== null));
    // Only when a tab already listed turns out to be the console: re-announcing an
    // unchanged list (or the empty one before the extension's first) would mean nothing.
    if (this.sharedTabs.some((t) => this.isConsoleTab(t))) this.applySharedTabs(this.sharedTabs);
  }

  /** Whether this origin or URL is one of the console's own pages. */
  isConsoleOrigin(originOrUrl: string | null | undefined): boolean {
    const o = originOf(originOrUrl);
    return o !== null && this.consoleOrigins.has(o);
  }

  /** Whether this tab shows the console itself (by its origin or its URL). */
  isConsoleTab(tab: Pick<SharedTab, 'origin' | 'url'>): boolean {
    return this.isConsoleOrigin(tab.origin) || this.isConsoleOrigin(tab.url);
  }

  /** A console tab reported shared: one `refused` receipt per share, and ask the extension to unshare it (every time it is seen). */
  private refuseConsoleTab(t: SharedTab): void {
    if (this.consoleTabs.get(t.tabId) !== t.sharedAt) {
      this.consoleTabs.set(t.tabId, t.sharedAt);
      this.discoveries.delete(t.tabId);
      try {
        this.receipts.append({
          requestId: null,
          event: 'refused',
          faculty: 'console',
          actor: { kind: 'console' },
          tabId: t.tabId,
          origin: originOf(t.origin) ?? originOf(t.url),
          documentId: t.documentId || null,
          detail: { code: 'console-tab', message: `Tab ${t.tabId} was shared but ${CONSOLE_TAB_REFUSAL}: the console stopped sharing it.` },
        });
      } catch {
        /* the unshare below matters more than the record */
      }
    }
    this.askUnshare(t.tabId);
  }

  private askUnshare(tabId: number): void {
    void this.link.request({ op: 'unshare-tab', tabId }, { timeoutMs: this.readTimeoutMs }).catch(() => undefined);
  }

  /** Drop the latest discovery of a tab (outcome-unknown blocks stay until a new discovery). */
  forgetTab(tabId: number): void {
    this.discoveries.delete(tabId);
  }

  /** The latest discovery of a tab, if any (for the console's tool inspector and tests). */
  latestDiscovery(tabId: number): DiscoveryResult | undefined {
    return this.discoveries.get(tabId);
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

  // ---- calls refused at the door ---------------------------------------------------

  /**
   * Receipts (`requested`, `refused`) for an agent call refused before the
   * lifecycle starts: malformed MCP arguments or an unknown agent tool.
   */
  rejectCall(p: { faculty: Faculty; agentTool: string; actor: Actor; code: string; message: string; issues?: ArgumentIssue[] }): BrokerFailure {
    const trail = this.trail(p.faculty, {});
    try {
      this.write(trail, 'requested', p.actor, { agentTool: p.agentTool.slice(0, 128) });
      return this.refuse(trail, p.actor, p.code, p.message, p.issues ? { issues: p.issues } : undefined) as BrokerFailure;
    } catch (e) {
      return this.internal(trail, e) as BrokerFailure;
    }
  }

  // ---- reads -----------------------------------------------------------------------

  /** `list_tabs`: the tabs the person shared (policy: read, allowed unless a rule denies). */
  async listTabs(ctx: AgentContext): Promise<BrokerAnswer<SharedTab[]>> {
    const trail = this.trail('list-tabs', {});
    try {
      this.write(trail, 'requested', ctx.actor, { agentTool: 'list_tabs' });
      const decision = this.policy.decide({ faculty: 'list-tabs', kind: ctx.kind });
      if (decision.action !== 'allow') return this.refuse(trail, ctx.actor, 'policy-denied', `Denied by the console's policy: ${decision.reason}.`);
      const res = await this.link.request({ op: 'list-tabs' }, { signal: ctx.signal, timeoutMs: this.readTimeoutMs });
      if (!res.ok) return this.readFailed(trail, ctx, res.error);
      this.setSharedTabs(res.value);
      this.write(trail, 'succeeded', ctx.actor, { count: this.sharedTabs.length });
      return this.answer(trail, { ok: true, value: this.getSharedTabs() });
    } catch (e) {
      return this.internal(trail, e);
    }
  }

  /**
   * `webmcp_discover`: the page tools of one shared tab, remembered as the latest
   * discovery of that tab. A successful discovery lifts the outcome-unknown
   * blocks of that tab (the agent has looked at the page again).
   */
  async discover(p: { tabId: number }, ctx: AgentContext): Promise<BrokerAnswer<DiscoveryResult>> {
    const trail = this.trail('webmcp-discover', { tabId: p.tabId });
    try {
      this.write(trail, 'requested', ctx.actor, { agentTool: 'webmcp_discover' });
      if (this.consoleTabs.has(p.tabId)) return this.refuse(trail, ctx.actor, 'console-tab', `Tab ${p.tabId} ${CONSOLE_TAB_REFUSAL}.`);
      const knownOrigin = this.sharedTabs.find((t) => t.tabId === p.tabId)?.origin ?? null;
      const before = this.policy.decide({ faculty: 'webmcp-discover', kind: ctx.kind, origin: knownOrigin });
      if (before.action !== 'allow') return this.refuse(trail, ctx.actor, 'policy-denied', `Denied by the console's policy: ${before.reason}.`);
      const res = await this.link.request({ op: 'discover', tabId: p.tabId }, { signal: ctx.signal, timeoutMs: this.readTimeoutMs });
      if (!res.ok) return this.readFailed(trail, ctx, res.error);
      const d = res.value;
      trail.base.origin = d.origin;
      trail.base.documentId = d.documentId;
      trail.base.frameId = 0;
      if (this.isConsoleOrigin(d.origin) || this.isConsoleOrigin(d.url)) {
        // Shared behind our back and not yet reported (tabs-changed is debounced): never hand it over.
        this.askUnshare(p.tabId);
        return this.refuse(trail, ctx.actor, 'console-tab', `Tab ${p.tabId} ${CONSOLE_TAB_REFUSAL}.`);
      }
      const after = this.policy.decide({ faculty: 'webmcp-discover', kind: ctx.kind, origin: d.origin });
      if (after.action !== 'allow') return this.refuse(trail, ctx.actor, 'policy-denied', `Denied by the console's policy: ${after.reason}.`);
      this.discoveries.set(p.tabId, d);
      for (const key of [...this.unknownOutcomes.keys()]) if (key.startsWith(`${p.tabId}|`)) this.unknownOutcomes.delete(key);
      this.write(trail, 'discovered', ctx.actor, {
        tools: d.tools.length,
        blocked: d.tools.filter((t) => t.blocked).length,
        violations: d.violations.length,
        webmcp: d.support.modelContext,
      });
      return this.answer(trail, { ok: true, value: d });
    } catch (e) {
      return this.internal(trail, e);
    }
  }

  // ---- invoke ----------------------------------------------------------------------

  /**
   * `webmcp_invoke`: the whole lifecycle for one page tool call. Resolves when
   * the request has ended (succeeded, or any refusal, denial, expiry,
   * cancellation, failure or outcome-unknown); never throws. Error codes:
   * invalid-arguments (detail.issues), arguments-too-large, arguments-too-deep, descriptor-unknown,
   * descriptor-ambiguous, tool-blocked, outcome-unknown-pending, schema-rejected,
   * policy-denied, link-down, too-many-pending, denied, expired, cancelled, grant-unavailable,
   * a RefusalCode from the extension, failed, outcome-unknown, ledger-unavailable.
   */
  async invoke(req: InvokeRequest, ctx: AgentContext): Promise<BrokerAnswer<InvokeValue>> {
    let args = req.arguments;
    let argsHash: string | null = null;
    let argsBytes = 0;
    let argsProblem: string | null = null;
    try {
      const canon = canonicalJson(args);
      argsBytes = utf8Bytes(canon);
      argsHash = await hashArguments(args, nodeSha256);
      // From here on the broker works on a private copy parsed from the canonical
      // text: what is validated, shown, granted and dispatched is exactly what was hashed.
      args = JSON.parse(canon) as Record<string, unknown>;
    } catch (e) {
      argsProblem = e instanceof Error ? e.message : String(e);
    }
    // Agent-supplied fields go into receipts only in the shapes the ledger stores.
    const trail = this.trail('webmcp-invoke', {
      tabId: Number.isSafeInteger(req.tabId) ? req.tabId : null,
      frameId: Number.isSafeInteger(req.frameId) ? req.frameId : null,
      toolName: typeof req.name === 'string' ? req.name.slice(0, 128) : null,
      descriptorHash: typeof req.descriptorHash === 'string' && HEX64.test(req.descriptorHash) ? req.descriptorHash : null,
      argumentsHash: argsHash,
    });
    const actor = ctx.actor;
    const operationId = typeof req.operationId === 'string' ? req.operationId.slice(0, 128) : undefined;
    try {
      this.write(trail, 'requested', actor, { agentTool: 'webmcp_invoke', argumentsBytes: argsBytes, ...(operationId ? { operationId } : {}) });

      // 1. Limits and shape of the arguments (before anything else looks at them).
      if (args === null || typeof args !== 'object' || Array.isArray(args)) {
        return this.refuse(trail, actor, 'invalid-arguments', '`arguments` must be a JSON object (executeTool takes an object).');
      }
      if (argsProblem !== null || argsHash === null) {
        return this.refuse(trail, actor, 'invalid-arguments', `\`arguments\` is not plain JSON: ${argsProblem ?? 'no canonical form'}.`);
      }
      if (argsBytes > LIMITS.maxArgumentsBytes) {
        return this.refuse(trail, actor, 'arguments-too-large', `\`arguments\` is ${argsBytes} bytes of canonical JSON; the limit is ${LIMITS.maxArgumentsBytes}.`);
      }
      // The link refuses deeper arguments; finding out after the person approved would be too late.
      if (jsonDepth(args, LIMITS.maxArgumentsDepth) > LIMITS.maxArgumentsDepth) {
        return this.refuse(trail, actor, 'arguments-too-deep', `\`arguments\` is nested deeper than ${LIMITS.maxArgumentsDepth} levels; the link to the extension carries no deeper arguments.`);
      }

      // 2. Resolve the descriptor from the latest discovery of that tab.
      if (this.consoleTabs.has(req.tabId)) return this.refuse(trail, actor, 'console-tab', `Tab ${req.tabId} ${CONSOLE_TAB_REFUSAL}.`);
      const resolved = this.resolve(req);
      if (!resolved.ok) return this.refuse(trail, actor, resolved.error.code, resolved.error.message);
      const tool = resolved.value;
      if (this.isConsoleOrigin(tool.origin)) return this.refuse(trail, actor, 'console-tab', `Tab ${req.tabId} ${CONSOLE_TAB_REFUSAL}.`);
      Object.assign(trail.base, { origin: tool.origin, frameId: tool.frameId, documentId: tool.documentId });
      if (tool.blocked) {
        return this.refuse(trail, actor, 'tool-blocked', `The tool ${JSON.stringify(tool.name)} is listed but may not be invoked (${tool.blocked}).`);
      }
      const unknownKey = `${tool.tabId}|${tool.documentId}|${tool.name}`;
      const pendingUnknown = this.unknownOutcomes.get(unknownKey);
      if (pendingUnknown) {
        return this.refuse(
          trail,
          actor,
          'outcome-unknown-pending',
          `The outcome of an earlier invocation of ${JSON.stringify(tool.name)} in this document (request ${pendingUnknown}) is unknown: ` +
            `it may or may not have happened. Inspect the page first: call webmcp_discover {"tabId": ${tool.tabId}} again, then decide whether to retry.`,
        );
      }

      // 3. Validate against the exact reviewed inputSchema; failures never reach the person.
      const v = this.validator.validate(tool.descriptorHash, tool.inputSchema, args);
      if (!v.ok) {
        if (v.code === 'invalid-arguments') return this.refuse(trail, actor, 'invalid-arguments', `${v.message}.`, { issues: v.issues });
        return this.refuse(trail, actor, 'schema-rejected', `The page's inputSchema for ${JSON.stringify(tool.name)} cannot be used safely, so the tool cannot be invoked: ${v.message}.`);
      }
      this.write(trail, 'validated', actor, { dialect: v.dialect });

      // 4. Policy: invocations are reviewed at least; a rule may deny. Annotations are recorded, never obeyed.
      const decision = this.policy.decide({ faculty: 'webmcp-invoke', kind: ctx.kind, origin: tool.origin, toolName: tool.name, annotations: tool.annotations });
      if (decision.action === 'deny') return this.refuse(trail, actor, 'policy-denied', `Denied by the console's policy: ${decision.reason}.`);

      if (this.link.status().state !== 'connected') {
        return this.refuse(trail, actor, 'link-down', 'The browser extension is not connected to the console; nothing was shown to the person. Try again once it is connected.');
      }
      if (ctx.signal?.aborted) return this.cancelled(trail, actor, 'the agent cancelled the request before it was shown to the person');
      if (this.approvals.list().length >= this.maxPendingApprovals) {
        return this.refuse(trail, actor, 'too-many-pending', `${this.maxPendingApprovals} requests are already waiting for the person; wait for them to be decided before asking again.`);
      }

      // 5. Approval: one request, one approval, its own expiry.
      const now = Date.now();
      const tab = this.sharedTabs.find((t) => t.tabId === tool.tabId);
      const discovery = this.discoveries.get(tool.tabId);
      const view: ApprovalView = {
        requestId: trail.base.requestId as string,
        createdAt: now,
        expiresAt: now + this.approvalTimeoutMs(),
        agent: { name: actor.name ?? 'unknown agent', ...(actor.version ? { version: actor.version } : {}) },
        faculty: 'webmcp-invoke',
        toolName: tool.name,
        title: tool.title,
        description: tool.description,
        inputSchema: structuredClone(tool.inputSchema),
        ...(tool.annotations ? { annotations: { ...tool.annotations } } : {}),
        origin: tool.origin,
        tab: { tabId: tool.tabId, title: tab?.title ?? '', url: discovery?.url ?? tab?.url ?? '' },
        frameId: tool.frameId,
        documentId: tool.documentId,
        descriptorHash: tool.descriptorHash,
        argumentsHash: argsHash,
        arguments: structuredClone(args),
        ...(operationId ? { operationId } : {}),
      };
      this.write(trail, 'approval-shown', actor, { expiresAt: view.expiresAt, policy: decision.reason, ...(operationId ? { operationId } : {}) });
      const outcome: ApprovalDecision = await this.approvals.request(view, ctx.signal);
      switch (outcome.kind) {
        case 'denied': {
          this.write(trail, 'denied', { kind: 'person' }, outcome.reason ? { reason: outcome.reason } : {});
          return this.answer(trail, {
            ok: false,
            error: {
              code: 'denied',
              message: outcome.reason ? `The person denied this request. Their reason: ${outcome.reason}` : 'The person denied this request.',
              ...(outcome.reason ? { detail: { reason: outcome.reason } } : {}),
            },
          });
        }
        case 'expired':
          this.write(trail, 'expired', { kind: 'console' }, { expiresAt: view.expiresAt });
          return this.answer(trail, {
            ok: false,
            error: { code: 'expired', message: `The person did not answer within ${Math.round((view.expiresAt - view.createdAt) / 1000)} s; the request expired and nothing was done.` },
          });
        case 'cancelled':
          return this.cancelled(trail, outcome.by === 'agent' ? actor : { kind: outcome.by }, outcome.reason);
        case 'refused':
          return this.refuse(trail, { kind: 'console' }, outcome.code, `Refused before dispatch: ${outcome.reason}. Nothing was dispatched; discover the tab again.`);
        case 'approved':
          this.write(trail, 'approved', { kind: 'person' }, {});
          break;
      }

      // 6. Grant: fresh nonce, short expiry, bound to exactly what was approved.
      const signed = await this.link.signGrant({
        requestId: view.requestId,
        tabId: tool.tabId,
        frameId: tool.frameId,
        documentId: tool.documentId,
        origin: tool.origin,
        toolName: tool.name,
        descriptorHash: tool.descriptorHash,
        argumentsHash: argsHash,
        nonce: randomBytes(16).toString('hex'),
        expiresAt: Date.now() + LIMITS.grantTtlMs,
      });
      if (!signed.ok) {
        return this.refuse(trail, actor, 'grant-unavailable', `The approval could not be turned into a grant (${signed.error.code}: ${signed.error.message}); nothing was dispatched.`);
      }
      if (ctx.signal?.aborted) return this.cancelled(trail, actor, 'the agent cancelled the request after approval, before dispatch');
      if (this.link.status().state !== 'connected') {
        return this.refuse(trail, actor, 'link-down', 'The browser extension disconnected after the approval; nothing was dispatched. Try again once it is connected.');
      }

      // An earlier call of this tool in this document may have become outcome-unknown while
      // this one waited for the person: the block applies to it too, approved or not.
      const unknownNow = this.unknownOutcomes.get(unknownKey);
      if (unknownNow) {
        return this.refuse(
          trail,
          actor,
          'outcome-unknown-pending',
          `While this request waited for approval, the outcome of an earlier invocation of ${JSON.stringify(tool.name)} in this document (request ${unknownNow}) became unknown: ` +
            `it may or may not have happened, so this one was not dispatched. Inspect the page first: call webmcp_discover {"tabId": ${tool.tabId}} again, then decide whether to retry.`,
        );
      }

      // 7. Dispatch. From here on, not knowing the outcome means outcome-unknown.
      this.write(trail, 'dispatched', actor, { grantExpiresAt: signed.value.expiresAt, timeoutMs: this.dispatchTimeoutMs });
      return await this.dispatch(trail, ctx, tool, args, signed.value, unknownKey);
    } catch (e) {
      if (e instanceof LedgerUnavailable) return this.answer(trail, { ok: false, error: { code: e.code, message: e.message } });
      return this.internal(trail, e);
    }
  }

  private async dispatch(
    trail: Trail,
    ctx: AgentContext,
    tool: ToolDescriptor,
    args: Record<string, unknown>,
    grant: Grant,
    unknownKey: string,
  ): Promise<BrokerAnswer<InvokeValue>> {
    const actor = ctx.actor;
    const requestId = grant.requestId;
    // Our own controller: the agent's signal aborts it, and nothing else shares it.
    const ctl = new AbortController();
    const onAbort = () => ctl.abort();
    ctx.signal?.addEventListener('abort', onAbort, { once: true });
    let res: Result<InvocationResult>;
    try {
      res = await this.link.request(
        {
          op: 'invoke',
          tabId: tool.tabId,
          frameId: tool.frameId,
          documentId: tool.documentId,
          toolName: tool.name,
          descriptorHash: tool.descriptorHash,
          arguments: args,
          grant,
          timeoutMs: this.dispatchTimeoutMs,
        },
        { signal: ctl.signal, timeoutMs: this.dispatchTimeoutMs + this.linkGraceMs },
      );
    } catch (e) {
      // ExtensionLink promises never to throw; if it does, the outcome is unknown.
      res = { ok: false, error: toErrorInfo(e) };
    } finally {
      ctx.signal?.removeEventListener('abort', onAbort);
    }

    const unknown = (why: string, detail: Record<string, unknown>): BrokerAnswer<InvokeValue> => {
      this.unknownOutcomes.set(unknownKey, requestId);
      this.tryWrite(trail, 'outcome-unknown', actor, detail);
      return this.answer(trail, {
        ok: false,
        error: {
          code: 'outcome-unknown',
          message:
            `${why} The tool may or may not have run. Further invocations of ${JSON.stringify(tool.name)} in this document are refused ` +
            `until you inspect the page: call webmcp_discover {"tabId": ${tool.tabId}} again, then decide whether to retry.`,
        },
      });
    };

    if (!res.ok) {
      if (ctx.signal?.aborted || res.error.code === 'aborted') {
        // Cancelled while dispatched. Aborting the link request makes the link ask
        // the extension to cancel it (ExtensionLink: the bridge sends op 'cancel'
        // for that message, which aborts executeTool's signal). But the page's
        // execute may already have run, and aborting does not undo it: the honest
        // outcome is unknown.
        return unknown('The agent cancelled the request after it was dispatched.', { reason: 'cancelled-during-dispatch' });
      }
      if (PRE_DISPATCH_CODES.has(res.error.code)) return this.extensionRefused(trail, actor, tool, res.error.code, res.error.message);
      if (res.error.code === 'timeout') return unknown(`The extension did not answer within ${Math.round((this.dispatchTimeoutMs + this.linkGraceMs) / 1000)} s.`, { reason: 'timeout' });
      if (res.error.code === 'link-down') return unknown('The link to the extension dropped during dispatch.', { reason: 'link-down' });
      return unknown(`The extension answered with an error (${res.error.code}).`, { reason: 'link-error', error: { code: res.error.code, message: redactText(res.error.message).value.slice(0, 500) } });
    }

    const r = res.value;
    if (!r || typeof r !== 'object' || !OUTCOMES.has(r.outcome)) return unknown('The extension sent a malformed answer.', { reason: 'malformed-answer' });
    switch (r.outcome) {
      case 'succeeded': {
        const raw = typeof r.result === 'string' ? r.result : null;
        const shaped = raw === null ? null : boundText(raw);
        const value: InvokeValue = {
          outcome: 'succeeded',
          tabId: tool.tabId,
          frameId: tool.frameId,
          documentId: tool.documentId,
          origin: tool.origin,
          toolName: tool.name,
          descriptorHash: tool.descriptorHash,
          argumentsHash: grant.argumentsHash,
          result: shaped ? shaped.text : null,
          truncated: Boolean(shaped?.truncated || r.truncated),
          redacted: Boolean(shaped?.redacted || r.redacted),
          ...(typeof r.elapsedMs === 'number' ? { elapsedMs: r.elapsedMs } : {}),
        };
        this.tryWrite(trail, 'succeeded', actor, {
          elapsedMs: r.elapsedMs ?? null,
          resultBytes: shaped?.originalBytes ?? 0,
          resultSha256: shaped ? sha256HexSync(shaped.text) : null,
          truncated: value.truncated,
          redacted: value.redacted,
        });
        return this.answer(trail, { ok: true, value });
      }
      case 'failed': {
        const msg = redactText(String(r.error?.message ?? 'the tool failed')).value.slice(0, 2000);
        this.tryWrite(trail, 'failed', actor, { error: { code: r.error?.code ?? 'failed', message: msg }, elapsedMs: r.elapsedMs ?? null });
        return this.answer(trail, {
          ok: false,
          error: { code: 'failed', message: `The page tool ran and reported a failure (${r.error?.code ?? 'failed'}).`, detail: { untrustedText: msg } },
        });
      }
      case 'refused':
        return this.extensionRefused(trail, actor, tool, r.refusal ?? r.error?.code ?? 'refused', r.error?.message ?? '');
      case 'cancelled':
        // The extension answers 'cancelled' when executeTool's signal was aborted,
        // which can happen after the page's execute started: nothing proves the
        // tool did not act, so this is not a clean "cancelled".
        return unknown('The extension reports the invocation was cancelled while it was dispatched.', {
          reason: 'extension-cancelled-during-dispatch',
          elapsedMs: r.elapsedMs ?? null,
        });
      case 'outcome-unknown':
        return unknown('The extension could not tell whether the tool completed (it did not settle in time or the page went away).', {
          reason: 'extension-outcome-unknown',
          elapsedMs: r.elapsedMs ?? null,
        });
    }
    return unknown('Unreachable.', { reason: 'unreachable' });
  }

  private extensionRefused(trail: Trail, actor: Actor, tool: ToolDescriptor, code: string, message: string): BrokerAnswer<InvokeValue> {
    const stale = STALE_DESCRIPTOR_CODES.has(code);
    if (stale) this.forgetTab(tool.tabId);
    const text = redactText(String(message)).value.slice(0, 500);
    this.tryWrite(trail, 'refused', actor, { code, message: text, by: 'extension' });
    return this.answer(trail, {
      ok: false,
      error: {
        code,
        message:
          `The extension refused the invocation before running it (${code}); nothing was done.` +
          (stale ? ` The page changed since your discovery: call webmcp_discover {"tabId": ${tool.tabId}} again.` : ''),
      },
    });
  }

  /** Resolve the agent's (tabId, frameId?, name, descriptorHash, documentId?) against the latest discovery. */
  private resolve(req: InvokeRequest): Result<ToolDescriptor> {
    const again = `Call webmcp_discover {"tabId": ${req.tabId}} again and use a descriptorHash from its answer.`;
    const d = this.discoveries.get(req.tabId);
    if (!d) {
      return { ok: false, error: { code: 'descriptor-unknown', message: `There is no current discovery of tab ${req.tabId} (never discovered, or the page navigated or changed its tools since). ${again}` } };
    }
    const sameName = d.tools.filter((t) => t.name === req.name && (req.frameId === undefined || t.frameId === req.frameId));
    const exact = sameName.filter((t) => t.descriptorHash === req.descriptorHash);
    if (exact.length === 0) {
      const why = sameName.length
        ? `the tool ${JSON.stringify(req.name)} exists but its descriptor changed (a different descriptorHash)`
        : `no tool named ${JSON.stringify(req.name)}${req.frameId !== undefined ? ` in frame ${req.frameId}` : ''} is in the latest discovery of tab ${req.tabId}`;
      return { ok: false, error: { code: 'descriptor-unknown', message: `Unknown or changed descriptor: ${why}. ${again}` } };
    }
    if (req.documentId !== undefined) {
      // The agent names the document it discovered in: the call runs there or nowhere.
      const inDoc = exact.filter((t) => t.documentId === req.documentId);
      if (inDoc.length === 0) {
        const given = typeof req.documentId === 'string' ? JSON.stringify(req.documentId.slice(0, 128)) : 'an invalid documentId';
        return {
          ok: false,
          error: {
            code: 'navigated',
            message:
              `The page moved to a new document since the discovery that gave documentId ${given}; nothing was done. ` +
              `Call webmcp_discover {"tabId": ${req.tabId}} again and use the documentId and descriptorHash from its answer.`,
          },
        };
      }
      return this.one(inDoc);
    }
    return this.one(exact);
  }

  private one(matches: ToolDescriptor[]): Result<ToolDescriptor> {
    if (matches.length > 1) {
      return {
        ok: false,
        error: { code: 'descriptor-ambiguous', message: `Several frames (${matches.map((t) => t.frameId).join(', ')}) offer this exact descriptor; pass frameId to choose one.` },
      };
    }
    return { ok: true, value: matches[0] as ToolDescriptor };
  }

  // ---- link events ----------------------------------------------------------------

  private onLinkEvent(e: Parameters<Parameters<ExtensionLink['onEvent']>[0]>[0]): void {
    try {
      if (e.kind === 'tabs-changed') {
        this.setSharedTabs(e.tabs);
      } else if (e.kind === 'navigated' || e.kind === 'tools-changed') {
        const d = this.discoveries.get(e.tabId);
        if (d) {
          // The latest discovery no longer describes that frame: the agent must discover again.
          if (e.frameId === 0) this.discoveries.delete(e.tabId);
          else this.discoveries.set(e.tabId, { ...d, tools: d.tools.filter((t) => t.frameId !== e.frameId) });
        }
        if (e.kind === 'navigated') {
          // A pending approval for a document that is gone can never be dispatched safely.
          for (const v of this.approvals.list()) {
            if (v.tab.tabId === e.tabId && v.frameId === e.frameId && v.documentId !== e.documentId) {
              // A refusal (not a cancellation): nobody withdrew it; the document it
              // was for is gone (issue 4: "navigation while the dialog is open (refused)").
              this.approvals.refuse(v.requestId, 'navigated', 'the page navigated away from the document this request was for');
            }
          }
        }
      }
    } catch {
      /* an odd event must not break the broker */
    }
  }

  // ---- receipts and answers --------------------------------------------------------

  private trail(faculty: Faculty, fields: Partial<ReceiptInput>): Trail {
    return {
      base: {
        requestId: randomUUID(),
        faculty,
        origin: null,
        tabId: null,
        frameId: null,
        documentId: null,
        toolName: null,
        descriptorHash: null,
        argumentsHash: null,
        ...fields,
      },
      lastReceiptId: '',
    };
  }

  /** Write a receipt; before dispatch a failure aborts the request (fail closed). */
  private write(trail: Trail, event: ReceiptEvent, actor: Actor, detail: Record<string, unknown>): Receipt {
    let r: Receipt;
    try {
      r = this.receipts.append({ ...trail.base, event, actor, detail });
    } catch (e) {
      throw new LedgerUnavailable(`The receipt ledger is unavailable (${e instanceof Error ? e.message : String(e)}); nothing was done.`);
    }
    trail.lastReceiptId = r.id;
    return r;
  }

  /** After dispatch the answer must still reach the agent even if the ledger fails. */
  private tryWrite(trail: Trail, event: ReceiptEvent, actor: Actor, detail: Record<string, unknown>): void {
    try {
      this.write(trail, event, actor, detail);
    } catch {
      /* reported by the ledger's own health check; the agent still gets its answer */
    }
  }

  private answer<T>(trail: Trail, r: Result<T>): BrokerAnswer<T> {
    return { ...r, requestId: trail.base.requestId as string, receiptId: trail.lastReceiptId };
  }

  private refuse<T>(trail: Trail, actor: Actor, code: string, message: string, extra?: { issues?: ArgumentIssue[] }): BrokerAnswer<T> {
    this.write(trail, 'refused', actor, { code, message: message.slice(0, 1000), ...(extra?.issues ? { issues: extra.issues } : {}) });
    const error: ErrorInfo = { code, message, ...(extra?.issues ? { detail: { issues: extra.issues } } : {}) };
    return this.answer(trail, { ok: false, error });
  }

  private cancelled<T>(trail: Trail, actor: Actor, reason: string): BrokerAnswer<T> {
    this.tryWrite(trail, 'cancelled', actor, { reason });
    return this.answer(trail, { ok: false, error: { code: 'cancelled', message: `Cancelled: ${reason}. Nothing was dispatched.` } });
  }

  private readFailed<T>(trail: Trail, ctx: AgentContext, e: ErrorInfo): BrokerAnswer<T> {
    if (ctx.signal?.aborted || e.code === 'aborted') return this.cancelled(trail, ctx.actor, 'the agent cancelled the read');
    const message = redactText(String(e.message)).value.slice(0, 500);
    this.tryWrite(trail, 'failed', ctx.actor, { error: { code: e.code, message } });
    return this.answer(trail, { ok: false, error: { code: e.code, message: `The extension could not answer (${e.code}): ${message}` } });
  }

  private internal<T>(trail: Trail, e: unknown): BrokerAnswer<T> {
    if (e instanceof LedgerUnavailable) return this.answer(trail, { ok: false, error: { code: e.code, message: e.message } });
    const info = toErrorInfo(e);
    this.tryWrite(trail, 'failed', { kind: 'console' }, { error: { code: 'internal', message: info.message.slice(0, 500) } });
    return this.answer(trail, { ok: false, error: { code: 'internal', message: 'The console hit an internal error; nothing further was done.' } });
  }
}
