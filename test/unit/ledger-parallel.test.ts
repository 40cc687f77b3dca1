/**
 * Parallel verify (src/main/core/ledger/parallel.ts): worker threads check
 * ranges of the chain, the calling thread joins them. On every tampering, in
 * the first, middle or last row of a range and across the seams between
 * ranges, its report must be exactly the single-thread one (the lowest broken
 * seq, the same reason, the same intact prefix), both from `verify` (which also
 * checks ranges itself) and from `verifyAsync` (where workers check them all).
 * When workers cannot run, verify must fall back to the calling thread.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, renameSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Ledger, LedgerStateError, type ParallelVerifyOptions, type VerifyStats } from '../../src/main/core/ledger/index';
import { ROW_COLUMNS, ROW_COLUMNS_SQL, canonicalReceiptText, chainHash, payloadHashOf, type RawRow } from '../../src/main/core/ledger/chain';
import { TRIGGERS_SQL } from '../../src/main/core/ledger/schema';
import { VERIFY_WORKER_SOURCE, verifyWorkerRuntime } from '../../src/main/core/ledger/parallel';
import type { ReceiptInput, VerifyReport } from '../../src/shared/receipt';
import { consoleInput, fullInput, tempDir } from './support/ledger-fixtures';

const N = 1000;
const RANGE = 100; // ranges (0,100], (100,200], …, (900,1000]
const PAR: ParallelVerifyOptions = { minRows: 0, rangeRows: RANGE, threads: 3 };

let tmp: ReturnType<typeof tempDir>;
let file: string;

/**
 * Receipt `seq`'s input: mostly full ones, some console events, and every 50th
 * (seq 1, 51, 101, …) a detail whose keys spell out the fields after `actor`
 * (see 'content shifted between actor and detail').
 */
function inputAt(seq: number): ReceiptInput {
  if (seq % 50 === 1) return consoleInput({ detail: { a: 1, argumentsHash: null, descriptorHash: null, detail: {} } });
  return seq % 7 === 4 ? consoleInput({ detail: { i: seq } }) : fullInput(seq);
}

// One ledger built once, copied fresh for each test (closing it folded the WAL into the file).
const template = tempDir('ledger-parallel-template-');
beforeAll(() => {
  const l = new Ledger(template.file('l.db'));
  for (let i = 0; i < N; i += 250) l.appendBatch(Array.from({ length: 250 }, (_, k) => inputAt(i + k + 1)));
  l.close();
});
afterAll(() => template.cleanup());

beforeEach(() => {
  tmp = tempDir('ledger-parallel-');
  file = tmp.file('l.db');
  copyFileSync(template.file('l.db'), file);
});
afterEach(() => tmp.cleanup());

/** Run `fn` on a raw connection with the guard triggers dropped, as an attacker would. */
function attack(fn: (db: Database.Database) => void): void {
  const db = new Database(file);
  db.exec('DROP TRIGGER IF EXISTS receipts_no_update; DROP TRIGGER IF EXISTS receipts_no_delete; DROP TRIGGER IF EXISTS receipts_append_next;');
  fn(db);
  db.exec(TRIGGERS_SQL); // put back, as a careful attacker would (a missing trigger alone fails verify)
  db.close();
}

function rowAt(db: Database.Database, seq: number): RawRow {
  return db.prepare(`SELECT ${ROW_COLUMNS_SQL} FROM receipts WHERE seq = ?`).raw().get(seq) as RawRow;
}

/** Change the last letter or digit of a text to another one of the same kind (JSON stays valid). */
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

function flipColumn(db: Database.Database, seq: number, column: (typeof ROW_COLUMNS)[number]): void {
  const before: unknown = db.prepare(`SELECT ${column} FROM receipts WHERE seq = ?`).pluck().get(seq);
  let after: unknown;
  if (before === null) after = column === 'tab_id' || column === 'frame_id' ? 7 : 'x';
  else if (typeof before === 'number') after = before % 10 === 9 ? before - 1 : before + 1;
  else after = flipChar(String(before));
  db.prepare(`UPDATE receipts SET ${column} = ? WHERE seq = ?`).run(after, seq);
}

