// The timeline's store without a browser (docs/timeline.md; its deep-link fragments are in
// renderer-timeline-routes.test.ts): the store over a REAL ledger (its queryRequests/countRequests/queryReceipts
// as the core answers them): first page then count, paging, a request's trail,
// deep links, and the live tail — new requests on top, later receipts folded into
// their rows, receipts that arrive before the tail's answer not lost, answers for
// an older filter dropped.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Ledger } from '../../src/main/core/ledger/index';
import { createTimelineStore, RECOUNT_GAP_MS, TIMELINE_PAGE_SIZE } from '../../src/renderer/stores/timeline';
import type { ConsoleApi } from '../../src/shared/ipc';
import type { Receipt, ReceiptInput } from '../../src/shared/receipt';
import { ok } from '../../src/shared/result';
import { ONE_PERCENT_ORIGIN, generateTimelineLedger } from '../support/timeline-ledger';
import { tempDir } from './support/ledger-fixtures';

describe('the timeline store over a real ledger', () => {
  let tmp: ReturnType<typeof tempDir>;
  let ledger: Ledger;
  let api: Pick<ConsoleApi, 'queryRequests' | 'countRequests' | 'queryReceipts'>;
  /** Hold the next queryRequests answer until released (to let receipts arrive meanwhile). */
  let hold: Promise<void> | null;
  const agent = { kind: 'agent' as const, name: 'Cursor' };
  const req = (requestId: string, over: Partial<ReceiptInput> = {}): ReceiptInput => ({ requestId, event: 'requested', faculty: 'webmcp-invoke', origin: 'https://live.example', toolName: 'live', actor: agent, ...over });

  beforeEach(() => {
    tmp = tempDir('timeline-store-');
    generateTimelineLedger(tmp.file('l.db'), 3_000);
    ledger = new Ledger(tmp.file('l.db'));
    hold = null;
    api = {
      queryRequests: async (p) => {
        const answer = ok(ledger.queryRequests(p));
        if (hold) await hold;
        return answer;
      },
      countRequests: async (p) => ok(ledger.countRequestsAt(p)),
      queryReceipts: async (p) => ok(ledger.query(p)),
    };
  });
  afterEach(() => {
    ledger.close();
    tmp.cleanup();
  });

  it('loads the first page, then the count; pages on; opens a trail oldest first', async () => {
    const s = createTimelineStore(api);
    await s.getState().setFilter({ origin: ONE_PERCENT_ORIGIN });
    const st = s.getState();
    expect(st.rows.length).toBe(ledger.countRequests({ origin: ONE_PERCENT_ORIGIN }));
    expect(st.total).toBe(st.rows.length);
    expect(st.countedQuery).toBe(st.query);
    await s.getState().setFilter({});
    expect(s.getState().rows.length).toBe(TIMELINE_PAGE_SIZE);
    await s.getState().loadMore();
    expect(s.getState().rows.length).toBe(2 * TIMELINE_PAGE_SIZE);
    expect(new Set(s.getState().rows.map((r) => r.requestId)).size).toBe(2 * TIMELINE_PAGE_SIZE);
    const id = s.getState().rows[3]!.requestId;
    s.getState().toggle(id);
    await new Promise((r) => setTimeout(r, 0));
    await new Promise((r) => setTimeout(r, 0));
    expect(s.getState().trails[id]?.receipts.map((r) => r.seq)).toEqual(ledger.query({ requestId: id }).receipts.map((r) => r.seq).reverse());
  });

  it('drops the answer of an older filter', async () => {
    const s = createTimelineStore(api);
    const older = s.getState().setFilter({});
    const newer = s.getState().setFilter({ origin: 'https://absent.example' });
    await Promise.all([older, newer]);
    expect(s.getState().rows).toEqual([]);
    expect(s.getState().total).toBe(0);
  });

  it('live tail: a new request goes on top (if it matches), its later receipts update its row, and receipts pushed before the tail answers are folded in', async () => {
    const s = createTimelineStore(api);
    await s.getState().setFilter({ toolName: 'live' });
    expect(s.getState().rows).toEqual([]);
    const pushed: Receipt[] = [];
    const push = (...rs: ReceiptInput[]) => {
      const stored = ledger.appendBatch(rs);
      pushed.push(...stored);
      s.getState().addReceipts(stored);
    };
    let release!: () => void;
    hold = new Promise((r) => (release = r));
    push(req('live-1'), req('other', { toolName: 'not-live' }));
    // While the tail's answer is on its way, the request goes on: these must not be lost.
    hold = null;
    push(req('live-1', { event: 'approval-shown' }), req('live-1', { event: 'approved', actor: { kind: 'person' } }));
    release();
    await new Promise((r) => setTimeout(r, 10));
    let rows = s.getState().rows;
    expect(rows.map((r) => r.requestId)).toEqual(['live-1']);
    expect(rows[0]).toMatchObject({ steps: 3, decidedBy: 'person', outcome: null });
    expect(s.getState().total).toBe(1);
    push(req('live-1', { event: 'succeeded', actor: { kind: 'extension' } }), req('live-2'));
    await new Promise((r) => setTimeout(r, 10));
    rows = s.getState().rows;
    expect(rows.map((r) => r.requestId)).toEqual(['live-2', 'live-1']);
    // The row the store folded equals the ledger's own row.
    expect(rows[1]).toEqual(ledger.queryRequests({ requestId: 'live-1' }).requests[0]);
    expect(s.getState().total).toBe(2);
  });

  it('holds a bounded window: the live tail lets the oldest rows go and scrolling down loads them again; rows loaded at the bottom let the newest go and the tail waits until Show the newest (no gap, no row twice)', async () => {
    const maxRows = 300;
    const s = createTimelineStore(api, { maxRows });
    await s.getState().setFilter({});
    const tick = () => new Promise((r) => setTimeout(r, 10));
    const newestFirst = (n: number) => ledger.queryRequests({ limit: n }).requests.map((r) => r.requestId);
    // A flood of new requests while the person watches the top.
    const stored = ledger.appendBatch(Array.from({ length: 150 }, (_, i) => req(`flood-${i}`)));
    s.getState().addReceipts(stored);
    await tick();
    expect(s.getState().rows.length).toBe(maxRows);
    expect(s.getState().rows.map((r) => r.requestId)).toEqual(newestFirst(maxRows));
    expect(s.getState().rows[0]!.requestId).toBe('flood-149');
    // The rows let go come back below the last row kept, in order.
    await s.getState().loadMore();
    const all = newestFirst(maxRows + TIMELINE_PAGE_SIZE);
    expect(s.getState().rows.map((r) => r.requestId)).toEqual(all.slice(TIMELINE_PAGE_SIZE));
    expect(s.getState().newerHidden).toBe(true);
    // Newer requests while the top is let go: nothing is put above a gap; the count goes on.
    const before = s.getState().rows;
    const counted = s.getState().total as number;
    s.getState().addReceipts(ledger.appendBatch([req('while-hidden')]));
    await tick();
    expect(s.getState().rows).toBe(before);
    expect(s.getState().total).toBe(counted + 1);
    expect(s.getState().total).toBe(ledger.countRequests({}));
    await s.getState().showNewest();
    expect(s.getState().newerHidden).toBe(false);
    expect(s.getState().rows.map((r) => r.requestId)).toEqual(newestFirst(TIMELINE_PAGE_SIZE));
    expect(s.getState().rows[0]!.requestId).toBe('while-hidden');
    // And the tail runs again.
    s.getState().addReceipts(ledger.appendBatch([req('after-newest')]));
    await tick();
    expect(s.getState().rows[0]!.requestId).toBe('after-newest');
  });

  it('live tail: a request that comes to match the filter on a later receipt shows then, and the count stays the ledger\'s; with no filter an older request below the rows held that changes is neither shown nor counted twice', async () => {
    const tick = () => new Promise((r) => setTimeout(r, 10));
    const push = async (...rs: ReceiptInput[]) => {
      s.getState().addReceipts(ledger.appendBatch(rs));
      await tick();
    };
    // Recorded before the timeline opened, decided after.
    ledger.append(req('before-open'));
    const s = createTimelineStore(api);
    const denied = { outcome: 'denied' as const };
    await s.getState().setFilter(denied);
    await tick();
    expect(s.getState().total).toBe(ledger.countRequests(denied));
    const ids = () => s.getState().rows.map((r) => r.requestId);
    expect(ids()).not.toContain('before-open');
    await push(req('after-open'));
    expect(ids()).not.toContain('after-open');
    await push(req('after-open', { event: 'denied', actor: { kind: 'person' } }), req('before-open', { event: 'denied', actor: { kind: 'person' } }));
    await tick();
    expect(ids().slice(0, 2).sort()).toEqual(['after-open', 'before-open']);
    expect(s.getState().total).toBe(ledger.countRequests(denied));
    // No filter: a request far below the rows held gets a receipt. Not held, not counted again.
    await s.getState().setFilter({});
    await tick();
    const total = s.getState().total;
    const below = ledger.queryRequests({ limit: 500 }).requests[450]!;
    await push({ requestId: below.requestId, event: 'approval-shown', faculty: below.faculty, actor: { kind: 'console' } });
    expect(ids()).not.toContain(below.requestId);
    expect(s.getState().total).toBe(total);
    expect(total).toBe(ledger.countRequests({}));
  });

  it('the count stays the ledger\'s: a request recorded between the first page and its count is counted once; requests with receipts on both sides of a chunk of the walk are added once each', async () => {
    const tick = () => new Promise((r) => setTimeout(r, 10));
    let between: Receipt | null = null;
    const s = createTimelineStore({
      ...api,
      countRequests: async (p) => {
        between ??= ledger.append(req('between'));
        return api.countRequests(p);
      },
    });
    await s.getState().setFilter({});
    s.getState().addReceipts([between!]);
    await tick();
    expect(s.getState().rows[0]?.requestId).toBe('between');
    expect(s.getState().total).toBe(ledger.countRequests({}));
    // A request asked, 100 asked and decided, then the first decided: 202 receipts, the first
    // request's two on both sides of the walk's first chunk (TIMELINE_PAGE_SIZE receipts).
    const denied = { event: 'denied' as const, actor: { kind: 'person' as const } };
    const wave = ledger.appendBatch([req('wave-x'), ...Array.from({ length: 100 }, (_, i) => [req(`wave-${i}`), req(`wave-${i}`, denied)]).flat(), req('wave-x', denied)]);
    s.getState().addReceipts(wave);
    await tick();
    await tick();
    const ids = s.getState().rows.map((r) => r.requestId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.filter((x) => x.startsWith('wave-'))).toHaveLength(101);
    expect(s.getState().total).toBe(ledger.countRequests({}));
    expect(s.getState().rows.find((r) => r.requestId === 'wave-x')).toEqual(ledger.queryRequests({ requestId: 'wave-x' }).requests[0]);
  });

  it('the count stays the ledger\'s for a read whose origin comes with a later receipt, and for a request recorded between the first page and its count that matches only later', async () => {
    const tick = () => new Promise((r) => setTimeout(r, 10));
    const origin = { origin: 'https://reads.example' };
    const s = createTimelineStore(api);
    await s.getState().setFilter(origin);
    await tick();
    // A read: its requested receipt has no origin; the next one has it.
    s.getState().addReceipts([ledger.append(req('read-1', { origin: null }))]);
    await tick();
    s.getState().addReceipts([ledger.append(req('read-1', { event: 'succeeded', actor: { kind: 'extension' }, origin: 'https://reads.example' }))]);
    await tick();
    await tick();
    expect(s.getState().rows.map((r) => r.requestId)).toContain('read-1');
    expect(s.getState().total).toBe(ledger.countRequests(origin));
    // Recorded while the count was being read, denied after.
    const denied = { outcome: 'denied' as const };
    let between: Receipt | null = null;
    const t = createTimelineStore({
      ...api,
      countRequests: async (p) => {
        between ??= ledger.append(req('between-denied'));
        return api.countRequests(p);
      },
    });
    await t.getState().setFilter(denied);
    t.getState().addReceipts([between!, ledger.append(req('between-denied', { event: 'denied', actor: { kind: 'person' } }))]);
    await tick();
    await tick();
    expect(t.getState().rows.map((r) => r.requestId)).toContain('between-denied');
    expect(t.getState().total).toBe(ledger.countRequests(denied));
  });

  it('the count stays the ledger\'s for an older request a page below brings after it came to match, before the live tail read its deciding receipt', async () => {
    const tick = () => new Promise((r) => setTimeout(r, 10));
    const denied = { outcome: 'denied' as const };
    const decide = { event: 'denied' as const, actor: { kind: 'person' as const } };
    // The oldest of them, still undecided when the timeline opens, below more than a page of denied ones.
    ledger.append(req('late'));
    ledger.appendBatch(Array.from({ length: TIMELINE_PAGE_SIZE + 20 }, (_, i) => [req(`denied-${i}`), req(`denied-${i}`, decide)]).flat());
    const s = createTimelineStore(api);
    await s.getState().setFilter(denied);
    await tick();
    expect(s.getState().total).toBe(ledger.countRequests(denied));
    expect(s.getState().nextCursor).not.toBeNull();
    // Decided after the count; the page below is read before the tail hears of it.
    const decided = ledger.append(req('late', decide));
    await s.getState().loadMore();
    expect(s.getState().rows.map((r) => r.requestId)).toContain('late');
    s.getState().addReceipts([decided]);
    await tick();
    await tick();
    expect(s.getState().total).toBe(ledger.countRequests(denied));
    // The same with the page below landing while the count is still on its way (read before the decision).
    ledger.append(req('late-2'));
    ledger.appendBatch(Array.from({ length: TIMELINE_PAGE_SIZE + 20 }, (_, i) => [req(`again-${i}`), req(`again-${i}`, decide)]).flat());
    let counted: () => void = () => {};
    const countIn = new Promise<void>((r) => (counted = r));
    const t = createTimelineStore({
      ...api,
      countRequests: async (p) => {
        const c = await api.countRequests(p);
        await countIn;
        return c;
      },
    });
    void t.getState().setFilter(denied);
    await tick();
    const decided2 = ledger.append(req('late-2', decide));
    await t.getState().loadMore();
    await t.getState().loadMore();
    expect(t.getState().rows.map((r) => r.requestId)).toContain('late-2');
    t.getState().addReceipts([decided2]);
    await tick();
    expect(t.getState().total).toBeNull();
    counted();
    await tick();
    await tick();
    expect(t.getState().total).toBe(ledger.countRequests(denied));
  });

  it('receipts pushed while Show the newest reads the first page are folded into its rows when it lands', async () => {
    const s = createTimelineStore(api);
    await s.getState().setFilter({});
    const x = s.getState().rows[0]!;
    let release!: () => void;
    hold = new Promise((r) => (release = r));
    const newest = s.getState().showNewest();
    await new Promise((r) => setTimeout(r, 0));
    hold = null;
    // The page was read; this receipt comes before the page lands.
    s.getState().addReceipts([ledger.append(req(x.requestId, { event: 'approval-shown', faculty: x.faculty, actor: { kind: 'console' } }))]);
    release();
    await newest;
    expect(s.getState().rows[0]).toEqual(ledger.queryRequests({ requestId: x.requestId }).requests[0]);
  });

  it('a receipt pushed while a page below is on its way, for a request on that page, is folded in when it lands, though the live tail answered first', async () => {
    const s = createTimelineStore(api);
    await s.getState().setFilter({});
    const x = ledger.queryRequests({ cursor: s.getState().nextCursor as string, limit: TIMELINE_PAGE_SIZE }).requests[5]!;
    let release!: () => void;
    hold = new Promise((r) => (release = r));
    const more = s.getState().loadMore();
    await new Promise((r) => setTimeout(r, 0));
    hold = null;
    // The page was read; the receipt comes, and the tail's answer (X left out: below the rows held, a page on its way) lands first.
    s.getState().addReceipts([ledger.append(req(x.requestId, { event: 'approval-shown', faculty: x.faculty, actor: { kind: 'console' } }))]);
    await new Promise((r) => setTimeout(r, 10));
    release();
    await more;
    expect(s.getState().rows.find((r) => r.requestId === x.requestId)).toEqual(ledger.queryRequests({ requestId: x.requestId }).requests[0]);
  });

  it('while newer rows are hidden, an older request that comes to match goes among the rows held, in the ledger\'s order; a new one does not go above the gap', async () => {
    const denied = { outcome: 'denied' as const };
    const deny = (id: string) => req(id, { event: 'denied', actor: { kind: 'person' } });
    ledger.appendBatch(Array.from({ length: 250 }, (_, i) => [req(`older-${i}`), deny(`older-${i}`)]).flat());
    ledger.append(req('comes-to-match'));
    ledger.appendBatch(Array.from({ length: 250 }, (_, i) => [req(`newer-${i}`), deny(`newer-${i}`)]).flat());
    const s = createTimelineStore(api, { maxRows: 300 });
    const tick = () => new Promise((r) => setTimeout(r, 10));
    await s.getState().setFilter(denied);
    await s.getState().loadMore();
    expect(s.getState().newerHidden).toBe(true);
    const before = s.getState().rows.map((r) => r.requestId);
    s.getState().addReceipts([ledger.append(deny('comes-to-match')), ledger.append(req('brand-new')), ledger.append(deny('brand-new'))]);
    await tick();
    await tick();
    const ids = s.getState().rows.map((r) => r.requestId);
    expect(ids).not.toContain('brand-new');
    // The window stays at its bound: the last row held before is let go at the bottom.
    expect(ids).toHaveLength(300);
    expect(ids.filter((x) => x !== 'comes-to-match')).toEqual(before.slice(0, -1));
    const ledgerOrder = ledger.queryRequests({ ...denied, limit: 500 }).requests.map((r) => r.requestId);
    const at = ids.indexOf('comes-to-match');
    expect(at).toBeGreaterThan(0);
    expect(ids.slice(at - 1, at + 2)).toEqual(ledgerOrder.slice(ledgerOrder.indexOf('comes-to-match') - 1, ledgerOrder.indexOf('comes-to-match') + 2));
    expect(s.getState().total).toBe(ledger.countRequests(denied));
  });

  it('while newer rows are hidden, the later receipts of a request the tail counted ask no count again; recounts come at most one a RECOUNT_GAP_MS', async () => {
    const live = { origin: 'https://live.example' };
    ledger.appendBatch(Array.from({ length: 700 }, (_, i) => req(`live-${i}`)));
    let counts = 0;
    const s = createTimelineStore({ ...api, countRequests: async (p) => (counts++, api.countRequests(p)) }, { maxRows: 300 });
    const tick = () => new Promise((r) => setTimeout(r, 10));
    await s.getState().setFilter(live);
    await s.getState().loadMore();
    expect(s.getState().newerHidden).toBe(true);
    counts = 0;
    s.getState().addReceipts([ledger.append(req('hidden-new'))]);
    await tick();
    for (const event of ['approval-shown', 'approved', 'succeeded'] as const) {
      s.getState().addReceipts([ledger.append(req('hidden-new', { event, actor: { kind: event === 'approved' ? 'person' : 'console' } }))]);
      await tick();
    }
    expect(counts).toBe(0);
    expect(s.getState().total).toBe(ledger.countRequests(live));
  });

  it('recounts coalesce: several asked within RECOUNT_GAP_MS make one count now and one after the gap', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const denied = { outcome: 'denied' as const };
      for (const id of ['gap-a', 'gap-b', 'gap-c']) ledger.append(req(id));
      let counts = 0;
      const s = createTimelineStore({ ...api, countRequests: async (p) => (counts++, api.countRequests(p)) });
      await s.getState().setFilter(denied);
      expect(counts).toBe(1);
      // Each comes to match: recorded before the count, not held, so each asks a count.
      for (const id of ['gap-a', 'gap-b', 'gap-c']) {
        s.getState().addReceipts([ledger.append(req(id, { event: 'denied', actor: { kind: 'person' } }))]);
        await vi.advanceTimersByTimeAsync(10);
      }
      expect(counts).toBe(2);
      await vi.advanceTimersByTimeAsync(RECOUNT_GAP_MS);
      expect(counts).toBe(3);
      await vi.advanceTimersByTimeAsync(5 * RECOUNT_GAP_MS);
      expect(counts).toBe(3);
      expect(s.getState().total).toBe(ledger.countRequests(denied));
    } finally {
      vi.useRealTimers();
    }
  });

  it('live tail after the clock stepped back: a new request older than the newest shown is put where the ledger orders it; below the rows held it waits for the page that brings it (once, in its place)', async () => {
    const t = tempDir('timeline-clock-');
    let clock = 5_000_000;
    const l = new Ledger(t.file('l.db'), { now: () => (clock += 10) });
    try {
      const clockApi: typeof api = {
        queryRequests: async (p) => ok(l.queryRequests(p)),
        countRequests: async (p) => ok(l.countRequestsAt(p)),
        queryReceipts: async (p) => ok(l.query(p)),
      };
      l.appendBatch(Array.from({ length: 500 }, (_, i) => req(`r-${i}`)));
      const s = createTimelineStore(clockApi);
      await s.getState().setFilter({});
      await new Promise((r) => setTimeout(r, 10));
      const ids = () => s.getState().rows.map((r) => r.requestId);
      const ledgerOrder = () => {
        const out: string[] = [];
        let cursor: string | undefined;
        do {
          const p = l.queryRequests({ limit: 200, ...(cursor ? { cursor } : {}) });
          out.push(...p.requests.map((r) => r.requestId));
          cursor = p.nextCursor ?? undefined;
        } while (cursor);
        return out;
      };
      const push = async (id: string, at: number) => {
        clock = at - 10;
        s.getState().addReceipts([l.append(req(id))]);
        await new Promise((r) => setTimeout(r, 10));
      };
      expect(s.getState().rows).toHaveLength(TIMELINE_PAGE_SIZE);
      expect(s.getState().total).toBe(500);
      // Between the 11th and 12th rows held: put there.
      const tenth = s.getState().rows[10]!;
      await push('stepped-middle', tenth.time - 5);
      expect(ids().indexOf('stepped-middle')).toBe(11);
      // Older than every row held, with older rows still to load: not held; the count has it.
      await push('stepped-below', 1_000_000);
      expect(ids()).not.toContain('stepped-below');
      expect(s.getState().total).toBe(502);
      // Its later receipts: still not held, and not counted again.
      s.getState().addReceipts([l.append(req('stepped-below', { event: 'denied', actor: { kind: 'person' } }))]);
      await new Promise((r) => setTimeout(r, 10));
      expect(s.getState().total).toBe(502);
      // The clock back to normal: on top, as always.
      await push('newest', 9_000_000);
      expect(ids()[0]).toBe('newest');
      expect(ids()).toEqual(ledgerOrder().slice(0, ids().length));
      // Scrolling down brings the one below, once, in its place.
      while (s.getState().nextCursor !== null) await s.getState().loadMore();
      expect(ids()).toEqual(ledgerOrder());
      expect(ids().filter((x) => x === 'stepped-below')).toHaveLength(1);
      // Every row held now: one stepped back below them all goes at the bottom.
      await push('stepped-last', 500_000);
      expect(ids()[ids().length - 1]).toBe('stepped-last');
      expect(ids()).toEqual(ledgerOrder());
      expect(s.getState().total).toBe(504);
    } finally {
      l.close();
      t.cleanup();
    }
  });

  it('rows let go take their open state and trail with them: loaded again, a row starts closed and its trail is asked afresh (with the receipts pushed while it was out)', async () => {
    const maxRows = 300;
    const s = createTimelineStore(api, { maxRows });
    await s.getState().setFilter({});
    const tick = () => new Promise((r) => setTimeout(r, 10));
    const top = s.getState().rows[0]!.requestId;
    const bottom = s.getState().rows.at(-1)!.requestId;
    s.getState().toggle(top);
    s.getState().toggle(bottom);
    await tick();
    expect(Object.keys(s.getState().trails).sort()).toEqual([top, bottom].sort());
    // Scrolled far: the top row is let go.
    await s.getState().loadMore();
    expect(s.getState().rows.some((r) => r.requestId === top)).toBe(false);
    expect(s.getState().expanded).toEqual([bottom]);
    expect(Object.keys(s.getState().trails)).toEqual([bottom]);
    // While it is out, its request goes on; back to the newest, it is closed, and opened its trail holds that step.
    const step = ledger.appendBatch([req(top, { event: 'approval-shown' })]);
    s.getState().addReceipts(step);
    await s.getState().showNewest();
    expect(s.getState().expanded).not.toContain(top);
    s.getState().toggle(top);
    await tick();
    expect(s.getState().trails[top]!.receipts.map((r) => r.id)).toContain(step[0]!.id);
  });

  describe('the bounded window while a tail and a page below are both on their way', () => {
    const maxRows = 300;
    /** The ledger's requests, newest first, as one list (the order the rows held must follow). */
    const newestFirst = () => {
      const out: string[] = [];
      for (let cursor: string | null = null; ; ) {
        const p = ledger.queryRequests({ limit: 500, ...(cursor ? { cursor } : {}) });
        out.push(...p.requests.map((r) => r.requestId));
        if (!(cursor = p.nextCursor)) return out;
      }
    };
    /** The rows held are one run of the ledger's order: no gap, none twice. */
    const expectContiguous = (ids: string[]) => {
      const all = newestFirst();
      const at = all.indexOf(ids[0] as string);
      expect(at).toBeGreaterThanOrEqual(0);
      expect(ids).toEqual(all.slice(at, at + ids.length));
    };
    /** An api whose answers of one kind (tail: `after`; page: `cursor`) wait until released. */
    const gated = (kind: 'after' | 'cursor') => {
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      const gatedApi: typeof api = {
        ...api,
        queryRequests: async (p) => {
          const answer = ok(ledger.queryRequests(p));
          if (p[kind] !== undefined) await gate;
          return answer;
        },
      };
      return { gatedApi, release };
    };
    const tick = () => new Promise((r) => setTimeout(r, 10));

    it('a tail answer that comes after a page below let the newest go is not put above the gap', async () => {
      const { gatedApi, release } = gated('after');
      const s = createTimelineStore(gatedApi, { maxRows });
      await s.getState().setFilter({});
      // A new request: the tail asks for it, and its answer waits.
      s.getState().addReceipts(ledger.appendBatch([req('while-paging')]));
      // Meanwhile the person scrolls far: the page below lets the newest rows go.
      await s.getState().loadMore();
      expect(s.getState().newerHidden).toBe(true);
      release();
      await tick();
      expect(s.getState().rows.map((r) => r.requestId)).not.toContain('while-paging');
      expectContiguous(s.getState().rows.map((r) => r.requestId));
    });

    it('new requests while a page below is on its way do not let the oldest go: the page lands right below them and the newest go (no gap)', async () => {
      const s = createTimelineStore(api, { maxRows });
      await s.getState().setFilter({});
      s.getState().addReceipts(ledger.appendBatch(Array.from({ length: 100 }, (_, i) => req(`first-${i}`))));
      await tick();
      expect(s.getState().rows).toHaveLength(maxRows);
      // The page below is asked, and its answer waits while the tail takes 50 more.
      const { gatedApi, release } = gated('cursor');
      Object.assign(api, { queryRequests: gatedApi.queryRequests });
      const more = s.getState().loadMore();
      s.getState().addReceipts(ledger.appendBatch(Array.from({ length: 50 }, (_, i) => req(`second-${i}`))));
      await tick();
      release();
      await more;
      expectContiguous(s.getState().rows.map((r) => r.requestId));
      expect(s.getState().newerHidden).toBe(true);
      // Scrolling on continues right below the last row kept.
      const lastKept = s.getState().rows.at(-1)!.requestId;
      await s.getState().loadMore();
      const ids = s.getState().rows.map((r) => r.requestId);
      expectContiguous(ids);
      expect(ids).toContain(lastKept);
    });
  });

  it('deep links: a request opens with its trail; a receipt opens its request at it; unknown ids say so', async () => {
    const s = createTimelineStore(api);
    const some = ledger.queryRequests({ limit: 50 }).requests[40]!;
    const receipt = ledger.query({ requestId: some.requestId }).receipts[0]!;
    await s.getState().openReceipt(receipt.id);
    await new Promise((r) => setTimeout(r, 0));
    expect(s.getState().rows.map((r) => r.requestId)).toEqual([some.requestId]);
    expect(s.getState().expanded).toEqual([some.requestId]);
    expect(s.getState().focusReceipt).toBe(receipt.id);
    await s.getState().openRequest('no-such-request');
    expect(s.getState().notice).toMatch(/No request has the id no-such-request/);
    await s.getState().openReceipt('no-such-receipt');
    expect(s.getState().notice).toMatch(/No receipt has the id/);
  });

  it('a receipt link the page opened with is followed before the timeline is first shown: it counts as loading until it is done, and one naming no receipt ends with the list and its notice', async () => {
    const s = createTimelineStore(api);
    const following = s.getState().follow({ view: 'receipt', receiptId: 'no-such-receipt' });
    // TimelinePage loads the list when first shown unless the timeline is loaded or loading
    // (audit-pages.tsx); that load would clear the notice this link is about to give.
    expect(s.getState().loading).toBe(true);
    await following;
    // Answered before the page was shown (the desktop's IPC can be that quick): nothing left for the page to load over it.
    expect(s.getState()).toMatchObject({ loading: false, loaded: true, notice: expect.stringMatching(/No receipt has the id no-such-receipt/) });
    expect(s.getState().rows.length).toBeGreaterThan(0);
  });
});
