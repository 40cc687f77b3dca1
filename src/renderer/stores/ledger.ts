/**
 * The ledger's long tasks as the console shows them (issue 12 items 2 and 3):
 * the running export (progress, cancel, the file it wrote), and the retention
 * period. Verify's progress lives in the receipts store beside its result.
 * Progress arrives as `ledger-progress` events (src/shared/ledger-export.ts).
 */
import { createStore } from 'zustand/vanilla';
import type { ConsoleApi } from '../../shared/ipc';
import { RETENTION_DAYS, type ExportFormat, type LedgerFilter, type LedgerProgress } from '../../shared/ledger-export';
import type { ErrorInfo } from '../../shared/result';

export interface ExportRun {
  exportId: string;
  file: string;
  format: ExportFormat;
  done: number;
  total: number;
  state: LedgerProgress['state'];
  rows?: number;
  error?: ErrorInfo;
}

export interface LedgerState {
  run: ExportRun | null;
  starting: boolean;
  exportError: ErrorInfo | null;
  retentionSaving: boolean;
  retentionSaved: boolean;
  retentionError: ErrorInfo | null;
  startExport(filter: LedgerFilter, format: ExportFormat): Promise<void>;
  cancelExport(): Promise<void>;
  onProgress(p: LedgerProgress): void;
  /** Save the retention period: whole days in RETENTION_DAYS, or null to keep payloads forever. */
  saveRetention(days: number | null): Promise<void>;
}

/** Create the ledger store over the console API. */
export function createLedgerStore(api: Pick<ConsoleApi, 'startExport' | 'cancelExport' | 'updateSettings'>) {
  return createStore<LedgerState>()((set, get) => ({
    run: null,
    starting: false,
    exportError: null,
    retentionSaving: false,
    retentionSaved: false,
    retentionError: null,
    async startExport(filter, format) {
      set({ starting: true, exportError: null });
      const r = await api.startExport({ filter, format });
      if (!r.ok) return set({ starting: false, exportError: r.error });
      const run = get().run;
      // A progress event may have come before the answer: keep what it said.
      set({ starting: false, run: run?.exportId === r.value.exportId ? { ...run, file: r.value.file } : { exportId: r.value.exportId, file: r.value.file, format, done: 0, total: 0, state: 'running' } });
    },
    async cancelExport() {
      const run = get().run;
      if (!run || run.state !== 'running') return;
      const r = await api.cancelExport({ exportId: run.exportId });
      if (!r.ok) set({ exportError: r.error });
    },
    onProgress(p) {
      if (p.task !== 'export') return;
      const run = get().run;
      const base: ExportRun = run?.exportId === p.id ? run : { exportId: p.id, file: p.result?.file ?? '', format: p.result?.format ?? 'jsonl', done: 0, total: 0, state: 'running' };
      set({
        run: {
          ...base,
          done: p.done,
          total: p.total,
          state: p.state,
          ...(p.result ? { rows: p.result.rows, file: p.result.file } : {}),
          ...(p.error ? { error: p.error } : {}),
        },
      });
    },
    async saveRetention(days) {
      if (days !== null && (!Number.isInteger(days) || days < RETENTION_DAYS.min || days > RETENTION_DAYS.max)) {
        return set({ retentionError: { code: 'invalid-input', message: `Choose a whole number of days from ${RETENTION_DAYS.min} to ${RETENTION_DAYS.max}, or keep forever.` }, retentionSaved: false });
      }
      set({ retentionSaving: true, retentionError: null, retentionSaved: false });
      const r = await api.updateSettings({ retentionDays: days });
      set(r.ok ? { retentionSaving: false, retentionSaved: true } : { retentionSaving: false, retentionError: r.error });
    },
  }));
}

export type LedgerStore = ReturnType<typeof createLedgerStore>;
