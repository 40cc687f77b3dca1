// The receipts view's logic without a browser: who caused a receipt, what it
// was about when there is no tool, why a request was refused / denied /
// failed / ended unknown (from the receipt's detail, as plain text), expanding
// rows, and looking a receipt up by request id or receipt id.
import { describe, expect, it } from 'vitest';
import { actorLabel, FACULTY_LABELS, reasonOf, REASON_MAX_CHARS, searchSummary, subjectLabel } from '../../src/renderer/receipt-view';
import { createReceiptsStore, RECEIPT_PAGE_SIZE, SCAN_PAGE_SIZE } from '../../src/renderer/stores/receipts';
import { Ledger } from '../../src/main/core/ledger/index';
import type { Receipt, ReceiptInput } from '../../src/shared/receipt';
import { ok } from '../../src/shared/result';
import { FakeConsole } from '../support/fake-console';
import { tempDir } from './support/ledger-fixtures';

describe('receipt columns', () => {
  it('names the actor: kind and name', () => {
    expect(actorLabel({ kind: 'agent', name: 'my-agent', version: '1.0' })).toBe('agent · my-agent');
    expect(actorLabel({ kind: 'person' })).toBe('person');
    expect(actorLabel({ kind: 'console' })).toBe('console');
    expect(actorLabel({ kind: 'extension' })).toBe('extension');
    expect(actorLabel({ kind: 'agent', name: 'evil\u202Etxt.exe' })).toBe('agent · evil⟨U+202E⟩txt.exe');
  });

  it('shows the faculty when there is no tool name', () => {
    expect(subjectLabel({ toolName: 'add_to_cart', faculty: 'webmcp-invoke' })).toEqual({ text: 'add_to_cart', isTool: true });
    expect(subjectLabel({ toolName: null, faculty: 'list-tabs' })).toEqual({ text: 'list tabs', isTool: false });
    expect(subjectLabel({ toolName: null, faculty: 'webmcp-discover' }).text).toBe('discover');
    expect(subjectLabel({ toolName: null, faculty: 'link' }).text).toBe('link');
    expect(subjectLabel({ toolName: null, faculty: 'console' }).text).toBe('console');
    expect(Object.values(FACULTY_LABELS).every((l) => l.length > 0)).toBe(true);
  });

  it('gives the reason of refused, denied, failed and outcome-unknown receipts from their detail', () => {
    expect(reasonOf({ event: 'refused', detail: { code: 'policy-denied', message: "Denied by the console's policy: blocked origin." } })).toBe(
      "policy-denied — Denied by the console's policy: blocked origin.",
    );
    expect(reasonOf({ event: 'denied', detail: { reason: 'Not this one' } })).toBe('Not this one');
    expect(reasonOf({ event: 'denied', detail: {} })).toMatch(/no reason given/);
    expect(reasonOf({ event: 'failed', detail: { error: { code: 'page-error', message: 'Out of stock' }, elapsedMs: 12 } })).toBe('page-error — Out of stock');
    expect(reasonOf({ event: 'outcome-unknown', detail: { reason: 'extension-outcome-unknown', elapsedMs: null } })).toBe('extension-outcome-unknown');
    expect(reasonOf({ event: 'cancelled', detail: { reason: 'the agent cancelled the read' } })).toBe('the agent cancelled the read');
    expect(reasonOf({ event: 'expired', detail: { expiresAt: 1 } })).toMatch(/expired/);
    // Events without a reason, and details that say nothing.
    expect(reasonOf({ event: 'succeeded', detail: { code: 'x', message: 'y' } })).toBeNull();
    expect(reasonOf({ event: 'refused', detail: null })).toBeNull();
    expect(reasonOf({ event: 'refused', detail: ['code'] })).toBeNull();
    // Page or agent text stays text, invisible characters revealed, long text cut.
    expect(reasonOf({ event: 'refused', detail: { code: 'x', message: '<img src=x onerror=alert(1)>\u200B' } })).toBe('x — <img src=x onerror=alert(1)>⟨U+200B⟩');
    const long = reasonOf({ event: 'failed', detail: { error: { code: 'c', message: 'm'.repeat(5000) } } })!;
    expect(long.length).toBe(REASON_MAX_CHARS);
    expect(long.endsWith('…')).toBe(true);
  });
});