/** Re-hash receipt `seq` after changing its detail (a consistent forgery of that one row). */
function rehash(db: Database.Database, seq: number): void {
  const row = rowAt(db, seq);
  row[14] = JSON.stringify({ forged: seq });
  if (row[19]) row[19] = payloadHashOf(row[14]); // format 4: the payload hash too
  row[16] = chainHash(row[15], canonicalReceiptText(row));
  db.prepare('UPDATE receipts SET detail = ?, payload_hash = ?, hash = ? WHERE seq = ?').run(row[14], row[19] ?? null, row[16], seq);
}

interface Runs {
  single: VerifyReport;
  sync: VerifyReport;
  async: VerifyReport;
  syncStats: VerifyStats;
  asyncStats: VerifyStats;
}

/** Verify single-threaded, then in parallel with verify and verifyAsync; both parallel reports must equal the single one. */
async function runAll(par: ParallelVerifyOptions = PAR): Promise<Runs> {
  const l = new Ledger(file, { readonly: true });
  try {
    let syncStats: VerifyStats | undefined;
    let asyncStats: VerifyStats | undefined;
    const single = l.verify({ parallel: false });
    const sync = l.verify({ parallel: par, onStats: (s) => (syncStats = s) });
    const async = await l.verifyAsync({ parallel: par, onStats: (s) => (asyncStats = s) });
    expect(sync).toEqual(single);
    expect(async).toEqual(single);
    return { single, sync, async, syncStats: syncStats as VerifyStats, asyncStats: asyncStats as VerifyStats };
  } finally {
    l.close();
  }
}

describe('parallel verify on an intact ledger', () => {
  it('gives the single-thread report, with the ranges checked by workers', async () => {
    const r = await runAll();
    expect(r.single).toMatchObject({ ok: true, count: N });
    expect(r.syncStats).toMatchObject({ workers: 2, ranges: N / RANGE, workerErrors: [] });
    expect(r.syncStats.rangesByWorkers + r.syncStats.rangesByCaller).toBeGreaterThanOrEqual(N / RANGE);
    // verifyAsync keeps its own thread free: workers check every range.
    expect(r.asyncStats).toMatchObject({ workers: 3, ranges: N / RANGE, rangesByWorkers: N / RANGE, rangesByCaller: 0, workerErrors: [] });
  });

  it('reports progress per range, and a range size that does not divide the count', async () => {
    const l = new Ledger(file, { readonly: true });
    try {
      const seen: number[] = [];
      expect(l.verify({ parallel: { ...PAR, rangeRows: 300 }, onProgress: (n) => seen.push(n) })).toMatchObject({ ok: true, count: N });
      expect(seen).toEqual([300, 600, 900, 1000]);
      const seenAsync: number[] = [];
      expect(await l.verifyAsync({ parallel: { ...PAR, rangeRows: 300 }, onProgress: (n) => seenAsync.push(n) })).toMatchObject({ ok: true, count: N });
      expect(seenAsync).toEqual([300, 600, 900, 1000]);
    } finally {
      l.close();
    }
  });

  it('uses workers only from minRows receipts, and not with threads 1 in verify', () => {
    const l = new Ledger(file, { readonly: true });
    const stats: VerifyStats[] = [];
    try {
      l.verify({ onStats: (s) => stats.push(s) }); // default threshold: 50,000
      l.verify({ parallel: { ...PAR, minRows: N + 1 }, onStats: (s) => stats.push(s) });
      l.verify({ parallel: { ...PAR, minRows: N }, onStats: (s) => stats.push(s) });
      l.verify({ parallel: { ...PAR, threads: 1 }, onStats: (s) => stats.push(s) });
    } finally {
      l.close();
    }
    expect(stats.map((s) => s.workers)).toEqual([0, 0, 2, 0]);
  });
});

