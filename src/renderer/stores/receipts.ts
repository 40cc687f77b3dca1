/**
 * The receipt list (newest first, paged through `queryReceipts`), the ledger
 * check (`verifyLedger`), which rows are expanded, and the lookup of one
 * request's or one receipt's trail. Receipts pushed by the host are put on top.
 *
 * Lookup: an id is asked of the ledger as a request id (`ReceiptQuery.requestId`),
 * then as a receipt id (`ReceiptQuery.id`, one indexed lookup); a receipt found
 * that way is shown with its whole request trail, that receipt expanded.
 *
 * The list holds at most `maxItems` receipts (RECEIPTS_MAX_ITEMS), the same bounded window
 * as the timeline's (stores/timeline.ts): pushed receipts past it let the oldest go (scrolling
 * down loads them again from a cursor built from the last one kept, src/shared/cursor.ts);
 * pages loaded at the bottom let the newest go, and pushed receipts then wait (`newerHidden`)
 * until the person goes back to the newest (`loadFirst`).
 */
import { createStore } from 'zustand/vanilla';
import { encodeCursor, newestFirst } from '../../shared/cursor';
import type { ConsoleApi } from '../../shared/ipc';
import type { Receipt, VerifyReport } from '../../shared/receipt';
import type { ErrorInfo } from '../../shared/result';
import type { LedgerProgress } from '../../shared/ledger-export';

/** Receipts per page. */
export const RECEIPT_PAGE_SIZE = 50;
/** Most receipts the list holds at once; see the file header. */
export const RECEIPTS_MAX_ITEMS = 10_000;
/** Receipts per page while scanning for a receipt id (the host's maximum). */
export const SCAN_PAGE_SIZE = 500;
/** What a receipt id and a request id may look like (the host's own ID pattern). */
export const LOOKUP_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

export interface ReceiptSearch {
  /** The id the person looked up (trimmed). */
  query: string;
  status: 'searching' | 'done';
  /** `request`: the receipts of that request; `receipt`: the trail of the request holding that receipt. */
  matchedBy: 'request' | 'receipt' | null;
  /** Newest first. */
  results: Receipt[];
  /** The receipt whose id was looked up, when found. */
  receiptId: string | null;
  /** Receipts paged through while looking for a receipt id. */
  scanned: number;
  /** Whether that scan reached the first receipt (so "not found" is certain). */
  complete: boolean;
  error: ErrorInfo | null;
}

export interface ReceiptsState {
  items: Receipt[];
  nextCursor: string | null;
  /** Newer receipts than the top one are not held (pages loaded at the bottom let them go); pushed ones wait for `loadFirst`. */
  newerHidden: boolean;
  loading: boolean;
  loaded: boolean;
  error: ErrorInfo | null;
  verify: VerifyReport | null;
  verifying: boolean;
  verifyError: ErrorInfo | null;
  /** Receipts checked so far of the running Verify ledger (`ledger-progress` events), null when none runs. */
  verifyProgress: { done: number; total: number } | null;
  setVerifyProgress(p: LedgerProgress): void;
  /** Ids of the rows showing their full receipt. */
  expanded: string[];
  search: ReceiptSearch | null;
  loadFirst(): Promise<void>;
  loadMore(): Promise<void>;
  /** Put one pushed receipt on top (same as `addMany([r])`). */
  add(r: Receipt): void;
  /** Put a batch of pushed receipts on top in one store update (the host sends them in batches: src/main/core/receipt-events.ts). */
  addMany(rs: readonly Receipt[]): void;
  runVerify(): Promise<void>;
  toggle(id: string): void;
  find(id: string): Promise<void>;
  clearSearch(): void;
}

/**
 * Merge receipts by id, newest first in the ledger's order (time, then seq: `newestFirst`, src/shared/cursor.ts; the clock can step back, so not by seq alone), so the
 * list is the ledger's pages laid end to end and its window (the file header) lets go of what a
 * page cursor brings back. `a` is a list this function made (sorted, no duplicates). When every
 * receipt of `b` is newer than `a`'s newest (the live tail's case) they are put on top without
 * re-sorting `a`: a long-open Receipts page then pays for the new receipts only, not a sort of
 * everything it holds on every pushed batch.
 */
