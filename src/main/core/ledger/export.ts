/**
 * The ledger's JSON Lines export (docs/ledger.md): every receipt, oldest first,
 * one Receipt object per line, UTF-8, "\n" after each.
 */
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import type { RawRow } from './chain';
import { rowToReceipt } from './query';

/**
 * Write the receipts with seq 1..`head.count` to a file path (created or
 * replaced) or a writable stream (left open, its back-pressure respected).
 * Reads in chunks through `chunk(afterSeq, endSeq)` (rows with afterSeq < seq ≤
 * endSeq, oldest first), so appends may continue meanwhile; the export covers
 * the receipts present when it started.
 * @returns the number of receipts written and the hash of the last one.
 * @throws what `chunk` throws (LedgerStateError when the ledger closed meanwhile) or the stream's error.
 */
export async function exportJsonLines(
  head: { count: number; headHash: string },
  chunk: (afterSeq: number, endSeq: number) => RawRow[],
  target: string | Writable,
): Promise<{ count: number; headHash: string }> {
  const { count: end, headHash } = head;
  const toFile = typeof target === 'string';
  const out: Writable = toFile ? createWriteStream(target) : target;
  try {
    let after = 0;
    while (after < end) {
      const rows = chunk(after, end);
      if (rows.length === 0) break;
      let text = '';
      for (const r of rows) text += JSON.stringify(rowToReceipt(r)) + '\n';
      after = (rows[rows.length - 1] as RawRow)[0];
      if (!out.write(text)) await once(out, 'drain');
    }
  } finally {
    if (toFile) {
      out.end();
      await once(out, 'finish');
    }
  }
  return { count: end, headHash };
}
