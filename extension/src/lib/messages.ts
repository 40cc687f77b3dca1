/**
 * The contract of the extension's internal messages (docs/design.md, "Conventions" §1):
 * service worker ⇄ content script (chrome.tabs.sendMessage, addressed to one
 * document with `{frameId, documentId}`) and popup/content script → service
 * worker (chrome.runtime.sendMessage, classified by lib/sender.ts). Every
 * answer is a Result (src/shared/result.ts); nothing throws across.
 */
import type { DiscoveryViolation, SharedTab, WebMcpSupport } from '../../../src/shared/types';
import type { RawTool } from './inspect';

// ---- service worker → content script -----------------------------------------------

export type ToContent =
  /** List this document's tools (limits applied, see FrameReport). */
  | { type: 'echo:discover'; /** Only the tools of this exact name (the rediscovery right before dispatch). */ name?: string }
  /** Dispatch one tool: re-read getTools(), require exactly one `toolName` whose canonical descriptor is `expected`, then executeTool. */
  | { type: 'echo:execute'; requestId: string; toolName: string; expected: string; args: Record<string, unknown> }
  /** Abort the executeTool signal of `requestId`. */
  | { type: 'echo:abort'; requestId: string }
  /** The tab is no longer shared: stop watching for tool changes. */
  | { type: 'echo:detach' };

/** What one frame's content script reports for `echo:discover`. */
export interface FrameReport {
  /** `self.origin` of the document (its real origin, opaque `"null"` for sandboxed frames). */
  origin: string;
  support: WebMcpSupport;
  /** At most LIMITS.maxToolsPerFrame tools, each within the limits. */
  tools: RawTool[];
  violations: Omit<DiscoveryViolation, 'frameId'>[];
}

/** What `echo:execute` answers inside its Result. */
export interface ExecuteValue {
  /** The string `executeTool` resolved to (null when the tool returned nothing), capped at 2 × LIMITS.maxResultBytes. */
  result: string | null;
  truncated: boolean;
  elapsedMs: number;
}

/**
 * Error codes of `echo:execute`: `aborted` (cancelled through the signal),
 * `tool-failed` (the page's tool threw or the browser failed it), `tool-missing`,
 * `tool-ambiguous`, `descriptor-changed`, `tool-blocked` (the last checks again
 * in the same task as the dispatch), `no-webmcp`.
 */
export type ExecuteErrorCode = 'aborted' | 'tool-failed' | 'tool-missing' | 'tool-ambiguous' | 'descriptor-changed' | 'tool-blocked' | 'no-webmcp';

// ---- content script / popup → service worker ------------------------------------------

export type FromContent = { type: 'echo:tools-changed' };

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
