/**
 * The console API: the one contract between the renderer and the host
 * (docs/design.md, "Conventions" §1, §3). The Electron host carries it over IPC (one channel
 * per method, `CHANNELS`), the loopback web host over a WebSocket; the preload
 * exposes exactly one object of this shape as `window.echo`. Every method
 * answers a Result and never throws across the boundary.
 */
import type { Fingerprint, SemanticOperation } from './semantic-target';
import type { PolicyRule } from './policy';
import type { ErrorInfo, Result } from './result';
import type { Faculty, Receipt, ReceiptPage, ReceiptQuery, VerifyReport } from './receipt';
import type { DiscoveryResult, SharedTab, ToolAnnotations } from './types';
import type { LintFinding } from './page-lint';
import type { FormSubject } from './form';
import type { TargetPicture } from './semantic-picture';
import type { LivePatchInfo, PatchEdit } from './live-patch';
import type { RequestFilter, RequestPage, RequestQuery } from './request-summary';
import type { ExportFormat, LedgerFilter, LedgerProgress } from './ledger-export';
import type { RawScriptWorld, ScriptRun } from './raw-script';

/** What the UI calls "connected" is decided by heartbeats, never by a stale flag. */
export interface LinkStatus {
  state: 'no-extension' | 'handshaking' | 'awaiting-pairing' | 'connected' | 'version-mismatch' | 'refused';
  paired: boolean;
  extensionId?: string;
  /** ms since the epoch of the last answered heartbeat. */
  lastHeartbeatAt?: number;
  /** While `awaiting-pairing`: the short code the person compares with the popup. */
  pairingCode?: string;
  error?: ErrorInfo;
  /** Something only the person can fix, in plain words (version skew, a pairing that stopped working). */
  problem?: LinkProblem;
}

/**
 * A link problem that needs the person, shown in the console and the popup alike
 * (src/shared/link-core/problems.ts makes them):
 * - `extension-outdated`: the extension speaks an older link protocol: update the extension;
 * - `console-outdated`: the console speaks an older one: update Echo Console;
 * - `pair-again`: the pairing no longer works (unknown to the other side, or a key that does not verify).
 */
export interface LinkProblem {
  code: 'extension-outdated' | 'console-outdated' | 'pair-again';
  message: string;
}

/**
 * What a WebMCP tool call acts on: the exact descriptor the person reviews
 * (all text UNTRUSTED page content) and its hash, which the grant binds as the
 * subject hash.
 */
export interface WebMcpToolSubject {
  type: 'webmcp-tool';
  toolName: string;
  title: string;
  description: string;
  inputSchema: unknown;
  /** What the browser reports (Chromium fills in defaults); hints only. */
  annotations?: ToolAnnotations;
  descriptorHash: string;
  /** `imperative` (registerTool) or `declarative` (`<form toolname>`). */
  toolKind: 'imperative' | 'declarative';
  /** The extension's flags on the page text (hidden instructions, bidi, zero-width, ...). */
  flags?: string[];
  /**
   * A declarative tool's form as it will be submitted (src/shared/form.ts): every
   * effective value (the agent's arguments over what the form holds for every
   * other field), where it submits (stripped action, method) and whether approving
   * submits it (`autosubmit`) or only fills it for the person to press the page's
   * button. Bound by the subject hash. Values are UNTRUSTED page content.
   */
  form?: FormSubject;
}

/**
 * A page tool's fields, never present: every other subject extends it, so that code reading them
 * off any subject (`view.subject.toolName === …`) reads `undefined` instead of needing a
 * narrowing first.
 */
interface NoPageToolFields {
  toolName?: undefined;
  title?: undefined;
  description?: undefined;
  inputSchema?: undefined;
  annotations?: undefined;
  descriptorHash?: undefined;
  form?: undefined;
}

/**
 * The faculty-specific part of an approval: one variant per faculty subject
 * (the dialog renders the common part once and one view per `type`). Later
 * faculties add theirs here (a target's evidence, a patch, a script).
 */