/** A fake ledger where several requests have several steps each. */
function ledger(count: number): FakeConsole {
  const fake = new FakeConsole({ receiptCount: count });
  fake.receipts = fake.receipts.map((r) => ({ ...r, requestId: `req-${Math.ceil(r.seq / 4)}` }));
  return fake;
}

describe('receipt lookup and expanded rows', () => {
  it('expands and collapses rows', () => {
    const s = createReceiptsStore(new FakeConsole());
    s.getState().toggle('a');
    s.getState().toggle('b');
    s.getState().toggle('a');
    expect(s.getState().expanded).toEqual(['b']);
  });

  it('finds every receipt of a request by its request id, asking the ledger', async () => {
    const fake = ledger(12);
    const s = createReceiptsStore(fake);
    await s.getState().find('  req-2 ');
    const search = s.getState().search!;
    expect(search).toMatchObject({ query: 'req-2', status: 'done', matchedBy: 'request', error: null });
    expect(search.results.map((r) => r.seq)).toEqual([8, 7, 6, 5]);
    expect(fake.calls).toEqual([{ method: 'queryReceipts', params: { requestId: 'req-2', limit: SCAN_PAGE_SIZE } }]);
    expect(searchSummary(search)).toBe('Request req-2: 4 receipts, newest first.');
    // A new step of that request joins the results; another request's does not.
    s.getState().add({ ...fake.receipts[0]!, id: 'new-step', seq: 13, time: Date.now(), requestId: 'req-2' });
    s.getState().add({ ...fake.receipts[0]!, id: 'other', seq: 14, time: Date.now(), requestId: 'req-9' });
    expect(s.getState().search!.results.map((r) => r.id)).toEqual(['new-step', ...search.results.map((r) => r.id)]);
    s.getState().clearSearch();
    expect(s.getState().search).toBeNull();
  });

  it('finds a receipt by its id, asking the ledger by id, and shows its request opened at that receipt', async () => {
    const fake = ledger(SCAN_PAGE_SIZE + 30);
    const s = createReceiptsStore(fake);
    await s.getState().loadFirst();
    const target = fake.receipts[9]!; // seq 10: older than the loaded page and the first scan page
    await s.getState().find(target.id);
    const search = s.getState().search!;
    expect(search).toMatchObject({ status: 'done', matchedBy: 'receipt', receiptId: target.id, complete: true, error: null });
    expect(search.results.map((r) => r.seq)).toEqual([12, 11, 10, 9]);
    expect(s.getState().expanded).toEqual([target.id]);
    expect(fake.calls.map((c) => c.params)).toEqual([
      { limit: RECEIPT_PAGE_SIZE },
      { requestId: target.id, limit: SCAN_PAGE_SIZE },
      { id: target.id, limit: 1 },
      { requestId: 'req-3', limit: SCAN_PAGE_SIZE },
    ]);
    expect(searchSummary(search)).toBe(`Receipt ${target.id}, opened below, with the 3 other receipts of its request.`);
  });

  it('uses the loaded receipts before asking the ledger for pages', async () => {
    const fake = ledger(8);
    const s = createReceiptsStore(fake);
    await s.getState().loadFirst();
    const target: Receipt = fake.receipts[7]!;
    await s.getState().find(target.id);
    expect(s.getState().search?.receiptId).toBe(target.id);
    expect(fake.calls.filter((c) => c.method === 'queryReceipts' && !('requestId' in (c.params as object)))).toHaveLength(1); // loadFirst only
  });

  it('says plainly when nothing has the id, and refuses what cannot be an id without asking', async () => {
    const fake = ledger(5);
    const s = createReceiptsStore(fake);
    await s.getState().find('00000000-0000-4000-8000-999999999999');
    expect(s.getState().search).toMatchObject({ status: 'done', matchedBy: null, results: [], complete: true });
    expect(searchSummary(s.getState().search!)).toBe('No receipt and no request has the id 00000000-0000-4000-8000-999999999999.');
    const before = fake.calls.length;
    await s.getState().find('<script>alert(1)</script>');
    expect(fake.calls.length).toBe(before);
    expect(s.getState().search?.error?.code).toBe('invalid-input');
    await s.getState().find('   ');
    expect(s.getState().search).toBeNull();
  });

  it('drops the answers of a lookup that was replaced by a newer one', async () => {
    const fake = ledger(12);
    let release: () => void = () => undefined;
    const slow = Object.assign(Object.create(fake) as FakeConsole, {
      queryReceipts: async (p: Parameters<FakeConsole['queryReceipts']>[0]) => {
        if (p.requestId === 'req-1') await new Promise<void>((r) => (release = r));
        return fake.queryReceipts(p);
      },
    });
    const s = createReceiptsStore(slow);
    const first = s.getState().find('req-1');
    await s.getState().find('req-3');
    release();
    await first;
    expect(s.getState().search?.query).toBe('req-3');
    expect(s.getState().search?.results.map((r) => r.requestId)).toEqual(['req-3', 'req-3', 'req-3', 'req-3']);
  });
});

