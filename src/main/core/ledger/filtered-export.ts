/**
 * The filtered export of the ledger (issue 12 item 2; docs/ledger.md, "Export"):
 * the receipts matching a LedgerFilter (src/shared/ledger-export.ts), oldest
 * first by seq, as JSON Lines (a header line, then one Receipt per line, each
 * with seq, prevHash and hash, so the CLI can verify it) or as CSV.
 *
 * It walks the chain by seq windows of EXPORT_WINDOW receipts, each one short
 * query on the primary key with the filter checked inside it, and yields to the
 * event loop between windows: a million receipts take about a hundred windows
 * and the console stays responsive whatever the filter matches (a filter that
 * matches nothing costs the same walk, never one long query). Progress is the
 * seq reached; a signal cancels between windows, and the partial file is removed.
 */
import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { EXPORT_FORMATS, LEDGER_FILTER_KEYS, type ExportFormat, type ExportHeader, type LedgerFilter } from '../../../shared/ledger-export';
import { FACULTIES, isOutcomeEvent, type Receipt } from '../../../shared/receipt';
import type { RawRow } from './chain';
import { LedgerInputError, isReceiptEvent } from './input';
import { rowToReceipt } from './query';

/** Receipts (by seq) looked at per window of the export walk. */
export const EXPORT_WINDOW = 10_000;

const FACULTY_SET: ReadonlySet<string> = new Set(FACULTIES);
const FILTER_KEYS: ReadonlySet<string> = new Set(LEDGER_FILTER_KEYS);
const MAX_TEXT = 200;

/**
 * SQL condition and parameters for a LedgerFilter, on the receipts table.
 * @throws LedgerInputError for an unknown key or a bad value (naming it).
 */
export function filterSql(filter: LedgerFilter): { where: string[]; params: Record<string, string | number> } {
  if (filter === null || typeof filter !== 'object' || Array.isArray(filter)) throw new LedgerInputError('export filter must be an object');
  for (const k of Object.keys(filter)) if (!FILTER_KEYS.has(k)) throw new LedgerInputError(`export filter has an unknown field "${k}"`);
  const where: string[] = [];
  const params: Record<string, string | number> = {};
  const time = (k: 'from' | 'to', op: string): void => {
    const v = filter[k];
    if (v === undefined) return;
    if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw new LedgerInputError(`export filter ${k} must be an integer (ms since the epoch)`);
    where.push(`time ${op} @${k}`);
    params[k] = v;
  };
  time('from', '>=');
  time('to', '<=');
  const str = (k: 'origin' | 'toolName' | 'requestId' | 'agent' | 'text', sql: string, max = 2048): void => {
    const v = filter[k];
    if (v === undefined) return;
    if (typeof v !== 'string' || v.length < 1 || v.length > max) throw new LedgerInputError(`export filter ${k} must be a string of 1 to ${max} characters`);
    where.push(sql);
    params[k] = k === 'text' ? v.toLowerCase() : v;
  };
  str('origin', 'origin = @origin');
  str('toolName', 'tool_name = @toolName');
  str('requestId', 'request_id = @requestId');
  // The actor is stored as canonical JSON text (input.ts); an agent's carries its token id and the token's name.
  str('agent', "json_extract(actor, '$.kind') = 'agent' AND (json_extract(actor, '$.tokenId') = @agent OR json_extract(actor, '$.name') = @agent)", 256);
  str('text', "(instr(lower(coalesce(tool_name, '')), @text) > 0 OR instr(lower(detail), @text) > 0)", MAX_TEXT);
  if (filter.faculty !== undefined) {
    if (!FACULTY_SET.has(filter.faculty)) throw new LedgerInputError(`export filter faculty must be one of ${FACULTIES.join(', ')}`);
    where.push('faculty = @faculty');
    params.faculty = filter.faculty;
  }
  if (filter.event !== undefined && !isReceiptEvent(filter.event)) throw new LedgerInputError('export filter event must be one of RECEIPT_EVENTS');
  if (filter.outcome !== undefined && !isOutcomeEvent(filter.outcome)) throw new LedgerInputError('export filter outcome must be one of OUTCOME_EVENTS');
  // As ReceiptQuery.outcome: the receipts recording that outcome; with event too, both must agree.
  if (filter.outcome !== undefined && filter.event !== undefined && filter.outcome !== filter.event) where.push('0');
  const event = filter.outcome ?? filter.event;
  if (event !== undefined) {
    where.push('event = @event');
    params.event = event;
  }
  return { where, params };
}

