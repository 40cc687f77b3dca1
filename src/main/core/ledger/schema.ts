/**
 * The ledger's SQLite schema, and opening a file as a ledger (fail closed on a
 * file that is not one, or is from a newer format).
 *
 * Append-only is enforced twice: the code has no UPDATE or DELETE statement on
 * `receipts`, and triggers refuse them (and any INSERT that is not exactly the
 * next seq) for anyone using SQL. Triggers stop mistakes, not an attacker with
 * the file: such a person can drop them, which is what the hash chain and
 * signed checkpoints are for. A dropped trigger is never recreated: `verify` fails
 * and names it (checkpoints.ts).
 */
import type Database from 'better-sqlite3';
import { CHECKPOINTS_SQL } from './checkpoints';
import { NO_UPDATE_TRIGGER_4_SQL, TRIGGERS_SQL, missingTriggers } from './guards';
import { REQUESTS_SQL, buildRequestIndex, endOpenRequests } from './requests';

/** `PRAGMA application_id` of a ledger file: "ECHO" in ASCII. */
export const LEDGER_APPLICATION_ID = 0x4543484f;
/**
 * `PRAGMA user_version`: the schema format this code writes. It reads formats
 * 1 to 5; a read-write open migrates an older file step by step (MIGRATIONS).
 * - 1: the first schema.
 * - 2: adds `operation` and `subject_hash` (receipt `operation`, `subjectHash`)
 *   and three partial indexes. Format-1 rows hash as before (chain.ts).
 * - 3: adds the request index, the `requests` table (requests.ts; docs/timeline.md).
 *   No receipt changes, so every hash stays as it was. migrate2To3.
 * - 4: retention (issue 12 item 3): adds `payload_hash` and `erased_at`; rows
 *   written from then on hash their payload apart (chain.ts), so retention can
 *   erase it; older rows keep their rule. migrate3To4.
 * - 5: a discovery ends (`discovered` is followed by `succeeded`; `outcomeOf`,
 *   src/shared/receipt.ts): the request index's rows of older discoveries, left
 *   open, get their outcome. No receipt is written or changed. migrate4To5.
 */
export const LEDGER_FORMAT = 5;

// The guard triggers (TRIGGERS_SQL, NO_UPDATE_TRIGGER_4_SQL) live in guards.ts, which verify
// (checkpoints.ts) also reads to check that each is there with its own SQL.
export { TRIGGERS_SQL } from './guards';

// Indexes serve `query`'s order, (time DESC, seq DESC): each filter column is
// followed by (time, seq), so a filtered page, with or without a time range, is
// one backward walk of one index with no sort. The other filter columns ride
// along at the end, so a second equality filter (origin + event, say) is checked
// inside the index and only matching rows are read from the table.
// (SQLite ends every index with the rowid, which is seq, so (time) alone already orders by (time, seq).)
// AUTOINCREMENT keeps the highest seq ever issued in sqlite_sequence, which lets
// verify notice a deleted tail even without a checkpoint (defence in depth only:
// sqlite_sequence is an ordinary table an attacker can edit too).
const SCHEMA_SQL = `
CREATE TABLE receipts (
  seq             INTEGER PRIMARY KEY AUTOINCREMENT,
  id              TEXT    NOT NULL UNIQUE,
  time            INTEGER NOT NULL,
  request_id      TEXT,
  event           TEXT    NOT NULL,
  faculty         TEXT    NOT NULL,
  origin          TEXT,
  tab_id          INTEGER,
  frame_id        INTEGER,
  document_id     TEXT,
  tool_name       TEXT,
  descriptor_hash TEXT,
  arguments_hash  TEXT,
  actor           TEXT    NOT NULL,
  detail          TEXT    NOT NULL,
  prev_hash       TEXT    NOT NULL,
  hash            TEXT    NOT NULL,
  operation       TEXT,
  subject_hash    TEXT,
  payload_hash    TEXT,
  erased_at       INTEGER
) STRICT;
CREATE INDEX receipts_time ON receipts(time);
CREATE INDEX receipts_origin ON receipts(origin, time, seq, event, tool_name);
CREATE INDEX receipts_tool ON receipts(tool_name, time, seq, event, origin);
CREATE INDEX receipts_event ON receipts(event, time, seq, origin, tool_name);
CREATE INDEX receipts_request ON receipts(request_id, time);
`;