export type ApprovalSubject = WebMcpToolSubject | SemanticTargetSubject | SemanticFillSubject | LivePatchSubject | RawScriptSubject;

/**
 * What a raw-JavaScript run (faculty `raw-js`, operation `run`; issue 11 item 3;
 * src/shared/raw-script.ts) runs: the WHOLE code (the dialog shows every character of it,
 * highlighted, unclipped, invisible characters revealed), its SHA-256 (the grant's subject hash)
 * and the world. The code is also in the request's arguments, bound by their hash.
 */
export interface RawScriptSubject extends NoPageToolFields {
  type: 'raw-script';
  operation: 'run';
  code: string;
  /** SHA-256 of the code's exact UTF-8 bytes (src/shared/raw-script.ts scriptHash). */
  codeHash: string;
  world: RawScriptWorld;
  /** The run's bound after dispatch (ms): past it, the outcome is unknown. */
  timeoutMs: number;
}

/**
 * What a Live Patch (faculty `live-patch`; issue 11 item 1; src/shared/live-patch.ts) changes:
 *  - `patch`: the target (its ref, fingerprint and hash, as SemanticTargetSubject; the grant binds
 *    the fingerprint hash as the subject hash) and every edit (also in the request's arguments,
 *    which the grant binds by their hash), with their words for the person (`lines`), and the
 *    target's picture. Nothing touches the page before approval: there is no preview in the page.
 *  - `revert`: the active patches it undoes, newest first (the grant binds their ids,
 *    src/shared/live-patch.ts revertSubjectHash).
 * Fingerprints and target names are UNTRUSTED page text, redacted.
 */
export interface LivePatchSubject extends NoPageToolFields {
  type: 'live-patch';
  operation: 'patch' | 'revert';
  /** patch: the target's ref (the element the grant binds); revert: null. */
  ref: string | null;
  fingerprint: Fingerprint | null;
  fingerprintHash: string | null;
  /** patch: the edits, in order; revert: []. */
  edits: PatchEdit[];
  /** The edits in words (src/shared/live-patch.ts describeEdit), one line each. */
  lines: string[];
  /** revert: the patches undone, newest first. */
  patches: LivePatchInfo[];
  /** A patch applies no input event; this says so beside the other semantic subjects. */
  trustedInput: false;
  /** The target's picture (patch only), as SemanticTargetSubject.picture. */
  picture?: TargetPicture;
}

/**
 * What a form fill (faculty `semantic`, operation `fill`, `page_fill`; issue 10 item 6, "One approval
 * for a form fill"; src/shared/semantic-fill.ts) sets: every field with the text it will hold, in
 * order, in one form (or, all of them, outside any form) of one document. The fields' fingerprints
 * are UNTRUSTED page text, redacted; the texts are the agent's (also in the request's arguments,
 * which the grant binds by their hash). Events are synthetic. The picture is of the first field.
 */
export interface SemanticFillSubject extends NoPageToolFields {
  type: 'semantic-fill';
  operation: 'fill';
  /** The form's name as the fields' fingerprints give it, or null for fields outside any form. */
  formName: string | null;
  fields: Array<{ ref: string; fingerprint: Fingerprint; fingerprintHash: string; text: string }>;
  trustedInput: false;
  /** The first field's picture, as SemanticTargetSubject.picture. */
  picture?: TargetPicture;
}

/**
 * What a semantic mutation (faculty `semantic`: click, hover, focus, scroll, key; issue 10)
 * acts on: the target's page-derived fingerprint (UNTRUSTED page text, redacted) and
 * its hash, which the grant binds as the subject hash. Events are synthetic
 * (`trustedInput: false`); a picture of the target, cropped and with secret fields blacked out,
 * when the tab is the active one of its window.
 */
