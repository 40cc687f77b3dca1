/**
 * The Electron host: a thin shell around the console core (src/main/core).
 * It owns the window, IPC, tray and notifications, and the safeStorage-backed
 * secret store; every decision about requests, grants and receipts is the
 * core's. Security settings live in security.ts, IPC in ipc.ts (docs/hosts.md).
 */
import { fileURLToPath } from 'node:url';
import { app, BrowserWindow, ipcMain, protocol, safeStorage, session, shell } from 'electron';
import type { ConsoleEvent } from '../shared/ipc';
import { unpackedPath } from './asar-paths';
import { createConsoleCore } from './core';
import { resolveDataDir } from './data-dir.mjs';
import { createInputGate } from './core/trusted-input';
import { pushEvent, registerIpcHandlers, watchTrustedInput } from './ipc';
import { SafeStorageSecretStore } from './secret-store';
import { SafeStorageLedgerKeyHolder } from './ledger-key';
import { defaultLedgerKeyFile } from './core/ledger/key-holder';
import { APP_SCHEME_PRIVILEGES, hardenSession, hardenWebContents, registerAppProtocol } from './security';
import { ApprovalNotifier, createTray, TrayBadge } from './tray';
import { createMainWindow, revealWindow } from './window';

const PRELOAD = fileURLToPath(new URL('../preload/index.cjs', import.meta.url));
const RENDERER_DIR = fileURLToPath(new URL('../renderer/', import.meta.url));
// The bundled native host (npm run build:tools); Chrome starts it through the manifests the core writes.
// In a packaged app it lives in app.asar.unpacked (asarUnpack), where a plain Node can read it.
const HOST_SCRIPT = unpackedPath(fileURLToPath(new URL('../tools/native-host.mjs', import.meta.url)));

// Must happen before `ready` (Electron: protocol.registerSchemesAsPrivileged).
protocol.registerSchemesAsPrivileged([APP_SCHEME_PRIVILEGES]);
// Same data folder as the web host (`npm run start:web`), so both run the same console.
app.setPath('userData', resolveDataDir());

let win: BrowserWindow | null = null;

if (!app.requestSingleInstanceLock()) {
  // A second launch only brings the first one's window forward ('second-instance' below).
  app.quit();
} else {
  app.on('second-instance', () => revealWindow(win));
  app.on('web-contents-created', (_event, contents) => hardenWebContents(contents, (url) => shell.openExternal(url)));
  app.whenReady().then(main, (e: unknown) => fatal(e));
}

async function main(): Promise<void> {
  const ses = session.defaultSession;
  hardenSession(ses);
  registerAppProtocol(ses, RENDERER_DIR);

  const dataDir = app.getPath('userData');
  const secrets = new SafeStorageSecretStore(safeStorage, dataDir, (m) => console.warn(`echo-console: ${m}`));
  // The ledger's checkpoint key: keychain-encrypted, outside the data folder (docs/ledger.md, "Signed checkpoints").
  // A holder that cannot be built is reported by the core, which then runs without signing.
  let ledgerKeyHolder: SafeStorageLedgerKeyHolder | undefined;
  try {
    ledgerKeyHolder = new SafeStorageLedgerKeyHolder(safeStorage, defaultLedgerKeyFile(dataDir), dataDir, (m) => console.warn(`echo-console: ${m}`));
  } catch (e) {
    console.warn(`echo-console: ${e instanceof Error ? e.message : String(e)}`);
  }
  // The launcher runs the bundled native host with `node` from PATH, else this Electron binary as Node (docs/link.md).
  // Trust rule 19: a decision or "developer mode on" counts only right after a real press
  // in the console window, seen here in the main process (watchTrustedInput below).
  const inputGate = createInputGate();
  const core = createConsoleCore({ dataDir, secretStore: secrets, inputGate, ...(ledgerKeyHolder ? { ledgerKeyHolder } : {}), nativeHost: { hostScript: HOST_SCRIPT, appExecutable: process.execPath } });
  await core.start();

  // A click on a request's notification brings the console forward with that request's dialog open.
  const notifier = new ApprovalNotifier((requestId) => {
    openWindow();
    pushEvent(win, { kind: 'open-approval', requestId });
  });
  // The tray is attached once it exists (below); the count is kept from the first event on.
  const trayBadge = new TrayBadge(null, app);
  registerIpcHandlers(ipcMain, core.api, () => win);
  core.onEvent((event: ConsoleEvent) => {
    pushEvent(win, event);
    if (event.kind === 'approvals') {
      notifier.update(event.approvals);
      trayBadge.update({ pending: event.approvals.length });
    } else if (event.kind === 'settings') {
      trayBadge.update({ developerMode: event.settings.developerMode });
    }
  });

  const openWindow = () => {
    if (win && !win.isDestroyed()) return revealWindow(win);
    win = createMainWindow(PRELOAD);
    // Each press of the person's also starts developer mode's idle time again (issue 11 item 2).
    watchTrustedInput(win.webContents, {
      noteInput: (type) => {
        const pressed = inputGate.noteInput(type);
        if (pressed) core.developerMode.touch();
        return pressed;
      },
    });
    win.on('closed', () => (win = null));
  };
  openWindow();
  const tray = createTray({ show: openWindow, quit: () => app.quit() });
  trayBadge.attach(tray);

  app.on('activate', openWindow);
  // With a tray, the console keeps serving the agent endpoint while its window is
  // closed and quits from the tray; without one, closing the window quits.
  app.on('window-all-closed', () => {
    if (!tray) app.quit();
  });
  let stopping = false;
  app.on('before-quit', (event) => {
    if (stopping) return;
    stopping = true;
    event.preventDefault();
    void Promise.resolve(core.stop()).finally(() => app.exit(0));
  });
}

function fatal(e: unknown): void {
  console.error(`echo-console: could not start: ${e instanceof Error ? e.message : String(e)}`);
  app.exit(1);
}
