// The ledger's request index (issue 12 item 1; src/main/core/ledger/requests.ts;
// docs/timeline.md), on a generated ledger of realistic size: every page and
// count checked against the receipts themselves (read through `query`, folded
// here), keyset paging stable while receipts arrive, the live tail, the query
// plans (an index walk of `requests`, never the receipts), bad filters, and the
// format 2 → 3 migration building the same index from an existing ledger.
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LEDGER_FORMAT, Ledger, LedgerInputError } from '../../src/main/core/ledger/index';
import { MAX_TAIL_CHUNKS, REQUESTS_SQL } from '../../src/main/core/ledger/requests';
import type { Receipt } from '../../src/shared/receipt';
import { foldReceipt, hasEvent, type RequestFilter, type RequestSummary } from '../../src/shared/request-summary';
import {
  ABSENT_ORIGIN, DENY_REASON, ONE_PERCENT_ORIGIN, TIMELINE_T0, expectedMatches, generateTimelineLedger, requestInputs, type GeneratedTimeline,
} from '../support/timeline-ledger';
import { tempDir } from './support/ledger-fixtures';

const RECEIPTS = 15_000;
let tmp: ReturnType<typeof tempDir>;
let file: string;
let made: GeneratedTimeline;
let ledger: Ledger;
/** The truth: every receipt, read page by page through `query`, folded here. Newest first. */
let truth: RequestSummary[];

function allReceipts(l: Ledger): Receipt[] {
  const out: Receipt[] = [];
  let cursor: string | undefined;
  do {
    const p = l.query({ limit: 500, ...(cursor ? { cursor } : {}) });
    out.push(...p.receipts);
    cursor = p.nextCursor ?? undefined;
  } while (cursor);
  return out.reverse();
}

function foldAll(receipts: Receipt[]): RequestSummary[] {
  const rows = new Map<string, RequestSummary>();
  for (const r of receipts) {
    if (r.requestId === null) continue;
    rows.set(r.requestId, foldReceipt(rows.get(r.requestId) ?? null, { ...r, requestId: r.requestId, detail: () => r.detail }));
  }
  return [...rows.values()].sort((a, b) => b.time - a.time || b.seq - a.seq);
}

function matches(s: RequestSummary, f: RequestFilter): boolean {
  const t = f.text?.toLowerCase();
  return (
    (f.from === undefined || s.time >= f.from) && (f.to === undefined || s.time <= f.to) &&
    (f.origin === undefined || s.origin === f.origin) && (f.agent === undefined || s.agent === f.agent) &&
    (f.faculty === undefined || s.faculty === f.faculty) && (f.toolName === undefined || s.toolName === f.toolName) &&
    (f.outcome === undefined || (f.outcome === 'open' ? s.outcome === null : s.outcome === f.outcome)) &&
    (f.event === undefined || hasEvent(s.events, f.event)) && (f.requestId === undefined || s.requestId === f.requestId) &&
    (t === undefined || (s.toolName ?? '').toLowerCase().includes(t) || (s.reason ?? '').toLowerCase().includes(t))
  );
}

/** Every page of a filter, followed by its cursors. */
function allPages(l: Ledger, f: RequestFilter, limit: number): RequestSummary[] {
  const out: RequestSummary[] = [];
  let cursor: string | undefined;
  do {
    const p = l.queryRequests({ ...f, limit, ...(cursor ? { cursor } : {}) });
    expect(p.requests.length).toBeLessThanOrEqual(limit);
    out.push(...p.requests);
    cursor = p.nextCursor ?? undefined;
  } while (cursor);
  return out;
}

beforeAll(() => {
  tmp = tempDir('ledger-requests-');
  file = tmp.file('timeline.db');
  made = generateTimelineLedger(file, RECEIPTS);
  ledger = new Ledger(file);
  truth = foldAll(allReceipts(ledger));
}, 120_000);

afterAll(() => {
  ledger?.close();
  tmp?.cleanup();
});

