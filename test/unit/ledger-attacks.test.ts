/**
 * An attacker's review of the ledger's integrity features (issue 9 item 6, issue 12
 * items 2 and 3): the export verifier (`verify <export.jsonl>`), the signed checkpoints,
 * the guard triggers and retention. Every attack is made on a real Ledger's file or on
 * the text of a real export, as someone holding the file (but not the key) would.
 */
import { PassThrough, Readable } from 'node:stream';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Ledger, LedgerSigningKey } from '../../src/main/core/ledger/index';
import { verifyExport } from '../../src/main/core/ledger/export-verify';
import { CHAINED_FIELDS, GENESIS_PREV_HASH, chainHash, payloadHashOf } from '../../src/main/core/ledger/chain';
import { TRIGGERS_SQL } from '../../src/main/core/ledger/schema';
import { canonicalJson } from '../../src/shared/canonical';
import type { SignedCheckpoint } from '../../src/shared/checkpoint';
import type { ReceiptInput } from '../../src/shared/receipt';
import { fullInput, tempDir, writeFormat2Ledger } from './support/ledger-fixtures';

let tmp: ReturnType<typeof tempDir>;
let key: LedgerSigningKey;
beforeEach(() => {
  tmp = tempDir('ledger-attack-');
  key = LedgerSigningKey.generate();
});
afterEach(() => tmp.cleanup());

const step = (requestId: string, event: ReceiptInput['event'], extra: Partial<ReceiptInput> = {}): ReceiptInput => ({
  requestId, event, faculty: 'webmcp-invoke', origin: 'https://bank.example', toolName: 'send_statement', operation: 'invoke', actor: { kind: 'agent', name: 'a' }, ...extra,
});
function request(l: Ledger, id: string, outcome: ReceiptInput['event'], detail: unknown = {}): void {
  for (const e of ['requested', 'validated', 'approval-shown', 'approved', 'dispatched'] as const) l.append(step(id, e));
  l.append(step(id, outcome, { detail }));
}

/** Six requests (the fourth refused), each outcome its own signed checkpoint; every checkpoint signed, in order. */
function signedLedger(file: string): { l: Ledger; checkpoints: SignedCheckpoint[] } {
  const l = new Ledger(file, { signingKey: key, signingKeyCreated: true });
  const checkpoints: SignedCheckpoint[] = [];
  l.onCheckpoint((cp) => checkpoints.push(cp));
  for (const [i, o] of (['succeeded', 'succeeded', 'succeeded', 'refused', 'succeeded', 'succeeded'] as const).entries()) request(l, `r${i}`, o);
  return { l, checkpoints };
}

async function exportText(l: Ledger, filter = {}): Promise<string> {
  const sink = new PassThrough();
  const chunks: Buffer[] = [];
  sink.on('data', (c: Buffer) => chunks.push(c));
  await l.exportFiltered(sink, { filter });
  sink.end();
  return Buffer.concat(chunks).toString('utf8');
}

type Row = Record<string, unknown> & { seq: number; hash: string; prevHash: string };

/** The hash of an export row, recomputed the way any reader can (chain.ts rule). */
function rehash(r: Row): string {
  const chained: Record<string, unknown> = {};
  for (const f of CHAINED_FIELDS) chained[f] = r[f] ?? null;
  if (chained.operation === null && chained.subjectHash === null) {
    delete chained.operation;
    delete chained.subjectHash;
  }
  if (typeof r.payloadHash === 'string') delete chained.detail;
  else delete chained.payloadHash;
  return chainHash(r.prevHash, canonicalJson(chained));
}

/** Re-chain the rows from index `from` on (the attacker has no key, only SHA-256). */
function rechain(rows: Row[], from = 0): void {
  let prev = from === 0 ? GENESIS_PREV_HASH : (rows[from - 1] as Row).hash;
  for (let i = from; i < rows.length; i++) {
    const r = rows[i] as Row;
    r.prevHash = prev;
    if (typeof r.payloadHash === 'string' && r.erasedAt === undefined) r.payloadHash = payloadHashOf(canonicalJson(r.detail));
    r.hash = rehash(r);
    prev = r.hash;
  }
}

function parse(text: string): { header: Record<string, unknown>; rows: Row[] } {
  const lines = text.trim().split('\n');
  return { header: JSON.parse(lines[0] as string) as Record<string, unknown>, rows: lines.slice(1).map((x) => JSON.parse(x) as Row) };
}
const join = (header: unknown | null, rows: Row[]): string => [...(header ? [JSON.stringify(header)] : []), ...rows.map((r) => JSON.stringify(r))].join('\n') + '\n';
const verifyText = (text: string, pk: string | null = key.publicKey) => verifyExport(Readable.from([text]), pk);