const POSITIONS = [1, 99, 100, 101, 150, 500, 501, N];
const COLUMNS: (typeof ROW_COLUMNS)[number][] = ['id', 'time', 'origin', 'tab_id', 'actor', 'detail', 'prev_hash', 'hash', 'operation', 'subject_hash'];

describe('parallel verify names the same first broken link as the single thread', () => {
  describe.each(POSITIONS.map((p) => [p]))('receipt %i', (p) => {
    it.each(COLUMNS.map((c) => [c]))('one character changed in %s', async (column) => {
      attack((db) => flipColumn(db, p, column));
      const r = await runAll();
      expect(r.single).toMatchObject({ ok: false, count: p - 1, firstBroken: { seq: p } });
    });

    it('deleted', async () => {
      attack((db) => db.prepare('DELETE FROM receipts WHERE seq = ?').run(p));
      const r = await runAll();
      if (p === N) {
        expect(r.single.firstBroken).toMatchObject({ seq: N, reason: expect.stringMatching(/the tail was deleted/) });
      } else {
        expect(r.single.firstBroken).toMatchObject({ seq: p, reason: expect.stringMatching(new RegExp(`receipt ${p} is missing`)) });
      }
    });

    it('re-hashed: the next link breaks', async () => {
      attack((db) => rehash(db, p));
      const r = await runAll();
      if (p === N) expect(r.single).toMatchObject({ ok: true, count: N }); // the chain alone cannot tell; a checkpoint can
      else expect(r.single.firstBroken).toMatchObject({ seq: p + 1, reason: `prevHash does not match the hash of receipt ${p}` });
    });

    it('actor made invalid JSON', async () => {
      attack((db) => db.prepare('UPDATE receipts SET actor = substr(actor, 1, length(actor) - 1) WHERE seq = ?').run(p));
      const r = await runAll();
      expect(r.single.firstBroken).toMatchObject({ seq: p, reason: expect.stringMatching(/not valid JSON/) });
    });
  });

  it('a prevHash at a seam with a character outside hex that only looks alike', async () => {
    // U+0161 has the low byte of "a": any transfer of the seam hash as bytes would hide it.
    attack((db) => {
      const prev = rowAt(db, 301)[15];
      const i = prev.search(/[a-f]/);
      db.prepare('UPDATE receipts SET prev_hash = ? WHERE seq = 301').run(prev.slice(0, i) + String.fromCharCode(0x100 + prev.charCodeAt(i)) + prev.slice(i + 1));
    });
    const r = await runAll();
    expect(r.single.firstBroken).toMatchObject({ seq: 301 });
  });

  it('breaks in several ranges: the lowest is named', async () => {
    attack((db) => {
      flipColumn(db, 870, 'detail');
      flipColumn(db, 420, 'origin');
      rehash(db, 640);
      flipColumn(db, 155, 'hash');
    });
    const r = await runAll();
    expect(r.single).toMatchObject({ ok: false, count: 154, firstBroken: { seq: 155 } });
  });

  it.each([[2], [100], [103], [N]])('operation and subjectHash of receipt %i both set to NULL (the hash input loses the two fields)', async (p) => {
    attack((db) => {
      expect(rowAt(db, p)[17]).toBe('invoke');
      db.prepare('UPDATE receipts SET operation = NULL, subject_hash = NULL WHERE seq = ?').run(p);
    });
    const r = await runAll();
    expect(r.single).toMatchObject({ ok: false, count: p - 1, firstBroken: { seq: p, reason: expect.stringMatching(/hash does not match/) } });
  });

  it.each([[1], [151], [501]])('an operation written into receipt %i, which had neither field', async (p) => {
    attack((db) => {
      expect(rowAt(db, p).slice(17, 19)).toEqual([null, null]);
      db.prepare("UPDATE receipts SET operation = 'invoke' WHERE seq = ?").run(p);
    });
    const r = await runAll();
    expect(r.single).toMatchObject({ ok: false, count: p - 1, firstBroken: { seq: p, reason: expect.stringMatching(/hash does not match/) } });
  });

  it('a whole range deleted', async () => {
    attack((db) => db.prepare('DELETE FROM receipts WHERE seq > 200 AND seq <= 300').run());
    const r = await runAll();
    expect(r.single).toMatchObject({ ok: false, count: 200, firstBroken: { seq: 201, reason: 'receipt 201 is missing (the next row has seq 301)' } });
  });

  it.each([[101], [151], [1]])('content shifted between actor and detail of receipt %i, the hash input unchanged', async (p) => {
    // actor + ',"argumentsHash":null,"descriptorHash":null,"detail":' + detail is the same text
    // when actor takes the start of detail: only "both are JSON" tells the rows apart.
    attack((db) => {
      const [actor, detail] = db.prepare('SELECT actor, detail FROM receipts WHERE seq = ?').raw().get(p) as [string, string];
      expect(detail).toBe('{"a":1,"argumentsHash":null,"descriptorHash":null,"detail":{}}');
      const forgedActor = `${actor},"argumentsHash":null,"descriptorHash":null,"detail":{"a":1`;
      db.prepare('UPDATE receipts SET actor = ?, detail = ? WHERE seq = ?').run(forgedActor, '{}}', p);
    });
    const r = await runAll();
    expect(r.single).toMatchObject({ ok: false, count: p - 1, firstBroken: { seq: p, reason: 'actor or detail is not valid JSON' } });
  });

  it('a row deleted inside a range and the next one relinked and re-hashed', async () => {
    attack((db) => {
      db.prepare('DELETE FROM receipts WHERE seq = 150').run();
      const row = rowAt(db, 151);
      row[15] = rowAt(db, 149)[16];
      row[16] = chainHash(row[15], canonicalReceiptText(row));
      db.prepare('UPDATE receipts SET prev_hash = ?, hash = ? WHERE seq = 151').run(row[15], row[16]);
    });
    const r = await runAll();
    expect(r.single).toMatchObject({ ok: false, count: 149, firstBroken: { seq: 150, reason: 'receipt 150 is missing (the next row has seq 151)' } });
  });

  it('the last rows of a range deleted, and the next range relinked to the row before them', async () => {
    attack((db) => {
      db.prepare('DELETE FROM receipts WHERE seq > 95 AND seq <= 100').run();
      const row = rowAt(db, 101);
      row[15] = rowAt(db, 95)[16];
      row[16] = chainHash(row[15], canonicalReceiptText(row));
      db.prepare('UPDATE receipts SET prev_hash = ?, hash = ? WHERE seq = 101').run(row[15], row[16]);
    });
    const r = await runAll();
    expect(r.single).toMatchObject({ ok: false, count: 95, firstBroken: { seq: 96, reason: 'receipt 96 is missing (the next row has seq 101)' } });
  });

  it('two rows swapped across a seam', async () => {
    attack((db) => {
      const cols = ROW_COLUMNS.filter((c) => c !== 'seq');
      const a = db.prepare(`SELECT ${cols.join(',')} FROM receipts WHERE seq = 100`).raw().get() as unknown[];
      const b = db.prepare(`SELECT ${cols.join(',')} FROM receipts WHERE seq = 101`).raw().get() as unknown[];
      const set = db.prepare(`UPDATE receipts SET ${cols.map((c) => `${c} = ?`).join(', ')} WHERE seq = ?`);
      db.prepare("UPDATE receipts SET id = 'tmp' WHERE seq = 101").run();
      set.run(...b, 100);
      set.run(...a, 101);
    });
    const r = await runAll();
    expect(r.single).toMatchObject({ ok: false, count: 99, firstBroken: { seq: 100 } });
  });

  it('a seq moved far beyond the head: no range plan, the gap is found on the calling thread', async () => {
    attack((db) => db.prepare('UPDATE receipts SET seq = ? WHERE seq = 250').run(Number.MAX_SAFE_INTEGER));
    const r = await runAll();
    expect(r.single).toMatchObject({ ok: false, count: 249, firstBroken: { seq: 250, reason: 'receipt 250 is missing (the next row has seq 251)' } });
    expect(r.syncStats.workers).toBe(0);
    expect(r.asyncStats.workers).toBe(0);
  });

  it('a tail deleted naively, and history rewritten (caught by the checkpoint)', async () => {
    const l = new Ledger(file);
    const cp = l.checkpoint();
    l.close();
    attack((db) => {
      const rows = db.prepare(`SELECT ${ROW_COLUMNS_SQL} FROM receipts WHERE seq >= 450 ORDER BY seq`).raw().all() as RawRow[];
      const set = db.prepare('UPDATE receipts SET detail = ?, payload_hash = ?, prev_hash = ?, hash = ? WHERE seq = ?');
      let prev = rowAt(db, 449)[16];
      for (const row of rows) {
        if (row[0] === 450) {
          row[14] = JSON.stringify({ forged: true });
          if (row[19]) row[19] = payloadHashOf(row[14]);
        }
        row[15] = prev;
        row[16] = chainHash(prev, canonicalReceiptText(row));
        set.run(row[14], row[19] ?? null, row[15], row[16], row[0]);
        prev = row[16];
      }
    });
    const r = await runAll();
    expect(r.single).toMatchObject({ ok: true, count: N }); // a consistent forgery
    const l2 = new Ledger(file, { readonly: true });
    try {
      expect(l2.verifyAgainst(cp, { parallel: PAR })).toMatchObject({ ok: false, firstBroken: { seq: N, reason: expect.stringMatching(/history rewritten/) } });
    } finally {
      l2.close();
    }
    attack((db) => db.prepare('DELETE FROM receipts WHERE seq > 777').run());
    const cut = await runAll();
    expect(cut.single).toMatchObject({ ok: false, count: 777, firstBroken: { seq: 778, reason: `receipts 778..${N} are missing: the tail was deleted` } });
  });
});

