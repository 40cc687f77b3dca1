/**
 * Restart recovery (src/main/core/broker/recovery.ts) on a real SQLite ledger:
 * dispatched requests become outcome-unknown and blocks, requests waiting for
 * a decision are cancelled, outcome-unknown blocks survive restarts until the
 * tab is discovered again, a second run writes nothing, and the look-ups walk
 * indexes only (their query plans), also on a ledger of 100,000 receipts.
 */
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Ledger, RECOVERY_SQL } from '../../src/main/core/ledger/index';
import { RESTART_CANCEL_REASON, RESTART_CANCEL_UNANSWERED_REASON, RESTART_OUTCOME_REASON, recoverAtStart } from '../../src/main/core/broker/recovery';
import type { Receipt, ReceiptEvent, ReceiptInput } from '../../src/shared/receipt';
import { HASH_A, HASH_B, consoleInput, tempDir } from './support/ledger-fixtures';

let tmp: ReturnType<typeof tempDir>;
let file: string;
let ledger: Ledger;
let clock: number;

beforeEach(() => {
  tmp = tempDir('ledger-recovery-');
  file = tmp.file('l.db');
  clock = 1_700_000_000_000;
  ledger = new Ledger(file, { now: () => (clock += 10) });
});
afterEach(() => {
  ledger.close();
  tmp.cleanup();
});

const AGENT = { kind: 'agent', name: 'claude-code' } as const;

/** The receipts of one webmcp_invoke request, as the broker writes them (every receipt repeats the trail's fields). */
function invoke(requestId: string, events: ReceiptEvent[], over: Partial<ReceiptInput> = {}): ReceiptInput[] {
  return events.map((event) => ({
    requestId,
    event,
    faculty: 'webmcp-invoke',
    origin: 'https://shop.example',
    tabId: 7,
    frameId: 0,
    documentId: 'DOC-7',
    toolName: 'add_to_cart',
    descriptorHash: HASH_A,
    argumentsHash: HASH_B,
    operation: 'invoke',
    subjectHash: HASH_A,
    actor: event === 'approved' ? { kind: 'person' } : AGENT,
    detail: { step: event },
    ...over,
  }));
}

/** A successful webmcp_discover of `tabId`. */
function discover(requestId: string, tabId: number): ReceiptInput[] {
  return (['requested', 'discovered'] as const).map((event) => ({
    requestId, event, faculty: 'webmcp-discover', tabId, frameId: 0, documentId: `DOC-${tabId}`, operation: 'discover', actor: AGENT, detail: null,
  }));
}

const DISPATCHED: ReceiptEvent[] = ['requested', 'validated', 'approval-shown', 'approved', 'dispatched'];

function receiptsOf(requestId: string): Receipt[] {
  return ledger.query({ requestId }).receipts;
}

function reopen(): void {
  ledger.close();
  ledger = new Ledger(file, { now: () => (clock += 10) });
}

