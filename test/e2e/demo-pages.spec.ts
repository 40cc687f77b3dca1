// The demo and hostile pages in real Chromium 156 with WebMCP on: each page
// loads without console errors and its top document lists exactly the tools
// test/support/demo-servers.ts promises; the React shop's tools change the
// committed DOM, refuse a stale expectedRevision, replay an operationId and
// survive Strict Mode; the hostile triggers do what docs/demo.md says.
import { chromium, expect, test, type Browser, type Page } from '@playwright/test';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from './chromium';
import { DEMO_PAGES, startDemoServers, type DemoServers } from '../support/demo-servers';

// The page side of page.evaluate (tsconfig.node.json has no DOM lib).
interface PageTool {
  name: string;
  title: string;
  description: string;
  inputSchema: Record<string, unknown>;
  annotations?: Record<string, boolean>;
  origin: string;
  window: unknown;
}
interface PageModelContext extends EventTarget {
  getTools(): Promise<PageTool[]>;
  executeTool(tool: PageTool, args: object, options?: { signal?: AbortSignal }): Promise<string | null>;
}
declare const document: { modelContext: PageModelContext; querySelector(s: string): { textContent: string | null } | null };
declare const window: Record<string, unknown> & { postMessage(message: unknown, targetOrigin: string): void };

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

interface Opened {
  page: Page;
  errors: string[];
}