describe('when workers cannot run, verify falls back to the calling thread', () => {
  const saved = { ...verifyWorkerRuntime };
  afterEach(() => Object.assign(verifyWorkerRuntime, saved));

  beforeEach(() => {
    attack((db) => flipColumn(db, 333, 'detail'));
  });

  it('better-sqlite3 cannot be loaded in the worker', async () => {
    verifyWorkerRuntime.sqliteEntry = () => path.join(tmp.dir, 'no-such-module.js');
    const r = await runAll();
    expect(r.single.firstBroken).toMatchObject({ seq: 333 });
    expect(r.syncStats.rangesByWorkers).toBe(0);
    expect(r.asyncStats.rangesByWorkers).toBe(0);
    expect(r.asyncStats.workerErrors.join('\n')).toMatch(/worker could not start: Cannot find module/);
  });

  it('the worker code throws before it starts', async () => {
    verifyWorkerRuntime.source = "throw new Error('boom');";
    const r = await runAll();
    expect(r.single.firstBroken).toMatchObject({ seq: 333 });
    expect(r.asyncStats.rangesByWorkers).toBe(0);
    expect(r.asyncStats.workerErrors.join('\n')).toMatch(/boom/);
  });

  it('a worker dies holding a range it claimed', async () => {
    // Claims one range, then exits without a word, as a killed thread would.
    verifyWorkerRuntime.source = `const { workerData } = require('node:worker_threads');
      Atomics.add(new Int32Array(workerData.control), 0, 1);
      workerData.port.close();`;
    verifyWorkerRuntime.stalledRangeMs = 200;
    const r = await runAll({ ...PAR, threads: 2 });
    expect(r.single.firstBroken).toMatchObject({ seq: 333 });
    expect(r.syncStats.rangesByWorkers).toBe(0);
  });

  it('the worker source in use is the shipped one', () => {
    expect(saved.source).toBe(VERIFY_WORKER_SOURCE);
  });
});