export interface SemanticTargetSubject extends NoPageToolFields {
  type: 'semantic-target';
  operation: SemanticOperation;
  /** The target's ref: the element the grant binds (the agent's, or the one the console resolved its fingerprint to). Null only in views recorded before that. */
  ref: string | null;
  fingerprint: Fingerprint;
  fingerprintHash: string;
  /** The events are synthetic, never the person's hardware input. */
  trustedInput: false;
  /**
   * The target's picture (issue 10 item 6; src/shared/semantic-picture.ts): its SHA-256 and size
   * (the bytes are fetched with ConsoleApi.getTargetPicture), or why there is none. Absent until
   * the person is about to be asked (it is taken only then).
   */
  picture?: TargetPicture;
}

/**
 * Everything the approval dialog shows for one pending request, whatever its
 * faculty: who asks, what (faculty, operation, subject and its hash), where
 * (origin, tab, frame, document), with which arguments and their hash, until
 * when. Page text is untrusted plain text.
 */
export interface ApprovalView {
  requestId: string;
  /** ms since the epoch. */
  createdAt: number;
  expiresAt: number;
  /**
   * Who asks: `name` is the name the person gave the agent's token (the identity);
   * `clientName` and `version` are what the MCP client declares about itself, shown
   * as self-declared (issue 9 item 2).
   */
  agent: { name: string; version?: string; tokenId?: string; clientName?: string };
  /** The faculty that will act (receipt Faculty) and its operation. */
  faculty: Faculty;
  operation: string;
  /** The agent tool's declared kind (never the page's claim). */
  kind: string;
  /** What the agent asks, in words for the person ("run a page tool"). */
  verb: string;
  origin: string;
  /** The tab's title as last reported, and its URL (stripped) as the faculty resolved it, read with the bound exact-URL hash. */
  tab: { tabId: number; title: string; url: string };
  /** The frame that acts, with its stripped URL ('' when unknown). */
  frame: { frameId: number; url: string };
  documentId: string;
  /** What the grant binds as the subject (WebMCP: the descriptorHash). */
  subjectHash: string;
  subject: ApprovalSubject;
  argumentsHash: string;
  arguments: Record<string, unknown>;
  operationId?: string;
}

/**
 * The MCP endpoint as the person needs it to connect an agent. It carries no token
 * secret: secrets reach the page only in the answer to createAgentToken (issue 9 item 4).
 */
export interface EndpointInfo {
  url: string;
  stdioCommand: string;
}

/** One agent token as the console shows it: never its secret (settings.json keeps only its SHA-256). */
export interface AgentTokenInfo {
  /** Stable id: `tok_` + 16 hex, or `default` (migrated from the single token of older versions). */
  id: string;
  /** The person's name for the agent; the dialog and the receipts show it as who asks. */
  name: string;
  /** ms since the epoch. */
  createdAt: number;
  /** MCP sessions open with this token now (HTTP and stdio). */
  sessions: number;
}

/** The answer to createAgentToken: the secret, shown once, and kept nowhere by the console. */
export interface CreatedAgentToken {
  token: AgentTokenInfo;
  /** The bearer secret (43 characters, base64url). */
  secret: string;
}

/**
 * Where a request in flight is (src/main/core/broker/in-flight.ts): `resolving` (before the person
 * is asked), `awaiting-approval`, `approved` (the grant is being made; not yet dispatched),
 * `dispatched` (the extension is acting: a Stop now leaves the outcome unknown).
 */
export type InFlightPhase = 'resolving' | 'awaiting-approval' | 'approved' | 'dispatched';

/** One reviewed action in flight, as the console shows it (a timeline row's or the dialog's Stop). */
export interface InFlightView {
  requestId: string;
  faculty: Faculty;
  operation: string;
  tabId: number;
  /** The agent's token name (or `person` for the person's own act). */
  agent: string;
  phase: InFlightPhase;
  /** ms since the epoch. */
  startedAt: number;
  /** ms since the epoch, once dispatched. */
  dispatchedAt?: number;
  /** The person stopped it; it ends once its receipt is written. */
  stopping?: boolean;
}

