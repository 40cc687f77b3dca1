/**
 * Tabs, frames and documents, and the sharing rules (docs/extension.md,
 * "Sharing"). The person shares a tab from the popup or the console; sharing
 * ends when the tab closes or is replaced, when the person stops it, and when
 * the top-level document commits a different origin. A tab is identified by
 * chrome.tabs, its documents by chrome.webNavigation (`documentId`, Chrome 106+:
 * developer.chrome.com/docs/extensions/reference/api/webNavigation).
 *
 * Nothing here touches a tab that is not shared, except reading the URL and
 * title chrome.tabs reports (to refuse or list it).
 */
import { err, ok, type Result } from '../../../src/shared/result';
import type { ExtensionEvent, UnshareReason } from '../../../src/shared/protocol';
import type { SharedTab } from '../../../src/shared/types';
import { originOf, shareability, stripUrl } from '../../../src/shared/url';
import type { SharingStore } from './store';

/**
 * The bundle path inside extension/dist of the content module built from
 * extension/src/content/<module>.ts (vite.extension.config.ts builds every file there).
 */
export function contentModuleFile(module: string): string {
  return `content/${module}.js`;
}

/** The WebMCP content module (discovery, dispatch, the tool-change watcher), injected into every same-origin frame of a shared tab. */
export const WEBMCP_MODULE = 'webmcp';

/** A frame as webNavigation.getAllFrames reports it. */
export interface FrameInfo {
  frameId: number;
  parentFrameId: number;
  documentId: string;
  url: string;
  origin: string;
  documentLifecycle: string;
  frameType: string;
}

/** The frames of a tab whose document is live (`active`), top first. Prerendered, cached and dying documents are left out. */
export async function liveFrames(tabId: number): Promise<FrameInfo[]> {
  let frames: chrome.webNavigation.GetAllFrameResultDetails[] | null = null;
  try {
    frames = await chrome.webNavigation.getAllFrames({ tabId });
  } catch {
    return [];
  }
  return (frames ?? [])
    .filter((f) => f.documentLifecycle === 'active' && f.frameType !== 'fenced_frame' && !f.errorOccurred)
    .map((f) => ({
      frameId: f.frameId,
      parentFrameId: f.parentFrameId,
      documentId: f.documentId,
      url: f.url,
      origin: originOf(f.url),
      documentLifecycle: f.documentLifecycle,
      frameType: f.frameType,
    }))
    .sort((a, b) => a.frameId - b.frameId);
}

/**
 * `about:blank` (with or without a fragment) or `about:srcdoc`. Such a document's origin is
 * whoever created or navigated it (HTML, "determining the origin"): the parent for an empty or
 * srcdoc iframe, but another site that navigated it there otherwise, and opaque when sandboxed.
 * webNavigation cannot tell which, so these frames are never injected (their origin stays
 * "null" here); discovery does not count them as cross-origin violations either.
 */
