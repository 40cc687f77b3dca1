/**
 * The console's layout and the containers that connect the stores to the
 * presentational components (components/*). State lives in the four stores
 * (stores/*); the only local state here is which section is shown.
 */
import { createContext, useContext, useState } from 'react';
import { useStore } from 'zustand';
import { ApprovalDialog } from './components/ApprovalDialog';
import { ApprovalList } from './components/ApprovalList';
import { ConnectionPanel } from './components/ConnectionPanel';
import { ReceiptList } from './components/ReceiptList';
import { SettingsPanel } from './components/SettingsPanel';
import { useNow } from './hooks';
import { linkLabel } from './stores/connection';
import type { ConsoleStores } from './stores';

export const StoresContext = createContext<ConsoleStores | null>(null);

function useStores(): ConsoleStores {
  const s = useContext(StoresContext);
  if (!s) throw new Error('StoresContext is missing');
  return s;
}

type Section = 'approvals' | 'receipts' | 'connection' | 'settings';

function Approvals() {
  const { approvals } = useStores();
  const pending = useStore(approvals, (s) => s.pending);
  const notice = useStore(approvals, (s) => s.notice);
  const open = useStore(approvals, (s) => s.open);
  const clearNotice = useStore(approvals, (s) => s.clearNotice);
  const now = useNow();
  return <ApprovalList pending={pending} now={now} onOpen={open} notice={notice} onClearNotice={clearNotice} />;
}

function OpenDialog() {
  const { approvals } = useStores();
  const openId = useStore(approvals, (s) => s.openId);
  const approval = useStore(approvals, (s) => s.pending.find((a) => a.requestId === s.openId) ?? null);
  const busy = useStore(approvals, (s) => s.busy !== null);
  const error = useStore(approvals, (s) => s.error);
  const now = useNow();
  if (!openId || !approval) return null;
  const { decide, close } = approvals.getState();
  return (
    <ApprovalDialog
      approval={approval}
      now={now}
      busy={busy}
      error={error}
      onApprove={() => void decide(approval.requestId, 'approve')}
      onDeny={(reason) => void decide(approval.requestId, 'deny', reason)}
      onClose={close}
    />
  );
}

function Receipts() {
  const { receipts } = useStores();
  const s = useStore(receipts);
  return (
    <ReceiptList
      items={s.items}
      loading={s.loading}
      hasMore={s.nextCursor !== null}
      error={s.error}
      verify={s.verify}
      verifying={s.verifying}
      verifyError={s.verifyError}
      onMore={() => void s.loadMore()}
      onVerify={() => void s.runVerify()}
    />
  );
}

function Connection(props: { transportKind: 'ipc' | 'ws' }) {
  const { connection } = useStores();
  const s = useStore(connection);
  const now = useNow();
  return (
    <ConnectionPanel
      link={s.link}
      label={linkLabel(s.link, now)}
      endpoint={s.endpoint}
      sharedTabs={s.sharedTabs}
      shareable={s.shareable}
      transportKind={props.transportKind}
      transport={s.transport}
      busy={s.busy}
      error={s.error}
      onConfirmPairing={(accept) => void s.confirmPairing(accept)}
      onUnpair={() => void s.unpair()}
      onRotateToken={() => void s.rotateToken()}
      onLoadShareable={() => void s.loadShareable()}
      onShare={(id) => void s.share(id)}
      onUnshare={(id) => void s.unshare(id)}
    />
  );
}

function Settings() {
  const { settings } = useStores();
  const s = useStore(settings);
  return <SettingsPanel settings={s.settings} saving={s.saving} saved={s.saved} error={s.error} onSaveTimeout={(sec) => void s.saveApprovalTimeout(sec)} />;
}

function LinkPill() {
  const { connection } = useStores();
  const link = useStore(connection, (s) => s.link);
  const label = linkLabel(link, useNow());
  return (
    <span className={`pill pill-${label.tone}`} data-testid="link-pill" title={label.detail}>
      <span className={`dot dot-${label.tone}`} aria-hidden="true" />
      {label.text}
    </span>
  );
}

/** The whole console. */
export function App(props: { transportKind: 'ipc' | 'ws' }) {
  const [section, setSection] = useState<Section>('approvals');
  const { approvals } = useStores();
  const count = useStore(approvals, (s) => s.pending.length);
  const nav: [Section, string][] = [
    ['approvals', 'Approvals'],
    ['receipts', 'Receipts'],
    ['connection', 'Connection'],
    ['settings', 'Settings'],
  ];
  return (
    <div className="app">
      <header className="topbar">
        <div className="brand">
          <span className="mark" aria-hidden="true" />
          Echo Console
        </div>
        <LinkPill />
      </header>
      <div className="layout">
        <nav className="sidenav" aria-label="Sections">
          {nav.map(([id, label]) => (
            <button
              key={id}
              type="button"
              className={section === id ? 'navlink active' : 'navlink'}
              aria-current={section === id ? 'page' : undefined}
              onClick={() => setSection(id)}
              data-testid={`nav-${id}`}
            >
              {label}
              {id === 'approvals' && count > 0 ? <span className="badge">{count}</span> : null}
            </button>
          ))}
        </nav>
        <main className="content">
          {section === 'approvals' ? <Approvals /> : null}
          {section === 'receipts' ? <Receipts /> : null}
          {section === 'connection' ? <Connection transportKind={props.transportKind} /> : null}
          {section === 'settings' ? <Settings /> : null}
        </main>
      </div>
      <OpenDialog />
    </div>
  );
}

/** Shown in a browser that opened the web host without the token. */
export function NoToken() {
  return (
    <div className="app">
      <main className="content narrow">
        <section className="panel">
          <h2>Open the console from its link</h2>
          <p>
            This page needs the session link that <code>npm run start:web</code> printed (it ends in <code>#token=…</code>). The
            token is never sent to the server in the URL; it stays in this tab.
          </p>
        </section>
      </main>
    </div>
  );
}