describe('the file workers open', () => {
  it('is the one the ledger opened, not another put at its path since', async () => {
    attack((db) => db.pragma('journal_mode = DELETE')); // no -wal/-shm tied to the path
    copyFileSync(file, tmp.file('pristine.db'));
    const l = new Ledger(file, { readonly: true });
    try {
      attack((db) => flipColumn(db, 500, 'detail'));
      renameSync(file, tmp.file('moved.db')); // the ledger still has the tampered file open
      renameSync(tmp.file('pristine.db'), file);
      let stats: VerifyStats | undefined;
      const single = l.verify({ parallel: false });
      expect(single.firstBroken).toMatchObject({ seq: 500 });
      expect(l.verify({ parallel: PAR })).toEqual(single);
      expect(await l.verifyAsync({ parallel: PAR, onStats: (s) => (stats = s) })).toEqual(single);
      expect(stats?.workerErrors.join('\n')).toMatch(/is not the one the ledger opened/);
    } finally {
      l.close();
    }
  });

  it('is found by its absolute path after the working directory changed', async () => {
    const rel = path.relative(process.cwd(), file);
    const l = new Ledger(rel, { readonly: true });
    const cwd = process.cwd();
    try {
      const elsewhere = tmp.file('a/b/c');
      mkdirSync(elsewhere, { recursive: true });
      process.chdir(elsewhere);
      let stats: VerifyStats | undefined;
      expect(await l.verifyAsync({ parallel: PAR, onStats: (s) => (stats = s) })).toMatchObject({ ok: true, count: N });
      expect(stats).toMatchObject({ rangesByWorkers: N / RANGE, workerErrors: [] });
    } finally {
      process.chdir(cwd);
      l.close();
    }
  });
});