/** The answer to stopRequest: what the stop did (src/main/core/broker/in-flight.ts StopResult). */
export interface StopRequestResult {
  requestId: string;
  phase: InFlightPhase;
  tabId: number;
  /** The dispatch had begun: the outcome is unknown (the page's code may still run); the console offers a reload of `tabId`. */
  afterDispatch: boolean;
}

/**
 * What one Stop everything did (its one `stopped-everything` receipt's detail; src/main/core/stop.ts).
 * Counts and ids only: no page text.
 */
export interface StopEverythingReport {
  /** Pending approvals denied. */
  denied: string[];
  /** Requests in flight stopped (before dispatch: cancelled; after: outcome-unknown). */
  stopped: StopRequestResult[];
  /** Tabs unshared, and tabs the extension could not unshare (with why). */
  unshared: number[];
  unshareFailed: Array<{ tabId: number; code: string }>;
  /** Agent (MCP) sessions closed. */
  sessionsClosed: number;
  /** Developer mode was on and is now off. */
  developerModeSwitchedOff: boolean;
  /** The receipt's id (empty when the ledger could not write it). */
  receiptId: string;
}

/** What the console shows at a glance. */
export interface ConsoleSnapshot {
  approvals: ApprovalView[];
  /** Reviewed actions in flight (including those awaiting approval), oldest first. */
  inFlight: InFlightView[];
  link: LinkStatus;
  sharedTabs: SharedTab[];
  endpoint: EndpointInfo;
  /** The agents' tokens, without secrets. */
  agentTokens: AgentTokenInfo[];
  settings: ConsoleSettings;
}

export interface ConsoleSettings {
  /** How long an approval request waits (ms). */
  approvalTimeoutMs: number;
  /** Whether developer mode is on now (never persisted: off at every start; src/main/core/developer-mode.ts). */
  developerMode: boolean;
  /** Minutes without the person's input or a raw-JavaScript call before developer mode switches itself off. */
  developerModeIdleMinutes: number;
  /**
   * Retention (docs/ledger.md, "Retention"): receipts' payloads older than this many days
   * (RETENTION_DAYS) are erased, their hashes kept; null (the default) keeps them forever.
   */
  retentionDays: number | null;
}

/**
 * The tool inspector's view of one shared tab (issue 12 items 4 and 6; src/main/core/inspector.ts):
 * the console's own discovery of its WebMCP tools (all page text UNTRUSTED) and its page lint.
 */
export interface InspectorView {
  tabId: number;
  /** ms since the epoch. */
  inspectedAt: number;
  discovery: DiscoveryResult;
  /** Findings in LINT_RULES order (src/shared/page-lint.ts). */
  lint: LintFinding[];
  /** How the page-side facts were gathered: frames answered, frames not reached, scripts scanned and skipped; or why they could not be. */
  lintPage: { frames: number; unreached: number; scriptsScanned: number; scriptsSkipped: number } | { error: string };
}

/** How a manual invoke from the inspector ended (`value` and `error` as the agent's webmcp_invoke would get them). */
export type InspectorCall = { requestId: string; tabId: number; toolName: string; descriptorHash: string } & (
  | { ok: true; value: { outcome: 'succeeded'; result: string | null; truncated: boolean; redacted: boolean; argumentsHash: string } & Record<string, unknown> }
  | { ok: false; error: ErrorInfo }
);

