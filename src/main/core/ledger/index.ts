/**
 * The receipt ledger: an append-only, hash-chained record of every step of
 * every request (src/shared/receipt.ts), kept in SQLite through better-sqlite3.
 *
 * - `append` commits at once (WAL, synchronous=NORMAL: it survives a crash of
 *   the console when it returns) and the write-ahead log is fsynced in the
 *   background, off the event loop; `durable()` resolves when every receipt
 *   appended so far survives a power loss too (durability.ts).
 * - Each receipt is chained to the previous one (chain.ts); `verify` recomputes
 *   the whole chain and names the first broken link; `checkpoint` +
 *   `verifyAgainst` detect a cut-off tail or a rewritten history.
 * - There is no update or delete path here, and triggers refuse both (schema.ts).
 * See docs/ledger.md.
 *
 * The reads by filter are query.ts, the restart-recovery reads recovery-queries.ts,
 * the chain check verify.ts; this class opens the file, appends, and delegates.
 */
import { randomUUID } from 'node:crypto';
import type { Writable } from 'node:stream';
import type Database from 'better-sqlite3';
import { isOutcomeEvent, type Checkpoint, type Receipt, type ReceiptInput, type ReceiptPage, type ReceiptQuery, type VerifyReport } from '../../../shared/receipt';
import type { SignedCheckpoint } from '../../../shared/checkpoint';
import { MAX_UNSIGNED_TAIL, newestCheckpoint, signingAtOpen, type CheckpointReads, type LedgerSigningKey } from './checkpoints';
import { openDatabase, type OpenDatabaseOptions } from './sqlite';
import { prepareSchema } from './schema';
import { WalDurability, type DurabilityCounts, type SyncFd } from './durability';
import { exportJsonLines } from './export';
import { exportFiltered, filterSql, type ExportOptions } from './filtered-export';
import { againstCheckpoint, withCheckpointChecks, type WitnessInput } from './report';
import { LedgerStateError, type LedgerOptions } from './options';
import {
  GENESIS_PREV_HASH, ROW_COLUMNS_SQL, SHA256_SQL_FUNCTION, canonicalReceiptText, chainHash, columnSql, hashInputSql, payloadCheckSql,
  payloadHashOf, rowColumnsSql, sha256Hex, type RawRow,
} from './chain';
import { LedgerInputError, normaliseInput, type NormalisedInput } from './input';
import { rowToReceipt, runQuery, type QueryColumns } from './query';
import * as recovery from './recovery-queries';
import { RequestIndexReader, RequestIndexWriter, type IndexedReceipt } from './requests';
import type { RequestFilter, RequestPage, RequestQuery } from '../../../shared/request-summary';
import { ChainVerifier, fileIdentity, scanSql, type VerifyAsyncOptions, type VerifyOptions } from './verify';

export { OUTCOME_EVENTS } from '../../../shared/receipt';
export { LedgerInputError, OPERATION_RE, boundedDetail, TRUNCATION_KEY, MAX_FIELD_CHARS } from './input';
export { LedgerFormatError, LEDGER_FORMAT } from './schema';
export { LedgerDurabilityError, type DurabilityCounts, type SyncFd } from './durability';
export { GENESIS_PREV_HASH, CHAINED_FIELDS, canonicalReceiptText, chainHash } from './chain';
export { openDatabase, NativeBindingMissingError } from './sqlite';
export {
  LedgerSigningKey, MAX_UNSIGNED_TAIL, GUARD_TRIGGERS, checkpointSignatureProblem, keyIdOf, type LedgerProblem,
} from './checkpoints';
export { DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT } from './query';
import { erasePayloadsIn } from './retention';
export { DEFAULT_REQUEST_PAGE, MAX_REQUEST_PAGE, MAX_REQUEST_TEXT } from './requests';
export { EXPORT_WINDOW, CSV_COLUMNS, csvField, type ExportOptions } from './filtered-export';
export { OPEN_EVENTS, RECOVERY_LOOKBACK, MAX_RECOVERY_LOOKBACK, RECOVERY_SQL } from './recovery-queries';
export {
  PARALLEL_VERIFY_MIN_ROWS, PARALLEL_VERIFY_RANGE_ROWS, MAX_VERIFY_THREADS, VERIFY_CHUNK,
  type VerifyOptions, type ParallelVerifyOptions, type VerifyStats, type VerifyAsyncOptions,
} from './verify';

