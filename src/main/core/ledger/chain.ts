/**
 * The hash chain of the receipt ledger: which fields a receipt's hash covers,
 * how they are serialised, and the formula. Used by `Ledger.append` to compute
 * each hash and by `Ledger.verify` to recompute it, so the two cannot drift.
 *
 *   hash(n) = SHA-256( UTF-8( prevHash(n) || canonical(n) ) )
 *   prevHash(1) = GENESIS_PREV_HASH (64 zeros); prevHash(n) = hash(n - 1)
 *
 * where `||` is string concatenation of the 64 lowercase hex characters of
 * prevHash and `canonical(n)` is the RFC 8785 canonical JSON
 * (src/shared/canonical.ts, `canonicalJson`) of the receipt without its `hash`:
 * the fields in CHAINED_FIELDS, every one present (absent optional values
 * are `null`) but for `payloadHash` or `detail` (one of the two, below) and one exception: `operation` and `subjectHash` (ledger format
 * 2) are left out when BOTH are null. So a format-1 row, which has neither,
 * and a new row without them hash exactly as format 1 did, and a ledger
 * migrated to format 2 keeps verifying; when either is set, both are present.
 *
 * Format 4 (retention, issue 12 item 3) adds the payload hash rule: a row with a
 * `payload_hash` (every row written from format 4 on) carries
 * `"payloadHash": SHA-256(UTF-8(detail's canonical JSON))` in its canonical text
 * INSTEAD of `"detail"`, so erasing the detail later (retention) leaves the
 * receipt's hash, and the chain, verifiable. A row without one (written before
 * format 4) keeps the old rule, `detail` inside the text: it cannot be erased.
 * The rule is marked per row by the presence of `payload_hash`; the payload
 * itself is checked against it while it is there (`erased_at` NULL).
 * `canonicalReceiptText` builds that text directly from a
 * stored row rather than through `canonicalJson`, for speed; HASH_INPUT_SQL has
 * SQLite build `prevHash || canonical` itself, which is what lets verify walk
 * a million rows in seconds. test/unit/ledger-chain.test.ts pins all three to
 * the same bytes.
 */
import { createHash, hash as oneShotHash } from 'node:crypto';

/** prevHash of the first receipt (seq 1). */
export const GENESIS_PREV_HASH = '0'.repeat(64);

/**
 * The fields covered by a receipt's hash, in RFC 8785 key order (UTF-16 code
 * unit order). `operation` and `subjectHash` are among them only when one of
 * the two is not null (OPTIONAL_CHAINED_FIELDS).
 */
export const CHAINED_FIELDS = [
  'actor',
  'argumentsHash',
  'descriptorHash',
  'detail',
  'documentId',
  'event',
  'faculty',
  'frameId',
  'id',
  'operation',
  'origin',
  'payloadHash',
  'prevHash',
  'requestId',
  'seq',
  'subjectHash',
  'tabId',
  'time',
  'toolName',
] as const;

/** Chained fields left out of the canonical text when both are null (format-1 receipts hash as before). */
export const OPTIONAL_CHAINED_FIELDS = ['operation', 'subjectHash'] as const;

/**
 * The two payload rules (format 4): a row has exactly one of `detail` (old rule,
 * no payload hash) and `payloadHash` (new rule) in its canonical text.
 */
export const PAYLOAD_RULE_FIELDS = ['detail', 'payloadHash'] as const;

/**
 * Column order of a stored row, as selected by `ROW_COLUMNS_SQL` (raw mode).
 * `actor` and `detail` are stored as their canonical JSON text. The format-2
 * columns come last (after `hash`), where ALTER TABLE ADD COLUMN put them in a
 * migrated ledger, so the positions of the format-1 columns never moved.
 */
export const ROW_COLUMNS = [
  'seq',
  'id',
  'time',
  'request_id',
  'event',
  'faculty',
  'origin',
  'tab_id',
  'frame_id',
  'document_id',
  'tool_name',
  'descriptor_hash',
  'arguments_hash',
  'actor',
  'detail',
  'prev_hash',
  'hash',
  'operation',
  'subject_hash',
  'payload_hash',
  'erased_at',
] as const;
export const ROW_COLUMNS_SQL = ROW_COLUMNS.join(', ');

/** The columns each format added, absent (read as NULL) in a read-only file of an older format. */
const COLUMNS_SINCE: Readonly<Record<string, number>> = { operation: 2, subject_hash: 2, payload_hash: 4, erased_at: 4 };

/** SQL for column `c` in a file of `format`: its name, or NULL when that format has no such column. */
export function columnSql(c: (typeof ROW_COLUMNS)[number], format: number): string {
  return (COLUMNS_SINCE[c] ?? 1) > format ? 'NULL' : c;
}

