/**
 * Retention's erasure inside one ledger file (docs/ledger.md, "Retention"; Ledger.erasePayloads
 * checks the state and the format, then calls this).
 */
import type Database from 'better-sqlite3';

/**
 * Erase the payload of every receipt of the payload-hash rule with `time < before`, in IMMEDIATE
 * transactions of at most `batch` rows (1..100,000), yielding to the event loop between them; then
 * clear the request index's copy of a reason for requests whose last receipt is before `before`.
 * @param hooks.now the erasure time (ms since the epoch), read per batch;
 *   `alive` throws when the ledger closed meanwhile; `committed` is told of each batch written.
 * @returns `{erased, oldRuleKept}` (see Ledger.erasePayloads).
 * @throws the signal's reason when aborted (batches already committed stay erased), or what `alive` throws.
 */
export async function erasePayloadsIn(
  db: Database.Database,
  opts: { before: number; signal?: AbortSignal },
  hooks: { batch: number; now: () => number; alive: () => void; committed: () => void },
): Promise<{ erased: number; oldRuleKept: number }> {
  const batch = Math.max(1, Math.min(hooks.batch, 100_000));
  // The partial index receipts_payload_kept holds exactly the erasable rows, by time.
  const erase = db.prepare(
    "UPDATE receipts SET detail = 'null', erased_at = @now WHERE seq IN " +
      '(SELECT seq FROM receipts WHERE payload_hash IS NOT NULL AND erased_at IS NULL AND time < @before LIMIT @batch)',
  );
  let erased = 0;
  for (;;) {
    opts.signal?.throwIfAborted();
    hooks.alive();
    const now = hooks.now();
    const n = db.transaction(() => erase.run({ now, before: opts.before, batch }).changes).immediate();
    if (n > 0) hooks.committed();
    erased += n;
    if (n < batch) break;
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  // The request index keeps a copy of a reason (payload text, for the timeline's text search):
  // a request whose every receipt is past the retention period loses it too.
  db.prepare('UPDATE requests SET reason = NULL WHERE last_time < ? AND reason IS NOT NULL').run(opts.before);
  const oldRuleKept = db.prepare('SELECT count(*) FROM receipts WHERE time < ? AND payload_hash IS NULL').pluck().get(opts.before) as number;
  return { erased, oldRuleKept };
}
