/**
 * Domain types shared by the console and the extension. Names follow WebMCP
 * (tool, descriptor, `inputSchema`, annotations), Chrome (tab, frame,
 * `documentId`) and the glossary of docs/design.md (request, approval, grant,
 * dispatch, readback, receipt, outcome, faculty).
 */
import type { InvocationOutcome } from './receipt';

/** The four annotation booleans Chromium reports for imperative tools (docs/browser-facts.md, "WebMCP: listing tools"). Page claims: hints only. */
export interface ToolAnnotations {
  readOnlyHint?: boolean;
  untrustedContentHint?: boolean;
  consequentialHint?: boolean;
  debugging?: boolean;
}

/** Why a discovered tool cannot be invoked (it is still listed, so the person sees it). */
export type BlockReason =
  | 'password-field'
  | 'credential-field'
  | 'invalid-name'
  | 'description-too-long'
  | 'schema-too-large'
  | 'schema-too-deep'
  | 'title-too-long'
  | 'not-canonicalizable';

/**
 * One page tool as discovered in one frame's document. All text fields are
 * UNTRUSTED page content. `descriptorHash` covers name, title, description,
 * inputSchema, origin and annotations (src/shared/canonical.ts).
 */
export interface ToolDescriptor {
  name: string;
  title: string;
  description: string;
  inputSchema: unknown;
  /** As reported by the page; `undefined` for declarative form tools. */
  annotations?: ToolAnnotations;
  /** The registering document's origin, e.g. `http://127.0.0.1:8765`. */
  origin: string;
  descriptorHash: string;
  tabId: number;
  frameId: number;
  documentId: string;
  /** The frame's URL as the person may see it (credentials and secret-looking parameters stripped, src/shared/url.ts). */
  frameUrl?: string;
  /** The tab's (top-level) URL, stripped, from the very read `urlHash` covers (for a subframe tool, its own frame's read). */
  tabUrl?: string;
  /**
   * `urlHash` of the EXACT tab and frame URLs when this descriptor was read
   * (src/shared/canonical.ts `urlHash`). The grant binds it; the extension refuses a
   * dispatch when the page's URLs no longer hash to it (`navigated`), which also
   * catches same-document changes (`pushState`, fragments). Never the stripped URLs:
   * two items that differ only in a stripped parameter must not compare equal.
   */
  urlHash?: string;
  /** `imperative` (registerTool) or `declarative` (`<form toolname>`). */
  kind: 'imperative' | 'declarative';
  /** Present when the tool is listed but may never be invoked. */
  blocked?: BlockReason;
  /**
   * Set by the console at discovery, never by the extension: why the tool
   * cannot be invoked because its inputSchema cannot be used to validate
   * arguments (the `schema-rejected` message a call would get; src/main/core/broker/validator.ts).
   */
  unusable?: string;
  /** Flags for the UI, e.g. 'hidden-instructions', 'bidi-control', 'confusable-name'. Never rewrites the text. */
  flags?: string[];
}

/** A limit violation found during discovery, reported with its reason instead of the tool. */
export interface DiscoveryViolation {
  frameId: number;
  reason: 'too-many-tools' | 'cross-origin-frame' | 'message-too-large' | BlockReason | string;
  /** The tool name as the page gave it (truncated to 128 chars), when one applies. */
  name?: string;
  detail?: string;
}

/** Which WebMCP surface the document offers (feature detection, never by retrying an execution). */
export interface WebMcpSupport {
  /** `document.modelContext` exists (current draft, Chromium 156 with WebMCPTesting). */
  modelContext: boolean;
  /** `navigator.modelContext` or `navigator.modelContextTesting` exists: a legacy API, reported only. */
  legacyApi: 'navigator.modelContext' | 'navigator.modelContextTesting' | null;
  /** How `executeTool` takes its arguments: an object (current) or a JSON string (older builds). */
  argumentForm: 'object' | 'json-string' | null;
}

