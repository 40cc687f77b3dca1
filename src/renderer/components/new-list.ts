/**
 * Whether a newest-first list is a new list rather than the same one moved (keep-reading.ts then
 * scrolls to its top instead of keeping the rows being read). No DOM: unit-tested in Node.
 */

/**
 * True when both lists have rows, their first rows differ, and neither first row is in the other
 * list: no row in common at the top (rows put on top, or let go from it, keep the old first row or
 * the new one in the other list).
 */
export function isNewList<T>(old: readonly T[], rows: readonly T[], key: (r: T) => string): boolean {
  const oldFirst = old[0];
  const newFirst = rows[0];
  if (oldFirst === undefined || newFirst === undefined || key(oldFirst) === key(newFirst)) return false;
  return !rows.some((r) => key(r) === key(oldFirst)) && !old.some((r) => key(r) === key(newFirst));
}
