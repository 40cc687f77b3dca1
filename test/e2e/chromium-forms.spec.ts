// What Chromium 156 does with declarative (form) tools, pinned on resources/demo/appointment and
// resources/hostile/form-tricks.html in the real browser, no extension (docs/browser-facts.md,
// "WebMCP: declarative tools"):
//  - executeTool fills only the fields it names: the others keep their value, an earlier call's too;
//  - without toolautosubmit it fills the form, fires `toolactivated`, and stays pending until the
//    person submits (a real click: the submit event then has agentInvoked and respondWith);
//  - the page's form.reset() rejects the pending call ("cancelled by a form reset"), with no toolcancel;
//    aborting executeTool's signal rejects it with AbortError and fires `toolcancel`;
//  - a submit handler that calls preventDefault() without respondWith(): executeTool rejects with
//    UnknownError ("a programming error"), after the handler ran.
import { chromium, expect, test, type Browser, type Page } from '@playwright/test';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from './chromium';
import { startDemoServers, type DemoServers } from '../support/demo-servers';

interface PageTool {
  name: string;
}
interface PageModelContext extends EventTarget {
  getTools(): Promise<PageTool[]>;
  executeTool(tool: PageTool, args: object, options?: { signal?: AbortSignal }): Promise<string | null>;
}
declare const document: { modelContext: PageModelContext; querySelector(s: string): { value: string; reset(): void } };
declare const globalThis: Record<string, unknown>;

let servers: DemoServers;
let browser: Browser;

test.beforeAll(async () => {
  servers = await startDemoServers();
  browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
});
test.afterAll(async () => {
  await browser?.close();
  await servers?.close();
});

async function open(url: string): Promise<Page> {
  const page = await browser.newPage();
  await page.goto(url);
  await expect(page.locator('html')).toHaveAttribute('data-ready', 'true');
  // Every WebMCP event the page's modelContext fires, in order.
  await page.evaluate(() => {
    const log: string[] = [];
    globalThis.__events = log;
    for (const type of ['toolactivated', 'toolcancel']) document.modelContext.addEventListener(type, () => log.push(type));
  });
  return page;
}

/** Starts executeTool on `name` and keeps its settled value in globalThis.__call (a string, or "ERR Name: message"). */
function start(page: Page, name: string, args: object, withSignal = false): Promise<void> {
  return page.evaluate(
    async ({ name, args, withSignal }) => {
      const tool = (await document.modelContext.getTools()).find((t) => t.name === name)!;
      const ctl = new AbortController();
      globalThis.__abort = () => ctl.abort();
      globalThis.__call = document.modelContext.executeTool(tool, args, withSignal ? { signal: ctl.signal } : undefined).then(
        (v) => v,
        (e: Error) => `ERR ${e.name}: ${e.message}`,
      );
    },
    { name, args, withSignal },
  );
}
const settled = (page: Page) => page.evaluate(() => globalThis.__call as Promise<string | null>);
const events = (page: Page) => page.evaluate(() => globalThis.__events as string[]);

test('a form without toolautosubmit: filled, pending until the person submits; unnamed fields keep their values across calls', async () => {
  const page = await open(servers.url('appointment'));
  await start(page, 'request_callback', { day: '2026-12-16', at: '14:00', topic: 'results' });
  await expect(page.locator('#callback input[name=topic]')).toHaveValue('results');
  await expect.poll(() => events(page)).toEqual(['toolactivated']);
  await expect(page.getByTestId('callback-result')).toHaveAttribute('data-count', '0');
  await page.getByTestId('callback-submit').click();
  expect(JSON.parse((await settled(page)) ?? 'null')).toEqual({ ok: true, received: { day: '2026-12-16', at: '14:00', topic: 'results' } });
  await expect(page.getByTestId('callback-result')).toHaveAttribute('data-agent-invoked', 'true');

  // A second call without `topic`: the field keeps the first call's value, and it is submitted.
  await start(page, 'request_callback', { day: '2026-12-17', at: '09:00' });
  await expect(page.locator('#callback input[name=day]')).toHaveValue('2026-12-17');
  await expect(page.locator('#callback input[name=topic]')).toHaveValue('results');
  await page.getByTestId('callback-submit').click();
  expect(JSON.parse((await settled(page)) ?? 'null')).toEqual({ ok: true, received: { day: '2026-12-17', at: '09:00', topic: 'results' } });
  await page.close();
});

test("a pending form call ends on the page's form.reset() (no toolcancel) and on the caller's abort (toolcancel, AbortError)", async () => {
  const page = await open(servers.url('appointment'));
  await start(page, 'request_callback', { day: '2026-12-16', at: '14:00' });
  await expect(page.locator('#callback input[name=at]')).toHaveValue('14:00');
  await page.getByTestId('callback-reset').click();
  expect(await settled(page)).toBe('ERR UnknownError: Tool execution cancelled by a form reset');
  expect(await events(page)).toEqual(['toolactivated']);

  await start(page, 'request_callback', { day: '2026-12-16', at: '15:00' }, true);
  await expect(page.locator('#callback input[name=at]')).toHaveValue('15:00');
  await page.evaluate(() => (globalThis.__abort as () => void)());
  expect(await settled(page)).toMatch(/^ERR AbortError/);
  expect(await events(page)).toEqual(['toolactivated', 'toolactivated', 'toolcancel']);
  // The abort leaves the filled values in place: restoring them is the caller's business.
  expect(await page.locator('#callback input[name=at]').inputValue()).toBe('15:00');
  await expect(page.getByTestId('callback-result')).toHaveAttribute('data-count', '0');
  await page.close();
});

test('a submit handler that calls preventDefault() without respondWith(): the handler ran, executeTool rejects with UnknownError', async () => {
  const page = await open(`${servers.hostileOrigin}/hostile/form-tricks.html`);
  await start(page, 'handled_without_answer', { note: 'kept' });
  expect(await settled(page)).toBe(
    "ERR UnknownError: The site has a programming error: it called preventDefault() on the 'submit' event, without also calling respondWith() with the tool result",
  );
  await expect(page.getByTestId('handled-result')).toHaveAttribute('data-count', '1');
  expect(JSON.parse((await page.getByTestId('handled-result').getAttribute('data-received')) ?? 'null')).toEqual({ note: 'kept' });
  await page.close();
});