export function isAboutFrameUrl(url: string): boolean {
  return /^about:(blank|srcdoc)(#.*)?$/.test(url);
}

/** The document a frame holds now, or null (webNavigation.getFrame). */
export async function frameDocument(tabId: number, frameId: number): Promise<{ documentId: string; url: string; origin: string } | null> {
  try {
    const f = await chrome.webNavigation.getFrame({ tabId, frameId });
    if (!f || f.documentLifecycle !== 'active') return null;
    return { documentId: f.documentId, url: f.url, origin: originOf(f.url) };
  } catch {
    return null;
  }
}

/**
 * Inject a content module (default: the WebMCP one) into these documents
 * (idempotent: each module guards against a second instance). `documentIds`
 * targets exactly those documents, so a frame that navigated meanwhile is not
 * injected (chrome.scripting, Chrome 106+).
 * @returns the documentIds that were injected.
 */
export async function injectInto(tabId: number, documentIds: string[], module: string = WEBMCP_MODULE): Promise<Set<string>> {
  const done = new Set<string>();
  await Promise.all(
    documentIds.map(async (id) => {
      try {
        await chrome.scripting.executeScript({ target: { tabId, documentIds: [id] }, files: [contentModuleFile(module)] });
        done.add(id);
      } catch {
        /* the document went away or refuses scripting: it is simply not listed */
      }
    }),
  );
  return done;
}

/** The refusal for an incognito tab (issue 12 item 3; docs/extension.md, "Incognito"). */
export const INCOGNITO_REFUSAL = 'this tab is in an incognito window: Echo Console never shares, acts in or records incognito tabs';

/** Whether Chrome reports the tab as incognito (`chrome.tabs.Tab.incognito`). */
export function isIncognito(tab: Pick<chrome.tabs.Tab, 'incognito'>): boolean {
  return tab.incognito === true;
}

/** What the sharing module tells the rest of the worker. */
export interface SharingEvents {
  emit(e: ExtensionEvent): void;
}

/** Sharing: share, stop, follow navigations, reconcile after a worker restart. */
export class Sharing {
  private tabsChangedTimer: ReturnType<typeof setTimeout> | undefined;
  /** Shares ended since the last announcement, and why (the console receipts them with that actor). */
  private readonly ended = new Map<number, UnshareReason>();

  constructor(
    readonly store: SharingStore,
    private readonly events: SharingEvents,
  ) {}

  /** The shared tabs (what `list-tabs` answers). */
  list(): Promise<SharedTab[]> {
    return this.store.list();
  }

  /** Announce the shared tab list (debounced 100 ms: titles can change often), with the shares that ended since and why. */
  announce(): void {
    if (this.tabsChangedTimer !== undefined) clearTimeout(this.tabsChangedTimer);
    this.tabsChangedTimer = setTimeout(() => {
      this.tabsChangedTimer = undefined;
      void this.store.list().then((tabs) => {
        const ended = [...this.ended].map(([tabId, reason]) => ({ tabId, reason }));
        this.ended.clear();
        this.events.emit(ended.length > 0 ? { kind: 'tabs-changed', tabs, ended } : { kind: 'tabs-changed', tabs });
      });
    }, 100);
  }

  /**
   * Share a tab. Refused (`not-shareable`, with the reason) for anything but an
   * http(s) page that is not the Web Store (src/shared/url.ts `shareability`);
   * `no-such-tab` when the tab or its top frame cannot be read.
   */
  async share(tabId: number): Promise<Result<SharedTab>> {
    if (!Number.isInteger(tabId) || tabId < 0) return err('bad-request', 'tabId must be a tab ID');
    let tab: chrome.tabs.Tab;
    try {
      tab = await chrome.tabs.get(tabId);
    } catch {
      return err('no-such-tab', 'there is no such tab');
    }
    // Defence in depth behind the manifest's "incognito": "not_allowed": should this
    // extension ever see an incognito tab, it neither shares, acts in nor records it.
    if (isIncognito(tab)) return err('not-shareable', INCOGNITO_REFUSAL, { reason: 'incognito' });
    const top = await frameDocument(tabId, 0);
    const url = top?.url || tab.url || tab.pendingUrl || '';
    const verdict = shareability(url);
    if (!verdict.ok) return err('not-shareable', `this tab cannot be shared (${verdict.reason})`, { reason: verdict.reason });
    if (!top) return err('no-such-tab', 'the tab has no loaded document yet');
    const existing = await this.store.get(tabId);
    const shared: SharedTab = {
      tabId,
      windowId: tab.windowId,
      title: tab.title ?? '',
      url: stripUrl(url),
      origin: originOf(url),
      documentId: top.documentId,
      sharedAt: existing?.sharedAt ?? Date.now(),
    };
    await this.store.put(shared);
    this.announce();
    void this.attachWatchers(tabId, shared.origin);
    return ok(shared);
  }

  /** Stop sharing a tab; the content scripts are told to stop watching. Answers whether it was shared. */
  async unshare(tabId: number, reason: UnshareReason = 'person'): Promise<boolean> {
    const was = await this.store.remove(tabId);
    if (was) {
      this.ended.set(tabId, reason);
      this.announce();
      for (const f of await liveFrames(tabId)) {
        chrome.tabs.sendMessage(tabId, { type: 'echo:webmcp:detach' }, { frameId: f.frameId, documentId: f.documentId }).catch(() => undefined);
      }
    }
    return was;
  }

  /** Inject the content script into the tab's same-origin frames so `toolchange` is watched. */
  async attachWatchers(tabId: number, origin: string): Promise<void> {
    const frames = (await liveFrames(tabId)).filter((f) => f.origin === origin);
    await injectInto(tabId, frames.map((f) => f.documentId));
  }

  /** Every tab that could be shared, for the console's share picker (URLs stripped; `sharedAt` 0 when not shared). */
  async shareable(): Promise<SharedTab[]> {
    const tabs = await chrome.tabs.query({});
    const shared = new Map((await this.store.list()).map((t) => [t.tabId, t]));
    const out: SharedTab[] = [];
    for (const t of tabs) {
      if (t.id === undefined || t.id < 0 || isIncognito(t) || !shareability(t.url).ok) continue;
      const s = shared.get(t.id);
      out.push(s ?? { tabId: t.id, windowId: t.windowId, title: t.title ?? '', url: stripUrl(t.url ?? ''), origin: originOf(t.url), documentId: '', sharedAt: 0 });
    }
    return out;
  }

  /**
   * A top-level document committed in a tab (webNavigation.onCommitted, frameId 0).
   * Same origin: the share follows the tab (new documentId) and `navigated` is emitted.
   * Another origin (or a page that may not be shared): sharing ends.
   */
  async topCommitted(tabId: number, documentId: string, url: string): Promise<void> {
    const cur = await this.store.get(tabId);
    if (!cur) return;
    if (originOf(url) !== cur.origin || !shareability(url).ok) {
      await this.unshare(tabId, shareability(url).ok ? 'left-origin' : 'not-shareable');
      return;
    }
    // The title was the old document's: until the new one says (tabs.onUpdated, or the read at
    // DOMContentLoaded in documentReady), it has none. A page without <title> never fires a
    // title change, so keeping the old one showed the previous page's title.
    await this.store.update(tabId, { documentId, url: stripUrl(url), title: '' });
    this.events.emit({ kind: 'navigated', tabId, frameId: 0, documentId, url: stripUrl(url) });
    this.announce();
  }

  /** A same-document URL change (history.pushState, fragment): same documentId, new URL. */
  async sameDocumentNavigated(tabId: number, frameId: number, documentId: string, url: string): Promise<void> {
    const cur = await this.store.get(tabId);
    if (!cur) return;
    if (originOf(url) !== cur.origin) {
      if (frameId === 0) await this.unshare(tabId, 'left-origin');
      return;
    }
    if (frameId === 0) {
      await this.store.update(tabId, { url: stripUrl(url), documentId });
      this.announce();
    }
    this.events.emit({ kind: 'navigated', tabId, frameId, documentId, url: stripUrl(url) });
  }

  /** A subframe committed a document: announce it when it is same-origin (the agent never sees the others). */
  async subframeCommitted(tabId: number, frameId: number, documentId: string, url: string): Promise<void> {
    const cur = await this.store.get(tabId);
    if (!cur || originOf(url) !== cur.origin) return;
    this.events.emit({ kind: 'navigated', tabId, frameId, documentId, url: stripUrl(url) });
  }

  /** A document finished parsing in a shared tab: watch it for tool changes if it is same-origin. */
  async documentReady(tabId: number, documentId: string, url: string): Promise<void> {
    const cur = await this.store.get(tabId);
    if (!cur || originOf(url) !== cur.origin) return;
    if (documentId === cur.documentId) {
      // The top document is parsed: its <title> (or Chrome's stand-in for none) is known now.
      try {
        const tab = await chrome.tabs.get(tabId);
        if (typeof tab.title === 'string') await this.titleChanged(tabId, tab.title);
      } catch {
        /* the tab went away: onRemoved ends the share */
      }
    }
    await injectInto(tabId, [documentId]);
  }

  /** Title changed: keep the shared record's title current. */
  async titleChanged(tabId: number, title: string): Promise<void> {
    if (await this.store.update(tabId, { title })) this.announce();
  }

  /**
   * After a worker start: drop shares whose tab is gone or whose top document
   * is now at another origin; refresh documentIds. Events during the worker's
   * sleep still woke it (listeners are registered at top level), so this is a
   * safety net, not the main path.
   */
  async reconcile(): Promise<void> {
    for (const s of await this.store.list()) {
      const top = await frameDocument(s.tabId, 0);
      let alive = true;
      try {
        await chrome.tabs.get(s.tabId);
      } catch {
        alive = false;
      }
      if (!alive || !top || top.origin !== s.origin) await this.unshare(s.tabId, alive && top ? 'left-origin' : 'tab-closed');
      else if (top.documentId !== s.documentId) await this.store.update(s.tabId, { documentId: top.documentId, url: stripUrl(top.url) });
    }
  }
}
