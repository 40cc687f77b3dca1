/**
 * The stores (approvals, in-flight requests, receipts, timeline, ledger, connection, settings, policy, patches, scripts) and their wiring
 * to a transport: the snapshot is loaded on start and after every reconnect
 * (and errors that only said "unreachable" are cleared then), and pushed
 * ConsoleEvents update the matching store. The stores call the API through
 * `withPlainErrors`, so every failure they keep reads as a sentence.
 */
import type { ConsoleEvent } from '../../shared/ipc';
import type { EchoApi } from '../../shared/ipc';
import { plainError, withPlainErrors } from '../transport/errors';
import type { TransportState } from '../transport/ws-client';
import { createApprovalsStore } from './approvals';
import { createInFlightStore } from './inflight';
import { createConnectionStore, isTransportError } from './connection';
import { createPicturesStore } from './pictures';
import { createPolicyStore } from './policy';
import { createPatchesStore } from './patches';
import { createReceiptsStore } from './receipts';
import { createSettingsStore } from './settings';
import { createInspectorStore } from './inspector';
import { createTimelineStore } from './timeline';
import { createLedgerStore } from './ledger';
import { createScriptsStore } from './scripts';

export function createConsoleStores(rawApi: EchoApi) {
  const api = withPlainErrors(rawApi);
  return {
    approvals: createApprovalsStore(api),
    inflight: createInFlightStore(api),
    receipts: createReceiptsStore(api),
    connection: createConnectionStore(api),
    settings: createSettingsStore(api),
    policy: createPolicyStore(api),
    pictures: createPicturesStore(api),
    patches: createPatchesStore(api),
    inspector: createInspectorStore(api),
    timeline: createTimelineStore(api),
    ledger: createLedgerStore(api),
    scripts: createScriptsStore(api),
  };
}

export type ConsoleStores = ReturnType<typeof createConsoleStores>;

/** Route one pushed event to its store. */
export function applyEvent(stores: ConsoleStores, e: ConsoleEvent): void {
  switch (e.kind) {
    case 'approvals':
      return stores.approvals.getState().setPending(e.approvals);
    case 'link':
      return stores.connection.getState().setLink(e.link);
    case 'shared-tabs':
      return stores.connection.getState().setSharedTabs(e.tabs);
    case 'receipts':
      for (const r of e.receipts) stores.approvals.getState().explainEnd(r);
      stores.timeline.getState().addReceipts(e.receipts);
      return stores.receipts.getState().addMany(e.receipts);
    case 'endpoint':
      return stores.connection.getState().setEndpoint(e.endpoint);
    case 'agent-tokens':
      return stores.connection.getState().setAgentTokens(e.tokens);
    case 'settings':
      return stores.settings.getState().setSettings(e.settings);
    case 'policy-rules':
      return stores.policy.getState().setRules(e.rules);
    case 'live-patches':
      return stores.patches.getState().setPatches(e.patches);
    case 'inspector':
      return stores.inspector.getState().setView(e.tabId, e.view);
    case 'inspector-call':
      return stores.inspector.getState().callEnded(e.call);
    case 'ledger-progress':
      if (e.progress.task === 'verify') return stores.receipts.getState().setVerifyProgress(e.progress);
      return stores.ledger.getState().onProgress(e.progress);
    case 'script-run':
      return stores.scripts.getState().upsert(e.run);
    case 'in-flight':
      return stores.inflight.getState().setRequests(e.requests);
    case 'open-approval':
      // The person clicked the request's OS notification (Electron host): its dialog opens, even if they had closed it.
      return stores.approvals.getState().open(e.requestId);
  }
}

/** Load the snapshot into the stores; reports a failure on the connection store. */
export async function loadSnapshot(api: EchoApi, stores: ConsoleStores): Promise<boolean> {
  const r = await api.getSnapshot();
  if (!r.ok) {
    stores.connection.setState({ error: plainError(r.error) });
    return false;
  }
  const s = r.value;
  stores.approvals.getState().setPending(s.approvals);
  stores.inflight.getState().setRequests(s.inFlight ?? []);
  stores.connection.setState({ link: s.link, endpoint: s.endpoint, sharedTabs: s.sharedTabs });
  stores.connection.getState().setAgentTokens(s.agentTokens);
  stores.settings.getState().setSettings(s.settings);
  return true;
}

/** Forget errors that only said the console was unreachable: it answers again. */
export function clearTransportErrors(stores: ConsoleStores): void {
  const c = stores.connection.getState();
  if (isTransportError(c.error)) stores.connection.setState({ error: null });
  if (isTransportError(c.pairingError)) stores.connection.setState({ pairingError: null });
  const r = stores.receipts.getState();
  if (isTransportError(r.error)) stores.receipts.setState({ error: null });
  if (isTransportError(r.verifyError)) stores.receipts.setState({ verifyError: null });
  if (isTransportError(stores.approvals.getState().error)) stores.approvals.setState({ error: null });
  if (isTransportError(stores.inflight.getState().error)) stores.inflight.setState({ error: null });
  if (isTransportError(stores.settings.getState().error)) stores.settings.setState({ error: null });
  if (isTransportError(stores.policy.getState().error)) stores.policy.setState({ error: null });
  if (isTransportError(stores.patches.getState().error)) stores.patches.setState({ error: null });
  if (isTransportError(stores.inspector.getState().error)) stores.inspector.setState({ error: null });
  if (isTransportError(stores.timeline.getState().error)) stores.timeline.setState({ error: null });
}

/**
 * Connect the stores to a transport. `onFirstSnapshot` is called once the snapshot asked here
 * has been answered, well or not (main.tsx waits for it before the first render, first-render.ts).
 * @returns a function that unsubscribes everything.
 */
export function bindConsole(
  api: EchoApi,
  stores: ConsoleStores,
  transport: { state: () => TransportState; onState: (l: (s: TransportState) => void) => () => void },
  onFirstSnapshot?: () => void,
): () => void {
  api = withPlainErrors(api);
  const offEvent = api.onEvent((e) => applyEvent(stores, e));
  stores.connection.getState().setTransport(transport.state());
  // The first snapshot is asked now: over the WebSocket it goes out with the hello, before the
  // welcome (ws-client.ts). A later 'open' (back after a lost connection) asks again, and so
  // does the first one if this ask already failed (a first connection slower than the call
  // timeout): that 'open' clears the failure, which would leave an empty console saying nothing.
  let askedOnThisConnection = true;
  void loadSnapshot(api, stores).then((ok) => {
    if (!ok && transport.state() !== 'open') askedOnThisConnection = false;
    onFirstSnapshot?.();
  });
  const offState = transport.onState((s) => {
    stores.connection.getState().setTransport(s);
    const asked = askedOnThisConnection;
    askedOnThisConnection = false;
    if (s === 'open') {
      // A deep link whose query found the console unreachable (the page's first connection failed
      // before its welcome) is followed again: else the welcome clears its error and leaves an empty timeline.
      const before = stores.timeline.getState();
      const refollow = !before.loaded && !before.loading && isTransportError(before.error) ? before.following : null;
      clearTransportErrors(stores);
      if (!asked) void loadSnapshot(api, stores);
      // Back after a lost connection: the live lists missed what happened meanwhile. The
      // receipts page loads its first page itself when first shown (audit-pages.tsx), so a
      // console opened on another page does not wait behind that query.
      if (stores.receipts.getState().loaded) void stores.receipts.getState().loadFirst();
      const t = stores.timeline.getState();
      if (refollow) void t.follow(refollow);
      else if (t.loaded) void t.setFilter(t.filter);
    }
  });
  return () => {
    offEvent();
    offState();
  };
}
