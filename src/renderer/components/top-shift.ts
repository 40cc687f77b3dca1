/**
 * How the top of a newest-first list moved between two renders (keep-reading.ts keeps the rows
 * being read in place by it). No DOM: unit-tested in Node.
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
