/**
 * The link to the extension (as the host's heartbeats report it), the MCP
 * endpoint, the shared tabs and the renderer's own transport to its host.
 */
import { createStore } from 'zustand/vanilla';
import type { AgentTokenInfo, ConsoleApi, CreatedAgentToken, EndpointInfo, LinkStatus } from '../../shared/ipc';
import { LIMITS } from '../../shared/limits';
import type { ErrorInfo } from '../../shared/result';
import type { SharedTab } from '../../shared/types';
import type { TransportState } from '../transport/ws-client';

export interface ConnectionState {
  link: LinkStatus | null;
  endpoint: EndpointInfo | null;
  /** The agents' tokens (never their secrets). */
  agentTokens: AgentTokenInfo[];
  /**
   * The token the person just created, with its secret: shown once, until they close it
   * (the only way a secret reaches the page; issue 9 items 2 and 4).
   */
  newToken: CreatedAgentToken | null;
  sharedTabs: SharedTab[];
  /** Tabs offered by the extension, after the person asked for the list. */
  shareable: SharedTab[] | null;
  transport: TransportState;
  busy: boolean;
  error: ErrorInfo | null;
  /** A failed Confirm / Reject of the pairing code, shown beside the code. */
  pairingError: ErrorInfo | null;
  setLink(l: LinkStatus): void;
  setEndpoint(e: EndpointInfo): void;
  setAgentTokens(t: AgentTokenInfo[]): void;
  setSharedTabs(t: SharedTab[]): void;
  setTransport(s: TransportState): void;
  confirmPairing(accept: boolean): Promise<void>;
  unpair(): Promise<void>;
  createAgentToken(name: string): Promise<void>;
  revokeAgentToken(id: string): Promise<void>;
  /** Forget the secret shown once. */
  dismissNewToken(): void;
  loadShareable(): Promise<void>;
  share(tabId: number): Promise<void>;
  unshare(tabId: number): Promise<void>;
}

/** What the connection panel says about the link. */
export interface LinkLabel {
  tone: 'ok' | 'warn' | 'bad' | 'idle';
  text: string;
  detail?: string;
}

/** The panel's headline for each LinkProblem (src/shared/ipc.ts); the problem's message is the detail. */
export const PROBLEM_TEXT: Record<NonNullable<LinkStatus['problem']>['code'], string> = {
  'extension-outdated': 'Update the extension',
  'console-outdated': 'Update Echo Console',
  'pair-again': 'Pair again',
};

/** Whether the console itself (the host behind the transport) answers: only an open transport counts. */
export function consoleReachable(transport: TransportState): boolean {
  return transport === 'open';
}

/** Transport failure codes that a reconnect makes stale. */
const TRANSPORT_CODES = new Set(['disconnected', 'timeout', 'unauthorized']);

/** Whether an error only said the console was unreachable (cleared once it answers again). */
export function isTransportError(e: ErrorInfo | null): boolean {
  return e !== null && TRANSPORT_CODES.has(e.code);
}

/**
 * The link's label. "Connected" needs the host to say so AND a heartbeat within
 * `LIMITS.heartbeatTimeoutMs` of `now` (a stale status is not trusted). When the
 * console itself is unreachable (`transport` given and not open) the link's state
 * is unknown: whatever the console said last may no longer be true.
 */
export function linkLabel(link: LinkStatus | null, now: number, transport?: TransportState): LinkLabel {
  if (transport === 'connecting') return { tone: 'idle', text: 'Unknown', detail: 'Waiting for the console to answer…' };
  if (transport !== undefined && !consoleReachable(transport)) {
    return { tone: 'idle', text: 'Unknown', detail: 'The console is not reachable, so the extension’s link state is unknown.' };
  }
  if (!link) return { tone: 'idle', text: 'Unknown', detail: 'Waiting for the console to answer…' };
  // A problem only the person can fix is said in plain words, never as a bare "refused".
  if (link.problem && link.state === 'awaiting-pairing') {
    return { tone: 'warn', text: 'Awaiting pairing', detail: link.problem.message };
  }
  if (link.problem) return { tone: 'bad', text: PROBLEM_TEXT[link.problem.code], detail: link.problem.message };
  switch (link.state) {
    case 'connected': {
      const age = link.lastHeartbeatAt === undefined ? Infinity : now - link.lastHeartbeatAt;
      if (age > LIMITS.heartbeatTimeoutMs) return { tone: 'warn', text: 'Not connected', detail: 'The extension stopped answering heartbeats.' };
      return { tone: 'ok', text: 'Connected', detail: `Last heartbeat ${Math.max(0, Math.round(age / 1000))} s ago.` };
    }
    case 'awaiting-pairing':
      return { tone: 'warn', text: 'Awaiting pairing', detail: 'Compare the code with the one in the extension’s popup, then confirm here and in the popup.' };
    case 'handshaking':
      // After the console's confirmation the extension waits for the person in its popup too (issue 9 item 1).
      return { tone: 'idle', text: 'Connecting…', detail: 'If the extension’s popup still shows the pairing code, click “The codes match” there.' };
    case 'version-mismatch':
      return { tone: 'bad', text: 'Version mismatch', detail: link.error?.message ?? 'Update the extension or the console so both speak the same protocol version.' };
    case 'refused':
      return { tone: 'bad', text: 'Refused', detail: link.error?.message ?? 'The extension could not prove the pairing.' };
    case 'no-extension':
    default:
      return { tone: 'idle', text: 'Not connected', detail: 'No extension is connected. Load it in Chrome and open its popup.' };
  }
}

