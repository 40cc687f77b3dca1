/**
 * The link to the extension (as the host's heartbeats report it), the MCP
 * endpoint, the shared tabs and the renderer's own transport to its host.
 */
import { createStore } from 'zustand/vanilla';
import type { ConsoleApi, EndpointInfo, LinkStatus } from '../../shared/ipc';
import { LIMITS } from '../../shared/limits';
import type { ErrorInfo } from '../../shared/result';
import type { SharedTab } from '../../shared/types';
import type { TransportState } from '../transport/ws-client';

export interface ConnectionState {
  link: LinkStatus | null;
  endpoint: EndpointInfo | null;
  sharedTabs: SharedTab[];
  /** Tabs offered by the extension, after the person asked for the list. */
  shareable: SharedTab[] | null;
  transport: TransportState;
  busy: boolean;
  error: ErrorInfo | null;
  setLink(l: LinkStatus): void;
  setEndpoint(e: EndpointInfo): void;
  setSharedTabs(t: SharedTab[]): void;
  setTransport(s: TransportState): void;
  confirmPairing(accept: boolean): Promise<void>;
  unpair(): Promise<void>;
  rotateToken(): Promise<void>;
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

/**
 * The link's label. "Connected" needs the host to say so AND a heartbeat within
 * `LIMITS.heartbeatTimeoutMs` of `now` (a stale status is not trusted).
 */
export function linkLabel(link: LinkStatus | null, now: number): LinkLabel {
  if (!link) return { tone: 'idle', text: 'Not connected', detail: 'Waiting for the console host…' };
  switch (link.state) {
    case 'connected': {
      const age = link.lastHeartbeatAt === undefined ? Infinity : now - link.lastHeartbeatAt;
      if (age > LIMITS.heartbeatTimeoutMs) return { tone: 'warn', text: 'Not connected', detail: 'The extension stopped answering heartbeats.' };
      return { tone: 'ok', text: 'Connected', detail: `Last heartbeat ${Math.max(0, Math.round(age / 1000))} s ago.` };
    }
    case 'awaiting-pairing':
      return { tone: 'warn', text: 'Awaiting pairing', detail: 'Compare the code with the one in the extension’s popup.' };
    case 'handshaking':
      return { tone: 'idle', text: 'Connecting…' };
    case 'version-mismatch':
      return { tone: 'bad', text: 'Version mismatch', detail: link.error?.message ?? 'Update the extension or the console so both speak the same protocol version.' };
    case 'refused':
      return { tone: 'bad', text: 'Refused', detail: link.error?.message ?? 'The extension could not prove the pairing.' };
    case 'no-extension':
    default:
      return { tone: 'idle', text: 'Not connected', detail: 'No extension is connected. Load it in Chrome and open its popup.' };
  }
}

/** Create the connection store over the console API. */
export function createConnectionStore(api: Pick<ConsoleApi, 'confirmPairing' | 'unpair' | 'rotateToken' | 'listShareableTabs' | 'shareTab' | 'unshareTab'>) {
  return createStore<ConnectionState>()((set, get) => {
    const run = async <T>(p: () => Promise<{ ok: true; value: T } | { ok: false; error: ErrorInfo }>, then?: (v: T) => void) => {
      set({ busy: true, error: null });
      const r = await p();
      if (r.ok) {
        set({ busy: false });
        then?.(r.value);
      } else set({ busy: false, error: r.error });
    };
    return {
      link: null,
      endpoint: null,
      sharedTabs: [],
      shareable: null,
      transport: 'connecting',
      busy: false,
      error: null,
      setLink: (link) => set({ link }),
      setEndpoint: (endpoint) => set({ endpoint }),
      setSharedTabs: (sharedTabs) => set({ sharedTabs }),
      setTransport: (transport) => set({ transport }),
      confirmPairing: (accept) => run(() => api.confirmPairing({ accept })),
      unpair: () => run(() => api.unpair()),
      rotateToken: () => run(() => api.rotateToken(), (endpoint) => set({ endpoint })),
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