export type { LedgerOptions } from './options';
export { LedgerStateError } from './options';
export type { WitnessInput } from './report';

/** Receipts erased per transaction by `erasePayloads` (a few ms each; the event loop runs between them). */
export const ERASE_BATCH = 2_000;

/**
 * The receipt ledger. One instance per database file and process is the normal
 * case; several connections to one file stay consistent because each append
 * reads the chain head inside its own write transaction.
 */
export class Ledger {
  readonly file: string;
  readonly readonly: boolean;
  /**
   * Format of the file as opened: LEDGER_FORMAT, or 1 for a format-1 file
   * opened read-only (not migrated), whose missing columns are read as NULL.
   */
  readonly format: number;
  /** SQL for the columns queries read (query.ts). */
  private readonly cols: QueryColumns;
  /** null when read-only. */
  private readonly insert: Database.Statement | null;
  private db: Database.Database | null;
  private readonly now: () => number;
  private readonly listeners = new Set<(r: Receipt) => void>();
  private readonly queryCache = new Map<string, Database.Statement>();
  private readonly stmts: {
    head: Database.Statement;
    bySeq: Database.Statement;
    chunk: Database.Statement;
    recovery: recovery.RecoveryStatements;
  };
  private readonly appendTx: Database.Transaction<(items: NormalisedInput[]) => Receipt[]>;
  /** The background fsync of the write-ahead log; null when read-only. */
  private readonly durability: WalDurability | null;
  private readonly verifier: ChainVerifier;
  private readonly signingKey: LedgerSigningKey | null;
  private readonly publicKey: string | null;
  private readonly checkpointReads: CheckpointReads;
  private readonly checkpointListeners = new Set<(cp: SignedCheckpoint) => void>();
  /** Set inside the append transaction, handed to listeners after the commit. */
  private signedInTx: SignedCheckpoint | null = null;
  private held: string | null = null;
  private readonly insertCheckpoint: Database.Statement | null;
  private readonly lastSignedStmt: Database.Statement | null;
  /** The request index (requests.ts): null on a file opened read-only below format 3. */
  private readonly requestReader: RequestIndexReader | null;
  private readonly requestWriter: RequestIndexWriter | null;

