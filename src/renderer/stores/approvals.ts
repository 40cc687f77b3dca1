/**
 * Pending approvals and the one open dialog. The oldest pending request opens
 * by itself when no dialog is open (unless the person closed it without
 * deciding); focus then starts on nothing, so a stray Enter decides nothing.
 */
import { createStore } from 'zustand/vanilla';
import type { ApprovalView, ConsoleApi } from '../../shared/ipc';
import type { ErrorInfo } from '../../shared/result';

export interface ApprovalsState {
  pending: ApprovalView[];
  /** The request whose dialog is open. */
  openId: string | null;
  /** Requests the person closed without deciding: listed, not re-opened by themselves. */
  dismissed: string[];
  /** The request being decided right now. */
  busy: string | null;
  error: ErrorInfo | null;
  /** Said once when the open request disappeared without the person deciding it. */
  notice: string | null;
  setPending(list: ApprovalView[]): void;
  open(requestId: string): void;
  close(): void;
  decide(requestId: string, decision: 'approve' | 'deny', reason?: string): Promise<boolean>;
  clearNotice(): void;
}

/** Oldest first, then by id, so the order is stable. */
export function sortApprovals(list: ApprovalView[]): ApprovalView[] {
  return [...list].sort((a, b) => a.createdAt - b.createdAt || a.requestId.localeCompare(b.requestId));
}

/** Which dialog should be open: the current one if still pending, else the oldest not dismissed. */
export function nextOpenId(pending: ApprovalView[], openId: string | null, dismissed: readonly string[]): string | null {
  if (openId && pending.some((a) => a.requestId === openId)) return openId;
  return pending.find((a) => !dismissed.includes(a.requestId))?.requestId ?? null;
}

/** Create the approvals store over the console API. */
export function createApprovalsStore(api: Pick<ConsoleApi, 'decideApproval'>) {
  return createStore<ApprovalsState>()((set, get) => ({
    pending: [],
    openId: null,
    dismissed: [],
    busy: null,
    error: null,
    notice: null,
    setPending(list) {
      const pending = sortApprovals(list);
      const { openId, busy } = get();
      const ids = new Set(pending.map((a) => a.requestId));
      const vanished = openId !== null && !ids.has(openId) && busy !== openId;
      const dismissed = get().dismissed.filter((id) => ids.has(id));
      set({
        pending,
        dismissed,
        openId: nextOpenId(pending, vanished ? null : openId, dismissed),
        notice: vanished ? 'The request you were reviewing is no longer pending (it expired or was cancelled).' : get().notice,
      });
    },
    open(requestId) {
      if (get().pending.some((a) => a.requestId === requestId)) set({ openId: requestId, error: null });
    },
    close() {
      const { openId, dismissed } = get();
      set({ openId: null, error: null, dismissed: openId && !dismissed.includes(openId) ? [...dismissed, openId] : dismissed });
    },
    async decide(requestId, decision, reason) {
      if (get().busy) return false;
      set({ busy: requestId, error: null });
      const trimmed = reason?.trim().slice(0, 500);
      const result = await api.decideApproval(trimmed ? { requestId, decision, reason: trimmed } : { requestId, decision });
      if (!result.ok) {
        set({ busy: null, error: result.error });
        return false;
      }
      const pending = get().pending.filter((a) => a.requestId !== requestId);
      const dismissed = get().dismissed;
      set({ busy: null, pending, openId: nextOpenId(pending, null, dismissed) });
      return true;
    },
    clearNotice() {
      set({ notice: null });
    },
  }));
}

export type ApprovalsStore = ReturnType<typeof createApprovalsStore>;