describe('parallel verifyAsync', () => {
  it('lets appends run meanwhile and covers the head it started from', async () => {
    const l = new Ledger(file);
    try {
      const report = await l.verifyAsync({ parallel: PAR, onProgress: () => l.append(consoleInput()) });
      expect(report).toMatchObject({ ok: true, count: N });
      expect(l.head().count).toBeGreaterThan(N);
      expect(l.verify({ parallel: PAR }).ok).toBe(true);
    } finally {
      l.close();
    }
  });

  it('can be aborted, and throws LedgerStateError when the ledger is closed meanwhile', async () => {
    const l = new Ledger(file);
    const ac = new AbortController();
    await expect(l.verifyAsync({ parallel: PAR, signal: ac.signal, onProgress: () => ac.abort(new Error('stop')) })).rejects.toThrow('stop');
    await expect(l.verifyAsync({ parallel: PAR, onProgress: () => l.close() })).rejects.toThrow(LedgerStateError);
  });
});

describe('under tsx (npm run ledger, npm run bench)', () => {
  it('workers start and check ranges', () => {
    const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
    const code = `
      import { Ledger } from './src/main/core/ledger/index.ts';
      const l = new Ledger(${JSON.stringify(file)}, { readonly: true });
      let stats;
      const report = l.verify({ parallel: { minRows: 0, rangeRows: 100, threads: 2 }, onStats: (s) => (stats = s) });
      const asyncReport = await l.verifyAsync({ parallel: { minRows: 0, rangeRows: 100, threads: 2 } });
      console.log(JSON.stringify({ report, asyncReport, stats }));`;
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { cwd: root, encoding: 'utf8', timeout: 30_000 });
    expect(r.stderr).toBe('');
    const out = JSON.parse(r.stdout) as { report: VerifyReport; asyncReport: VerifyReport; stats: VerifyStats };
    expect(out.report).toMatchObject({ ok: true, count: N });
    expect(out.asyncReport).toEqual(out.report);
    expect(out.stats).toMatchObject({ workers: 1, workerErrors: [] });
  });
});
