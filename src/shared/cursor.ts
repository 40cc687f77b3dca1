/**
 * The ledger's page cursors, one codec for the console (src/main/core/ledger) and the
 * renderer, which builds one from a row it holds when it lets rows go (stores/timeline.ts,
 * stores/receipts.ts keep a bounded window of rows).
 *
 * A cursor says where the next page of a newest-first listing starts: below the (time, seq)
 * of the last item shown. `<kind>1.<time base 36>.<seq base 36>`, the kind telling a receipts
 * cursor (`r`, Ledger.query) from a requests cursor (`q`, Ledger.queryRequests), so one is
 * never taken for the other. Opaque to agents and pages: only the ledger reads it.
 *
 * The timeline's live tail has a cursor of its own (`t`, encodeTailCursor): the receipts
 * recorded after a seq, whatever their time says.
 */

/** `r`: a receipts cursor; `q`: a requests cursor. Both page by (time, seq), not by seq alone (the clock can step back). */
export type CursorKind = 'r' | 'q';

/**
 * The order the cursors page in, for Array.sort: newest first by (time, seq), of receipts or of
 * requests (by their first receipt's). An item recorded after the clock stepped back sorts below
 * newer-timed ones, where the pages below find it too.
 */
export function newestFirst(a: { time: number; seq: number }, b: { time: number; seq: number }): number {
  return b.time - a.time || b.seq - a.seq;
}

/**
 * The cursor naming the item at (time, seq): the next page starts right below it.
 * @param time ms since the epoch (the item's `time`).
 * @param seq the item's seq (a receipt's, or a request's first receipt's).
 */
export function encodeCursor(kind: CursorKind, time: number, seq: number): string {
  return `${kind}1.${time.toString(36)}.${seq.toString(36)}`;
}

/**
 * The (time, seq) a cursor of `kind` names, or null for anything else: another kind's cursor,
 * a non-string, a seq below 1, numbers past 2^53.
 */
export function cursorParts(kind: CursorKind, cursor: unknown): { time: number; seq: number } | null {
  const m = typeof cursor === 'string' ? /^([rq])1\.(-?[0-9a-z]{1,11})\.([0-9a-z]{1,11})$/.exec(cursor) : null;
  const time = m && m[1] === kind ? parseInt(m[2] as string, 36) : NaN;
  const seq = m && m[1] === kind ? parseInt(m[3] as string, 36) : NaN;
  return Number.isSafeInteger(time) && Number.isSafeInteger(seq) && seq >= 1 ? { time, seq } : null;
}

/**
 * The live tail's cursor (Ledger.queryRequests `after`, a page's `newestCursor`): the receipts
 * read so far, up to receipt `seq`; the tail asks for the requests with a receipt recorded since.
 * By seq, not (time, seq): a request recorded after the clock stepped back has a smaller time
 * than the newest shown, and is still new. `t1.<seq base 36>`; `seq` 0 names an empty ledger.
 */
export function encodeTailCursor(seq: number): string {
  return `t1.${seq.toString(36)}`;
}

/** The seq a tail cursor names (0 or more), or null for anything else (a page cursor, a non-string, past 2^53). */
export function tailCursorSeq(cursor: unknown): number | null {
  const m = typeof cursor === 'string' ? /^t1\.([0-9a-z]{1,11})$/.exec(cursor) : null;
  const seq = m ? parseInt(m[1] as string, 36) : NaN;
  return Number.isSafeInteger(seq) ? seq : null;
}
