/**
 * Raw-JavaScript runs, live (issue 11 items 3 and 4; docs/raw-javascript.md): every run of the
 * agent's and of the person's as the console reports it (the `script-run` event;
 * ConsoleApi.listScriptRuns at start), and the person's own runs and Stop. The developer console
 * (xterm) subscribes to this store: `runs` (oldest first) for its output, `runLine` for a typed
 * line (its Enter must be the person's: the host's trusted-input gate decides), `stop` for Ctrl+C.
 */
import { createStore } from 'zustand/vanilla';
import type { ConsoleApi } from '../../shared/ipc';
import type { RawScriptWorld, ScriptRun } from '../../shared/raw-script';
import type { ErrorInfo } from '../../shared/result';

/** Runs kept in the renderer (as the console keeps: MAX_SCRIPT_RUNS). */
export const MAX_RUNS_SHOWN = 50;

export interface ScriptsState {
  /** Every run known, oldest first, each as last reported. */
  runs: ScriptRun[];
  /** The last failure of a call of the person's (not a run's own outcome, which is in the run). */
  error: ErrorInfo | null;
  /** Record a run as reported (the `script-run` event): replaces the run of the same runId. */
  upsert(run: ScriptRun): void;
  /** Read the console's recent runs (at start and after a reconnect). */
  load(): Promise<void>;
  /**
   * The person runs a line in a shared tab (ConsoleApi.runConsoleLine): call it from the handler of
   * the person's own key press. Resolves with the run as it ended, or null (then `error` says why).
   */
  runLine(p: { tabId: number; frameId?: number; code: string; world?: RawScriptWorld }): Promise<ScriptRun | null>;
  /** Stop waiting for a run (Ctrl+C): it becomes `stopped`, outcome unknown, offering a reload. */
  stop(runId: string): Promise<void>;
  /** Take a run's offer to reload its tab (after an unknown outcome): true when reloaded. */
  reload(tabId: number): Promise<boolean>;
}

/** Create the scripts store over the console API. */
export function createScriptsStore(api: Pick<ConsoleApi, 'runConsoleLine' | 'stopScript' | 'listScriptRuns' | 'reloadTab'>) {
  return createStore<ScriptsState>()((set, get) => ({
    runs: [],
    error: null,
    upsert(run) {
      const others = get().runs.filter((r) => r.runId !== run.runId);
      const at = get().runs.findIndex((r) => r.runId === run.runId);
      const runs = at < 0 ? [...others, run] : [...others.slice(0, at), run, ...others.slice(at)];
      set({ runs: runs.slice(-MAX_RUNS_SHOWN) });
    },
    async load() {
      const r = await api.listScriptRuns();
      if (r.ok) for (const run of r.value) get().upsert(run);
      else set({ error: r.error });
    },
    async runLine(p) {
      set({ error: null });
      const r = await api.runConsoleLine(p);
      if (!r.ok) {
        set({ error: r.error });
        return null;
      }
      get().upsert(r.value);
      return r.value;
    },
    async stop(runId) {
      const r = await api.stopScript({ runId });
      if (r.ok) get().upsert(r.value);
      else set({ error: r.error });
    },
    async reload(tabId) {
      const r = await api.reloadTab({ tabId });
      if (!r.ok) set({ error: r.error });
      return r.ok;
    },
  }));
}

export type ScriptsStore = ReturnType<typeof createScriptsStore>;
