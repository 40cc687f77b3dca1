/**
 * The ledger's tools beside the receipts (issue 12 items 2 and 3): what Verify
 * ledger found, item by item (`VerifyDetails`, shown under the receipts' Verify
 * button), the export of the current filter with progress and cancel, and the
 * retention period. Presentational: the stores do the work (stores/ledger.ts).
 */
import { useEffect, useState } from 'react';
import type { ExportFormat, LedgerFilter } from '../../shared/ledger-export';
import { RETENTION_DAYS } from '../../shared/ledger-export';
import type { VerifyReport } from '../../shared/receipt';
import type { ErrorInfo } from '../../shared/result';
import type { ExportRun } from '../stores/ledger';
import { formatCount, formatTime } from '../text';

/** A progress bar with its count, for a run over `total` receipts. */
export function LedgerProgressBar(p: { done: number; total: number; label: string; testId: string }) {
  return (
    <div className="ledger-progress" data-testid={p.testId}>
      <progress max={Math.max(p.total, 1)} value={Math.min(p.done, p.total)} aria-label={p.label} />
      <span className="muted small">
        {p.label}: {formatCount(p.done)} of {formatCount(p.total)} receipts
      </span>
    </div>
  );
}

/** What Verify ledger checked and found: count, head, last signed checkpoint, the extension's witness, the first broken link. */
export function VerifyDetails(p: { report: VerifyReport }) {
  const r = p.report;
  const cp = r.signed?.checkpoint ?? null;
  return (
    <dl className="verify-details" data-testid="verify-details">
      <dt>Receipts</dt>
      <dd data-testid="verify-count">{formatCount(r.count)}{r.ok ? '' : ' intact before the break'}</dd>
      <dt>Head hash</dt>
      <dd><code data-testid="verify-head">{r.headHash}</code></dd>
      <dt>Last signed checkpoint</dt>
      <dd data-testid="verify-checkpoint">
        {cp ? `#${cp.count}, signed ${formatTime(cp.time)}${r.signed ? `; ${r.signed.unsignedTail} receipt${r.signed.unsignedTail === 1 ? '' : 's'} after it` : ''}` : 'none'}
      </dd>
      <dt>Extension's witness</dt>
      <dd data-testid="verify-witness">
        {r.signed ? `${{ agrees: 'agrees', failed: 'FAILED', 'not-checked': 'not checked' }[r.signed.witness]}${r.signed.witnessNote ? ` (${r.signed.witnessNote})` : ''}` : 'not checked'}
      </dd>
      {r.firstBroken ? (
        <>
          <dt>First broken link</dt>
          <dd data-testid="verify-broken">
            #{r.firstBroken.seq}: {r.firstBroken.reason}
          </dd>
        </>
      ) : null}
    </dl>
  );
}

function exportLine(run: ExportRun): string {
  switch (run.state) {
    case 'done':
      return `Exported ${run.rows ?? 0} receipt${run.rows === 1 ? '' : 's'} to ${run.file}. Check it with: npm run ledger -- verify "${run.file}"`;
    case 'cancelled':
      return 'Export cancelled; nothing was kept.';
    case 'failed':
      return `Export failed: ${run.error?.message ?? 'unknown error'}`;
    default:
      return `Exporting to ${run.file}…`;
  }
}

export function LedgerPanel(p: {
  /** The timeline's current filter ({} for every receipt). */
  filter: LedgerFilter;
  run: ExportRun | null;
  starting: boolean;
  exportError: ErrorInfo | null;
  retentionDays: number | null | undefined;
  retentionSaving: boolean;
  retentionSaved: boolean;
  retentionError: ErrorInfo | null;
  offline: boolean;
  onExport(format: ExportFormat): void;
  onCancel(): void;
  onSaveRetention(days: number | null): void;
}) {
  const [format, setFormat] = useState<ExportFormat>('jsonl');
  const [days, setDays] = useState(p.retentionDays ? String(p.retentionDays) : '');
  useEffect(() => {
    setDays(p.retentionDays ? String(p.retentionDays) : '');
  }, [p.retentionDays]);
  const running = p.run?.state === 'running';
  const filtered = Object.keys(p.filter).length > 0;
  return (
    <section className="panel" aria-labelledby="ledger-h">
      <h2 id="ledger-h">Export and retention</h2>
      <div className="row">
        <label htmlFor="export-format">Export {filtered ? 'the receipts of the current filter' : 'every receipt'} as</label>
        <select id="export-format" value={format} onChange={(e) => setFormat(e.target.value as ExportFormat)} data-testid="export-format" disabled={running}>
          <option value="jsonl">JSON Lines (verifiable)</option>
          <option value="csv">CSV (for a spreadsheet)</option>
        </select>
        <button type="button" className="btn" onClick={() => p.onExport(format)} disabled={running || p.starting || p.offline} data-testid="export-start">
          Export
        </button>
        {running ? (
          <button type="button" className="btn" onClick={p.onCancel} data-testid="export-cancel">
            Cancel
          </button>
        ) : null}
      </div>
      {p.run && running ? <LedgerProgressBar done={p.run.done} total={p.run.total} label="Export" testId="export-progress" /> : null}
      {p.run ? (
        <p className={p.run.state === 'failed' ? 'error' : 'muted small'} role="status" data-testid="export-status" data-state={p.run.state}>
          {exportLine(p.run)}
        </p>
      ) : null}
      {p.exportError ? (
        <p className="error" role="alert" data-testid="export-error">
          {p.exportError.message}
        </p>
      ) : null}
      <form
        className="settings-form"
        onSubmit={(e) => {
          e.preventDefault();
          p.onSaveRetention(days.trim() === '' ? null : Number(days));
        }}
      >
        <label htmlFor="retention-days">Keep receipts’ payloads for (days)</label>
        <p className="muted small">
          Past this, a receipt’s payload (arguments, URLs, typed text, script code, results) is erased; its hashes stay, so the ledger still
          verifies. Empty keeps them forever (the default). Receipts written before this console version cannot be erased.
        </p>
        <div className="row">
          <input
            id="retention-days"
            type="number"
            min={RETENTION_DAYS.min}
            max={RETENTION_DAYS.max}
            step={1}
            placeholder="forever"
            value={days}
            onChange={(e) => setDays(e.target.value)}
            data-testid="retention-days"
          />
          <button type="submit" className="btn" disabled={p.retentionSaving || p.offline} data-testid="save-retention">
            {p.retentionSaving ? 'Saving…' : 'Save'}
          </button>
          {p.retentionSaved ? <span className="muted small" data-testid="retention-saved">Saved.</span> : null}
        </div>
        {p.retentionError ? (
          <p className="error" role="alert">
            {p.retentionError.message}
          </p>
        ) : null}
      </form>
    </section>
  );
}