describe('the request index', () => {
  it('holds one row per request, equal to folding its receipts', () => {
    expect(made.receipts).toBe(RECEIPTS);
    expect(truth.length).toBe(made.requests);
    expect(ledger.countRequests()).toBe(made.requests);
    expect(allPages(ledger, {}, 500)).toEqual(truth);
  });

  it('fills every column of a row as the issue lists them: time, agent, faculty and operation, tool, origin, tab, outcome, duration, decider', () => {
    const denied = truth.find((s) => s.outcome === 'denied') as RequestSummary;
    expect(denied).toMatchObject({ faculty: 'webmcp-invoke', operation: 'invoke', decidedBy: 'person', reason: DENY_REASON, steps: 4, tabId: expect.any(Number) });
    expect(denied.agent).toMatch(/^(Claude Desktop|Cursor|Claude Code)$/);
    expect(denied.durationMs).toBe(3 * 2_600);
    expect(truth.find((s) => s.faculty === 'semantic')).toMatchObject({ operation: 'click', toolName: null, decidedBy: 'person', outcome: 'succeeded', steps: 7 });
    expect(truth.find((s) => s.faculty === 'list-tabs')).toMatchObject({ decidedBy: null, origin: null, steps: 2 });
    expect(truth.find((s) => s.outcome === 'refused')).toMatchObject({ decidedBy: 'console', reason: 'invalid-arguments — quantity must be an integer' });
    const byRule = truth.filter((s) => s.decidedBy === 'policy');
    expect(byRule.length).toBeGreaterThan(0);
  });

  const filters: Array<[string, RequestFilter]> = [
    ['1% origin', { origin: ONE_PERCENT_ORIGIN }],
    ['no origin matches', { origin: ABSENT_ORIGIN }],
    ['agent', { agent: 'Cursor' }],
    ['faculty', { faculty: 'semantic' }],
    ['tool', { toolName: 'tool_13' }],
    ['outcome', { outcome: 'outcome-unknown' }],
    ['event', { event: 'readback-confirmed' }],
    ['text in a reason, any case', { text: 'MY BANK' }],
    ['text in a tool name', { text: 'ol_2' }],
    ['text with LIKE wildcards is literal', { text: '%_' }],
    ['time range', { from: TIMELINE_T0 + 2_600 * 3_000, to: TIMELINE_T0 + 2_600 * 6_000 }],
    ['agent + outcome + range', { agent: 'Claude Desktop', outcome: 'succeeded', from: TIMELINE_T0 + 2_600 * 5_000 }],
    ['one request by id', { requestId: requestInputs(100)[0]?.requestId as string }],
  ];

  it.each(filters)('filter %s: the pages (followed by their cursors) and the count equal the receipts folded', (_name, f) => {
    const want = truth.filter((s) => matches(s, f));
    expect(allPages(ledger, f, 97)).toEqual(want);
    expect(ledger.countRequests(f)).toBe(want.length);
  });

  it('the generated selectivities hold: 1% and none', () => {
    expect(ledger.countRequests({ origin: ONE_PERCENT_ORIGIN })).toBe(expectedMatches(made.requests, 100, 37));
    expect(ledger.countRequests({ origin: ABSENT_ORIGIN })).toBe(0);
    expect(ledger.queryRequests({ origin: ABSENT_ORIGIN })).toEqual({ requests: [], nextCursor: null, newestCursor: expect.any(String) });
  });

  it('every filtered page walks an index of the request table, never the receipts and never a sort', () => {
    for (const [, f] of filters) {
      const plan = ledger.requestPlan(f).join(' | ');
      expect(plan, JSON.stringify(f)).toMatch(/(SCAN|SEARCH) requests USING (COVERING )?INDEX (sqlite_autoindex_)?requests_/);
      expect(plan, JSON.stringify(f)).not.toMatch(/receipts|TEMP B-TREE/);
    }
  });

  it('refuses bad filters, limits and cursors with LedgerInputError', () => {
    const bad: unknown[] = [
      { limit: 0 }, { limit: 501 }, { cursor: 'r1.1.1' }, { cursor: 'q1.1.1', after: 'q1.1.1' }, { after: 'nope' }, { origin: 5 },
      { faculty: 'telepathy' }, { outcome: 'approved' }, { event: 'nope' }, { text: '' }, { text: 'x'.repeat(201) }, { from: 1.5 },
    ];
    for (const q of bad) expect(() => ledger.queryRequests(q as RequestFilter), JSON.stringify(q)).toThrow(LedgerInputError);
    expect(() => ledger.countRequests({ outcome: 'nope' } as unknown as RequestFilter)).toThrow(LedgerInputError);
  });
});

