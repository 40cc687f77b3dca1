/**
 * The contract of the link between the console and the extension (docs/design.md, "Conventions" §1).
 * The checks below are its schemas, built from the validators of ./checks.ts.
 *
 * Path: extension service worker ⇄ Chrome native messaging (stdio, 4-byte
 * little-endian length + UTF-8 JSON, src/shared/framing.ts) ⇄ native host
 * (src/native-host) ⇄ local socket (same framing) ⇄ console bridge
 * (src/main/core/bridge). Every message is validated on receipt on both sides
 * (`validateExtensionToConsole`, `validateConsoleToExtension`, hand-written:
 * the extension's CSP forbids the code generation ajv needs), bounded by
 * LIMITS.maxMessageBytes, and carries a `type`. Unknown keys in a message are
 * refused (PROTOCOL_VERSION covers changes); inside domain values
 * (SharedTab, DiscoveryResult, ...) unknown keys are tolerated.
 *
 * Sequence (docs/link.md has the full picture and the crypto):
 *   host → console: host-hello{callerOrigin, hostVersion, pid}   (written by the native host)
 *   ext → hello{protocolVersion, extensionId, extensionVersion, pairingId|null}
 *   console → hello-ack{protocolVersion, consoleVersion, paired} | error{code:'version-mismatch'}
 *   unpaired (or paired:false): ext → pair-begin{publicKey, commitment};
 *             console → pair-offer{publicKey, nonce}; ext → pair-reveal{nonce};
 *             both derive the same pairing key and short code (shown in popup and console);
 *             the person confirms in the console → pair-result{accepted, pairingId};
 *             the person confirms in the popup too (issue 9 item 1; the peer's word alone
 *             is never the person's); then the extension goes on to auth-begin with the new key.
 *   paired:   ext → auth-begin{pairingId, nonce}; console → auth-challenge{nonce, proof};
 *             ext checks the console's proof first → auth-response{proof}; console checks → auth-ok
 *   then:     console → request{id, request}; ext → response{id, result}
 *             (request ops: list-tabs, list-shareable-tabs, share-tab, unshare-tab,
 *             discover, read{faculty, operation}, dispatch{faculty, operation, grant}, cancel,
 *             witness-checkpoint{checkpoint}, witness-read, reload-tab{tabId},
 *             console-state{pending, developerMode});
 *             ext → event{event}; ping/pong both ways every heartbeat;
 *             unpair (ext) / unpaired (console) end the pairing on both sides.
 *   either side → error{code, message} for a refused or malformed message.
 */
import { also, arr, bool, checkProblem, int, isObj, json, nul, nullable, num, obj, oneOf, opt, str, tagged, type Check } from './checks';
import { LIMITS, utf8Bytes } from './limits';
import { INVOCATION_OUTCOMES } from './receipt';
import { checkpointShapeProblem, type SignedCheckpoint } from './checkpoint';
import type { Result } from './result';
import { MAX_OPENED_TABS_LISTED, type DiscoveryResult, type Grant, type InvocationResult, type SharedTab } from './types';

/**
 * Bumped on any incompatible change; both ends refuse a different version at the handshake.
 * v2: the grant changes shape (src/shared/grant.ts), and a `version-mismatch` error names
 * the sender's version (`protocolVersion`) so the other side can say which one to update.
 */
export const PROTOCOL_VERSION = 2;

/** The native messaging host name (Chrome: lowercase letters, digits, underscores and dots). */
export const NATIVE_HOST_NAME = 'dev.echo_console.link';

// ---- requests the console sends to the extension --------------------------------

/** Where a faculty acts: one document of one frame of one tab (Chrome's tabId, frameId, documentId). */
export interface DispatchTarget {
  tabId: number;
  frameId: number;
  documentId: string;
}

