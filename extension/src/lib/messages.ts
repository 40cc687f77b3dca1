/**
 * The contract of the extension's internal messages (docs/design.md, "Conventions" §1):
 * service worker ⇄ content script (chrome.tabs.sendMessage, addressed to one
 * document with `{frameId, documentId}`) and popup/content script → service
 * worker (chrome.runtime.sendMessage, classified by lib/sender.ts). Every
 * answer is a Result (src/shared/result.ts); nothing throws across.
 */
import type { DiscoveryViolation, ExtractMatch, SharedTab, WebMcpSupport } from '../../../src/shared/types';
import type { RawTool } from './inspect';
import type { FormBinding } from '../../../src/shared/form';
import type { SnapshotPart } from '../../../src/shared/snapshot';
import type { Condition } from '../../../src/shared/semantic-conditions';

// ---- service worker → content modules ----------------------------------------------
//
// Each content module (extension/src/content/<module>.ts, built to content/<module>.js)
// answers only the message types prefixed `echo:<module>:`; a message for another
// module is left unanswered by it.

/** The exact URLs a content module reads in its document (`window.top.location.href`, `location.href`). */
export interface PageUrlsValue {
  tab: string;
  frame: string;
}

/** Messages of the `webmcp` content module (content/webmcp.ts). */
export type ToWebMcp =
  /** List this document's tools (limits applied, see FrameReport). */
  | { type: 'echo:webmcp:discover'; /** Only the tools of this exact name (the rediscovery right before dispatch). */ name?: string }
  /** The exact tab and frame URLs now (answers PageUrlsValue, or `navigated` when the top is not readable). */
  | { type: 'echo:webmcp:urls' }
  /**
   * Dispatch one tool: re-read getTools(), require exactly one `toolName` whose canonical descriptor is
   * `expected`, and, in the same task, that the URLs still equal `urls` (checked by hash in the worker); then executeTool.
   */
  | {
      type: 'echo:webmcp:execute';
      requestId: string;
      toolName: string;
      expected: string;
      urls: PageUrlsValue;
      args: Record<string, unknown>;
      /** A declarative tool's bound form (src/shared/form.ts): the form read in the acting task must equal it, else `form-changed`. */
      form?: FormBinding;
      /** With `form`: the exact action URL whose hash `form.actionHash` is (the worker's preimage). */
      formAction?: string;
      /** A form without toolautosubmit: wait this long for the person's submit (ms), then abort, put the fields back, and answer `form-wait-timeout`. */
      waitMs?: number;
    }
  /** Read the form of declarative tool `toolName` now (answers lib/form-read.ts FormNow, the exact action; `tool-missing`, `tool-ambiguous`, `form-too-large`). */
  | { type: 'echo:webmcp:form'; toolName: string }
  /** Abort the executeTool signal of `requestId`. */
  | { type: 'echo:webmcp:abort'; requestId: string }
  /** The tab is no longer shared: stop watching for tool changes. */
  | { type: 'echo:webmcp:detach' }
  /** Page lint: this document's DOM facts (answers src/shared/page-lint.ts PageLintFacts, lib/page-lint-facts.ts). */
  | { type: 'echo:webmcp:lint' };

/** A form read synchronously in its document (lib/form-read.ts): its exact action, method, `toolautosubmit`, and submitted values by name (what `echo:webmcp:form` answers). */
export interface FormNow {
  action: string;
  method: string;
  autosubmit: boolean;
  fields: Record<string, string[]>;
}

/** What one frame's content script reports for `echo:webmcp:discover`. */
export interface FrameReport {
  /** `self.origin` of the document (its real origin, opaque `"null"` for sandboxed frames). */
  origin: string;
  /** The exact URLs when the tools were listed (null when the top document is not readable from here). */
  urls: PageUrlsValue | null;
  support: WebMcpSupport;
  /** At most LIMITS.maxToolsPerFrame tools, each within the limits. */
  tools: RawTool[];
  violations: Omit<DiscoveryViolation, 'frameId'>[];
}

/** What `echo:webmcp:execute` answers inside its Result. */
export interface ExecuteValue {
  /** The string `executeTool` resolved to (null when the tool returned nothing), cut to LIMITS.maxRedactInputBytes (4 MiB) UTF-8 bytes, `truncated` then set; the worker redacts, then bounds it. */
  result: string | null;
  truncated: boolean;
  elapsedMs: number;
  /** UTF-8 bytes of the whole result before any cut (0 for none). */
  resultBytes?: number;
}

/**
 * Error codes of `echo:webmcp:execute`: `aborted` (cancelled through the signal),
 * `tool-failed` (the page's tool threw or the browser failed it), `tool-missing`,
 * `tool-ambiguous`, `descriptor-changed`, `tool-blocked`, `navigated` (the URLs
 * differ from the checked ones; these last checks run again in the same task as
 * the dispatch), `no-webmcp`, `form-changed` (a form tool's form is not the approved one:
 * another action, method, `toolautosubmit`, or other values to submit).
 */
export type ExecuteErrorCode =
  | 'aborted'
  | 'tool-failed'
  | 'tool-missing'
  | 'tool-ambiguous'
  | 'descriptor-changed'
  | 'tool-blocked'
  | 'navigated'
  | 'no-webmcp'
  | 'form-changed'
  /** A waiting form the person did not submit within `waitMs` (no submit event came); its fields were put back when possible. */
  | 'form-wait-timeout'
  /** A waiting form the page cancelled (form.reset(), docs/browser-facts.md); no submit event came. */
  | 'form-cancelled'
  /** A submit event came but executeTool did not settle (the wait ended, or it was aborted): whether it took effect is unknown. */
  | 'submitted-no-answer'
  /** The page's submit handler called preventDefault() without respondWith(): the handler ran; the page gave no answer. */
  | 'handled-without-answer';

