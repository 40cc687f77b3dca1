/**
 * The console's list of active Live Patches per shared tab (issue 11 item 1; docs/live-patch.md):
 * the target (page text, UNTRUSTED, invisible characters revealed), the edits in words, when, the
 * prior-state hash; Revert per patch and Revert all per tab (the person's own act, receipted).
 */
import { describeEdit, type LivePatchInfo } from '../../shared/live-patch';
import type { ErrorInfo } from '../../shared/result';
import { revealInvisible } from '../text';

export function LivePatchPanel(props: {
  patches: LivePatchInfo[] | null;
  busyTab: number | null;
  offline: boolean;
  error: ErrorInfo | null;
  onRevert(tabId: number, patchIds?: string[]): void;
}) {
  const list = props.patches ?? [];
  const tabs = [...new Set(list.map((p) => p.tabId))];
  return (
    <section className="panel" data-testid="live-patches">
      <h2>Live Patches</h2>
      <p>
        Reversible edits an agent made to a shared page after you approved them. They end when the page reloads or navigates. Revert puts
        the page back exactly as it was, or says where the page changed it meanwhile.
      </p>
      {props.error ? (
        <p className="error" role="alert">
          {props.error.message}
        </p>
      ) : null}
      {props.patches === null ? <p>Loading…</p> : null}
      {props.patches !== null && list.length === 0 ? <p data-testid="live-patches-empty">No active patch.</p> : null}
      {tabs.map((tabId) => {
        const mine = list.filter((p) => p.tabId === tabId);
        const busy = props.busyTab === tabId;
        return (
          <div key={tabId} className="block" data-testid={`live-patches-tab-${tabId}`}>
            <h3>
              Tab {tabId} <code>{revealInvisible(mine[0]?.origin ?? '')}</code>{' '}
              <button type="button" disabled={busy || props.offline} onClick={(e) => e.nativeEvent.isTrusted && props.onRevert(tabId)} data-testid={`revert-all-${tabId}`}>
                Revert all
              </button>
            </h3>
            <table className="receipts">
              <thead>
                <tr>
                  <th>Target (page text)</th>
                  <th>Edits</th>
                  <th>Applied</th>
                  <th>Prior state</th>
                  <th />
                </tr>
              </thead>
              <tbody>
                {mine.map((p) => (
                  <tr key={p.patchId} data-testid="live-patch-row">
                    <td>
                      <code>
                        {p.target.role} “{revealInvisible(p.target.name) || '(no name)'}”
                      </code>{' '}
                      {p.target.ref}
                    </td>
                    <td>
                      <ul>
                        {p.edits.map((e, i) => (
                          <li key={i}>
                            <code>{revealInvisible(describeEdit(e))}</code>
                          </li>
                        ))}
                      </ul>
                      {p.held ? null : <em>The page undid part of it at once.</em>}
                    </td>
                    <td>{new Date(p.appliedAt).toLocaleTimeString()}</td>
                    <td>
                      <code className="hash" title={p.priorHash}>
                        {p.priorHash.slice(0, 12)}…
                      </code>
                    </td>
                    <td>
                      <button type="button" disabled={busy || props.offline} onClick={(e) => e.nativeEvent.isTrusted && props.onRevert(tabId, [p.patchId])} data-testid={`revert-${p.patchId}`}>
                        Revert
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        );
      })}
    </section>
  );
}
