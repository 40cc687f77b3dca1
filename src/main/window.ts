/**
 * The console's one window: secure webPreferences (security.ts), the app URL,
 * shown when ready. One window, one top frame: the IPC sender check relies on it.
 */
import { BrowserWindow } from 'electron';
import { APP_URL, secureWebPreferences } from './security';
import { appIcon } from './tray';

/**
 * Create and load the main window.
 * @param preloadPath absolute path of the built preload (`out/preload/index.cjs`).
 */
export function createMainWindow(preloadPath: string): BrowserWindow {
  const win = new BrowserWindow({
    width: 1180,
    height: 820,
    minWidth: 760,
    minHeight: 560,
    show: false,
    title: 'Echo Console',
    backgroundColor: '#f6f7f5',
    icon: appIcon(),
    autoHideMenuBar: true,
    webPreferences: secureWebPreferences(preloadPath),
  });
  win.once('ready-to-show', () => win.show());
  void win.loadURL(APP_URL);
  return win;
}

/** Bring the window to the front (restore, show, focus). */
export function revealWindow(win: BrowserWindow | null): void {
  if (!win || win.isDestroyed()) return;
  if (win.isMinimized()) win.restore();
  win.show();
  win.focus();
}