/** Result of discovering one tab. */
export interface DiscoveryResult {
  tabId: number;
  /** The top-level document's origin; only frames with this origin are listed. */
  origin: string;
  /** The top-level URL with credentials and token-like query parameters stripped. */
  url: string;
  documentId: string;
  support: WebMcpSupport;
  tools: ToolDescriptor[];
  violations: DiscoveryViolation[];
}

/** A tab the person shared with the agent. URL is stripped of credentials. */
export interface SharedTab {
  tabId: number;
  windowId: number;
  title: string;
  url: string;
  origin: string;
  /** The top frame's current `documentId` (chrome.webNavigation / chrome.tabs). */
  documentId: string;
  sharedAt: number;
}

/**
 * A one-use grant, issued by the console after the person approved exactly one
 * request, checked by the extension right before dispatch (docs/design.md,
 * "Trust rules"). The same shape serves every faculty: what differs is the
 * `subjectHash` (the descriptor hash for WebMCP; a target fingerprint, patch or
 * script hash for later faculties) and the `operation` (so a hover grant can
 * never act as a click). `mac` = HMAC-SHA-256, with a key derived from the
 * pairing key for grants only, over the canonical JSON of every other field
 * (src/shared/grant.ts).
 */
export interface Grant {
  requestId: string;
  /** The faculty that will act (receipt Faculty, e.g. `webmcp-invoke`). */
  faculty: string;
  /** The faculty's operation (e.g. `invoke`); [a-z0-9-]{1,64}. */
  operation: string;
  tabId: number;
  frameId: number;
  documentId: string;
  origin: string;
  /** SHA-256 hex of the exact tab and frame URLs the person's page had at review (src/shared/canonical.ts `urlHash`). */
  urlHash: string;
  /** SHA-256 hex of what is acted on: the descriptorHash for WebMCP. */
  subjectHash: string;
  argumentsHash: string;
  /** 32 hex chars, random, never used twice. */
  nonce: string;
  /** ms since the epoch (UTC). */
  expiresAt: number;
  mac: string;
}

/**
 * Why the extension refused an invocation before dispatch (issue 3, §7). Each
 * is produced by an end-to-end test.
 */
export type RefusalCode =
  | 'navigated'
  | 'tool-missing'
  | 'tool-ambiguous'
  | 'descriptor-changed'
  | 'arguments-mismatch'
  | 'grant-expired'
  | 'grant-reused'
  | 'grant-invalid'
  | 'tab-not-shared'
  | 'tool-blocked'
  /** A form tool's form is not the one approved: another action or method, `toolautosubmit` added or removed, or other values to submit (src/shared/form.ts). */
  | 'form-changed'
  /** A check could not run (e.g. the nonce record could not be written): nothing was dispatched, and the page did not change. */
  | 'check-failed'
  /** Semantic mutations (src/shared/semantic-target.ts): the element no longer has the approved fingerprint. */
  | 'target-changed'
  /** The ref's element left the page. */
  | 'ref-stale'
  /** The target is a blocked surface (password, a form holding one, credential fields, private, cross-origin frame). */
  | 'target-blocked'
  /** The target's form is a declarative WebMCP tool listed now: use it (webmcp_invoke). */
  | 'narrower-capability-available'
  /** The target is not actionable now (hidden, moving, disabled, inert, no pointer events, not rendering). */
  | 'not-actionable'
  /** Another element covers the target's visible centre (the message names it: page text). */
  | 'target-covered'
  /** Live Patch (src/shared/live-patch.ts): an edit outside the allow-list (the message names it). */
  | 'patch-forbidden'
  /** Live Patch: the patch to revert is not active in that document (reverted already, or a new document dropped it). */
  | 'patch-unknown'
  /** Live Patch: a later patch on the same element is still active: revert it first, or both together. */
  | 'patch-stacked'
  /** Raw JavaScript (src/shared/raw-script.ts): the page's CSP forbids evaluating a string (script-src without 'unsafe-eval'); nothing ran. */
  | 'csp-blocked'
  /** Raw JavaScript, world USER_SCRIPT: the person has not allowed user scripts for the extension (chrome.userScripts is undefined); nothing ran. */
  | 'user-scripts-unavailable';

