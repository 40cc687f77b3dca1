/**
 * The request timeline (docs/timeline.md): one row per request, newest first,
 * paged through `queryRequests` on the ledger's request index; the total count
 * asked after the first page (`countRequests`); the open rows' step trails
 * (`queryReceipts` by request id); deep links to a request or a receipt; and the
 * live tail: receipts the console pushes are folded into the rows shown (the
 * same fold as the ledger's, src/shared/request-summary.ts), and the requests
 * that changed since the last ask (new ones, and older ones a later receipt brought
 * to match) are fetched with `after`, matching the filter, and put where the
 * ledger's order puts them (placeFresh).
 *
 * Every load carries the filter's generation (`query`): an answer for an older
 * filter is dropped.
 *
 * The rows held are a window of at most `maxRows` (TIMELINE_MAX_ROWS): a live tail that
 * runs for hours under a flood of agent calls, or a person scrolling far down a million
 * requests, would otherwise grow the page without end (every pushed batch is folded over
 * the rows held). Past the bound, new rows on top let the oldest go (scrolling down loads
 * them again from a cursor built from the last row kept, src/shared/cursor.ts); rows loaded
 * at the bottom let the newest go, and the live tail then puts no rows above the top row held
 * (`newerHidden`; it still counts them) until the person goes back to the newest (`showNewest`), so the rows held
 * never have a gap.
 */
import { createStore } from 'zustand/vanilla';
import { encodeCursor, newestFirst, tailCursorSeq } from '../../shared/cursor';
import type { ConsoleApi } from '../../shared/ipc';
import type { Receipt } from '../../shared/receipt';
import { foldReceipt, type RequestFilter, type RequestSummary } from '../../shared/request-summary';
import type { ErrorInfo } from '../../shared/result';
import type { Route } from '../route';

/** Requests per page. */
export const TIMELINE_PAGE_SIZE = 200;
/** Most requests the timeline holds at once (about 0.5 KB each); see the file header. */
export const TIMELINE_MAX_ROWS = 10_000;
/** Receipts of one request's trail asked at once (the console's maximum page). */
export const TRAIL_LIMIT = 500;

export interface Trail {
  receipts: Receipt[];
  loading: boolean;
  error: ErrorInfo | null;
}

export interface TimelineState {
  /** The filter applied now. */
  filter: RequestFilter;
  /** Bumped by every new filter: answers for an older one are dropped. */
  query: number;
  rows: RequestSummary[];
  nextCursor: string | null;
  /** Where the live tail goes on (a tail cursor: the receipts read so far): it asks for what changed since. */
  newestCursor: string | null;
  loading: boolean;
  loaded: boolean;
  error: ErrorInfo | null;
  /** Requests matching the filter; null until counted. */
  total: number | null;
  /** The query whose count `total` is. */
  countedQuery: number;
  /** Request ids whose trail is open. */
  expanded: string[];
  trails: Record<string, Trail>;
  /** The receipt a deep link pointed at (opened in its trail). */
  focusReceipt: string | null;
  /** A deep link that found nothing, in words. */
  notice: string | null;
  /** The deep link being followed, kept until it has been shown: one that failed is followed again once the console answers (stores/index.ts). */
  following: Route | null;
  /**
   * Newer requests than the top row exist and are not held: rows loaded at the bottom let
   * them go (the window is full). The live tail puts no rows above the top row held (it counts them) until `showNewest`.
   */
  newerHidden: boolean;
  setFilter(f: RequestFilter): Promise<void>;
  loadMore(): Promise<void>;
  /** Back to the newest requests of the filter (after `newerHidden`): the first page again, and the live tail. */
  showNewest(): Promise<void>;
  toggle(requestId: string): void;
  /** Fold pushed receipts into the rows and fetch new requests (the live tail). */
  addReceipts(rs: readonly Receipt[]): void;
  /** Deep link: one request, opened. */
  openRequest(requestId: string): Promise<void>;
  /** Deep link: the request holding this receipt, opened at it. */
  openReceipt(receiptId: string): Promise<void>;
  /** Show what a deep link names (../route.ts): a receipt's request opened at it, one request opened, or the timeline filtered. */
  follow(route: Route): Promise<void>;
}

