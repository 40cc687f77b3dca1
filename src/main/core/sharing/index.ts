/**
 * Sharing: which tabs the person shared with the agent, as the extension
 * reports them, and the ONE place that writes `tab-shared` / `tab-unshared`
 * receipts (docs/design.md, "Trust rules": the agent sees only tabs the person
 * shared). The broker listens to its events (`onChange`, `onTabsGone`) to
 * forget discoveries and cancel approvals of tabs that are no longer shared.
 *
 * The console's own pages (the loopback web host, the MCP endpoint's origin)
 * are never shared with the agent, whoever shared them: such a tab is left out
 * of the list, refused (one `refused` receipt per share) and unshared.
 */
import type { Actor, Receipt, ReceiptInput, ReceiptPage, ReceiptQuery } from '../../../shared/receipt';
import { err, ok, toErrorInfo, type Result } from '../../../shared/result';
import type { UnshareReason } from '../../../shared/protocol';
import type { SharedTab } from '../../../shared/types';
import { originOf as urlOrigin } from '../../../shared/url';
import type { ExtensionLink } from '../ports';

/** What the agent is told about a tab that shows the console itself. */
export const CONSOLE_TAB_REFUSAL = 'shows the Echo Console itself, which is never shared with the agent';

const PERSON: Actor = { kind: 'person' };

/** The ledger as sharing needs it: append, and the receipts of open shares at start. */
export interface SharingLedger {
  append(input: ReceiptInput): Receipt;
  query(q: ReceiptQuery): ReceiptPage;
}

export interface SharingOptions {
  link: ExtensionLink;
  ledger: SharingLedger;
  /** Timeout of the link requests sharing makes (ms). */
  timeoutMs?: number;
  consoleOrigins?: readonly string[];
  logger?: { warn(message: string, detail?: unknown): void };
}

/** The http(s) origin of a URL or origin string (src/shared/url.ts `originOf`), or null when it has none. */
export function originOf(s: string | null | undefined): string | null {
  const o = urlOrigin(typeof s === 'string' ? s : null);
  return o === 'null' ? null : o;
}

/** One share as receipted: (tabId, sharedAt). The extension keeps sharedAt across same-origin navigations. */
interface KnownShare {
  tabId: number;
  origin: string | null;
  documentId: string | null;
  /** Absent for shares recorded before sharedAt was kept in the receipt. */
  sharedAt?: number;
}

/** The shared tabs, their receipts, and the console's own origins. */
export class Sharing {
  private readonly link: ExtensionLink;
  private readonly ledger: SharingLedger;
  private readonly timeoutMs: number;
  private readonly log: { warn(message: string, detail?: unknown): void };
  private tabs: SharedTab[] = [];
  private consoleOrigins = new Set<string>();
  /** Console tabs the extension reported shared: tabId → sharedAt of the share that was refused (one receipt per share). */
  private readonly consoleTabs = new Map<number, number>();
  /** Whether the extension has given a whole list yet (until then the list holds only the console's own shares). */
  private listed = false;
  /** While one `setAll` applies: why the shares it ends ended, as the extension said. */
  private readonly endReasons = new Map<number, UnshareReason>();
  private readonly changeListeners = new Set<(tabs: SharedTab[], complete: boolean) => void>();
  private readonly goneListeners = new Set<(tabIds: number[]) => void>();
  private readonly endedListeners = new Set<(tabId: number, reason: string) => void>();
  /** Shares already receipted, seeded from the ledger so a restart does not record them again. */
  private readonly known: Map<number, KnownShare>;
  /** Tabs the person is sharing or unsharing from the console right now: their receipts say via 'console'. */
  private readonly consoleActions = new Set<number>();

  constructor(opts: SharingOptions) {
    this.link = opts.link;
    this.ledger = opts.ledger;
    this.timeoutMs = opts.timeoutMs ?? 10_000;
    this.log = opts.logger ?? { warn: () => {} };
    this.setConsoleOrigins(opts.consoleOrigins ?? []);
    this.known = this.openSharesFromLedger();
  }