describe('paging while receipts arrive, and the live tail', () => {
  it('a cursor keeps its place as new requests arrive; `after` gives exactly the new ones, in pages; their later receipts update the rows', () => {
    const first = ledger.queryRequests({ limit: 50 });
    const newest = first.newestCursor as string;
    const agent = { kind: 'agent' as const, name: 'Tail agent' };
    for (let i = 0; i < 7; i++) ledger.append({ requestId: `tail-${i}`, event: 'requested', faculty: 'webmcp-invoke', origin: ONE_PERCENT_ORIGIN, toolName: 'tail_tool', actor: agent });
    // The next page of the old listing is what it would have been.
    expect(ledger.queryRequests({ limit: 50, cursor: first.nextCursor as string }).requests).toEqual(truth.slice(50, 100));
    // The tail, three at a time: oldest of the new ones first, each page newest first.
    const p1 = ledger.queryRequests({ after: newest, limit: 3 });
    expect(p1.requests.map((s) => s.requestId)).toEqual(['tail-2', 'tail-1', 'tail-0']);
    const p2 = ledger.queryRequests({ after: p1.newestCursor as string, limit: 3 });
    expect(p2.requests.map((s) => s.requestId)).toEqual(['tail-5', 'tail-4', 'tail-3']);
    const p3 = ledger.queryRequests({ after: p2.newestCursor as string, limit: 3 });
    expect(p3.requests.map((s) => s.requestId)).toEqual(['tail-6']);
    expect(ledger.queryRequests({ after: p3.newestCursor as string, limit: 3 })).toMatchObject({ requests: [], newestCursor: p3.newestCursor });
    // With a filter the tail only gives what matches.
    expect(ledger.queryRequests({ after: newest, origin: ABSENT_ORIGIN }).requests).toEqual([]);
    // A later receipt of a request updates its row in the same transaction, without a new row.
    ledger.append({ requestId: 'tail-0', event: 'refused', faculty: 'webmcp-invoke', actor: { kind: 'console' }, detail: { code: 'rate-limited', message: 'slow down' } });
    const row = ledger.queryRequests({ requestId: 'tail-0' }).requests[0];
    expect(row).toMatchObject({ steps: 2, outcome: 'refused', decidedBy: 'console', reason: 'rate-limited — slow down', agent: 'Tail agent', toolName: 'tail_tool' });
    expect(ledger.countRequests({ text: 'slow down' })).toBe(1);
    expect(ledger.countRequests({ outcome: 'open', toolName: 'tail_tool' })).toBe(6);
    // Console events are not requests.
    const before = ledger.countRequests();
    ledger.append({ requestId: null, event: 'link-connected', faculty: 'link', actor: { kind: 'console' } });
    expect(ledger.countRequests()).toBe(before);
  });
});

