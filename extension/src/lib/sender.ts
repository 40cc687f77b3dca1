/**
 * The ONE place that reads `chrome.runtime.MessageSender` (docs/design.md, "Conventions" §6;
 * bitwarden `apps/browser/src/autofill/security/sender.ts`). Everything else in
 * the extension gets a SenderClass and decides from it.
 *
 * Chrome sets the sender fields in the browser process, not from the message:
 * `id` (the sending extension), `origin` (the sending frame's origin, which
 * stays right where `url` does not, e.g. about:blank or srcdoc frames),
 * `tab`, `frameId` and `documentId` (developer.chrome.com/docs/extensions/reference/api/runtime#type-MessageSender).
 * `url` alone is never trusted: it is only compared with `origin`.
 */

/** Who sent a runtime message. */
export type SenderClass =
  /** Our own popup page (also when opened in a tab). */
  | { kind: 'popup' }
  /** Our content script in a web page's frame. Sharing and origin are checked by the caller. */
  | { kind: 'content'; tabId: number; frameId: number; documentId: string; origin: string }
  | { kind: 'unknown'; reason: string };

/** The fields of `chrome.runtime.MessageSender` the classifier reads (a subset, for tests). */
export interface SenderLike {
  id?: string;
  url?: string;
  origin?: string;
  tab?: { id?: number };
  frameId?: number;
  documentId?: string;
}

/** What "ours" means: the extension's ID and the popup's path inside it. */
export interface SelfIdentity {
  extensionId: string;
  /** e.g. `/popup/popup.html`. */
  popupPath: string;
}

/**
 * Classify one message sender.
 * - `popup`: sent by this extension (`id`), from the extension's own origin
 *   (`origin` = `chrome-extension://<id>`), from the page at `popupPath`
 *   (`url` checked only after `origin` agrees).
 * - `content`: sent by this extension from a web frame: an `http(s)` origin,
 *   a numeric tab ID and frame ID and a `documentId`.
 * - anything else (other extensions, our other pages, missing fields): `unknown`.
 */
export function classifySender(sender: SenderLike | undefined | null, self: SelfIdentity): SenderClass {
  if (!sender || typeof sender !== 'object') return { kind: 'unknown', reason: 'no sender' };
  if (sender.id !== self.extensionId) return { kind: 'unknown', reason: 'another extension' };
  const ownOrigin = `chrome-extension://${self.extensionId}`;
  if (sender.origin === ownOrigin) {
    let url: URL;
    try {
      url = new URL(sender.url ?? '');
    } catch {
      return { kind: 'unknown', reason: 'extension page without a URL' };
    }
    // protocol + host rather than url.origin: WHATWG URL gives non-special schemes an opaque origin outside Chrome.
    if (url.protocol === 'chrome-extension:' && url.host === self.extensionId && url.pathname === self.popupPath) return { kind: 'popup' };
    return { kind: 'unknown', reason: 'another extension page' };
  }
  const origin = sender.origin;
  if (typeof origin !== 'string' || !/^https?:\/\//.test(origin)) return { kind: 'unknown', reason: 'not a web origin' };
  const tabId = sender.tab?.id;
  const { frameId, documentId } = sender;
  if (typeof tabId !== 'number' || tabId < 0) return { kind: 'unknown', reason: 'no tab' };
  if (typeof frameId !== 'number' || frameId < 0) return { kind: 'unknown', reason: 'no frame' };
  if (typeof documentId !== 'string' || documentId === '') return { kind: 'unknown', reason: 'no document' };
  return { kind: 'content', tabId, frameId, documentId, origin };
}