  /**
   * Open (creating if needed, unless `readonly`) the ledger at `file`; a
   * read-write open migrates an older file to LEDGER_FORMAT (schema.ts).
   * @throws LedgerFormatError for a file that is not a ledger, is from a newer format, or failed to migrate;
   *   NativeBindingMissingError inside Electron without the Electron-ABI binary;
   *   better-sqlite3's SqliteError for I/O errors.
   */
  constructor(file: string, opts: LedgerOptions = {}) {
    this.file = file;
    this.readonly = opts.readonly ?? false;
    this.now = opts.now ?? Date.now;
    const openOpts = { electronAbiDir: opts.electronAbiDir, timeoutMs: opts.timeoutMs };
    const db = openDatabase(file, { readonly: this.readonly, electronAbiDir: opts.electronAbiDir, timeoutMs: opts.timeoutMs });
    try {
      this.format = prepareSchema(db, this.readonly);
    } catch (e) {
      db.close();
      throw e;
    }
    this.db = db;
    this.cols = { rows: rowColumnsSql(this.format), operation: columnSql('operation', this.format), subjectHash: columnSql('subject_hash', this.format) };
    // The payload check of format 4 (chain.ts payloadCheckSql) hashes in SQL through this function.
    db.function(SHA256_SQL_FUNCTION, { deterministic: true }, (text: unknown) => (typeof text === 'string' ? sha256Hex(text) : null));
    const cols = this.cols.rows;
    this.insert = this.readonly ? null : db.prepare(`INSERT INTO receipts (${ROW_COLUMNS_SQL}) VALUES (${ROW_COLUMNS_SQL.replace(/\w+/g, '?')})`);
    this.requestReader = this.format >= 3 ? new RequestIndexReader(db) : null;
    this.requestWriter = this.format >= 3 && !this.readonly ? new RequestIndexWriter(db) : null;
    this.stmts = {
      head: db.prepare('SELECT seq, hash FROM receipts ORDER BY seq DESC LIMIT 1').raw(),
      bySeq: db.prepare(`SELECT ${cols} FROM receipts WHERE seq = ?`).raw(),
      chunk: db.prepare(`SELECT ${cols} FROM receipts WHERE seq > ? AND seq <= ? ORDER BY seq LIMIT ?`).raw(),
      recovery: recovery.prepareRecoveryStatements(db, cols),
    };
    this.verifier = new ChainVerifier(db, {
      open: () => this.open(),
      bySeq: this.stmts.bySeq,
      scanSql: scanSql(hashInputSql(this.format), payloadCheckSql(this.format)),
      identity: fileIdentity(file),
      openOpts,
    });
    this.durability = this.readonly ? null : new WalDurability(file, opts.syncFd, String(db.pragma('journal_mode', { simple: true })).toLowerCase() === 'wal');
    this.signingKey = this.readonly ? null : (opts.signingKey ?? null);
    this.publicKey = opts.signingKey?.publicKey ?? opts.publicKey ?? null;
    const hasTable = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'checkpoints'").get() !== undefined;
    this.checkpointReads = { db, hasTable };
    this.insertCheckpoint = hasTable && !this.readonly
      ? db.prepare('INSERT OR IGNORE INTO checkpoints (count, head_hash, time, key_id, public_key, signature) VALUES (?, ?, ?, ?, ?, ?)')
      : null;
    this.lastSignedStmt = hasTable ? db.prepare('SELECT COALESCE(MAX(count), 0) FROM checkpoints').pluck() : null;
    this.appendTx = db.transaction((items: NormalisedInput[]) => {
      const insert = this.insert;
      if (!insert) throw new LedgerStateError('the ledger was opened read-only');
      const head = this.stmts.head.get() as [number, string] | undefined;
      let seq = head ? head[0] : 0;
      let prevHash = head ? head[1] : GENESIS_PREV_HASH;
      const out: Receipt[] = [];
      const indexed: IndexedReceipt[] = [];
      for (const n of items) {
        seq += 1;
        const time = this.now();
        if (!Number.isSafeInteger(time)) throw new LedgerInputError('clock returned a non-integer time');
        const row = [
          seq, randomUUID(), time, n.requestId, n.event, n.faculty, n.origin, n.tabId, n.frameId, n.documentId,
          n.toolName, n.descriptorHash, n.argumentsHash, n.actorJson, n.detailJson, prevHash, '', n.operation, n.subjectHash,
          payloadHashOf(n.detailJson), null,
        ] as RawRow;
        row[16] = chainHash(prevHash, canonicalReceiptText(row));
        insert.run(row);
        out.push(rowToReceipt(row));
        indexed.push({ seq, time, requestId: n.requestId, event: n.event, faculty: n.faculty, origin: n.origin, tabId: n.tabId, toolName: n.toolName, operation: n.operation, actorJson: n.actorJson, detailJson: n.detailJson });
        prevHash = row[16];
      }
      // The request index, in the same commit as its receipts (docs/timeline.md).
      this.requestWriter?.apply(indexed);
      // Signed checkpoint in the same commit (docs/ledger.md, "Signed checkpoints"): at every
      // outcome, and before the unsigned tail would exceed its bound. Atomic with the
      // receipts, so even a crash never leaves an outcome unsigned.
      if (this.signingKey && this.held === null && this.lastSignedStmt) {
        const lastSigned = this.lastSignedStmt.get() as number;
        if (out.some((r) => isOutcomeEvent(r.event)) || seq - lastSigned > MAX_UNSIGNED_TAIL) {
          this.signedInTx = this.storeCheckpoint(this.signingKey.sign({ count: seq, headHash: prevHash, time: this.now() }));
        }
      }
      return out;
    });
    if (this.signingKey) this.openSigning(opts.signingKeyCreated === true);
  }