type Api = Pick<ConsoleApi, 'queryRequests' | 'countRequests' | 'queryReceipts'>;

function clean(f: RequestFilter): RequestFilter {
  const out: RequestFilter = {};
  for (const [k, v] of Object.entries(f) as [keyof RequestFilter, unknown][]) {
    if (v === undefined || v === null || v === '') continue;
    (out as Record<string, unknown>)[k] = typeof v === 'string' ? v.trim() || undefined : v;
    if ((out as Record<string, unknown>)[k] === undefined) delete (out as Record<string, unknown>)[k];
  }
  return out;
}

/**
 * Create the timeline store over the console API.
 * @param opts.maxRows most rows held (default TIMELINE_MAX_ROWS; tests use fewer).
 */
export function createTimelineStore(api: Api, opts: { maxRows?: number } = {}) {
  const maxRows = Math.max(TIMELINE_PAGE_SIZE, opts.maxRows ?? TIMELINE_MAX_ROWS);
  /** Receipts of requests not shown yet, pushed while a tail fetch was on its way (folded once it answers). */
  let early: Receipt[] = [];
  /** The receipt seq the count shown was read at (ConsoleApi.countRequests `through`). */
  let countedThrough = 0;
  /**
   * Requests the live tail added to the count since it was read (their first receipt was in its
   * walk): when one comes back not held (rows let go, or hidden), it needs no recount.
   */
  const countedByTail = new Set<string>();
  /** A page below landed before this filter's count was in (askAgainIfBrought checks the rows held once it is). */
  let broughtBeforeCount = false;

  return createStore<TimelineState>()((set, get) => {
    /**
     * The open rows and trails of the rows still held, after rows were let go: a row loaded again
     * later starts closed, and its trail is asked afresh when opened (the one kept would miss the
     * receipts pushed while the row was out).
     */
    function heldOnly(rows: readonly RequestSummary[]): Pick<TimelineState, 'expanded' | 'trails'> {
      const held = new Set(rows.map((x) => x.requestId));
      const trails: Record<string, Trail> = {};
      for (const [id, t] of Object.entries(get().trails)) if (held.has(id)) trails[id] = t;
      return { expanded: get().expanded.filter((id) => held.has(id)), trails };
    }

    async function loadTrail(requestId: string): Promise<void> {
      set({ trails: { ...get().trails, [requestId]: { receipts: get().trails[requestId]?.receipts ?? [], loading: true, error: null } } });
      const r = await api.queryReceipts({ requestId, limit: TRAIL_LIMIT });
      const trail: Trail = r.ok ? { receipts: [...r.value.receipts].sort((a, b) => a.seq - b.seq), loading: false, error: null } : { receipts: [], loading: false, error: r.error };
      set({ trails: { ...get().trails, [requestId]: trail } });
    }

    /**
     * `rows` with the receipts kept in `early` for them (pushed while they were not held) folded in,
     * those newer than the row.
     */
    function foldEarly(rows: RequestSummary[]): RequestSummary[] {
      if (early.length === 0) return rows;
      const index = new Map(rows.map((x, i) => [x.requestId, i]));
      let out: RequestSummary[] | null = null;
      for (const rc of early) {
        const i = rc.requestId === null ? undefined : index.get(rc.requestId);
        if (i === undefined || rc.seq <= (rows[i] as RequestSummary).lastSeq) continue;
        out ??= [...rows];
        out[i] = fold(out[i] as RequestSummary, rc);
      }
      return out ?? rows;
    }

    /**
     * Let go of the receipts kept for requests now held (they are in their rows). Those of a request
     * left out (below the rows held while a page is on its way, or above them while the newest are
     * hidden) stay kept for the page that brings it.
     */
    function dropEarlyHeld(rows: readonly RequestSummary[]): void {
      if (early.length === 0) return;
      const held = new Set(rows.map((x) => x.requestId));
      early = early.filter((rc) => rc.requestId !== null && !held.has(rc.requestId));
    }

    /**
     * Ask the count again (after the live tail found an older request that came to match). One at a
     * time, and at most one a RECOUNT_GAP_MS: a count may read a whole index (a text filter).
     */
    const recount = oneAtATime(async () => {
      const { query, filter } = get();
      const c = await api.countRequests(filter);
      if (query === get().query && c.ok) {
        countedThrough = c.value.through;
        countedByTail.clear();
        set({ total: c.value.count, countedQuery: query });
      }
      return false;
    }, RECOUNT_GAP_MS);

    /**
     * After a page below landed: a row on it with a receipt recorded after the count was read
     * (`lastSeq` > `countedThrough`) may have come to match since, and the live tail, which counts
     * only requests it finds not held, will not count it when it reads that receipt. With a filter
     * a later receipt can meet, the count is asked again; before the count is in, once it is.
     */
    function askAgainIfBrought(page: readonly RequestSummary[]): void {
      if (!mayComeToMatch(get().filter) || !page.some((x) => !countedByTail.has(x.requestId))) return;
      if (get().countedQuery !== get().query || get().total === null) broughtBeforeCount = true;
      else if (page.some((x) => x.lastSeq > countedThrough && !countedByTail.has(x.requestId))) void recount();
    }

    /** Fetch the requests that changed since the last ask and match the filter; one ask at a time, again while more come. */
    const tail = oneAtATime(async () => {
      const { query, newestCursor, filter } = get();
      if (!newestCursor) return false;
      const r = await api.queryRequests({ ...filter, after: newestCursor, limit: TIMELINE_PAGE_SIZE });
      if (!r.ok || query !== get().query) return false;
      const known = new Set(get().rows.map((x) => x.requestId));
      const fresh = r.value.requests.filter((x) => !known.has(x.requestId));
      // The count holds the matching requests first recorded up to `countedThrough` (the seq it
      // was read at). A request first recorded after that and within this walk (after its
      // cursor) is new to it: counted once, by the walk that read its first receipt. One not
      // held and recorded before the walk or the count may have come to match on a later
      // receipt, or been counted already: with a filter a later receipt can meet, the count is
      // asked again.
      const from = tailCursorSeq(newestCursor) ?? 0;
      const total = get().total;
      const newlyRecorded = r.value.requests.filter((x) => x.seq > Math.max(countedThrough, from));
      const recorded = newlyRecorded.length;
      if (countedByTail.size + recorded > MAX_COUNTED_BY_TAIL) countedByTail.clear();
      for (const x of newlyRecorded) countedByTail.add(x.requestId);
      if (mayComeToMatch(filter) && fresh.some((x) => x.seq <= Math.max(countedThrough, from) && !countedByTail.has(x.requestId))) void recount();
      // While the newest rows are let go (a page below, now or meanwhile), a request that sorts above
      // the top row held would go above a gap: it waits for showNewest, which reads the first page
      // again. One that sorts among the rows held (an older one that came to match) goes in.
      const top = get().rows[0];
      // Receipts pushed before this answer, newer than what it holds, are folded in now.
      const placeable = foldEarly(fresh).filter((x) => !get().newerHidden || (top !== undefined && newestFirst(x, top) > 0));
      const rows = placeFresh(get().rows, placeable, get().nextCursor !== null || get().loading);
      // Past the bound the oldest rows go; scrolling down loads them again after the last row kept.
      // Not while a page below is on its way (loading): it continues below the rows held now, and
      // when it lands the newest go instead (loadMore), so the rows never have a gap.
      const kept = rows.length > maxRows && !get().loading ? rows.slice(0, maxRows) : rows;
      const last = kept[kept.length - 1];
      dropEarlyHeld(kept);
      set({
        rows: kept,
        ...(kept !== rows && last ? { nextCursor: encodeCursor('q', last.time, last.seq), ...heldOnly(kept) } : {}),
        newestCursor: r.value.newestCursor,
        total: total === null ? null : total + recorded,
      });
      return r.value.more === true;
    });

    return {
      filter: {},
      query: 0,
      rows: [],
      nextCursor: null,
      newestCursor: null,
      loading: false,
      loaded: false,
      error: null,
      total: null,
      countedQuery: 0,
      expanded: [],
      trails: {},
      focusReceipt: null,
      notice: null,
      following: null,
      newerHidden: false,
      async setFilter(f) {
        const filter = clean(f);
        const query = get().query + 1;
        early = [];
        countedByTail.clear();
        broughtBeforeCount = false;
        set({ filter, query, loading: true, error: null, total: null, rows: [], nextCursor: null, newestCursor: null, notice: null, newerHidden: false });
        const r = await api.queryRequests({ ...filter, limit: TIMELINE_PAGE_SIZE });
        if (query !== get().query) return;
        if (!r.ok) return set({ loading: false, error: r.error });
        const rows = foldEarly(r.value.requests);
        dropEarlyHeld(rows);
        set({ loading: false, loaded: true, rows, nextCursor: r.value.nextCursor, newestCursor: r.value.newestCursor });
        // The count comes after the first screenful: it may walk a whole index.
        const c = await api.countRequests(filter);
        if (query !== get().query) return;
        if (c.ok) {
          countedThrough = c.value.through;
          countedByTail.clear();
          set({ total: c.value.count, countedQuery: query });
          if (broughtBeforeCount) {
            broughtBeforeCount = false;
            askAgainIfBrought(get().rows);
          }
        }
      },
      async loadMore() {
        const { nextCursor, loading, query, filter } = get();
        if (!nextCursor || loading) return;
        set({ loading: true, error: null });
        const r = await api.queryRequests({ ...filter, cursor: nextCursor, limit: TIMELINE_PAGE_SIZE });
        if (query !== get().query) return;
        if (!r.ok) return set({ loading: false, error: r.error });
        const known = new Set(get().rows.map((x) => x.requestId));
        const page = foldEarly(r.value.requests.filter((x) => !known.has(x.requestId)));
        dropEarlyHeld(page);
        const rows = [...get().rows, ...page];
        // Past the bound the newest rows go, and the live tail puts none in until showNewest (no gap above the top row).
        const excess = rows.length - maxRows;
        const kept = excess > 0 ? rows.slice(excess) : rows;
        set({ loading: false, rows: kept, nextCursor: r.value.nextCursor, ...(excess > 0 ? { newerHidden: true, ...heldOnly(kept) } : {}) });
        askAgainIfBrought(page);
      },
      async showNewest() {
        await get().setFilter(get().filter);
      },
      toggle(requestId) {
        const expanded = get().expanded;
        if (expanded.includes(requestId)) return set({ expanded: expanded.filter((x) => x !== requestId) });
        set({ expanded: [...expanded, requestId] });
        void loadTrail(requestId);
      },
      addReceipts(rs) {
        const mine = rs.filter((r) => r.requestId !== null);
        if (mine.length === 0 || !get().loaded) return;
        const index = new Map(get().rows.map((x, i) => [x.requestId, i]));
        let rows: RequestSummary[] | null = null;
        let unknown = false;
        let trails: Record<string, Trail> | null = null;
        for (const r of mine) {
          const i = index.get(r.requestId as string);
          if (i === undefined) {
            unknown = true;
            early.push(r);
            continue;
          }
          rows ??= [...get().rows];
          const row = rows[i] as RequestSummary;
          if (r.seq > row.lastSeq) rows[i] = fold(row, r);
          const trail = (trails ?? get().trails)[r.requestId as string];
          if (trail && !trail.loading && !trail.receipts.some((x) => x.id === r.id)) {
            trails ??= { ...get().trails };
            trails[r.requestId as string] = { ...trail, receipts: [...trail.receipts, r] };
          }
        }
        if (early.length > 2_000) early = early.slice(-2_000);
        if (rows || trails) set({ ...(rows ? { rows } : {}), ...(trails ? { trails } : {}) });
        if (unknown) void tail();
      },
      async openRequest(requestId) {
        await get().setFilter({ requestId });
        // Not answered (the console unreachable): that says nothing about whether the request exists.
        if (get().error) return;
        const found = get().rows.some((x) => x.requestId === requestId);
        if (!found) return set({ notice: `No request has the id ${requestId}.` });
        if (!get().expanded.includes(requestId)) get().toggle(requestId);
      },
      async openReceipt(receiptId) {
        // The link the page opened with is followed before the timeline is first shown (main.tsx):
        // until it is done the timeline is loading, so the page's first-show load (audit-pages.tsx)
        // does not put the unfiltered list, and no notice, over what this link says.
        const query = get().query;
        set({ loading: true, error: null, notice: null });
        const r = await api.queryReceipts({ id: receiptId, limit: 1 });
        const receipt = r.ok ? r.value.receipts[0] : undefined;
        /** Stay on the list (loading it if it never was), and say why the link opened no request. */
        const stay = async (patch: Partial<TimelineState>) => {
          if (get().query !== query) return set(patch); // a filter chosen meanwhile holds the list now
          set({ loading: false });
          if (!get().loaded) await get().setFilter(get().filter);
          set(patch);
        };
        if (!r.ok) return stay({ error: r.error });
        if (!receipt) return stay({ notice: `No receipt has the id ${receiptId}.` });
        if (receipt.requestId === null) return stay({ notice: `Receipt ${receiptId} is a console event, not part of a request: the Receipts page shows it.` });
        set({ focusReceipt: receiptId });
        await get().openRequest(receipt.requestId);
      },
      async follow(route) {
        set({ following: route });
        if (route.view === 'receipt') await get().openReceipt(route.receiptId);
        else if (route.request) await get().openRequest(route.request);
        else await get().setFilter(route.filter);
        if (get().following === route && !get().error) set({ following: null });
      },
    };
  });
}

