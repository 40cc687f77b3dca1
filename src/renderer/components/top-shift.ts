/**
 * How the top of a newest-first list moved between two renders, so a virtual list can keep
 * the rows the person is reading where they were: rows put on top (the live tail) move the
 * view down by as many rows, rows let go from the top (a store's bounded window,
 * stores/timeline.ts and stores/receipts.ts) move it up by as many.
 */

/**
 * `added`: rows now above the old first row; `removed`: rows that were above the new first
 * row and are gone. Both 0 when the first row is the same, or when neither first row is found
 * in the other list (a new list: `fresh`, the caller scrolls to the top instead).
 */
export function topShift<T>(old: readonly T[], rows: readonly T[], key: (r: T) => string): { added: number; removed: number; fresh: boolean } {
  const oldFirst = old[0];
  const newFirst = rows[0];
  if (oldFirst === undefined || newFirst === undefined || key(oldFirst) === key(newFirst)) return { added: 0, removed: 0, fresh: false };
  const added = rows.findIndex((r) => key(r) === key(oldFirst));
  if (added > 0) return { added, removed: 0, fresh: false };
  const removed = old.findIndex((r) => key(r) === key(newFirst));
  return { added: 0, removed: Math.max(0, removed), fresh: removed < 0 };
}

/**
 * The height rows let go from the top had in a virtual list: each one's measured size (the
 * virtualizer's `itemSizeCache`, by key), or `estimate` for one never measured (the size the
 * list gave it). An open row is taller than a row, a collapsed one need not be the estimate.
 */
export function removedHeight(sizes: ReadonlyMap<unknown, number>, keys: readonly string[], estimate: number): number {
  let px = 0;
  for (const k of keys) px += sizes.get(k) ?? estimate;
  return px;
}