export type ConsoleRequest =
  /** Shared tabs only. */
  | { op: 'list-tabs' }
  /** Every normal tab that could be shared (title, URL stripped), for the console's share picker. */
  | { op: 'list-shareable-tabs' }
  | { op: 'share-tab'; tabId: number }
  | { op: 'unshare-tab'; tabId: number }
  | { op: 'discover'; tabId: number }
  /**
   * A read faculty's operation in one shared tab (e.g. `page-info`/`info`): no
   * grant, no page change. The extension's faculty registry answers it; the
   * value's shape is the faculty's (checked by the console-side faculty).
   */
  | { op: 'read'; faculty: string; operation: string; tabId: number; arguments: Record<string, unknown> }
  /**
   * One reviewed action of any faculty, under its one-use grant (docs/design.md,
   * "Trust rules"). `subject` is the faculty's own description of what it acts on
   * (WebMCP: `{toolName, descriptorHash}`); the faculty derives the subject hash
   * from it, which must equal `grant.subjectHash`. Every other bound field is
   * compared with the grant field of the same name.
   */
  | {
      op: 'dispatch';
      faculty: string;
      operation: string;
      target: DispatchTarget;
      subject: Record<string, unknown>;
      /** Exactly what the faculty acts with; must hash to grant.argumentsHash. */
      arguments: Record<string, unknown>;
      grant: Grant;
      /** After dispatch began, this long without a settle is `outcome-unknown` (ms). */
      timeoutMs: number;
    }
  /** Abort a dispatch in progress (its executeTool signal) or drop a queued one. */
  | { op: 'cancel'; requestId: string }
  /**
   * The ledger's newest signed checkpoint, for the extension to keep as a witness
   * (docs/ledger.md, "Signed checkpoints"). Added without a version bump: an older
   * extension refuses the unknown op (bad-message); the request times out and the console's verify says the witness could not be asked.
   */
  | { op: 'witness-checkpoint'; checkpoint: SignedCheckpoint }
  /** The checkpoint the extension keeps as a witness (null: none). */
  | { op: 'witness-read' }
  /**
   * Reload one SHARED tab (chrome.tabs.reload): the person's choice in the console after a Stop or
   * a raw-JavaScript run left an outcome unknown (docs/stop.md; docs/raw-javascript.md). Refused
   * `tab-not-shared` for any other tab. Added without a version bump, as `witness-checkpoint`: an
   * older extension refuses the unknown op and the console says so.
   */
  | { op: 'reload-tab'; tabId: number }
  /**
   * What the extension's action badge shows (issue 12 item 7; docs/stop.md): the count of
   * approvals waiting for the person, and whether developer mode is on (a red badge). Sent at
   * each change and at each (re)connection. Added without a version bump (an older extension
   * refuses the unknown op; its badge then shows the share state only).
   */
  | { op: 'console-state'; pending: number; developerMode: boolean };

/** What each request op answers with (inside `Result`). */
export interface ConsoleRequestValue {
  'list-tabs': SharedTab[];
  'list-shareable-tabs': SharedTab[];
  'share-tab': SharedTab;
  'unshare-tab': null;
  discover: DiscoveryResult;
  /** The read faculty's value: plain JSON, its shape checked by the console-side faculty. */
  read: unknown;
  dispatch: InvocationResult;
  cancel: { cancelled: boolean };
  /** `kept: false` with `reason` when the witness holds a newer checkpoint, or one of another key, or the signature fails. */
  'witness-checkpoint': { kept: boolean; reason?: string };
  'witness-read': SignedCheckpoint | null;
  'reload-tab': null;
  'console-state': null;
}

// ---- events the extension sends unasked ----------------------------------------

/**
 * Why a share ended (the extension's word, for the `tab-unshared` receipt's actor and reason):
 * `person` (the popup), `console` (the console's `unshare-tab`), or on the extension's own
 * authority `tab-closed`, `left-origin` (the tab went to another origin), `not-shareable`
 * (it went to a page that may never be shared).
 */
export const UNSHARE_REASONS = ['person', 'console', 'tab-closed', 'left-origin', 'not-shareable'] as const;
export type UnshareReason = (typeof UNSHARE_REASONS)[number];

export type ExtensionEvent =
  /** `ended`: the shares that ended since the last list, with why (absent from older extensions). */
  | { kind: 'tabs-changed'; tabs: SharedTab[]; ended?: Array<{ tabId: number; reason: UnshareReason }> }
  | { kind: 'navigated'; tabId: number; frameId: number; documentId: string; url: string }
  | { kind: 'tools-changed'; tabId: number; frameId: number; documentId: string };