  // ---- reading ------------------------------------------------------------------

  /** The shared tabs as last reported by the extension (copies; never a console tab). */
  list(): SharedTab[] {
    return this.tabs.map((t) => ({ ...t }));
  }

  /** One shared tab, or undefined. */
  get(tabId: number): SharedTab | undefined {
    const t = this.tabs.find((x) => x.tabId === tabId);
    return t ? { ...t } : undefined;
  }

  /** Whether this tab was reported shared while it showed the console (refused; never handed over). */
  isRefusedConsoleTab(tabId: number): boolean {
    return this.consoleTabs.has(tabId);
  }

  /**
   * Listen to the list changing; returns the unsubscribe function. `complete` is
   * false until the extension has given a whole list: a tab missing from the list
   * then proves nothing.
   */
  onChange(listener: (tabs: SharedTab[], complete: boolean) => void): () => void {
    this.changeListeners.add(listener);
    return () => this.changeListeners.delete(listener);
  }

  /** Listen to tabs leaving the list (unshared, closed, refused); returns the unsubscribe function. */
  onTabsGone(listener: (tabIds: number[]) => void): () => void {
    this.goneListeners.add(listener);
    return () => this.goneListeners.delete(listener);
  }

  /**
   * Listen to shares ending, right after their `tab-unshared` receipt: unshared or
   * closed, moved to another origin, or shared anew (a new sharedAt). The policy's tab
   * rules end with them (src/main/core/api/policy.ts). Returns the unsubscribe function.
   */
  onShareEnded(listener: (tabId: number, reason: string) => void): () => void {
    this.endedListeners.add(listener);
    return () => this.endedListeners.delete(listener);
  }

  /** The share of `tabId` that the receipts record as open (seeded from the ledger at start), or undefined. */
  recordedShare(tabId: number): { origin: string | null } | undefined {
    const k = this.known.get(tabId);
    return k ? { origin: k.origin } : undefined;
  }

  // ---- what the extension reports -------------------------------------------------

  /**
   * Replace the list with a whole list from the extension (`tabs-changed`, `list-tabs`).
   * `ended`: the shares that ended since the last list and why (the extension's `tabs-changed`
   * says so; src/shared/protocol.ts UnshareReason): their `tab-unshared` receipt names the
   * extension as the actor for an unshare on its own authority (tab closed, another origin, a
   * page that may not be shared), the person for the popup's or the console's.
   */
  setAll(tabs: SharedTab[], ended?: ReadonlyArray<{ tabId: number; reason: UnshareReason }>): void {
    this.listed = true;
    for (const e of ended ?? []) this.endReasons.set(e.tabId, e.reason);
    this.apply(tabs);
    this.endReasons.clear();
  }

  /** One tab shared, as the extension's `share-tab` answer says, without claiming to know the rest. */
  put(tab: SharedTab): void {
    this.apply([...this.tabs.filter((t) => t.tabId !== tab.tabId), tab]);
  }

  /** One tab no longer shared (the extension's `unshare-tab` answered). */
  drop(tabId: number): void {
    this.apply(this.tabs.filter((t) => t.tabId !== tabId));
  }

  /** Ask the extension for the whole list (after a (re)connect) and apply it. */
  async refresh(): Promise<Result<SharedTab[]>> {
    const r = await this.link.request({ op: 'list-tabs' }, { timeoutMs: this.timeoutMs });
    if (r.ok) this.setAll(r.value);
    return r;
  }

  // ---- the person's own actions (console API) --------------------------------------

  /** Every normal tab that could be shared, without the console's own pages. */
  async shareable(): Promise<Result<SharedTab[]>> {
    const r = await this.link.request({ op: 'list-shareable-tabs' }, { timeoutMs: this.timeoutMs });
    return r.ok ? ok(r.value.filter((t) => !this.isConsoleTab(t))) : r;
  }