function fold(row: RequestSummary, r: Receipt): RequestSummary {
  return foldReceipt(row, { ...r, requestId: r.requestId as string, detail: () => r.detail });
}

export type TimelineStore = ReturnType<typeof createTimelineStore>;

/** Between two counts the live tail asks for (ms). */
export const RECOUNT_GAP_MS = 1_000;

/** Most request ids kept in `countedByTail` before it is emptied (then at worst one recount more). */
const MAX_COUNTED_BY_TAIL = 20_000;

/** What a request's first receipt sets for good (src/shared/request-summary.ts foldReceipt): its time, faculty and id. */
const SET_AT_FIRST: ReadonlySet<string> = new Set<keyof RequestFilter>(['from', 'to', 'faculty', 'requestId']);

/**
 * Whether a request recorded earlier can come to match `f` on a later receipt: its outcome, events
 * and reason change, and its origin, tool and agent are filled by a later receipt when the first
 * had none (a read's `requested` receipt has no origin yet).
 */
function mayComeToMatch(f: RequestFilter): boolean {
  return Object.keys(f).some((k) => !SET_AT_FIRST.has(k));
}

/**
 * The rows held with the live tail's new requests put in, in the ledger's order (newestFirst,
 * src/shared/cursor.ts). New requests are nearly always newer than every row held and go on top; one
 * recorded after the clock stepped back, or an older one a later receipt brought to match the
 * filter, sorts among the rows held, or below them. Below the last
 * row held, while older rows are still to load (`openBelow`: a next page, or one on its way), it
 * is left out: the page below brings it, in its place, from the ledger.
 */