// ---- the messages on the wire ----------------------------------------------------

export type ExtensionToConsole =
  | { type: 'hello'; protocolVersion: number; extensionId: string; extensionVersion: string; pairingId: string | null }
  /**
   * `publicKey`: base64 of a raw uncompressed P-256 ECDH public key (65 bytes);
   * `commitment`: SHA-256 hex of the extension's pairing transcript part, revealed
   * by `pair-reveal` only after the console answered (stops a man in the middle
   * from grinding the 6-digit code; src/shared/pairing-crypto.ts).
   */
  | { type: 'pair-begin'; publicKey: string; commitment: string }
  /** The extension's pairing nonce (32 hex chars), sent after `pair-offer`. */
  | { type: 'pair-reveal'; nonce: string }
  | { type: 'auth-begin'; pairingId: string; nonce: string }
  | { type: 'auth-response'; proof: string }
  | { type: 'response'; id: string; result: Result<unknown> }
  | { type: 'event'; event: ExtensionEvent }
  | { type: 'unpair' }
  | { type: 'ping'; seq: number }
  | { type: 'pong'; seq: number }
  /**
   * The extension refused a console message (`bad-message`, `auth-failed`, `version-mismatch`).
   * `protocolVersion`: the sender's version, on `version-mismatch` (since v2).
   */
  | { type: 'error'; code: string; message: string; protocolVersion?: number };

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
  /**
   * A fatal or protocol error. Codes: 'version-mismatch', 'bad-message', 'auth-failed',
   * 'not-paired', 'already-connected', 'origin-not-allowed', 'pairing-timeout', 'handshake-timeout'.
   * `protocolVersion`: the console's version, on `version-mismatch` (since v2; a v1 console never
   * sends it, which is how the extension knows that console is the older one).
   */
  | { type: 'error'; code: string; message: string; protocolVersion?: number };

/** Messages the native host itself writes to the extension (not relayed from the console). */
/** `console-untrusted`: the socket, its folder or the process serving it is not this user's (issue 9 item 1, src/native-host/peer-check.ts). */
export type HostToExtension = { type: 'host-error'; code: 'console-not-running' | 'socket-error' | 'frame-too-large' | 'console-untrusted'; message: string };

/** The first frame the native host sends to the console over the socket: who Chrome said is calling. */
export type HostToConsole = { type: 'host-hello'; callerOrigin: string; hostVersion: string; pid: number };

/** Field formats shared by the validators and the crypto (exported for tests and the link code). */
export const FORMATS = {
  /** 16 random bytes as lowercase hex: nonces, pairing ids. */
  hex32: /^[0-9a-f]{32}$/,
  /** SHA-256 / HMAC-SHA-256 as lowercase hex: hashes, proofs, commitments, MACs. */
  hex64: /^[0-9a-f]{64}$/,
  /** base64 of a 65-byte raw uncompressed P-256 public key. */
  p256PublicKey: /^[A-Za-z0-9+/]{87}=$/,
  /** A Chrome extension ID: 32 letters a–p. */
  extensionId: /^[a-p]{32}$/,
  /** A request id chosen by the console. */
  requestId: /^[A-Za-z0-9_-]{1,64}$/,
  /** A machine-readable error code. */
  errorCode: /^[A-Za-z0-9_.-]{1,64}$/,
  /** A faculty id (receipt Faculty) or one of its operations. */
  facultyName: /^[a-z0-9-]{1,64}$/,
  /** A version string (extension manifest version, console semver). */
  version: /^[0-9A-Za-z.+-]{1,64}$/,
} as const;

