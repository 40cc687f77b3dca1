/** The receipt list (newest first, paged) and the ledger check. Presentational. */
import { fingerprint } from '../../shared/canonical';
import type { Receipt, VerifyReport } from '../../shared/receipt';
import type { ErrorInfo } from '../../shared/result';
import { formatTime, revealInvisible } from '../text';

const OUTCOMES = new Set(['succeeded', 'failed', 'outcome-unknown', 'refused', 'denied', 'expired', 'cancelled']);

function tone(event: string): string {
  if (event === 'succeeded' || event === 'approved' || event === 'readback-confirmed') return 'ok';
  if (event === 'failed' || event === 'refused' || event === 'denied' || event === 'readback-mismatch') return 'bad';
  if (event === 'outcome-unknown' || event === 'expired' || event === 'cancelled') return 'warn';
  return 'idle';
}

export interface ReceiptListProps {
  items: Receipt[];
  loading: boolean;
  hasMore: boolean;
  error: ErrorInfo | null;
  verify: VerifyReport | null;
  verifying: boolean;
  verifyError: ErrorInfo | null;
  onMore(): void;
  onVerify(): void;
}

export function ReceiptList(p: ReceiptListProps) {
  return (
    <section className="panel" aria-labelledby="receipts-h">
      <div className="panel-head">
        <h2 id="receipts-h">Receipts</h2>
        <button type="button" className="btn" onClick={p.onVerify} disabled={p.verifying} data-testid="verify-ledger">
          {p.verifying ? 'Verifying…' : 'Verify ledger'}
        </button>
      </div>
      {p.verify ? (
        <p className={p.verify.ok ? 'verify verify-ok' : 'verify verify-bad'} role="status" data-testid="verify-report">
          {p.verify.ok
            ? `Chain intact: ${p.verify.count} receipt${p.verify.count === 1 ? '' : 's'}, head ${fingerprint(p.verify.headHash)}.`
            : `Chain broken at #${p.verify.firstBroken?.seq ?? '?'}: ${p.verify.firstBroken?.reason ?? 'unknown reason'} (${p.verify.count} receipts checked).`}
        </p>
      ) : null}
      {p.verifyError ? (
        <p className="error" role="alert">
          {p.verifyError.message}
        </p>
      ) : null}
      {p.error ? (
        <p className="error" role="alert">
          {p.error.message}
        </p>
      ) : null}
      {p.items.length === 0 && !p.loading ? (
        <p className="empty">No receipts yet.</p>
      ) : (
        <table className="receipts" data-testid="receipt-list">
          <thead>
            <tr>
              <th scope="col">#</th>
              <th scope="col">Time</th>
              <th scope="col">Event</th>
              <th scope="col">Tool</th>
              <th scope="col">Origin</th>
              <th scope="col">Outcome</th>
            </tr>
          </thead>
          <tbody>
            {p.items.map((r) => (
              <tr key={r.id} data-testid="receipt-row">
                <td className="muted">{r.seq}</td>
                <td className="nowrap">{formatTime(r.time)}</td>
                <td>
                  <span className={`pill pill-${tone(r.event)}`}>{r.event}</span>
                </td>
                <td>{r.toolName ? <code>{revealInvisible(r.toolName)}</code> : <span className="muted">—</span>}</td>
                <td>{r.origin ? <code>{r.origin}</code> : <span className="muted">—</span>}</td>
                <td>{OUTCOMES.has(r.event) ? r.event : <span className="muted">—</span>}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <div className="panel-foot">
        {p.hasMore ? (
          <button type="button" className="btn" onClick={p.onMore} disabled={p.loading} data-testid="receipts-more">
            {p.loading ? 'Loading…' : 'Load older receipts'}
          </button>
        ) : p.items.length > 0 ? (
          <span className="muted small">That is the first receipt.</span>
        ) : null}
      </div>
    </section>
  );
}