  /** Share a tab from the console (receipt via 'console'). Refuses the console's own page. */
  async share(tabId: number): Promise<Result<SharedTab>> {
    const consoleTab = () => err('console-tab', `Tab ${tabId} shows the Echo Console itself; the console is never shared with the agent.`);
    const candidates = await this.link.request({ op: 'list-shareable-tabs' }, { timeoutMs: this.timeoutMs });
    if (candidates.ok && candidates.value.some((t) => t.tabId === tabId && this.isConsoleTab(t))) return consoleTab();
    this.consoleActions.add(tabId);
    try {
      const r = await this.link.request({ op: 'share-tab', tabId }, { timeoutMs: this.timeoutMs });
      if (!r.ok) return r;
      if (this.isConsoleTab(r.value)) {
        // It navigated to the console meanwhile: undo at once.
        await this.link.request({ op: 'unshare-tab', tabId }, { timeoutMs: this.timeoutMs });
        return consoleTab();
      }
      // The receipt is written by `record`, once, whichever list reports the share first.
      this.put(r.value);
      return r;
    } finally {
      this.consoleActions.delete(tabId);
    }
  }

  /** Stop sharing a tab from the console (receipt via 'console'). */
  async unshare(tabId: number): Promise<Result<null>> {
    this.consoleActions.add(tabId);
    try {
      const r = await this.link.request({ op: 'unshare-tab', tabId }, { timeoutMs: this.timeoutMs });
      if (!r.ok) return r;
      this.drop(tabId);
      return ok(null);
    } finally {
      this.consoleActions.delete(tabId);
    }
  }

  // ---- the console's own pages -----------------------------------------------------

  /**
   * The console's own origins (the web host passes `http://127.0.0.1:<port>` and
   * `http://localhost:<port>` once it has bound). Applies to the tabs already listed too.
   */
  setConsoleOrigins(origins: readonly string[]): void {
    this.consoleOrigins = new Set(origins.map(originOf).filter((o): o is string => o !== null));
    // Only when a tab already listed turns out to be the console: re-announcing an
    // unchanged list (or the empty one before the extension's first) would mean nothing.
    if (this.tabs.some((t) => this.isConsoleTab(t))) this.apply(this.tabs);
  }

  /** Whether this origin or URL is one of the console's own pages. */
  isConsoleOrigin(originOrUrl: string | null | undefined): boolean {
    const o = originOf(originOrUrl);
    return o !== null && this.consoleOrigins.has(o);
  }

  /** Whether this tab shows the console itself (by its origin or its URL). */
  isConsoleTab(tab: Pick<SharedTab, 'origin' | 'url'>): boolean {
    return this.isConsoleOrigin(tab.origin) || this.isConsoleOrigin(tab.url);
  }

  /** Ask the extension to stop sharing a tab (best effort; the list follows its answer or event). */
  askUnshare(tabId: number): void {
    void this.link.request({ op: 'unshare-tab', tabId }, { timeoutMs: this.timeoutMs }).catch(() => undefined);
  }

  // ---- internals -----------------------------------------------------------------------

  private apply(tabs: SharedTab[]): void {
    const own = tabs.filter((t) => this.isConsoleTab(t));
    const rest = tabs.filter((t) => !this.isConsoleTab(t));
    for (const t of rest) this.consoleTabs.delete(t.tabId);
    for (const t of own) this.refuseConsoleTab(t);
    const before = new Set(this.tabs.map((t) => t.tabId));
    this.tabs = rest.map((t) => ({ ...t }));
    const now = new Set(rest.map((t) => t.tabId));
    const gone = [...before].filter((id) => !now.has(id));
    this.record(this.tabs, this.listed);
    if (gone.length) for (const l of this.goneListeners) this.safely(() => l(gone));
    for (const l of this.changeListeners) this.safely(() => l(this.list(), this.listed));
  }

  private safely(f: () => void): void {
    try {
      f();
    } catch (e) {
      this.log.warn('a sharing listener failed', toErrorInfo(e));
    }
  }