const hex32 = str({ pattern: FORMATS.hex32, what: '32 lowercase hex characters' });
const hex64 = str({ pattern: FORMATS.hex64, what: '64 lowercase hex characters' });
const publicKey = str({ pattern: FORMATS.p256PublicKey, what: 'base64 of a 65-byte P-256 public key' });
const requestId = str({ pattern: FORMATS.requestId, what: 'a request id ([A-Za-z0-9_-]{1,64})' });
const errorCode = str({ pattern: FORMATS.errorCode, what: 'an error code' });
const errorMessage = str({ max: 4096 });
const version = str({ pattern: FORMATS.version, what: 'a version string' });
const seq = int();
const tabId = int(0, 2 ** 31 - 1);
const frameId = int(0, 2 ** 31 - 1);
const documentId = str({ min: 1, max: 128 });
// Page-derived text (titles, URLs, descriptions) is bounded by the message cap;
// its own limits are discovery's policy (LIMITS), applied where it is produced.
const text = str();
const errorInfo = obj({ code: errorCode, message: errorMessage, detail: opt(json()) }, false);

const argumentsObject: Check = (v, p) => {
  if (!isObj(v)) return `${p}: expected an object`;
  const e = json(LIMITS.maxArgumentsDepth)(v, p);
  if (e) return e;
  const bytes = utf8Bytes(JSON.stringify(v));
  return bytes > LIMITS.maxArgumentsBytes ? `${p}: ${bytes} bytes exceed the ${LIMITS.maxArgumentsBytes}-byte limit` : null;
};

const facultyName = str({ pattern: FORMATS.facultyName, what: 'a faculty or operation name ([a-z0-9-]{1,64})' });
/** A SignedCheckpoint, strictly (src/shared/checkpoint.ts); the signature is the receiver's check. */
const signedCheckpoint: Check = (v, p) => checkpointShapeProblem(v, p);

/**
 * Every field of a Grant (src/shared/types.ts), strictly: a grant with extra or
 * missing fields is not ours. The ONE grant shape check: the console checks it
 * before signing (grant.ts), the extension on receipt (with the message) and
 * again before the MAC (lib/grant-checks.ts).
 */
export const validateGrantShape: Check = obj({
  requestId,
  faculty: facultyName,
  operation: facultyName,
  tabId,
  frameId,
  documentId,
  origin: str({ min: 1, max: 2048 }),
  urlHash: hex64,
  subjectHash: hex64,
  argumentsHash: hex64,
  nonce: hex32,
  expiresAt: int(),
  mac: hex64,
});

const consoleRequest: Check = tagged('op', {
  'list-tabs': obj({ op: oneOf('list-tabs') }),
  'list-shareable-tabs': obj({ op: oneOf('list-shareable-tabs') }),
  'share-tab': obj({ op: oneOf('share-tab'), tabId }),
  'unshare-tab': obj({ op: oneOf('unshare-tab'), tabId }),
  'reload-tab': obj({ op: oneOf('reload-tab'), tabId }),
  discover: obj({ op: oneOf('discover'), tabId }),
  read: obj({ op: oneOf('read'), faculty: facultyName, operation: facultyName, tabId, arguments: argumentsObject }),
  dispatch: obj({
    op: oneOf('dispatch'),
    faculty: facultyName,
    operation: facultyName,
    target: obj({ tabId, frameId, documentId }),
    subject: also(json(8), (v, p) => (isObj(v) ? null : `${p}: expected an object`)),
    arguments: argumentsObject,
    grant: validateGrantShape,
    timeoutMs: int(1, 10 * 60_000),
  }),
  cancel: obj({ op: oneOf('cancel'), requestId }),
  'witness-checkpoint': obj({ op: oneOf('witness-checkpoint'), checkpoint: signedCheckpoint }),
  'witness-read': obj({ op: oneOf('witness-read') }),
  'console-state': obj({ op: oneOf('console-state'), pending: int(0, 1_000_000), developerMode: bool }),
});

const sharedTab = obj(
  { tabId, windowId: int(-1, 2 ** 31 - 1), title: text, url: text, origin: text, documentId: text, sharedAt: int() },
  false,
);

const extensionEvent: Check = tagged('kind', {
  'tabs-changed': obj({ kind: oneOf('tabs-changed'), tabs: arr(sharedTab, 10_000), ended: opt(arr(obj({ tabId, reason: oneOf(...UNSHARE_REASONS) }), 10_000)) }),
  navigated: obj({ kind: oneOf('navigated'), tabId, frameId, documentId, url: text }),
  'tools-changed': obj({ kind: oneOf('tools-changed'), tabId, frameId, documentId }),
});

