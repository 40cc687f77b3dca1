/**
 * Shared helpers for the ledger tests: temporary folders, sample receipt inputs,
 * and a format-1 ledger file written as the first ledger code wrote it.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { canonicalJson } from '../../../src/shared/canonical';
import { sha256HexSync } from '../../../src/main/core/digest';
import type { Receipt, ReceiptInput } from '../../../src/shared/receipt';
import { MIGRATE_1_TO_2_SQL } from '../../../src/main/core/ledger/schema';

/** A fresh temporary folder; `cleanup()` removes it. */
export function tempDir(prefix = 'ledger-'): { dir: string; file: (name: string) => string; cleanup: () => void } {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  return { dir, file: (name) => path.join(dir, name), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export const HASH_A = 'a'.repeat(64);
export const HASH_B = '0123456789abcdef'.repeat(4);

/** A receipt input with every optional field set (so tamper tests can touch every column). */
export function fullInput(i = 0, over: Partial<ReceiptInput> = {}): ReceiptInput {
  return {
    requestId: `req-${i}`,
    event: 'succeeded',
    faculty: 'webmcp-invoke',
    origin: 'https://shop.example',
    tabId: 10 + i,
    frameId: 0,
    documentId: `doc-${i}`,
    toolName: 'add_to_cart',
    descriptorHash: HASH_A,
    argumentsHash: HASH_B,
    operation: 'invoke',
    subjectHash: HASH_A,
    actor: { kind: 'agent', name: 'claude-code', version: '1.2.3' },
    detail: { step: i, note: 'ok' },
    ...over,
  };
}

/** A minimal console event. */
export function consoleInput(over: Partial<ReceiptInput> = {}): ReceiptInput {
  return { requestId: null, event: 'link-connected', faculty: 'link', actor: { kind: 'console' }, ...over };
}

/**
 * The format-1 schema exactly as the first ledger code created it (schema.ts at
 * format 1: the table without `operation`/`subject_hash`, its five indexes and
 * the guard triggers), kept here verbatim so that migration tests start from a
 * real format-1 file and not from one the current code made.
 */
const FORMAT_1_SQL = `
CREATE TABLE receipts (
  seq             INTEGER PRIMARY KEY AUTOINCREMENT,
  id              TEXT    NOT NULL UNIQUE,
  time            INTEGER NOT NULL,
  request_id      TEXT,
  event           TEXT    NOT NULL,
  faculty         TEXT    NOT NULL,
  origin          TEXT,
  tab_id          INTEGER,
  frame_id        INTEGER,
  document_id     TEXT,
  tool_name       TEXT,
  descriptor_hash TEXT,
  arguments_hash  TEXT,
  actor           TEXT    NOT NULL,
  detail          TEXT    NOT NULL,
  prev_hash       TEXT    NOT NULL,
  hash            TEXT    NOT NULL
) STRICT;
CREATE INDEX receipts_time ON receipts(time);
CREATE INDEX receipts_origin ON receipts(origin, time, seq, event, tool_name);
CREATE INDEX receipts_tool ON receipts(tool_name, time, seq, event, origin);
CREATE INDEX receipts_event ON receipts(event, time, seq, origin, tool_name);
CREATE INDEX receipts_request ON receipts(request_id, time);
CREATE TRIGGER receipts_no_update BEFORE UPDATE ON receipts
BEGIN SELECT RAISE(ABORT, 'receipts are append-only: UPDATE refused'); END;
CREATE TRIGGER receipts_no_delete BEFORE DELETE ON receipts
BEGIN SELECT RAISE(ABORT, 'receipts are append-only: DELETE refused'); END;
CREATE TRIGGER receipts_append_next BEFORE INSERT ON receipts
WHEN NEW.seq IS NOT (SELECT COALESCE(MAX(seq), 0) + 1 FROM receipts)
BEGIN SELECT RAISE(ABORT, 'receipts are append-only: INSERT must take the next seq'); END;
PRAGMA application_id = 1162037327;
PRAGMA user_version = 1;
`;

/** A format-1 receipt as the old code stored it (without hash): the 16 chained fields. */
export type Format1Receipt = Omit<Receipt, 'hash' | 'operation' | 'subjectHash'>;

/**
 * Write a format-1 ledger file the way the first ledger code did, with raw SQL
 * and the format-1 formula computed here from the shared canonicalJson (not
 * chain.ts): hash = SHA-256(prevHash || canonicalJson(the 16 fields)).
 * `inputs` must be plain (no redaction or truncation needed); times are
 * `t0 + index` ms. Returns the stored rows as Receipt objects of format 1.
 */
export function writeFormat1Ledger(file: string, inputs: ReceiptInput[], t0 = 1_700_000_000_000): (Format1Receipt & { hash: string })[] {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.exec(FORMAT_1_SQL);
  const insert = db.prepare(
    'INSERT INTO receipts (seq, id, time, request_id, event, faculty, origin, tab_id, frame_id, document_id, tool_name, ' +
      'descriptor_hash, arguments_hash, actor, detail, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
  );
  const out: (Format1Receipt & { hash: string })[] = [];
  let prevHash = '0'.repeat(64);
  db.transaction(() => {
    inputs.forEach((input, i) => {
      const r: Format1Receipt = {
        seq: i + 1,
        id: randomUUID(),
        time: t0 + i,
        requestId: input.requestId,
        event: input.event,
        faculty: input.faculty,
        origin: input.origin ?? null,
        tabId: input.tabId ?? null,
        frameId: input.frameId ?? null,
        documentId: input.documentId ?? null,
        toolName: input.toolName ?? null,
        descriptorHash: input.descriptorHash ?? null,
        argumentsHash: input.argumentsHash ?? null,
        actor: input.actor,
        detail: input.detail ?? null,
        prevHash,
      };
      const hash = sha256HexSync(prevHash + canonicalJson(r));
      insert.run(
        r.seq, r.id, r.time, r.requestId, r.event, r.faculty, r.origin, r.tabId, r.frameId, r.documentId, r.toolName,
        r.descriptorHash, r.argumentsHash, canonicalJson(r.actor), canonicalJson(r.detail), r.prevHash, hash,
      );
      out.push({ ...r, hash });
      prevHash = hash;
    });
  })();
  db.close();
  return out;
}

/**
 * A format-2 ledger as the code before format 3 (retention) wrote it: the
 * format-1 schema migrated to 2 (MIGRATE_1_TO_2_SQL), then one row per input by
 * the format-2 rule (`detail` inside the hash; operation and subjectHash in it
 * unless both are null). Returns the receipts as that code returned them.
 */
export function writeFormat2Ledger(file: string, inputs: ReceiptInput[], t0 = 1_700_000_000_000): Receipt[] {
  writeFormat1Ledger(file, [], t0);
  const db = new Database(file);
  db.exec(MIGRATE_1_TO_2_SQL);
  db.pragma('user_version = 2');
  const insert = db.prepare(
    'INSERT INTO receipts (seq, id, time, request_id, event, faculty, origin, tab_id, frame_id, document_id, tool_name, ' +
      'descriptor_hash, arguments_hash, actor, detail, prev_hash, hash, operation, subject_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
  );
  const out: Receipt[] = [];
  let prevHash = '0'.repeat(64);
  db.transaction(() => {
    inputs.forEach((input, i) => {
      const r: Omit<Receipt, 'hash'> = {
        seq: i + 1, id: randomUUID(), time: t0 + i, requestId: input.requestId, event: input.event, faculty: input.faculty,
        origin: input.origin ?? null, tabId: input.tabId ?? null, frameId: input.frameId ?? null, documentId: input.documentId ?? null,
        toolName: input.toolName ?? null, descriptorHash: input.descriptorHash ?? null, argumentsHash: input.argumentsHash ?? null,
        operation: input.operation ?? null, subjectHash: input.subjectHash ?? null, actor: input.actor, detail: input.detail ?? null, prevHash,
      };
      const chained: Record<string, unknown> = { ...r };
      if (r.operation === null && r.subjectHash === null) {
        delete chained.operation;
        delete chained.subjectHash;
      }
      const hash = sha256HexSync(prevHash + canonicalJson(chained));
      insert.run(
        r.seq, r.id, r.time, r.requestId, r.event, r.faculty, r.origin, r.tabId, r.frameId, r.documentId, r.toolName,
        r.descriptorHash, r.argumentsHash, canonicalJson(r.actor), canonicalJson(r.detail), r.prevHash, hash, r.operation, r.subjectHash,
      );
      out.push({ ...r, hash });
      prevHash = hash;
    });
  })();
  db.close();
  return out;
}