  /** A console tab reported shared: one `refused` receipt per share, and ask the extension to unshare it (every time it is seen). */
  private refuseConsoleTab(t: SharedTab): void {
    if (this.consoleTabs.get(t.tabId) !== t.sharedAt) {
      this.consoleTabs.set(t.tabId, t.sharedAt);
      this.receipt({
        requestId: null,
        event: 'refused',
        faculty: 'console',
        actor: { kind: 'console' },
        tabId: t.tabId,
        origin: originOf(t.origin) ?? originOf(t.url),
        documentId: t.documentId || null,
        detail: { code: 'console-tab', message: `Tab ${t.tabId} was shared but ${CONSOLE_TAB_REFUSAL}: the console stopped sharing it.` },
      });
    }
    this.askUnshare(t.tabId);
  }

  private receipt(input: ReceiptInput): void {
    try {
      this.ledger.append(input);
    } catch (e) {
      this.log.warn('could not write a sharing receipt', { event: input.event, error: toErrorInfo(e) });
    }
  }

  private openSharesFromLedger(): Map<number, KnownShare> {
    const open = new Map<number, KnownShare>();
    try {
      const rows = [...this.ledger.query({ event: 'tab-shared', limit: 500 }).receipts, ...this.ledger.query({ event: 'tab-unshared', limit: 500 }).receipts].sort(
        (a, b) => a.seq - b.seq,
      );
      for (const r of rows) {
        if (r.tabId === null) continue;
        if (r.event === 'tab-unshared') {
          open.delete(r.tabId);
          continue;
        }
        const sharedAt = (r.detail as { sharedAt?: unknown } | null)?.sharedAt;
        open.set(r.tabId, { tabId: r.tabId, origin: r.origin, documentId: r.documentId, ...(typeof sharedAt === 'number' ? { sharedAt } : {}) });
      }
    } catch (e) {
      this.log.warn('could not read the open shares from the ledger', toErrorInfo(e));
    }
    return open;
  }

  /**
   * The ONE place that writes tab-shared / tab-unshared: every new list is compared
   * with the shares already recorded. A share is one (tabId, sharedAt): a new share
   * gets a new sharedAt, a same-origin navigation keeps it.
   */
  private record(tabs: SharedTab[], complete: boolean): void {
    const now = new Map(tabs.map((t) => [t.tabId, t]));
    const via = (tabId: number) => (this.consoleActions.has(tabId) ? 'console' : 'extension');
    for (const k of [...this.known.values()]) {
      const t = now.get(k.tabId);
      if (t && t.origin === k.origin && (k.sharedAt === undefined || k.sharedAt === t.sharedAt)) continue;
      // Before the extension's first whole list, only the console's own unshare proves a share ended.
      if (!t && !complete && !this.consoleActions.has(k.tabId)) continue;
      this.known.delete(k.tabId);
      const why = this.endReasons.get(k.tabId);
      const byExtension = why !== undefined && why !== 'person' && why !== 'console';
      this.receipt({
        requestId: null,
        event: 'tab-unshared',
        faculty: 'console',
        actor: byExtension ? { kind: 'extension' } : PERSON,
        tabId: k.tabId,
        origin: k.origin,
        documentId: k.documentId,
        detail: { via: via(k.tabId), ...(why ? { reason: why } : {}) },
      });
      const reason = t ? (t.origin !== k.origin ? 'the tab moved to another origin' : 'the tab was shared anew') : 'the tab is no longer shared';
      for (const l of this.endedListeners) this.safely(() => l(k.tabId, reason));
    }
    for (const t of tabs) {
      const k = this.known.get(t.tabId);
      if (k) {
        k.documentId = t.documentId || k.documentId;
        k.sharedAt ??= t.sharedAt;
        continue;
      }
      this.known.set(t.tabId, { tabId: t.tabId, origin: t.origin, documentId: t.documentId || null, sharedAt: t.sharedAt });
      this.receipt({
        requestId: null,
        event: 'tab-shared',
        faculty: 'console',
        actor: PERSON,
        tabId: t.tabId,
        origin: t.origin,
        documentId: t.documentId || null,
        detail: { via: via(t.tabId), sharedAt: t.sharedAt },
      });
    }
  }
}
