/**
 * Pending approvals and the one open dialog. The oldest pending request opens
 * by itself when no dialog is open (unless the person closed it without
 * deciding); focus then starts on nothing, so a stray Enter decides nothing.
 */
import { createStore } from 'zustand/vanilla';
import type { ApprovalView, ConsoleApi } from '../../shared/ipc';
import type { Receipt } from '../../shared/receipt';
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
  /** The open request that disappeared without the person's decision: its ending receipt explains why. */
  vanished: string | null;
  /** The last few requests' ending sentences, by requestId (a receipt may arrive before the list changes). */
  endings: Array<[string, string]>;
  setPending(list: ApprovalView[]): void;
  /** A receipt arrived: if it ends the request that vanished from the open dialog, the notice says why. */
  explainEnd(receipt: Receipt): void;
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

/**
 * Why a request ended without the person's decision, from its ending receipt
 * (written by the console: never page text), or null for a receipt that does
 * not end it. A `navigated` refusal says that the page's URL changed while the
 * dialog was open: the approval binds the exact URL, so it could not run as shown.
 */
export function endingSentence(r: Receipt): string | null {
  const d = (r.detail ?? {}) as { code?: unknown; message?: unknown; reason?: unknown };
  const text = (v: unknown) => (typeof v === 'string' ? v.slice(0, 600) : '');
  switch (r.event) {
    case 'refused':
      if (d.code === 'navigated') {
        return (
          "The request you were reviewing was refused: the page's URL changed while it waited. An approval holds for the exact URL " +
          'the page had when you were asked, so nothing was done and the agent was told. A page that keeps changing its URL cannot be approved.'
        );
      }
      if (d.code === 'descriptor-changed') {
        return (
          'The request you were reviewing was refused: the page changed or removed this tool while it waited, so what you ' +
          'were asked to approve is no longer what would run. Nothing was done and the agent was told.'
        );
      }
      return `The request you were reviewing was refused (${text(d.code)}): ${text(d.message)}`;
    case 'expired':
      return 'The request you were reviewing expired before you decided; nothing was done.';
    case 'cancelled':
      return `The request you were reviewing was cancelled: ${text(d.reason) || 'by the agent or the console'}. Nothing was done.`;
    default:
      return null;
  }
}

/**
 * After approving a form that only fills (no toolautosubmit): the notice tells the person that
 * nothing is sent until they press the page's own button (issue 8 item 4). The agent's call waits.
 */
export function waitingNotice(v: ApprovalView): { notice: string } | Record<string, never> {
  if (v.subject.type !== 'webmcp-tool' || !v.subject.form || v.subject.form.autosubmit) return {};
  return {
    notice:
      `Approved: the extension fills the form "${v.subject.toolName}" on the page (tab ${v.tab.tabId}). Nothing is sent until you ` +
      "press the form's own submit button on the page. The agent waits for that; if you do not press it in time, the filled fields are put back.",
  };
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
    vanished: null,
    endings: [],
    setPending(list) {
      const pending = sortApprovals(list);
      const { openId, busy } = get();
      const ids = new Set(pending.map((a) => a.requestId));
      const vanished = openId !== null && !ids.has(openId) && busy !== openId;
      const dismissed = get().dismissed.filter((id) => ids.has(id));
      const known = vanished ? get().endings.find(([id]) => id === openId)?.[1] : undefined;
      set({
        pending,
        dismissed,
        openId: nextOpenId(pending, vanished ? null : openId, dismissed),
        notice: vanished ? (known ?? 'The request you were reviewing is no longer pending (it expired, was cancelled or was refused).') : get().notice,
        vanished: vanished && !known ? openId : get().vanished,
      });
    },
    explainEnd(receipt) {
      // The console's own receipts (a refused API call) name no request.
      if (typeof receipt.requestId !== 'string' || receipt.faculty === 'console') return;
      const why = endingSentence(receipt);
      if (!why) return;
      const seen = get().endings;
      // The first ending counts: a later refused call about the same request (a late "approve") is not its end.
      if (seen.some(([id]) => id === receipt.requestId)) return;
      set({ endings: [...seen.slice(-19), [receipt.requestId, why]] });
      if (receipt.requestId === get().vanished) set({ notice: why, vanished: null });
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
      const decided = get().pending.find((a) => a.requestId === requestId);
      const pending = get().pending.filter((a) => a.requestId !== requestId);
      const dismissed = get().dismissed;
      set({ busy: null, pending, openId: nextOpenId(pending, null, dismissed), ...(decision === 'approve' && decided ? waitingNotice(decided) : {}) });
      return true;
    },
    clearNotice() {
      set({ notice: null });
    },
  }));
}

export type ApprovalsStore = ReturnType<typeof createApprovalsStore>;