/** ROW_COLUMNS_SQL for a file of `format` opened read-only (not migrated): missing columns read as NULL. */
export function rowColumnsSql(format: number): string {
  return ROW_COLUMNS.map((c) => columnSql(c, format)).join(', ');
}
/** ROW_COLUMNS_SQL for a format-1 file opened read-only. */
export const ROW_COLUMNS_SQL_FORMAT_1 = rowColumnsSql(1);

/** A stored row in ROW_COLUMNS order (what `.raw()` statements return). */
export type RawRow = [
  seq: number,
  id: string,
  time: number,
  requestId: string | null,
  event: string,
  faculty: string,
  origin: string | null,
  tabId: number | null,
  frameId: number | null,
  documentId: string | null,
  toolName: string | null,
  descriptorHash: string | null,
  argumentsHash: string | null,
  actorJson: string,
  detailJson: string,
  prevHash: string,
  hash: string,
  operation: string | null,
  subjectHash: string | null,
  /** Format 4: SHA-256 hex of `detailJson` as written; null for a row of the old rule. */
  payloadHash?: string | null,
  /** Format 4: ms since the epoch when retention erased the payload (detail then 'null'); null while kept. */
  erasedAt?: number | null,
];

/** SHA-256 hex of a detail's canonical JSON text: a receipt's `payloadHash` (format 4). */
export function payloadHashOf(detailJson: string): string {
  return sha256Hex(detailJson);
}

// JSON text of a scalar column. JSON.stringify is exactly what the `canonicalize`
// package emits for strings and numbers (RFC 8785 §3.2.2.2 and §3.2.2.3 follow
// ECMAScript's JSON.stringify); a value of an unexpected type (a tampered row)
// still serialises, to something that no longer matches the hash.
function j(v: unknown): string {
  return v === null ? 'null' : (JSON.stringify(v) ?? 'null');
}

/**
 * RFC 8785 canonical JSON of a stored receipt without its hash, built from a
 * raw row (ROW_COLUMNS order). Equal, byte for byte, to
 * `canonicalJson({...receipt fields in CHAINED_FIELDS})` (without `operation`
 * and `subjectHash` when both are null; with `payloadHash` instead of `detail`
 * when the row has a payload hash) when `actorJson` and `detailJson` are
 * themselves canonical JSON (the ledger stores them so). A row of 17 values
 * (format 1, no operation/subject columns) reads them as null.
 */
export function canonicalReceiptText(r: RawRow | unknown[]): string {
  // `?? null`: undefined (a 17-column row) counts as null, as SQL's NULL does.
  const operation = r[17] ?? null;
  const subjectHash = r[18] ?? null;
  const payloadHash = r[19] ?? null;
  const both = operation === null && subjectHash === null;
  return (
    '{"actor":' + (r[13] as string) +
    ',"argumentsHash":' + j(r[12]) +
    ',"descriptorHash":' + j(r[11]) +
    (payloadHash === null ? ',"detail":' + (r[14] as string) : '') +
    ',"documentId":' + j(r[9]) +
    ',"event":' + j(r[4]) +
    ',"faculty":' + j(r[5]) +
    ',"frameId":' + j(r[8]) +
    ',"id":' + j(r[1]) +
    (both ? '' : ',"operation":' + j(operation)) +
    ',"origin":' + j(r[6]) +
    (payloadHash === null ? '' : ',"payloadHash":' + j(payloadHash)) +
    ',"prevHash":' + j(r[15]) +
    ',"requestId":' + j(r[3]) +
    ',"seq":' + j(r[0]) +
    (both ? '' : ',"subjectHash":' + j(subjectHash)) +
    ',"tabId":' + j(r[7]) +
    ',"time":' + j(r[2]) +
    ',"toolName":' + j(r[10]) +
    '}'
  );
}

/**
 * SHA-256 hex of an already concatenated `prevHash || canonicalText`. The
 * one-shot `crypto.hash` (Node ≥ 20.12) is about three times cheaper than a
 * Hash object for inputs this small.
 */
export const sha256Hex: (text: string) => string =
  typeof oneShotHash === 'function'
    ? (text) => oneShotHash('sha256', text, 'hex')
    : (text) => createHash('sha256').update(text).digest('hex');

/**
 * hash = SHA-256(UTF-8(prevHash || canonicalText)), as 64 lowercase hex characters.
 * Synchronous node:crypto: this is the hot path of append and verify.
 */
export function chainHash(prevHash: string, canonicalText: string): string {
  return sha256Hex(prevHash + canonicalText);
}

// json_quote() is exactly JSON.stringify for SQLite TEXT (every character, the
// controls, quotes, backslashes, U+2028/2029 and non-BMP alike; pinned by the
// chain test), prints INTEGER as its digits, REAL with a decimal point, and
// NULL as null: a column holding a tampered type never rebuilds a legitimate text.
const q = (column: string): string => `json_quote(${column})`;

