/**
 * The receipt: one row of the append-only, hash-chained ledger
 * (src/main/core/ledger). Every step of every request produces one, including
 * refusals, denials, expiries and cancellations (docs/design.md, "Request lifecycle").
 */

/** Lifecycle and console events a receipt can record. */
export const RECEIPT_EVENTS = [
  'requested',
  'validated',
  'refused',
  'approval-shown',
  'approved',
  'denied',
  'expired',
  'dispatched',
  'succeeded',
  'failed',
  'outcome-unknown',
  'cancelled',
  'readback-confirmed',
  'readback-mismatch',
  /** Live Patch (issue 11 item 1): a patch is applied and held (detail: patchId, priorHash, afterHash, edits). */
  'patched',
  /** Live Patch: a patch is reverted, and the readback found the page equal to its prior-state hash. */
  'reverted',
  /** Live Patch: a patch was reverted as far as the page allowed, but the page is not equal to its prior state (it changed what the patch touched). */
  'revert-mismatch',
  /** The person reloaded a shared tab from the console (offered after a Stop or a raw-JavaScript run left an outcome unknown; the receipt's tabId and origin). */
  'tab-reloaded',
  'discovered',
  'paired',
  'pairing-rejected',
  'unpaired',
  'link-connected',
  'link-disconnected',
  'tab-shared',
  'tab-unshared',
  /** The single MCP token of versions before per-agent tokens was rotated (kept so older ledgers still read). */
  'token-rotated',
  /** The person made an agent token (detail: tokenId, name; never the secret). */
  'token-created',
  /** The person revoked an agent token (detail: tokenId, name, sessionsClosed). */
  'token-revoked',
  'developer-mode-on',
  'developer-mode-off',
  /** A policy rule was added or removed by the person, or dropped by the console (detail: change, the rule(s)). */
  'policy-changed',
  /** Retention erased receipts' payloads (detail: retentionDays, before, erased, oldRuleKept; docs/ledger.md, "Retention"). */
  'payloads-erased',
  /** The person's Stop everything (issue 12 item 5): ONE receipt for the act (detail: src/shared/ipc.ts StopEverythingReport, without receiptId). */
  'stopped-everything',
] as const;
export type ReceiptEvent = (typeof RECEIPT_EVENTS)[number];

/**
 * How one dispatched invocation ended, as the extension reports it
 * (`InvocationResult.outcome`, src/shared/types.ts) and the link validates it
 * (src/shared/protocol.ts). The only list of them: test/unit/contracts.test.ts
 * fails if a second appears.
 */
export const INVOCATION_OUTCOMES = ['succeeded', 'failed', 'outcome-unknown', 'refused', 'cancelled'] as const satisfies readonly ReceiptEvent[];
export type InvocationOutcome = (typeof INVOCATION_OUTCOMES)[number];

/**
 * The receipt events that end a request: an invocation's outcome, or the
 * person's denial or the approval's expiry before anything was dispatched.
 * `ReceiptQuery.outcome` accepts these only (the console API's schema, the
 * ledger's filter).
 */
export const OUTCOME_EVENTS = [...INVOCATION_OUTCOMES, 'denied', 'expired'] as const satisfies readonly ReceiptEvent[];
export type OutcomeEvent = (typeof OUTCOME_EVENTS)[number];

const OUTCOME_EVENT_SET: ReadonlySet<string> = new Set(OUTCOME_EVENTS);

/** Whether `e` is one of OUTCOME_EVENTS. */
export function isOutcomeEvent(e: unknown): e is OutcomeEvent {
  return typeof e === 'string' && OUTCOME_EVENT_SET.has(e);
}

/**
 * Events that end a request without being an outcome themselves, and the outcome
 * each stands for. A discovery's last step is `discovered` (restart recovery looks
 * for it, src/main/core/ledger/recovery-queries.ts); since ledger format 5 the
 * broker writes `succeeded` right after it (docs/broker.md), and this mapping
 * still ends a discovery recorded before that (or cut off between the two
 * commits). The only such list: every outcome is derived through `outcomeOf`.
 */
export const ENDING_EVENTS = { discovered: 'succeeded' } as const satisfies Partial<Record<ReceiptEvent, OutcomeEvent>>;

/**
 * The outcome of a request whose receipts recorded `events`, oldest first: the
 * newest event that is an outcome (OUTCOME_EVENTS) or ends the request
 * (ENDING_EVENTS, mapped to its outcome); null while the request is still open.
 * The newest wins, as an outcome-unknown later lifted by a readback says the latter.
 * Used by the request index's fold (src/shared/request-summary.ts, so the
 * Timeline and its live tail), `request_status` and ledger migration 4 → 5.
 */
export function outcomeOf(events: readonly ReceiptEvent[]): OutcomeEvent | null {
  for (let i = events.length - 1; i >= 0; i -= 1) {
    const e = events[i] as ReceiptEvent;
    if (isOutcomeEvent(e)) return e;
    if (Object.hasOwn(ENDING_EVENTS, e)) return ENDING_EVENTS[e as keyof typeof ENDING_EVENTS];
  }
  return null;
}

/**
 * Which capability of the ladder (docs/design.md) a request used; `link` and
 * `console` for the link's and the console's own events. The one list: the
 * type, the ledger's input check and the UI's labels derive from it.
 */
export const FACULTIES = ['webmcp-discover', 'webmcp-invoke', 'list-tabs', 'page-info', 'semantic-read', 'semantic', 'live-patch', 'raw-js', 'link', 'console'] as const;
export type Faculty = (typeof FACULTIES)[number];

