/**
 * Keeping the rows the person is reading where they are in a newest-first virtual list (the
 * timeline, the receipts list) when rows above them come or go: rows put on top (the live
 * tail, pushed receipts), put among the rows above (a request recorded after the clock stepped
 * back), or let go from the top (a store's bounded window, stores/timeline.ts and
 * stores/receipts.ts). The lists turn Chrome's own scroll anchoring off (pages.css
 * `.receipts-scroll`), which would move the view a second time. End-to-end tests:
 * console-timeline.spec.ts (the live tail, rows let go with open rows among them, Receipts).
 */
import { useCallback, useEffect, useLayoutEffect, useRef, type RefObject } from 'react';
import { isNewList } from './new-list';

/** What useKeepReading needs of a @tanstack/react-virtual Virtualizer. */
export interface VirtualRows {
  getVirtualItems(): Array<{ key: unknown; start: number; end: number }>;
  /** Every row's position (px), in the list's order, for the rows of the current render. */
  measurementsCache: Array<{ start: number }>;
}

/**
 * Keep the rows being read in place: the first row in view and its offset in the box are
 * remembered as the person scrolls; when rows are put on top or let go from the top, the box
 * scrolls so that row is at that offset again, at its new position in the list (the
 * virtualizer's: measured heights, an open trail's too, and estimates for rows never shown,
 * the same sizes it lays the rows out with, so the view moves by exactly what moved above it).
 * At the very top nothing is kept: new rows come into view there. A new list (no first row in
 * common, or `resetKey` changed: a new filter) starts at its top.
 */
export function useKeepReading<T>(scrollRef: RefObject<HTMLElement | null>, virtualizer: VirtualRows, rows: readonly T[], key: (r: T) => string, resetKey: unknown): void {
  const anchor = useRef<{ key: string; offset: number } | null>(null);
  const remember = useCallback(() => {
    const el = scrollRef.current;
    if (!el) return;
    const item = virtualizer.getVirtualItems().find((v) => v.end > el.scrollTop);
    anchor.current = item && el.scrollTop > 0 ? { key: String(item.key), offset: item.start - el.scrollTop } : null;
  }, [scrollRef, virtualizer]);
  useEffect(() => {
    const el = scrollRef.current;
    el?.addEventListener('scroll', remember, { passive: true });
    return () => el?.removeEventListener('scroll', remember);
  }, [scrollRef, remember]);
  const before = useRef(rows);
  const reset = useRef(resetKey);
  useLayoutEffect(() => {
    const el = scrollRef.current;
    const old = before.current;
    before.current = rows;
    if (!el) return;
    if (reset.current !== resetKey || isNewList(old, rows, key)) {
      reset.current = resetKey;
      anchor.current = null;
      el.scrollTop = 0;
      return;
    }
    const at = anchor.current;
    if (!at) return;
    const i = rows.findIndex((r) => key(r) === at.key);
    const item = i >= 0 ? virtualizer.measurementsCache[i] : undefined;
    // Rows put on top or let go from it, and a row put among those above the view (the live tail
    // after the clock stepped back, stores/timeline.ts placeFresh): the row being read moved.
    const want = item ? Math.max(0, item.start - at.offset) : null;
    if (want === null || Math.abs(el.scrollTop - want) < 1) return;
    el.scrollTop = want;
    // Its own key and position are what the next change starts from (a scroll event may not come:
    // the same scrollTop).
    remember();
  }, [rows, resetKey, key, virtualizer, scrollRef, remember]);
}
