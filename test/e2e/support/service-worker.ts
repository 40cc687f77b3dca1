/**
 * Stopping the extension's service worker the way Chrome does when it idles, from
 * the test side over CDP (`ServiceWorker.stopWorker`): the extension itself has no
 * `debugger` permission, and no page of it can do this. Used by the link tests that
 * check what survives a worker restart (docs/extension.md, docs/link.md).
 */
import type { BrowserContext, CDPSession, Page } from '@playwright/test';
import { until } from './link-fixture';

/** A service worker version as CDP's `ServiceWorker.workerVersionUpdated` reports it. */
export interface WorkerVersion {
  versionId: string;
  scriptURL: string;
  runningStatus: string;
}

/** What `stopServiceWorker` leaves open: the CDP session and what it reported since the stop. */
export interface StoppedWorker {
  /** The CDP session on the popup; detach it when the test is done with it. */
  cdp: CDPSession;
  /** The stopped worker's version id. */
  versionId: string;
  /** Every version update CDP reported from the stop on (a restart shows `running` again). */
  since(): WorkerVersion[];
}

/**
 * Stop the extension's running service worker and wait until CDP reports it stopped.
 * @param world the browser context and the extension's id (a LinkWorld).
 * @param page a page of the extension (the popup) to open the CDP session on.
 * @throws Error (from `until`) when no running worker of ours, or no stop, is seen within 15 s.
 */
export async function stopServiceWorker(world: { context: BrowserContext; extensionId: string }, page: Page): Promise<StoppedWorker> {
  const cdp = await world.context.newCDPSession(page);
  const versions: WorkerVersion[] = [];
  cdp.on('ServiceWorker.workerVersionUpdated', (e) => void versions.push(...e.versions));
  await cdp.send('ServiceWorker.enable');
  const ours = await until(() => versions.find((v) => v.scriptURL.startsWith(`chrome-extension://${world.extensionId}/`) && v.runningStatus === 'running'), 'our running service worker');
  const seen = versions.length;
  await cdp.send('ServiceWorker.stopWorker', { versionId: ours.versionId });
  const since = () => versions.slice(seen);
  await until(() => since().some((v) => v.versionId === ours.versionId && v.runningStatus === 'stopped'), 'the worker to stop');
  return { cdp, versionId: ours.versionId, since };
}
