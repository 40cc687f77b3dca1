/**
 * The preload (sandboxed, CommonJS): exposes exactly one object, `window.echo`,
 * with one method per ConsoleApi method plus `onEvent` (docs/design.md, "Conventions" §3;
 * Electron security checklist 3, "Enable context isolation", and 20, "Do not
 * expose Electron APIs to untrusted web content"). No raw `ipcRenderer`, no
 * `process`, no generic `send(channel, ...)`: each method names its own channel,
 * and the main process validates every payload anyway.
 */
import { contextBridge, ipcRenderer, type IpcRendererEvent } from 'electron';
import { CHANNELS, type ConsoleEvent, type EchoApi } from '../shared/ipc';

const api: EchoApi = {
  getSnapshot: () => ipcRenderer.invoke(CHANNELS.getSnapshot),
  decideApproval: (p) => ipcRenderer.invoke(CHANNELS.decideApproval, p),
  queryReceipts: (p) => ipcRenderer.invoke(CHANNELS.queryReceipts, p),
  verifyLedger: () => ipcRenderer.invoke(CHANNELS.verifyLedger),
  confirmPairing: (p) => ipcRenderer.invoke(CHANNELS.confirmPairing, p),
  unpair: () => ipcRenderer.invoke(CHANNELS.unpair),
  listShareableTabs: () => ipcRenderer.invoke(CHANNELS.listShareableTabs),
  shareTab: (p) => ipcRenderer.invoke(CHANNELS.shareTab, p),
  unshareTab: (p) => ipcRenderer.invoke(CHANNELS.unshareTab, p),
  createAgentToken: (p) => ipcRenderer.invoke(CHANNELS.createAgentToken, p),
  revokeAgentToken: (p) => ipcRenderer.invoke(CHANNELS.revokeAgentToken, p),
  updateSettings: (p) => ipcRenderer.invoke(CHANNELS.updateSettings, p),
  listPolicyRules: () => ipcRenderer.invoke(CHANNELS.listPolicyRules),
  addPolicyRule: (p) => ipcRenderer.invoke(CHANNELS.addPolicyRule, p),
  removePolicyRule: (p) => ipcRenderer.invoke(CHANNELS.removePolicyRule, p),
  getTargetPicture: (p) => ipcRenderer.invoke(CHANNELS.getTargetPicture, p),
  listPatches: (p) => ipcRenderer.invoke(CHANNELS.listPatches, p),
  revertPatches: (p) => ipcRenderer.invoke(CHANNELS.revertPatches, p),
  inspectTab: (p) => ipcRenderer.invoke(CHANNELS.inspectTab, p),
  invokeTool: (p) => ipcRenderer.invoke(CHANNELS.invokeTool, p),
  queryRequests: (p) => ipcRenderer.invoke(CHANNELS.queryRequests, p),
  countRequests: (p) => ipcRenderer.invoke(CHANNELS.countRequests, p),
  startExport: (p) => ipcRenderer.invoke(CHANNELS.startExport, p),
  cancelExport: (p) => ipcRenderer.invoke(CHANNELS.cancelExport, p),
  runConsoleLine: (p) => ipcRenderer.invoke(CHANNELS.runConsoleLine, p),
  stopScript: (p) => ipcRenderer.invoke(CHANNELS.stopScript, p),
  listScriptRuns: () => ipcRenderer.invoke(CHANNELS.listScriptRuns),
  stopRequest: (p) => ipcRenderer.invoke(CHANNELS.stopRequest, p),
  stopEverything: () => ipcRenderer.invoke(CHANNELS.stopEverything),
  reloadTab: (p) => ipcRenderer.invoke(CHANNELS.reloadTab, p),
  onEvent(listener) {
    if (typeof listener !== 'function') throw new TypeError('onEvent needs a function');
    // Hand the renderer the event data only, never the IpcRendererEvent (it carries `sender`).
    const handler = (_event: IpcRendererEvent, e: ConsoleEvent) => listener(e);
    ipcRenderer.on(CHANNELS.events, handler);
    return () => {
      ipcRenderer.removeListener(CHANNELS.events, handler);
    };
  },
};

contextBridge.exposeInMainWorld('echo', api);
