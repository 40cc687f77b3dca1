/**
 * The chain formula: the fast canonical text that append and verify hash is
 * byte for byte the shared RFC 8785 canonicalJson of the receipt without its
 * hash, and a pinned vector keeps the formula from drifting.
 */
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/shared/canonical';
import { sha256HexSync } from '../../src/main/core/digest';
import Database from 'better-sqlite3';
import {
  CHAINED_FIELDS, GENESIS_PREV_HASH, HASH_INPUT_SQL, OPTIONAL_CHAINED_FIELDS, ROW_COLUMNS, ROW_COLUMNS_SQL, canonicalReceiptText, chainHash, payloadHashOf, sha256Hex,
  type RawRow,
} from '../../src/main/core/ledger/chain';
import { prepareSchema } from '../../src/main/core/ledger/schema';

const fieldOfColumn: Record<(typeof ROW_COLUMNS)[number], string> = {
  seq: 'seq', id: 'id', time: 'time', request_id: 'requestId', event: 'event', faculty: 'faculty', origin: 'origin',
  tab_id: 'tabId', frame_id: 'frameId', document_id: 'documentId', tool_name: 'toolName', descriptor_hash: 'descriptorHash',
  arguments_hash: 'argumentsHash', actor: 'actor', detail: 'detail', prev_hash: 'prevHash', hash: 'hash',
  operation: 'operation', subject_hash: 'subjectHash', payload_hash: 'payloadHash', erased_at: 'erasedAt',
};

/** The receipt object (without hash) that a raw row stands for; operation and subjectHash left out when both are null. */
function objectOf(row: RawRow): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  ROW_COLUMNS.forEach((c, i) => {
    if (c === 'hash') return;
    o[fieldOfColumn[c]] = c === 'actor' || c === 'detail' ? JSON.parse(row[i] as string) : row[i];
  });
  if (o.operation === null && o.subjectHash === null) {
    delete o.operation;
    delete o.subjectHash;
  }
  // Format 3: erasedAt is not chained; a payload hash stands in for the detail.
  delete o.erasedAt;
  if (o.payloadHash === null || o.payloadHash === undefined) delete o.payloadHash;
  else delete o.detail;
  return o;
}

// A small deterministic PRNG so failures reproduce.
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

const NASTY = ['', 'plain', 'quote " and \\ backslash', 'tab\tnew\nline\r\u0000\u001f\u007f', 'é ü ß', '工具', '😀 emoji', '\u2028\u2029', '</script>', '{"json":"inside"}'];

function randomRow(rand: () => number): RawRow {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)] as T;
  const maybe = <T>(v: T): T | null => (rand() < 0.3 ? null : v);
  const actor = canonicalJson(pick([{ kind: 'console' }, { kind: 'agent', name: pick(NASTY), version: '1.0' }]));
  const detail = canonicalJson(pick<unknown>([null, 1.5, -0, 1e21, [1, 'a', null], { z: 1, a: { é: pick(NASTY), '😀': true, '': [] } }, pick(NASTY)]));
  return [
    1 + Math.floor(rand() * 2 ** 40), 'id-' + pick(NASTY), Math.floor(rand() * 2 ** 52), maybe(pick(NASTY)), 'succeeded', 'semantic',
    maybe(pick(NASTY)), maybe(Math.floor(rand() * 2000) - 1), maybe(Math.floor(rand() * 20)), maybe(pick(NASTY)), maybe(pick(NASTY)),
    maybe('ab'.repeat(32)), maybe('cd'.repeat(32)), actor, detail, pick([GENESIS_PREV_HASH, 'ef'.repeat(32)]), '',
    // Half the rows have neither operation nor subjectHash (the format-1 shape), the rest one or both.
    ...(rand() < 0.5 ? [null, null] : [maybe(pick(['invoke', 'discover', 'click', 'a-1'])), maybe('12'.repeat(32))]),
    // Half the rows of the payload-hash rule (format 4), the rest of the old rule.
    rand() < 0.5 ? null : payloadHashOf(detail), null,
  ] as unknown as RawRow;
}