// Format 2. The new columns come last, as ALTER TABLE ADD COLUMN places them, so
// a new ledger and a migrated one have the same table. The indexes are partial:
// a row that does not match the WHERE costs no index write, so receipts without
// an operation or subject (every console event, every format-1 row) append as
// cheaply as before.
// - operation / subject: `query` filters by them (with or without a time range)
//   as one backward walk, like the other filters.
// - discovered: restart recovery (broker/recovery.ts) asks "is there a
//   `discovered` receipt for tab T after seq S?" without walking every discovery.
const INDEXES_2_SQL = `
CREATE INDEX IF NOT EXISTS receipts_operation ON receipts(operation, time, seq) WHERE operation IS NOT NULL;
CREATE INDEX IF NOT EXISTS receipts_subject ON receipts(subject_hash, time, seq) WHERE subject_hash IS NOT NULL;
CREATE INDEX IF NOT EXISTS receipts_discovered ON receipts(tab_id, seq) WHERE event = 'discovered';
`;

/**
 * Format 1 → 2, run inside one IMMEDIATE transaction with `user_version = 2`,
 * so a crash leaves either format 1 untouched or format 2 complete. ADD COLUMN
 * only edits the table's definition (existing rows read the new columns as
 * NULL, nothing is rewritten); the partial indexes read the table once, and
 * hold no entry for any format-1 row except its `discovered` receipts.
 */
export const MIGRATE_1_TO_2_SQL = `
ALTER TABLE receipts ADD COLUMN operation TEXT;
ALTER TABLE receipts ADD COLUMN subject_hash TEXT;
${INDEXES_2_SQL}`;

// Format 4. Retention finds the payloads to erase by time through a partial index
// that holds only rows whose payload is still there and can be erased: an erased
// row leaves it, and rows of the old rule never enter it.
const INDEXES_4_SQL = `
CREATE INDEX IF NOT EXISTS receipts_payload_kept ON receipts(time) WHERE payload_hash IS NOT NULL AND erased_at IS NULL;
`;

/**
 * Format 3 → 4 (retention and privacy, issue 12 item 3), its own step and
 * transaction. ADD
 * COLUMN rewrites no row, so every older row keeps its hash rule (no payload
 * hash: `detail` inside the hash) and verifies as before. The guard trigger on
 * UPDATE is replaced by the erase-only one, but only when it is there as created:
 * a dropped or swapped guard is never recreated (verify names it).
 */
export function migrate3To4(db: Database.Database): void {
  // Only the columns missing are added (a file whose user_version was set back by hand keeps its own).
  const have = new Set((db.prepare('PRAGMA table_info(receipts)').all() as Array<{ name: string }>).map((c) => c.name));
  if (!have.has('payload_hash')) db.exec('ALTER TABLE receipts ADD COLUMN payload_hash TEXT;');
  if (!have.has('erased_at')) db.exec('ALTER TABLE receipts ADD COLUMN erased_at INTEGER;');
  db.exec(INDEXES_4_SQL);
  // Replaced only when it is the genuine older guard: a swapped one is left for verify to name.
  if (!missingTriggers(db).includes('receipts_no_update')) db.exec(`DROP TRIGGER receipts_no_update; ${NO_UPDATE_TRIGGER_4_SQL}`);
}

/** Thrown when a file is not a ledger this code can open. */
export class LedgerFormatError extends Error {
  readonly code = 'ledger-format';
  constructor(message: string) {
    super(message);
    this.name = 'LedgerFormatError';
  }
}

function hasReceiptsTable(db: Database.Database): boolean {
  return db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'receipts'").get() !== undefined;
}

/**
 * Set the connection's pragmas and create or check the schema.
 * - WAL + synchronous=NORMAL: a commit is written to the operating system
 *   before `append` returns (it survives a crash of the console), the Ledger
 *   fsyncs the log in the background (durability.ts) and the broker awaits that
 *   before any effect; readers never block the writer.
 * - recursive_triggers: makes `INSERT OR REPLACE` fire the delete trigger, so a
 *   REPLACE cannot silently remove a row through a UNIQUE conflict on `id`.
 * - A read-write open never recreates a missing guard trigger (verify reports it), adds
 *   the checkpoints table when missing, and migrates an older format to LEDGER_FORMAT
 *   (one transaction per step).
 * - A read-only open leaves the file as it is, so it may be of an older format.
 * @returns the format of the file as opened: LEDGER_FORMAT, or older when read-only.
 * @throws LedgerFormatError for a non-ledger file, a format newer than LEDGER_FORMAT,
 *   or a migration that failed (rolled back: the file is left at its format).
 */
