/**
 * The tray icon and the "approval waiting" notification: minimal, so the
 * person notices a request while the window is hidden. Notification text holds
 * no page text (tool names, titles, descriptions are the page's words; some
 * notification servers render markup): only the agent's name and the origin,
 * both escaped.
 */
import { Menu, nativeImage, Notification, Tray, type NativeImage } from 'electron';
import type { ApprovalView } from '../shared/ipc';

// A 32×32 ring-and-dot mark, embedded so the host needs no resource folder.
const ICON_PNG_BASE64 = 'iVBORw0KGgoAAAANSUhEUgAAACAAAAAgCAYAAABzenr0AAABD0lEQVR42t2Xuw3EIAyGU2QV6pOYIboRsgLprrg52IUhoqyQGRiALlLOhYsTMoY8JPuu+BrkmN/GJqZ7vN6dJN2vCRgAD8xABDYk4ppHm9sFTMAK7I2s+M1lARYj208yo49TAkZM736RDX0dEjDesHHO2CrA3hQ5lQnbIqB25gvgAAP0iMG1paEmWAFTxYFrqGxX8TFxArhWex7o72elRUkBw8XIj2RioAR45sypQg1AQkKh30s14SkBc2P0FjfN7RIhwtWK8ds4FoxN5jQwqQ2ZrSnYRUpAqff7zGliBKTMtmfuBH0CxI9AvAjF21D8IhK/ilX8jMR/xyoGEvGRTMVQqmIsV/EwUfM0+9/X8Qdq4xR3flVXwQAAAABJRU5ErkJggg==';

/** The app icon as a nativeImage. */
export function appIcon(): NativeImage {
  return nativeImage.createFromDataURL(`data:image/png;base64,${ICON_PNG_BASE64}`);
}

/**
 * Create the tray icon with "Show console" and "Quit".
 * @returns the Tray, or null where the platform has no tray.
 */
export function createTray(actions: { show: () => void; quit: () => void }): Tray | null {
  try {
    const tray = new Tray(appIcon());
    tray.setToolTip('Echo Console');
    tray.setContextMenu(
      Menu.buildFromTemplate([
        { label: 'Show console', click: actions.show },
        { type: 'separator' },
        { label: 'Quit Echo Console', click: actions.quit },
      ]),
    );
    tray.on('click', actions.show);
    return tray;
  } catch {
    return null; // no system tray (some Linux desktops): the window is enough
  }
}

/** Escape the few characters that notification servers may read as markup. */
export function plainText(s: string, max = 80): string {
  const t = s.length > max ? `${s.slice(0, max - 1)}…` : s;
  return t.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** The notification text for one new approval request (no page text: `verb` is the console's own words for the faculty). */
export function approvalNotificationText(a: ApprovalView): { title: string; body: string } {
  let host = a.origin;
  try {
    host = new URL(a.origin).host;
  } catch {
    /* keep the origin as given */
  }
  return { title: 'Approval waiting', body: `${plainText(a.agent.name, 40)} asks to ${plainText(a.verb, 60)} on ${plainText(host)}.` };
}

/**
 * Tracks which approvals were already announced and shows one notification per
 * new request id. Clicking one calls `onClick` with its request id (the host
 * brings the window forward and opens that request's dialog).
 */
export class ApprovalNotifier {
  private seen = new Set<string>();

  constructor(private readonly onClick: (requestId: string) => void) {}

  /** Call with every 'approvals' event; notifies about the ids not seen before. */
  update(approvals: ApprovalView[]): void {
    const current = new Set(approvals.map((a) => a.requestId));
    for (const a of approvals) {
      if (this.seen.has(a.requestId)) continue;
      this.seen.add(a.requestId);
      if (!Notification.isSupported()) continue;
      const n = new Notification({ ...approvalNotificationText(a), silent: false });
      const id = a.requestId;
      n.on('click', () => this.onClick(id));
      n.show();
    }
    for (const id of this.seen) if (!current.has(id)) this.seen.delete(id);
  }
}

/** The tray's tooltip for the console's state: the approvals waiting, and developer mode. */
export function trayToolTip(pending: number, developerMode: boolean): string {
  const waiting = pending > 0 ? `${pending} approval${pending === 1 ? '' : 's'} waiting` : 'no approval waiting';
  return `Echo Console: ${waiting}${developerMode ? ' · DEVELOPER MODE on' : ''}`;
}

/**
 * The tray badge (issue 12 item 7): the tray's tooltip and title (the text beside the icon in
 * macOS's menu bar) and the app's badge count (macOS dock, Linux launchers that show one) carry the
 * number of approvals waiting. Fed by the core's `approvals` and `settings` events; each call that
 * changes nothing does nothing. Never throws (a platform without a tray or a badge is fine).
 */
export class TrayBadge {
  private pending = 0;
  private developerMode = false;
  private shown: string | null = null;

  constructor(
    private tray: Pick<Tray, 'setToolTip' | 'setTitle'> | null,
    private readonly app: { setBadgeCount?(count?: number): boolean },
  ) {}

  /** The tray now exists (it is made after the first events may have come): draw what is known. */
  attach(tray: Pick<Tray, 'setToolTip' | 'setTitle'> | null): void {
    this.tray = tray;
    this.shown = null;
    this.update({});
  }

  /** Update what is known (either part may be left out); redraws when it changed. */
  update(p: { pending?: number; developerMode?: boolean }): void {
    if (p.pending !== undefined) this.pending = p.pending;
    if (p.developerMode !== undefined) this.developerMode = p.developerMode;
    const key = `${this.pending}:${this.developerMode}`;
    if (key === this.shown) return;
    this.shown = key;
    try {
      this.tray?.setToolTip(trayToolTip(this.pending, this.developerMode));
      this.tray?.setTitle(this.pending > 0 ? String(this.pending) : '');
    } catch {
      /* a tray that went away */
    }
    try {
      this.app.setBadgeCount?.(this.pending);
    } catch {
      /* no badge on this platform */
    }
  }
}
