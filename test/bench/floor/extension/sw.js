// The floor extension's service worker (test/bench/floor/index.ts drives it through
// Playwright's worker.evaluate). Two echoes, nothing else:
// - floorConnect(name): chrome.runtime.connectNative(name) and post every message
//   back unchanged (the native-messaging floor);
// - floorSwContent(tabId, n): n chrome.tabs.sendMessage round trips to the content
//   script of the tab's top frame, each timed here (ms), answered as an array.

/** The last native-port disconnect reason, for the bench's error messages. */
globalThis.floorNativeError = null;

globalThis.floorConnect = (name) => {
  const port = chrome.runtime.connectNative(name);
  port.onMessage.addListener((m) => port.postMessage(m));
  port.onDisconnect.addListener(() => {
    globalThis.floorNativeError = chrome.runtime.lastError?.message ?? 'disconnected';
  });
  return true;
};

globalThis.floorSwContent = async (tabId, n) => {
  const out = [];
  for (let i = 0; i < n; i++) {
    const s = performance.now();
    const r = await chrome.tabs.sendMessage(tabId, { echo: i }, { frameId: 0 });
    const d = performance.now() - s;
    if (!r || r.echo !== i) throw new Error('content script answered ' + JSON.stringify(r));
    out.push(d);
  }
  return out;
};

globalThis.floorTabId = async (url) => (await chrome.tabs.query({})).find((t) => t.url === url)?.id ?? -1;