/** A receipt a flooding agent leaves. */
const floodInput = (i: number): ReceiptInput => ({ requestId: `r-${i}`, event: 'requested', faculty: 'list-tabs', actor: { kind: 'agent', name: 'flood' } });

/**
 * A real ledger in a temp folder, its clock settable (`setClock(ms)`: each receipt then 1 ms
 * later; null: the real clock), and the receipts API as the console answers it over that ledger.
 */
function receiptsLedger(prefix: string) {
  const tmp = tempDir(prefix);
  let clock: number | null = null;
  const ledger = new Ledger(tmp.file('l.db'), { now: () => (clock === null ? Date.now() : clock++) });
  const api = { queryReceipts: async (q: Parameters<Ledger['query']>[0]) => ok(ledger.query(q)), verifyLedger: async () => ok(ledger.verify()) };
  return {
    ledger,
    api,
    setClock: (ms: number | null) => void (clock = ms),
    close: () => {
      ledger.close();
      tmp.cleanup();
    },
  };
}

describe('the receipts list over a real ledger: a bounded window', () => {
  it('pushed receipts past the bound let the oldest go and scrolling loads them again; pages past it let the newest go and pushed ones wait for loadFirst (no gap, none twice)', async () => {
    const { ledger, api, close } = receiptsLedger('receipts-window-');
    try {
      const input = floodInput;
      ledger.appendBatch(Array.from({ length: 1_000 }, (_, i) => input(i)));
      const maxItems = SCAN_PAGE_SIZE + 20;
      const s = createReceiptsStore(api, { maxItems });
      const newestFirst = (n: number) => ledger.query({ limit: Math.min(n, SCAN_PAGE_SIZE) }).receipts.map((r) => r.id);
      const ids = () => s.getState().items.map((r) => r.id);
      await s.getState().loadFirst();
      // A flood pushed while the list is open: it never holds more than maxItems.
      for (let b = 0; b < 12; b++) s.getState().addMany(ledger.appendBatch(Array.from({ length: 50 }, (_, i) => input(2_000 + b * 50 + i))));
      expect(s.getState().items).toHaveLength(maxItems);
      const all: string[] = [];
      for (let cursor: string | undefined; all.length < maxItems + RECEIPT_PAGE_SIZE; ) {
        const p = ledger.query({ limit: SCAN_PAGE_SIZE, ...(cursor ? { cursor } : {}) });
        all.push(...p.receipts.map((r) => r.id));
        cursor = p.nextCursor ?? undefined;
      }
      expect(ids()).toEqual(all.slice(0, maxItems));
      // Scrolling on: the page below the last kept one, then the newest let go.
      await s.getState().loadMore();
      expect(ids()).toEqual(all.slice(RECEIPT_PAGE_SIZE, maxItems + RECEIPT_PAGE_SIZE));
      expect(s.getState().newerHidden).toBe(true);
      const held = s.getState().items;
      s.getState().addMany(ledger.appendBatch([input(9_999)]));
      expect(s.getState().items).toBe(held);
      await s.getState().loadFirst();
      expect(s.getState().newerHidden).toBe(false);
      expect(ids()).toEqual(newestFirst(RECEIPT_PAGE_SIZE));
      expect(s.getState().items[0]!.requestId).toBe('r-9999');
    } finally {
      close();
    }
  });
});