/** Who caused a receipt: the agent (MCP client name/version), the person, the extension, or the console itself. */
export interface Actor {
  kind: 'agent' | 'person' | 'extension' | 'console';
  /**
   * Who acted. For an agent: the NAME OF ITS TOKEN, as the person named it in the
   * console (issue 9 item 2: the identity, never what the client says it is).
   */
  name?: string;
  /** For an agent: the client's self-declared version (MCP `clientInfo.version`). */
  version?: string;
  /** For an agent: the stable id of the token it authenticated with (`tok_…` or `default`). */
  tokenId?: string;
  /** For an agent: the name the MCP client declares (`clientInfo.name`): self-declared, shown as such, never the identity. */
  clientName?: string;
}

/** What a caller hands to `Ledger.append`: everything but id, time, seq and hashes. */
export interface ReceiptInput {
  requestId: string | null;
  event: ReceiptEvent;
  faculty: Faculty;
  origin?: string | null;
  tabId?: number | null;
  frameId?: number | null;
  documentId?: string | null;
  toolName?: string | null;
  descriptorHash?: string | null;
  argumentsHash?: string | null;
  /**
   * The faculty's operation, e.g. 'invoke', 'discover', 'list', 'info' (later
   * 'click', 'hover', …): 1 to 64 characters of [a-z0-9-], or null.
   */
  operation?: string | null;
  /**
   * SHA-256 (64 lowercase hex) of what the grant binds as the subject, or null:
   * for WebMCP the descriptor hash; for later faculties a target fingerprint,
   * a patch or a script hash.
   */
  subjectHash?: string | null;
  actor: Actor;
  /** Bounded (LIMITS.maxReceiptDetailBytes) and redacted by the ledger before it is stored. */
  detail?: unknown;
}

/** A stored receipt. `hash` = SHA-256(prevHash || canonical(receipt without hash)). */
export interface Receipt extends Required<Omit<ReceiptInput, 'detail'>> {
  /** Position in the chain, from 1. */
  seq: number;
  /** UUID v4. */
  id: string;
  /** ms since the epoch, UTC. */
  time: number;
  detail: unknown;
  prevHash: string;
  hash: string;
  /**
   * Ledger format 3 (docs/ledger.md, "Retention"): SHA-256 (64 lowercase hex) of the
   * canonical JSON of `detail` as written. Present exactly on receipts of the payload-hash
   * rule, whose `hash` covers this instead of `detail`; absent on older receipts.
   */
  payloadHash?: string;
  /** ms since the epoch when retention erased this receipt's payload (`detail` is then null); absent while it is kept. */
  erasedAt?: number;
}

/** Filters for `Ledger.query`; results come newest first, `limit` at most 500. */
export interface ReceiptQuery {
  /** Inclusive bounds, ms since the epoch. */
  from?: number;
  to?: number;
  origin?: string;
  toolName?: string;
  event?: ReceiptEvent;
  /** One of OUTCOME_EVENTS: receipts recording that ending. */
  outcome?: OutcomeEvent;
  requestId?: string;
  /** Exact operation (e.g. 'invoke'). */
  operation?: string;
  /** Exact subject hash (64 lowercase hex). */
  subjectHash?: string;
  /** One receipt by its id (the id the agent is given with every result). */
  id?: string;
  /** Opaque cursor from a previous page's `nextCursor`. */
  cursor?: string;
  limit?: number;
}

export interface ReceiptPage {
  receipts: Receipt[];
  nextCursor: string | null;
}

/** `Ledger.verify` result: `ok` or the first broken link, named. */
export interface VerifyReport {
  ok: boolean;
  count: number;
  headHash: string;
  /** Set when !ok: the seq where the chain first breaks and why (or the first problem's, see `problems`). */
  firstBroken?: { seq: number; id?: string; reason: string };
  /**
   * Every check that failed, the chain's own break first (`code: 'chain'`), then the checks of
   * docs/ledger.md, "Signed checkpoints" (`trigger-missing`, `checkpoint-signature`,
   * `count-below-checkpoint`, `checkpoint-mismatch`, `unsigned-tail`, `no-public-key`,
   * `witness-signature`, `witness-count`, `witness-mismatch`). Present when the ledger has
   * a signing key or checkpoints, or something failed.
   */
  problems?: Array<{ code: string; seq: number; message: string }>;
  /** The signed-checkpoint side of the check (present with `problems`). */
  signed?: {
    /** Key id (SHA-256 hex of the Ed25519 public key) the signatures were checked with; null: none was known. */
    keyId: string | null;
    /** The newest signed checkpoint in the file (null: none). */
    checkpoint: { count: number; headHash: string; time: number } | null;
    /** Receipts after it, which no signature protects: a cut among them cannot be detected. */
    unsignedTail: number;
    /** The most receipts that may follow the newest checkpoint (MAX_UNSIGNED_TAIL). */
    tailBound: number;
    /** The extension's witness: checked and consistent, checked and failed, or not checked (with why). */
    witness: 'agrees' | 'failed' | 'not-checked';
    witnessNote?: string;
    /** Why the console stopped signing new checkpoints for this file (null: it signs). */
    signingHeld?: string | null;
  };
  /** One plain-words line saying what was checked and found (the console and the CLI show it). */
  summary?: string;
}

/** `Ledger.checkpoint`: exported so that a cut-off tail is detectable later. */
export interface Checkpoint {
  count: number;
  headHash: string;
  time: number;
}
