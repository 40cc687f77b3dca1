/**
 * Domain types shared by the console and the extension. Names follow WebMCP
 * (tool, descriptor, `inputSchema`, annotations), Chrome (tab, frame,
 * `documentId`) and the glossary of DESIGN.md (request, approval, grant,
 * dispatch, readback, receipt, outcome, faculty).
 */
import type { InvocationOutcome } from './receipt';

/** The four annotation booleans Chromium reports for imperative tools (FACTS.md). Page claims: hints only. */
export interface ToolAnnotations {
  readOnlyHint?: boolean;
  untrustedContentHint?: boolean;
  consequentialHint?: boolean;
  debugging?: boolean;
}

/** Why a discovered tool cannot be invoked (it is still listed, so the person sees it). */
export type BlockReason =
  | 'password-field'
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
  /** `imperative` (registerTool) or `declarative` (`<form toolname>`). */
  kind: 'imperative' | 'declarative';
  /** Present when the tool is listed but may never be invoked. */
  blocked?: BlockReason;
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
 * request, checked by the extension right before dispatch (DESIGN.md, "Trust rules").
 * `mac` = HMAC-SHA256 with the pairing key over the canonical JSON of every other
 * field (src/shared/grant.ts).
 */
export interface Grant {
  requestId: string;
  tabId: number;
  frameId: number;
  documentId: string;
  origin: string;
  toolName: string;
  descriptorHash: string;
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
  | 'tool-blocked';

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
}
