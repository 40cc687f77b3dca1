/** The pending approvals, oldest first; "Review" opens the dialog. Presentational. */
import type { ApprovalView } from '../../shared/ipc';
import { formatDuration, revealInvisible, timeLeftMs } from '../text';

export function ApprovalList(props: { pending: ApprovalView[]; now: number; onOpen(requestId: string): void; notice: string | null; onClearNotice(): void }) {
  return (
    <section className="panel" aria-labelledby="approvals-h">
      <h2 id="approvals-h">Pending approvals</h2>
      {props.notice ? (
        <p className="notice" role="status" data-testid="approvals-notice">
          {props.notice}{' '}
          <button type="button" className="btn btn-link" onClick={props.onClearNotice}>
            Dismiss
          </button>
        </p>
      ) : null}
      {props.pending.length === 0 ? (
        <p className="empty" data-testid="approvals-empty">
          Nothing is waiting for you. When an agent asks to act in a shared tab, the request appears here.
        </p>
      ) : (
        <ul className="approval-list" data-testid="approval-list">
          {props.pending.map((a) => {
            const left = timeLeftMs(a, props.now);
            return (
              <li key={a.requestId} className="approval-item">
                <div className="approval-main">
                  <code className="tool">{revealInvisible(a.subject.type === 'webmcp-tool' ? a.subject.toolName : `${a.faculty} ${a.operation}`)}</code>
                  <span className="muted"> on </span>
                  <code>{a.origin}</code>
                  <div className="muted small">
                    {revealInvisible(a.agent.name)}
                    {a.agent.clientName !== undefined ? ` (calls itself “${revealInvisible(a.agent.clientName)}”, self-declared)` : ''} · tab “{revealInvisible(a.tab.title)}”
                  </div>
                </div>
                <span className={left <= 0 ? 'timer timer-expired' : 'timer'}>{left <= 0 ? 'Expired' : formatDuration(left)}</span>
                <button type="button" className="btn" onClick={() => props.onOpen(a.requestId)} data-testid={`review-${a.requestId}`}>
                  Review
                </button>
              </li>
            );
          })}
        </ul>
      )}
    </section>
  );
}