export function placeFresh(held: RequestSummary[], fresh: RequestSummary[], openBelow: boolean): RequestSummary[] {
  if (fresh.length === 0) return held;
  const sorted = [...fresh].sort(newestFirst);
  const top = held[0];
  if (!top || newestFirst(sorted[sorted.length - 1] as RequestSummary, top) < 0) return [...sorted, ...held];
  const last = held[held.length - 1] as RequestSummary;
  const kept = openBelow ? sorted.filter((x) => newestFirst(x, last) < 0) : sorted;
  return [...kept, ...held].sort(newestFirst);
}

/**
 * `work` run one at a time: a call while it runs makes one more run after it (calls coalesce), and
 * so does `work` answering true (more to do). After each run it waits `gapMs` (ms) before it is
 * done, so calls within that time wait for it too: at most one run a `gapMs`.
 */
function oneAtATime(work: () => Promise<boolean>, gapMs = 0): () => Promise<void> {
  let running = false;
  let again = false;
  return async () => {
    if (running) {
      again = true;
      return;
    }
    running = true;
    try {
      do {
        again = false;
        if (await work()) again = true;
        // With a gap, calls during it coalesce into the next run: at most one run a gapMs.
        if (gapMs > 0) await new Promise((r) => setTimeout(r, gapMs));
      } while (again);
    } finally {
      running = false;
    }
  };
}
