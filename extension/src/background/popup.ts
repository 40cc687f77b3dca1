/**
 * The service worker's side of the popup: what it shows (link state, the
 * active tab, the shared tabs) and the three things it may ask (share, stop
 * sharing, unpair). Only messages classified as `popup` (lib/sender.ts) get here.
 */
import { err, ok, type Result } from '../../../src/shared/result';
import { shareability, stripUrl } from '../../../src/shared/url';
import type { FromPopup, PopupLinkState, PopupState } from '../lib/messages';
import type { WorkerCore } from './core';
import type { ExtLink } from './link';

export interface PopupDeps {
  faculties: WorkerCore;
  linkState(): PopupLinkState;
  /** The link (link.ts); null before it started. */
  link: Pick<ExtLink, 'unpair' | 'retry' | 'confirmPairing'> | null;
}

async function activeTab(f: WorkerCore): Promise<PopupState['activeTab']> {
  const [tab] = await chrome.tabs.query({ active: true, lastFocusedWindow: true });
  if (!tab || tab.id === undefined) return null;
  const verdict = shareability(tab.url);
  const shared = (await f.sharing.store.get(tab.id)) !== undefined;
  const out: NonNullable<PopupState['activeTab']> = { tabId: tab.id, title: tab.title ?? '', url: stripUrl(tab.url ?? ''), shared, shareable: verdict.ok };
  if (!verdict.ok) out.reason = verdict.reason;
  return out;
}

/** Answer one popup message. */
export async function handlePopup(msg: FromPopup, deps: PopupDeps): Promise<Result<unknown>> {
  const f = deps.faculties;
  switch (msg?.type) {
    case 'popup:state': {
      const state: PopupState = {
        link: deps.linkState(),
        activeTab: await activeTab(f),
        sharedTabs: await f.sharing.list(),
        extensionVersion: chrome.runtime.getManifest().version,
      };
      return ok(state);
    }
    case 'popup:share':
      return f.sharing.share(msg.tabId);
    case 'popup:unshare':
      await f.sharing.unshare(msg.tabId);
      return ok(null);
    case 'popup:unpair':
      await deps.link?.unpair();
      return ok(null);
    case 'popup:retry':
      deps.link?.retry();
      return ok(null);
    case 'popup:confirm-pairing':
      deps.link?.confirmPairing(msg.accept === true);
      return ok(null);
    default:
      return err('bad-request', 'unknown popup message');
  }
}