describe('the live tail when the clock steps back', () => {
  it('`after` gives the requests recorded since, by seq: one recorded after the clock stepped back too, in the timeline order; a filter that skips new rows still moves the cursor past them', () => {
    let clock = 5_000_000;
    const l = new Ledger(tmp.file('clock.db'), { now: () => clock++ });
    try {
      const agent = { kind: 'agent' as const, name: 'Clock agent' };
      const ask = (requestId: string, origin = 'https://a.example') => l.append({ requestId, event: 'requested', faculty: 'webmcp-invoke', origin, toolName: 'clock_tool', actor: agent });
      for (let i = 0; i < 5; i++) ask(`before-${i}`);
      const first = l.queryRequests({});
      expect(first.requests.map((s) => s.requestId)).toEqual(['before-4', 'before-3', 'before-2', 'before-1', 'before-0']);
      clock = 1_000_000; // stepped back: older than every request shown
      ask('stepped-back');
      clock = 9_000_000;
      ask('later');
      const tail = l.queryRequests({ after: first.newestCursor as string });
      // Both are new; the ledger's order (time, seq) puts the stepped-back one last.
      expect(tail.requests.map((s) => s.requestId)).toEqual(['later', 'stepped-back']);
      expect(l.queryRequests({ after: tail.newestCursor as string }).requests).toEqual([]);
      // In pages: the oldest recorded first.
      const p1 = l.queryRequests({ after: first.newestCursor as string, limit: 1 });
      expect(p1.requests.map((s) => s.requestId)).toEqual(['stepped-back']);
      expect(l.queryRequests({ after: p1.newestCursor as string, limit: 1 }).requests.map((s) => s.requestId)).toEqual(['later']);
      // A filter that matched none of the new rows: its cursor is past them all the same.
      const none = l.queryRequests({ after: first.newestCursor as string, origin: 'https://b.example' });
      expect(none.requests).toEqual([]);
      expect(none.newestCursor).toBe(tail.newestCursor);
      ask('on-b', 'https://b.example');
      expect(l.queryRequests({ after: none.newestCursor as string, origin: 'https://b.example' }).requests.map((s) => s.requestId)).toEqual(['on-b']);
      // A first page's cursor names the last recorded, not its top row's (here 'later').
      const again = l.queryRequests({ origin: 'https://a.example' });
      expect(again.requests[0]?.requestId).toBe('later');
      expect(l.queryRequests({ after: again.newestCursor as string })).toEqual({ requests: [], nextCursor: null, newestCursor: again.newestCursor });
      // A page cursor is not a tail cursor, nor the reverse.
      expect(() => l.queryRequests({ after: first.nextCursor ?? 'q1.1.1' })).toThrow(LedgerInputError);
      expect(() => l.queryRequests({ cursor: first.newestCursor as string })).toThrow(LedgerInputError);
    } finally {
      l.close();
    }
  });

  it('a request that comes to match the filter on a later receipt (its outcome) is given by the tail then', () => {
    const l = new Ledger(tmp.file('late-match.db'));
    try {
      const agent = { kind: 'agent' as const, name: 'Late agent' };
      l.append({ requestId: 'old', event: 'requested', faculty: 'webmcp-invoke', actor: agent });
      l.append({ requestId: 'old', event: 'denied', faculty: 'webmcp-invoke', actor: { kind: 'person' } });
      const first = l.queryRequests({ outcome: 'denied' });
      expect(first.requests.map((s) => s.requestId)).toEqual(['old']);
      l.append({ requestId: 'late', event: 'requested', faculty: 'webmcp-invoke', actor: agent });
      const t1 = l.queryRequests({ outcome: 'denied', after: first.newestCursor as string });
      expect(t1.requests).toEqual([]);
      l.append({ requestId: 'late', event: 'denied', faculty: 'webmcp-invoke', actor: { kind: 'person' } });
      const t2 = l.queryRequests({ outcome: 'denied', after: t1.newestCursor as string });
      expect(t2.requests.map((s) => s.requestId)).toEqual(['late']);
      expect(t2.requests[0]).toEqual(l.queryRequests({ requestId: 'late' }).requests[0]);
    } finally {
      l.close();
    }
  });

  it('a request with receipts on both sides of a chunk of the walk is given once, as it is now; a long backlog is read MAX_TAIL_CHUNKS chunks a call, with `more`', () => {
    const l = new Ledger(tmp.file('chunks.db'));
    try {
      const agent = { kind: 'agent' as const, name: 'Chunk agent' };
      const first = l.queryRequests({});
      l.append({ requestId: 'b', event: 'requested', faculty: 'webmcp-invoke', actor: agent });
      l.append({ requestId: 'c', event: 'requested', faculty: 'webmcp-invoke', actor: agent });
      l.append({ requestId: 'c', event: 'approval-shown', faculty: 'webmcp-invoke', actor: { kind: 'console' } });
      l.append({ requestId: 'b', event: 'denied', faculty: 'webmcp-invoke', actor: { kind: 'person' } });
      const t = l.queryRequests({ after: first.newestCursor as string, limit: 3 });
      expect(t.requests.map((x) => x.requestId).sort()).toEqual(['b', 'c']);
      expect(t.requests.find((x) => x.requestId === 'b')).toEqual(l.queryRequests({ requestId: 'b' }).requests[0]);
      expect(t.more).toBeUndefined();
    } finally {
      l.close();
    }
    // The generated ledger from its start, with a filter nothing matches: 20 chunks of 10 receipts, then `more`.
    const head = ledger.head().count;
    let after = 't1.0';
    let calls = 0;
    for (;;) {
      const p = ledger.queryRequests({ after, origin: ABSENT_ORIGIN, limit: 10 });
      calls++;
      expect(p.requests).toEqual([]);
      if (calls === 1) expect(p.newestCursor).toBe(`t1.${(MAX_TAIL_CHUNKS * 10).toString(36)}`);
      after = p.newestCursor as string;
      if (!p.more) break;
    }
    expect(after).toBe(`t1.${head.toString(36)}`);
    expect(calls).toBe(Math.ceil(head / (MAX_TAIL_CHUNKS * 10)));
  });

  it("the tail reads the receipts recorded since (their rowid range) and looks their requests up by id, whatever the filters: never a filter's whole index", () => {
    const after = ledger.queryRequests({ limit: 1 }).newestCursor as string;
    for (const f of [{}, { origin: ONE_PERCENT_ORIGIN }, { agent: 'Cursor', outcome: 'succeeded' as const }, { text: 'bank' }, { event: 'refused' as const }]) {
      const plan = ledger.requestPlan({ ...f, after }).join(' | ');
      expect(plan, JSON.stringify(f)).toMatch(/^SEARCH requests USING INDEX sqlite_autoindex_requests_1 \(request_id=\?\) \| LIST SUBQUERY 1 \| SEARCH receipts USING INTEGER PRIMARY KEY \(rowid>\? AND rowid<\?\)$/);
    }
  });
});

