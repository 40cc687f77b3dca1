/**
 * The service worker (ES module). Registers every Chrome event listener
 * synchronously at top level, as MV3 requires for events to wake the worker
 * (developer.chrome.com/docs/extensions/develop/concepts/service-workers/events),
 * builds the worker core (core.ts: link-level ops and the faculty registry),
 * and connects it to the console link.
 *
 * Message senders are classified in ONE place (lib/sender.ts); this file only
 * routes by the class it gets.
 */
import { LIMITS } from '../../../src/shared/limits';
import type { ConsoleRequest, ExtensionEvent } from '../../../src/shared/protocol';
import type { Result } from '../../../src/shared/result';
import { classifySender } from '../lib/sender';
import type { FromContent, FromPopup, PopupLinkState } from '../lib/messages';
import { createWorkerCore } from './core';
import { startChromeLink } from './link-chrome';
import type { ExtLink } from './link';
import { handlePopup } from './popup';
import { popupLinkState } from '../lib/link-state';
import { stats } from './stats';
import { noteCommit, noteNavigationStart } from './navigations';
import { Signs } from './sign';
import { noteNewTab, watchEffects } from './effects';

/** Where the popup lives inside the extension (manifest `action.default_popup`). */
const POPUP_PATH = '/popup/popup.html';

// ---- the link to the console ------------------------------------------------------------

/** Set once the link has started (below, still synchronously at top level). */
let link: ExtLink | null = null;

// ---- events to the console, and to listeners inside the worker (tests) --------------

const listeners = new Set<(e: ExtensionEvent) => void>();

/** The sign in each shared tab's page and on the toolbar (sign.ts), driven by the worker's own events. */
const signs = new Signs();

function emit(e: ExtensionEvent): void {
  if (e.kind === 'tabs-changed') signs.tabsListed(e.tabs);
  else if (e.kind === 'navigated' && e.frameId === 0) signs.topDocument(e.tabId);
  try {
    link?.sendEvent(e);
  } catch {
    /* a dropped link never replays; the console rediscovers on reconnect */
  }
  for (const l of listeners) {
    try {
      l(e);
    } catch {
      /* a listener's failure is its own */
    }
  }
}

// ---- the worker core and its faculties ---------------------------------------------------------------------

// Content scripts share the extension's storage unless told otherwise: by default only
// storage.session is closed to them (developer.chrome.com/docs/extensions/reference/api/storage,
// "Storage areas"; setAccessLevel works on storage.local in Chromium 156: e2e/trust-key-access).
// storage.local holds the pairing key, and the content modules run in pages' renderer
// processes, so a compromised renderer could read it: close both areas (issue 9 item 9;
// e2e/trust-key-access). The level is a persisted preference, set again at every start.
void chrome.storage.session.setAccessLevel({ accessLevel: 'TRUSTED_CONTEXTS' }).catch(() => undefined);
void chrome.storage.local.setAccessLevel({ accessLevel: 'TRUSTED_CONTEXTS' }).catch(() => undefined);

const faculties = createWorkerCore({
  storage: chrome.storage.session,
  // The ledger witness must outlive the browser session: storage.local, closed to content scripts above.
  witnessStorage: chrome.storage.local,
  verifyGrant: async (g) => (link ? link.verifyGrant(g) : false),
  emit,
  watch: (target, since) => watchEffects(target, signs, since),
  // The console's pending count and developer mode, on the toolbar badge (sign.ts).
  consoleState: (st) => signs.consoleState(st),
});

function linkState(): PopupLinkState {
  return popupLinkState(link ? link.state() : null, Date.now(), LIMITS.heartbeatTimeoutMs);
}

/**
 * The console's requests. The link handles `cancel` itself by aborting the
 * `signal` of the request it names (and aborts every in-flight signal when the
 * link drops); an aborted dispatch aborts the page's run (WebMCP: executeTool's signal).
 */
link = startChromeLink({
  onRequest: (req, ctx) => faculties.handleRequest(req, ctx.signal),
  // Without the console nobody can answer a count: the badge drops it (the console sends it again on reconnect).
  onState: (st) => {
    if (st.state !== 'connected') signs.consoleState({ pending: 0, developerMode: false });
  },
});

// ---- runtime messages: popup and content scripts ----------------------------------------

