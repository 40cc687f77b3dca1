/**
 * Issue 12 items 2 and 3 on the ledger itself: format 4 (payload hashed apart),
 * the migration of a format-2 ledger, retention erasing payloads while verify
 * passes, and the filtered export with its verification (gaps are gaps, a
 * tampered row is a break) and cancel.
 */
import { PassThrough, Readable } from 'node:stream';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LEDGER_FORMAT, Ledger, LedgerSigningKey } from '../../src/main/core/ledger/index';
import { verifyExport } from '../../src/main/core/ledger/export-verify';
import { csvField } from '../../src/main/core/ledger/filtered-export';
import type { ReceiptInput } from '../../src/shared/receipt';
import { consoleInput, fullInput, tempDir, writeFormat2Ledger } from './support/ledger-fixtures';

let tmp: ReturnType<typeof tempDir>;
beforeEach(() => {
  tmp = tempDir('ledger-retention-');
});
afterEach(() => tmp.cleanup());

const PAR = { minRows: 0, rangeRows: 16, threads: 2 };
const DAY = 86_400_000;

/** A clock the test moves by hand. */
function clock(start: number): { now: () => number; set: (t: number) => void } {
  let t = start;
  return { now: () => t, set: (v) => (t = v) };
}

async function verifyAllWays(l: Ledger): Promise<void> {
  const single = l.verify({ parallel: false });
  expect(single).toMatchObject({ ok: true });
  expect(l.verify({ parallel: PAR })).toEqual(single);
  expect(await l.verifyAsync({ parallel: PAR })).toEqual(single);
}

/** Export to a string (stream target) and verify it. */
async function exportAndVerify(l: Ledger, filter = {}, publicKey: string | null = null): Promise<{ text: string; report: Awaited<ReturnType<typeof verifyExport>> }> {
  const sink = new PassThrough();
  const chunks: Buffer[] = [];
  sink.on('data', (c: Buffer) => chunks.push(c));
  await l.exportFiltered(sink, { filter });
  sink.end();
  const text = Buffer.concat(chunks).toString('utf8');
  return { text, report: await verifyExport(Readable.from([text]), publicKey) };
}

describe('format 4: the migration of a format-2 ledger (through the request index of format 3)', () => {
  it('keeps every old row verifying (old hash rule), chains new rows by the payload-hash rule, and leaves old payloads unerasable', async () => {
    const file = tmp.file('v2.db');
    const inputs: ReceiptInput[] = Array.from({ length: 60 }, (_, i) => (i % 4 === 0 ? consoleInput({ detail: { i } }) : fullInput(i)));
    const old = writeFormat2Ledger(file, inputs);
    const c = clock(1_700_000_000_000 + 90 * DAY);
    const l = new Ledger(file, { now: c.now });
    try {
      expect(l.format).toBe(LEDGER_FORMAT);
      expect(l.verify({ parallel: false })).toEqual({ ok: true, count: 60, headHash: old[59]?.hash });
      // Old rows read back exactly as written: no payloadHash, their hash unchanged.
      expect(l.get(10)).toEqual(old[9]);
      const added = l.appendBatch([fullInput(100, { detail: { typed: 'secret text', url: 'https://bank.example/x' } }), consoleInput()]);
      expect(added[0]?.prevHash).toBe(old[59]?.hash);
      expect(added[0]?.payloadHash).toMatch(/^[0-9a-f]{64}$/);
      await verifyAllWays(l);
      // Retention past everything: the new rows' payloads go, the old rows cannot (their hash covers the detail).
      c.set(c.now() + DAY);
      const r = await l.erasePayloads({ before: c.now() });
      expect(r).toEqual({ erased: 2, oldRuleKept: 60 });
      expect(l.get(61)).toMatchObject({ detail: null, erasedAt: c.now(), payloadHash: added[0]?.payloadHash, hash: added[0]?.hash });
      expect(l.get(10)).toEqual(old[9]);
      await verifyAllWays(l);
    } finally {
      l.close();
    }
    const db = new Database(file);
    expect(db.pragma('user_version', { simple: true })).toBe(LEDGER_FORMAT);
    db.close();
  });
});