const resultEnvelope: Check = (v, p) => {
  if (!isObj(v)) return `${p}: expected a result object`;
  if (v.ok === true) return obj({ ok: bool, value: json() })(v, p);
  if (v.ok === false) return obj({ ok: bool, error: errorInfo })(v, p);
  return `${p}.ok: expected true or false`;
};

const extensionToConsole: Check = tagged('type', {
  hello: obj({
    type: oneOf('hello'),
    protocolVersion: int(0, 1_000_000),
    extensionId: str({ pattern: FORMATS.extensionId, what: 'a Chrome extension ID' }),
    extensionVersion: version,
    pairingId: nullable(hex32),
  }),
  'pair-begin': obj({ type: oneOf('pair-begin'), publicKey, commitment: hex64 }),
  'pair-reveal': obj({ type: oneOf('pair-reveal'), nonce: hex32 }),
  'auth-begin': obj({ type: oneOf('auth-begin'), pairingId: hex32, nonce: hex32 }),
  'auth-response': obj({ type: oneOf('auth-response'), proof: hex64 }),
  response: obj({ type: oneOf('response'), id: requestId, result: resultEnvelope }),
  event: obj({ type: oneOf('event'), event: extensionEvent }),
  unpair: obj({ type: oneOf('unpair') }),
  ping: obj({ type: oneOf('ping'), seq }),
  pong: obj({ type: oneOf('pong'), seq }),
  error: obj({ type: oneOf('error'), code: errorCode, message: errorMessage, protocolVersion: opt(int(0, 1_000_000)) }),
});

const consoleToExtension: Check = tagged('type', {
  'hello-ack': obj({ type: oneOf('hello-ack'), protocolVersion: int(0, 1_000_000), consoleVersion: version, paired: bool }),
  'pair-offer': obj({ type: oneOf('pair-offer'), publicKey, nonce: hex32 }),
  'pair-result': also(obj({ type: oneOf('pair-result'), accepted: bool, pairingId: opt(hex32) }), (v, p) =>
    v.accepted === true && v.pairingId === undefined ? `${p}.pairingId: required when accepted` : null,
  ),
  'auth-challenge': obj({ type: oneOf('auth-challenge'), nonce: hex32, proof: hex64 }),
  'auth-ok': obj({ type: oneOf('auth-ok') }),
  request: obj({ type: oneOf('request'), id: requestId, request: consoleRequest }),
  unpaired: obj({ type: oneOf('unpaired') }),
  ping: obj({ type: oneOf('ping'), seq }),
  pong: obj({ type: oneOf('pong'), seq }),
  error: obj({ type: oneOf('error'), code: errorCode, message: errorMessage, protocolVersion: opt(int(0, 1_000_000)) }),
});

const hostToExtension: Check = tagged('type', {
  'host-error': obj({
    type: oneOf('host-error'),
    code: oneOf('console-not-running', 'socket-error', 'frame-too-large', 'console-untrusted'),
    message: errorMessage,
  }),
});

const hostToConsole: Check = tagged('type', {
  'host-hello': obj({ type: oneOf('host-hello'), callerOrigin: str({ min: 1, max: 256 }), hostVersion: version, pid: int() }),
});

