/**
 * The extension's faculties behind one entry point: `handleRequest` answers
 * every ConsoleRequest op of src/shared/protocol.ts with a Result (never a
 * throw), and the events of the tabs, frames and tool watchers come out
 * through `emit`. index.ts wires this to the link (link.ts) and to Chrome's
 * events; tests drive it directly from the service worker.
 */
import { err, ok, toErrorInfo, type Result } from '../../../src/shared/result';
import type { ConsoleRequest, ExtensionEvent } from '../../../src/shared/protocol';
import type { Grant } from '../../../src/shared/types';
import { discoverTab, toolsNamedIn } from './discovery';
import { Invoker, chromeDispatch, type InvokeRequest } from './invoke';
import { NonceStore, SharingStore, type KeyValueArea } from './store';
import { Sharing, frameDocument } from './tabs';
import { count } from './stats';

export interface FacultiesOptions {
  /** chrome.storage.session (or a stand-in). */
  storage: KeyValueArea;
  /** The link's grant MAC check; `false` while unpaired. */
  verifyGrant(grant: Grant): Promise<boolean>;
  /** Deliver an event to the console (and test listeners). */
  emit(e: ExtensionEvent): void;
  now?: () => number;
}

export interface Faculties {
  sharing: Sharing;
  invoker: Invoker;
  /** `signal`: the link aborts it when the console cancels this request or the link drops. */
  handleRequest(req: ConsoleRequest, signal?: AbortSignal): Promise<Result<unknown>>;
  /** A content script said its tool list changed: checked, then `tools-changed` is emitted. */
  toolsChanged(from: { tabId: number; frameId: number; documentId: string; origin: string }): Promise<void>;
}

/** Build the faculties of one service worker. */
export function createFaculties(opts: FacultiesOptions): Faculties {
  const now = opts.now ?? Date.now;
  const sharing = new Sharing(new SharingStore(opts.storage), { emit: opts.emit });
  const nonces = new NonceStore(opts.storage, now);
  const sharedOrigin = async (tabId: number) => (await sharing.store.get(tabId))?.origin ?? null;
  const invoker = new Invoker(
    {
      verifyGrant: (g) => {
        count('macChecks');
        return opts.verifyGrant(g).catch(() => false);
      },
      now,
      consumeNonce: (n, exp) => {
        count('nonceChecks');
        return nonces.consume(n, exp);
      },
      sharedOrigin,
      frameDocument: (tabId, frameId) => frameDocument(tabId, frameId),
      toolsNamed: async (target, name) => {
        count('rediscoveries');
        const origin = await sharedOrigin(target.tabId);
        return origin === null ? null : toolsNamedIn(target, name, origin);
      },
    },
    chromeDispatch,
  );

  async function discover(tabId: number): Promise<Result<unknown>> {
    const shared = await sharing.store.get(tabId);
    if (!shared) return err('tab-not-shared', 'the tab is not shared');
    const r = await discoverTab(tabId, shared.origin);
    if (!r.ok && r.error.code === 'navigated') {
      await sharing.unshare(tabId);
      return err('tab-not-shared', 'the tab left the shared origin; sharing ended');
    }
    return r;
  }

  async function handle(req: ConsoleRequest, signal?: AbortSignal): Promise<Result<unknown>> {
    if (!req || typeof req !== 'object') return err('bad-request', 'no request');
    switch (req.op) {
      case 'list-tabs':
        return ok(await sharing.list());
      case 'list-shareable-tabs':
        return ok(await sharing.shareable());
      case 'share-tab':
        return sharing.share(req.tabId);
      case 'unshare-tab':
        await sharing.unshare(req.tabId);
        return ok(null);
      case 'discover':
        return discover(req.tabId);
      case 'invoke':
        return invoker.invoke(req as InvokeRequest, signal);
      case 'cancel':
        return typeof req.requestId === 'string' ? ok(invoker.cancel(req.requestId)) : err('bad-request', 'requestId must be a string');
      default:
        return err('unknown-op', 'unknown request op');
    }
  }

  return {
    sharing,
    invoker,
    async handleRequest(req, signal) {
      try {
        return await handle(req, signal);
      } catch (e) {
        return { ok: false, error: toErrorInfo(e) };
      }
    },
    async toolsChanged(from) {
      const shared = await sharing.store.get(from.tabId);
      if (!shared || shared.origin !== from.origin) return;
      const doc = await frameDocument(from.tabId, from.frameId);
      if (!doc || doc.documentId !== from.documentId || doc.origin !== shared.origin) return;
      opts.emit({ kind: 'tools-changed', tabId: from.tabId, frameId: from.frameId, documentId: from.documentId });
    },
  };
}
