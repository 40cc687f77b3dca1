/**
 * Effects outside the call (issue 8, item 8; docs/extension.md, "Effects outside the call"):
 * what the browser lets the service worker see a page do while one of its tools runs, without
 * the `debugger` permission.
 *  - New tabs: webNavigation.onCreatedNavigationTarget names the tab and frame a new tab was
 *    opened from (`target=_blank` links and forms, `window.open`), with the URL it was created
 *    for. Those that come from the dispatch's tab while it runs are listed (stripped, at most
 *    MAX_OPENED_TABS_LISTED). The new tab is not shared: sharing is the person's act, per tab.
 *  - A page that stops answering: when a call times out, the sign module of the tab's top
 *    document is asked whether it answers (sign.ts `answers`); a page whose script waits on a
 *    JavaScript dialog (alert, confirm, prompt, beforeunload) cannot (nor can a busy one).
 *  - Downloads and file choosers have no event here (chrome.downloads needs the `downloads`
 *    permission, which this extension does not ask for; a file chooser has no extension event).
 * The watch also holds the sign's "running" state for the dispatch's tab.
 *
 * Bounded: at most MAX_RECENT new tabs remembered, for at most RECENT_MS.
 */
import { MAX_OPENED_TABS_LISTED, type InvocationEffects } from '../../../src/shared/types';
import { stripUrl } from '../../../src/shared/url';
import type { DispatchTarget } from '../../../src/shared/protocol';
import type { EffectWatch } from './dispatch';

/** New tabs remembered (oldest dropped). */
export const MAX_RECENT = 256;
/** How long a new tab is remembered (ms): longer than any dispatch may run (dispatch.ts MAX_DISPATCH_TIMEOUT_MS). */
export const RECENT_MS = 11 * 60_000;
/** How long the liveness probe of a page that timed out waits (ms). */
export const PROBE_MS = 1_000;

interface NewTab {
  sourceTabId: number;
  tabId: number;
  url: string;
  /** ms since the epoch (the event's timeStamp). */
  at: number;
}

const recent: NewTab[] = [];

/** webNavigation.onCreatedNavigationTarget: tab `tabId` was opened from `sourceTabId` for `url`, at `at` (ms since the epoch). */
export function noteNewTab(sourceTabId: number, tabId: number, url: string, at: number = Date.now()): void {
  recent.push({ sourceTabId, tabId, url, at });
  const old = Date.now() - RECENT_MS;
  while (recent.length > MAX_RECENT || (recent.length > 0 && (recent[0] as NewTab).at < old)) recent.shift();
}

/** The new tabs opened from `tabId` at or after `since` (ms since the epoch), oldest first. */
export function newTabsSince(tabId: number, since: number): NewTab[] {
  return recent.filter((t) => t.sourceTabId === tabId && t.at >= since);
}

/** What a watch needs from the sign (sign.ts `Signs`). */
export interface SignHooks {
  running(tabId: number): () => void;
  answers(tabId: number, timeoutMs: number): Promise<boolean>;
}

/**
 * Start watching one dispatch in `target`'s tab: the sign shows "running" until `finish`, which
 * answers the new tabs opened from that tab since `startedAt` (ms since the epoch; default now)
 * and, after a timeout, whether the page still answers.
 */
export function watchEffects(target: DispatchTarget, signs: SignHooks, startedAt: number = Date.now()): EffectWatch {
  // webNavigation's timeStamp and Date.now() are the same clock; a little slack for their rounding.
  const since = startedAt - 1;
  const end = signs.running(target.tabId);
  return {
    async finish(timedOut) {
      try {
        const effects: InvocationEffects = {};
        const tabs = newTabsSince(target.tabId, since);
        if (tabs.length > 0) {
          effects.openedTabs = tabs.slice(0, MAX_OPENED_TABS_LISTED).map((t) => ({ url: stripUrl(t.url) }));
          if (tabs.length > MAX_OPENED_TABS_LISTED) effects.openedTabsOmitted = tabs.length - MAX_OPENED_TABS_LISTED;
        }
        if (timedOut && !(await signs.answers(target.tabId, PROBE_MS).catch(() => false))) effects.pageUnresponsive = true;
        return Object.keys(effects).length > 0 ? effects : undefined;
      } finally {
        end();
      }
    },
  };
}
