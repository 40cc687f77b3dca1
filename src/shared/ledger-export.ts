/**
 * The contract of the ledger's filtered export and of its progress (issue 12
 * item 2): the filter the timeline's filter bar hands to the export, the export's
 * formats and result, and the progress events of long ledger tasks (verify,
 * export). Pure data, shared by the console core, the API schemas and the renderer.
 * See docs/ledger.md, "Export".
 */
import type { SignedCheckpoint } from './checkpoint';
import type { OutcomeEvent } from './receipt';
import type { RequestFilter } from './request-summary';

/**
 * Which receipts an export takes (every field optional; all given must match).
 * The timeline's filter bar builds this object; the export applies it per receipt.
 * - `from`/`to`: inclusive bounds on the receipt's `time`, ms since the epoch (UTC).
 * - `origin`, `toolName`, `requestId`: exact.
 * - `agent`: an agent token's id (`tok_…`, `default`) or the name the person gave it;
 *   matches receipts whose actor is that agent (kind `agent`).
 * - `faculty`: one of FACULTIES; `event`: one of RECEIPT_EVENTS.
 * - `outcome`: one of OUTCOME_EVENTS: the receipts that record that outcome (as
 *   `ReceiptQuery.outcome`); with `event` too, both must agree.
 * - `text`: case-insensitive substring of the tool name or of the receipt's detail
 *   (reasons, messages); 1..200 characters.
 */
export type LedgerFilter = Omit<RequestFilter, 'outcome'> & { outcome?: OutcomeEvent };

/** The filter's keys, in one place (the API schema and the CLI read them). */
export const LEDGER_FILTER_KEYS = ['from', 'to', 'origin', 'agent', 'faculty', 'toolName', 'outcome', 'event', 'requestId', 'text'] as const satisfies ReadonlyArray<keyof LedgerFilter>;

/** `jsonl`: a header line, then one Receipt per line (verifiable); `csv`: RFC 4180 rows for a spreadsheet (not verifiable). */
export const EXPORT_FORMATS = ['jsonl', 'csv'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/**
 * The first line of a JSONL export: `{"echoLedgerExport": ExportHeader}`. The
 * receipts follow, oldest first (by seq), each with seq, prevHash and hash, so
 * `npm run ledger -- verify <file>` can check them (docs/ledger.md, "What verifies
 * means for an export").
 */
export interface ExportHeader {
  /** Version of this export layout: 1. */
  version: 1;
  /** The filter applied ({} for the whole range). */
  filter: LedgerFilter;
  /** ms since the epoch when the export started. */
  exportedAt: number;
  /** The ledger's head when the export started: it covers receipts 1..count. */
  head: { count: number; headHash: string };
  /** The newest signed checkpoint at that moment (null: the ledger has none). */
  checkpoint: SignedCheckpoint | null;
}

/** What an export wrote. */
export interface ExportResult {
  /** Absolute path of the file written. */
  file: string;
  format: ExportFormat;
  /** Receipts written. */
  rows: number;
  /** The head the export covered (receipts 1..count were looked at). */
  head: { count: number; headHash: string };
}

/**
 * Progress of a long ledger task, pushed to the console as it runs
 * (ConsoleEvent `ledger-progress`): `done` of `total` receipts looked at.
 * `id` names the run (an export's `exportId`; `verify` for Verify ledger).
 * An export ends with one event in state `done` (with `result`), `failed` (with
 * `error`) or `cancelled`; Verify's result is the answer to `verifyLedger`.
 */
export interface LedgerProgress {
  task: 'verify' | 'export';
  id: string;
  done: number;
  total: number;
  state: 'running' | 'done' | 'failed' | 'cancelled';
  result?: ExportResult;
  error?: { code: string; message: string };
}

/** Retention period bounds in days (settings `retentionDays`; null keeps receipts' payloads forever, the default). */
export const RETENTION_DAYS = { min: 1, max: 3650 } as const;