describe('retention', () => {
  it("erases the request index's copy of a reason with the payloads: the timeline's text search no longer finds it", async () => {
    const t0 = 1_700_000_000_000;
    const c = clock(t0);
    const l = new Ledger(tmp.file('reason.db'), { now: c.now });
    try {
      l.append(fullInput(1, { event: 'denied', actor: { kind: 'person' }, detail: { reason: 'never on my bank account 4242' } }));
      c.set(t0 + 40 * DAY);
      l.append(fullInput(2, { event: 'denied', actor: { kind: 'person' }, detail: { reason: 'recent reason 4242' } }));
      expect(l.queryRequests({ text: '4242' }).requests.map((r) => r.requestId).sort()).toEqual(['req-1', 'req-2']);
      await l.erasePayloads({ before: t0 + 30 * DAY });
      expect(l.queryRequests({ text: '4242' }).requests.map((r) => r.requestId)).toEqual(['req-2']);
      expect(l.queryRequests({ requestId: 'req-1' }).requests[0]).toMatchObject({ requestId: 'req-1', reason: null });
    } finally {
      l.close();
    }
  });

  it('erases the payloads older than the period, keeps hashes and chain, and verify passes (single thread, workers, async)', async () => {
    const file = tmp.file('r.db');
    const t0 = 1_700_000_000_000;
    const c = clock(t0);
    const key = LedgerSigningKey.generate();
    const l = new Ledger(file, { now: c.now, signingKey: key, signingKeyCreated: true });
    try {
      const old: ReturnType<Ledger['append']>[] = [];
      for (let i = 0; i < 40; i++) {
        c.set(t0 + i * 1000);
        old.push(l.append(fullInput(i, { detail: { arguments: { q: `search ${i}` }, url: `https://shop.example/p/${i}` } })));
      }
      c.set(t0 + 40 * DAY);
      const recent = l.append(fullInput(99, { detail: { result: 'kept' } }));
      const r = await l.erasePayloads({ before: t0 + 30 * DAY, batch: 7 });
      expect(r).toEqual({ erased: 40, oldRuleKept: 0 });
      for (const o of old) {
        const got = l.get(o.seq);
        expect(got).toEqual({ ...o, detail: null, erasedAt: t0 + 40 * DAY });
        expect(JSON.stringify(got)).not.toContain('search');
      }
      expect(l.get(recent.seq)).toEqual(recent);
      await verifyAllWays(l);
      expect(l.verify()).toMatchObject({ ok: true, count: 41, signed: { keyId: key.keyId } });
      // Nothing left in SQLite's pages either is beyond this test; a second run erases nothing.
      expect(await l.erasePayloads({ before: t0 + 30 * DAY })).toEqual({ erased: 0, oldRuleKept: 0 });
    } finally {
      l.close();
    }
  });

  it('the guard trigger allows the erasure only: any other UPDATE, or an erasure that keeps the detail, is refused', () => {
    const file = tmp.file('g.db');
    new Ledger(file).appendBatch([fullInput(1), fullInput(2)]);
    const db = new Database(file);
    try {
      expect(() => db.prepare("UPDATE receipts SET event = 'denied' WHERE seq = 1").run()).toThrow(/append-only: UPDATE refused/);
      expect(() => db.prepare("UPDATE receipts SET detail = '{\"forged\":1}' WHERE seq = 1").run()).toThrow(/UPDATE refused/);
      expect(() => db.prepare('UPDATE receipts SET erased_at = 5 WHERE seq = 1').run()).toThrow(/UPDATE refused/);
      expect(() => db.prepare("UPDATE receipts SET detail = 'null', erased_at = 5, origin = 'x' WHERE seq = 1").run()).toThrow(/UPDATE refused/);
      db.prepare("UPDATE receipts SET detail = 'null', erased_at = 5 WHERE seq = 1").run();
      // Once erased, it cannot be changed again (not even "un-erased").
      expect(() => db.prepare("UPDATE receipts SET detail = '{}', erased_at = NULL WHERE seq = 1").run()).toThrow(/UPDATE refused/);
    } finally {
      db.close();
    }
  });

  it('an attacker who alters a kept payload, or marks a payload erased but keeps it, breaks verify at that row', async () => {
    const file = tmp.file('t.db');
    const l0 = new Ledger(file);
    l0.appendBatch([fullInput(1), fullInput(2), fullInput(3)]);
    l0.close();
    const db = new Database(file);
    db.exec('DROP TRIGGER receipts_no_update');
    db.prepare("UPDATE receipts SET detail = '{\"note\":\"forged\",\"step\":2}' WHERE seq = 2").run();
    db.close();
    const l = new Ledger(file, { readonly: true });
    try {
      const want = { seq: 2, reason: expect.stringMatching(/the detail does not match its payloadHash/) };
      expect(l.verify({ parallel: false }).firstBroken).toMatchObject(want);
      expect(l.verify({ parallel: PAR }).firstBroken).toMatchObject(want);
      expect((await l.verifyAsync({ parallel: PAR })).firstBroken).toMatchObject(want);
    } finally {
      l.close();
    }
  });
});

