/**
 * The ledger's guard triggers (docs/ledger.md, "Schema"): they refuse UPDATE (but
 * retention's erasure), DELETE and any INSERT that is not the next seq. Created with the
 * file and never recreated (schema.ts); `verify` fails when one is missing or is not
 * one of the texts this code ever created (`missingTriggers` below, which checkpoints.ts runs), so a
 * guard swapped for a harmless trigger of the same name is named like a dropped one.
 */
import type Database from 'better-sqlite3';

/**
 * The one UPDATE the ledger allows (format 4): retention erasing a payload. It
 * sets `detail` to 'null' and `erased_at` to a time, on a row of the payload-hash
 * rule whose payload is still there, and changes nothing else. Any other UPDATE
 * is refused, as before format 4.
 */
const ERASE_ONLY_WHEN = `NOT (
  OLD.payload_hash IS NOT NULL AND OLD.erased_at IS NULL
  AND typeof(NEW.erased_at) = 'integer' AND NEW.detail = 'null'
  AND NEW.seq IS OLD.seq AND NEW.id IS OLD.id AND NEW.time IS OLD.time AND NEW.request_id IS OLD.request_id
  AND NEW.event IS OLD.event AND NEW.faculty IS OLD.faculty AND NEW.origin IS OLD.origin AND NEW.tab_id IS OLD.tab_id
  AND NEW.frame_id IS OLD.frame_id AND NEW.document_id IS OLD.document_id AND NEW.tool_name IS OLD.tool_name
  AND NEW.descriptor_hash IS OLD.descriptor_hash AND NEW.arguments_hash IS OLD.arguments_hash AND NEW.actor IS OLD.actor
  AND NEW.prev_hash IS OLD.prev_hash AND NEW.hash IS OLD.hash AND NEW.operation IS OLD.operation
  AND NEW.subject_hash IS OLD.subject_hash AND NEW.payload_hash IS OLD.payload_hash)`;

export const NO_UPDATE_TRIGGER_4_SQL = `
CREATE TRIGGER IF NOT EXISTS receipts_no_update BEFORE UPDATE ON receipts
WHEN ${ERASE_ONLY_WHEN}
BEGIN SELECT RAISE(ABORT, 'receipts are append-only: UPDATE refused (only retention may erase a payload)'); END;
`;

/** The guard triggers of a new file (format 4). */
export const TRIGGERS_SQL = `${NO_UPDATE_TRIGGER_4_SQL}
CREATE TRIGGER IF NOT EXISTS receipts_no_delete BEFORE DELETE ON receipts
BEGIN SELECT RAISE(ABORT, 'receipts are append-only: DELETE refused'); END;
CREATE TRIGGER IF NOT EXISTS receipts_append_next BEFORE INSERT ON receipts
WHEN NEW.seq IS NOT (SELECT COALESCE(MAX(seq), 0) + 1 FROM receipts)
BEGIN SELECT RAISE(ABORT, 'receipts are append-only: INSERT must take the next seq'); END;
`;


/** The UPDATE guard of formats 1 to 3 (before retention), still in a file of those formats opened read-only. */
const NO_UPDATE_TRIGGER_1_SQL = `
CREATE TRIGGER IF NOT EXISTS receipts_no_update BEFORE UPDATE ON receipts
BEGIN SELECT RAISE(ABORT, 'receipts are append-only: UPDATE refused'); END;
`;

/** The guard triggers a ledger must have; `verify` fails when one is missing or altered. */
export const GUARD_TRIGGERS = ['receipts_no_update', 'receipts_no_delete', 'receipts_append_next'] as const;

/** A trigger's SQL as compared: SQLite keeps `CREATE TRIGGER <name> …` without IF NOT EXISTS or the final `;`. */
function normalSql(sql: string): string {
  return sql.replace(/\s+/g, ' ').replace(/^CREATE TRIGGER IF NOT EXISTS /i, 'CREATE TRIGGER ').replace(/\s*;\s*$/, '').trim();
}

/** Every text each guard has had, normalised (normalSql), by name. */
const KNOWN_GUARD_SQL: ReadonlyMap<string, ReadonlySet<string>> = (() => {
  const statements = `${TRIGGERS_SQL}${NO_UPDATE_TRIGGER_1_SQL}`.split(/(?=CREATE TRIGGER)/).map((t) => normalSql(t)).filter((t) => t.startsWith('CREATE TRIGGER'));
  const known = new Map<string, Set<string>>();
  for (const s of statements) {
    const name = s.split(' ')[2] as string;
    known.set(name, (known.get(name) ?? new Set()).add(s));
  }
  return known;
})();

/** The guard triggers that are missing, or whose SQL is none this code ever created (someone replaced them). */
export function missingTriggers(db: Database.Database): string[] {
  const rows = db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'receipts'").raw().all() as Array<[string, string | null]>;
  const have = new Map(rows.map(([name, sql]) => [name, sql === null ? '' : normalSql(sql)]));
  return GUARD_TRIGGERS.filter((t) => {
    const sql = have.get(t);
    return sql === undefined || !(KNOWN_GUARD_SQL.get(t)?.has(sql) ?? false);
  });
}