/**
 * SQL expression building `prevHash || canonical(receipt)` from a row of the
 * receipts table, the same bytes as `prev_hash + canonicalReceiptText(row)`.
 * `actor` and `detail` are spliced raw, as canonicalReceiptText does; verify
 * also requires both to be valid JSON (json_valid), which keeps the text one-to-one with the row.
 * `operation` and `subjectHash` appear only when one of them is not NULL, as in
 * canonicalReceiptText (the CASE yields '' when both are NULL).
 */
export const HASH_INPUT_SQL = hashInputSql(4);
/** HASH_INPUT_SQL for a format-1 file opened read-only: no operation or subject column, both NULL. */
export const HASH_INPUT_SQL_FORMAT_1 = hashInputSql(1);

/** HASH_INPUT_SQL for a file of `format` (read-only opens of older files read missing columns as NULL). */
export function hashInputSql(format: number): string {
  const operation = columnSql('operation', format);
  const subjectHash = columnSql('subject_hash', format);
  const payloadHash = columnSql('payload_hash', format);
  const bothNull = `${operation} IS NULL AND ${subjectHash} IS NULL`;
  return `concat(${[
    'prev_hash',
    `'{"actor":'`, 'actor',
    `',"argumentsHash":'`, q('arguments_hash'),
    `',"descriptorHash":'`, q('descriptor_hash'),
    `CASE WHEN ${payloadHash} IS NULL THEN ',"detail":' || detail ELSE '' END`,
    `',"documentId":'`, q('document_id'),
    `',"event":'`, q('event'),
    `',"faculty":'`, q('faculty'),
    `',"frameId":'`, q('frame_id'),
    `',"id":'`, q('id'),
    `CASE WHEN ${bothNull} THEN '' ELSE ',"operation":' || ${q(operation)} END`,
    `',"origin":'`, q('origin'),
    `CASE WHEN ${payloadHash} IS NULL THEN '' ELSE ',"payloadHash":' || ${q(payloadHash)} END`,
    `',"prevHash":'`, q('prev_hash'),
    `',"requestId":'`, q('request_id'),
    `',"seq":'`, q('seq'),
    `CASE WHEN ${bothNull} THEN '' ELSE ',"subjectHash":' || ${q(subjectHash)} END`,
    `',"tabId":'`, q('tab_id'),
    `',"time":'`, q('time'),
    `',"toolName":'`, q('tool_name'),
    `'}'`,
  ].join(', ')})`;
}

/** Name of the SQL function (SHA-256 hex of a text) every connection that verifies registers: PAYLOAD_CHECK_SQL uses it. */
export const SHA256_SQL_FUNCTION = 'echo_sha256_hex';

/**
 * SQL condition, true when a row's payload is consistent with its rule (format 4):
 * - old rule (no payload hash): never marked erased;
 * - new rule, kept: SHA-256 of `detail` equals `payload_hash`;
 * - new rule, erased: `detail` is 'null' and `erased_at` an integer.
 * Verify's fast check requires it (the JS check, `payloadProblem`, is the authority).
 */
export function payloadCheckSql(format: number): string {
  const payloadHash = columnSql('payload_hash', format);
  const erasedAt = columnSql('erased_at', format);
  return `(CASE WHEN ${payloadHash} IS NULL THEN ${erasedAt} IS NULL ` +
    `WHEN ${erasedAt} IS NULL THEN ${SHA256_SQL_FUNCTION}(detail) IS ${payloadHash} ` +
    `ELSE detail = 'null' AND typeof(${erasedAt}) = 'integer' END)`;
}

/**
 * Why a row's payload does not fit its rule (see payloadCheckSql), or null.
 * The authority on a row that the fast check did not pass.
 */
export function payloadProblem(r: RawRow | unknown[]): string | null {
  const payloadHash = r[19] ?? null;
  const erasedAt = r[20] ?? null;
  if (payloadHash === null) return erasedAt === null ? null : 'marked erased, but its hash covers the detail itself (a receipt written before format 4 cannot be erased)';
  if (typeof payloadHash !== 'string' || !/^[0-9a-f]{64}$/.test(payloadHash)) return 'payloadHash is not 64 lowercase hex';
  if (erasedAt === null) {
    return typeof r[14] === 'string' && payloadHashOf(r[14]) === payloadHash ? null : 'the detail does not match its payloadHash (the payload was altered)';
  }
  if (!Number.isSafeInteger(erasedAt)) return 'erasedAt is not an integer';
  return r[14] === 'null' ? null : 'marked erased, but the detail is still there';
}