  private storeCheckpoint(cp: SignedCheckpoint): SignedCheckpoint {
    this.insertCheckpoint?.run(cp.count, cp.headHash, cp.time, cp.keyId, cp.publicKey, cp.signature);
    return cp;
  }

  /**
   * At a read-write open with a key: adopt a ledger that has never been signed when the
   * key is new, else check the newest checkpoint and the tail; when that fails, hold
   * signing (the console never signs over a tampered file) and say why.
   */
  private openSigning(keyCreated: boolean): void {
    const db = this.open();
    db.transaction(() => {
      this.held = signingAtOpen(db, this.checkpointReads, this.signingKey as LedgerSigningKey, this.head(), keyCreated, this.now, (cp) => this.storeCheckpoint(cp));
    }).immediate();
  }

  /**
   * Signing state, for the console and its verify report: the key id and public key
   * (raw Ed25519, base64), and why signing stopped (null: it signs). null without a key.
   */
  signing(): { keyId: string; publicKey: string; held: string | null } | null {
    return this.signingKey ? { keyId: this.signingKey.keyId, publicKey: this.signingKey.publicKey, held: this.held } : null;
  }

  /** The newest signed checkpoint stored in the file, or null. */
  latestSignedCheckpoint(): SignedCheckpoint | null {
    this.open();
    return newestCheckpoint(this.checkpointReads);
  }

  /**
   * Subscribe to checkpoints as they are signed (after their commit), e.g. to hand them to
   * the extension's witness. A throwing listener is ignored.
   * @returns the unsubscribe function.
   */
  onCheckpoint(listener: (cp: SignedCheckpoint) => void): () => void {
    this.checkpointListeners.add(listener);
    return () => {
      this.checkpointListeners.delete(listener);
    };
  }

  /** The chain report completed with the checks of checkpoints.ts (report.ts). */
  private withCheckpoints(report: VerifyReport, witness: WitnessInput): VerifyReport {
    return withCheckpointChecks(report, {
      head: this.head(),
      reads: this.checkpointReads,
      publicKey: this.publicKey,
      signing: this.signingKey ? { keyId: this.signingKey.keyId, held: this.held } : null,
      witness,
    });
  }

  private open(): Database.Database {
    if (!this.db) throw new LedgerStateError('the ledger is closed');
    return this.db;
  }

  private writable(): void {
    this.open();
    if (this.readonly) throw new LedgerStateError('the ledger was opened read-only');
  }

  /**
   * Append one receipt: validate, redact and bound `detail`, assign seq (next in
   * the chain), id (UUID v4), time (ms since the epoch, UTC), prevHash and hash,
   * and commit. Committed when it returns (it survives a crash of the console and
   * every reader sees it); on disk against a power loss once `durable()` resolves.
   * Listeners registered with `onAppend` are then called synchronously.
   * @returns the stored receipt, exactly as `query` will return it.
   * @throws LedgerInputError for bad input (see normaliseInput in input.ts);
   *   LedgerStateError when closed or read-only; LedgerDurabilityError once an fsync
   *   of the log has failed; SqliteError when the disk write fails (nothing is stored then).
   */
  append(input: ReceiptInput): Receipt {
    return this.appendBatch([input])[0] as Receipt;
  }

