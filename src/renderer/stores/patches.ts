/**
 * The active Live Patches as the console reports them (ConsoleApi.listPatches, the `live-patches`
 * event; docs/live-patch.md), and the person's Revert / Revert all (ConsoleApi.revertPatches).
 */
import { createStore } from 'zustand/vanilla';
import type { ConsoleApi } from '../../shared/ipc';
import type { LivePatchInfo } from '../../shared/live-patch';
import type { ErrorInfo } from '../../shared/result';

export interface PatchesState {
  /** null until the first answer. */
  patches: LivePatchInfo[] | null;
  /** A revert running now: its tab. */
  busyTab: number | null;
  error: ErrorInfo | null;
  setPatches(patches: LivePatchInfo[]): void;
  load(): Promise<void>;
  /** Revert `patchIds` of a tab, or all of the tab's patches when absent. */
  revert(tabId: number, patchIds?: string[]): Promise<void>;
}

/** Create the patches store over the console API. */
export function createPatchesStore(api: Pick<ConsoleApi, 'listPatches' | 'revertPatches'>) {
  return createStore<PatchesState>()((set, get) => ({
    patches: null,
    busyTab: null,
    error: null,
    setPatches: (patches) => set({ patches }),
    async load() {
      const r = await api.listPatches({});
      set(r.ok ? { patches: r.value } : { error: r.error });
    },
    async revert(tabId, patchIds) {
      set({ busyTab: tabId, error: null });
      const r = await api.revertPatches({ tabId, ...(patchIds ? { patchIds } : {}) });
      set({ busyTab: null, ...(r.ok ? {} : { error: r.error }) });
      // The list comes back by the `live-patches` event too; read it once more so a failure shows what is left.
      await get().load();
    },
  }));
}

export type PatchesStore = ReturnType<typeof createPatchesStore>;