export function prepareSchema(db: Database.Database, readonly: boolean): number {
  db.pragma('busy_timeout = 5000');
  if (!readonly) {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
  }
  db.pragma('recursive_triggers = ON');
  const appId = db.pragma('application_id', { simple: true }) as number;
  const format = db.pragma('user_version', { simple: true }) as number;
  const exists = hasReceiptsTable(db);
  if (!exists) {
    const empty = (db.prepare('SELECT COUNT(*) AS n FROM sqlite_master').get() as { n: number }).n === 0;
    if (readonly) throw new LedgerFormatError('not a receipt ledger: it has no receipts table');
    if (!empty || appId !== 0) throw new LedgerFormatError('not a receipt ledger: the database holds other tables');
    db.transaction(() => {
      db.exec(SCHEMA_SQL);
      db.exec(INDEXES_2_SQL);
      db.exec(REQUESTS_SQL);
      db.exec(INDEXES_4_SQL);
      db.exec(TRIGGERS_SQL);
      db.exec(CHECKPOINTS_SQL);
      db.pragma(`application_id = ${LEDGER_APPLICATION_ID}`);
      db.pragma(`user_version = ${LEDGER_FORMAT}`);
    }).immediate();
    return LEDGER_FORMAT;
  }
  if (appId !== LEDGER_APPLICATION_ID) throw new LedgerFormatError('not a receipt ledger: wrong application_id');
  if (format > LEDGER_FORMAT) throw new LedgerFormatError(`ledger format ${format} is newer than this console understands (${LEDGER_FORMAT})`);
  if (format < 1) throw new LedgerFormatError(`ledger format ${format} is unknown`);
  if (readonly) return format;
  if (format < LEDGER_FORMAT) migrate(db);
  // Guard triggers are created with the file and never again: a missing one means someone
  // with write access dropped it, and recreating it would hide that. `verify` names it
  // instead (checkpoints.ts, issue 9 item 6). The checkpoints table is added to an older
  // format-2 file (no row changes; a reader of the old code ignores it).
  db.exec(CHECKPOINTS_SQL);
  return LEDGER_FORMAT;
}

/**
 * The migration steps: step `from` brings a file of format `from` to `from + 1`.
 * Each runs in its own IMMEDIATE transaction with its `user_version`, so a crash
 * leaves the file at a complete format.
 */
const MIGRATIONS: ReadonlyArray<{ from: number; run: (db: Database.Database) => void }> = [
  { from: 1, run: (db) => db.exec(MIGRATE_1_TO_2_SQL) },
  { from: 2, run: migrate2To3 },
  { from: 3, run: migrate3To4 },
  { from: 4, run: migrate4To5 },
];

/**
 * Bring an older ledger to LEDGER_FORMAT, one step at a time. The format is read
 * again inside each write transaction: another connection may have migrated the
 * file meanwhile.
 */
function migrate(db: Database.Database): void {
  for (const step of MIGRATIONS) {
    try {
      db.transaction(() => {
        const format = db.pragma('user_version', { simple: true }) as number;
        if (format === step.from) {
          step.run(db);
          db.pragma(`user_version = ${step.from + 1}`);
        }
      }).immediate();
    } catch (e) {
      // Rolled back: the file is still a complete ledger of the step's format.
      throw new LedgerFormatError(`cannot migrate ledger format ${step.from} to ${step.from + 1}: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
}

/**
 * Format 2 → 3 (the request index, docs/timeline.md): create the `requests` table
 * and its indexes, and fold every receipt with a request id into it, oldest first
 * (requests.ts, the same fold as the append). Receipts are read, never written.
 */
export function migrate2To3(db: Database.Database): void {
  db.exec(REQUESTS_SQL);
  buildRequestIndex(db);
}

/**
 * Format 4 → 5 (a discovery ends, docs/timeline.md): the request index's open rows
 * whose receipts hold an ending event (`discovered`) get its outcome (`succeeded`),
 * as the fold now gives them (requests.ts endOpenRequests). Receipts are read,
 * never written: the chain and its signed checkpoints verify as before.
 */
export function migrate4To5(db: Database.Database): void {
  endOpenRequests(db);
}
