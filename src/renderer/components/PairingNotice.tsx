/**
 * The extension asks to pair: its code and Confirm / Reject, shown on top of
 * every page while the link is `awaiting-pairing` (the person may be on any
 * page when it starts). Presentational.
 */
import { useId } from 'react';
import type { ErrorInfo } from '../../shared/result';

export interface PairingNoticeProps {
  code: string | undefined;
  busy: boolean;
  /** The console is unreachable: the answer could not be delivered. */
  offline: boolean;
  error: ErrorInfo | null;
  onConfirm(accept: boolean): void;
}

export function PairingNotice(p: PairingNoticeProps) {
  const headingId = useId();
  const disabled = p.busy || p.offline;
  return (
    <section className="pairing-notice" aria-labelledby={headingId} data-testid="pairing">
      <h2 id={headingId}>The Chrome extension asks to pair with this console</h2>
      <p role="status">Does the extension’s popup show this code? Confirm only if the two codes are the same, here and in the popup (“The codes match”).</p>
      <p className="pairing-code" data-testid="pairing-code" aria-label={p.code ? `Pairing code ${p.code}` : 'No pairing code yet'}>
        {p.code ?? '—'}
      </p>
      {p.error ? (
        <p className="error" role="alert" data-testid="pairing-error">
          {p.error.message}
        </p>
      ) : null}
      <div className="actions">
        <button type="button" className="btn btn-danger" onClick={() => p.onConfirm(false)} disabled={disabled} data-testid="pairing-reject">
          Reject
        </button>
        <button type="button" className="btn btn-primary" onClick={() => p.onConfirm(true)} disabled={disabled || !p.code} data-testid="pairing-confirm">
          Confirm — the codes match
        </button>
      </div>
    </section>
  );
}