describe('recoverAtStart', () => {
  it('a dispatched request without an outcome gets outcome-unknown (console-restarted) and becomes a block', () => {
    ledger.appendBatch(invoke('r1', DISPATCHED));
    reopen();
    const report = recoverAtStart(ledger);
    expect(report.outcomeUnknown).toEqual([
      { requestId: 'r1', tabId: 7, documentId: 'DOC-7', toolName: 'add_to_cart', subjectHash: HASH_A, faculty: 'webmcp-invoke', operation: 'invoke' },
    ]);
    expect(report.cancelled).toEqual([]);
    expect(report.blocks).toEqual([{ faculty: 'webmcp-invoke', tabId: 7, documentId: 'DOC-7', subject: 'add_to_cart', requestId: 'r1' }]);
    const newest = receiptsOf('r1')[0] as Receipt;
    expect(newest).toMatchObject({
      event: 'outcome-unknown', actor: { kind: 'console' }, detail: { reason: RESTART_OUTCOME_REASON },
      faculty: 'webmcp-invoke', origin: 'https://shop.example', tabId: 7, frameId: 0, documentId: 'DOC-7', toolName: 'add_to_cart',
      descriptorHash: HASH_A, argumentsHash: HASH_B, operation: 'invoke', subjectHash: HASH_A,
    });
    expect(newest.detail).toEqual({ reason: 'console-restarted' });
    expect(ledger.verify()).toMatchObject({ ok: true, count: 6 });
  });

  it.each([
    ['approval-shown', ['requested', 'validated', 'approval-shown']],
    ['validated', ['requested', 'validated']],
    ['requested', ['requested']],
    ['approved without dispatched', ['requested', 'validated', 'approval-shown', 'approved']],
  ] as [string, ReceiptEvent[]][])('a request left at %s gets cancelled (before a decision, or unanswered when only requested), no block', (_name, events) => {
    ledger.appendBatch(invoke('r1', events));
    const report = recoverAtStart(ledger);
    expect(report).toEqual({ outcomeUnknown: [], cancelled: ['r1'], blocks: [] });
    expect(receiptsOf('r1')[0]).toMatchObject({
      event: 'cancelled', actor: { kind: 'console' }, detail: { reason: events.length === 1 ? RESTART_CANCEL_UNANSWERED_REASON : RESTART_CANCEL_REASON }, tabId: 7, toolName: 'add_to_cart', operation: 'invoke',
    });
    expect(RESTART_CANCEL_REASON).toBe('console restarted before a decision');
  });

  it('leaves finished requests and console events alone', () => {
    ledger.appendBatch([
      ...invoke('ok', [...DISPATCHED, 'succeeded']),
      ...invoke('failed', [...DISPATCHED, 'failed']),
      ...invoke('denied', ['requested', 'validated', 'approval-shown', 'denied']),
      ...invoke('expired', ['requested', 'validated', 'approval-shown', 'expired']),
      ...invoke('refused', ['requested', 'refused']),
      ...invoke('cancelled', [...DISPATCHED, 'cancelled']),
      ...invoke('readback', [...DISPATCHED, 'succeeded', 'readback-confirmed']),
      ...discover('d1', 9),
      consoleInput(),
    ]);
    const before = ledger.head();
    expect(recoverAtStart(ledger)).toEqual({ outcomeUnknown: [], cancelled: [], blocks: [] });
    expect(ledger.head()).toEqual(before);
  });

  it('handles many requests at once, in one transaction, oldest first', () => {
    ledger.appendBatch([
      ...invoke('a', DISPATCHED),
      ...invoke('b', ['requested', 'validated', 'approval-shown']),
      ...invoke('c', DISPATCHED, { tabId: 8, documentId: 'DOC-8', toolName: 'pay' }),
      ...invoke('done', [...DISPATCHED, 'succeeded']),
      ...invoke('d', ['requested']),
    ]);
    const appended: Receipt[] = [];
    ledger.onAppend((r) => appended.push(r));
    const report = recoverAtStart(ledger);
    expect(report.outcomeUnknown.map((u) => u.requestId)).toEqual(['a', 'c']);
    expect(report.cancelled).toEqual(['b', 'd']);
    expect(appended.map((r) => [r.requestId, r.event])).toEqual([['a', 'outcome-unknown'], ['b', 'cancelled'], ['c', 'outcome-unknown'], ['d', 'cancelled']]);
    expect(report.blocks).toEqual([
      { faculty: 'webmcp-invoke', tabId: 7, documentId: 'DOC-7', subject: 'add_to_cart', requestId: 'a' },
      { faculty: 'webmcp-invoke', tabId: 8, documentId: 'DOC-8', subject: 'pay', requestId: 'c' },
    ]);
  });

  it('an outcome-unknown block from an earlier run survives restarts', () => {
    ledger.appendBatch([...invoke('old', [...DISPATCHED, 'outcome-unknown']), ...invoke('later', [...DISPATCHED, 'succeeded'], { toolName: 'search' })]);
    for (let run = 0; run < 3; run++) {
      reopen();
      expect(recoverAtStart(ledger)).toEqual({
        outcomeUnknown: [], cancelled: [], blocks: [{ faculty: 'webmcp-invoke', tabId: 7, documentId: 'DOC-7', subject: 'add_to_cart', requestId: 'old' }],
      });
    }
  });

  it('a later discovery of the tab lifts the block; one of another tab, or one before the outcome, does not', () => {
    ledger.appendBatch([...discover('d-before', 7), ...invoke('u7', [...DISPATCHED, 'outcome-unknown']), ...invoke('u8', DISPATCHED, { tabId: 8, documentId: 'DOC-8' })]);
    ledger.appendBatch(discover('d-other', 9));
    const first = recoverAtStart(ledger);
    expect(first.blocks.map((b) => b.requestId)).toEqual(['u7', 'u8']);
    ledger.appendBatch(discover('d7', 7));
    expect(recoverAtStart(ledger).blocks).toEqual([{ faculty: 'webmcp-invoke', tabId: 8, documentId: 'DOC-8', subject: 'add_to_cart', requestId: 'u8' }]);
    // A discovery that was refused (no `discovered` receipt) lifts nothing.
    ledger.appendBatch([...invoke('d8', ['requested', 'refused'], { faculty: 'webmcp-discover', tabId: 8, operation: 'discover' })]);
    expect(recoverAtStart(ledger).blocks.map((b) => b.requestId)).toEqual(['u8']);
    ledger.appendBatch(discover('d8-ok', 8));
    expect(recoverAtStart(ledger).blocks).toEqual([]);
  });

  it('a late outcome after outcome-unknown ends the block', () => {
    ledger.appendBatch(invoke('r1', [...DISPATCHED, 'outcome-unknown', 'succeeded']));
    expect(recoverAtStart(ledger).blocks).toEqual([]);
  });

  it('names the subject by its hash when there is no tool name, one block per (tab, document, subject), the newest request kept', () => {
    ledger.appendBatch([
      ...invoke('s1', DISPATCHED, { faculty: 'semantic', toolName: null, operation: 'click', subjectHash: 'c'.repeat(64) }),
      ...invoke('t1', [...DISPATCHED, 'outcome-unknown']),
      ...invoke('t2', [...DISPATCHED, 'outcome-unknown']),
    ]);
    const report = recoverAtStart(ledger);
    expect(report.outcomeUnknown).toEqual([
      { requestId: 's1', tabId: 7, documentId: 'DOC-7', toolName: null, subjectHash: 'c'.repeat(64), faculty: 'semantic', operation: 'click' },
    ]);
    expect(report.blocks).toEqual([
      { faculty: 'webmcp-invoke', tabId: 7, documentId: 'DOC-7', subject: 'add_to_cart', requestId: 't2' },
      { faculty: 'semantic', tabId: 7, documentId: 'DOC-7', subject: 'c'.repeat(64), requestId: 's1' },
    ]);
  });

  it('takes a missing document or tool name from the other receipts of the request; skips a block it cannot match', () => {
    ledger.appendBatch([
      ...invoke('r1', DISPATCHED),
      { requestId: 'r1', event: 'outcome-unknown', faculty: 'webmcp-invoke', tabId: 7, actor: { kind: 'console' } },
      ...invoke('r2', DISPATCHED, { documentId: null, tabId: 8 }),
      { requestId: 'r2', event: 'outcome-unknown', faculty: 'webmcp-invoke', tabId: 8, actor: { kind: 'console' } },
      { requestId: 'r3', event: 'outcome-unknown', faculty: 'webmcp-invoke', toolName: 'x', documentId: 'D', actor: { kind: 'console' } },
    ]);
    expect(recoverAtStart(ledger).blocks).toEqual([{ faculty: 'webmcp-invoke', tabId: 7, documentId: 'DOC-7', subject: 'add_to_cart', requestId: 'r1' }]);
  });

  it('run twice: the second run writes nothing and returns the same blocks', () => {
    ledger.appendBatch([...invoke('a', DISPATCHED), ...invoke('b', ['requested', 'validated', 'approval-shown']), ...invoke('c', [...DISPATCHED, 'outcome-unknown'], { toolName: 'pay' })]);
    const first = recoverAtStart(ledger);
    expect(first.outcomeUnknown).toHaveLength(1);
    expect(first.cancelled).toEqual(['b']);
    const head = ledger.head();
    reopen();
    const second = recoverAtStart(ledger);
    expect(ledger.head()).toEqual(head);
    expect(second).toEqual({ outcomeUnknown: [], cancelled: [], blocks: first.blocks });
    expect(second.blocks.map((b) => b.requestId)).toEqual(['c', 'a']);
  });

  it('looks back at the newest `lookback` requests and, apart, the newest `lookback` dispatches (so reads cannot push a dispatch out of reach), and drops blocks older than maxBlockAgeMs', () => {
    ledger.appendBatch(invoke('far', DISPATCHED));
    for (let i = 0; i < 5; i++) ledger.appendBatch(invoke(`ran-${i}`, [...DISPATCHED, 'succeeded']));
    expect(recoverAtStart(ledger, { lookback: 5 }).outcomeUnknown).toEqual([]); // beyond both look-backs
    expect(recoverAtStart(ledger, { lookback: 6 }).outcomeUnknown.map((u) => u.requestId)).toEqual(['far']);
    ledger.appendBatch(invoke('oldest', DISPATCHED));
    for (let i = 0; i < 5; i++) ledger.appendBatch(invoke(`done-${i}`, ['requested', 'refused']));
    const t = clock;
    // Five newer requests (reads write `requested` too) do not hide it: it is among the newest dispatches.
    expect(recoverAtStart(ledger, { lookback: 5 }).outcomeUnknown.map((u) => u.requestId)).toEqual(['oldest']);
    expect(recoverAtStart(ledger, { now: () => t + 1000, maxBlockAgeMs: 5000 }).blocks).toHaveLength(1);
    expect(recoverAtStart(ledger, { now: () => t + 10_000, maxBlockAgeMs: 5000 }).blocks).toEqual([]);
    expect(() => recoverAtStart(ledger, { lookback: 0 })).toThrow(/look-back must be an integer/);
  });

  it('throws on a read-only ledger that has something to write', () => {
    ledger.appendBatch(invoke('r1', DISPATCHED));
    const ro = new Ledger(file, { readonly: true });
    try {
      expect(() => recoverAtStart(ro)).toThrow(/read-only/);
    } finally {
      ro.close();
    }
  });
});

