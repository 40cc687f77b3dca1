/**
 * The receipt ledger's API: append (validation, redaction, bounding, chaining,
 * durability across reopen), onAppend, query (filters, pagination, index use),
 * checkpoints, export, append-only triggers, and opening rules.
 */
import { PassThrough } from 'node:stream';
import { existsSync, fstatSync, fsync, readFileSync, statSync, writeFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/shared/canonical';
import { sha256HexSync } from '../../src/main/core/digest';
import { LIMITS, utf8Bytes } from '../../src/shared/limits';
import type { Receipt, ReceiptInput } from '../../src/shared/receipt';
import {
  GENESIS_PREV_HASH, Ledger, LedgerDurabilityError, LedgerFormatError, LedgerInputError, LedgerStateError, TRUNCATION_KEY, MAX_PAGE_LIMIT, VERIFY_CHUNK,
} from '../../src/main/core/ledger/index';
import { WalDurability } from '../../src/main/core/ledger/durability';
import { consoleInput, fullInput, tempDir } from './support/ledger-fixtures';

let tmp: ReturnType<typeof tempDir>;
let ledger: Ledger;
let clock: number;

beforeEach(() => {
  tmp = tempDir();
  clock = 1_700_000_000_000;
  ledger = new Ledger(tmp.file('l.db'), { now: () => clock++ });
});
afterEach(() => {
  ledger.close();
  tmp.cleanup();
});

/**
 * The formula, computed independently of chain.ts: SHA-256(prevHash || canonicalJson(receipt without hash)),
 * where operation and subjectHash are left out when both are null (format-1 receipts hash as before).
 */
function expectedHash(r: Receipt): string {
  const { hash: _hash, ...rest } = r;
  const chained: Record<string, unknown> = { ...rest };
  if (r.operation === null && r.subjectHash === null) {
    delete chained.operation;
    delete chained.subjectHash;
  }
  // Format 3: the payload is hashed apart and its hash stands in for it.
  if (r.payloadHash !== undefined) {
    expect(r.payloadHash).toBe(sha256HexSync(canonicalJson(r.detail)));
    delete chained.detail;
  }
  return sha256HexSync(r.prevHash + canonicalJson(chained));
}

describe('append', () => {
  it('assigns seq, UUID v4 id, time and chains each hash to the previous one', () => {
    const a = ledger.append(fullInput(1));
    const b = ledger.append(consoleInput());
    expect(a.seq).toBe(1);
    expect(b.seq).toBe(2);
    expect(a.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(a.id).not.toBe(b.id);
    expect(a.time).toBe(1_700_000_000_000);
    expect(a.prevHash).toBe(GENESIS_PREV_HASH);
    expect(b.prevHash).toBe(a.hash);
    expect(a.hash).toBe(expectedHash(a));
    expect(b.hash).toBe(expectedHash(b));
    expect(b).toMatchObject({ origin: null, tabId: null, frameId: null, documentId: null, toolName: null, detail: null });
  });

  it('is durable: a reopened ledger returns the same receipts and verifies', () => {
    const stored = [ledger.append(fullInput(1)), ledger.append(fullInput(2))];
    ledger.close();
    ledger = new Ledger(tmp.file('l.db'));
    expect(ledger.query({}).receipts.reverse()).toEqual(stored);
    expect(ledger.verify()).toEqual({ ok: true, count: 2, headHash: stored[1]?.hash });
    expect(ledger.append(consoleInput()).prevHash).toBe(stored[1]?.hash);
  });

  it('runs with WAL and synchronous=NORMAL (the fsync of the log is the ledger\'s own, off the event loop)', () => {
    const raw = new Database(tmp.file('l.db'));
    expect(raw.pragma('journal_mode', { simple: true })).toBe('wal');
    raw.close();
    // synchronous is a per-connection setting: read the ledger's own connection.
    const db = (ledger as unknown as { db: Database.Database }).db;
    expect(db.pragma('synchronous', { simple: true })).toBe(1); // NORMAL
  });

  const bad: [string, unknown, RegExp][] = [
    ['not an object', 'hello', /must be an object/],
    ['unknown event', { ...fullInput(), event: 'hacked' }, /event must be one of/],
    ['unknown faculty', { ...fullInput(), faculty: 'root' }, /faculty must be one of/],
    ['missing requestId', { ...fullInput(), requestId: undefined }, /requestId must be a string or null/],
    ['numeric requestId', { ...fullInput(), requestId: 5 }, /requestId must be a string or null/],
    ['fractional tabId', { ...fullInput(), tabId: 1.5 }, /tabId must be an integer/],
    ['string frameId', { ...fullInput(), frameId: '0' }, /frameId must be an integer/],
    ['upper-case hash', { ...fullInput(), descriptorHash: 'A'.repeat(64) }, /descriptorHash must be 64 lowercase hex/],
    ['short hash', { ...fullInput(), argumentsHash: 'abc' }, /argumentsHash must be 64 lowercase hex/],
    ['short subjectHash', { ...fullInput(), subjectHash: 'ab'.repeat(31) }, /subjectHash must be 64 lowercase hex/],
    ['upper-case subjectHash', { ...fullInput(), subjectHash: 'AB'.repeat(32) }, /subjectHash must be 64 lowercase hex/],
    ['upper-case operation', { ...fullInput(), operation: 'Invoke' }, /operation must be 1 to 64 characters of \[a-z0-9-\]/],
    ['operation with a space', { ...fullInput(), operation: 'in voke' }, /operation must be 1 to 64/],
    ['empty operation', { ...fullInput(), operation: '' }, /operation must be 1 to 64/],
    ['operation of 65 characters', { ...fullInput(), operation: 'a'.repeat(65) }, /operation must be 1 to 64/],
    ['numeric operation', { ...fullInput(), operation: 5 }, /operation must be 1 to 64/],
    ['origin not a string', { ...fullInput(), origin: 42 }, /origin must be a string or null/],
    ['origin too long', { ...fullInput(), origin: 'x'.repeat(3000) }, /origin is 3000 characters/],
    ['no actor', { ...fullInput(), actor: undefined }, /actor must be an object/],
    ['unknown actor kind', { ...fullInput(), actor: { kind: 'robot' } }, /actor.kind must be one of/],
    ['prototype actor kind', { ...fullInput(), actor: { kind: 'toString' } }, /actor.kind must be one of/],
    ['extra actor field', { ...fullInput(), actor: { kind: 'agent', token: 'x' } }, /actor has an unknown field "token"/],
    ['caller-supplied seq', { ...fullInput(), seq: 9 }, /unknown field "seq"/],
    ['caller-supplied hash', { ...fullInput(), hash: 'a'.repeat(64) }, /unknown field "hash"/],
  ];
  it.each(bad)('refuses bad input: %s', (_name, input, message) => {
    expect(() => ledger.append(input as ReceiptInput)).toThrow(LedgerInputError);
    expect(() => ledger.append(input as ReceiptInput)).toThrow(message);
    expect(ledger.head().count).toBe(0);
  });

  it('appendBatch stores all or nothing', () => {
    expect(() => ledger.appendBatch([fullInput(1), { ...fullInput(2), event: 'nope' } as unknown as ReceiptInput])).toThrow(LedgerInputError);
    expect(ledger.head().count).toBe(0);
    const rs = ledger.appendBatch([fullInput(1), fullInput(2), fullInput(3)]);
    expect(rs.map((r) => r.seq)).toEqual([1, 2, 3]);
    expect(ledger.verify().ok).toBe(true);
  });

  it('replaces lone surrogates in text fields so the stored text is the hashed text', () => {
    const r = ledger.append(fullInput(1, { toolName: 'bad\ud800name', detail: { s: 'x\udc00' } }));
    expect(r.toolName).toBe('bad\ufffdname');
    expect(r.detail).toEqual({ s: 'x\ufffd' });
    expect(ledger.verify().ok).toBe(true);
  });

  it('keeps embedded NUL and non-BMP characters intact', () => {
    const r = ledger.append(fullInput(1, { origin: 'https://a\u0000b.example', toolName: '工具😀' }));
    expect(ledger.get(1)).toEqual(r);
    expect(ledger.verify().ok).toBe(true);
  });
});

describe('detail', () => {
  it('is redacted before it is stored', () => {
    ledger.append(fullInput(1, { detail: { password: 'hunter2', headers: 'Authorization: Bearer abcDEF123456789xyz', n: 1 } }));
    ledger.close();
    const wal = tmp.file('l.db-wal');
    const text = readFileSync(tmp.file('l.db')).toString('latin1') + (existsSync(wal) ? readFileSync(wal).toString('latin1') : '');
    expect(text).not.toContain('hunter2');
    expect(text).not.toContain('abcDEF123456789xyz');
    ledger = new Ledger(tmp.file('l.db'));
    expect(ledger.get(1)?.detail).toMatchObject({ password: '[redacted:password]', n: 1 });
  });

  it('is bounded to LIMITS.maxReceiptDetailBytes and marked as truncated', () => {
    const big = { text: 'é'.repeat(20_000), list: Array.from({ length: 500 }, (_, i) => i) };
    const r = ledger.append(fullInput(1, { detail: big }));
    const stored = r.detail as Record<string, { bytes: number; preview: string }>;
    const marker = stored[TRUNCATION_KEY];
    expect(marker?.bytes).toBe(utf8Bytes(canonicalJson(big)));
    expect(canonicalJson(big).startsWith(marker?.preview ?? 'x')).toBe(true);
    expect(utf8Bytes(canonicalJson(r.detail))).toBeLessThanOrEqual(LIMITS.maxReceiptDetailBytes);
    expect(utf8Bytes(canonicalJson(r.detail))).toBeGreaterThan(LIMITS.maxReceiptDetailBytes - 64);
    expect(ledger.verify().ok).toBe(true);
  });

  it('never splits a surrogate pair when truncating', () => {
    const r = ledger.append(fullInput(1, { detail: '😀'.repeat(10_000) }));
    const preview = (r.detail as Record<string, { preview: string }>)[TRUNCATION_KEY]?.preview ?? '';
    expect(preview.length).toBeGreaterThan(1000);
    expect(() => canonicalJson(preview)).not.toThrow();
    expect(ledger.verify().ok).toBe(true);
  });

  it('reduces odd values to plain JSON instead of refusing the receipt', () => {
    const cyc: Record<string, unknown> = { a: 1 };
    cyc.self = cyc;
    const r = ledger.append(fullInput(1, {
      detail: { big: 12n, nan: NaN, inf: -Infinity, when: new Date(0), fn: () => 1, undef: undefined, cyc },
    }));
    expect(r.detail).toEqual({ big: '12', nan: null, inf: null, when: '1970-01-01T00:00:00.000Z', cyc: { a: 1, self: '[redacted:cycle]' } });
    expect(ledger.append(fullInput(2, { detail: undefined })).detail).toBeNull();
    expect(ledger.verify().ok).toBe(true);
  });
});

describe('onAppend', () => {
  it('tells listeners after commit, survives a throwing listener, and unsubscribes', () => {
    const seen: Receipt[] = [];
    const off = ledger.onAppend((r) => {
      expect(ledger.get(r.seq)).toEqual(r); // already committed and readable
      seen.push(r);
    });
    ledger.onAppend(() => {
      throw new Error('ui bug');
    });
    const a = ledger.append(consoleInput());
    off();
    ledger.append(consoleInput());
    expect(seen).toEqual([a]);
  });
});

describe('query', () => {
  beforeEach(() => {
    const inputs: ReceiptInput[] = [];
    for (let i = 1; i <= 60; i++) {
      inputs.push(fullInput(i, {
        origin: i % 3 === 0 ? 'https://b.example' : 'https://a.example',
        toolName: i % 2 === 0 ? 'search' : 'checkout',
        event: i % 10 === 0 ? 'failed' : i % 5 === 0 ? 'denied' : 'requested',
        requestId: `req-${Math.ceil(i / 4)}`,
      }));
    }
    ledger.appendBatch(inputs);
  });

  const seqs = (rs: Receipt[]): number[] => rs.map((r) => r.seq);

  it('orders by time, then seq, newest first', () => {
    clock = 1_600_000_000_000; // the clock went back: later receipts, earlier times
    ledger.append(fullInput(61));
    ledger.append(fullInput(62));
    const page = ledger.query({ limit: 500 });
    expect(seqs(page.receipts).slice(0, 2)).toEqual([60, 59]);
    expect(seqs(page.receipts).slice(-2)).toEqual([62, 61]);
  });

  it('returns newest first with a default page size', () => {
    const page = ledger.query();
    expect(seqs(page.receipts)).toEqual(Array.from({ length: 60 }, (_, i) => 60 - i));
    expect(page.nextCursor).toBeNull();
  });

  it('filters by origin, tool, event, outcome, requestId and time, together', () => {
    expect(seqs(ledger.query({ origin: 'https://b.example' }).receipts)).toEqual([60, 57, 54, 51, 48, 45, 42, 39, 36, 33, 30, 27, 24, 21, 18, 15, 12, 9, 6, 3]);
    expect(ledger.query({ toolName: 'search' }).receipts.every((r) => r.toolName === 'search')).toBe(true);
    expect(seqs(ledger.query({ event: 'failed' }).receipts)).toEqual([60, 50, 40, 30, 20, 10]);
    expect(seqs(ledger.query({ outcome: 'denied' }).receipts)).toEqual([55, 45, 35, 25, 15, 5]);
    expect(seqs(ledger.query({ requestId: 'req-2' }).receipts)).toEqual([8, 7, 6, 5]);
    const t0 = 1_700_000_000_000;
    expect(seqs(ledger.query({ from: t0 + 9, to: t0 + 11 }).receipts)).toEqual([12, 11, 10]);
    expect(seqs(ledger.query({ origin: 'https://b.example', toolName: 'search', event: 'failed' }).receipts)).toEqual([60, 30]);
    expect(ledger.query({ event: 'failed', outcome: 'denied' }).receipts).toEqual([]);
    expect(ledger.query({ origin: 'https://nowhere.example' })).toEqual({ receipts: [], nextCursor: null });
  });

  it('filters by operation and subjectHash, alone, together and with other filters', () => {
    const SUBJECT = 'e'.repeat(64);
    ledger.appendBatch([
      fullInput(61, { operation: 'discover', subjectHash: null }),
      fullInput(62, { operation: 'click', subjectHash: SUBJECT, toolName: 'search' }),
      fullInput(63, { operation: null, subjectHash: SUBJECT }),
      consoleInput(),
    ]);
    expect(seqs(ledger.query({ operation: 'discover' }).receipts)).toEqual([61]);
    expect(seqs(ledger.query({ operation: 'invoke', limit: 500 }).receipts)).toEqual(Array.from({ length: 60 }, (_, i) => 60 - i));
    expect(seqs(ledger.query({ subjectHash: SUBJECT }).receipts)).toEqual([63, 62]);
    expect(seqs(ledger.query({ subjectHash: SUBJECT, operation: 'click' }).receipts)).toEqual([62]);
    expect(seqs(ledger.query({ subjectHash: SUBJECT, toolName: 'add_to_cart' }).receipts)).toEqual([63]);
    expect(seqs(ledger.query({ operation: 'invoke', event: 'failed' }).receipts)).toEqual([60, 50, 40, 30, 20, 10]);
    expect(ledger.query({ operation: 'hover' }).receipts).toEqual([]);
    const stored = ledger.query({ operation: 'click' }).receipts[0] as Receipt;
    expect(stored).toMatchObject({ operation: 'click', subjectHash: SUBJECT });
    expect(ledger.query({ limit: 1 }).receipts[0]).toMatchObject({ operation: null, subjectHash: null });
    expect(() => ledger.query({ operation: 1 as never })).toThrow(/operation must be a string/);
    expect(() => ledger.query({ subjectHash: null as never })).toThrow(/subjectHash must be a string/);
  });

  it('finds one receipt by its id, and nothing for an unknown or a near-miss id', () => {
    const target = ledger.query({ limit: 500 }).receipts.find((r) => r.seq === 17)!;
    expect(ledger.query({ id: target.id }).receipts).toEqual([target]);
    expect(ledger.query({ id: target.id, origin: 'https://nowhere.example' }).receipts).toEqual([]);
    expect(ledger.query({ id: target.id.toUpperCase() }).receipts).toEqual([]);
    expect(ledger.query({ id: '00000000-0000-4000-8000-000000000000' })).toEqual({ receipts: [], nextCursor: null });
    expect(() => ledger.query({ id: 17 as never })).toThrow(/id must be a string/);
  });

  it('pages with an opaque cursor, stable while receipts are appended', () => {
    const got: number[] = [];
    let page = ledger.query({ limit: 7, toolName: 'checkout' });
    got.push(...seqs(page.receipts));
    ledger.append(fullInput(99, { toolName: 'checkout' })); // newer than the cursor: not in later pages
    while (page.nextCursor) {
      page = ledger.query({ limit: 7, toolName: 'checkout', cursor: page.nextCursor });
      got.push(...seqs(page.receipts));
    }
    expect(got).toEqual(Array.from({ length: 30 }, (_, i) => 59 - 2 * i));
  });

  it('refuses bad limits, cursors and filters', () => {
    expect(() => ledger.query({ limit: 0 })).toThrow(LedgerInputError);
    expect(() => ledger.query({ limit: MAX_PAGE_LIMIT + 1 })).toThrow(/limit must be an integer from 1 to 500/);
    expect(() => ledger.query({ cursor: 'seq>5' })).toThrow(/cursor/);
    // A requests listing's cursor (Ledger.queryRequests) is not a receipts cursor, though the numbers fit.
    expect(() => ledger.query({ cursor: 'q1.1.1' })).toThrow(/query cursor is not one this ledger issued/);
    expect(ledger.query({ cursor: 'r1.1.1' }).receipts).toEqual([]);
    expect(() => ledger.query({ event: 'nope' as never })).toThrow(/event/);
    expect(() => ledger.query({ outcome: 'requested' as never })).toThrow(/outcome must be one of/);
    expect(() => ledger.query({ from: 1.5 })).toThrow(/from must be an integer/);
    expect(() => ledger.query({ origin: 3 as never })).toThrow(/origin must be a string/);
  });

  it('walks one index for each filter, with or without a time range and cursor (no full scan, no sort)', () => {
    const db = new Database(tmp.file('l.db'), { readonly: true });
    const plan = (where: string): string =>
      (db.prepare(`EXPLAIN QUERY PLAN SELECT * FROM receipts WHERE ${where} ORDER BY time DESC, seq DESC LIMIT 201`).all() as { detail: string }[])
        .map((r) => r.detail).join('; ');
    const cases: [string, RegExp][] = [
      ["origin = 'x'", /SEARCH receipts USING INDEX receipts_origin \(origin=\?\)/],
      ["tool_name = 'x'", /USING INDEX receipts_tool/],
      ["event = 'x'", /USING INDEX receipts_event/],
      ["request_id = 'x'", /USING INDEX receipts_request/],
      ['time >= 1 AND time <= 2', /SEARCH receipts USING INDEX receipts_time \(time>\? AND time<\?\)/],
      ["origin = 'x' AND time >= 1 AND time <= 2", /USING INDEX receipts_origin \(origin=\? AND time>\? AND time<\?\)/],
      ["tool_name = 'x' AND (time, seq) < (5, 9)", /USING INDEX receipts_tool \(tool_name=\? AND time<\?\)/],
      ["origin = 'x' AND event = 'y'", /SEARCH receipts USING INDEX receipts_(origin|event)/],
      ["tool_name = 'x' AND event = 'y' AND origin = 'z'", /SEARCH receipts USING INDEX receipts_(origin|event|tool)/],
      ['1', /SCAN receipts USING INDEX receipts_time/],
      // Format 2's partial indexes: an equality implies IS NOT NULL, so SQLite takes them.
      ["operation = 'x'", /SEARCH receipts USING INDEX receipts_operation \(operation=\?\)/],
      ["operation = 'x' AND time >= 1 AND time <= 2", /USING INDEX receipts_operation \(operation=\? AND time>\? AND time<\?\)/],
      ["subject_hash = 'x'", /SEARCH receipts USING INDEX receipts_subject \(subject_hash=\?\)/],
      ["subject_hash = 'x' AND (time, seq) < (5, 9)", /USING INDEX receipts_subject \(subject_hash=\? AND time<\?\)/],
    ];
    for (const [where, want] of cases) {
      expect(plan(where), where).toMatch(want);
      expect(plan(where), where).not.toMatch(/TEMP B-TREE/);
    }
    db.close();
  });
});

describe('checkpoints', () => {
  it('verifyAgainst passes for a checkpoint of an earlier head, and for the current head', () => {
    ledger.appendBatch([fullInput(1), fullInput(2)]);
    const cp = ledger.checkpoint();
    expect(cp).toMatchObject({ count: 2, headHash: ledger.get(2)?.hash });
    ledger.append(fullInput(3));
    expect(ledger.verifyAgainst(cp)).toMatchObject({ ok: true, count: 3 });
    expect(ledger.verifyAgainst(ledger.checkpoint()).ok).toBe(true);
    expect(ledger.verifyAgainst({ count: 0, headHash: GENESIS_PREV_HASH, time: 0 }).ok).toBe(true);
  });

  it('fails for a checkpoint of another ledger, and refuses a malformed one', () => {
    ledger.appendBatch([fullInput(1), fullInput(2)]);
    const r = ledger.verifyAgainst({ count: 2, headHash: 'f'.repeat(64), time: 0 });
    expect(r).toMatchObject({ ok: false, firstBroken: { seq: 2, reason: expect.stringMatching(/history rewritten/) } });
    expect(() => ledger.verifyAgainst({ count: -1, headHash: 'x' } as never)).toThrow(LedgerInputError);
  });
});

describe('verify in chunks', () => {
  const N = 2 * VERIFY_CHUNK + 500;
  beforeEach(() => {
    for (let i = 0; i < N; i += 5000) ledger.appendBatch(Array.from({ length: Math.min(5000, N - i) }, (_, k) => consoleInput({ detail: { i: i + k } })));
  });

  it('verify and verifyAsync agree across chunk boundaries, with progress after each chunk', async () => {
    const seen: number[] = [];
    const sync = ledger.verify({ onProgress: (n) => seen.push(n) });
    expect(sync).toEqual({ ok: true, count: N, headHash: ledger.head().headHash });
    expect(seen).toEqual([VERIFY_CHUNK, 2 * VERIFY_CHUNK]);
    expect(await ledger.verifyAsync()).toEqual(sync);
  });

  it('names a break at the first row of the second chunk (the link crosses the boundary)', async () => {
    const raw = new Database(tmp.file('l.db'));
    raw.exec('DROP TRIGGER receipts_no_update');
    raw.prepare(`UPDATE receipts SET prev_hash = '${'e'.repeat(64)}' WHERE seq = ${VERIFY_CHUNK + 1}`).run();
    raw.close();
    const want = { ok: false, count: VERIFY_CHUNK, firstBroken: { seq: VERIFY_CHUNK + 1, reason: `prevHash does not match the hash of receipt ${VERIFY_CHUNK}` } };
    expect(ledger.verify()).toMatchObject(want);
    expect(await ledger.verifyAsync()).toMatchObject(want);
  });

  it('verifyAsync lets appends run between chunks, covers the head it started from, and can be aborted', async () => {
    const pending = ledger.verifyAsync({ onProgress: () => ledger.append(consoleInput()) });
    expect(await pending).toMatchObject({ ok: true, count: N });
    expect(ledger.head().count).toBe(N + 2);
    const ac = new AbortController();
    const aborted = ledger.verifyAsync({ signal: ac.signal, onProgress: () => ac.abort(new Error('stop')) });
    await expect(aborted).rejects.toThrow('stop');
  });
});

describe('export', () => {
  it('writes JSON Lines, oldest first, to a file or a stream', async () => {
    const stored = ledger.appendBatch(Array.from({ length: 2500 }, (_, i) => fullInput(i)));
    const res = await ledger.export(tmp.file('out.jsonl'));
    expect(res).toEqual({ count: 2500, headHash: stored[2499]?.hash });
    const lines = readFileSync(tmp.file('out.jsonl'), 'utf8').split('\n');
    expect(lines.pop()).toBe('');
    expect(lines.map((l) => JSON.parse(l) as Receipt)).toEqual(stored);

    const sink = new PassThrough();
    const chunks: Buffer[] = [];
    sink.on('data', (c: Buffer) => chunks.push(c));
    await ledger.export(sink);
    expect(Buffer.concat(chunks).toString('utf8')).toBe(readFileSync(tmp.file('out.jsonl'), 'utf8'));
    expect(sink.writableEnded).toBe(false); // a caller's stream is left open
  });
});

describe('durability: commit at once, fsync off the event loop (durability.ts)', () => {
  const synchronous = (l: Ledger) => (l as unknown as { db: Database.Database }).db.pragma('synchronous', { simple: true });

  it('append commits at once (chained, visible, kept across reopen) and returns before the fsync; durable() resolves once one fsync covered every commit', async () => {
    expect(synchronous(ledger)).toBe(1); // NORMAL: the commit writes the log, the fsync comes after
    const a = ledger.append(consoleInput({ event: 'requested' }));
    const b = ledger.append(consoleInput({ event: 'refused' }));
    expect(b.prevHash).toBe(a.hash);
    expect(ledger.query({ limit: 10 }).receipts).toHaveLength(2);
    // The fsync runs in libuv's pool and reports on a later turn of the event loop: not yet.
    expect(ledger.durabilityCounts()).toEqual({ commits: 2, durableCommits: 0, fsyncs: 0 });
    await ledger.durable();
    const after = ledger.durabilityCounts();
    expect(after.durableCommits).toBe(2);
    expect(after.fsyncs).toBeGreaterThanOrEqual(1);
    expect(after.fsyncs).toBeLessThanOrEqual(2);
    await ledger.durable(); // nothing pending: at once, no new fsync
    expect(ledger.durabilityCounts().fsyncs).toBe(after.fsyncs);
    const c = ledger.append(consoleInput({ event: 'requested' }));
    ledger.close();
    ledger = new Ledger(tmp.file('l.db'), { now: () => clock++ });
    expect(ledger.verify()).toMatchObject({ ok: true, count: 3 });
    expect(ledger.get(1)?.hash).toBe(a.hash);
    expect(ledger.get(3)?.hash).toBe(c.hash);
  });

  it("the fsync is of the ledger's own write-ahead log file", async () => {
    const synced: number[] = [];
    const l2 = new Ledger(tmp.file('l2.db'), { syncFd: (fd, done) => (synced.push(fstatSync(fd).ino), fsync(fd, done)) });
    try {
      l2.append(consoleInput({ event: 'requested' }));
      await l2.durable();
      expect(synced.length).toBeGreaterThan(0);
      expect(new Set(synced)).toEqual(new Set([statSync(`${tmp.file('l2.db')}-wal`).ino]));
    } finally {
      l2.close();
    }
  });

  it('a failed fsync is sticky: the waiter rejects, later appends throw, durable() keeps rejecting; nothing is claimed durable', async () => {
    const eio = Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' });
    const l2 = new Ledger(tmp.file('l2.db'), { syncFd: (_fd, done) => setImmediate(() => done(eio)) });
    try {
      l2.append(consoleInput({ event: 'requested' }));
      await expect(l2.durable()).rejects.toThrow(LedgerDurabilityError);
      expect(() => l2.append(consoleInput({ event: 'requested' }))).toThrow(/could not be made durable.*EIO/);
      await expect(l2.durable()).rejects.toThrow(LedgerDurabilityError);
      expect(l2.durabilityCounts()).toMatchObject({ commits: 1, durableCommits: 0 });
      expect(l2.head().count).toBe(1);
    } finally {
      l2.close();
    }
  });

  it('a commit that fails stores nothing and is not counted', () => {
    let bad = true;
    const l2 = new Ledger(tmp.file('l2.db'), { now: () => (bad ? 1.5 : clock++) });
    try {
      expect(() => l2.append(consoleInput({ event: 'requested' }))).toThrow(LedgerInputError);
      expect(l2.head().count).toBe(0);
      bad = false;
      l2.append(consoleInput({ event: 'requested' }));
      expect(l2.durabilityCounts().commits).toBe(1);
    } finally {
      l2.close();
    }
  });

  it('without a write-ahead log (SQLite kept its rollback journal) the database file itself is fsynced', async () => {
    const file = tmp.file('journal.db');
    writeFileSync(file, 'committed bytes');
    const synced: number[] = [];
    const d = new WalDurability(file, (fd, done) => (synced.push(fstatSync(fd).ino), fsync(fd, done)), false);
    d.committed();
    await d.durable();
    expect(d.counts()).toMatchObject({ commits: 1, durableCommits: 1 });
    expect(new Set(synced)).toEqual(new Set([statSync(file).ino]));
    d.close();
  });

  it('close() syncs what is pending and settles every waiter', async () => {
    const l2 = new Ledger(tmp.file('l2.db'));
    l2.append(consoleInput({ event: 'requested' }));
    const waiting = l2.durable();
    l2.close();
    await expect(waiting).resolves.toBeUndefined();
    await expect(l2.durable()).rejects.toThrow(LedgerStateError);
  });
});

describe('append-only in SQL', () => {
  let raw: Database.Database;
  beforeEach(() => {
    ledger.appendBatch([fullInput(1), fullInput(2), fullInput(3)]);
    raw = new Database(tmp.file('l.db'));
  });
  afterEach(() => raw.close());

  it('refuses UPDATE', () => {
    expect(() => raw.prepare("UPDATE receipts SET event = 'denied' WHERE seq = 2").run()).toThrow(/append-only: UPDATE refused/);
    expect(() => raw.prepare('UPDATE receipts SET seq = seq').run()).toThrow(/UPDATE refused/);
  });

  it('refuses DELETE, including of everything', () => {
    expect(() => raw.prepare('DELETE FROM receipts WHERE seq = 3').run()).toThrow(/append-only: DELETE refused/);
    expect(() => raw.prepare('DELETE FROM receipts').run()).toThrow(/DELETE refused/);
  });

  it('refuses an INSERT that is not the next seq, and INSERT OR REPLACE', () => {
    const row = raw.prepare('SELECT * FROM receipts WHERE seq = 2').get() as Record<string, unknown>;
    const cols = Object.keys(row);
    const ins = (verb: string, r: Record<string, unknown>): unknown =>
      raw.prepare(`${verb} INTO receipts (${cols.join(',')}) VALUES (${cols.map((c) => '@' + c).join(',')})`).run(r);
    expect(() => ins('INSERT', { ...row, seq: 10, id: 'new' })).toThrow(/INSERT must take the next seq/);
    expect(() => ins('INSERT OR REPLACE', { ...row, seq: 2 })).toThrow(/append-only/);
    raw.pragma('recursive_triggers = ON');
    expect(() => ins('INSERT OR REPLACE', { ...row, seq: 4 })).toThrow(/DELETE refused/); // same id as seq 2
    expect(ledger.verify()).toMatchObject({ ok: true, count: 3 });
  });
});

describe('opening', () => {
  it('refuses a database that is not a ledger, and a newer format', () => {
    const other = new Database(tmp.file('other.db'));
    other.exec('CREATE TABLE t (x)');
    other.close();
    expect(() => new Ledger(tmp.file('other.db'))).toThrow(LedgerFormatError);
    ledger.close();
    const raw = new Database(tmp.file('l.db'));
    raw.pragma('user_version = 99');
    raw.close();
    expect(() => new Ledger(tmp.file('l.db'))).toThrow(/format 99 is newer/);
  });

  it('refuses a missing file read-only, and appends when read-only or closed', () => {
    expect(() => new Ledger(tmp.file('missing.db'), { readonly: true })).toThrow();
    ledger.append(consoleInput());
    const ro = new Ledger(tmp.file('l.db'), { readonly: true });
    expect(() => ro.append(consoleInput())).toThrow(LedgerStateError);
    expect(ro.verify().ok).toBe(true);
    ro.close();
    ledger.close();
    expect(() => ledger.append(consoleInput())).toThrow(/closed/);
    expect(() => ledger.query()).toThrow(/closed/);
  });

  it('never recreates dropped guard triggers when opened read-write; verify fails naming each (issue 9 item 6)', () => {
    ledger.append(consoleInput());
    ledger.close();
    const raw = new Database(tmp.file('l.db'));
    raw.exec('DROP TRIGGER receipts_no_update; DROP TRIGGER receipts_no_delete; DROP TRIGGER receipts_append_next');
    raw.close();
    ledger = new Ledger(tmp.file('l.db'));
    const check = new Database(tmp.file('l.db'));
    expect(check.prepare("SELECT COUNT(*) AS n FROM sqlite_master WHERE type = 'trigger'").get()).toEqual({ n: 0 });
    check.close();
    const report = ledger.verify();
    expect(report.ok).toBe(false);
    expect(report.problems?.map((p) => p.message)).toEqual([
      expect.stringMatching(/guard trigger receipts_no_update is missing/),
      expect.stringMatching(/guard trigger receipts_no_delete is missing/),
      expect.stringMatching(/guard trigger receipts_append_next is missing/),
    ]);
  });

  it('keeps one chain when two connections append to the same file', () => {
    const other = new Ledger(tmp.file('l.db'));
    for (let i = 0; i < 10; i++) (i % 2 ? ledger : other).append(fullInput(i));
    other.close();
    expect(ledger.verify()).toMatchObject({ ok: true, count: 10 });
  });

  it('refuses a file that is not SQLite at all', () => {
    writeFileSync(tmp.file('junk.db'), 'not sqlite at all, just text padding'.repeat(200));
    expect(() => new Ledger(tmp.file('junk.db'))).toThrow();
  });
});
