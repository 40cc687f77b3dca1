/**
 * The contract between the pipeline (./pipeline.ts) and a faculty's console
 * side (src/main/core/faculties/*): what a reviewed action's request carries,
 * what resolving its subject yields, and what a faculty must supply. A faculty
 * is a constant; everything it may read comes in through `FacultyEnv`.
 */
import type { ApprovalSubject } from '../../../shared/ipc';
import type { Actor, Faculty } from '../../../shared/receipt';
import type { Result } from '../../../shared/result';
import type { FrameLocation, InvocationEffects, ToolAnnotations } from '../../../shared/types';
import type { FormSnapshot } from '../../../shared/form';
import type { ToolKind } from '../policy';
import type { Sharing } from '../sharing';
import type { Discoveries } from './discoveries';
import type { TrailFields } from './trail';
import type { PictureStore } from '../faculties/semantic-picture';
import type { LivePatches } from '../faculties/live-patch';
import type { ReceiptEvent } from '../../../shared/receipt';
import type { ArgumentValidator } from './validator';

/** Who is calling and how the agent-facing tool is marked (from the tool registry, never from the page). */
/** An authenticated agent token as the broker sees it: never the secret. */
export interface AgentTokenRef {
  /** `tok_` + 16 hex, or `default` (the token migrated from before per-agent tokens). */
  id: string;
  /** The name the person gave the token (1–64 printable characters). */
  name: string;
}

/** Who calls and how: one per agent tool call. */
export interface AgentContext {
  /** The agent as receipts name it: `name` is its token's name, `clientName` what the client declares (src/shared/receipt.ts). */
  actor: Actor;
  /**
   * The token the call authenticated with (issue 9 item 2): `id` is stable for the token's
   * life (key per-agent limits and quotas on it), `name` is the person's name for the agent.
   * Absent only for calls made inside the console itself (tests, tools), never for an MCP call.
   */
  agentToken?: AgentTokenRef;
  kind: ToolKind;
  /** The MCP request's cancellation (`extra.signal` in the SDK; MCP spec, "Cancellation"). */
  signal?: AbortSignal;
  /**
   * Set only for the person's own act in the console (ConsoleApi.revertPatches): the person is the
   * actor and their press is the decision, so no dialog is shown (the `approved` receipt says so).
   * Never set for an agent's call.
   */
  byPerson?: true;
  /**
   * Told the request's id as soon as the pipeline has one, before any check (the tool inspector's
   * manual invoke answers it to the renderer at once, src/main/core/inspector.ts). Never throws into the pipeline.
   */
  onRequest?(requestId: string): void;
  /**
   * Sends an MCP progress notification for this call (`notifications/progress`; only when the
   * client gave a `progressToken`, MCP spec, "Progress"). `progress` and `total` in ms here.
   */
  progress?(p: { progress: number; total?: number; message: string }): void;
}

/** What every reviewed action's request carries, whatever its faculty. */
export interface ActionRequestBase {
  tabId: number;
  /** Exactly what the faculty acts with: hashed, validated, shown, granted and dispatched as given. */
  arguments: Record<string, unknown>;
  /** The agent's own id for the operation: recorded and shown, never injected into `arguments`. */
  operationId?: string;
}

/** Where a resolved action acts, as the faculty resolved it (WebMCP: from the latest discovery). */
export interface ActionTarget {
  tabId: number;
  frameId: number;
  documentId: string;
  origin: string;
  /** SHA-256 of the exact tab and frame URLs at discovery (src/shared/canonical.ts `urlHash`). */
  urlHash: string;
  /** The tab's URL, stripped, for the person: from the same read as `urlHash`. */
  tabUrl: string;
  /** The frame's URL, stripped, for the person: from the same read as `urlHash`. */
  frameUrl: string;
}

/** A faculty's subject, resolved from what the console knows (e.g. the latest discovery). */
export interface ResolvedAction {
  target: ActionTarget;
  /** What the grant binds as the subject (WebMCP: the descriptorHash). */
  subjectHash: string;
  /**
   * Key of outcome-unknown blocks inside the document: the receipt's tool name
   * when the faculty has one (WebMCP), else the subject hash — the same key
   * restart recovery (./recovery.ts) rebuilds from the receipts.
   */
  subjectKey: string;
  /** What the approval dialog shows of the subject. */
  subject: ApprovalSubject;
  /** What the extension's faculty receives as `subject`. */
  linkSubject: Record<string, unknown>;
  /** Receipt fields of this faculty (WebMCP: toolName, descriptorHash). */
  receiptFields: Partial<TrailFields>;
  /** Inputs of the policy beyond faculty, kind, origin and tab. */
  policy: { toolName?: string; annotations?: ToolAnnotations };
  /** Set when the frame's URL changed in the same document since the agent's look (it is now `target.tabUrl`/`frameUrl`). */
  movedSinceLook?: boolean;
}

