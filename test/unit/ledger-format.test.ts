/**
 * Ledger format 2 (receipt `operation` and `subjectHash`): a format-1 file
 * written as the first ledger code wrote it (support/ledger-fixtures.ts) is read
 * as it is when opened read-only, and migrated in one transaction when opened
 * read-write; every old row keeps its hash and verifies, new rows with and
 * without the fields verify, and tampering with the new columns is caught.
 */
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LEDGER_FORMAT, Ledger, LedgerFormatError } from '../../src/main/core/ledger/index';
import { TRIGGERS_SQL } from '../../src/main/core/ledger/schema';
import type { ReceiptInput } from '../../src/shared/receipt';
import { HASH_A, consoleInput, fullInput, tempDir, writeFormat1Ledger } from './support/ledger-fixtures';

let tmp: ReturnType<typeof tempDir>;
let file: string;
let old: ReturnType<typeof writeFormat1Ledger>;

/** Format-1 inputs: invocations, discoveries and console events, none with the new fields. */
function oldInputs(n: number): ReceiptInput[] {
  return Array.from({ length: n }, (_, i) => {
    const { operation: _o, subjectHash: _s, ...v1 } = fullInput(i);
    if (i % 5 === 0) return consoleInput({ detail: { i } });
    if (i % 5 === 1) return { ...v1, event: 'discovered' as const, faculty: 'webmcp-discover' as const };
    return v1;
  });
}

const PAR = { minRows: 0, rangeRows: 16, threads: 3 };

function raw(fn: (db: Database.Database) => void, f = file): void {
  const db = new Database(f);
  try {
    fn(db);
  } finally {
    db.close();
  }
}

const userVersion = (f = file): number => {
  let v = 0;
  raw((db) => (v = db.pragma('user_version', { simple: true }) as number), f);
  return v;
};
const columns = (db: Database.Database): string[] => (db.pragma('table_info(receipts)') as { name: string }[]).map((c) => c.name);
const schemaObjects = (db: Database.Database): string[] =>
  (db.prepare("SELECT type || ' ' || name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY 1").pluck().all() as string[]);

beforeEach(() => {
  tmp = tempDir('ledger-format-');
  file = tmp.file('v1.db');
  old = writeFormat1Ledger(file, oldInputs(100));
});
afterEach(() => tmp.cleanup());

