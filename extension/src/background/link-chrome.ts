/**
 * The Chrome wiring of the link (link.ts holds the platform-neutral logic):
 * the native port (`chrome.runtime.connectNative(NATIVE_HOST_NAME)`, which
 * needs the `nativeMessaging` permission) and `chrome.storage.local` for the
 * pairing key.
 *
 * Service-worker lifetime: an open native messaging port keeps an MV3 worker
 * alive in current Chrome, so while the console runs, the link's timers run.
 * When the console is not running the port closes and the worker may be
 * stopped after ~30 s idle, taking the retry timer with it; the link starts
 * again the next time the worker wakes (any event: the popup, a tab change).
 * If the manifest grants the `alarms` permission, a one-minute alarm also
 * wakes the worker to retry.
 */
import { NATIVE_HOST_NAME } from '../../../src/shared/protocol';
import { startLink, type ExtLink, type LinkPort, type LinkStorage, type StartLinkOptions } from './link';

/** Open the native messaging port as a LinkPort. */
export function chromeNativePort(hostName: string = NATIVE_HOST_NAME): LinkPort {
  const port = chrome.runtime.connectNative(hostName);
  return {
    postMessage: (m) => port.postMessage(m),
    disconnect: () => port.disconnect(),
    onMessage: (l) => port.onMessage.addListener((m: unknown) => l(m)),
    // lastError must be read inside the listener; it explains why (host not found, exited, ...).
    onDisconnect: (l) => port.onDisconnect.addListener(() => l(chrome.runtime.lastError?.message)),
  };
}

/** chrome.storage.local as LinkStorage. */
export const chromeLocalStorage: LinkStorage = {
  get: async (k) => (await chrome.storage.local.get(k))[k],
  set: (k, v) => chrome.storage.local.set({ [k]: v }),
  remove: (k) => chrome.storage.local.remove(k),
};

const RETRY_ALARM = 'echo-console-link-retry';

/**
 * Start the link in the service worker. Call once, synchronously at the top
 * level of the worker (so the alarm listener is registered on every wake).
 */
export function startChromeLink(
  o: Pick<StartLinkOptions, 'onRequest' | 'onState' | 'logger' | 'timing'>,
): ExtLink {
  const link = startLink({
    ...o,
    connect: () => chromeNativePort(),
    storage: chromeLocalStorage,
    extensionId: chrome.runtime.id,
    extensionVersion: chrome.runtime.getManifest().version,
  });
  const alarms = (chrome as { alarms?: typeof chrome.alarms }).alarms;
  if (alarms) {
    alarms.onAlarm.addListener((a) => {
      if (a.name !== RETRY_ALARM) return;
      const s = link.state().state;
      // Only the states that retry by themselves; the others wait for the person.
      if (s === 'console-not-running' || s === 'not-installed' || s === 'connecting') link.retry();
    });
    void alarms.create(RETRY_ALARM, { periodInMinutes: 1 });
  }
  return link;
}