/** What a faculty's steps may read: the console's knowledge of the shared tabs. */
export interface FacultyEnv {
  discoveries: Discoveries;
  sharing: Sharing;
  validator: ArgumentValidator;
  /**
   * Where a frame is now, read by the extension in that very document
   * (`webmcp-discover`/`locate`, src/shared/types.ts FrameLocation): for a
   * subject resolved after a same-document navigation, so the person reviews
   * and the grant binds the page as it is. `documentId: null`: whatever document
   * the frame holds now (raw JavaScript names only a frame). Errors: the link's, `navigated`
   * (another document, origin, or unreadable), `tab-not-shared`, `bad-answer`.
   */
  locate(tabId: number, frameId: number, documentId: string | null, signal?: AbortSignal): Promise<Result<FrameLocation>>;
  /**
   * The form of declarative tool `toolName` as it would be submitted now, read
   * by the extension in that very document (`webmcp-discover`/`form`,
   * src/shared/form.ts FormSnapshot). Errors: the link's, `navigated`,
   * `tab-not-shared`, `tool-missing`, `tool-ambiguous`, `form-too-large`, `bad-answer`.
   */
  readForm(tabId: number, frameId: number, documentId: string, toolName: string, signal?: AbortSignal): Promise<Result<FormSnapshot>>;
  /**
   * One read of a read faculty of the extension (`{op:'read', faculty, operation}`; e.g.
   * `semantic-target`/`resolve`), unreceipted: the request's own trail records what came of it.
   * The value is the extension's, unchecked. Errors: the link's and the faculty's.
   */
  read(faculty: string, operation: string, tabId: number, args: Record<string, unknown>, signal?: AbortSignal): Promise<Result<unknown>>;
  /** The pictures of targets shown lately, in memory only (../faculties/semantic-picture.ts). */
  pictures: PictureStore;
  /** The active Live Patches per tab, in memory only (../faculties/live-patch.ts). */
  patches: LivePatches;
}

/** The receipt fields of a request that names only a tab: its `tabId` when it is a safe integer (ActionFaculty.initialFields). */
export function tabIdFields(req: { tabId?: unknown }): Partial<TrailFields> {
  return { tabId: Number.isSafeInteger(req.tabId) ? (req.tabId as number) : null };
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
  /** Step 2. `{ok:false}` is refused with its code; nothing reaches the person. `signal`: the agent's cancellation. */
  resolveSubject(req: R, env: FacultyEnv, signal?: AbortSignal): Result<ResolvedAction> | Promise<Result<ResolvedAction>>;
  /**
   * Step 3: the arguments against the resolved subject (WebMCP: ajv against the
   * reviewed inputSchema). `ok` carries the `validated` receipt's detail; a
   * failure's `detail.issues` (ArgumentIssue[]) reaches the agent.
   */
  validate(resolved: ResolvedAction, args: Record<string, unknown>, env: FacultyEnv): Result<Record<string, unknown>>;
  /**
   * This faculty's own bound on the wait after dispatch (ms; raw JavaScript: RAW_SCRIPT_TIMEOUT_MS).
   * The pipeline uses the smaller of it and its own dispatch timeout.
   */
  dispatchTimeoutMs?: number;
  /** What the agent should call to look at the page again (stale subject, outcome unknown). */
  lookAgain(tabId: number): string;
  /** The page changed so that this faculty's knowledge of the tab is stale (e.g. forget the discovery). */
  onStale?(tabId: number, env: FacultyEnv): void;
  /** Words for the person: what the agent asks to do ("run a page tool"). */
  verb: string;
  /**
   * The readback of a succeeded dispatch (semantic mutations, issue 10 item 4): judged by the
   * console from the extension's observations. `readback-mismatch` ends the request as `failed`
   * (code `readback-mismatch`) with `message`: success is reported only after a confirmed readback.
   */
  readback?(v: ActionValue, env: FacultyEnv): ReadbackJudgement;
  /**
   * Evidence taken only when the person is about to be asked (after the policy, never for a
   * request a rule allows or refuses): the subject to show instead of `resolved.subject`, and
   * detail for the `approval-shown` receipt (e.g. the target's picture and its hash, issue 10
   * item 6). Never fails the request: what could not be taken is said in the subject.
   */
  evidence?(resolved: ResolvedAction, env: FacultyEnv, signal?: AbortSignal): Promise<{ subject: ApprovalSubject; detail: Record<string, unknown> }>;
  /**
   * A condition this faculty needs for the whole request, not only at its start (raw JavaScript:
   * developer mode on): checked before the person is asked and again right before the dispatch,
   * with no wait between the last check and the send. Non-null: the request is refused with that
   * code (actor the console); nothing is dispatched.
   */
  refusedNow?(): { code: string; message: string } | null;
}

/**
 * A faculty's judgement of a readback: the event, its detail, the agent's message on a mismatch;
 * `also`: the faculty's own receipts written right after it (Live Patch: `patched`, `reverted`,
 * `revert-mismatch`); `failCode`: the code of the failure on a mismatch (default `readback-mismatch`).
 */
export interface ReadbackJudgement {
  event: 'readback-confirmed' | 'readback-mismatch';
  detail: Record<string, unknown>;
  message: string;
  also?: Array<{ event: ReceiptEvent; detail: Record<string, unknown> }>;
  failCode?: string;
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
  /** The page left after the action answered, for this URL (stripped; UNTRUSTED, the page chose it). */
  navigatedTo?: string;
  /** What the browser saw the page do outside the call while it ran (new tabs; URLs stripped, UNTRUSTED). */
  effects?: InvocationEffects;
  /** `handled-without-answer`: a form's submit handler ran and prevented the default without respondWith: the page took the submission itself and gave no answer. */
  note?: 'handled-without-answer';
}

