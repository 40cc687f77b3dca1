/**
 * The console's layout and the containers that connect the stores to the
 * presentational components (components/*). State lives in the stores
 * (stores/*); the only local state here is which section is shown.
 *
 * Across every page: the banner when the console itself is unreachable (the
 * action buttons are disabled meanwhile and the extension's link state shows
 * as unknown), and the pairing notice while the extension awaits pairing. The
 * link badge in the header opens the Connection page.
 */
import { Component, Suspense, createContext, lazy, useCallback, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';
import { useStore } from 'zustand';
import { ApprovalDialog, RunningDialog } from './components/ApprovalDialog';
import { ReloadOffers, StopEverythingButton } from './components/StopButton';
import { inFlightById, withSharing } from './stores/inflight';
import { consoleTitle, stopReportText } from './stop-text';
import { revealInvisible } from './text';
import { ApprovalList } from './components/ApprovalList';
import { ConnectionPanel } from './components/ConnectionPanel';
import { ConsoleBanner } from './components/ConsoleBanner';
import { PairingNotice } from './components/PairingNotice';
import { PolicyEditor } from './components/PolicyEditor';
import { LivePatchPanel } from './components/LivePatchPanel';
import { SettingsPanel } from './components/SettingsPanel';
import { ToolInspector } from './components/ToolInspector';
import { useNow } from './hooks';
import { consoleReachable, linkLabel } from './stores/connection';
import { LedgerTools, Receipts, TimelinePage, useDeepLinks } from './audit-pages';
import { StopRequest } from './stop-request';
import { useOnline, useStores } from './use-stores';
import type { ScriptRun } from '../shared/raw-script';

export { StoresContext } from './use-stores';

type Section = 'approvals' | 'timeline' | 'receipts' | 'inspector' | 'patches' | 'developer' | 'connection' | 'policy' | 'settings';

function Approvals() {
  const { approvals } = useStores();
  const pending = useStore(approvals, (s) => s.pending);
  const notice = useStore(approvals, (s) => s.notice);
  const open = useStore(approvals, (s) => s.open);
  const clearNotice = useStore(approvals, (s) => s.clearNotice);
  const now = useNow();
  return (
    <>
      <ApprovalList pending={pending} now={now} onOpen={open} notice={notice} onClearNotice={clearNotice} />
      <RunningList />
    </>
  );
}

/** The approved requests still running (a closed running dialog's request too), each with its Stop. */
function RunningList() {
  const { inflight } = useStores();
  const requests = useStore(inflight, (s) => s.requests);
  const running = requests.filter((r) => r.phase !== 'awaiting-approval');
  if (running.length === 0) return null;
  return (
    <section className="panel" aria-labelledby="running-h" data-testid="running-list">
      <h2 id="running-h">Running now</h2>
      <ul className="approval-list">
        {running.map((r) => (
          <li key={r.requestId} className="approval-item" data-testid="running-item" data-request-id={r.requestId}>
            <div className="approval-main">
              <code className="tool">
                {r.faculty} {r.operation}
              </code>
              <span className="muted">
                {' '}
                in tab {r.tabId}, asked by {revealInvisible(r.agent)} · {r.phase === 'dispatched' ? 'acting in the page' : 'not in the page yet'}
              </span>
            </div>
            <StopRequest requestId={r.requestId} />
          </li>
        ))}
      </ul>
    </section>
  );
}

function OpenDialog() {
  const { approvals, inflight } = useStores();
  const openId = useStore(approvals, (s) => s.openId);
  const approval = useStore(approvals, (s) => s.pending.find((a) => a.requestId === s.openId) ?? null);
  const busy = useStore(approvals, (s) => s.busy !== null);
  const error = useStore(approvals, (s) => s.error);
  const online = useOnline();
  const now = useNow();
  if (!openId || !approval) return <Running />;
  const { decide, close } = approvals.getState();
  return (
    <ApprovalDialog
      approval={approval}
      now={now}
      busy={busy}
      offline={!online}
      error={error}
      // Approved: the dialog stays on the request, now with its Stop, until it ends (issue 12 item 5).
      onApprove={() => void decide(approval.requestId, 'approve').then((done) => done && inflight.getState().watch(approval.requestId))}
      onDeny={(reason) => void decide(approval.requestId, 'deny', reason)}
      onClose={close}
    />
  );
}

/** The request the person just approved, running, with its Stop; closes by itself when it ends unless a reload is offered. */
function Running() {
  const { inflight } = useStores();
  const watching = useStore(inflight, (s) => s.watching);
  const request = useStore(inflight, (s) => inFlightById(s.requests, s.watching));
  const stored = useStore(inflight, (s) => s.offers.find((o) => o.requestId === s.watching));
  const shared = useSharedTabIds();
  const offer = useMemo(() => (stored ? withSharing([stored], shared)[0] : undefined), [stored, shared]);
  const busy = useStore(inflight, (s) => s.busy !== null);
  const error = useStore(inflight, (s) => s.error);
  const online = useOnline();
  // Not while its Stop is being answered: the request may leave the list before the answer (and its reload offer) arrives.
  const ended = watching !== null && !request && !offer && !busy;
  useEffect(() => {
    if (ended) inflight.getState().unwatch();
  }, [ended, inflight]);
  if (!watching || ended) return null;
  const s = inflight.getState();
  return (
    <RunningDialog
      requestId={watching}
      request={request}
      offer={offer}
      busy={busy}
      offline={!online}
      error={error}
      onStop={(id) => void s.stop(id)}
      onReload={(tabId) => void s.reload(tabId).then((done) => done && s.unwatch())}
      onClose={() => {
        if (offer) s.dismissOffer(offer.tabId);
        s.unwatch();
      }}
      onLeave={s.unwatch}
    />
  );
}

/** The ids of the tabs shared now (the connection store), as a set that changes only with them. */
function useSharedTabIds(): ReadonlySet<number> {
  const { connection } = useStores();
  const tabs = useStore(connection, (c) => c.sharedTabs);
  return useMemo(() => new Set(tabs.map((t) => t.tabId)), [tabs]);
}

/** The header's kill switch, and what it did; the tab reloads offered after stops. */
function StopEverything() {
  const { inflight } = useStores();
  const busy = useStore(inflight, (s) => s.busy === 'everything');
  const online = useOnline();
  return <StopEverythingButton busy={busy} disabled={!online} onStop={() => void inflight.getState().stopEverything()} />;
}

function StopNotices() {
  const { inflight } = useStores();
  const report = useStore(inflight, (s) => s.report);
  const offers = useStore(inflight, (s) => s.offers);
  const watching = useStore(inflight, (s) => s.watching);
  const busy = useStore(inflight, (s) => s.busy);
  const error = useStore(inflight, (s) => (s.watching === null ? s.error : null));
  const s = inflight.getState();
  const shared = useSharedTabIds();
  // The dialog shows its own request's offer; the rest are listed here, each with a Reload button only while its tab is shared.
  const listed = useMemo(() => withSharing(offers.filter((o) => o.requestId !== watching), shared), [offers, watching, shared]);
  return (
    <>
      {report ? (
        <p className="notice stop-report" role="status" data-testid="stop-report">
          {stopReportText(report)}{' '}
          <button type="button" className="btn btn-small btn-link" onClick={s.dismissReport}>
            Dismiss
          </button>
        </p>
      ) : null}
      {error ? (
        <p className="error" role="alert" data-testid="stop-error">
          {error.message}
        </p>
      ) : null}
      <ReloadOffers offers={listed} busyTab={busy?.startsWith('tab:') ? Number(busy.slice(4)) : null} onReload={(t) => void s.reload(t)} onDismiss={s.dismissOffer} />
    </>
  );
}

function Connection() {
  const { connection } = useStores();
  const s = useStore(connection);
  const now = useNow();
  return (
    <ConnectionPanel
      link={s.link}
      label={linkLabel(s.link, now, s.transport)}
      endpoint={s.endpoint}
      agentTokens={s.agentTokens}
      newToken={s.newToken}
      sharedTabs={s.sharedTabs}
      shareable={s.shareable}
      offline={!consoleReachable(s.transport)}
      busy={s.busy}
      error={s.error}
      onUnpair={() => void s.unpair()}
      onCreateToken={(name) => void s.createAgentToken(name)}
      onRevokeToken={(id) => void s.revokeAgentToken(id)}
      onDismissNewToken={s.dismissNewToken}
      onLoadShareable={() => void s.loadShareable()}
      onShare={(id) => void s.share(id)}
      onUnshare={(id) => void s.unshare(id)}
    />
  );
}

function Settings() {
  const { settings } = useStores();
  const s = useStore(settings);
  const online = useOnline();
  return (
    <SettingsPanel
      settings={s.settings}
      saving={s.saving}
      saved={s.saved}
      offline={!online}
      error={s.error}
      onSaveTimeout={(sec) => void s.saveApprovalTimeout(sec)}
      developerMode={{ busy: s.developerModeBusy, error: s.developerModeError, onSwitch: (on) => void s.setDeveloperMode(on) }}
    />
  );
}

/** The policy editor; the rules are loaded when the page opens and again whenever the console answers again. */
function Policy() {
  const { policy, connection } = useStores();
  const s = useStore(policy);
  const sharedTabs = useStore(connection, (c) => c.sharedTabs);
  const online = useOnline();
  useEffect(() => {
    if (online) void policy.getState().load();
  }, [online, policy]);
  return <PolicyEditor rules={s.rules} sharedTabs={sharedTabs} busy={s.busy} offline={!online} error={s.error} onAdd={s.add} onRemove={(i) => void s.remove(i)} />;
}

/** The active Live Patches; loaded when the page opens and whenever the console answers again, then kept by the `live-patches` event. */
function Patches() {
  const { patches } = useStores();
  const s = useStore(patches);
  const online = useOnline();
  useEffect(() => {
    if (online) void patches.getState().load();
  }, [online, patches]);
  return <LivePatchPanel patches={s.patches} busyTab={s.busyTab} offline={!online} error={s.error} onRevert={(tabId, ids) => void s.revert(tabId, ids)} />;
}

/** The tool inspector (docs/inspector.md): views come from inspectTab and the `inspector` event. */
function Inspector() {
  const { inspector, connection } = useStores();
  const s = useStore(inspector);
  const sharedTabs = useStore(connection, (c) => c.sharedTabs);
  const online = useOnline();
  return (
    <ToolInspector
      sharedTabs={sharedTabs}
      state={s}
      offline={!online}
      onChooseTab={(tabId) => void s.chooseTab(tabId)}
      onInspect={(tabId) => void s.inspect(tabId)}
      onSelect={(key) => void s.select(key)}
      onInvoke={(tool, args) => void s.invoke(tool, args)}
      onRefreshHistory={() => void s.loadHistory()}
    />
  );
}

/**
 * The terminal (xterm and acorn, about a third of the renderer's code) is loaded only when the
 * developer console is first shown, so the other pages start without it (the timeline's first
 * screenful, issue 12 "Measured"; `npm run bench -- timeline`).
 */
const DeveloperConsole = lazy(() => import('./components/DeveloperConsole').then((m) => ({ default: m.DeveloperConsole })));

/**
 * Says that the terminal's chunk could not be loaded (the host went away meanwhile, or the app was
 * rebuilt under a running console): without it the page showed "Loading the terminal…" for ever.
 */
class TerminalLoadFailed extends Component<{ children: ReactNode }, { failed: boolean }> {
  override state = { failed: false };
  static getDerivedStateFromError(): { failed: boolean } {
    return { failed: true };
  }
  override render(): ReactNode {
    if (!this.state.failed) return this.props.children;
    return (
      <p className="error" role="alert" data-testid="developer-console-failed">
        The developer console&apos;s terminal could not be loaded. Reload the console to try again; the other pages work meanwhile.
      </p>
    );
  }
}

/**
 * The developer console (issue 11 item 4), only while developer mode is on: the terminal over the
 * scripts store (the person's lines, Ctrl+C, and every run seen live) and the shared tabs.
 */
function DeveloperConsolePage() {
  const { scripts, connection } = useStores();
  const sharedTabs = useStore(connection, (s) => s.sharedTabs);
  const tabs = useMemo(() => sharedTabs.map((t) => ({ tabId: t.tabId, origin: t.origin, title: t.title })), [sharedTabs]);
  const backend = useMemo(
    () => ({
      run: async (tabId: number, code: string) => {
        const run = await scripts.getState().runLine({ tabId, code });
        return run ?? { refused: scripts.getState().error ?? { code: 'internal', message: 'the console did not answer' } };
      },
      stop: (runId: string) => scripts.getState().stop(runId),
      reload: async (tabId: number) => {
        const reloaded = await scripts.getState().reload(tabId);
        return reloaded ? { ok: true } : { ok: false, message: scripts.getState().error?.message ?? 'the console did not reload it' };
      },
    }),
    [scripts],
  );
  const subscribe = useMemo(
    () => (listener: (run: ScriptRun) => void) =>
      scripts.subscribe((s, before) => {
        for (const run of s.runs) if (!before.runs.includes(run)) listener(run);
      }),
    [scripts],
  );
  useEffect(() => {
    void scripts.getState().load();
  }, [scripts]);
  return (
    <TerminalLoadFailed>
      <Suspense fallback={<p className="muted">Loading the terminal…</p>}>
        <DeveloperConsole tabs={tabs} backend={backend} subscribe={subscribe} />
      </Suspense>
    </TerminalLoadFailed>
  );
}

/** The extension's link state; a button that opens the Connection page. */
function LinkBadge(props: { onOpen(): void }) {
  const { connection } = useStores();
  const link = useStore(connection, (s) => s.link);
  const transport = useStore(connection, (s) => s.transport);
  const label = linkLabel(link, useNow(), transport);
  return (
    <div className="link-badge">
      <span className="link-badge-label" aria-hidden="true">
        Extension
      </span>
      <button
        type="button"
        className={`pill pill-${label.tone} pill-button`}
        data-testid="link-pill"
        title={label.detail}
        aria-label={`Extension link: ${label.text}. Open the Connection page.`}
        onClick={props.onOpen}
      >
        <span className={`dot dot-${label.tone}`} aria-hidden="true" />
        {label.text}
      </button>
    </div>
  );
}

/** The pairing code with Confirm / Reject, on every page while the extension awaits pairing. */
function Pairing() {
  const { connection } = useStores();
  const link = useStore(connection, (s) => s.link);
  const online = useStore(connection, (s) => consoleReachable(s.transport));
  const busy = useStore(connection, (s) => s.busy);
  const error = useStore(connection, (s) => s.pairingError);
  // While the console is unreachable the link's state is unknown: no stale code is offered.
  if (!online || link?.state !== 'awaiting-pairing') return null;
  return <PairingNotice code={link.pairingCode} busy={busy} offline={!online} error={error} onConfirm={(accept) => void connection.getState().confirmPairing(accept)} />;
}

function Banner(props: { transportKind: 'ipc' | 'ws' }) {
  const { connection } = useStores();
  const transport = useStore(connection, (s) => s.transport);
  return props.transportKind === 'ws' ? (
    <>
      <ConsoleBanner transport={transport} />
      <WebHostNotice />
    </>
  ) : null;
}

/**
 * The loopback web host cannot tell the person from a script running in the console's own
 * tab (another extension's content script, for example): said plainly (issue 9 item 4).
 */
function WebHostNotice() {
  return (
    <p className="notice web-host-notice" data-testid="web-host-notice">
      This console runs in a browser tab. A script running in this tab (another extension, for example) cannot be told apart
      from you, and could approve requests for you. For approvals only you can make, use the desktop app (<code>npm start</code>).
    </p>
  );
}


/** The header's mark while developer mode is on: raw JavaScript is possible, and how to end it. */
function DeveloperModeMark() {
  const { settings } = useStores();
  const on = useStore(settings, (s) => s.settings?.developerMode === true);
  const { approvals } = useStores();
  const pending = useStore(approvals, (s) => s.pending.length);
  useEffect(() => {
    document.title = consoleTitle(on, pending);
  }, [on, pending]);
  if (!on) return null;
  return (
    <span className="badge developer-mode" role="status" data-testid="developer-mode-on">
      Developer mode on: approved raw JavaScript can run. Switch it off in Settings.
    </span>
  );
}

/**
 * The whole console. `startSection`: the page shown first (main.tsx gives 'timeline' when the
 * page opened on a deep link, whose query it has already sent); default 'approvals'.
 */
export function App(props: { transportKind: 'ipc' | 'ws'; startSection?: Section }) {
  const [section, setSection] = useState<Section>(props.startSection ?? 'approvals');
  useDeepLinks(useCallback(() => setSection('timeline'), []));
  const { approvals, connection, settings } = useStores();
  const count = useStore(approvals, (s) => s.pending.length);
  // Dimmed only once the console was lost (not during the first connection).
  const lost = useStore(connection, (s) => s.transport === 'reconnecting' || s.transport === 'unauthorized');
  const developerMode = useStore(settings, (s) => s.settings?.developerMode === true);
  // The developer console exists only while developer mode is on: leaving it closes the page.
  useEffect(() => {
    if (!developerMode) setSection((now) => (now === 'developer' ? 'approvals' : now));
  }, [developerMode]);
  const nav: [Section, string][] = [
    ['approvals', 'Approvals'],
    ['timeline', 'Timeline'],
    ['receipts', 'Receipts'],
    ['inspector', 'Tool inspector'],
    ['patches', 'Live Patches'],
    ...(developerMode ? ([['developer', 'Developer console']] as [Section, string][]) : []),
    ['connection', 'Connection'],
    ['policy', 'Policy'],
    ['settings', 'Settings'],
  ];
  return (
    <div className="app">
      <header className="topbar">
        <div className="brand">
          <span className="mark" aria-hidden="true" />
          Echo Console
        </div>
        <DeveloperModeMark />
        <StopEverything />
        <LinkBadge onOpen={() => setSection('connection')} />
      </header>
      <Banner transportKind={props.transportKind} />
      <StopNotices />
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
        <main className={lost ? 'content stale' : 'content'}>
          <Pairing />
          {section === 'approvals' ? <Approvals /> : null}
          {section === 'timeline' ? (
            <>
              <TimelinePage />
              <LedgerTools />
            </>
          ) : null}
          {section === 'receipts' ? <Receipts /> : null}
          {section === 'inspector' ? <Inspector /> : null}
          {section === 'patches' ? <Patches /> : null}
          {section === 'developer' && developerMode ? <DeveloperConsolePage /> : null}
          {section === 'connection' ? <Connection /> : null}
          {section === 'policy' ? <Policy /> : null}
          {section === 'settings' ? <Settings /> : null}
        </main>
      </div>
      <OpenDialog />
    </div>
  );
}