/** Messages of the `page-info` content module (content/page-info.ts). */
export type ToPageInfo = { type: 'echo:page-info:read' };

/** What `echo:page-info:read` answers inside its Result: read in the page, untrusted. */
export interface PageInfoReport {
  /** `location.href`, exact (the worker strips it). */
  url: string;
  /** `document.title` now. */
  title: string;
  /** `self.origin`. */
  origin: string;
  /** `document.modelContext` with a `getTools` function. */
  webmcp: boolean;
}

/** What the sign in a shared tab shows (content/sign.ts): nothing, "shared", or "an agent action is running". */
export type SignState = 'hidden' | 'shared' | 'running';

/**
 * Messages of the `sign` content module (content/sign.ts), top frame of a shared tab only.
 * Each answers `{state}` (the sign's state after it): `ping` is the worker's liveness probe.
 */
export type ToSign =
  | { type: 'echo:sign:show'; state: 'shared' | 'running' }
  | { type: 'echo:sign:hide' }
  | { type: 'echo:sign:ping' };

// ---- content script / popup → service worker ------------------------------------------

/** From the webmcp content module: its document's tool list changed. */
export type FromContent = { type: 'echo:webmcp:tools-changed' };

export type FromPopup =
  | { type: 'popup:state' }
  | { type: 'popup:share'; tabId: number }
  | { type: 'popup:unshare'; tabId: number }
  | { type: 'popup:unpair' }
  /** Reconnect now (after an error that waits for the person). */
  | { type: 'popup:retry' }
  /** The person's answer to the pairing code, when the link asks the popup too. */
  | { type: 'popup:confirm-pairing'; accept: boolean };

/** The link as the popup shows it. */
export interface PopupLinkState {
  /** `connected` only while heartbeats are answered (the link module decides). */
  state: 'not-installed' | 'connecting' | 'console-not-running' | 'awaiting-pairing' | 'connected' | 'disconnected' | 'version-mismatch' | 'refused' | 'stopped' | 'unknown';
  paired: boolean;
  /** The pairing was confirmed in the console only (made before the popup asked too): pair again to let the console share tabs. */
  unconfirmedPairing?: boolean;
  pairingCode?: string;
  /** The link waits for the person's answer in the popup as well. */
  awaitingLocalConfirmation?: boolean;
  /** ms since the epoch of the last answered heartbeat. */
  lastHeartbeatAt?: number;
  message?: string;
  /** Something only the person can fix (src/shared/ipc.ts LinkProblem): update a side, or pair again. */
  problem?: { code: 'extension-outdated' | 'console-outdated' | 'pair-again'; message: string };
}

/** What `popup:state` answers. */
export interface PopupState {
  link: PopupLinkState;
  activeTab: { tabId: number; title: string; url: string; shared: boolean; shareable: boolean; reason?: string } | null;
  sharedTabs: SharedTab[];
  extensionVersion: string;
}

/** Messages of the `semantic` content module (content/semantic.ts). */
export type ToSemantic = {
  type: 'echo:semantic:snapshot';
  /** Budget in UTF-8 bytes (src/shared/snapshot.ts SNAPSHOT_BYTES). */
  maxBytes: number;
  /** The document's tag, when the worker hands one out (only a document without a tag takes it). */
  tag?: string;
  /** Snapshot only the subtree of this ref (when it is this document's). */
  ref?: string;
};

/**
 * The semantic reads beyond the snapshot (lib/semantic-reads.ts; docs/semantic-reads.md):
 * `extract` the view of a ref's or selector's elements; `check` a condition once
 * (`timeoutMs` 0: page_verify) or until it holds (page_wait).
 */
export type ToSemanticRead =
  | { type: 'echo:semantic:extract'; ref?: string; selector?: string; maxBytes: number; tag?: string }
  | { type: 'echo:semantic:check'; ref?: string; selector?: string; condition: Condition; timeoutMs: number; startUrl?: string };

/** One element `extract` read (src/shared/types.ts). */
export type { ExtractMatch } from '../../../src/shared/types';

/** What `echo:semantic:snapshot` answers inside its Result (page text in `parts` is UNTRUSTED and already redacted). */
export type SemanticReport =
  /** The document has no tag yet and none was given: ask again with one. */
  | { kind: 'need-tag' }
  /** The ref's tag is not this document's. */
  | { kind: 'not-mine'; tag: string }
  | {
      kind: 'snapshot';
      tag: string;
      /** The document's frame key (content/semantic.ts): its parent's parts name it. */
      key: string;
      parts: SnapshotPart[];
      truncated: boolean;
      refs: number;
      /** `self.origin` (an opaque origin is `"null"`). */
      origin: string;
      /** `location.href`, exact (the worker strips it). */
      url: string;
    }
  | { kind: 'extract'; matches: ExtractMatch[]; count: number; more: boolean; truncated: boolean; origin: string; url: string }
  /** `evidence` holds only view facts (redacted); `elapsedMs` since the check began. */
  | { kind: 'check'; met: boolean; evidence: Record<string, unknown>; elapsedMs: number; origin: string; url: string };