/**
 * What `page_info` reads in one shared tab (faculty `page-info`): the top
 * document as the page has it now, whether WebMCP is available there (read in
 * the page, never assumed), its same-origin frames with stripped URLs, and only
 * the origin of the others. All text is UNTRUSTED page content.
 */
export interface PageInfo {
  tabId: number;
  /** The top-level URL, stripped (src/shared/url.ts). */
  url: string;
  title: string;
  origin: string;
  documentId: string;
  /** `'modelContext' in document` with a usable `getTools`, read in the top document. */
  webmcp: boolean;
  frames: Array<
    | { frameId: number; sameOrigin: true; url: string; documentId: string; webmcp: boolean }
    | { frameId: number; sameOrigin: false; origin: string }
  >;
  /** Frames past the listing limit, counted and not listed (absent when none were left out). */
  framesOmitted?: number;
}

/**
 * What `page_snapshot` reads in one shared tab (faculty `semantic-read`,
 * operation `snapshot`; docs/semantic-snapshot.md): the semantic snapshot's
 * text (format in src/shared/snapshot.ts), already redacted and bounded. All
 * of `text` is UNTRUSTED page content.
 */
export interface SemanticSnapshot {
  tabId: number;
  /** The shared origin (the top document's). */
  origin: string;
  /** The top-level URL, stripped (src/shared/url.ts). */
  url: string;
  /** The top document's documentId. */
  documentId: string;
  /** The ref zoomed into (absent for the whole page). */
  ref?: string;
  /** The frame and document the snapshot starts in (the top's, or the ref's). */
  frameId: number;
  rootDocumentId: string;
  text: string;
  /** The text was cut at the budget (it then ends with the truncation marker). */
  truncated: boolean;
  /** UTF-8 bytes of `text`. */
  bytes: number;
  /** The budget it was cut to (UTF-8 bytes). */
  maxBytes: number;
  /** Element lines carrying a ref. */
  refs: number;
  /** Frames in the snapshot: read (same-origin), cross-origin (origin only), not read. */
  frames: { read: number; crossOrigin: number; notRead: number };
}

/** One element `page_extract` read: its own line's parts (as the snapshot shows them) and its subtree's text. Page text: UNTRUSTED, redacted. */
export interface ExtractMatch {
  /** Its ref, when the snapshot would give it one (what an agent acts on or zooms into). */
  ref?: string;
  role?: string;
  /** Lower-case tag name. */
  tag: string;
  name?: string;
  value?: string;
  states?: string[];
  /** Plain text of the subtree: one line per snapshot line that says something (src/shared/snapshot-lines.ts plainPieces). */
  text: string;
}

/** Where a semantic read (extract, wait, verify) ran: the tab's top document, and the document that answered. */
interface SemanticReadPlace {
  tabId: number;
  /** The shared origin. */
  origin: string;
  /** The top-level URL, stripped. */
  url: string;
  /** The top document's documentId. */
  documentId: string;
  /** The frame and document that answered (the ref's, or the top's). */
  frameId: number;
  rootDocumentId: string;
  ref?: string;
  selector?: string;
}

/** What `page_extract` reads (faculty `semantic-read`, operation `extract`; docs/semantic-reads.md). */
export interface SemanticExtract extends SemanticReadPlace {
  matches: ExtractMatch[];
  /** Elements matched (at most MAX_SELECTOR_MATCHES); `more`: further ones were left out. */
  count: number;
  more: boolean;
  /** Some text was cut at the budget. */
  truncated: boolean;
  /** The budget of the matches' JSON (UTF-8 bytes). */
  maxBytes: number;
}