/** Opens a URL, records console errors and page errors, waits for <html data-ready="true">. */
async function open(url: string): Promise<Opened> {
  const page = await browser.newPage();
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text().slice(0, 300));
  });
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message.slice(0, 300)}`));
  await page.goto(url);
  await expect(page.locator('html')).toHaveAttribute('data-ready', 'true');
  return { page, errors };
}

const toolNames = (page: Page) => page.evaluate(async () => (await document.modelContext.getTools()).map((t) => t.name));

/** Executes one tool of the page by name; returns what executeTool resolved to, or "ERR Name: message". */
function execute(page: Page, name: string, args: object = {}): Promise<string | null> {
  return page.evaluate(
    async ({ name, args }) => {
      const tool = (await document.modelContext.getTools()).find((t) => t.name === name);
      if (!tool) return `ERR no tool ${name}`;
      try {
        return await document.modelContext.executeTool(tool, args);
      } catch (e) {
        return `ERR ${(e as Error).name}: ${(e as Error).message}`;
      }
    },
    { name, args },
  );
}

async function executeJson(page: Page, name: string, args: object = {}): Promise<Record<string, unknown>> {
  const raw = await execute(page, name, args);
  expect(raw, `${name} answered`).not.toMatch(/^ERR /);
  return JSON.parse(raw ?? 'null') as Record<string, unknown>;
}

test.describe('every page', () => {
  for (const spec of DEMO_PAGES) {
    test(`${spec.id} loads without console errors and lists ${spec.tools.length} tools`, async () => {
      const { page, errors } = await open(servers.url(spec.id));
      if (spec.id !== 'index') {
        const tools = await page.evaluate(async () =>
          (await document.modelContext.getTools()).map((t) => ({ name: t.name, origin: t.origin })),
        );
        expect(tools.map((t) => t.name)).toEqual([...spec.tools]);
        const origin = spec.origin === 'demo' ? servers.demoOrigin : servers.hostileOrigin;
        expect(new Set(tools.map((t) => t.origin))).toEqual(new Set(spec.tools.length ? [origin] : []));
      }
      expect(errors).toEqual([]);
      await page.close();
    });
  }

  test('the index links every page', async () => {
    const { page } = await open(servers.url('index'));
    const hrefs = await page.locator('a').evaluateAll((as) => as.map((a) => (a as unknown as { href: string }).href));
    for (const p of servers.pages.filter((p) => p.id !== 'index')) expect(hrefs).toContain(p.url);
    await page.close();
  });
});

test.describe('React shop', () => {
  test('set_cart_quantity through executeTool changes the committed DOM quantity and revision', async () => {
    const { page, errors } = await open(servers.url('store'));
    await expect(page.getByTestId('revision')).toHaveText('0');
    // Read the DOM in the same task as the answer: the tool only answers after React committed.
    const seen = await page.evaluate(async () => {
      const tool = (await document.modelContext.getTools()).find((t) => t.name === 'set_cart_quantity')!;
      const raw = await document.modelContext.executeTool(tool, { productId: 'mug', quantity: 3 });
      return {
        raw,
        domQuantity: document.querySelector('[data-testid="quantity-mug"]')?.textContent,
        domRevision: document.querySelector('[data-testid="revision"]')?.textContent,
      };
    });
    const result = JSON.parse(seen.raw ?? 'null') as { ok: boolean; revision: number; committed: boolean; cart: { items: { productId: string; quantity: number }[] } };
    expect(result).toMatchObject({ ok: true, revision: 1, committed: true });
    expect(result.cart.items).toEqual([expect.objectContaining({ productId: 'mug', quantity: 3 })]);
    expect(seen.domQuantity).toBe('3');
    expect(seen.domRevision).toBe('1');
    await expect(page.getByTestId('product-mug')).toHaveAttribute('data-quantity', '3');
    await expect(page.getByTestId('store')).toHaveAttribute('data-revision', '1');

    const cart = await executeJson(page, 'get_cart');
    expect(cart).toMatchObject({ revision: 1, totalCents: 3600 });
    const refused = await executeJson(page, 'set_cart_quantity', { productId: 'mug', quantity: 'many' });
    expect(refused).toMatchObject({ ok: false, error: 'invalid_arguments' });
    await expect(page.getByTestId('revision')).toHaveText('1');
    expect(errors).toEqual([]);
    await page.close();
  });

  test('a human edit since the agent looked makes expectedRevision refuse, without a change', async () => {
    const { page } = await open(servers.url('store'));
    const before = await executeJson(page, 'get_cart');
    expect(before.revision).toBe(0);
    await page.getByTestId('increment-tee').click(); // the person, meanwhile
    await expect(page.getByTestId('revision')).toHaveText('1');
    const refused = await executeJson(page, 'set_cart_quantity', { productId: 'tee', quantity: 5, expectedRevision: 0 });
    expect(refused).toMatchObject({ ok: false, error: 'revision_mismatch', expectedRevision: 0, currentRevision: 1 });
    expect(String(refused.message)).toContain('nothing was changed');
    await expect(page.getByTestId('quantity-tee')).toHaveText('1');
    await expect(page.getByTestId('revision')).toHaveText('1');
    const accepted = await executeJson(page, 'set_cart_quantity', { productId: 'tee', quantity: 5, expectedRevision: 1 });
    expect(accepted).toMatchObject({ ok: true, revision: 2 });
    await expect(page.getByTestId('quantity-tee')).toHaveText('5');
    await page.close();
  });

  test('a retry with the same operationId returns the same result and applies once', async () => {
    const { page } = await open(servers.url('store'));
    const args = { productId: 'stickers', quantity: 2, expectedRevision: 0, operationId: 'op-1' };
    const first = await execute(page, 'add_to_cart', args);
    const retry = await execute(page, 'add_to_cart', args); // expectedRevision is stale by now: the replay wins
    expect(retry).toBe(first);
    expect(JSON.parse(first ?? 'null')).toMatchObject({ ok: true, revision: 1, operationId: 'op-1' });
    await expect(page.getByTestId('quantity-stickers')).toHaveText('2');
    await expect(page.getByTestId('revision')).toHaveText('1');
    await expect(page.getByTestId('webmcp-status')).toHaveAttribute('data-replays', '1');

    // Two concurrent calls with one new operationId: one application.
    const both = await page.evaluate(async () => {
      const tool = (await document.modelContext.getTools()).find((t) => t.name === 'add_to_cart')!;
      const a = { productId: 'stickers', quantity: 1, operationId: 'op-2' };
      return Promise.all([document.modelContext.executeTool(tool, a), document.modelContext.executeTool(tool, a)]);
    });
    expect(both[0]).toBe(both[1]);
    await expect(page.getByTestId('quantity-stickers')).toHaveText('3');
    await expect(page.getByTestId('revision')).toHaveText('2');

    const conflict = await executeJson(page, 'add_to_cart', { productId: 'mug', quantity: 1, operationId: 'op-1' });
    expect(conflict).toMatchObject({ ok: false, error: 'operation_id_conflict' });
    await expect(page.getByTestId('revision')).toHaveText('2');
    await page.close();
  });

  test('Strict Mode registers twice, cleans up once and leaves no duplicate tools', async () => {
    const { page, errors } = await open(servers.url('store'));
    const debug = await page.evaluate(() => {
      const d = window.__storeDemo as { effectRuns: number; cleanups: number };
      return { effectRuns: d.effectRuns, cleanups: d.cleanups };
    });
    expect(debug).toEqual({ effectRuns: 2, cleanups: 1 }); // a development build: StrictMode really double-ran the effect
    const names = await toolNames(page);
    expect(names).toEqual(['add_to_cart', 'get_cart', 'list_products', 'set_cart_quantity']);
    const tools = await page.evaluate(async () => (await document.modelContext.getTools()).map((t) => ({ name: t.name, annotations: t.annotations, schema: t.inputSchema })));
    const set = tools.find((t) => t.name === 'set_cart_quantity')!;
    expect(set.schema).toMatchObject({ type: 'object', required: ['productId', 'quantity'], properties: { quantity: { type: 'integer', minimum: 0 } } });
    expect(tools.find((t) => t.name === 'get_cart')!.annotations).toMatchObject({ readOnlyHint: true });
    await expect(page.getByTestId('webmcp-status')).toHaveAttribute('data-state', 'registered');
    expect(errors).toEqual([]);
    await page.close();

    const plain = await open(`${servers.url('store')}?strict=0`);
    expect(await plain.page.evaluate(() => (window.__storeDemo as { effectRuns: number }).effectRuns)).toBe(1);
    expect(await toolNames(plain.page)).toHaveLength(4);
    await plain.page.close();
  });
});

test.describe('declarative forms', () => {
  test('schemas come from the fields; toolautosubmit answers through respondWith; a manual form waits for the person', async () => {
    const { page, errors } = await open(servers.url('forms'));
    const tools = await page.evaluate(async () => (await document.modelContext.getTools()).map((t) => ({ name: t.name, schema: t.inputSchema, annotations: t.annotations })));
    const book = tools.find((t) => t.name === 'book_table')!;
    expect(book.annotations).toBeUndefined();
    expect(book.schema).toMatchObject({
      type: 'object',
      properties: {
        name: { type: 'string', description: 'Name the reservation is under.' },
        guests: { type: 'number', minimum: 1, maximum: 12 },
        time: { enum: ['18:00', '19:00', '20:00', '21:00'] },
        outdoor: { type: 'boolean' },
      },
    });
    expect(new Set(book.schema.required as string[])).toEqual(new Set(['name', 'guests', 'time']));

    const sub = await executeJson(page, 'subscribe_newsletter', { email: 'a@example.com', frequency: 'monthly', issues: 4, terms: true });
    expect(sub).toEqual({ subscribed: true, email: 'a@example.com', frequency: 'monthly', issues: 4 });
    await expect(page.getByTestId('newsletter-result')).toHaveAttribute('data-agent-invoked', 'true');

    // Without toolautosubmit the call fills the form and waits for the person's submit.
    await page.evaluate(async () => {
      const tool = (await document.modelContext.getTools()).find((t) => t.name === 'book_table')!;
      window.__booking = document.modelContext.executeTool(tool, { name: 'Ada', guests: 2, time: '20:00', outdoor: true });
    });
    await expect(page.locator('#book-table input[name=name]')).toHaveValue('Ada');
    await expect(page.getByTestId('booking-result')).toHaveAttribute('data-count', '0');
    await page.locator('#book-table button[type=submit]').click();
    const booked = JSON.parse((await page.evaluate(() => window.__booking as Promise<string>)) ?? 'null') as Record<string, unknown>;
    expect(booked).toMatchObject({ booked: true, name: 'Ada', guests: 2, time: '20:00', outdoor: true });
    expect(errors).toEqual([]);
    await page.close();
  });
});

test.describe('changing tools', () => {
  test('run-time registration fires toolchange and changes getTools()', async () => {
    const { page, errors } = await open(servers.url('changing'));
    const changes = () => page.evaluate(() => (window.__changing as { toolchangeCount: number }).toolchangeCount);
    const start = await changes();
    expect(await page.evaluate(() => (window.__changing as { toggleExtra(): Promise<boolean> }).toggleExtra())).toBe(true);
    expect(await toolNames(page)).toEqual(['extra_tool', 'get_time', 'unlock_advanced_tools']);
    await expect.poll(changes).toBeGreaterThan(start);
    await page.getByRole('button', { name: /extra_tool/ }).click();
    await expect.poll(() => toolNames(page)).toEqual(['get_time', 'unlock_advanced_tools']);
    expect(await executeJson(page, 'unlock_advanced_tools')).toMatchObject({ unlocked: true, result: 'registered' });
    expect(await toolNames(page)).toContain('advanced_search');
    await page.evaluate(() => (window.__changing as { addForm(): boolean }).addForm());
    await expect.poll(() => toolNames(page)).toContain('dynamic_form');
    await page.evaluate(() => (window.__changing as { startCycle(ms: number): void }).startCycle(50));
    await expect.poll(() => toolNames(page)).toContain('flicker_tool');
    await page.evaluate(() => (window.__changing as { stopCycle(): void }).stopCycle());
    expect(await toolNames(page)).not.toContain('flicker_tool');
    expect(errors).toEqual([]);
    await page.close();
  });
});

test.describe('hostile pages', () => {
  test('rug pull: the trigger changes the description under the same name; an old handle runs the new tool', async () => {
    const { page } = await open(servers.url('rug-pull'));
    const weather = () => page.evaluate(async () => (await document.modelContext.getTools()).filter((t) => t.name === 'get_weather').map((t) => ({ description: t.description, title: t.title, schema: t.inputSchema, annotations: t.annotations })));
    const [before] = await weather();
    expect(before!.description).toBe('Returns the current weather for a city.');
    const stale = await page.evaluate(async () => {
      const old = (await document.modelContext.getTools()).find((t) => t.name === 'get_weather')!;
      const pulled = await (window.__rugPull as () => Promise<{ generation: number }>)();
      const raw = await document.modelContext.executeTool(old, { city: 'Oslo' });
      return { pulled, oldHandleRan: (JSON.parse(raw ?? 'null') as { variant: string }).variant };
    });
    // Chromium looks the handle up by name: the handle from before the pull runs the pulled registration.
    expect(stale).toEqual({ pulled: { generation: 1, variant: 'description' }, oldHandleRan: 'description' });
    const after = await weather();
    expect(after).toHaveLength(1);
    expect(after[0]!.description).toContain('saved passwords');
    expect(after[0]!.schema).toEqual(before!.schema); // only the description changed
    await expect(page.getByTestId('rug-pull-state')).toHaveAttribute('data-generation', '1');

    await page.evaluate(() => (window.__rugPull as (v: string) => Promise<unknown>)('all'));
    const [all] = await weather();
    expect(all!.schema).toMatchObject({ required: ['city', 'sync'] });
    expect(all!.annotations).toMatchObject({ readOnlyHint: false, consequentialHint: true });
    await page.evaluate(() => window.postMessage({ type: 'echo-demo:rug-pull', variant: 'title' }, '*'));
    await expect(page.getByTestId('rug-pull-state')).toHaveAttribute('data-generation', '3');
    await page.close();

    const timed = await open(`${servers.url('rug-pull')}?rugPullAfterMs=200`);
    await expect(timed.page.getByTestId('rug-pull-state')).toHaveAttribute('data-generation', '1');
    expect((await timed.page.evaluate(async () => (await document.modelContext.getTools()).find((t) => t.name === 'get_weather')!.description))).toContain('saved passwords');
    await timed.page.close();
  });

  test('same-name: the top lists its own and the same-origin frame\'s search; cross-origin frames need allow="tools"', async () => {
    const { page } = await open(servers.url('same-name'));
    await expect(page.getByTestId('frames-state')).toHaveAttribute('data-frames-ready', '4');
    const top = await page.evaluate(async () =>
      (await document.modelContext.getTools()).map((t) => `${t.origin} ${t.name} ${t.window === (window as unknown) ? 'top' : 'frame'}`),
    );
    expect(top).toEqual([`${servers.hostileOrigin} frame_info frame`, `${servers.hostileOrigin} search top`, `${servers.hostileOrigin} search frame`]);
    const frameTools = async (label: string) => {
      const frame = page.frames().find((f) => f.url().includes(`label=${label}`))!;
      return frame.evaluate(async () => {
        try {
          return (await document.modelContext.getTools()).map((t) => `${t.origin} ${t.name}`);
        } catch (e) {
          return `${(e as Error).name}`;
        }
      });
    };
    expect(await frameTools('cross-origin')).toEqual([`${servers.crossOrigin} frame_info`, `${servers.crossOrigin} search`]);
    expect(await frameTools('cross-origin-no-allow')).toBe('NotAllowedError');
    expect(await frameTools('sandboxed')).toBe('NotAllowedError');
    const refused = await page.evaluate(() => {
      const reports = window.__frameResults as Map<string, { result: string; error?: string }[]>;
      return [...reports.get('cross-origin-no-allow')!, ...reports.get('sandboxed')!].map((r) => r.error);
    });
    expect(refused).toHaveLength(4);
    for (const error of refused) expect(error).toMatch(/^NotAllowedError: .*permissions policy/);
    // executeTool from the top runs the frame's search as readily as its own.
    const answers = await page.evaluate(async () => {
      const all = (await document.modelContext.getTools()).filter((t) => t.name === 'search');
      return Promise.all(all.map(async (t) => JSON.parse((await document.modelContext.executeTool(t, { query: 'q' })) ?? 'null').frame as string));
    });
    expect(answers.sort()).toEqual(['same-origin', 'top']);
    await page.close();
  });

  test('navigation: same-page makes a new document with the identical tool; hash keeps the document', async () => {
    const { page } = await open(servers.url('navigation'));
    const token = () => page.evaluate(() => window.__documentToken as string);
    const descriptor = () => page.evaluate(async () => JSON.stringify((await document.modelContext.getTools()).map((t) => [t.name, t.title, t.description, t.inputSchema, t.annotations, t.origin])));
    const first = { token: await token(), descriptor: await descriptor() };
    await page.evaluate(() => (window.__navigate as (k: string) => string)('hash'));
    expect(await token()).toBe(first.token);
    await page.evaluate(() => (window.__navigate as (k: string) => string)('same-page'));
    await page.waitForURL(/gen=2/);
    await expect(page.locator('html')).toHaveAttribute('data-ready', 'true');
    expect(await token()).not.toBe(first.token);
    expect(await descriptor()).toBe(first.descriptor);
    await page.close();
  });

  test('misbehaving tools: what executeTool makes of throws, strings, undefined, 5 MiB and a hang', async () => {
    const { page } = await open(servers.url('misbehaving'));
    expect(await execute(page, 'throws_error')).toMatch(/^ERR UnknownError: /);
    expect(await execute(page, 'returns_plain_string')).toBe('plain text, not JSON');
    expect(await execute(page, 'returns_undefined')).toBe('undefined');
    expect(await execute(page, 'returns_circular')).toMatch(/^ERR UnknownError: /);
    expect(await execute(page, 'side_effect_then_throw')).toMatch(/^ERR UnknownError: /);
    await expect(page.getByTestId('side-effects')).toHaveAttribute('data-count', '1');
    const big = await page.evaluate(async () => {
      const tool = (await document.modelContext.getTools()).find((t) => t.name === 'returns_5mb')!;
      const raw = await document.modelContext.executeTool(tool, {});
      return raw?.length;
    });
    expect(big).toBe(5 * 1024 * 1024 + '{"data":""}'.length);
    const hang = await page.evaluate(async () => {
      const tool = (await document.modelContext.getTools()).find((t) => t.name === 'hangs_forever')!;
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 200);
      try {
        await document.modelContext.executeTool(tool, {}, { signal: controller.signal });
        return 'resolved';
      } catch (e) {
        return (e as Error).name;
      }
    });
    expect(hang).toBe('AbortError');
    await page.close();
  });

  test('names: Chromium refuses bidi, Cyrillic and zero-width names; look-alikes pass', async () => {
    const { page } = await open(servers.url('names'));
    const names = await page.evaluate(() => window.__names as { rejected: { name: string; error: string }[]; ignoredForms: string[] });
    expect(names.rejected).toHaveLength(6);
    for (const r of names.rejected) expect(r.error).toBe('InvalidStateError: Invalid tool name');
    expect(names.ignoredForms).toEqual(['p\u0430y_form', 'confirm\u202Etnemyap']);
    const titles = await page.evaluate(async () => Object.fromEntries((await document.modelContext.getTools()).map((t) => [t.name, t.title])));
    expect(titles.open_invoice).toContain('\u202E');
    expect(titles.pay_invoice).toBe('P\u0430y invoice');
    await page.close();
  });

  test('password form: the password is an ordinary string parameter and toolautosubmit submits it', async () => {
    const { page } = await open(servers.url('password-form'));
    const schema = await page.evaluate(async () => (await document.modelContext.getTools())[0]!.inputSchema);
    expect(schema).toMatchObject({ properties: { password: { type: 'string' } }, required: expect.arrayContaining(['username', 'password']) });
    expect(await executeJson(page, 'sign_in', { username: 'ada', password: 'hunter2' })).toEqual({ signedIn: true, username: 'ada', session: 'demo-session' });
    await expect(page.getByTestId('submissions')).toHaveAttribute('data-password-length', '7');
    await page.close();
  });

  test('proto keys stay own keys in schema and arguments, and pollute nothing', async () => {
    const { page } = await open(servers.url('proto-keys'));
    const seen = await page.evaluate(async () => {
      const tools = await document.modelContext.getTools();
      const tool = tools.find((t) => t.name === 'proto_keys')!;
      const args = JSON.parse('{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}') as object;
      const raw = await document.modelContext.executeTool(tool, args);
      return { schemaKeys: Object.keys((tool.inputSchema as { properties: object }).properties), raw };
    });
    expect(seen.schemaKeys).toEqual(['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty']);
    expect(JSON.parse(seen.raw ?? 'null')).toMatchObject({ ownKeys: ['__proto__', 'constructor'], ownProto: true, prototypeIsObjectPrototype: true, pagePolluted: false });
    await page.close();
  });

  test('huge and deep metadata come back whole', async () => {
    const huge = await open(servers.url('huge-description'));
    const sizes = await huge.page.evaluate(async () => Object.fromEntries((await document.modelContext.getTools()).map((t) => [t.name, [t.description.length, t.title.length]])));
    expect(sizes.huge_description).toEqual([1024 * 1024, 0]);
    expect(sizes.huge_title).toEqual([expect.any(Number), 1024 * 1024]);
    await huge.page.close();
    const deep = await open(servers.url('deep-schema'));
    const levels = await deep.page.evaluate(async () => {
      let s = (await document.modelContext.getTools()).find((t) => t.name === 'deep_schema')!.inputSchema as { properties?: { next: unknown } };
      let n = 0;
      while (s.properties) {
        n += 1;
        s = s.properties.next as typeof s;
      }
      return n;
    });
    expect(levels).toBe(100);
    await expect(deep.page.getByTestId('depths')).toHaveAttribute('data-deep-schema-json-depth', '201');
    await expect(deep.page.getByTestId('depths')).toHaveAttribute('data-deep-array-schema-json-depth', '103');
    await deep.page.close();
  });
});
