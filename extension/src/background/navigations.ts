/**
 * Navigations that began in a frame (chrome.webNavigation.onBeforeNavigate), and same-document
 * URL changes (onHistoryStateUpdated, onReferenceFragmentUpdated), so that a dispatch
 * can tell that the page left after its tool answered (issue 8 item 5: decide outcomes from
 * what the browser saw, not from the shape of the answer). A tool that starts a navigation and
 * returns, or a `toolautosubmit` form whose submission navigates after the browser answered
 * `null`, has begun that navigation by the time its answer arrives; it may commit later.
 *
 * Bounded: the last navigation start per frame, at most MAX_FRAMES frames (oldest dropped).
 */

/** How many frames' last navigation start are kept. */
export const MAX_FRAMES = 1024;

const starts = new Map<string, { url: string; at: number }>();
const key = (tabId: number, frameId: number) => `${tabId}:${frameId}`;

/** webNavigation.onBeforeNavigate for (tabId, frameId) to `url`, at `at` (ms since the epoch). */
export function noteNavigationStart(tabId: number, frameId: number, url: string, at: number = Date.now()): void {
  const k = key(tabId, frameId);
  starts.delete(k);
  starts.set(k, { url, at });
  while (starts.size > MAX_FRAMES) {
    const oldest = starts.keys().next().value;
    if (oldest === undefined) break;
    starts.delete(oldest);
  }
}

/** The URL of a navigation that began in (tabId, frameId) at or after `since` (ms since the epoch), or null. */
export function navigationSince(tabId: number, frameId: number, since: number): string | null {
  const s = starts.get(key(tabId, frameId));
  return s && s.at >= since ? s.url : null;
}

type CommitListener = (tabId: number, frameId: number, documentId: string, url: string) => void;
const commitListeners = new Set<CommitListener>();

/** webNavigation.onCommitted: a document committed in (tabId, frameId). */
export function noteCommit(tabId: number, frameId: number, documentId: string, url: string): void {
  for (const l of [...commitListeners]) {
    try {
      l(tabId, frameId, documentId, url);
    } catch {
      /* a listener's failure must not stop the others */
    }
  }
}

/**
 * Resolves with the URL of the first document other than `documentId` that commits in (tabId,
 * frameId): the document a dispatch waits on has gone (a page kept in the back/forward cache keeps
 * its message port open, so no error would ever come). `cancel` stops listening.
 */
export function documentLeaves(target: { tabId: number; frameId: number; documentId: string }): { left: Promise<string>; cancel(): void } {
  let listener: CommitListener | undefined;
  const left = new Promise<string>((resolve) => {
    listener = (tabId, frameId, documentId, url) => {
      if (tabId === target.tabId && frameId === target.frameId && documentId !== target.documentId) resolve(url);
    };
    commitListeners.add(listener);
  });
  return { left, cancel: () => void (listener && commitListeners.delete(listener)) };
}
