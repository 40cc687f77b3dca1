/**
 * The exact URLs of a document, read in a content module (isolated world):
 * `location.href` of the frame and `window.top.location.href` of the tab's top
 * document. Exact means nothing stripped, fragment included: the grant's
 * `urlHash` (src/shared/canonical.ts) is over these strings, so a same-document
 * `pushState`, `replaceState` or fragment change (same documentId, docs/browser-facts.md, "Same-document navigation")
 * is seen. The top is readable only from a same-origin frame; a cross-origin
 * top gives `null` (the faculties act only in same-origin frames anyway).
 * Synchronous on purpose: a caller compares right before it acts, in the same task.
 */
import type { PageUrlsValue } from './messages';

/** The exact tab and frame URLs now, or `null` when the top document is not readable from this frame. */
export function readPageUrls(): PageUrlsValue | null {
  try {
    const frame = String(location.href);
    const top = window.top;
    if (!top) return null;
    const tab = top === window ? frame : String(top.location.href);
    return typeof tab === 'string' && tab !== '' ? { tab, frame } : null;
  } catch {
    return null; // a cross-origin top throws SecurityError
  }
}

/** Whether the document's URLs are still exactly `expected`. */
export function sameUrls(expected: PageUrlsValue): boolean {
  const now = readPageUrls();
  return now !== null && now.tab === expected.tab && now.frame === expected.frame;
}