describe('recovery on a large ledger', () => {
  it('walks indexes only: no table scan in either look-up', () => {
    const db = new Database(file, { readonly: true });
    try {
      for (const sql of Object.values(RECOVERY_SQL)) {
        const plan = (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all({ limit: 10_000 }) as { detail: string }[]).map((r) => r.detail);
        // Index searches and rowid lookups; the only scans are of the bounded look-back lists (`SCAN (subquery-N)`, at most `limit` rows).
        expect(plan.every((d) => /^(SEARCH|LIST SUBQUERY|CORRELATED SCALAR SUBQUERY|COMPOUND QUERY|LEFT-MOST SUBQUERY|UNION ALL|CO-ROUTINE|SCAN \(subquery-\d+\))/.test(d)), plan.join('; ')).toBe(true);
        expect(plan.join('; ')).not.toMatch(/\bSCAN (?!\(subquery-)|TEMP B-TREE/);
      }
      const plans = Object.values(RECOVERY_SQL).map((sql) =>
        (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all({ limit: 1 }) as { detail: string }[]).map((r) => r.detail).join('; '));
      expect(plans[0]).toMatch(/USING INDEX receipts_event \(event=\?\).*USING COVERING INDEX receipts_request \(request_id=\?\)/);
      expect(plans[1]).toMatch(/receipts_event \(event=\?\).*USING COVERING INDEX receipts_discovered \(tab_id=\? AND seq>\?\).*receipts_request \(request_id=\?\)/);
    } finally {
      db.close();
    }
  });

  it('recovers correctly in a ledger of 100,000 receipts', () => {
    const N = 100_000;
    const all: ReceiptInput[] = [];
    // 20,000 finished five-receipt requests (a few outcome-unknown, later lifted or not), then the unfinished ones.
    for (let i = 0; all.length < N - 40; i++) {
      const tabId = 100 + (i % 50);
      if (i % 1000 === 17) all.push(...invoke(`u-${i}`, ['requested', 'validated', 'dispatched', 'outcome-unknown'], { tabId, documentId: `DOC-${tabId}` }).slice(0, 4), discover(`d-${i}`, tabId)[1] as ReceiptInput);
      else all.push(...invoke(`r-${i}`, ['requested', 'validated', 'approved', 'dispatched', 'succeeded'], { tabId, documentId: `DOC-${tabId}` }));
    }
    all.push(...invoke('old-unknown', [...DISPATCHED, 'outcome-unknown'], { tabId: 999, documentId: 'DOC-999' }));
    all.push(...invoke('open-dispatched', DISPATCHED, { tabId: 998, documentId: 'DOC-998' }));
    all.push(...invoke('open-pending', ['requested', 'validated', 'approval-shown']));
    for (let i = 0; i < all.length; i += 10_000) ledger.appendBatch(all.slice(i, i + 10_000));
    expect(ledger.head().count).toBeGreaterThanOrEqual(N - 40);
    const report = recoverAtStart(ledger);
    expect(report.outcomeUnknown.map((u) => u.requestId)).toEqual(['open-dispatched']);
    expect(report.cancelled).toEqual(['open-pending']);
    // Every earlier outcome-unknown was followed by a discovery of its tab; these two stand.
    expect(report.blocks).toEqual([
      { faculty: 'webmcp-invoke', tabId: 999, documentId: 'DOC-999', subject: 'add_to_cart', requestId: 'old-unknown' },
      { faculty: 'webmcp-invoke', tabId: 998, documentId: 'DOC-998', subject: 'add_to_cart', requestId: 'open-dispatched' },
    ]);
    expect(recoverAtStart(ledger)).toEqual({ outcomeUnknown: [], cancelled: [], blocks: report.blocks });
  });
});