describe('chain', () => {
  it('leaves out operation and subjectHash only when both are null', () => {
    expect([...OPTIONAL_CHAINED_FIELDS]).toEqual(['operation', 'subjectHash']);
    const rand = rng(3);
    let without = 0;
    let withOne = 0;
    for (let i = 0; i < 500; i++) {
      const row = randomRow(rand);
      const text = canonicalReceiptText(row);
      const both = row[17] === null && row[18] === null;
      expect(text.includes('"operation":')).toBe(!both);
      expect(text.includes('"subjectHash":')).toBe(!both);
      if (both) without++;
      else if (row[17] === null || row[18] === null) withOne++;
      // A format-1 row (17 values) reads as both null.
      if (both && row[19] === null) expect(canonicalReceiptText(row.slice(0, 17))).toBe(text);
    }
    expect(without).toBeGreaterThan(100);
    expect(withOne).toBeGreaterThan(50);
  });

  it('covers exactly the receipt fields without hash, in RFC 8785 key order', () => {
    const fields = ROW_COLUMNS.filter((c) => c !== 'hash' && c !== 'erased_at').map((c) => fieldOfColumn[c]);
    expect([...CHAINED_FIELDS].sort()).toEqual([...fields].sort());
    expect([...CHAINED_FIELDS]).toEqual([...CHAINED_FIELDS].sort());
  });

  it('builds the same text as canonicalJson for 2,000 random rows', () => {
    const rand = rng(42);
    for (let i = 0; i < 2000; i++) {
      const row = randomRow(rand);
      expect(canonicalReceiptText(row)).toBe(canonicalJson(objectOf(row)));
    }
  });

  it('SQLite builds the same prevHash || canonical text (HASH_INPUT_SQL) as JS for 2,000 random rows', () => {
    const db = new Database(':memory:');
    prepareSchema(db, false);
    db.exec('DROP TRIGGER receipts_append_next'); // random seqs, not a chain
    const insert = db.prepare(`INSERT INTO receipts (${ROW_COLUMNS_SQL}) VALUES (${ROW_COLUMNS_SQL.replace(/\w+/g, '?')})`);
    const rand = rng(7);
    const rows: RawRow[] = [];
    const seen = new Set<number>();
    while (rows.length < 2000) {
      const row = randomRow(rand);
      if (seen.has(row[0])) continue;
      seen.add(row[0]);
      row[1] = `${row[1]}-${rows.length}`; // id is UNIQUE
      row[16] = 'f'.repeat(64);
      insert.run(row);
      rows.push(row);
    }
    const built = db.prepare(`SELECT seq, ${HASH_INPUT_SQL} FROM receipts`).raw().all() as [number, string][];
    const bySeq = new Map(rows.map((r) => [r[0], r]));
    for (const [seq, text] of built) {
      const row = bySeq.get(seq) as RawRow;
      expect(text).toBe(row[15] + canonicalReceiptText(row));
    }
    expect(built).toHaveLength(2000);
    db.close();
  });

  it('hashes SHA-256(prevHash || canonical) and matches a pinned vector', () => {
    const row: RawRow = [
      1, '00000000-0000-4000-8000-000000000000', 1700000000000, 'req-1', 'succeeded', 'webmcp-invoke', 'https://shop.example',
      7, 0, 'doc-1', 'add_to_cart', 'a'.repeat(64), 'b'.repeat(64), '{"kind":"agent","name":"claude"}', '{"qty":2}', GENESIS_PREV_HASH, '',
      null, null,
    ];
    const text = canonicalReceiptText(row);
    expect(text).toBe(
      '{"actor":{"kind":"agent","name":"claude"},"argumentsHash":"' + 'b'.repeat(64) + '","descriptorHash":"' + 'a'.repeat(64) +
        '","detail":{"qty":2},"documentId":"doc-1","event":"succeeded","faculty":"webmcp-invoke","frameId":0,' +
        '"id":"00000000-0000-4000-8000-000000000000","origin":"https://shop.example","prevHash":"' + GENESIS_PREV_HASH +
        '","requestId":"req-1","seq":1,"tabId":7,"time":1700000000000,"toolName":"add_to_cart"}',
    );
    expect(chainHash(GENESIS_PREV_HASH, text)).toBe(sha256HexSync(GENESIS_PREV_HASH + text));
    expect(sha256Hex(GENESIS_PREV_HASH + text)).toBe(chainHash(GENESIS_PREV_HASH, text));
    // Pinned with coreutils: printf '%s' "$prevHash$text" | sha256sum
    expect(chainHash(GENESIS_PREV_HASH, text)).toBe('104e1919ca0049eabcdf2c987a0db02c2f20a8e6c80f81e9b71c2fb56bd2a57a');
  });

  it('format 2: operation and subjectHash in their key order, and a pinned vector', () => {
    const row: RawRow = [
      1, '00000000-0000-4000-8000-000000000000', 1700000000000, 'req-1', 'succeeded', 'webmcp-invoke', 'https://shop.example',
      7, 0, 'doc-1', 'add_to_cart', 'a'.repeat(64), 'b'.repeat(64), '{"kind":"agent","name":"claude"}', '{"qty":2}', GENESIS_PREV_HASH, '',
      'invoke', 'c'.repeat(64),
    ];
    const text = canonicalReceiptText(row);
    expect(text).toContain('"id":"00000000-0000-4000-8000-000000000000","operation":"invoke","origin":');
    expect(text).toContain('"seq":1,"subjectHash":"' + 'c'.repeat(64) + '","tabId":7');
    expect(text).toBe(canonicalJson(objectOf(row)));
    // Pinned with coreutils: printf '%s' "$prevHash$text" | sha256sum
    expect(chainHash(GENESIS_PREV_HASH, text)).toBe('9f0c1c297b2d8db8aa45b78cad20d47dadb6114ecd4fbeed8bf4749d392687ea');
    // One of the two alone still puts both in the text.
    const onlySubject = [...row.slice(0, 17), null, 'c'.repeat(64)] as unknown as RawRow;
    expect(canonicalReceiptText(onlySubject)).toContain('"operation":null,"origin"');
  });

  it('format 4: a payload hash stands in for the detail (retention can erase it), and a pinned vector', () => {
    const row: RawRow = [
      1, '00000000-0000-4000-8000-000000000000', 1700000000000, 'req-1', 'succeeded', 'webmcp-invoke', 'https://shop.example',
      7, 0, 'doc-1', 'add_to_cart', 'a'.repeat(64), 'b'.repeat(64), '{"kind":"agent","name":"claude"}', '{"qty":2}', GENESIS_PREV_HASH, '',
      null, null, payloadHashOf('{"qty":2}'), null,
    ];
    // Pinned with coreutils: printf '%s' '{"qty":2}' | sha256sum
    expect(row[19]).toBe('1fc7d7d333dc4a41f0fcbde36745f2fabc441a6ae0e846ffcd32ceb4438dcc2a');
    const text = canonicalReceiptText(row);
    expect(text).not.toContain('"detail"');
    expect(text).toContain('"origin":"https://shop.example","payloadHash":"' + row[19] + '","prevHash":');
    expect(text).toBe(canonicalJson(objectOf(row)));
    // Pinned with coreutils: printf '%s' "$prevHash$text" | sha256sum
    expect(chainHash(GENESIS_PREV_HASH, text)).toBe('9ea28e1d0e15c33cdc2ecc938b91e28a6ff310fb71d3adc976dbee7979056094');
    // Erasing the payload (detail null, erasedAt set) leaves the text, so the hash, as it was.
    expect(canonicalReceiptText([...row.slice(0, 14), 'null', ...row.slice(15, 20), 1_800_000_000_000] as unknown as RawRow)).toBe(text);
  });

  it('uses 64 zeros as the genesis prevHash', () => {
    expect(GENESIS_PREV_HASH).toBe('0000000000000000000000000000000000000000000000000000000000000000');
  });
});