describe('export verify: attacks on the text of an export', () => {
  it('sanity: the genuine whole-range export verifies, anchored, with no gaps', async () => {
    const { l } = signedLedger(tmp.file('a.db'));
    try {
      const report = await verifyText(await exportText(l));
      expect(report).toMatchObject({ ok: true, rows: 36, gapCount: 0, checkpoint: { status: 'verified', anchored: true, count: 36 } });
    } finally {
      l.close();
    }
  });

  it('header stripped, history re-chained from the genesis (refused turned into succeeded): not ok when the key is held', async () => {
    const { l } = signedLedger(tmp.file('a.db'));
    try {
      const { rows } = parse(await exportText(l));
      const refused = rows.find((r) => r.event === 'refused') as Row;
      refused.event = 'succeeded';
      rechain(rows);
      // Without a header at all, and with the header's checkpoint set to null.
      const noHeader = await verifyText(join(null, rows));
      expect(noHeader.ok).toBe(false);
      const { header } = parse(await exportText(l));
      (header.echoLedgerExport as Record<string, unknown>).checkpoint = null;
      (header.echoLedgerExport as Record<string, unknown>).head = { count: 36, headHash: (rows[35] as Row).hash };
      const nulled = await verifyText(join(header, rows));
      expect(nulled.ok).toBe(false);
    } finally {
      l.close();
    }
  });

  it('checkpoint moved: an older genuine checkpoint put in the header, everything after it re-chained: not ok', async () => {
    const { l, checkpoints } = signedLedger(tmp.file('a.db'));
    try {
      const { header, rows } = parse(await exportText(l));
      const old = checkpoints.find((c) => c.count === 12) as SignedCheckpoint; // after request r1's outcome
      expect(old).toBeDefined();
      const refused = rows.find((r) => r.event === 'refused') as Row; // #24, after the old checkpoint
      refused.event = 'succeeded';
      rechain(rows, 12);
      const h = header.echoLedgerExport as Record<string, unknown>;
      h.checkpoint = old;
      h.head = { count: 36, headHash: (rows[35] as Row).hash };
      const report = await verifyText(join(header, rows));
      // 24 receipts, 4 outcomes among them, after the checkpoint: the ledger would fail "unsigned tail".
      expect(report.ok).toBe(false);
    } finally {
      l.close();
    }
  });

  it('rows cut below the signed checkpoint and the header\'s head lowered to match: the export does not claim "no gaps"', async () => {
    const { l } = signedLedger(tmp.file('a.db'));
    try {
      const { header, rows } = parse(await exportText(l));
      const kept = rows.slice(0, 20); // the refused request (#19..#24) and everything after it removed
      (header.echoLedgerExport as Record<string, unknown>).head = { count: 20, headHash: (kept[19] as Row).hash };
      const report = await verifyText(join(header, kept));
      // The signed checkpoint says the ledger held 36 receipts: 16 of them are not in the export.
      expect(report.missing).toBe(16);
      expect(report.summary).not.toMatch(/no gaps/);
    } finally {
      l.close();
    }
  });

  it('a field the hash does not cover, added to a row (a forged "reason"), is a break: "every hash intact" covers every field', async () => {
    const { l } = signedLedger(tmp.file('a.db'));
    try {
      const { header, rows } = parse(await exportText(l));
      (rows[23] as Row).reason = 'the person approved this by phone';
      const report = await verifyText(join(header, rows));
      expect(report).toMatchObject({ ok: false, firstBroken: { seq: 24, reason: expect.stringMatching(/"reason" is not a receipt field/) } });
    } finally {
      l.close();
    }
  });

  it('a row duplicated, rows reordered, the header moved below the rows, a checkpoint with a flipped signature: each a failure', async () => {
    const { l } = signedLedger(tmp.file('a.db'));
    try {
      const text = await exportText(l);
      const { header, rows } = parse(text);
      expect(await verifyText(join(header, [...rows.slice(0, 5), rows[4] as Row, ...rows.slice(5)]))).toMatchObject({ ok: false, firstBroken: { reason: expect.stringMatching(/out of order/) } });
      expect(await verifyText(join(header, [...rows].reverse()))).toMatchObject({ ok: false });
      const lines = text.trim().split('\n');
      expect(await verifyText([...lines.slice(1), lines[0]].join('\n'))).toMatchObject({ ok: false, firstBroken: { reason: expect.stringMatching(/header line after/) } });
      const h = structuredClone(header) as { echoLedgerExport: { checkpoint: SignedCheckpoint } };
      const sig = Buffer.from(h.echoLedgerExport.checkpoint.signature, 'base64');
      sig[3] = (sig[3] as number) ^ 1;
      h.echoLedgerExport.checkpoint.signature = sig.toString('base64');
      expect(await verifyText(join(h, rows))).toMatchObject({ ok: false, checkpoint: { status: 'failed' } });
      // A checkpoint re-signed with the attacker's own key over the re-chained head.
      const other = LedgerSigningKey.generate();
      const forged = structuredClone(header) as { echoLedgerExport: { checkpoint: SignedCheckpoint } };
      forged.echoLedgerExport.checkpoint = other.sign({ count: 36, headHash: (rows[35] as Row).hash, time: 1 });
      expect(await verifyText(join(forged, rows))).toMatchObject({ ok: false, checkpoint: { status: 'failed' } });
    } finally {
      l.close();
    }
  });
});

