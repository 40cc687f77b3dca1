/**
 * Group commit with the fsync off the event loop (issue 9 item 3).
 *
 * The ledger commits every receipt at once with `synchronous = NORMAL` in WAL
 * mode: the frames are handed to the operating system by `write()` before
 * `append` returns, so a commit survives a crash or kill of the console, and
 * readers see it at once. What NORMAL leaves out is the fsync that makes the
 * write-ahead log survive a power loss (sqlite.org/pragma.html#pragma_synchronous,
 * "WAL mode"). This module does that fsync on the write-ahead log file through
 * libuv's thread pool (`fs.fsync`), so the console's event loop — the approval
 * dialog, the receipts view — never waits on the disk; before 2026-12 each
 * receipt's fsync ran synchronously on it, and a flood of agent calls stalled the
 * console's UI for tens of ms at a time (docs/architecture.md, "The flood bench").
 *
 * - Every commit starts (or joins) a background fsync: at most one runs at a
 *   time, and one fsync covers every commit made before it started (group commit).
 * - `durable()` resolves once every commit made before the call is on disk. The
 *   broker awaits it before anything leaves the console (a link request, a
 *   dialog, an answer to the agent): docs/ledger.md, "Durability".
 * - Checkpoints stay SQLite's: with NORMAL, SQLite syncs the log before it
 *   copies frames into the database and syncs the database after, so a frame is
 *   either in the log this module syncs or in the database SQLite synced.
 * - A failed fsync is sticky (after one, Linux may have dropped the dirty pages,
 *   so a later "successful" fsync proves nothing): every waiter and every later
 *   `durable()` rejects with it, and the ledger refuses further appends.
 *
 * The log file is opened lazily (after the first commit it exists) with `r+`,
 * which Windows' FlushFileBuffers needs; the folder is fsynced once, before the
 * first commit is called durable, so the log's directory entry is on disk too. The file is never replaced while the ledger's
 * own connection is open: SQLite deletes the log only when the last connection
 * closes, and `close()` here syncs first.
 */
import { closeSync, fsync, fsyncSync, open, openSync, realpathSync } from 'node:fs';
import { dirname } from 'node:path';

/** How one file descriptor is made durable: `fs.fsync` by default (replaced only by tests, to fail it). */
export type SyncFd = (fd: number, done: (err: NodeJS.ErrnoException | null) => void) => void;

/** Commits and fsyncs since the ledger was opened (the agent bench reads them, test/bench/validity.ts). */
export interface DurabilityCounts {
  /** Commits made. */
  commits: number;
  /** Of them, those known to be on disk (covered by a completed fsync of the log). */
  durableCommits: number;
  /** fsyncs of the log completed (one covers every commit made before it started). */
  fsyncs: number;
}

/** Thrown (as a rejection) by `durable()` and by appends once an fsync of the log has failed. */
export class LedgerDurabilityError extends Error {
  readonly code = 'ledger-not-durable';
  constructor(cause: unknown) {
    super(`the receipt ledger could not be made durable (fsync of its write-ahead log failed: ${cause instanceof Error ? cause.message : String(cause)})`);
    this.name = 'LedgerDurabilityError';
  }
}

interface Waiter {
  upTo: number;
  resolve: () => void;
  reject: (e: Error) => void;
}

/** The background fsync of one ledger's write-ahead log (`<file>-wal`). */
export class WalDurability {
  private fd: number | null = null;
  private dirSynced = false;
  /** The folder of the file `open()` chose (the database's real folder), set with the descriptor. */
  private realDir: string | null = null;
  private commits = 0;
  private durableCommits = 0;
  private fsyncs = 0;
  private running = false;
  private closed = false;
  private failure: LedgerDurabilityError | null = null;
  private waiters: Waiter[] = [];

  /**
   * @param dbFile the database file; its log is `${dbFile}-wal` (SQLite's naming).
   * @param syncFd the fsync to use (default `fs.fsync`).
   * @param walMode whether the database is in WAL mode (else its own file is fsynced).
   */
  constructor(
    private readonly dbFile: string,
    private readonly syncFd: SyncFd = fsync,
    /** The connection's `PRAGMA journal_mode` is `wal` (the Ledger reads it at open). */
    private readonly walMode = true,
  ) {}

  /** The sticky failure, or null while every fsync has succeeded. */
  get failed(): LedgerDurabilityError | null {
    return this.failure;
  }

  /** Note one commit and start a background fsync unless one is running (it will start another when done). */
  committed(): void {
    this.commits += 1;
    this.kick();
  }