describe('expanded receipts follow the window', () => {
  it('a receipt let go (by a flood on top, by a page below, by Show the newest, by clearing the lookup) is collapsed; the ones still shown stay open', async () => {
    const { ledger, api, close } = receiptsLedger('receipts-expanded-');
    try {
      ledger.appendBatch(Array.from({ length: 1_000 }, (_, i) => floodInput(i)));
      const maxItems = SCAN_PAGE_SIZE + 20;
      const s = createReceiptsStore(api, { maxItems });
      const at = (i: number) => s.getState().items[i]!.id;
      await s.getState().loadFirst();
      const [top, oldest] = [at(0), at(s.getState().items.length - 1)];
      s.getState().toggle(top);
      s.getState().toggle(oldest);
      // A flood on top lets the oldest go: it is collapsed, the top one stays open.
      const past = maxItems - s.getState().items.length + 1;
      for (let i = 0; i < past; i++) s.getState().addMany(ledger.appendBatch([floodInput(3_000 + i)]));
      expect(s.getState().items.some((r) => r.id === oldest)).toBe(false);
      expect(s.getState().items.some((r) => r.id === top)).toBe(true);
      expect(s.getState().expanded).toEqual([top]);
      // Pages below let the newest go: the top one goes, and is collapsed.
      const low = at(s.getState().items.length - 1);
      s.getState().toggle(low);
      while (s.getState().items.some((r) => r.id === top)) await s.getState().loadMore();
      expect(s.getState().expanded).toEqual([low]);
      // Show the newest: the first page again, far above the one open.
      await s.getState().loadFirst();
      expect(s.getState().items.some((r) => r.id === low)).toBe(false);
      expect(s.getState().expanded).toEqual([]);
      // A receipt found by its id, far below the window: open while the lookup shows it, collapsed when it is cleared.
      await s.getState().find(oldest);
      expect(s.getState().expanded).toEqual([oldest]);
      await s.getState().loadFirst();
      expect(s.getState().items.some((r) => r.id === oldest)).toBe(false);
      expect(s.getState().expanded).toEqual([oldest]);
      s.getState().clearSearch();
      expect(s.getState().expanded).toEqual([]);
    } finally {
      close();
    }
  });
});

describe('expanded receipts follow the lookup', () => {
  it('a receipt a lookup opened is collapsed when another lookup replaces it, and does not come back open when scrolled to', async () => {
    const { ledger, api, close } = receiptsLedger('receipts-expanded-lookup-');
    try {
      ledger.appendBatch(Array.from({ length: 200 }, (_, i) => floodInput(i)));
      const s = createReceiptsStore(api);
      await s.getState().loadFirst();
      const [far] = ledger.query({ requestId: 'r-20', limit: 1 }).receipts;
      // Looked up by its id, far below the first page: shown by the lookup, open.
      await s.getState().find(far!.id);
      expect(s.getState().expanded).toEqual([far!.id]);
      // "Show this request's receipts" from it: still shown (its request's trail), still open.
      await s.getState().find(far!.requestId!);
      expect(s.getState().expanded).toEqual([far!.id]);
      // Another lookup (a request id) replaces it: the receipt is no longer shown anywhere.
      await s.getState().find('r-150');
      expect(s.getState().search?.results.some((r) => r.id === far!.id)).toBe(false);
      expect(s.getState().expanded).toEqual([]);
      // Scrolled down to it: it comes back closed.
      while (!s.getState().items.some((r) => r.id === far!.id)) await s.getState().loadMore();
      expect(s.getState().expanded).toEqual([]);
    } finally {
      close();
    }
  });
});

