/**
 * Tampering, as an attacker with the file would do it: open it with raw
 * better-sqlite3, drop the guard triggers, then change one character of each
 * column, delete a row, swap two rows, cut the tail, or rewrite history with
 * recomputed hashes. Each must make verify (or verifyAgainst) fail and name the place.
 */
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Ledger } from '../../src/main/core/ledger/index';
import { TRIGGERS_SQL } from '../../src/main/core/ledger/schema';
import { ROW_COLUMNS, ROW_COLUMNS_SQL, canonicalReceiptText, chainHash, payloadHashOf, type RawRow } from '../../src/main/core/ledger/chain';
import type { Checkpoint } from '../../src/shared/receipt';
import { fullInput, tempDir } from './support/ledger-fixtures';

let tmp: ReturnType<typeof tempDir>;
let file: string;

beforeEach(() => {
  tmp = tempDir('ledger-tamper-');
  file = tmp.file('l.db');
  const l = new Ledger(file);
  l.appendBatch(Array.from({ length: 7 }, (_, i) => fullInput(i + 1)));
  l.close();
});
afterEach(() => tmp.cleanup());

/**
 * Run `fn` on a raw connection with the guard triggers dropped, as an attacker would, who
 * then puts them back (a missing trigger alone fails verify: ledger-checkpoints.test.ts).
 */
function attack(fn: (db: Database.Database) => void): void {
  const db = new Database(file);
  db.exec('DROP TRIGGER IF EXISTS receipts_no_update; DROP TRIGGER IF EXISTS receipts_no_delete; DROP TRIGGER IF EXISTS receipts_append_next;');
  fn(db);
  db.exec(TRIGGERS_SQL);
  db.close();
}

function withLedger<T>(fn: (l: Ledger) => T): T {
  const l = new Ledger(file);
  try {
    return fn(l);
  } finally {
    l.close();
  }
}

/** Change one character: the last letter or digit, to a different one of the same kind (keeps JSON valid). */
function flipChar(s: string): string {
  for (let i = s.length - 1; i >= 0; i--) {
    const c = s[i] as string;
    let d: string | null = null;
    if (/[0-8]/.test(c)) d = String(Number(c) + 1);
    else if (c === '9') d = '8';
    else if (/[a-y]/.test(c)) d = String.fromCharCode(c.charCodeAt(0) + 1);
    else if (c === 'z') d = 'y';
    if (d !== null) return s.slice(0, i) + d + s.slice(i + 1);
  }
  throw new Error(`nothing to flip in ${s}`);
}

function flipNumber(n: number): number {
  return n % 10 === 9 ? n - 1 : n + 1; // one decimal digit changes
}

const HASH_MISMATCH = /hash does not match the receipt content/;
const expected: Record<(typeof ROW_COLUMNS)[number], RegExp> = {
  seq: /receipt 4 is missing/,
  id: HASH_MISMATCH,
  time: HASH_MISMATCH,
  request_id: HASH_MISMATCH,
  event: HASH_MISMATCH,
  faculty: HASH_MISMATCH,
  origin: HASH_MISMATCH,
  tab_id: HASH_MISMATCH,
  frame_id: HASH_MISMATCH,
  document_id: HASH_MISMATCH,
  tool_name: HASH_MISMATCH,
  descriptor_hash: HASH_MISMATCH,
  arguments_hash: HASH_MISMATCH,
  actor: HASH_MISMATCH,
  // Format 3: the hash covers the payload hash; the detail is checked against that.
  detail: /the detail does not match its payloadHash/,
  prev_hash: /prevHash does not match the hash of receipt 3/,
  hash: HASH_MISMATCH,
  operation: HASH_MISMATCH,
  subject_hash: HASH_MISMATCH,
  payload_hash: HASH_MISMATCH,
  // Marked erased while the payload is still there: not what retention leaves.
  erased_at: /marked erased, but the detail is still there/,
};

