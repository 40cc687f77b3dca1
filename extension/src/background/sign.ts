/**
 * The sign of a shared tab (issue 8, item 8; docs/extension.md, "The sign in the page"): the
 * `sign` content module's badge in the page's top layer (content/sign.ts) and the toolbar
 * action's badge for that tab, both "shared" while the tab is shared and "running" while a
 * dispatch runs in it. The toolbar badge is browser UI the page cannot reach: it is the sign a
 * page can neither remove nor forge.
 *
 * Driven by the worker's own events (index.ts): the shared tab list (`tabs-changed`), a top
 * document that replaced the shared one (`navigated`, frame 0; Chrome clears a tab's own action
 * badge on navigation and the new document has no sign yet), and the dispatcher's runs (effects.ts).
 * Everything is best effort: a tab that went away simply has no sign.
 *
 * The same toolbar badge carries the console's state (issue 12 item 7, issue 11 item 2;
 * docs/stop.md, "Badges"), from the link's `console-state` request: the count of approvals waiting
 * for the person, on every tab, and a red background on every tab while developer mode is on. One
 * function decides a tab's badge from both (`badgeLook`): while an approval waits its count is the
 * text (the call to act), otherwise a shared tab's ON / RUN; the title always says both. The
 * global (default) badge is what tabs the sign never touched show; a tab the sign touched gets its
 * own values, recomputed at each change.
 */
import type { SharedTab } from '../../../src/shared/types';
import type { Result } from '../../../src/shared/result';
import type { SignState, ToSign } from '../lib/messages';
import { frameDocument, injectInto } from './tabs';

/** The content module's name (extension/src/content/sign.ts). */
export const SIGN_MODULE = 'sign';

/** The longest one message to a page's sign holds up the next (ms). */
export const PAGE_STEP_MS = 1_000;

/** The toolbar badge per state: text, colour and title (chrome.action, per tab). */
const BADGE: Record<SignState, { text: string; color: string; title: string }> = {
  hidden: { text: '', color: '#5f6368', title: 'Echo Console' },
  shared: { text: 'ON', color: '#1a73e8', title: 'Echo Console: this tab is shared with your agent' },
  running: { text: 'RUN', color: '#d93025', title: 'Echo Console: an agent action is running in this tab' },
};

/** What the console last said (`console-state`): approvals waiting, and developer mode. */
export interface ConsoleBadgeState {
  pending: number;
  developerMode: boolean;
}

/** The badge's text, background colour and title. */
export interface BadgeLook {
  text: string;
  color: string;
  title: string;
}

/** Red while developer mode is on (issue 11 item 2's colour), on every tab. */
export const DEVELOPER_MODE_COLOR = '#d93025';
/** Behind the pending count while developer mode is off. */
export const PENDING_COLOR = '#e8710a';

/** The pending count as badge text: '' for none, at most "99+" (about four characters fit). */
export function countText(n: number): string {
  return n <= 0 ? '' : n > 99 ? '99+' : String(n);
}

/**
 * One tab's badge (or, with state `hidden`, the global badge) from its sign state and the
 * console's state. Pure; the one place the badge is decided.
 */
export function badgeLook(state: SignState, c: ConsoleBadgeState): BadgeLook {
  const b = BADGE[state];
  const waiting = c.pending > 0 ? `${c.pending} approval${c.pending === 1 ? '' : 's'} waiting in Echo Console` : '';
  const title = [b.title, waiting, c.developerMode ? 'DEVELOPER MODE is on' : ''].filter(Boolean).join(' · ');
  return {
    text: c.pending > 0 ? countText(c.pending) : b.text,
    color: c.developerMode ? DEVELOPER_MODE_COLOR : c.pending > 0 ? PENDING_COLOR : b.color,
    title,
  };
}

/** The effects on the browser, injectable for unit tests. */
export interface SignDeps {
  /**
   * Send `msg` to the sign module of the tab's top document; for a `show`, first put the module
   * there if the document is at `origin` (the shared origin). null: no answer.
   */
  tellTop(tabId: number, msg: ToSign, origin: string | null): Promise<Result<{ state: SignState }> | null>;
  /** Set a tab's own badge (`tabId`), or the global one (`null`). */
  badge(tabId: number | null, look: BadgeLook, state: SignState): Promise<void>;
}

/**
 * Send `msg` to the sign module of the tab's top document. The module answers when it is there
 * (no browser round trip but the message itself: this runs beside every dispatch); when it is not
 * and `msg` shows the sign, it is injected into the top document, only if that document is at
 * `origin` (the shared origin: a tab that just left it gets no sign), and the message sent again.
 */
async function tellTop(tabId: number, msg: ToSign, origin: string | null): Promise<Result<{ state: SignState }> | null> {
  const answered = (r: unknown): r is Result<{ state: SignState }> => !!r && typeof r === 'object' && typeof (r as { ok?: unknown }).ok === 'boolean';
  try {
    const r: unknown = await chrome.tabs.sendMessage(tabId, msg, { frameId: 0 });
    if (answered(r)) return r;
  } catch {
    /* no sign module in the top document (yet), or no document */
  }
  if (msg.type !== 'echo:sign:show' || origin === null) return null;
  const top = await frameDocument(tabId, 0);
  if (!top || top.origin !== origin) return null;
  if ((await injectInto(tabId, [top.documentId], SIGN_MODULE)).size === 0) return null;
  try {
    const r: unknown = await chrome.tabs.sendMessage(tabId, msg, { frameId: 0, documentId: top.documentId });
    return answered(r) ? r : null;
  } catch {
    return null; // the document went away
  }
}

