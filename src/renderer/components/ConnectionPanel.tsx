/**
 * The link to the extension (heartbeat-based status; the pairing code with
 * Confirm / Reject is the PairingNotice on top of every page), the agent's MCP
 * endpoint (URL, token, stdio command: copy, rotate), and the tabs shared with
 * the agent. Presentational. While the console is unreachable (`offline`)
 * every action is disabled.
 */
import { useState } from 'react';
import type { EndpointInfo, LinkStatus } from '../../shared/ipc';
import type { ErrorInfo } from '../../shared/result';
import type { SharedTab } from '../../shared/types';
import type { LinkLabel } from '../stores/connection';
import { revealInvisible } from '../text';
import { CopyButton } from './CopyButton';

export interface ConnectionPanelProps {
  link: LinkStatus | null;
  label: LinkLabel;
  endpoint: EndpointInfo | null;
  sharedTabs: SharedTab[];
  shareable: SharedTab[] | null;
  /** The console is unreachable: nothing can be asked of it. */
  offline: boolean;
  busy: boolean;
  error: ErrorInfo | null;
  onUnpair(): void;
  onRotateToken(): void;
  onLoadShareable(): void;
  onShare(tabId: number): void;
  onUnshare(tabId: number): void;
}

function TabLine(props: { tab: SharedTab; action: string; onAction(): void; testId: string; disabled: boolean }) {
  return (
    <li className="tab-line">
      <div className="tab-text">
        <span>{revealInvisible(props.tab.title) || '(untitled)'}</span>
        <code className="subtle">{revealInvisible(props.tab.url)}</code>
      </div>
      <button type="button" className="btn btn-small" onClick={props.onAction} disabled={props.disabled} data-testid={props.testId}>
        {props.action}
      </button>
    </li>
  );
}

export function ConnectionPanel(p: ConnectionPanelProps) {
  const [showToken, setShowToken] = useState(false);
  const [confirmRotate, setConfirmRotate] = useState(false);
  const sharedIds = new Set(p.sharedTabs.map((t) => t.tabId));
  const candidates = (p.shareable ?? []).filter((t) => !sharedIds.has(t.tabId));
  const disabled = p.busy || p.offline;

  return (
    <div className="stack">
      {p.error ? (
        <p className="error" role="alert" data-testid="connection-error">
          {p.error.message}
        </p>
      ) : null}

      <section className="panel" aria-labelledby="link-h">
        <h2 id="link-h">Chrome extension</h2>
        <p className="status-line" data-testid="link-status" data-problem={p.link?.problem?.code}>
          <span className={`dot dot-${p.label.tone}`} aria-hidden="true" />
          <strong>{p.label.text}</strong>
          {p.label.detail ? <span className="muted"> — {p.label.detail}</span> : null}
        </p>
        {p.link?.state === 'awaiting-pairing' && !p.offline ? (
          <p className="muted small">Compare the pairing code shown at the top of the page with the one in the extension’s popup.</p>
        ) : null}
        {p.link?.paired ? (
          <p className="muted small">
            Paired{p.link.extensionId ? <> with extension <code>{p.link.extensionId}</code></> : null}.{' '}
            <button type="button" className="btn btn-link" onClick={p.onUnpair} disabled={disabled} data-testid="unpair">
              Unpair
            </button>
          </p>
        ) : null}
      </section>

      <section className="panel" aria-labelledby="endpoint-h">
        <h2 id="endpoint-h">Agent endpoint (MCP)</h2>
        {p.endpoint ? (
          <dl className="fields">
            <div className="field field-wide">
              <dt>URL</dt>
              <dd className="row">
                <code data-testid="endpoint-url">{p.endpoint.url}</code>
                <CopyButton value={p.endpoint.url} testId="copy-endpoint-url" />
              </dd>
            </div>
            <div className="field field-wide">
              <dt>Bearer token</dt>
              <dd className="row">
                <code data-testid="endpoint-token">{showToken ? p.endpoint.token : '•'.repeat(Math.min(24, p.endpoint.token.length))}</code>
                <button type="button" className="btn btn-small" onClick={() => setShowToken(!showToken)} data-testid="toggle-token">
                  {showToken ? 'Hide' : 'Show'}
                </button>
                <CopyButton value={p.endpoint.token} testId="copy-endpoint-token" />
                {confirmRotate ? (
                  <>
                    <span className="muted small">Agents using the old token lose access.</span>
                    <button
                      type="button"
                      className="btn btn-small btn-danger"
                      onClick={() => {
                        setConfirmRotate(false);
                        p.onRotateToken();
                      }}
                      disabled={disabled}
                      data-testid="rotate-confirm"
                    >
                      Rotate now
                    </button>
                    <button type="button" className="btn btn-small" onClick={() => setConfirmRotate(false)}>
                      Cancel
                    </button>
                  </>
                ) : (
                  <button type="button" className="btn btn-small" onClick={() => setConfirmRotate(true)} disabled={p.offline} data-testid="rotate-token">
                    Rotate
                  </button>
                )}
              </dd>
            </div>
            <div className="field field-wide">
              <dt>stdio command</dt>
              <dd className="row">
                <code data-testid="endpoint-stdio">{p.endpoint.stdioCommand}</code>
                <CopyButton value={p.endpoint.stdioCommand} testId="copy-endpoint-stdio" />
              </dd>
            </div>
          </dl>
        ) : (
          <p className="muted">Loading…</p>
        )}
      </section>

      <section className="panel" aria-labelledby="tabs-h">
        <div className="panel-head">
          <h2 id="tabs-h">Shared tabs</h2>
          <button type="button" className="btn" onClick={p.onLoadShareable} disabled={disabled} data-testid="share-tab-open">
            Share a tab…
          </button>
        </div>
        <p className="muted small">The agent sees only the tabs listed here.</p>
        {p.sharedTabs.length === 0 ? (
          <p className="empty">No tab is shared.</p>
        ) : (
          <ul className="tab-list" data-testid="shared-tabs">
            {p.sharedTabs.map((t) => (
              <TabLine key={t.tabId} tab={t} action="Stop sharing" onAction={() => p.onUnshare(t.tabId)} disabled={disabled} testId={`unshare-${t.tabId}`} />
            ))}
          </ul>
        )}
        {p.shareable !== null ? (
          <div className="picker" data-testid="share-picker">
            <h3>Open tabs</h3>
            {candidates.length === 0 ? (
              <p className="muted small">No other tab can be shared (chrome:// and extension pages never can).</p>
            ) : (
              <ul className="tab-list">
                {candidates.map((t) => (
                  <TabLine key={t.tabId} tab={t} action="Share" onAction={() => p.onShare(t.tabId)} disabled={disabled} testId={`share-${t.tabId}`} />
                ))}
              </ul>
            )}
          </div>
        ) : null}
      </section>
    </div>
  );
}