/** Pushed from the host to the renderer. */
export type ConsoleEvent =
  | { kind: 'approvals'; approvals: ApprovalView[] }
  | { kind: 'link'; link: LinkStatus }
  | { kind: 'shared-tabs'; tabs: SharedTab[] }
  /** Receipts appended since the last such event, oldest first (batched: at most one event per 25 ms, src/main/core/receipt-events.ts). */
  | { kind: 'receipts'; receipts: Receipt[] }
  | { kind: 'endpoint'; endpoint: EndpointInfo }
  /** A token was created or revoked, or its sessions changed (never a secret). */
  | { kind: 'agent-tokens'; tokens: AgentTokenInfo[] }
  | { kind: 'settings'; settings: ConsoleSettings }
  /** The person's policy rules changed (added, removed, or a tab's rules dropped when it stopped being shared). */
  | { kind: 'policy-rules'; rules: PolicyRule[] }
  /** The active Live Patches changed (applied, reverted, or dropped with their document): all of them now. */
  | { kind: 'live-patches'; patches: LivePatchInfo[] }
  /** A new view of an inspected tab (the page's tools changed, or it was inspected), or null: it is no longer inspected. */
  | { kind: 'inspector'; tabId: number; view: InspectorView | null }
  /** A manual invoke from the tool inspector ended. */
  | { kind: 'inspector-call'; call: InspectorCall }
  /** Progress of Verify ledger or of an export (src/shared/ledger-export.ts): at most one event per chunk of receipts. */
  | { kind: 'ledger-progress'; progress: LedgerProgress }
  /**
   * One raw-JavaScript run started or changed (the agent's or the person's; the developer console
   * shows them live): the run as it is now. Its code is shown to the person; receipts hold only its hash.
   */
  | { kind: 'script-run'; run: ScriptRun }
  /** The requests in flight changed: all of them now. */
  | { kind: 'in-flight'; requests: InFlightView[] }
  /**
   * The host asks the console UI to open one request's dialog (the person clicked its OS
   * notification; the Electron host sends it, the core never does).
   */
  | { kind: 'open-approval'; requestId: string };