/** What the banner across every page says for a transport state (the console itself unreachable); null when there is nothing to say. */
export function bannerText(transport: TransportState): { title: string; body: string } | null {
  if (transport === 'reconnecting') {
    return {
      title: 'The console is not running or this page lost its connection to it. Reconnecting…',
      body: 'If you restarted the console, open the new link it printed. Until then nothing can be approved, denied, verified or shared, and what this page shows may be out of date.',
    };
  }
  if (transport === 'unauthorized') {
    return {
      title: 'The console refused this page’s session.',
      body: 'Each console link works once, in the browser that opened it first, and each run prints a new one. If the console was restarted, open the new link it printed; if this link was opened elsewhere first, that is where the session is (restart the console if that was not you). Until then nothing can be approved, denied, verified or shared.',
    };
  }
  return null;
}

/** Create the connection store over the console API. */
export function createConnectionStore(
  api: Pick<ConsoleApi, 'confirmPairing' | 'unpair' | 'createAgentToken' | 'revokeAgentToken' | 'listShareableTabs' | 'shareTab' | 'unshareTab'>,
) {
  return createStore<ConnectionState>()((set, get) => {
    const run = async <T>(
      p: () => Promise<{ ok: true; value: T } | { ok: false; error: ErrorInfo }>,
      then?: (v: T) => void,
      errorKey: 'error' | 'pairingError' = 'error',
    ) => {
      set({ busy: true, [errorKey]: null });
      const r = await p();
      if (r.ok) {
        set({ busy: false });
        then?.(r.value);
      } else set({ busy: false, [errorKey]: r.error });
    };
    return {
      link: null,
      endpoint: null,
      agentTokens: [],
      newToken: null,
      sharedTabs: [],
      shareable: null,
      transport: 'connecting',
      busy: false,
      error: null,
      pairingError: null,
      setLink: (link) => set(link.state === 'awaiting-pairing' ? { link } : { link, pairingError: null }),
      setEndpoint: (endpoint) => set({ endpoint }),
      // A revoked token's secret, still on screen, is dropped with it.
      setAgentTokens: (agentTokens) => set({ agentTokens, newToken: agentTokens.some((t) => t.id === get().newToken?.token.id) ? get().newToken : null }),
      setSharedTabs: (sharedTabs) => set({ sharedTabs }),
      setTransport: (transport) => set({ transport }),
      confirmPairing: (accept) => run(() => api.confirmPairing({ accept }), undefined, 'pairingError'),
      unpair: () => run(() => api.unpair()),
      createAgentToken: (name) =>
        run(
          () => api.createAgentToken({ name }),
          (made) => set({ newToken: made, agentTokens: [...get().agentTokens.filter((t) => t.id !== made.token.id), made.token] }),
        ),
      revokeAgentToken: (id) => run(() => api.revokeAgentToken({ id }), (tokens) => get().setAgentTokens(tokens)),
      dismissNewToken: () => set({ newToken: null }),
      loadShareable: () => run(() => api.listShareableTabs(), (shareable) => set({ shareable })),
      share: (tabId) =>
        run(
          () => api.shareTab({ tabId }),
          (tab) => {
            if (!get().sharedTabs.some((t) => t.tabId === tab.tabId)) set({ sharedTabs: [...get().sharedTabs, tab] });
          },
        ),
      unshare: (tabId) => run(() => api.unshareTab({ tabId }), () => set({ sharedTabs: get().sharedTabs.filter((t) => t.tabId !== tabId) })),
    };
  });
}

export type ConnectionStore = ReturnType<typeof createConnectionStore>;
