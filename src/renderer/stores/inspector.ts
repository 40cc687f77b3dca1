/**
 * The tool inspector's state (docs/inspector.md): the view of each inspected shared tab
 * (ConsoleApi.inspectTab, kept live by the `inspector` event), the tool the person looks at, its
 * call history from the receipts (ConsoleApi.queryReceipts by tool name and origin, grouped into
 * requests), and the person's manual invokes (ConsoleApi.invokeTool, ended by `inspector-call`).
 */
import { createStore } from 'zustand/vanilla';
import type { ConsoleApi, InspectorCall, InspectorView } from '../../shared/ipc';
import type { Receipt } from '../../shared/receipt';
import type { ErrorInfo } from '../../shared/result';
import type { ToolDescriptor } from '../../shared/types';

/** Receipts read for one tool's history (the host's maximum page). */
export const HISTORY_RECEIPTS = 500;

/** A tool's key in the inspector: its frame, document and name (names are unique per document). */
export const toolKey = (t: Pick<ToolDescriptor, 'frameId' | 'documentId' | 'name'>): string => JSON.stringify([t.frameId, t.documentId, t.name]);

/** One request on a tool, from its receipts. */
export interface HistoryEntry {
  requestId: string;
  /** ms since the epoch of its first receipt. */
  startedAt: number;
  /** `person` for the inspector's manual invokes; the agent's token name otherwise. */
  who: string;
  byPerson: boolean;
  /** Its last event (an outcome when it ended). */
  lastEvent: string;
  descriptorHash: string | null;
  argumentsHash: string | null;
  receipts: number;
}

/**
 * Group receipts (any order) into requests, newest first. The actor of the `requested` receipt says who
 * asked; the newest receipt's event how it stands.
 */
export function historyOf(receipts: readonly Receipt[]): HistoryEntry[] {
  const by = new Map<string, Receipt[]>();
  for (const r of receipts) {
    if (!r.requestId) continue;
    const list = by.get(r.requestId) ?? [];
    list.push(r);
    by.set(r.requestId, list);
  }
  const out: HistoryEntry[] = [];
  for (const [requestId, list] of by) {
    list.sort((a, b) => a.seq - b.seq);
    const first = list[0] as Receipt;
    const last = list[list.length - 1] as Receipt;
    const asked = list.find((r) => r.event === 'requested') ?? first;
    const byPerson = asked.actor.kind === 'person';
    out.push({
      requestId,
      startedAt: first.time,
      who: byPerson ? 'You (inspector)' : (asked.actor.name ?? asked.actor.kind),
      byPerson,
      lastEvent: last.event,
      descriptorHash: list.find((r) => r.descriptorHash)?.descriptorHash ?? null,
      argumentsHash: list.find((r) => r.argumentsHash)?.argumentsHash ?? null,
      receipts: list.length,
    });
  }
  return out.sort((a, b) => b.startedAt - a.startedAt || (a.requestId < b.requestId ? 1 : -1));
}

export interface InspectorState {
  /** The shared tab shown (null: none chosen). */
  tabId: number | null;
  views: Record<number, InspectorView>;
  /** The tab being inspected now. */
  loading: number | null;
  error: ErrorInfo | null;
  /** toolKey of the tool shown. */
  selected: string | null;
  history: { key: string; entries: HistoryEntry[]; loading: boolean; error: ErrorInfo | null } | null;
  /** Manual invokes by request id: pending until their `inspector-call` event. */
  calls: Record<string, { key: string; state: 'pending' } | { key: string; state: 'done'; call: InspectorCall }>;
  /** The request id of the latest manual invoke per toolKey. */
  lastCall: Record<string, string>;
  invokeError: ErrorInfo | null;
  invoking: boolean;
  chooseTab(tabId: number | null): Promise<void>;
  inspect(tabId: number): Promise<void>;
  setView(tabId: number, view: InspectorView | null): void;
  select(key: string | null): Promise<void>;
  loadHistory(): Promise<void>;
  invoke(tool: ToolDescriptor, args: Record<string, unknown>): Promise<void>;
  callEnded(call: InspectorCall): void;
}

/** Create the inspector store over the console API. */
export function createInspectorStore(api: Pick<ConsoleApi, 'inspectTab' | 'invokeTool' | 'queryReceipts'>) {
  return createStore<InspectorState>()((set, get) => ({
    tabId: null,
    views: {},
    loading: null,
    error: null,
    selected: null,
    history: null,
    calls: {},
    lastCall: {},
    invokeError: null,
    invoking: false,
    async chooseTab(tabId) {
      set({ tabId, selected: null, history: null, error: null, invokeError: null });
      if (tabId !== null) await get().inspect(tabId);
    },
    async inspect(tabId) {
      set({ loading: tabId, error: null });
      const r = await api.inspectTab({ tabId });
      if (r.ok) get().setView(tabId, r.value);
      set({ loading: null, ...(r.ok ? {} : { error: r.error }) });
    },
    setView(tabId, view) {
      const views = { ...get().views };
      if (view) views[tabId] = view;
      else delete views[tabId];
      set({ views });
      // The tool shown left the page: its key no longer names a listed tool.
      const sel = get().selected;
      if (tabId === get().tabId && sel && !view?.discovery.tools.some((t) => toolKey(t) === sel)) set({ selected: null });
    },
    async select(key) {
      set({ selected: key, invokeError: null });
      if (key) await get().loadHistory();
      else set({ history: null });
    },
    async loadHistory() {
      const { selected, tabId, views } = get();
      const tool = tabId !== null ? views[tabId]?.discovery.tools.find((t) => toolKey(t) === selected) : undefined;
      if (!selected || !tool) return;
      set({ history: { key: selected, entries: get().history?.key === selected ? get().history!.entries : [], loading: true, error: null } });
      const r = await api.queryReceipts({ toolName: tool.name, origin: tool.origin, limit: HISTORY_RECEIPTS });
      if (get().selected !== selected) return;
      set({ history: { key: selected, entries: r.ok ? historyOf(r.value.receipts) : [], loading: false, error: r.ok ? null : r.error } });
    },
    async invoke(tool, args) {
      const key = toolKey(tool);
      set({ invoking: true, invokeError: null });
      const r = await api.invokeTool({ tabId: tool.tabId, frameId: tool.frameId, name: tool.name, descriptorHash: tool.descriptorHash, documentId: tool.documentId, arguments: args });
      if (!r.ok) return set({ invoking: false, invokeError: r.error });
      const id = r.value.requestId;
      const already = get().calls[id];
      set({
        invoking: false,
        // The end may have come before this answer.
        calls: already ? get().calls : { ...get().calls, [id]: { key, state: 'pending' } },
        lastCall: { ...get().lastCall, [key]: id },
      });
      void get().loadHistory();
    },
    callEnded(call) {
      const known = get().calls[call.requestId];
      const key = known?.key ?? toolKey({ frameId: -1, documentId: '', name: call.toolName });
      set({ calls: { ...get().calls, [call.requestId]: { key, state: 'done', call } } });
      if (get().selected === key) void get().loadHistory();
    },
  }));
}

export type InspectorStore = ReturnType<typeof createInspectorStore>;