/** One method per message; argument objects are validated by the host before use. */
export interface ConsoleApi {
  getSnapshot(): Promise<Result<ConsoleSnapshot>>;
  decideApproval(p: { requestId: string; decision: 'approve' | 'deny'; reason?: string }): Promise<Result<null>>;
  queryReceipts(p: ReceiptQuery): Promise<Result<ReceiptPage>>;
  verifyLedger(): Promise<Result<VerifyReport>>;
  confirmPairing(p: { accept: boolean }): Promise<Result<null>>;
  unpair(): Promise<Result<null>>;
  listShareableTabs(): Promise<Result<SharedTab[]>>;
  shareTab(p: { tabId: number }): Promise<Result<SharedTab>>;
  unshareTab(p: { tabId: number }): Promise<Result<null>>;
  /**
   * Make a token for one agent, named by the person (trimmed; 1–64 printable characters,
   * unique case-insensitively). The secret is in this answer only.
   * Errors: invalid-params, token-name-invalid, token-name-taken, too-many-tokens.
   */
  createAgentToken(p: { name: string }): Promise<Result<CreatedAgentToken>>;
  /** Revoke a token: it stops working at once and its open sessions close. Errors: token-not-found. */
  revokeAgentToken(p: { id: string }): Promise<Result<AgentTokenInfo[]>>;
  updateSettings(p: Partial<ConsoleSettings>): Promise<Result<ConsoleSettings>>;
  /** The person's policy rules (settings.json `policyRules`), in the order they are checked. */
  listPolicyRules(): Promise<Result<PolicyRule[]>>;
  /**
   * Append one rule (checked last) and answer the new list. A tab rule (`tabId`) needs the
   * tab to be shared; its `origin` is filled with (or must equal) the tab's origin now.
   * Errors: invalid-params, invalid-rule, tab-not-shared, tab-origin-mismatch, too-many-rules.
   */
  addPolicyRule(p: { rule: PolicyRule }): Promise<Result<PolicyRule[]>>;
  /**
   * Remove the rule at `index`, which must still be `rule` (else `policy-rule-changed`: someone
   * else edited the list meanwhile); answers the new list.
   */
  removePolicyRule(p: { index: number; rule: PolicyRule }): Promise<Result<PolicyRule[]>>;
  /**
   * The picture of a semantic target shown in an approval (SemanticTargetSubject.picture), by the
   * SHA-256 of its PNG bytes: `png` is base64. Kept in memory only, for the last few approvals.
   * Errors: invalid-params, picture-not-found (never taken, or dropped since).
   */
  getTargetPicture(p: { sha256: string }): Promise<Result<{ png: string; width: number; height: number }>>;
  /** The active Live Patches (issue 11 item 1), of one shared tab or of all, oldest first. Page text in them is UNTRUSTED. */
  listPatches(p: { tabId?: number }): Promise<Result<LivePatchInfo[]>>;
  /**
   * The person reverts Live Patches of one tab: `patchIds`, or every active patch of the tab when
   * absent (Revert all). No dialog (the person's own act), receipted with the person as actor:
   * `reverted` or `revert-mismatch` per patch. Answers what is still active in that tab.
   * Errors: invalid-params, patch-unknown, and the dispatch's own (revert-mismatch, link-down, …).
   */
  revertPatches(p: { tabId: number; patchIds?: string[] }): Promise<Result<LivePatchInfo[]>>;
  /**
   * The tool inspector (docs/inspector.md): discover a shared tab's WebMCP tools and lint the page
   * now, and keep the view live (`inspector` events) while the tab stays shared. Not receipted.
   * Errors: invalid-params, tab-not-shared, link-down, timeout, navigated, no-document.
   */
  inspectTab(p: { tabId: number }): Promise<Result<InspectorView>>;
  /**
   * The person runs one tool of the tab's latest inspection by hand, through the agent's pipeline:
   * validated, shown in the approval dialog (never skipped), granted, receipted with the person as
   * actor. Gated as the person's decision (trusted input, rule 19). Answers the request id at once;
   * the end comes as an `inspector-call` event. Errors: invalid-params, no-trusted-input, not-inspected.
   */
  invokeTool(p: { tabId: number; frameId: number; name: string; descriptorHash: string; documentId: string; arguments: Record<string, unknown> }): Promise<Result<{ requestId: string }>>;
  /**
   * One page of the request timeline (docs/timeline.md): requests newest first, filtered,
   * keyset-paged on the ledger's request index (`cursor` for older, `after` for newer: the live tail).
   * Errors: invalid-params, invalid-query.
   */
  queryRequests(p: RequestQuery): Promise<Result<RequestPage>>;
  /**
   * How many requests match the filters, counted on the request index (asked after the first
   * page), and `through`: the newest receipt's seq when counted (a request whose first receipt is
   * newer is not in the count; the live tail adds it). Errors: invalid-params, invalid-query.
   */
  countRequests(p: RequestFilter): Promise<Result<{ count: number; through: number }>>;
  /**
   * Start exporting the receipts matching `filter` (LedgerFilter, {} for all) as JSONL or CSV into
   * `<data folder>/exports/` (docs/ledger.md, "Export"). Answers at once with the run's id and the
   * file it will write; progress and the end arrive as `ledger-progress` events.
   * Errors: invalid-params, invalid-filter, too-many-exports (one runs at a time).
   */
  startExport(p: { filter: LedgerFilter; format: ExportFormat }): Promise<Result<{ exportId: string; file: string }>>;
  /** Cancel a running export: it stops at the next chunk and its partial file is removed. Errors: export-not-found. */
  cancelExport(p: { exportId: string }): Promise<Result<null>>;
  /**
   * The person runs a developer-console line (issue 11 item 4) in a shared tab: through the
   * raw-JavaScript faculty with the person as actor, and no dialog (their own Enter is the
   * decision), only on the person's trusted input (trusted-input action `developer-console-line`)
   * and only while developer mode is on. World MAIN unless given. Receipts carry the code hash.
   * Answers the run when it ended (also pushed as `script-run` events while it runs).
   * Errors: invalid-params, no-trusted-input / trusted-input-unavailable, developer-mode-off; the run's own
   * (csp-blocked, user-scripts-unavailable, outcome-unknown, link-down, …) come back in the run (`status`, `error`).
   */
  runConsoleLine(p: { tabId: number; frameId?: number; code: string; world?: RawScriptWorld }): Promise<Result<ScriptRun>>;
  /**
   * Stop waiting for a raw-JavaScript run (the developer console's Ctrl+C, or Stop): the console
   * records outcome-unknown (page code cannot be interrupted; the page may still run it) and the run
   * offers to reload its tab. A run still waiting for approval is withdrawn. Errors: invalid-params, run-unknown (ended or never started).
   */
  stopScript(p: { runId: string }): Promise<Result<ScriptRun>>;
  /** The recent raw-JavaScript runs (at most 50, oldest first), for a console UI that opens late. */
  listScriptRuns(): Promise<Result<ScriptRun[]>>;
  /**
   * The person stops one request in flight (issue 12 item 5; docs/stop.md): before dispatch it ends
   * `cancelled`; after dispatch the console stops waiting, asks the extension to abort, and records
   * `outcome-unknown`. The person's decision: gated like Approve/Deny (trust rule 19).
   * Errors: invalid-params, unknown-request, already-stopped, no-trusted-input.
   */
  stopRequest(p: { requestId: string }): Promise<Result<StopRequestResult>>;
  /**
   * Stop everything, one act with one `stopped-everything` receipt: deny every pending approval,
   * stop every request in flight, unshare every tab, close every agent session, switch developer
   * mode off. Gated like Approve/Deny. Errors: no-trusted-input (nothing was done).
   */
  stopEverything(): Promise<Result<StopEverythingReport>>;
  /**
   * Reload one shared tab (offered after a Stop or a raw-JavaScript run left an outcome unknown: the
   * page's own code may still run). Receipt `tab-reloaded`. Gated like Approve/Deny.
   * Errors: invalid-params, tab-not-shared, link-down, reload-failed.
   */
  reloadTab(p: { tabId: number }): Promise<Result<null>>;
}