describe('the receipts window while a page below is on its way', () => {
  const input = floodInput;
  /** A real ledger, and an api whose paged answers (with a cursor) wait until released. */
  const setup = () => {
    const { ledger, close } = receiptsLedger('receipts-race-');
    ledger.appendBatch(Array.from({ length: 1_200 }, (_, i) => input(i)));
    let gate: Promise<void> | null = null;
    const api = {
      queryReceipts: async (q: Parameters<Ledger['query']>[0]) => {
        const answer = ok(ledger.query(q));
        if (q?.cursor !== undefined && gate) await gate;
        return answer;
      },
      verifyLedger: async () => ok(ledger.verify()),
    };
    const hold = () => {
      let release!: () => void;
      gate = new Promise((r) => (release = r));
      return () => {
        gate = null;
        release();
      };
    };
    /** The receipts held are one run of the ledger's order: no gap, none twice. */
    const expectContiguous = (ids: string[]) => {
      const all: string[] = [];
      for (let cursor: string | null = null; ; ) {
        const p = ledger.query({ limit: SCAN_PAGE_SIZE, ...(cursor ? { cursor } : {}) });
        all.push(...p.receipts.map((r) => r.id));
        if (!(cursor = p.nextCursor)) break;
      }
      const at = all.indexOf(ids[0] as string);
      expect(at).toBeGreaterThanOrEqual(0);
      expect(ids).toEqual(all.slice(at, at + ids.length));
    };
    return { ledger, api, hold, expectContiguous, close };
  };

  it('receipts pushed while a page below is on its way do not let the oldest go: the page lands right below them and the newest go (no gap)', async () => {
    const { ledger, api, hold, expectContiguous, close } = setup();
    try {
      const maxItems = SCAN_PAGE_SIZE;
      const s = createReceiptsStore(api, { maxItems });
      await s.getState().loadFirst();
      while (s.getState().items.length < maxItems) await s.getState().loadMore();
      const release = hold();
      const more = s.getState().loadMore();
      // Pushed meanwhile: were the oldest 20 let go, the page asked would land below a gap.
      s.getState().addMany(ledger.appendBatch(Array.from({ length: 20 }, (_, i) => input(5_000 + i))));
      release();
      await more;
      expectContiguous(s.getState().items.map((r) => r.id));
      expect(s.getState().newerHidden).toBe(true);
      await s.getState().loadMore();
      expectContiguous(s.getState().items.map((r) => r.id));
    } finally {
      close();
    }
  });

  it('a page that lands after Show the newest is not put under the first page', async () => {
    const { ledger, api, hold, expectContiguous, close } = setup();
    try {
      const maxItems = SCAN_PAGE_SIZE;
      const s = createReceiptsStore(api, { maxItems });
      await s.getState().loadFirst();
      while (!s.getState().newerHidden) await s.getState().loadMore();
      const release = hold();
      const more = s.getState().loadMore();
      await s.getState().loadFirst();
      expect(s.getState().newerHidden).toBe(false);
      release();
      await more;
      expect(s.getState().items).toHaveLength(RECEIPT_PAGE_SIZE);
      expectContiguous(s.getState().items.map((r) => r.id));
    } finally {
      close();
    }
  });
});

describe('the receipts window when the clock stepped back', () => {
  /** A ledger of `before` receipts, then (the machine's clock set back, an NTP step) `after` more carrying earlier times. */
  const steppedBack = (prefix: string, before: number, after: number) => {
    const w = receiptsLedger(prefix);
    w.setClock(2_000_000);
    w.ledger.appendBatch(Array.from({ length: before }, (_, i) => floodInput(i)));
    w.setClock(1_000_000);
    w.ledger.appendBatch(Array.from({ length: after }, (_, i) => floodInput(before + i)));
    return w;
  };
  /** Scroll down to the first receipt: the ids of every receipt shown on the way (with those held now). */
  const scrollToFirst = async (s: ReturnType<typeof createReceiptsStore>): Promise<Set<string>> => {
    const seen = new Set(s.getState().items.map((r) => r.id));
    while (s.getState().nextCursor !== null) {
      await s.getState().loadMore();
      for (const r of s.getState().items) seen.add(r.id);
    }
    return seen;
  };

  it('receipts let go from the bottom come back by scrolling, though the ledger pages by (time, seq) and the list holds them by seq', async () => {
    const { ledger, api, setClock, close } = steppedBack('receipts-clock-', 300, 500);
    try {
      const maxItems = SCAN_PAGE_SIZE;
      const s = createReceiptsStore(api, { maxItems });
      await s.getState().loadFirst();
      while (s.getState().items.length < maxItems) await s.getState().loadMore();
      // A flood pushed on top lets the oldest held go.
      setClock(3_000_000);
      s.getState().addMany(ledger.appendBatch(Array.from({ length: 300 }, (_, i) => floodInput(1_000 + i))));
      expect(s.getState().items).toHaveLength(maxItems);
      expect((await scrollToFirst(s)).size).toBe(ledger.head().count);
    } finally {
      close();
    }
  });

  it('scrolling far: every page loaded at the bottom stays below the receipts held (none let go as soon as it came)', async () => {
    // The later 600 carry earlier times, so the ledger pages them after the first 600.
    const { ledger, api, close } = steppedBack('receipts-clock-scroll-', 600, 600);
    try {
      const s = createReceiptsStore(api, { maxItems: SCAN_PAGE_SIZE });
      await s.getState().loadFirst();
      expect((await scrollToFirst(s)).size).toBe(ledger.head().count);
    } finally {
      close();
    }
  });
});
