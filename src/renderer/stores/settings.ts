/** The console's settings as the host reports them, and saving a change. */
import { createStore } from 'zustand/vanilla';
import type { ConsoleApi, ConsoleSettings } from '../../shared/ipc';
import { APPROVAL_TIMEOUT_RANGE } from '../../shared/limits';
import type { ErrorInfo } from '../../shared/result';

/** Bounds the form offers for the approval timeout (seconds): APPROVAL_TIMEOUT_RANGE (src/shared/limits.ts); the core validates again. */
export const TIMEOUT_BOUNDS_S = { min: APPROVAL_TIMEOUT_RANGE.min / 1000, max: APPROVAL_TIMEOUT_RANGE.max / 1000 } as const;

export interface SettingsState {
  settings: ConsoleSettings | null;
  saving: boolean;
  error: ErrorInfo | null;
  saved: boolean;
  setSettings(s: ConsoleSettings): void;
  saveApprovalTimeout(seconds: number): Promise<void>;
  /** Developer mode's switch: a refusal (no trusted input; the web host) lands in `developerModeError`. */
  developerModeBusy: boolean;
  developerModeError: ErrorInfo | null;
  setDeveloperMode(on: boolean): Promise<void>;
}

/** Create the settings store over the console API. */
export function createSettingsStore(api: Pick<ConsoleApi, 'updateSettings'>) {
  return createStore<SettingsState>()((set) => ({
    settings: null,
    saving: false,
    error: null,
    saved: false,
    developerModeBusy: false,
    developerModeError: null,
    setSettings: (settings) => set({ settings }),
    async setDeveloperMode(on) {
      set({ developerModeBusy: true, developerModeError: null });
      const r = await api.updateSettings({ developerMode: on });
      set(r.ok ? { developerModeBusy: false, settings: r.value } : { developerModeBusy: false, developerModeError: r.error });
    },
    async saveApprovalTimeout(seconds) {
      if (!Number.isInteger(seconds) || seconds < TIMEOUT_BOUNDS_S.min || seconds > TIMEOUT_BOUNDS_S.max) {
        return set({ error: { code: 'invalid-input', message: `Choose a whole number of seconds from ${TIMEOUT_BOUNDS_S.min} to ${TIMEOUT_BOUNDS_S.max}.` }, saved: false });
      }
      set({ saving: true, error: null, saved: false });
      const r = await api.updateSettings({ approvalTimeoutMs: seconds * 1000 });
      set(r.ok ? { saving: false, settings: r.value, saved: true } : { saving: false, error: r.error });
    },
  }));
}

export type SettingsStore = ReturnType<typeof createSettingsStore>;