async function badge(tabId: number | null, b: BadgeLook): Promise<void> {
  const at = tabId === null ? {} : { tabId };
  await Promise.all([
    chrome.action.setBadgeText({ ...at, text: b.text }),
    chrome.action.setBadgeBackgroundColor({ ...at, color: b.color }),
    chrome.action.setTitle({ ...at, title: b.title }),
  ]).catch(() => undefined); // the tab closed meanwhile
}

const chromeDeps: SignDeps = { tellTop, badge };

/** The signs of every shared tab: one per service worker. */
export class Signs {
  /** The shared tabs and their shared origins. */
  private shared = new Map<number, string>();
  /** Dispatches running per tab (a tab may run more than one at once). */
  private readonly runs = new Map<number, number>();
  private readonly chains = new Map<number, Promise<void>>();
  /** The console's state, as last said (none yet: nothing waits, developer mode off). */
  private console: ConsoleBadgeState = { pending: 0, developerMode: false };
  /** Tabs given their own badge values: each change of the console's state recomputes them. */
  private readonly touched = new Set<number>();

  constructor(private readonly deps: SignDeps = chromeDeps) {}

  /**
   * The console's state changed (`console-state`; also `{pending: 0, developerMode: false}` when
   * the link dropped: a count nobody can answer is not shown): the global badge and every tab's own.
   */
  consoleState(c: ConsoleBadgeState): void {
    if (c.pending === this.console.pending && c.developerMode === this.console.developerMode) return;
    this.console = { pending: c.pending, developerMode: c.developerMode };
    void this.deps.badge(null, badgeLook('hidden', this.console), 'hidden').catch(() => undefined);
    for (const tabId of this.touched) this.drawBadge(tabId);
  }

  /** The console's state as last said (a copy). */
  consoleBadgeState(): ConsoleBadgeState {
    return { ...this.console };
  }

  private drawBadge(tabId: number): void {
    const state = this.stateOf(tabId);
    // A tab back to `hidden` with nothing to say keeps per-tab values equal to the global badge.
    this.touched.add(tabId);
    void this.deps.badge(tabId, badgeLook(state, this.console), state).catch(() => undefined);
  }

  /** The state a tab's sign should show now. */
  stateOf(tabId: number): SignState {
    if (!this.shared.has(tabId)) return 'hidden';
    return (this.runs.get(tabId) ?? 0) > 0 ? 'running' : 'shared';
  }

  /** The shared tab list as announced (`tabs-changed`): show the sign in new shares, take it down in ended ones. */
  tabsListed(tabs: readonly SharedTab[]): void {
    const now = new Map(tabs.map((t) => [t.tabId, t.origin]));
    const before = this.shared;
    this.shared = now;
    for (const tabId of now.keys()) if (!before.has(tabId)) void this.apply(tabId);
    for (const tabId of before.keys()) if (!now.has(tabId)) {
      this.runs.delete(tabId);
      void this.apply(tabId);
    }
  }

  /** A new top document in a shared tab (same origin: the share followed it), or one that finished parsing: draw the sign there. */
  topDocument(tabId: number): void {
    if (this.shared.has(tabId)) void this.apply(tabId);
  }

  /** A dispatch began in `tabId`; the returned function ends it (call once). */
  running(tabId: number): () => void {
    this.runs.set(tabId, (this.runs.get(tabId) ?? 0) + 1);
    void this.apply(tabId);
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      const n = (this.runs.get(tabId) ?? 1) - 1;
      if (n > 0) this.runs.set(tabId, n);
      else this.runs.delete(tabId);
      // Drawn in the next task: the dispatch's answer, settled in this one, is posted to the console
      // first (the badge's three chrome.action calls and the page's message cost about 1 ms).
      setTimeout(() => void this.apply(tabId), 0);
    };
  }

  /**
   * Whether the tab's top document answers within `timeoutMs` (ms). False only when the message
   * was delivered-or-pending and no answer came in time: its script is blocked (a JavaScript
   * dialog waits for the person) or busy. A document with no sign module, or a tab that is gone,
   * fails at once and counts as answering: nothing says it is blocked. Used after a dispatch
   * timed out, to say why.
   */
  async answers(tabId: number, timeoutMs: number): Promise<boolean> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), timeoutMs)));
    try {
      return (await Promise.race([this.deps.tellTop(tabId, { type: 'echo:sign:ping' }, null).catch(() => null), late])) !== 'late';
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Apply the tab's state. The toolbar badge at once (browser UI: it answers even when the page's
   * script is blocked, e.g. by an alert); the page's sign in order per tab, each message with the
   * state as it is when it is sent, and none waiting longer than PAGE_STEP_MS on a page that does
   * not answer (later messages to that document are still delivered after it, in order).
   */
  private apply(tabId: number): Promise<void> {
    this.drawBadge(tabId);
    const next = (this.chains.get(tabId) ?? Promise.resolve()).then(() => this.tellPage(tabId));
    this.chains.set(tabId, next);
    void next.then(() => {
      if (this.chains.get(tabId) === next) this.chains.delete(tabId);
    });
    return next;
  }

  private async tellPage(tabId: number): Promise<void> {
    const state = this.stateOf(tabId);
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      this.deps
        .tellTop(tabId, state === 'hidden' ? { type: 'echo:sign:hide' } : { type: 'echo:sign:show', state }, this.shared.get(tabId) ?? null)
        .catch(() => null),
      new Promise((resolve) => (timer = setTimeout(resolve, PAGE_STEP_MS))),
    ]);
    clearTimeout(timer);
  }
}