describe('tampering is detected', () => {
  it.each(ROW_COLUMNS.map((c) => [c]))('one character changed in column %s of receipt 4', (column) => {
    let before: unknown;
    attack((db) => {
      before = db.prepare(`SELECT ${column} AS v FROM receipts WHERE seq = 4`).pluck().get();
      const after = column === 'seq' ? 9 : before === null ? 1 : typeof before === 'number' ? flipNumber(before) : flipChar(String(before));
      expect(after).not.toEqual(before);
      db.prepare(`UPDATE receipts SET ${column} = ? WHERE seq = 4`).run(after);
    });
    const report = withLedger((l) => l.verify());
    expect(report.ok).toBe(false);
    expect(report.firstBroken?.seq).toBe(4);
    expect(report.firstBroken?.reason).toMatch(expected[column]);
    expect(report.count).toBe(3); // the intact prefix
  });

  it('operation and subjectHash removed together (the canonical text then leaves both out)', () => {
    attack((db) => db.prepare('UPDATE receipts SET operation = NULL, subject_hash = NULL WHERE seq = 4').run());
    const report = withLedger((l) => l.verify());
    expect(report).toMatchObject({ ok: false, count: 3, firstBroken: { seq: 4, reason: expect.stringMatching(HASH_MISMATCH) } });
  });

  it('only subjectHash removed, or swapped for another valid hash', () => {
    attack((db) => db.prepare('UPDATE receipts SET subject_hash = NULL WHERE seq = 4').run());
    expect(withLedger((l) => l.verify())).toMatchObject({ ok: false, count: 3, firstBroken: { seq: 4 } });
    attack((db) => db.prepare("UPDATE receipts SET subject_hash = ? WHERE seq = 4").run('f'.repeat(64)));
    expect(withLedger((l) => l.verify())).toMatchObject({ ok: false, count: 3, firstBroken: { seq: 4 } });
  });

  it('a structural change to actor JSON is named too', () => {
    attack((db) => db.prepare("UPDATE receipts SET actor = substr(actor, 1, length(actor) - 1) WHERE seq = 4").run());
    const report = withLedger((l) => l.verify());
    expect(report.firstBroken).toMatchObject({ seq: 4, reason: expect.stringMatching(/actor or detail is not valid JSON/) });
  });

  it('a deleted middle row', () => {
    attack((db) => db.prepare('DELETE FROM receipts WHERE seq = 4').run());
    const report = withLedger((l) => l.verify());
    expect(report).toMatchObject({ ok: false, count: 3, firstBroken: { seq: 4, reason: expect.stringMatching(/receipt 4 is missing/) } });
  });

  it('two rows reordered (contents swapped, seq kept)', () => {
    attack((db) => {
      const cols = ROW_COLUMNS.filter((c) => c !== 'seq');
      const r3 = db.prepare(`SELECT ${cols.join(',')} FROM receipts WHERE seq = 3`).raw().get() as unknown[];
      const r5 = db.prepare(`SELECT ${cols.join(',')} FROM receipts WHERE seq = 5`).raw().get() as unknown[];
      const set = db.prepare(`UPDATE receipts SET ${cols.map((c) => `${c} = ?`).join(', ')} WHERE seq = ?`);
      db.prepare("UPDATE receipts SET id = 'tmp' WHERE seq = 5").run(); // id is UNIQUE
      set.run(...r5, 3);
      set.run(...r3, 5);
    });
    const report = withLedger((l) => l.verify());
    expect(report).toMatchObject({ ok: false, count: 2, firstBroken: { seq: 3 } });
  });

  it('a re-hashed row still breaks the next link', () => {
    attack((db) => {
      const row = db.prepare(`SELECT ${ROW_COLUMNS_SQL} FROM receipts WHERE seq = 4`).raw().get() as RawRow;
      row[14] = JSON.stringify({ step: 4, note: 'forged' });
      row[19] = payloadHashOf(row[14]); // format 4: the forger re-hashes the payload too
      const hash = chainHash(row[15], canonicalReceiptText(row));
      db.prepare('UPDATE receipts SET detail = ?, payload_hash = ?, hash = ? WHERE seq = 4').run(row[14], row[19], hash);
    });
    const report = withLedger((l) => l.verify());
    expect(report.firstBroken).toMatchObject({ seq: 5, reason: expect.stringMatching(/prevHash does not match the hash of receipt 4/) });
  });

  describe('against a checkpoint', () => {
    let cp: Checkpoint;
    beforeEach(() => {
      withLedger((l) => {
        cp = l.checkpoint(); // 7 receipts
        l.appendBatch([fullInput(8), fullInput(9)]);
      });
    });

    it('a tail cut off after the checkpoint (sqlite_sequence fixed up too)', () => {
      attack((db) => {
        db.prepare('DELETE FROM receipts WHERE seq > 5').run();
        db.prepare("UPDATE sqlite_sequence SET seq = 5 WHERE name = 'receipts'").run();
      });
      withLedger((l) => {
        expect(l.verify()).toMatchObject({ ok: true, count: 5 }); // the chain alone cannot tell
        expect(l.verifyAgainst(cp)).toMatchObject({
          ok: false,
          count: 5,
          firstBroken: { seq: 6, reason: expect.stringMatching(/tail cut off: the checkpoint recorded 7 receipts, the ledger ends at 5/) },
        });
      });
    });

    it('a tail deleted naively is caught even without a checkpoint', () => {
      attack((db) => db.prepare('DELETE FROM receipts WHERE seq > 5').run());
      const report = withLedger((l) => l.verify());
      expect(report).toMatchObject({ ok: false, count: 5, firstBroken: { seq: 6, reason: expect.stringMatching(/receipts 6\.\.9 are missing/) } });
    });

    it('history rewritten with every later hash recomputed', () => {
      attack((db) => {
        const rows = db.prepare(`SELECT ${ROW_COLUMNS_SQL} FROM receipts ORDER BY seq`).raw().all() as RawRow[];
        const set = db.prepare('UPDATE receipts SET detail = ?, payload_hash = ?, prev_hash = ?, hash = ? WHERE seq = ?');
        let prev = (rows[2] as RawRow)[16];
        for (const row of rows.slice(3)) {
          if (row[0] === 4) {
            row[14] = JSON.stringify({ step: 4, note: 'forged' });
            row[19] = payloadHashOf(row[14]);
          }
          row[15] = prev;
          row[16] = chainHash(prev, canonicalReceiptText(row));
          set.run(row[14], row[19], row[15], row[16], row[0]);
          prev = row[16];
        }
      });
      withLedger((l) => {
        expect(l.verify().ok).toBe(true); // a consistent forgery
        expect(l.verifyAgainst(cp)).toMatchObject({ ok: false, firstBroken: { seq: 7, reason: expect.stringMatching(/history rewritten/) } });
      });
    });
  });
});