  /**
   * Resolves when every commit made before this call is on disk; at once when
   * there is none pending. Never blocks the event loop.
   * @throws (rejects) LedgerDurabilityError after a failed fsync, now or earlier.
   */
  durable(): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.durableCommits >= this.commits) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      this.waiters.push({ upTo: this.commits, resolve, reject });
      this.kick();
    });
  }

  /** Commits, durable commits and fsyncs so far. */
  counts(): DurabilityCounts {
    return { commits: this.commits, durableCommits: this.durableCommits, fsyncs: this.fsyncs };
  }

  /**
   * Before the database closes: fsync what is pending on this thread (once, at
   * close), settle every waiter, and close the log's descriptor (after an fsync
   * still running in the pool, so the number is never reused under it).
   */
  close(): void {
    if (this.closed) return;
    if (!this.failure && this.durableCommits < this.commits) {
      try {
        const fd = this.open();
        fsyncSync(fd);
        this.settle(this.commits);
      } catch (e) {
        this.fail(e);
      }
    }
    this.closed = true;
    this.fail(new Error('the ledger was closed'), false);
    if (!this.running) this.closeFd();
  }

  private kick(): void {
    if (this.running || this.closed || this.failure || this.durableCommits >= this.commits) return;
    this.running = true;
    const upTo = this.commits;
    let fd: number;
    try {
      fd = this.open();
    } catch (e) {
      // Not a failed fsync (e.g. EMFILE): these waiters fail, the next commit or durable() tries again.
      this.running = false;
      this.fail(e, false);
      return;
    }
    const done = (err: NodeJS.ErrnoException | null) => {
      if (err) {
        this.running = false;
        this.fail(err);
        if (this.closed) this.closeFd();
        return;
      }
      this.fsyncs += 1;
      this.running = false;
      this.settle(upTo);
      if (this.closed) this.closeFd();
      else this.kick();
    };
    try {
      this.syncFd(fd, (err) => {
        // The first time, the folder's entry for the log too, before anything is called durable.
        if (err || this.dirSynced) return done(err);
        this.syncDir((dirErr) => {
          if (!dirErr) this.dirSynced = true;
          done(dirErr);
        });
      });
    } catch (e) {
      done(e as NodeJS.ErrnoException);
    }
  }

  /**
   * The file a commit wrote: the write-ahead log in WAL mode (beside the database's
   * real path, where SQLite puts it even when the ledger's path is a symlink), the
   * database file itself when SQLite kept its rollback journal (a file system without
   * shared memory). Opened on first use, synchronously, once per ledger. In WAL mode
   * a missing log is an error, never a reason to fsync something else.
   */
  private open(): number {
    if (this.fd !== null) return this.fd;
    const real = realpathSync(this.dbFile);
    this.fd = openSync(this.walMode ? `${real}-wal` : real, 'r+');
    this.realDir = dirname(real);
    return this.fd;
  }

  /** The folder's entry for the log, once (POSIX; Windows has no directory fsync, and needs none). */
  private syncDir(done: (err: NodeJS.ErrnoException | null) => void): void {
    if (process.platform === 'win32' || this.realDir === null) return done(null);
    // Never throws: it runs in an fs callback, where a throw would be uncaught.
    open(this.realDir, 'r', (err, dfd) => {
      if (err) return done(err);
      fsync(dfd, (syncErr) => {
        try {
          closeSync(dfd);
        } catch {
          /* nothing to keep */
        }
        // A file system that cannot fsync a folder says so (EINVAL and the like): nothing more to do there.
        const unsupported = syncErr && ['EINVAL', 'ENOTSUP', 'EISDIR'].includes(syncErr.code ?? '');
        done(unsupported ? null : syncErr);
      });
    });
  }

  private settle(upTo: number): void {
    this.durableCommits = Math.max(this.durableCommits, upTo);
    const still: Waiter[] = [];
    for (const w of this.waiters) {
      if (w.upTo <= this.durableCommits) w.resolve();
      else still.push(w);
    }
    this.waiters = still;
  }

  /** Reject every waiter; `sticky`: an fsync failed, so every later `durable()` rejects too. */
  private fail(cause: unknown, sticky = true): void {
    const error = cause instanceof LedgerDurabilityError ? cause : new LedgerDurabilityError(cause);
    if (sticky) this.failure = error;
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w.reject(error);
  }

  private closeFd(): void {
    if (this.fd === null) return;
    try {
      closeSync(this.fd);
    } catch {
      /* already closed */
    }
    this.fd = null;
  }
}
