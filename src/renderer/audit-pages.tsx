/**
 * The audit viewer's containers (issue 12): the receipts list with Verify ledger, the request
 * timeline, export and retention under it, and the deep links that open the timeline. They
 * connect the stores to the presentational components; the layout is App.tsx.
 */
import { useCallback, useEffect, useMemo } from 'react';
import { useStore } from 'zustand';
import { LedgerPanel } from './components/LedgerPanel';
import { ReceiptList } from './components/ReceiptList';
import { Timeline } from './components/Timeline';
import { parseRoute, routeFragment } from './route';
import { StopRequest } from './stop-request';
import { sessionFromFragment } from './transport/token';
import type { LedgerFilter } from '../shared/ledger-export';
import { useOnline, useStores } from './use-stores';

/** The receipts list with Verify ledger; its first page is loaded when the page is first shown (and again after a lost connection, stores/index.ts). */
export function Receipts() {
  const { receipts } = useStores();
  const s = useStore(receipts);
  const online = useOnline();
  useEffect(() => {
    const r = receipts.getState();
    if (online && !r.loaded && !r.loading) void r.loadFirst();
  }, [receipts, online]);
  return (
    <ReceiptList
      items={s.items}
      loading={s.loading}
      hasMore={s.nextCursor !== null}
      error={s.error}
      verify={s.verify}
      verifying={s.verifying}
      verifyError={s.verifyError}
      verifyProgress={s.verifyProgress}
      offline={!online}
      expanded={s.expanded}
      search={s.search}
      newerHidden={s.newerHidden}
      onMore={() => void s.loadMore()}
      onShowNewest={() => void s.loadFirst()}
      onVerify={() => void s.runVerify()}
      onToggle={s.toggle}
      onFind={(id) => void s.find(id)}
      onClearSearch={s.clearSearch}
    />
  );
}

/** The request timeline; loaded when first shown (a deep link loads it itself). */
export function TimelinePage() {
  const { timeline, connection } = useStores();
  const s = useStore(timeline);
  const tokens = useStore(connection, (c) => c.agentTokens);
  const online = useOnline();
  useEffect(() => {
    const t = timeline.getState();
    if (!t.loaded && !t.loading) void t.setFilter(t.filter);
  }, [timeline]);
  // Stable callbacks: the rows are memoized (components/Timeline.tsx).
  const openRequest = useCallback((id: string) => void timeline.getState().openRequest(id), [timeline]);
  const loadMore = useCallback(() => void timeline.getState().loadMore(), [timeline]);
  const renderStop = useCallback((id: string) => <StopRequest requestId={id} />, []);
  return (
    <Timeline
      filter={s.filter}
      query={s.query}
      rows={s.rows}
      loading={s.loading}
      loaded={s.loaded}
      hasMore={s.nextCursor !== null}
      error={s.error}
      total={s.total}
      countedQuery={s.countedQuery}
      expanded={s.expanded}
      trails={s.trails}
      focusReceipt={s.focusReceipt}
      notice={s.notice}
      newerHidden={s.newerHidden}
      offline={!online}
      agents={(tokens ?? []).map((t) => t.name)}
      onFilter={(f) => void s.setFilter(f)}
      onMore={loadMore}
      onShowNewest={() => void s.showNewest()}
      onToggle={s.toggle}
      onOpenRequest={openRequest}
      renderStop={renderStop}
    />
  );
}

/**
 * Export and retention (./components/LedgerPanel.tsx), under the timeline: the export takes the
 * timeline's current filters, applied receipt by receipt (docs/ledger.md, "Export"); a request's
 * `open` state is not a receipt's, so that one filter is left out of the export.
 */
export function LedgerTools() {
  const { ledger, settings, timeline } = useStores();
  const s = useStore(ledger);
  const current = useStore(timeline, (t) => t.filter);
  const retentionDays = useStore(settings, (x) => x.settings?.retentionDays);
  const online = useOnline();
  const filter = useMemo((): LedgerFilter => {
    const { outcome, ...rest } = current;
    return outcome === undefined || outcome === 'open' ? rest : { ...rest, outcome };
  }, [current]);
  return (
    <LedgerPanel
      filter={filter}
      run={s.run}
      starting={s.starting}
      exportError={s.exportError}
      retentionDays={retentionDays}
      retentionSaving={s.retentionSaving}
      retentionSaved={s.retentionSaved}
      retentionError={s.retentionError}
      offline={!online}
      onExport={(format) => void s.startExport(filter, format)}
      onCancel={() => void s.cancelExport()}
      onSaveRetention={(days) => void s.saveRetention(days)}
    />
  );
}

/**
 * Follow a deep link (src/renderer/route.ts) whenever the fragment changes; the one the page
 * opened with is followed before the first render (main.tsx), so its query goes out with the
 * socket's hello. A link pasted into the web host's tab loses the session id from the
 * fragment; it is put back from the previous URL, so a reload still finds the session.
 */
export function useDeepLinks(showTimeline: () => void): void {
  const { timeline } = useStores();
  useEffect(() => {
    const onHash = (e: HashChangeEvent) => {
      const route = parseRoute(window.location.hash);
      if (!route) return;
      const sid = sessionFromFragment(window.location.hash) ?? sessionFromFragment(new URL(e.oldURL).hash);
      if (sid && !sessionFromFragment(window.location.hash)) window.history.replaceState(null, '', window.location.pathname + window.location.search + routeFragment(route, sid));
      showTimeline();
      void timeline.getState().follow(route);
    };
    window.addEventListener('hashchange', onHash);
    return () => window.removeEventListener('hashchange', onHash);
  }, [timeline, showTimeline]);
}
