/// <reference types="chrome" />
/**
 * Helpers for driving the extension's faculties from its service worker in
 * end-to-end tests: `globalThis.echoConsole.handleRequest` is what the link
 * calls for each console request (extension/src/background/index.ts).
 */
import type { Page, Worker } from '@playwright/test';
import type { ConsoleRequest, ConsoleRequestValue, ExtensionEvent } from '../../../src/shared/protocol';
import type { Result } from '../../../src/shared/result';

/** Send one ConsoleRequest to the extension, as the link would. */
export function request<K extends ConsoleRequest['op']>(worker: Worker, req: Extract<ConsoleRequest, { op: K }>): Promise<Result<ConsoleRequestValue[K]>> {
  return worker.evaluate(
    (r) => (globalThis as unknown as { echoConsole: { handleRequest(x: unknown): Promise<unknown> } }).echoConsole.handleRequest(r),
    req as unknown as Record<string, unknown>,
  ) as Promise<Result<ConsoleRequestValue[K]>>;
}

/** The tab ID of a Playwright page (matched by its exact URL). */
export async function tabIdOf(worker: Worker, page: Page): Promise<number> {
  const url = page.url();
  const id = await worker.evaluate(async (u) => {
    const tabs = await chrome.tabs.query({});
    return tabs.find((t) => t.url === u)?.id ?? -1;
  }, url);
  if (id < 0) throw new Error(`no tab shows ${url}`);
  return id;
}

/** Start recording extension events inside the worker; `events()` reads them back. */
export async function recordEvents(worker: Worker): Promise<{ events(): Promise<ExtensionEvent[]> }> {
  await worker.evaluate(() => {
    const g = globalThis as unknown as { __events?: unknown[]; echoConsole: { onEvent(l: (e: unknown) => void): void } };
    if (!g.__events) {
      g.__events = [];
      g.echoConsole.onEvent((e) => g.__events?.push(e));
    }
  });
  return {
    events: () => worker.evaluate(() => (globalThis as unknown as { __events: unknown[] }).__events) as Promise<ExtensionEvent[]>,
  };
}

/** Open `url` in a new tab and share it; answers the page and its tab ID. */
export async function openShared(worker: Worker, newPage: () => Promise<Page>, url: string): Promise<{ page: Page; tabId: number }> {
  const page = await newPage();
  await page.goto(url);
  const tabId = await tabIdOf(worker, page);
  const r = await request(worker, { op: 'share-tab', tabId });
  if (!r.ok) throw new Error(`share-tab failed: ${r.error.code} ${r.error.message}`);
  return { page, tabId };
}