describe('a tampered file', () => {
  it('after receipts were cut off behind the ledger\'s back (a rollback verify reports), appends still work: a stale row never blocks one', () => {
    const f = tmp.file('rollback.db');
    generateTimelineLedger(f, 600);
    // Cut right before a request began, so the next append's seq is the one its stale row holds.
    const ro = new Ledger(f, { readonly: true });
    const begun = ro.queryRequests({ to: TIMELINE_T0 + 2_600 * 300, limit: 1 }).requests[0] as RequestSummary;
    ro.close();
    const cut = begun.seq - 1;
    const db = new Database(f);
    db.exec(`DROP TRIGGER receipts_no_delete; DELETE FROM receipts WHERE seq > ${cut}; UPDATE sqlite_sequence SET seq = ${cut} WHERE name = 'receipts'`);
    db.close();
    const l = new Ledger(f);
    try {
      const r = l.append({ requestId: 'after-rollback', event: 'requested', faculty: 'webmcp-invoke', actor: { kind: 'agent', name: 'Cursor' } });
      expect(r.seq).toBe(begun.seq);
      expect(l.queryRequests({ requestId: 'after-rollback' }).requests[0]).toMatchObject({ seq: begun.seq, steps: 1 });
      expect(l.queryRequests({ requestId: begun.requestId }).requests).toEqual([]);
      expect(l.verify({ parallel: false }).ok).toBe(false); // the missing trigger is reported
    } finally {
      l.close();
    }
  });
});

describe('format 2 → 3', () => {
  it('a format-2 ledger (no request index) is migrated at a read-write open: the index equals the one kept by appends, and verify passes', () => {
    const copy = tmp.file('format2.db');
    generateTimelineLedger(copy, 3_000);
    const want = (() => {
      const l = new Ledger(copy, { readonly: true });
      try {
        return allPages(l, {}, 500);
      } finally {
        l.close();
      }
    })();
    // Make it the format-2 file it would have been: no requests table, user_version 2 (the 3 → 4 step adds only the columns missing).
    const db = new Database(copy);
    db.exec('DROP TABLE requests');
    db.pragma('user_version = 2');
    db.close();
    const ro = new Ledger(copy, { readonly: true });
    expect(ro.format).toBe(2);
    expect(() => ro.queryRequests()).toThrow(/no request index/);
    ro.close();
    const l = new Ledger(copy);
    try {
      expect(l.format).toBe(LEDGER_FORMAT);
      expect(allPages(l, {}, 500)).toEqual(want);
      expect(l.verify({ parallel: false }).ok).toBe(true);
    } finally {
      l.close();
    }
    expect(REQUESTS_SQL).toContain('CREATE TABLE IF NOT EXISTS requests');
  });
});