describe('a format-1 ledger', () => {
  it('is the fixture we think it is: format 1, no new columns', () => {
    expect(userVersion()).toBe(1);
    raw((db) => expect(columns(db)).not.toContain('operation'));
  });

  it('opened read-only: left at format 1, verifies, and reads the new fields as null', async () => {
    const l = new Ledger(file, { readonly: true });
    try {
      expect(l.format).toBe(1);
      expect(l.verify({ parallel: false })).toEqual({ ok: true, count: 100, headHash: old[99]?.hash });
      expect(l.verify({ parallel: PAR })).toEqual({ ok: true, count: 100, headHash: old[99]?.hash });
      expect(await l.verifyAsync({ parallel: PAR })).toEqual({ ok: true, count: 100, headHash: old[99]?.hash });
      const newest = l.query({ limit: 1 }).receipts[0];
      expect(newest).toEqual({ ...old[99], operation: null, subjectHash: null });
      expect(l.query({ operation: 'invoke' }).receipts).toEqual([]);
      expect(l.query({ subjectHash: HASH_A }).receipts).toEqual([]);
      expect(l.openRequests()).toEqual([]);
      expect(l.unresolvedOutcomeUnknowns()).toEqual([]);
    } finally {
      l.close();
    }
    expect(userVersion()).toBe(1);
  });

  it('opened read-write: migrated to the current format with the table and indexes of a new ledger, every old hash kept', () => {
    const l = new Ledger(file);
    try {
      expect(l.format).toBe(LEDGER_FORMAT);
      expect(LEDGER_FORMAT).toBe(5);
      expect(l.verify({ parallel: false })).toEqual({ ok: true, count: 100, headHash: old[99]?.hash });
      const all = l.query({ limit: 500 }).receipts.reverse();
      expect(all).toEqual(old.map((r) => ({ ...r, operation: null, subjectHash: null })));
    } finally {
      l.close();
    }
    expect(userVersion()).toBe(LEDGER_FORMAT);
    const fresh = tmp.file('fresh.db');
    new Ledger(fresh).close();
    let want: { cols: string[]; objects: string[] } = { cols: [], objects: [] };
    raw((db) => (want = { cols: columns(db), objects: schemaObjects(db) }), fresh);
    raw((db) => {
      expect(columns(db)).toEqual(want.cols);
      expect(schemaObjects(db)).toEqual(want.objects);
      expect(want.objects).toEqual(expect.arrayContaining(['index receipts_operation', 'index receipts_subject', 'index receipts_discovered']));
    });
  });

  it('after the migration, new rows with and without the fields chain on and verify (single thread and workers)', async () => {
    const l = new Ledger(file);
    try {
      const added = l.appendBatch([
        fullInput(200),
        fullInput(201, { operation: 'discover', subjectHash: null }),
        fullInput(202, { operation: null, subjectHash: 'f'.repeat(64) }),
        consoleInput(),
      ]);
      expect(added[0]?.prevHash).toBe(old[99]?.hash);
      expect(added.map((r) => [r.operation, r.subjectHash])).toEqual([['invoke', HASH_A], ['discover', null], [null, 'f'.repeat(64)], [null, null]]);
      const report = { ok: true, count: 104, headHash: added[3]?.hash };
      expect(l.verify({ parallel: false })).toEqual(report);
      expect(l.verify({ parallel: PAR })).toEqual(report);
      expect(await l.verifyAsync({ parallel: PAR })).toEqual(report);
      expect(l.query({ operation: 'invoke' }).receipts.map((r) => r.seq)).toEqual([101]);
    } finally {
      l.close();
    }
    // A second read-write open finds the current format and changes nothing.
    new Ledger(file).close();
    expect(userVersion()).toBe(LEDGER_FORMAT);
  });

  it.each([
    ['an operation written into an old row', "UPDATE receipts SET operation = 'invoke' WHERE seq = 40"],
    ['a subjectHash written into an old row', `UPDATE receipts SET subject_hash = '${HASH_A}' WHERE seq = 40`],
  ])('after the migration, %s is caught by verify and by the workers', async (_name, sql) => {
    new Ledger(file).close();
    raw((db) => db.exec(`DROP TRIGGER receipts_no_update; ${sql}; ${TRIGGERS_SQL}`));
    const l = new Ledger(file, { readonly: true });
    try {
      const want = { ok: false, count: 39, headHash: old[38]?.hash, firstBroken: { seq: 40, id: old[39]?.id, reason: expect.stringMatching(/hash does not match/) } };
      expect(l.verify({ parallel: false })).toEqual(want);
      expect(l.verify({ parallel: PAR })).toEqual(want);
      expect(await l.verifyAsync({ parallel: PAR })).toEqual(want);
    } finally {
      l.close();
    }
  });

  it('a migration that fails is rolled back whole: still format 1, nothing added, and the open fails plainly', () => {
    // A column of that name already there makes the second ADD COLUMN fail, after the first one succeeded.
    raw((db) => db.exec('ALTER TABLE receipts ADD COLUMN subject_hash TEXT'));
    expect(() => new Ledger(file)).toThrow(LedgerFormatError);
    expect(() => new Ledger(file)).toThrow(/cannot migrate ledger format 1 to 2: .*duplicate column name: subject_hash/);
    expect(userVersion()).toBe(1);
    raw((db) => {
      expect(columns(db)).not.toContain('operation');
      expect(schemaObjects(db)).not.toContain('index receipts_operation');
    });
  });
});