const toolDescriptor = obj(
  {
    name: text,
    title: text,
    description: text,
    inputSchema: json(),
    annotations: opt(obj({ readOnlyHint: opt(bool), untrustedContentHint: opt(bool), consequentialHint: opt(bool), debugging: opt(bool) }, false)),
    origin: text,
    descriptorHash: str({ max: 64 }),
    tabId,
    frameId,
    documentId: text,
    frameUrl: opt(text),
    tabUrl: opt(text),
    urlHash: opt(hex64),
    kind: oneOf('imperative', 'declarative'),
    blocked: opt(str({ max: 64 })),
    flags: opt(arr(str({ max: 64 }), 64)),
  },
  false,
);
const discoveryResult = obj(
  {
    tabId,
    origin: text,
    url: text,
    documentId: text,
    support: obj(
      {
        modelContext: bool,
        legacyApi: oneOf('navigator.modelContext', 'navigator.modelContextTesting', null),
        argumentForm: oneOf('object', 'json-string', null),
      },
      false,
    ),
    tools: arr(toolDescriptor, 4096),
    violations: arr(obj({ frameId, reason: str({ max: 128 }), name: opt(text), detail: opt(text) }, false), 4096),
  },
  false,
);
const invocationResult = obj(
  {
    outcome: oneOf(...INVOCATION_OUTCOMES),
    result: opt(nullable(text)),
    truncated: opt(bool),
    redacted: opt(bool),
    refusal: opt(str({ max: 64 })),
    error: opt(obj({ code: errorCode, message: errorMessage }, false)),
    elapsedMs: opt(num),
    resultBytes: opt(int(0, Number.MAX_SAFE_INTEGER)),
    navigatedTo: opt(text),
    effects: opt(
      obj(
        {
          openedTabs: opt(arr(obj({ url: text }, false), MAX_OPENED_TABS_LISTED)),
          openedTabsOmitted: opt(int()),
          pageUnresponsive: opt(bool),
        },
        false,
      ),
    ),
    formRestored: opt(bool),
    note: opt(str({ max: 64 })),
  },
  false,
);

const requestValue: { [K in keyof ConsoleRequestValue]: Check } = {
  'list-tabs': arr(sharedTab, 10_000),
  'list-shareable-tabs': arr(sharedTab, 10_000),
  'share-tab': sharedTab,
  'unshare-tab': nul,
  discover: discoveryResult,
  read: json(),
  dispatch: invocationResult,
  cancel: obj({ cancelled: bool }, false),
  'witness-checkpoint': obj({ kept: bool, reason: opt(str({ max: 512 })) }, false),
  'witness-read': nullable(signedCheckpoint),
  'reload-tab': nul,
  'console-state': nul,
};

function run<T>(check: Check, x: unknown, root: string): Result<T> {
  // checkProblem never throws: a validator must never take a side down (e.g. a getter on a hostile object).
  const e = checkProblem(check, x, root);
  return e === null ? { ok: true, value: x as T } : { ok: false, error: { code: 'bad-message', message: e } };
}

/**
 * Validate a message the console received from the extension (relayed by the host).
 * Checks every field's type and bounds (FORMATS, LIMITS); refuses unknown types and keys.
 * @returns `{ok:true, value}` typed, or `{ok:false, error:{code:'bad-message', message: 'msg.field: why'}}`.
 */
export function validateExtensionToConsole(x: unknown): Result<ExtensionToConsole> {
  return run(extensionToConsole, x, 'msg');
}

/**
 * Validate a message the extension received from the console.
 * @returns `{ok:true, value}` typed, or `{ok:false, error:{code:'bad-message', message}}`.
 */
export function validateConsoleToExtension(x: unknown): Result<ConsoleToExtension> {
  return run(consoleToExtension, x, 'msg');
}

/** Validate a frame the native host itself wrote to the extension (`host-error`). */
export function validateHostToExtension(x: unknown): Result<HostToExtension> {
  return run(hostToExtension, x, 'msg');
}

/** Validate the native host's first frame on the socket (`host-hello`). */
export function validateHostToConsole(x: unknown): Result<HostToConsole> {
  return run(hostToConsole, x, 'msg');
}

/** Validate the `value` of a successful response to a request of kind `op` (ConsoleRequestValue). */
export function validateRequestValue<K extends keyof ConsoleRequestValue>(op: K, value: unknown): Result<ConsoleRequestValue[K]> {
  return run(requestValue[op], value, 'value');
}

/**
 * The `protocolVersion` of a `hello` or `hello-ack`, read before full validation, so
 * that a peer of another version gets `version-mismatch` rather than `bad-message`
 * even when the rest of its hello changed shape. `null` when `x` is no such message.
 */
export function peekProtocolVersion(x: unknown): number | null {
  if (!isObj(x) || (x.type !== 'hello' && x.type !== 'hello-ack')) return null;
  return typeof x.protocolVersion === 'number' ? x.protocolVersion : null;
}
