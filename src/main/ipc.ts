/**
 * The Electron host's IPC: one `ipcMain.handle` per ConsoleApi method
 * (`CHANNELS`, src/shared/ipc.ts), each with the same four steps
 * (docs/design.md, "Conventions" §2): check the sender, pass the payload to the core (which
 * validates it, once, against src/shared/api-schemas.ts and writes the refused
 * receipt; src/main/api-dispatch.ts, shared with the web host), answer a
 * Result. Nothing throws raw across the boundary. Core events are pushed to the
 * main window's top frame on `CHANNELS.events`.
 */
import type { BrowserWindow, IpcMain, IpcMainInvokeEvent, WebContents, WebFrameMain } from 'electron';
import { CHANNELS, type ConsoleApi, type ConsoleEvent } from '../shared/ipc';
import { err, type Result } from '../shared/result';
import { API_METHODS } from '../shared/api-schemas';
import { dispatchCall } from './api-dispatch';
import { isAppUrl } from './url-policy';
import type { InputGate } from './core/trusted-input';

/**
 * Whether an IPC message came from our console: the main window's own
 * webContents, its top frame (not an iframe, not another window), and that
 * frame showing our `app://echo` URL. Electron's checklist item 17
 * ("Validate the sender of all IPC messages") and `event.senderFrame`.
 * A missing frame (navigated away or destroyed) fails closed.
 */
export function isTrustedSender(event: Pick<IpcMainInvokeEvent, 'sender' | 'senderFrame'>, win: BrowserWindow | null): boolean {
  if (!win || win.isDestroyed()) return false;
  const contents = win.webContents;
  if (event.sender !== contents) return false;
  let frame: WebFrameMain | null;
  try {
    frame = event.senderFrame;
  } catch {
    return false; // accessing a disposed frame throws
  }
  if (!frame || frame.parent !== null) return false;
  const top = contents.mainFrame;
  if (frame.processId !== top.processId || frame.routingId !== top.routingId) return false;
  return isAppUrl(frame.url);
}

/**
 * Register one handler per CHANNELS method.
 * @param getWindow the console's main window (or null while there is none).
 * @returns a function that removes every handler.
 */
export function registerIpcHandlers(ipcMain: IpcMain, api: ConsoleApi, getWindow: () => BrowserWindow | null): () => void {
  for (const method of API_METHODS) {
    ipcMain.handle(CHANNELS[method], (event, ...args: unknown[]): Promise<Result<unknown>> => {
      if (!isTrustedSender(event, getWindow())) {
        return Promise.resolve(err('forbidden-sender', 'This message did not come from the console window.'));
      }
      return dispatchCall(api, method, args);
    });
  }
  return () => {
    for (const method of API_METHODS) ipcMain.removeHandler(CHANNELS[method]);
  };
}

/**
 * Push one core event to the console window (top frame only; dropped when
 * there is no window or it is not showing our app).
 */
export function pushEvent(win: BrowserWindow | null, event: ConsoleEvent): void {
  if (!win || win.isDestroyed()) return;
  const frame = win.webContents.mainFrame;
  if (!isAppUrl(frame.url)) return;
  frame.send(CHANNELS.events, event);
}

/**
 * Feed the trusted-input gate (src/main/core/trusted-input.ts, trust rule 19) with the
 * person's real input on the console window, as the main process sees it:
 * `before-input-event` (keyDown/keyUp, before the page gets them) and `input-event`
 * (mouse, touch and keys). Neither fires for a script's synthetic DOM event, so a
 * decision or "developer mode on" from the page passes only right after a real press.
 * @param contents the console window's webContents (only that window's input counts).
 * @returns a function that stops listening.
 */
export function watchTrustedInput(contents: Pick<WebContents, 'on' | 'off'>, gate: Pick<InputGate, 'noteInput'>): () => void {
  const onKey = (_e: unknown, input: { type?: unknown }) => void gate.noteInput(input?.type);
  const onInput = (_e: unknown, input: { type?: unknown }) => void gate.noteInput(input?.type);
  contents.on('before-input-event', onKey);
  contents.on('input-event', onInput);
  return () => {
    contents.off('before-input-event', onKey);
    contents.off('input-event', onInput);
  };
}