  /**
   * Append several receipts in one transaction (one commit): all are stored or none.
   * Committed when it returns, like `append`.
   * @returns the stored receipts, in order.
   * @throws as `append`; nothing is stored when any input is invalid.
   */
  appendBatch(inputs: readonly ReceiptInput[]): Receipt[] {
    this.writable();
    const failed = this.durability?.failed;
    if (failed) throw failed;
    if (!Array.isArray(inputs)) throw new LedgerInputError('appendBatch expects an array of receipt inputs');
    const normalised = inputs.map((i) => normaliseInput(i));
    if (normalised.length === 0) return [];
    let stored: Receipt[];
    this.signedInTx = null;
    try {
      stored = this.appendTx.immediate(normalised);
    } catch (e) {
      this.signedInTx = null;
      throw e;
    }
    const signed = this.signedInTx as SignedCheckpoint | null;
    this.signedInTx = null;
    this.durability?.committed();
    for (const r of stored) {
      for (const l of this.listeners) {
        try {
          l(r);
        } catch {
          // A UI listener must never make a durable append look failed.
        }
      }
    }
    if (signed) {
      for (const l of this.checkpointListeners) {
        try {
          l(signed);
        } catch {
          // Handing a checkpoint to the witness must never make the append look failed.
        }
      }
    }
    return stored;
  }

  /**
   * Resolves when every receipt appended before this call is on disk (its
   * write-ahead log frames fsynced, off the event loop; durability.ts). The
   * broker awaits it before anything leaves the console (docs/ledger.md,
   * "Durability"). At once for a read-only ledger or when nothing is pending.
   * @throws (rejects) LedgerDurabilityError when an fsync failed; LedgerStateError when closed.
   */
  durable(): Promise<void> {
    if (!this.db) return Promise.reject(new LedgerStateError('the ledger is closed'));
    return this.durability ? this.durability.durable() : Promise.resolve();
  }

  /** Commits, durable commits and fsyncs since this Ledger was opened (the agent benchmark reads them, test/bench). */
  durabilityCounts(): DurabilityCounts {
    return this.durability ? this.durability.counts() : { commits: 0, durableCommits: 0, fsyncs: 0 };
  }

