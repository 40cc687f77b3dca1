/**
 * The contract of the link between the console and the extension (CONVENTIONS.md §1).
 *
 * Path: extension service worker ⇄ Chrome native messaging (stdio, 4-byte
 * little-endian length + UTF-8 JSON) ⇄ native host ⇄ local socket (same framing)
 * ⇄ console bridge (src/main/core/bridge). Every message is validated on receipt
 * on both sides (`validateLinkMessage`), bounded by LIMITS.maxMessageBytes, and
 * carries a `type`. The handshake checks PROTOCOL_VERSION first.
 *
 * Sequence:
 *   ext → hello{protocolVersion, extensionId, pairingId|null}
 *   console → hello-ack{protocolVersion, paired} | error{code:'version-mismatch'}
 *   unpaired: ext → pair-begin{publicKey, nonce}; console → pair-offer{publicKey, nonce};
 *             both derive the same short code (shown in popup and console);
 *             the person confirms in the console → pair-result{accepted, pairingId}
 *   paired:   ext → auth-begin{pairingId, nonce}; console → auth-challenge{nonce, proof};
 *             ext checks proof → auth-response{proof}; console checks → auth-ok
 *   then:     console → request{id, request}; ext → response{id, result};
 *             ext → event{event}; ping/pong both ways every heartbeat.
 */
import type { Result } from './result';
import type { DiscoveryResult, Grant, InvocationResult, SharedTab } from './types';

/** Bumped on any incompatible change; both ends refuse a different version at the handshake. */
export const PROTOCOL_VERSION = 1;

/** The native messaging host name (Chrome: lowercase letters, digits, underscores and dots). */
export const NATIVE_HOST_NAME = 'dev.echo_console.link';

// ---- requests the console sends to the extension --------------------------------

export type ConsoleRequest =
  /** Shared tabs only. */
  | { op: 'list-tabs' }
  /** Every normal tab that could be shared (title, URL stripped), for the console's share picker. */
  | { op: 'list-shareable-tabs' }
  | { op: 'share-tab'; tabId: number }
  | { op: 'unshare-tab'; tabId: number }
  | { op: 'discover'; tabId: number }
  | {
      op: 'invoke';
      tabId: number;
      frameId: number;
      documentId: string;
      toolName: string;
      descriptorHash: string;
      /** Exactly the object passed to executeTool; must hash to grant.argumentsHash. */
      arguments: Record<string, unknown>;
      grant: Grant;
      /** After dispatch began, this long without a settle is `outcome-unknown` (ms). */
      timeoutMs: number;
    }
  /** Abort a dispatch in progress (its executeTool signal) or drop a queued one. */
  | { op: 'cancel'; requestId: string };

/** What each request op answers with (inside `Result`). */
export interface ConsoleRequestValue {
  'list-tabs': SharedTab[];
  'list-shareable-tabs': SharedTab[];
  'share-tab': SharedTab;
  'unshare-tab': null;
  discover: DiscoveryResult;
  invoke: InvocationResult;
  cancel: { cancelled: boolean };
}

// ---- events the extension sends unasked ----------------------------------------

export type ExtensionEvent =
  | { kind: 'tabs-changed'; tabs: SharedTab[] }
  | { kind: 'navigated'; tabId: number; frameId: number; documentId: string; url: string }
  | { kind: 'tools-changed'; tabId: number; frameId: number; documentId: string };

// ---- the messages on the wire ----------------------------------------------------

export type ExtensionToConsole =
  | { type: 'hello'; protocolVersion: number; extensionId: string; extensionVersion: string; pairingId: string | null }
  /** `publicKey`: base64 of a raw uncompressed P-256 ECDH public key; `nonce`: 32 hex chars. */
  | { type: 'pair-begin'; publicKey: string; nonce: string }
  | { type: 'auth-begin'; pairingId: string; nonce: string }
  | { type: 'auth-response'; proof: string }
  | { type: 'response'; id: string; result: Result<unknown> }
  | { type: 'event'; event: ExtensionEvent }
  | { type: 'unpair' }
  | { type: 'ping'; seq: number }
  | { type: 'pong'; seq: number };

export type ConsoleToExtension =
  | { type: 'hello-ack'; protocolVersion: number; consoleVersion: string; paired: boolean }
  | { type: 'pair-offer'; publicKey: string; nonce: string }
  | { type: 'pair-result'; accepted: boolean; pairingId?: string }
  | { type: 'auth-challenge'; nonce: string; proof: string }
  | { type: 'auth-ok' }
  | { type: 'request'; id: string; request: ConsoleRequest }
  /** The console dropped the pairing; the extension forgets its key. */
  | { type: 'unpaired' }
  | { type: 'ping'; seq: number }
  | { type: 'pong'; seq: number }
  /** A fatal or protocol error; `code` e.g. 'version-mismatch', 'not-paired', 'auth-failed', 'bad-message'. */
  | { type: 'error'; code: string; message: string };

/** Messages the native host itself writes to the extension (not relayed from the console). */
export type HostToExtension = { type: 'host-error'; code: 'console-not-running' | 'socket-error' | 'frame-too-large'; message: string };

/** The first frame the native host sends to the console over the socket: who Chrome said is calling. */
export type HostToConsole = { type: 'host-hello'; callerOrigin: string; hostVersion: string; pid: number };