/** Columns of a CSV export, in order: the Receipt's fields (actor and detail as JSON text). */
export const CSV_COLUMNS = [
  'seq', 'id', 'time', 'requestId', 'event', 'faculty', 'operation', 'origin', 'tabId', 'frameId', 'documentId', 'toolName',
  'descriptorHash', 'argumentsHash', 'subjectHash', 'actor', 'detail', 'payloadHash', 'erasedAt', 'prevHash', 'hash',
] as const satisfies ReadonlyArray<keyof Receipt>;

/**
 * One CSV field (RFC 4180: quoted when it holds a comma, quote, CR or LF; quotes
 * doubled). A text that a spreadsheet would run as a formula (it begins with
 * `=`, `+`, `-`, `@`, tab or CR: OWASP "CSV Injection") gets a leading `'`, so a
 * hostile page's tool name or origin cannot execute in the person's spreadsheet.
 * Numbers are written as they are.
 */
export function csvField(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'number') return String(v);
  let s = typeof v === 'string' ? v : JSON.stringify(v);
  if (/^[=+\-@\t\r]/.test(s)) s = "'" + s;
  return /[",\r\n]/.test(s) ? '"' + s.replace(/"/g, '""') + '"' : s;
}

function csvLine(r: Receipt): string {
  return CSV_COLUMNS.map((c) => csvField(r[c])).join(',') + '\r\n';
}

/** What the export walk reads through (the Ledger's connection). */
export interface ExportSource {
  head: { count: number; headHash: string };
  /** Rows with afterSeq < seq ≤ endSeq matching the filter, oldest first (throws once the ledger is closed). */
  window: (afterSeq: number, endSeq: number) => RawRow[];
  header: Omit<ExportHeader, 'filter' | 'head'>;
}

/** Options of `Ledger.exportFiltered`. */
export interface ExportOptions {
  filter?: LedgerFilter;
  format?: ExportFormat;
  /** Called after each window with the seqs looked at so far and the head's count. */
  onProgress?: (done: number, total: number) => void;
  /** Cancels between windows: the promise rejects with the signal's reason and a file target is removed. */
  signal?: AbortSignal;
  /** Seqs per window (default EXPORT_WINDOW). */
  windowRows?: number;
}

/**
 * Write the filtered export to a file path (written as `<path>.part`, renamed
 * when complete, removed when cancelled or failed) or to a writable stream (left
 * open). See the module header.
 * @returns rows written and the head covered.
 * @throws LedgerInputError for a bad filter or format; the signal's reason when cancelled;
 *   what the window read throws (LedgerStateError when the ledger closed meanwhile); the stream's error.
 */
export async function exportFiltered(src: ExportSource, filter: LedgerFilter, target: string | Writable, opts: ExportOptions): Promise<{ rows: number; head: { count: number; headHash: string } }> {
  const format = opts.format ?? 'jsonl';
  if (!(EXPORT_FORMATS as readonly string[]).includes(format)) throw new LedgerInputError(`export format must be one of ${EXPORT_FORMATS.join(', ')}`);
  const toFile = typeof target === 'string';
  const part = toFile ? `${target}.part` : '';
  const out: Writable = toFile ? createWriteStream(part, { mode: 0o600 }) : target;
  let rows = 0;
  let done = false;
  try {
    let text = format === 'jsonl'
      ? JSON.stringify({ echoLedgerExport: { version: 1, filter, exportedAt: src.header.exportedAt, head: src.head, checkpoint: src.header.checkpoint } satisfies ExportHeader }) + '\n'
      : CSV_COLUMNS.join(',') + '\r\n';
    const end = src.head.count;
    const step = Math.max(1, Math.floor(opts.windowRows ?? EXPORT_WINDOW));
    let after = 0;
    for (;;) {
      opts.signal?.throwIfAborted();
      const windowEnd = Math.min(after + step, end);
      if (windowEnd > after) {
        for (const r of src.window(after, windowEnd)) {
          const receipt = rowToReceipt(r);
          text += format === 'jsonl' ? JSON.stringify(receipt) + '\n' : csvLine(receipt);
          rows++;
        }
      }
      if (text && !out.write(text)) await once(out, 'drain');
      text = '';
      after = windowEnd;
      opts.onProgress?.(after, end);
      if (after >= end) break;
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    done = true;
  } finally {
    if (toFile) {
      out.end();
      await once(out, 'close').catch(() => undefined);
      if (done) await rename(part, target);
      else await rm(part, { force: true });
    }
  }
  return { rows, head: src.head };
}
