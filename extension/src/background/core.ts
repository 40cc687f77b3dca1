/**
 * The worker core: one entry point, `handleRequest`, that answers every
 * ConsoleRequest op of src/shared/protocol.ts with a Result (never a throw).
 * The link-level ops (list-tabs, list-shareable-tabs, share-tab, unshare-tab,
 * cancel, the ledger witness's witness-checkpoint and witness-read, reload-tab, and console-state
 * for the action badge) are handled here; `read`, `dispatch` and `discover` (which is the
 * `webmcp-discover` faculty's `discover`) go through the faculty registry
 * (faculties/registry.ts) by faculty id, with no switch on faculty names.
 * Events of the tabs, frames and tool watchers come out through `emit`.
 * index.ts wires this to the link (link.ts) and to Chrome's events; tests
 * drive it directly from the service worker.
 */
import { count } from './stats';
import { err, ok, toErrorInfo, type Result } from '../../../src/shared/result';
import type { ConsoleRequest, ExtensionEvent } from '../../../src/shared/protocol';
import type { Grant } from '../../../src/shared/types';
import { Dispatcher, type DispatcherDeps } from './dispatch';
import { FacultyRegistry, type Faculty, type FacultyServices } from './faculties/registry';
import { pageInfo } from './faculties/page-info';
import { semanticRead } from './faculties/semantic-read';
import { webmcpDiscover } from './faculties/webmcp-discover';
import { webmcpInvoke } from './faculties/webmcp-invoke';
import { semanticTarget } from './faculties/semantic-target';
import { semantic } from './faculties/semantic';
import { livePatch } from './faculties/live-patch';
import { rawJs } from './faculties/raw-js';
import { NonceStore, SharingStore, type KeyValueArea, type NonceArea } from './store';
import { LedgerWitness } from './witness';
import { Sharing, frameDocument } from './tabs';
import { documentLeaves, navigationSince } from './navigations';

/** Every faculty of the extension. Adding one: its file in faculties/, its content module in ../content/, one line here. */
export function defaultFaculties(): Faculty[] {
  return [webmcpDiscover, webmcpInvoke(), pageInfo(), semanticRead(), semanticTarget(), semantic(), livePatch(), rawJs()];
}

export interface WorkerCoreOptions {
  /** chrome.storage.session (or a stand-in): the shared tabs and the used nonces. */
  storage: NonceArea;
  /** The link's grant MAC check; `false` while unpaired. */
  verifyGrant(grant: Grant): Promise<boolean>;
  /** Deliver an event to the console (and test listeners). */
  emit(e: ExtensionEvent): void;
  now?: () => number;
  /** Watch a dispatch's effects outside the call and show the sign's "running" state (effects.ts; none by default). */
  watch?: DispatcherDeps['watch'];
  /** The faculties to register (default: defaultFaculties()). */
  faculties?: Faculty[];
  /** Where the ledger witness keeps its checkpoint (chrome.storage.local; default: `storage`). */
  witnessStorage?: KeyValueArea;
  /** The console's state for the action badge (`console-state`: pending approvals, developer mode; sign.ts). */
  consoleState?(s: { pending: number; developerMode: boolean }): void;
  /** Reload a tab (`reload-tab`, after the shared check here; default chrome.tabs.reload). */
  reloadTab?(tabId: number): Promise<void>;
}

export interface WorkerCore {
  sharing: Sharing;
  registry: FacultyRegistry;
  dispatcher: Dispatcher;
  /** `signal`: the link aborts it when the console cancels this request or the link drops. */
  handleRequest(req: ConsoleRequest, signal?: AbortSignal): Promise<Result<unknown>>;
  /** The webmcp content module said its tool list changed: checked, then `tools-changed` is emitted. */
  toolsChanged(from: { tabId: number; frameId: number; documentId: string; origin: string }): Promise<void>;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Build the worker core of one service worker. */
export function createWorkerCore(opts: WorkerCoreOptions): WorkerCore {
  const now = opts.now ?? Date.now;
  const sharing = new Sharing(new SharingStore(opts.storage), { emit: opts.emit });
  const nonces = new NonceStore(opts.storage, now);
  const registry = new FacultyRegistry(opts.faculties ?? defaultFaculties());
  const witness = new LedgerWitness(opts.witnessStorage ?? opts.storage);
  const services: FacultyServices = {
    sharedTab: (tabId) => sharing.store.get(tabId),
    endSharing: async (tabId) => void (await sharing.unshare(tabId, 'left-origin')),
  };
  const dispatcher = new Dispatcher({
    verifyGrant: (g) => {
      count('macChecks');
      return opts.verifyGrant(g).catch(() => false);
    },
    now,
    consumeNonce: (n, exp) => {
      count('nonceChecks');
      return nonces.consume(n, exp);
    },
    sharedOrigin: async (tabId) => (await sharing.store.get(tabId))?.origin ?? null,
    frameDocument: (tabId, frameId) => frameDocument(tabId, frameId),
    // From the worker's own record of navigation events: no browser round trip on every answer.
    leftFor: async (target, since) => navigationSince(target.tabId, target.frameId, since),
    documentLeaves: (target) => documentLeaves(target),
    ...(opts.watch ? { watch: opts.watch } : {}),
  });

  async function read(faculty: string, operation: string, tabId: number, args: unknown): Promise<Result<unknown>> {
    const f = registry.resolve(faculty, operation, 'read');
    if (!f.ok) return f;
    if (!Number.isInteger(tabId) || tabId < 0) return err('bad-request', 'tabId must be a tab ID');
    if (!isObj(args)) return err('bad-request', 'arguments must be an object');
    const problem = f.value.checkRequest(operation, args);
    if (problem !== null) return err('bad-request', problem);
    return f.value.read(operation, tabId, args, services);
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
        await sharing.unshare(req.tabId, 'console');
        return ok(null);
      case 'discover':
        // The link's discover op is the webmcp-discover faculty's discover (kept for the console's callers).
        return read('webmcp-discover', 'discover', req.tabId, {});
      case 'read':
        return read(req.faculty, req.operation, req.tabId, req.arguments);
      case 'dispatch': {
        const f = registry.resolve(req.faculty, req.operation, 'dispatch');
        if (!f.ok) return f;
        return dispatcher.dispatch(req, f.value, signal);
      }
      case 'cancel':
        return typeof req.requestId === 'string' ? ok(dispatcher.cancel(req.requestId)) : err('bad-request', 'requestId must be a string');
      case 'witness-checkpoint':
        return ok(await witness.offer(req.checkpoint));
      case 'witness-read':
        return ok(await witness.read());
      case 'reload-tab': {
        // Only a tab the person shared: the console may not reload anything else (docs/stop.md).
        if (!Number.isInteger(req.tabId) || !(await sharing.store.get(req.tabId))) return err('tab-not-shared', 'only a shared tab can be reloaded');
        try {
          await (opts.reloadTab ?? ((id: number) => chrome.tabs.reload(id)))(req.tabId);
          return ok(null);
        } catch (e) {
          return err('reload-failed', String(e instanceof Error ? e.message : e).slice(0, 200));
        }
      }
      case 'console-state':
        if (!Number.isInteger(req.pending) || req.pending < 0 || typeof req.developerMode !== 'boolean') return err('bad-request', 'pending must be a count and developerMode a boolean');
        opts.consoleState?.({ pending: req.pending, developerMode: req.developerMode });
        return ok(null);
      default:
        return err('unknown-op', 'unknown request op');
    }
  }

  return {
    sharing,
    registry,
    dispatcher,
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