export function mergeReceipts(a: Receipt[], b: Receipt[]): Receipt[] {
  const top = a[0];
  if (top && b.length > 0 && b.every((r) => newestFirst(r, top) < 0)) {
    const fresh = new Map<string, Receipt>();
    for (const r of b) fresh.set(r.id, r);
    return [...[...fresh.values()].sort(newestFirst), ...a];
  }
  const byId = new Map<string, Receipt>();
  for (const r of [...a, ...b]) byId.set(r.id, r);
  return [...byId.values()].sort(newestFirst);
}

/**
 * Create the receipts store over the console API.
 * @param opts.maxItems most receipts held (default RECEIPTS_MAX_ITEMS; tests use fewer).
 */
export function createReceiptsStore(api: Pick<ConsoleApi, 'queryReceipts' | 'verifyLedger'>, opts: { maxItems?: number } = {}) {
  const maxItems = Math.max(SCAN_PAGE_SIZE, opts.maxItems ?? RECEIPTS_MAX_ITEMS);
  /** Bumped by every lookup and by clearing it: an older lookup's answers are dropped. */
  let searchSeq = 0;
  /** Pushed receipts on top, past the bound: the oldest go, and the next page starts below the last kept. */
  const keepNewest = (items: Receipt[]): Pick<ReceiptsState, 'items'> & Partial<Pick<ReceiptsState, 'nextCursor'>> => {
    if (items.length <= maxItems) return { items };
    const kept = items.slice(0, maxItems);
    const last = kept[kept.length - 1] as Receipt;
    return { items: kept, nextCursor: encodeCursor('r', last.time, last.seq) };
  };
  /**
   * The expanded ids still shown (a row held, or one of the lookup's results): a receipt let go
   * from the window is collapsed, and comes back closed (the timeline's rows do the same,
   * ./timeline.ts `heldOnly`), so the expanded list never outgrows what is on screen.
   */
  const shownOnly = (expanded: string[], items: readonly Receipt[], search: ReceiptSearch | null): Partial<Pick<ReceiptsState, 'expanded'>> => {
    if (expanded.length === 0) return {};
    const shown = new Set(items.map((r) => r.id));
    for (const r of search?.results ?? []) shown.add(r.id);
    const kept = expanded.filter((id) => shown.has(id));
    return kept.length === expanded.length ? {} : { expanded: kept };
  };
  return createStore<ReceiptsState>()((set, get) => ({
    items: [],
    nextCursor: null,
    newerHidden: false,
    loading: false,
    loaded: false,
    error: null,
    verify: null,
    verifying: false,
    verifyError: null,
    verifyProgress: null,
    expanded: [],
    search: null,
    async loadFirst() {
      set({ loading: true, error: null });
      const r = await api.queryReceipts({ limit: RECEIPT_PAGE_SIZE });
      if (!r.ok) return set({ loading: false, error: r.error });
      const items = mergeReceipts([], r.value.receipts);
      set({ loading: false, loaded: true, items, nextCursor: r.value.nextCursor, newerHidden: false, ...shownOnly(get().expanded, items, get().search) });
    },
    async loadMore() {
      const { nextCursor, loading } = get();
      if (!nextCursor || loading) return;
      set({ loading: true, error: null });
      const r = await api.queryReceipts({ limit: RECEIPT_PAGE_SIZE, cursor: nextCursor });
      if (!r.ok) return set({ loading: false, error: r.error });
      // loadFirst put the first page back meanwhile (Show the newest, a reconnect): this page is below
      // receipts no longer held, so it would leave a gap. Dropped.
      if (get().nextCursor !== nextCursor) return set({ loading: false });
      const items = mergeReceipts(get().items, r.value.receipts);
      // Past the bound the newest go, and pushed receipts wait for loadFirst (no gap above the top one).
      const excess = items.length - maxItems;
      const kept = excess > 0 ? items.slice(excess) : items;
      set({ loading: false, items: kept, nextCursor: r.value.nextCursor, ...(excess > 0 ? { newerHidden: true, ...shownOnly(get().expanded, kept, get().search) } : {}) });
    },
    add(receipt) {
      get().addMany([receipt]);
    },
    addMany(receipts) {
      if (receipts.length === 0) return;
      const search = get().search;
      // New steps of the request being looked at join its trail.
      const shown = search?.status === 'done' ? new Set(search.results.map((r) => r.requestId)) : null;
      const joining = shown ? receipts.filter((r) => r.requestId !== null && shown.has(r.requestId)) : [];
      // Before the first page is loaded the list holds nothing: that page brings these too. While
      // newer ones are not held, neither are these (they wait for loadFirst).
      // While a page is on its way (loading) none go: a page below lands under the receipts held now
      // and then the newest go instead (loadMore), so the list never has a gap.
      const held = get().loaded && !get().newerHidden ? (get().loading ? { items: mergeReceipts(get().items, [...receipts]) } : keepNewest(mergeReceipts(get().items, [...receipts]))) : null;
      set({
        ...held,
        // Trimmed (keepNewest set a cursor below the last kept): the ones let go are collapsed.
        ...(held && 'nextCursor' in held ? shownOnly(get().expanded, held.items, search) : {}),
        ...(joining.length > 0 && search ? { search: { ...search, results: mergeReceipts(search.results, joining) } } : {}),
      });
    },
    async runVerify() {
      set({ verifying: true, verifyError: null, verifyProgress: null });
      const r = await api.verifyLedger();
      set(r.ok ? { verifying: false, verify: r.value, verifyProgress: null } : { verifying: false, verify: null, verifyError: r.error, verifyProgress: null });
    },
    setVerifyProgress(p) {
      // Only while this page's own check runs (another tab's check reports to its own page).
      if (get().verifying) set({ verifyProgress: { done: p.done, total: p.total } });
    },
    toggle(id) {
      const expanded = get().expanded;
      set({ expanded: expanded.includes(id) ? expanded.filter((x) => x !== id) : [...expanded, id] });
    },
    clearSearch() {
      searchSeq++;
      set({ search: null, ...shownOnly(get().expanded, get().items, null) });
    },
    async find(raw) {
      const query = raw.trim();
      if (!query) return get().clearSearch();
      const seq = ++searchSeq;
      const current = () => seq === searchSeq;
      const base: ReceiptSearch = { query, status: 'searching', matchedBy: null, results: [], receiptId: null, scanned: 0, complete: false, error: null };
      /** This lookup's answer replaces the one shown: what only that one showed is collapsed (as when it is cleared), `open` opened. */
      const done = (search: ReceiptSearch, open?: string) => {
        const pruned = shownOnly(get().expanded, get().items, search).expanded ?? get().expanded;
        set({ search, expanded: open === undefined || pruned.includes(open) ? pruned : [...pruned, open] });
      };
      if (!LOOKUP_ID_PATTERN.test(query)) {
        return done({ ...base, status: 'done', error: { code: 'invalid-input', message: 'Receipt and request ids have only letters, digits and . _ : - (at most 128 characters).' } });
      }
      set({ search: base });

      const byRequest = await api.queryReceipts({ requestId: query, limit: SCAN_PAGE_SIZE });
      if (!current()) return;
      if (!byRequest.ok) return done({ ...base, status: 'done', error: byRequest.error });
      if (byRequest.value.receipts.length > 0) {
        return done({ ...base, status: 'done', matchedBy: 'request', results: mergeReceipts([], byRequest.value.receipts), complete: true });
      }

      const scanned = 0;
      let found = get().items.find((r) => r.id === query) ?? null;
      if (!found) {
        const byId = await api.queryReceipts({ id: query, limit: 1 });
        if (!current()) return;
        if (!byId.ok) return done({ ...base, status: 'done', error: byId.error });
        found = byId.value.receipts[0] ?? null;
      }
      if (!found) return done({ ...base, status: 'done', complete: true });

      let results = [found];
      if (found.requestId !== null) {
        const trail = await api.queryReceipts({ requestId: found.requestId, limit: SCAN_PAGE_SIZE });
        if (!current()) return;
        if (trail.ok) results = mergeReceipts([found], trail.value.receipts);
      }
      done({ ...base, status: 'done', matchedBy: 'receipt', receiptId: found.id, results, scanned, complete: true }, found.id);
    },
  }));
}

export type ReceiptsStore = ReturnType<typeof createReceiptsStore>;
