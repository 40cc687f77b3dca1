/**
 * The console's long ledger tasks (issue 12 items 2 and 3): Verify ledger with
 * progress, the filtered export with progress and cancel, and retention. Each
 * runs off the agent's path in chunks that yield to the event loop (the ledger's
 * `verifyAsync`, `exportFiltered`, `erasePayloads`), so the approval dialog and
 * the console stay responsive on a ledger of a million receipts. Progress goes
 * to the console as `ledger-progress` events (src/shared/ledger-export.ts).
 * See docs/ledger.md, "Verify and export in the console" and "Retention".
 */
import { mkdirSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { ConsoleEvent } from '../../shared/ipc';
import type { ExportFormat, LedgerFilter, LedgerProgress } from '../../shared/ledger-export';
import type { Receipt, ReceiptInput, VerifyReport } from '../../shared/receipt';
import { err, ok, toErrorInfo, type Result } from '../../shared/result';
import type { Ledger } from './ledger';
import { LedgerInputError } from './ledger';

/** One day in ms: retention periods are whole days. */
export const DAY_MS = 86_400_000;
/** How often retention runs while the console runs (besides at start and when the period changes). */
export const RETENTION_INTERVAL_MS = 60 * 60 * 1000;

export interface LedgerTasksParts {
  ledger: Ledger;
  /** The data folder: exports go to `<dataDir>/exports/` (0700). */
  dataDir: string;
  emit(e: ConsoleEvent): void;
  /** Append a receipt (null when the ledger failed). */
  receipt(input: ReceiptInput): Receipt | null;
  /** The console's clock, ms since the epoch (tests inject one). */
  now(): number;
  /** The retention period now (settings `retentionDays`), null: keep forever. */
  retentionDays(): number | null;
  /** The full check (chain, checkpoints, witness), reporting progress in receipts. */
  verify(onProgress: (done: number) => void): Promise<VerifyReport>;
  log: { warn(message: string, detail?: unknown): void };
}

/** The console's verify, export and retention runs over one ledger. */
export class LedgerTasks {
  private readonly exports = new Map<string, AbortController>();
  private verifying: Promise<VerifyReport> | null = null;
  private retention: Promise<unknown> | null = null;
  private retentionAgain = false;
  private timer: ReturnType<typeof setInterval> | null = null;

  constructor(private readonly p: LedgerTasksParts) {}

  private progress(progress: LedgerProgress): void {
    this.p.emit({ kind: 'ledger-progress', progress });
  }

  /**
   * Verify ledger, with `ledger-progress` events (task `verify`, id `verify`). A second
   * call while one runs joins it (one walk of the file at a time).
   */
  verify(): Promise<VerifyReport> {
    if (this.verifying) return this.verifying;
    const total = this.p.ledger.head().count;
    this.progress({ task: 'verify', id: 'verify', done: 0, total, state: 'running' });
    const run = this.p
      .verify((done) => this.progress({ task: 'verify', id: 'verify', done: Math.min(done, total), total, state: 'running' }))
      .then(
        (report) => {
          // The walk reports after each chunk but the last: the end is said once, with what was checked.
          this.progress({ task: 'verify', id: 'verify', done: report.ok ? total : Math.min(report.count, total), total, state: 'done' });
          return report;
        },
        (e: unknown) => {
          this.progress({ task: 'verify', id: 'verify', done: 0, total, state: 'failed', error: toErrorInfo(e) });
          throw e;
        },
      )
      .finally(() => {
        this.verifying = null;
      });
    this.verifying = run;
    return run;
  }

  /**
   * Start an export (see ConsoleApi.startExport). One at a time: a person exporting twice
   * at once is more likely a double click than a wish, and each walk reads the whole file.
   */
  startExport(x: { filter: LedgerFilter; format: ExportFormat }): Result<{ exportId: string; file: string }> {
    if (this.exports.size > 0) return err('too-many-exports', 'An export is already running: wait for it or cancel it.');
    const exportId = `exp_${randomBytes(8).toString('hex')}`;
    const dir = join(this.p.dataDir, 'exports');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const stamp = new Date(this.p.now()).toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, 'Z');
    const file = join(dir, `receipts-${stamp}-${exportId.slice(4, 12)}.${x.format}`);
    const ac = new AbortController();
    const total = this.p.ledger.head().count;
    const base = { task: 'export' as const, id: exportId, total };
    this.exports.set(exportId, ac);
    this.progress({ ...base, done: 0, state: 'running' });
    const run = this.p.ledger.exportFiltered(file, {
      filter: x.filter,
      format: x.format,
      signal: ac.signal,
      onProgress: (done) => this.progress({ ...base, done, state: 'running' }),
    });
    run.then(
      (r) => this.progress({ ...base, done: total, state: 'done', result: { file, format: x.format, rows: r.rows, head: r.head } }),
      (e: unknown) => {
        if (ac.signal.aborted) this.progress({ ...base, done: 0, state: 'cancelled' });
        else {
          const info = e instanceof LedgerInputError ? { code: 'invalid-filter', message: e.message } : toErrorInfo(e);
          this.p.log.warn('export failed', info);
          this.progress({ ...base, done: 0, state: 'failed', error: { code: info.code, message: info.message } });
        }
      },
    ).finally(() => this.exports.delete(exportId));
    return ok({ exportId, file });
  }

  /** Cancel a running export (see ConsoleApi.cancelExport). */
  cancelExport(exportId: string): Result<null> {
    const ac = this.exports.get(exportId);
    if (!ac) return err('export-not-found', 'No export with that id is running (it may have finished).');
    ac.abort(new Error('the export was cancelled'));
    return ok(null);
  }

  /**
   * Apply the retention period now: erase the payloads of receipts older than
   * `retentionDays` (none when null), and receipt it (`payloads-erased`, only when
   * something was erased). Runs one at a time; a call during a run runs once more
   * after it (the period may have changed meanwhile). Never throws: failures are logged.
   * @returns what the (last) run erased, or null when retention is off or failed.
   */
  async applyRetention(): Promise<{ erased: number; oldRuleKept: number; before: number } | null> {
    if (this.retention) {
      this.retentionAgain = true;
      await this.retention;
      return this.applyRetention();
    }
    const run = this.retentionOnce();
    this.retention = run;
    try {
      return await run;
    } finally {
      this.retention = null;
      if (this.retentionAgain) {
        this.retentionAgain = false;
        void this.applyRetention();
      }
    }
  }

  private async retentionOnce(): Promise<{ erased: number; oldRuleKept: number; before: number } | null> {
    const days = this.p.retentionDays();
    if (days === null) return null;
    const now = this.p.now();
    const before = now - days * DAY_MS;
    try {
      const r = await this.p.ledger.erasePayloads({ before, now });
      if (r.erased > 0) {
        this.p.receipt({ requestId: null, event: 'payloads-erased', faculty: 'console', actor: { kind: 'console' }, detail: { retentionDays: days, before, erased: r.erased, oldRuleKept: r.oldRuleKept } });
      }
      return { ...r, before };
    } catch (e) {
      this.p.log.warn('retention could not erase payloads', toErrorInfo(e));
      return null;
    }
  }

  /** Run retention now and every RETENTION_INTERVAL_MS (the timer does not keep the process alive). */
  startRetention(intervalMs = RETENTION_INTERVAL_MS): void {
    void this.applyRetention();
    this.timer = setInterval(() => void this.applyRetention(), intervalMs);
    this.timer.unref?.();
  }

  /** Stop the timer and cancel running exports. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    for (const ac of this.exports.values()) ac.abort(new Error('the console stopped'));
  }
}