chrome.runtime.onMessage.addListener((msg: unknown, sender, sendResponse: (r: Result<unknown>) => void) => {
  const who = classifySender(sender, { extensionId: chrome.runtime.id, popupPath: POPUP_PATH });
  if (who.kind === 'popup') {
    handlePopup(msg as FromPopup, { faculties, linkState, link }).then(sendResponse, (e: unknown) =>
      sendResponse({ ok: false, error: { code: 'internal', message: e instanceof Error ? e.message : String(e) } }),
    );
    return true;
  }
  if (who.kind === 'content') {
    if ((msg as FromContent)?.type === 'echo:webmcp:tools-changed') void faculties.toolsChanged(who);
    return false;
  }
  return false; // someone else: ignored, unanswered
});

// ---- tabs and navigation ------------------------------------------------------------------

chrome.tabs.onRemoved.addListener((tabId) => void faculties.sharing.unshare(tabId, 'tab-closed'));
chrome.tabs.onReplaced.addListener((_added, removed) => void faculties.sharing.unshare(removed, 'tab-closed'));
chrome.tabs.onUpdated.addListener((tabId, change) => {
  if (typeof change.title === 'string') void faculties.sharing.titleChanged(tabId, change.title);
});

function isTopLevel(d: { frameId: number; parentFrameId: number; frameType?: string; documentLifecycle?: string }): boolean {
  return d.frameId === 0 || (d.parentFrameId === -1 && d.frameType === 'outermost_frame' && d.documentLifecycle === 'active');
}

chrome.webNavigation.onCommitted.addListener((d) => {
  if (d.documentLifecycle === 'prerender') return; // not shown yet; activation is seen as a commit/replace
  noteCommit(d.tabId, d.frameId, d.documentId, d.url);
  if (isTopLevel(d)) void faculties.sharing.topCommitted(d.tabId, d.documentId, d.url);
  else if (d.frameType === 'sub_frame') void faculties.sharing.subframeCommitted(d.tabId, d.frameId, d.documentId, d.url);
});
// A navigation that begins after a tool answered tells the dispatch the page left (navigations.ts).
chrome.webNavigation.onBeforeNavigate.addListener((d) => noteNavigationStart(d.tabId, d.frameId, d.url, d.timeStamp));
chrome.webNavigation.onHistoryStateUpdated.addListener((d) => {
  noteNavigationStart(d.tabId, d.frameId, d.url, d.timeStamp);
  void faculties.sharing.sameDocumentNavigated(d.tabId, d.frameId, d.documentId, d.url);
});
chrome.webNavigation.onReferenceFragmentUpdated.addListener((d) => {
  noteNavigationStart(d.tabId, d.frameId, d.url, d.timeStamp);
  void faculties.sharing.sameDocumentNavigated(d.tabId, d.frameId, d.documentId, d.url);
});
chrome.webNavigation.onDOMContentLoaded.addListener((d) => {
  if (d.documentLifecycle === 'active') void faculties.sharing.documentReady(d.tabId, d.documentId, d.url);
  if (d.documentLifecycle === 'active' && d.frameId === 0) signs.topDocument(d.tabId);
});
// A tab opened from another (target=_blank, window.open): a dispatch running there lists it (effects.ts).
chrome.webNavigation.onCreatedNavigationTarget.addListener((d) => noteNewTab(d.sourceTabId, d.tabId, d.url, d.timeStamp));

// A restarted worker checks what it remembers against what the browser shows, and draws the signs again.
void faculties.sharing.reconcile().then(async () => signs.tabsListed(await faculties.sharing.list()));

// ---- in-worker handle (tests and debugging) --------------------------------------------------

/**
 * `globalThis.echoConsole`: the worker core as the link calls it, for
 * end-to-end tests through Playwright's `worker.evaluate`. It is reachable only
 * by code already running inside this service worker (DevTools, CDP), which
 * could call chrome.* directly anyway, so it grants nothing new: grants are
 * still MAC-checked with the pairing key.
 */
(globalThis as unknown as { echoConsole: unknown }).echoConsole = {
  handleRequest: (req: ConsoleRequest) => faculties.handleRequest(req),
  onEvent(listener: (e: ExtensionEvent) => void): () => void {
    listeners.add(listener);
    return () => listeners.delete(listener);
  },
  linkState,
  stats, // the check counters (stats.ts), for the agent benchmark's validity check
};