describe('the ledger file: guard triggers, retention, migration', () => {
  it('a guard trigger replaced by a harmless one of the same name fails verify (it is checked by its SQL, not its name)', () => {
    const file = tmp.file('t.db');
    const { l } = signedLedger(file);
    l.close();
    const db = new Database(file);
    db.exec("DROP TRIGGER receipts_no_delete; CREATE TRIGGER receipts_no_delete BEFORE DELETE ON receipts WHEN 0 BEGIN SELECT 1; END;");
    db.close();
    const r = new Ledger(file, { readonly: true, publicKey: key.publicKey });
    try {
      const report = r.verify();
      expect(report.ok).toBe(false);
      expect(report.problems?.map((p) => p.code)).toContain('trigger-missing');
    } finally {
      r.close();
    }
  });

  it('migration of an older file does not replace an UPDATE guard someone swapped for a harmless one (it would hide the swap)', () => {
    const file = tmp.file('v2.db');
    writeFormat2Ledger(file, Array.from({ length: 5 }, (_, i) => fullInput(i)));
    const db = new Database(file);
    db.exec('DROP TRIGGER receipts_no_update; CREATE TRIGGER receipts_no_update BEFORE UPDATE ON receipts WHEN 0 BEGIN SELECT 1; END;');
    db.close();
    new Ledger(file).close(); // the console's read-write open migrates 2 -> 3 -> 4
    const r = new Ledger(file, { readonly: true });
    try {
      expect(r.verify().problems?.map((p) => p.message)).toEqual([expect.stringMatching(/guard trigger receipts_no_update is missing or altered/)]);
    } finally {
      r.close();
    }
  });

  it('retention erased some payloads, then one kept payload altered and one erased row\'s payloadHash altered: verify names each', async () => {
    let t = 1_700_000_000_000;
    const file = tmp.file('r.db');
    const l = new Ledger(file, { now: () => t, signingKey: key, signingKeyCreated: true });
    l.appendBatch(Array.from({ length: 10 }, (_, i) => fullInput(i)));
    t += 86_400_000;
    l.appendBatch(Array.from({ length: 10 }, (_, i) => fullInput(100 + i)));
    expect(await l.erasePayloads({ before: t })).toMatchObject({ erased: 10 });
    expect(l.verify({ parallel: false }).ok).toBe(true);
    l.close();
    const attack = (sql: string, ...args: unknown[]): void => {
      const db = new Database(file);
      db.exec('DROP TRIGGER receipts_no_update');
      db.prepare(sql).run(...args);
      db.exec(TRIGGERS_SQL);
      db.close();
    };
    const verify = (parallel: boolean) => {
      const r = new Ledger(file, { readonly: true, publicKey: key.publicKey });
      try {
        return r.verify(parallel ? { parallel: { minRows: 0, rangeRows: 4, threads: 2 } } : { parallel: false });
      } finally {
        r.close();
      }
    };
    attack(`UPDATE receipts SET detail = '{"note":"forged","step":101}' WHERE seq = 12`);
    for (const p of [false, true]) expect(verify(p)).toMatchObject({ ok: false, firstBroken: { seq: 12, reason: expect.stringMatching(/payload/) } });
    attack(`UPDATE receipts SET detail = ? WHERE seq = 12`, canonicalJson({ note: 'ok', step: 101 }));
    expect(verify(false).ok).toBe(true);
    attack(`UPDATE receipts SET payload_hash = ? WHERE seq = 3`, 'f'.repeat(64));
    for (const p of [false, true]) expect(verify(p)).toMatchObject({ ok: false, firstBroken: { seq: 3 } });
  });

  it('retention running while appends go on: every old payload erased, none new, and the chain and checkpoints verify', async () => {
    let t = 1_700_000_000_000;
    const l = new Ledger(tmp.file('c.db'), { now: () => t, signingKey: key, signingKeyCreated: true });
    try {
      for (let i = 0; i < 50; i++) request(l, `old${i}`, i % 2 ? 'succeeded' : 'denied', { i });
      t += 10 * 86_400_000;
      const before = t - 86_400_000;
      const run = l.erasePayloads({ before, batch: 7 });
      // Appends between the batches (the erasure yields to the event loop after each).
      let appended = 0;
      const appendMeanwhile = async (): Promise<void> => {
        for (let i = 0; i < 20; i++) {
          request(l, `new${i}`, 'succeeded', { i });
          appended++;
          await new Promise<void>((r) => setImmediate(r));
        }
      };
      const [res] = await Promise.all([run, appendMeanwhile()]);
      expect(res.erased).toBe(300);
      expect(appended).toBe(20);
      const db = new Database(l.file, { readonly: true });
      expect(db.prepare('SELECT count(*) FROM receipts WHERE erased_at IS NOT NULL AND time >= ?').pluck().get(before)).toBe(0);
      expect(db.prepare('SELECT count(*) FROM receipts WHERE erased_at IS NULL AND time < ?').pluck().get(before)).toBe(0);
      db.close();
      const single = l.verify({ parallel: false });
      expect(single).toMatchObject({ ok: true });
      expect(l.verify({ parallel: { minRows: 0, rangeRows: 64, threads: 2 } })).toEqual(single);
    } finally {
      l.close();
    }
  });
});