/** What `page_wait` and `page_verify` answer (operations `wait`, `verify`): the condition, whether it held, and the view's evidence. */
export interface SemanticCheck extends SemanticReadPlace {
  /** The condition, as src/shared/semantic-conditions.ts Condition. */
  condition: Record<string, unknown>;
  met: boolean;
  /** What the view showed (redacted; page text in it is UNTRUSTED). */
  evidence: Record<string, unknown>;
  /** Since the check began (ms). */
  elapsedMs: number;
  /** The wait's bound (ms; 0 for verify). */
  timeoutMs: number;
}

/**
 * Where one frame of a shared tab is now (faculty `webmcp-discover`, operation
 * `locate`, arguments `{frameId, documentId}`): read in that very document by
 * the extension, for a request made after a same-document navigation
 * (`pushState`, `replaceState`, a fragment) so that the person reviews, and the
 * grant binds, the page as it is (docs/broker.md, "Same-document navigation").
 */
export interface FrameLocation {
  frameId: number;
  documentId: string;
  /** The tab's top-level URL, stripped (src/shared/url.ts). */
  tabUrl: string;
  /** The frame's URL, stripped; for frame 0 the same as `tabUrl`. */
  frameUrl: string;
  /** `urlHash` (src/shared/canonical.ts) of the EXACT tab and frame URLs of the same read. */
  urlHash: string;
}

/** The outcome of one dispatched invocation. */
export type Outcome = InvocationOutcome;

/** A bounded, redacted tool result, always labelled untrusted when handed to the agent. */
export interface InvocationResult {
  outcome: Outcome;
  /** The page's result text (the JSON string `executeTool` resolved to), bounded and redacted. */
  result?: string | null;
  truncated?: boolean;
  redacted?: boolean;
  /** Set when `outcome` is refused or failed. */
  refusal?: RefusalCode;
  error?: { code: string; message: string };
  /** Wall time from dispatch to settle (ms). */
  elapsedMs?: number;
  /** UTF-8 bytes of the page's whole result, before any cut (set on `succeeded` by the extension). */
  resultBytes?: number;
  /**
   * Set on `succeeded` when the page left after the tool answered (a navigation began, another
   * document, or another URL in the same document), as the browser saw it: the URL, stripped.
   * Also on `outcome-unknown` when another document replaced the page before the tool answered.
   */
  navigatedTo?: string;
  /**
   * A form the agent filled but that was not submitted (a waiting form's timeout, a cancel): whether
   * the extension put its fields back to what they held before the fill, checked by reading them back.
   */
  formRestored?: boolean;
  /**
   * `handled-without-answer` on `succeeded`: a form's submit handler ran and called preventDefault()
   * without respondWith(), so the page took the submission itself and gave no answer (Chromium rejects
   * executeTool then; docs/browser-facts.md, "WebMCP: declarative forms").
   */
  note?: 'handled-without-answer';
  /** What the browser saw the page do outside the call while it ran (docs/extension.md, "Effects outside the call"). */
  effects?: InvocationEffects;
}

/** The most new tabs listed in InvocationEffects.openedTabs; the rest are counted. */
export const MAX_OPENED_TABS_LISTED = 8;

/**
 * Effects outside the call that the extension's service worker saw while a dispatch ran
 * (extension/src/background/effects.ts). Only what the browser reports without the `debugger`
 * permission: a file chooser, a download and a JavaScript dialog have no event here.
 */
export interface InvocationEffects {
  /**
   * Tabs the page opened (`target=_blank`, `window.open`) from the target tab while the action
   * ran, as webNavigation.onCreatedNavigationTarget reported them: the URL each was created
   * for, stripped (UNTRUSTED: the page chose it). These tabs are NOT shared.
   * At most MAX_OPENED_TABS_LISTED.
   */
  openedTabs?: Array<{ url: string }>;
  /** How many further new tabs were not listed. */
  openedTabsOmitted?: number;
  /**
   * Set when the action gave no answer in time AND the page then did not answer the extension's
   * liveness probe either: its script is blocked, most likely by a dialog (`alert`, `confirm`,
   * `prompt`, `beforeunload`) that waits for the person, or busy.
   */
  pageUnresponsive?: boolean;
}
