/**
 * The link to the extension (heartbeat-based status; the pairing code with
 * Confirm / Reject is the PairingNotice on top of every page), the agent's MCP
 * endpoint (URL, stdio command), the agents' tokens (one per agent: create with
 * a name, the secret shown once; revoke), and the tabs shared with the agent.
 * Presentational. While the console is unreachable (`offline`) every action is
 * disabled. No secret is ever in the props except the one just created.
 */
import { useState } from 'react';
import type { AgentTokenInfo, CreatedAgentToken, EndpointInfo, LinkStatus } from '../../shared/ipc';
import type { ErrorInfo } from '../../shared/result';
import type { SharedTab } from '../../shared/types';
import type { LinkLabel } from '../stores/connection';
import { revealInvisible } from '../text';
import { CopyButton } from './CopyButton';

export interface ConnectionPanelProps {
  link: LinkStatus | null;
  label: LinkLabel;
  endpoint: EndpointInfo | null;
  agentTokens: AgentTokenInfo[];
  /** The token just created, with its secret (shown once). */
  newToken: CreatedAgentToken | null;
  sharedTabs: SharedTab[];
  shareable: SharedTab[] | null;
  /** The console is unreachable: nothing can be asked of it. */
  offline: boolean;
  busy: boolean;
  error: ErrorInfo | null;
  onUnpair(): void;
  onCreateToken(name: string): void;
  onRevokeToken(id: string): void;
  onDismissNewToken(): void;
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
  const [tokenName, setTokenName] = useState('');
  const [confirmRevoke, setConfirmRevoke] = useState<string | null>(null);
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

      <section className="panel" aria-labelledby="tokens-h">
        <h2 id="tokens-h">Agent tokens</h2>
        <p className="muted small">
          One token per agent. The name you give it is who asks in the approval dialog and in the receipts; what the agent calls
          itself is shown beside it, marked self-declared. The secret is shown once, when you create the token.
        </p>
        {p.newToken ? (
          <div className="notice" role="status" data-testid="new-token">
            <p>
              Token for <strong>{revealInvisible(p.newToken.token.name)}</strong> — copy it now: it is not shown again.
            </p>
            <p className="row">
              <code data-testid="new-token-secret">{p.newToken.secret}</code>
              <CopyButton value={p.newToken.secret} testId="copy-new-token" />
              <button type="button" className="btn btn-small" onClick={p.onDismissNewToken} data-testid="new-token-done">
                Done
              </button>
            </p>
            <p className="muted small">
              HTTP: header <code>Authorization: Bearer &lt;token&gt;</code>. stdio: set <code>ECHO_CONSOLE_TOKEN</code> to it in the
              agent’s configuration.
            </p>
          </div>
        ) : null}
        {p.agentTokens.length === 0 ? (
          <p className="empty">No agent token yet: no agent can connect.</p>
        ) : (
          <ul className="tab-list" data-testid="agent-tokens">
            {p.agentTokens.map((t) => (
              <li key={t.id} className="tab-line" data-testid={`agent-token-${t.id}`}>
                <div className="tab-text">
                  <span data-testid="agent-token-name">{revealInvisible(t.name)}</span>
                  <code className="subtle">
                    {t.id} · {t.sessions} session{t.sessions === 1 ? '' : 's'} open
                  </code>
                </div>
                {confirmRevoke === t.id ? (
                  <>
                    <button
                      type="button"
                      className="btn btn-small btn-danger"
                      onClick={() => {
                        setConfirmRevoke(null);
                        p.onRevokeToken(t.id);
                      }}
                      disabled={disabled}
                      data-testid={`revoke-confirm-${t.id}`}
                    >
                      Revoke now
                    </button>
                    <button type="button" className="btn btn-small" onClick={() => setConfirmRevoke(null)}>
                      Cancel
                    </button>
                  </>
                ) : (
                  <button type="button" className="btn btn-small" onClick={() => setConfirmRevoke(t.id)} disabled={disabled} data-testid={`revoke-${t.id}`}>
                    Revoke
                  </button>
                )}
              </li>
            ))}
          </ul>
        )}
        <form
          className="row"
          onSubmit={(e) => {
            e.preventDefault();
            if (tokenName.trim() === '') return;
            p.onCreateToken(tokenName);
            setTokenName('');
          }}
        >
          <label className="small" htmlFor="token-name">
            New agent’s name
          </label>
          <input id="token-name" value={tokenName} maxLength={64} onChange={(e) => setTokenName(e.target.value)} placeholder="e.g. Claude Desktop" data-testid="token-name" />
          <button type="submit" className="btn btn-small" disabled={disabled || tokenName.trim() === ''} data-testid="create-token">
            Create token
          </button>
        </form>
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