  /**
   * Subscribe to receipts after they are committed (for the UI timeline).
   * @returns the unsubscribe function.
   */
  onAppend(listener: (receipt: Receipt) => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /** The stored receipt at `seq`, or null. */
  get(seq: number): Receipt | null {
    this.open();
    const row = this.stmts.bySeq.get(seq) as RawRow | undefined;
    return row ? rowToReceipt(row) : null;
  }

  /** Number of receipts (= seq of the newest) and the newest hash (GENESIS_PREV_HASH when empty). */
  head(): { count: number; headHash: string } {
    this.open();
    const h = this.stmts.head.get() as [number, string] | undefined;
    return h ? { count: h[0], headHash: h[1] } : { count: 0, headHash: GENESIS_PREV_HASH };
  }

  /**
   * One page of receipts, newest first (descending time, then descending seq for
   * equal times), matching every filter given:
   * `from`/`to` inclusive bounds on `time` (ms since the epoch); `origin`,
   * `toolName`, `requestId`, `id` (one receipt), `operation`, `subjectHash` exact; `event` one of RECEIPT_EVENTS; `outcome` one
   * of OUTCOME_EVENTS (receipts recording that outcome; with `event` too, both must agree).
   * `limit` 1..MAX_PAGE_LIMIT (default DEFAULT_PAGE_LIMIT). `cursor` continues
   * from a previous page's `nextCursor`, which is null on the last page.
   * Pages are stable while receipts are appended: a cursor names the (time, seq)
   * of the last receipt shown, and newer receipts sort above it. Each filter has
   * an index led by it and followed by (time, seq), so a page costs one index walk (schema.ts).
   * @throws LedgerInputError for a bad filter, limit or cursor.
   */
  query(q: ReceiptQuery = {}): ReceiptPage {
    return runQuery(this.open(), this.cols, this.queryCache, q);
  }

  /**
   * One page of the request timeline (docs/timeline.md): requests (every receipt sharing a request
   * id, folded into one RequestSummary) matching every filter of `q` (RequestFilter), newest first by
   * their first receipt's (time, seq). `cursor` continues with older ones (`nextCursor`, null on the
   * last page); `after` (a page's `newestCursor`) asks instead for those that changed since, by
   * receipt seq: the live tail (`more` when cut short). `limit` 1..MAX_REQUEST_PAGE (default
   * DEFAULT_REQUEST_PAGE). Never OFFSET, never a scan of the receipts (how: requests.ts).
   * @throws LedgerInputError for a bad filter, limit or cursor; LedgerStateError for a file opened
   *   read-only below format 3 (it has no request index).
   */
  queryRequests(q: RequestQuery = {}): RequestPage {
    return this.requests().page(q);
  }

  /** How many requests match `f` (the filters of queryRequests), on the request index. @throws as queryRequests. */
  countRequests(f: RequestFilter = {}): number {
    return this.requests().count(f);
  }

  /** countRequests, and `through`: the newest receipt's seq when counted (ConsoleApi.countRequests). @throws as queryRequests. */
  countRequestsAt(f: RequestFilter = {}): { count: number; through: number } {
    return this.requests().countAt(f);
  }

  /** EXPLAIN QUERY PLAN of a request page, for tests that check no page scans the receipts. */
  requestPlan(q: RequestQuery = {}): string[] {
    return this.requests().plan(q);
  }

  private requests(): RequestIndexReader {
    this.open();
    if (!this.requestReader) throw new LedgerStateError(`this ledger (format ${this.format}, opened read-only) has no request index: open it read-write once to migrate it`);
    return this.requestReader;
  }

  /**
   * Requests still waiting for an outcome, for restart recovery
   * (src/main/core/broker/recovery.ts): among the `limit` newest requests (by
   * their `requested` receipt, which the broker writes first for every request),
   * those whose newest receipt (highest seq) is one of OPEN_EVENTS (requested,
   * validated, approval-shown, approved, dispatched). Returns that newest
   * receipt of each, oldest first.
   *
   * Bounded: at most `limit` index lookups, never a table scan (RECOVERY_SQL;
   * test/unit/ledger-recovery.test.ts reads its query plan). A request opened
   * before the `limit` newest ones is not seen; since recovery runs at every
   * start, that needs `limit` newer requests in one session while it stays open.
   * @param limit 1..MAX_RECOVERY_LOOKBACK, default RECOVERY_LOOKBACK.
   * @throws LedgerInputError for a bad limit.
   */
  openRequests(limit: number = recovery.RECOVERY_LOOKBACK): Receipt[] {
    this.open();
    return recovery.openRequests(this.stmts.recovery, limit);
  }

  /**
   * `outcome-unknown` receipts that still stand, for the outcome-unknown blocks
   * of restart recovery: among the `limit` newest outcome-unknown receipts,
   * those with no later outcome receipt (OUTCOME_EVENTS) of the same request
   * and no later `discovered` receipt for the same tab (a discovery is the
   * agent looking at the page again, which lifts the block). Oldest first.
   * A receipt without a tabId is never lifted by a discovery.
   *
   * Bounded like `openRequests`: `limit` rows of receipts_event, each checked by
   * a seek in receipts_request and in the partial index receipts_discovered.
   * @param limit 1..MAX_RECOVERY_LOOKBACK, default RECOVERY_LOOKBACK.
   * @throws LedgerInputError for a bad limit.
   */
  unresolvedOutcomeUnknowns(limit: number = recovery.RECOVERY_LOOKBACK): Receipt[] {
    this.open();
    return recovery.unresolvedOutcomeUnknowns(this.stmts.recovery, limit);
  }

  /**
   * Recompute the whole chain, oldest first. For each row it checks, in order:
   * that seq is the next one (a gap names the missing seq), that `prevHash` is the
   * previous row's hash (the genesis value for seq 1), that `actor` and `detail`
   * are JSON, and that `hash` = SHA-256(prevHash || canonical(row)). Then it checks
   * that no tail was deleted behind SQLite's back (sqlite_sequence). Stops at the
   * first broken link.
   *
   * Speed: SQLite builds each row's hash input (HASH_INPUT_SQL) and JS only hashes
   * and compares; any row that does not pass that way is re-checked field by field
   * in JS (`checkRow`, the authority), which also words the reason. From
   * PARALLEL_VERIFY_MIN_ROWS receipts, worker threads check ranges of the chain
   * at the same time and this thread joins them (parallel.ts; `opts.parallel`);
   * the report is the same either way. About 3.5 µs of CPU per receipt on a slow
   * machine, spread over its cores: a second or two at a million; prefer
   * `verifyAsync` on the Electron main thread.
   * @returns `{ok, count, headHash}`; when broken, `firstBroken: {seq, id?, reason}`
   *   (the lowest broken seq) and `count`/`headHash` describe the intact prefix before it.
   */
  verify(opts: VerifyOptions & { witness?: WitnessInput } = {}): VerifyReport {
    return this.withCheckpoints(this.verifier.verify(opts), opts.witness);
  }

  /**
   * `verify` without blocking the event loop for long: worker threads check the
   * ranges (from PARALLEL_VERIFY_MIN_ROWS receipts) while this thread only joins
   * their results; on a smaller ledger, or when no worker can run, one chunk of
   * VERIFY_CHUNK receipts per turn (a few tens of ms), so the console's UI and
   * IPC stay responsive on a large ledger. Receipts appended meanwhile are not
   * covered (it verifies up to the head it found when it started).
   * @returns the same report as `verify`.
   * @throws the signal's reason when aborted; LedgerStateError when closed meanwhile.
   */
  async verifyAsync(opts: VerifyAsyncOptions & { witness?: WitnessInput } = {}): Promise<VerifyReport> {
    const report = await this.verifier.verifyAsync(opts);
    return this.withCheckpoints(report, opts.witness);
  }

  /**
   * A checkpoint of the current head: `{count, headHash, time}` (time in ms since
   * the epoch). Store or export it somewhere the ledger file does not live
   * (a backup, another machine, a printout); `verifyAgainst` then detects a tail
   * cut off after it and any rewrite of the history up to it.
   */
  checkpoint(): Checkpoint {
    const h = this.head();
    return { count: h.count, headHash: h.headHash, time: this.now() };
  }

  /**
   * `verify`, plus the checks against an earlier checkpoint: the ledger still
   * holds at least `checkpoint.count` receipts, and the receipt at that seq has
   * hash `checkpoint.headHash` (so the history up to it was not rewritten, even
   * with recomputed hashes).
   * `opts` as for `verify`.
   * @throws LedgerInputError when `checkpoint` is not a Checkpoint.
   */
  verifyAgainst(checkpoint: Checkpoint, opts: VerifyOptions = {}): VerifyReport {
    if (
      !checkpoint || typeof checkpoint !== 'object' || !Number.isSafeInteger(checkpoint.count) || checkpoint.count < 0 ||
      typeof checkpoint.headHash !== 'string' || !/^[0-9a-f]{64}$/.test(checkpoint.headHash)
    ) {
      throw new LedgerInputError('checkpoint must be {count: integer >= 0, headHash: 64 hex, time}');
    }
    const report = this.verify(opts);
    if (!report.ok || report.count < checkpoint.count) return againstCheckpoint(report, checkpoint, null);
    return againstCheckpoint(report, checkpoint, checkpoint.count === 0 ? GENESIS_PREV_HASH : (this.get(checkpoint.count)?.hash ?? null));
  }

  /**
   * Write every receipt, oldest first, as JSON Lines (one Receipt object per
   * line, UTF-8, "\n" after each) to a file path (created or replaced) or a
   * writable stream (left open); export.ts.
   * @returns the number of receipts written and the hash of the last one.
   */
  async export(target: string | Writable): Promise<{ count: number; headHash: string }> {
    this.open();
    return exportJsonLines(this.head(), (after, end) => {
      this.open();
      return this.stmts.chunk.all(after, end, 1000) as RawRow[];
    }, target);
  }

  /**
   * The filtered export (filtered-export.ts; docs/ledger.md, "Export"): the receipts
   * matching `opts.filter` ({} or absent: all), oldest first, as JSON Lines (a header
   * line with the filter, the head and the newest signed checkpoint, then one Receipt
   * per line) or CSV, to a file path (written as `.part`, renamed when complete) or a
   * writable stream. Walks seq windows and yields between them; `onProgress` and
   * `signal` as in ExportOptions. Covers the receipts present when it started.
   * @returns rows written and the head covered.
   * @throws LedgerInputError for a bad filter or format; the signal's reason when cancelled;
   *   LedgerStateError when closed (or closed meanwhile).
   */
  async exportFiltered(target: string | Writable, opts: ExportOptions = {}): Promise<{ rows: number; head: { count: number; headHash: string } }> {
    const db = this.open();
    const filter = opts.filter ?? {};
    const { where, params } = filterSql(filter);
    const stmt = db.prepare(
      `SELECT ${this.cols.rows} FROM receipts WHERE seq > @after AND seq <= @end${where.map((w) => ` AND ${w}`).join('')} ORDER BY seq`,
    ).raw();
    // Head and newest checkpoint in one snapshot: export-verify.ts checks the unsigned-tail rule between them.
    const { head, checkpoint } = db.transaction(() => ({ head: this.head(), checkpoint: this.latestSignedCheckpoint() }))();
    return exportFiltered({
      head,
      header: { version: 1, exportedAt: this.now(), checkpoint },
      window: (after, end) => {
        this.open();
        return stmt.all({ ...params, after, end }) as RawRow[];
      },
    }, filter, target, opts);
  }

  /**
   * Retention (docs/ledger.md, "Retention"; the work: retention.ts): erase the payload of every
   * receipt of the payload-hash rule (format 4) with `time < before`, in batches (default ERASE_BATCH);
   * rows keep every other field and their hashes, `erasedAt` is `now` (default the ledger's clock).
   * Receipts written before format 4 hash their detail itself: kept, counted in `oldRuleKept`.
   * @param opts.before ms since the epoch (exclusive).
   * @returns `{erased, oldRuleKept}`: payloads erased now, and older-rule receipts before `before` left as they are.
   * @throws LedgerStateError when closed or read-only (or closed meanwhile); LedgerInputError for a bad `before`; the signal's reason when aborted (committed batches stay erased).
   */
  async erasePayloads(opts: { before: number; now?: number; batch?: number; signal?: AbortSignal }): Promise<{ erased: number; oldRuleKept: number }> {
    this.writable();
    if (!Number.isSafeInteger(opts.before)) throw new LedgerInputError('erasePayloads: before must be an integer (ms since the epoch)');
    const db = this.open();
    if (this.format < 4) return { erased: 0, oldRuleKept: 0 };
    return erasePayloadsIn(db, opts, { batch: opts.batch ?? ERASE_BATCH, now: () => opts.now ?? this.now(), alive: () => void this.open(), committed: () => this.durability?.committed() });
  }

  /** Close the database; later calls throw LedgerStateError. Idempotent. */
  close(): void {
    this.listeners.clear();
    this.checkpointListeners.clear();
    this.queryCache.clear();
    this.requestReader?.clear();
    if (this.db) {
      this.durability?.close();
      this.db.close();
      this.db = null;
    }
  }
}