describe('filtered export and its verification', () => {
  function ledgerWithMix(key?: LedgerSigningKey): Ledger {
    const l = new Ledger(tmp.file('e.db'), key ? { signingKey: key, signingKeyCreated: true } : {});
    const inputs: ReceiptInput[] = [];
    for (let i = 0; i < 30; i++) {
      inputs.push(i % 3 === 0
        ? fullInput(i, { origin: 'https://bank.example', event: 'denied', actor: { kind: 'agent', name: 'Claude', tokenId: 'tok_0123456789abcdef' } })
        : fullInput(i, { origin: 'https://shop.example' }));
    }
    l.appendBatch(inputs);
    return l;
  }

  it('a whole-range export verifies with no gaps, tied to the signed checkpoint', async () => {
    const key = LedgerSigningKey.generate();
    const l = ledgerWithMix(key);
    try {
      const { report } = await exportAndVerify(l, {}, key.publicKey);
      expect(report).toMatchObject({ ok: true, rows: 30, gapCount: 0, missing: 0, gaps: [], checkpoint: { status: 'verified', count: 30, anchored: true } });
      expect(report.summary).toMatch(/^ok: 30 receipts, every hash intact, no gaps; signed checkpoint #30 verifies/);
      // Without the key the checkpoint cannot be checked: not ok, and said so.
      expect((await exportAndVerify(l, {}, null)).report).toMatchObject({ ok: false, checkpoint: { status: 'no-public-key' } });
      // Another key: the signature fails.
      expect((await exportAndVerify(l, {}, LedgerSigningKey.generate().publicKey)).report).toMatchObject({ ok: false, checkpoint: { status: 'failed' } });
    } finally {
      l.close();
    }
  });

  it('a filtered export verifies, with the left-out receipts reported as gaps (not breaks)', async () => {
    const key = LedgerSigningKey.generate();
    const l = ledgerWithMix(key);
    try {
      const filter = { origin: 'https://bank.example', agent: 'tok_0123456789abcdef', outcome: 'denied' as const, faculty: 'webmcp-invoke' as const };
      const { text, report } = await exportAndVerify(l, filter, key.publicKey);
      const lines = text.trim().split('\n');
      expect(JSON.parse(lines[0] as string)).toMatchObject({ echoLedgerExport: { version: 1, filter, head: { count: 30 } } });
      expect(lines.slice(1).map((x) => (JSON.parse(x) as { seq: number }).seq)).toEqual([1, 4, 7, 10, 13, 16, 19, 22, 25, 28]);
      expect(report).toMatchObject({ ok: true, rows: 10, firstSeq: 1, lastSeq: 28, gapCount: 10, missing: 20 });
      expect(report.gaps.slice(0, 2)).toEqual([{ from: 2, to: 3 }, { from: 5, to: 6 }]);
      expect(report.gaps.at(-1)).toEqual({ from: 29, to: 30 });
      expect(report.firstBroken).toBeUndefined();
      expect(report.checkpoint).toMatchObject({ status: 'verified', anchored: false });
      // The agent filter also takes the token's name; text search covers tool names.
      expect((await exportAndVerify(l, { agent: 'Claude' }, key.publicKey)).report.rows).toBe(10);
      expect((await exportAndVerify(l, { text: 'ADD_TO' }, key.publicKey)).report.rows).toBe(30);
      expect((await exportAndVerify(l, { from: Number.MAX_SAFE_INTEGER }, key.publicKey)).report).toMatchObject({ ok: true, rows: 0, gapCount: 1, missing: 30 });
    } finally {
      l.close();
    }
  });

  it('a tampered row is a break, not a gap; a removed row inside a run is a gap (the rest still verifies)', async () => {
    const key = LedgerSigningKey.generate();
    const l = ledgerWithMix(key);
    try {
      const { text } = await exportAndVerify(l, {}, key.publicKey);
      const lines = text.trim().split('\n');
      const tampered = [...lines];
      const row = JSON.parse(lines[5] as string) as { seq: number; event: string };
      tampered[5] = JSON.stringify({ ...row, event: 'succeeded' === row.event ? 'failed' : 'succeeded' });
      const broken = await verifyExport(Readable.from([tampered.join('\n') + '\n']), key.publicKey);
      expect(broken).toMatchObject({ ok: false, firstBroken: { seq: 5, reason: expect.stringMatching(/hash does not match/) }, gapCount: 0 });
      // A payload altered under an intact hash: caught by its payloadHash.
      const p = JSON.parse(lines[7] as string) as Record<string, unknown>;
      const alteredPayload = [...lines];
      alteredPayload[7] = JSON.stringify({ ...p, detail: { step: 0, note: 'forged' } });
      expect(await verifyExport(Readable.from([alteredPayload.join('\n')]), key.publicKey)).toMatchObject({
        ok: false, firstBroken: { seq: 7, reason: expect.stringMatching(/does not match its payloadHash/) },
      });
      // A row cut out: a gap, reported as such; the chain around it is not claimed.
      const cut = lines.filter((_, i) => i !== 10);
      expect(await verifyExport(Readable.from([cut.join('\n')]), key.publicKey)).toMatchObject({ ok: true, gapCount: 1, gaps: [{ from: 10, to: 10 }] });
      // Two rows swapped: out of order is a break.
      const swapped = [...lines];
      [swapped[3], swapped[4]] = [swapped[4] as string, swapped[3] as string];
      expect(await verifyExport(Readable.from([swapped.join('\n')]), key.publicKey)).toMatchObject({ ok: false, firstBroken: { seq: 3, reason: expect.stringMatching(/out of order/) } });
    } finally {
      l.close();
    }
  });

  it('erased payloads still verify in an export; CSV quotes and defuses formulas', async () => {
    const c = clock(1_700_000_000_000);
    const key = LedgerSigningKey.generate();
    const l = new Ledger(tmp.file('x.db'), { now: c.now, signingKey: key, signingKeyCreated: true });
    try {
      l.appendBatch([fullInput(1, { toolName: '=HYPERLINK("http://evil")' }), fullInput(2)]);
      c.set(c.now() + DAY);
      await l.erasePayloads({ before: c.now() });
      const { report } = await exportAndVerify(l, {}, key.publicKey);
      expect(report).toMatchObject({ ok: true, rows: 2, gapCount: 0 });
      const csvFile = tmp.file('out.csv');
      await l.exportFiltered(csvFile, { format: 'csv' });
      const csv = readFileSync(csvFile, 'utf8').split('\r\n');
      expect(csv[0]).toMatch(/^seq,id,time,requestId,event,/);
      expect(csv[1]).toContain(`"'=HYPERLINK(""http://evil"")"`);
      expect(csvField('-1+2')).toBe("'-1+2");
      expect(csvField(-1)).toBe('-1');
    } finally {
      l.close();
    }
  });

  it('reports progress and cancel stops an export: the promise rejects and no file is left', async () => {
    const l = new Ledger(tmp.file('big.db'));
    try {
      l.appendBatch(Array.from({ length: 2500 }, (_, i) => fullInput(i)));
      const seen: number[] = [];
      const ac = new AbortController();
      const target = tmp.file('cancelled.jsonl');
      const run = l.exportFiltered(target, {
        windowRows: 1000,
        onProgress: (done, total) => {
          seen.push(done);
          expect(total).toBe(2500);
          if (done >= 1000) ac.abort(new Error('cancelled by the person'));
        },
        signal: ac.signal,
      });
      await expect(run).rejects.toThrow(/cancelled by the person/);
      expect(seen).toEqual([1000]);
      expect(existsSync(target)).toBe(false);
      expect(existsSync(`${target}.part`)).toBe(false);
      // Without cancel: every window reported, the file complete.
      const done: number[] = [];
      const whole = tmp.file('whole.jsonl');
      expect(await l.exportFiltered(whole, { windowRows: 1000, onProgress: (d) => done.push(d) })).toMatchObject({ rows: 2500 });
      expect(done).toEqual([1000, 2000, 2500]);
    } finally {
      l.close();
    }
  });

  it('npm run ledger -- verify <export.jsonl>: exit 0 with gaps listed, exit 1 for a tampered row', async () => {
    const key = LedgerSigningKey.generate();
    const l = ledgerWithMix(key);
    const out = tmp.file('f.jsonl');
    try {
      await l.exportFiltered(out, { filter: { origin: 'https://bank.example' } });
    } finally {
      l.close();
    }
    const cli = (file: string) => spawnSync(process.execPath, ['--import', 'tsx', path.resolve('scripts/ledger-cli.ts'), 'verify', file, '--public-key', key.publicKey], { encoding: 'utf8' });
    const good = cli(out);
    expect(good.stdout).toMatch(/^ok: 10 receipts, every hash intact, 10 gaps \(20 receipts not in the export\); signed checkpoint #30 verifies/);
    expect(good.stdout).toMatch(/gaps: #2\.\.#3, #5\.\.#6/);
    expect(good.status).toBe(0);
    const text = readFileSync(out, 'utf8').split('\n');
    text[2] = text[2]!.replace('"denied"', '"succeeded"');
    const bad = tmp.file('bad.jsonl');
    writeFileSync(bad, text.join('\n'));
    const r = cli(bad);
    expect(r.stdout).toMatch(/^BROKEN at seq 4: hash does not match/);
    expect(r.status).toBe(1);
  });
});