/**
 * `window.echo`, the object the Electron preload exposes (src/preload/index.ts),
 * and what the renderer's transport hands the UI whichever host serves it: one
 * method per ConsoleApi method, plus a subscription to pushed events.
 */
export interface EchoApi extends ConsoleApi {
  /** Subscribe to ConsoleEvents pushed by the host; returns the unsubscribe function. */
  onEvent(listener: (e: ConsoleEvent) => void): () => void;
}

/** IPC channel names, one per ConsoleApi method, plus the push channel. */
export const CHANNELS = {
  getSnapshot: 'console:get-snapshot',
  decideApproval: 'approvals:decide',
  queryReceipts: 'receipts:query',
  verifyLedger: 'receipts:verify',
  confirmPairing: 'pairing:confirm',
  unpair: 'pairing:unpair',
  listShareableTabs: 'tabs:list-shareable',
  shareTab: 'tabs:share',
  unshareTab: 'tabs:unshare',
  createAgentToken: 'agent-tokens:create',
  revokeAgentToken: 'agent-tokens:revoke',
  updateSettings: 'settings:update',
  listPolicyRules: 'policy:list-rules',
  addPolicyRule: 'policy:add-rule',
  removePolicyRule: 'policy:remove-rule',
  getTargetPicture: 'pictures:get',
  listPatches: 'patches:list',
  revertPatches: 'patches:revert',
  inspectTab: 'inspector:inspect',
  invokeTool: 'inspector:invoke',
  queryRequests: 'requests:query',
  countRequests: 'requests:count',
  startExport: 'ledger:start-export',
  cancelExport: 'ledger:cancel-export',
  runConsoleLine: 'scripts:run-line',
  stopScript: 'scripts:stop',
  listScriptRuns: 'scripts:list',
  stopRequest: 'requests:stop',
  stopEverything: 'requests:stop-everything',
  reloadTab: 'tabs:reload',
  events: 'console:event',
} as const satisfies Record<keyof ConsoleApi | 'events', string>;
