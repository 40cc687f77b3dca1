/**
 * Requests in flight and the person's Stop (issue 12 item 5; docs/stop.md): the list the console
 * pushes (`in-flight` events), Stop on one request (from the approval dialog once approved, or a
 * timeline row), Stop everything (the header's button), and the tab reloads offered after a Stop
 * that left an outcome unknown. The request the person just approved is `watching`: the dialog
 * stays on it, with its Stop, until it ends.
 */
import { createStore } from 'zustand/vanilla';
import type { ConsoleApi, InFlightView, StopEverythingReport } from '../../shared/ipc';
import type { ErrorInfo } from '../../shared/result';

/**
 * A reload of `tabId` offered because request `requestId` was stopped after dispatch. `unshared`
 * (set by `withSharing` when shown): the tab is not shared now (Stop everything unshared it, or the
 * person did), so the console may not reload it (the core and the extension refuse `tab-not-shared`,
 * docs/stop.md): the person is told to reload it in Chrome, with no button.
 */
export interface ReloadOffer {
  requestId: string;
  tabId: number;
  unshared?: true;
}

/**
 * `offers` as they are to be shown now: each marked `unshared` unless its tab is among `sharedTabIds`
 * (the connection store's shared tabs). Judged at each render, so a tab shared again gets its Reload
 * button back, and one the person unshared after a Stop loses it.
 */
export function withSharing(offers: readonly ReloadOffer[], sharedTabIds: ReadonlySet<number>): ReloadOffer[] {
  return offers.map(({ unshared: _u, ...o }) => (sharedTabIds.has(o.tabId) ? o : { ...o, unshared: true }));
}

export interface InFlightState {
  requests: InFlightView[];
  /** The request the person approved in the dialog: shown running, with Stop, until it ends. */
  watching: string | null;
  /** A Stop (requestId), a Stop everything (`everything`) or a reload (`tab:<id>`) underway. */
  busy: string | null;
  error: ErrorInfo | null;
  /** Reloads offered, newest last (at most 8). */
  offers: ReloadOffer[];
  /** What the last Stop everything did (shown until dismissed). */
  report: StopEverythingReport | null;
  setRequests(list: InFlightView[]): void;
  watch(requestId: string): void;
  unwatch(): void;
  /** Stop one request; true when the console took it. */
  stop(requestId: string): Promise<boolean>;
  stopEverything(): Promise<boolean>;
  reload(tabId: number): Promise<boolean>;
  dismissOffer(tabId: number): void;
  dismissReport(): void;
}

/** A request in flight by id, or undefined. */
export function inFlightById(list: readonly InFlightView[], requestId: string | null): InFlightView | undefined {
  return requestId === null ? undefined : list.find((r) => r.requestId === requestId);
}

/** The reload offers after one stop: one per tab, the newest kept, at most 8 in all. */
function addOffers(offers: ReloadOffer[], more: ReloadOffer[]): ReloadOffer[] {
  const tabs = new Set(more.map((o) => o.tabId));
  return [...offers.filter((o) => !tabs.has(o.tabId)), ...more].slice(-8);
}

/** Create the in-flight store over the console API. */
export function createInFlightStore(api: Pick<ConsoleApi, 'stopRequest' | 'stopEverything' | 'reloadTab'>) {
  return createStore<InFlightState>()((set, get) => {
    /** Clear `busy` only if it is still this act's: Stop everything may have taken it over meanwhile. */
    const idle = (mine: string): { busy: string | null } => ({ busy: get().busy === mine ? null : get().busy });
    return {
      requests: [],
      watching: null,
      busy: null,
      error: null,
      offers: [],
      report: null,
      setRequests(list) {
        set({ requests: [...list].sort((a, b) => a.startedAt - b.startedAt || a.requestId.localeCompare(b.requestId)) });
      },
      watch(requestId) {
        set({ watching: requestId, error: null });
      },
      unwatch() {
        set({ watching: null, error: null });
      },
      async stop(requestId) {
        if (get().busy) return false;
        set({ busy: requestId, error: null });
        const r = await api.stopRequest({ requestId });
        if (!r.ok) {
          set({ ...idle(requestId), error: r.error });
          return false;
        }
        const v = r.value;
        set({ ...idle(requestId), offers: v.afterDispatch ? addOffers(get().offers, [{ requestId: v.requestId, tabId: v.tabId }]) : get().offers });
        return true;
      },
      async stopEverything() {
        // The kill switch waits for nothing: a Stop or a tab reload still waiting for its answer (a
        // reload may wait 10 s on the extension) must not swallow the press. Only a second press is.
        if (get().busy === 'everything') return false;
        set({ busy: 'everything', error: null });
        const r = await api.stopEverything();
        if (!r.ok) {
          set({ busy: null, error: r.error });
          return false;
        }
        // Stop everything also unshares the tabs: their offers are shown without a button (withSharing).
        const more = r.value.stopped.filter((s) => s.afterDispatch).map((s) => ({ requestId: s.requestId, tabId: s.tabId }));
        set({ busy: null, report: r.value, offers: addOffers(get().offers, more) });
        return true;
      },
      async reload(tabId) {
        if (get().busy) return false;
        set({ busy: `tab:${tabId}`, error: null });
        const r = await api.reloadTab({ tabId });
        if (!r.ok) {
          set({ ...idle(`tab:${tabId}`), error: r.error });
          return false;
        }
        set({ ...idle(`tab:${tabId}`), offers: get().offers.filter((o) => o.tabId !== tabId) });
        return true;
      },
      dismissOffer(tabId) {
        set({ offers: get().offers.filter((o) => o.tabId !== tabId) });
      },
      dismissReport() {
        set({ report: null });
      },
    };
  });
}

export type InFlightStore = ReturnType<typeof createInFlightStore>;
