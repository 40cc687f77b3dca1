/**
 * The receipt list (newest first, paged through `queryReceipts`) and the
 * ledger check (`verifyLedger`). Receipts pushed by the host are put on top.
 */
import { createStore } from 'zustand/vanilla';
import type { ConsoleApi } from '../../shared/ipc';
import type { Receipt, VerifyReport } from '../../shared/receipt';
import type { ErrorInfo } from '../../shared/result';

/** Receipts per page. */
export const RECEIPT_PAGE_SIZE = 50;

export interface ReceiptsState {
  items: Receipt[];
  nextCursor: string | null;
  loading: boolean;
  loaded: boolean;
  error: ErrorInfo | null;
  verify: VerifyReport | null;
  verifying: boolean;
  verifyError: ErrorInfo | null;
  loadFirst(): Promise<void>;
  loadMore(): Promise<void>;
  add(r: Receipt): void;
  runVerify(): Promise<void>;
}

/** Merge receipts by id, newest (highest seq) first. */
export function mergeReceipts(a: Receipt[], b: Receipt[]): Receipt[] {
  const byId = new Map<string, Receipt>();
  for (const r of [...a, ...b]) byId.set(r.id, r);
  return [...byId.values()].sort((x, y) => y.seq - x.seq);
}

/** Create the receipts store over the console API. */
export function createReceiptsStore(api: Pick<ConsoleApi, 'queryReceipts' | 'verifyLedger'>) {
  return createStore<ReceiptsState>()((set, get) => ({
    items: [],
    nextCursor: null,
    loading: false,
    loaded: false,
    error: null,
    verify: null,
    verifying: false,
    verifyError: null,
    async loadFirst() {
      set({ loading: true, error: null });
      const r = await api.queryReceipts({ limit: RECEIPT_PAGE_SIZE });
      if (!r.ok) return set({ loading: false, error: r.error });
      set({ loading: false, loaded: true, items: mergeReceipts([], r.value.receipts), nextCursor: r.value.nextCursor });
    },
    async loadMore() {
      const { nextCursor, loading } = get();
      if (!nextCursor || loading) return;
      set({ loading: true, error: null });
      const r = await api.queryReceipts({ limit: RECEIPT_PAGE_SIZE, cursor: nextCursor });
      if (!r.ok) return set({ loading: false, error: r.error });
      set({ loading: false, items: mergeReceipts(get().items, r.value.receipts), nextCursor: r.value.nextCursor });
    },
    add(receipt) {
      set({ items: mergeReceipts(get().items, [receipt]) });
    },
    async runVerify() {
      set({ verifying: true, verifyError: null });
      const r = await api.verifyLedger();
      set(r.ok ? { verifying: false, verify: r.value } : { verifying: false, verify: null, verifyError: r.error });
    },
  }));
}

export type ReceiptsStore = ReturnType<typeof createReceiptsStore>;
