/**
 * `page_info`, the read faculty added by the recipe of docs/architecture.md
 * ("Recipe: a read faculty"), end to end: an MCP SDK client → the console's
 * endpoint → the pipeline → the real link (native messaging) → the extension's
 * registry entry → its isolated-world module in a real page → back, with
 * receipts. The page has a same-origin iframe, cross-origin iframes and a
 * sandboxed one (resources/hostile/same-name.html).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { test, expect } from './support/link-fixture';
import { createAgentToken } from '../support/agent-token';

const textOf = (r: unknown) => ((r as CallToolResult).content as Array<{ text: string }>).map((c) => c.text).join('\n');
/** The JSON inside the untrusted block of an answer. */
const body = (r: unknown) => JSON.parse(/<untrusted-page-content[^>]*>\n?([\s\S]*?)\n?<\/untrusted-page-content>/.exec(textOf(r))![1]!) as {
  url: string;
  title: string;
  frames: Array<{ frameId: number; sameOrigin: boolean; url?: string; origin?: string; documentId?: string; webmcp?: boolean }>;
};

test('page_info through MCP, the pipeline and the real extension: the page as it is, same-origin frames with stripped URLs, only the origin of the others; receipted; unshared tabs refused', async ({ world }) => {
  const { page, tabId } = await world.openShared(`${world.demo.url('same-name')}?token=SECRET123&view=1`);
  await page.locator('[data-testid=frames-state][data-frames-ready="4"]').waitFor({ state: 'attached' });
  const client = new Client({ name: 'page-info-e2e', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(world.core.endpoint.url), { requestInit: { headers: { Authorization: `Bearer ${await createAgentToken(world.core.api)}` } } }),
  );
  try {
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('page_info');
    const r = (await client.callTool({ name: 'page_info', arguments: { tabId } })) as CallToolResult;
    expect(r.isError, textOf(r)).toBeFalsy();
    const shared = world.core.broker.getSharedTabs().find((t) => t.tabId === tabId)!;
    const header = JSON.parse(/Page info of tab \d+: (\{.*\})/.exec(textOf(r))![1]!) as Record<string, unknown>;
    expect(header).toMatchObject({ tabId, origin: world.demo.hostileOrigin, documentId: shared.documentId, webmcp: true, frames: 4 });
    const info = body(r);
    // The URL as the person may see it: the token-like parameter stripped, the rest kept.
    expect(info.url).toContain('view=1');
    expect(JSON.stringify(info)).not.toContain('SECRET123');
    expect(info.title).toBe(await page.title());
    const same = info.frames.filter((f) => f.sameOrigin);
    const other = info.frames.filter((f) => !f.sameOrigin);
    expect(same).toHaveLength(1);
    expect(same[0]).toMatchObject({ url: expect.stringMatching(new RegExp(`^${world.demo.hostileOrigin}/`)), webmcp: true, documentId: expect.any(String) });
    expect(other).toHaveLength(3);
    for (const f of other) expect(Object.keys(f).sort()).toEqual(['frameId', 'origin', 'sameOrigin']);
    expect(other.map((f) => f.origin)).toContain(world.demo.crossOrigin);
    // The cross-origin frames' paths never reach the agent.
    expect(JSON.stringify(info)).not.toMatch(new RegExp(`${world.demo.crossOrigin.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/`));

    const trail = world.receipts({ limit: 20 }).filter((x) => x.faculty === 'page-info').reverse();
    expect(trail.map((x) => x.event)).toEqual(['requested', 'succeeded']);
    expect(trail[1]).toMatchObject({ tabId, operation: 'info', origin: world.demo.hostileOrigin, documentId: shared.documentId, actor: { kind: 'agent', clientName: 'page-info-e2e' } });

    await world.core.api.unshareTab({ tabId });
    const refused = (await client.callTool({ name: 'page_info', arguments: { tabId } })) as CallToolResult;
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toMatch(/^Error \(tab-not-shared\)/);
    expect(world.receipts({ limit: 1 })[0]).toMatchObject({ faculty: 'page-info', event: 'failed' });
  } finally {
    await client.close();
  }
});
