// Pins the browser behaviour behind the claim that no page can currently make
// the extension refuse with `tool-ambiguous`: Chromium 156 keeps WebMCP tool
// names unique within one document. If a future build lets two tools share a
// name in one document, this fails, and tool-ambiguous must then get an
// end-to-end test of its own (today it is proven by
// test/unit/extension-grant-checks.test.ts; see README "Design choices").
import { chromium, expect, test } from '@playwright/test';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from './chromium';

const PAGE = `<!doctype html><html><body>
<form toolname="search" tooldescription="form A"><input name="q" type="text"></form>
<form toolname="search" tooldescription="form B"><input name="q" type="text"></form>
<form toolname="lookup" tooldescription="form C"><input name="q" type="text"></form>
<script>
window.outcomes = [];
const reg = (d) => document.modelContext.registerTool({ name: 'lookup', description: d, inputSchema: { type: 'object' }, execute: async () => d })
  .then(() => 'ok', (e) => e.name + ': ' + e.message);
window.ready = (async () => { outcomes.push(await reg('imperative 1')); outcomes.push(await reg('imperative 2')); })();
</script></body></html>`;

test('one document never lists two WebMCP tools with the same name (Chromium 156)', async () => {
  const server = http.createServer((_q, r) => r.writeHead(200, { 'content-type': 'text/html' }).end(PAGE));
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
  try {
    const page = await browser.newPage();
    await page.goto(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    const got = await page.evaluate(async () => {
      const w = globalThis as unknown as {
        ready: Promise<void>;
        outcomes: string[];
        document: { modelContext: { getTools(): Promise<{ name: string; description: string }[]> } };
      };
      await w.ready;
      const mc = w.document.modelContext;
      return { outcomes: w.outcomes, tools: (await mc.getTools()).map((t) => [t.name, t.description]) };
    });
    // A second imperative registration of a taken name is refused.
    expect(got.outcomes[0]).toBe('ok');
    expect(got.outcomes[1]).toMatch(/^InvalidStateError: .*Duplicate tool name/);
    // Two forms with one name, and a form beside an imperative tool of its name, yield one tool each.
    const names = got.tools.map(([n]) => n);
    expect(names.filter((n) => n === 'search')).toHaveLength(1);
    expect(names.filter((n) => n === 'lookup')).toHaveLength(1);
    expect(new Set(names).size).toBe(names.length);
  } finally {
    await browser.close();
    server.close();
  }
});
