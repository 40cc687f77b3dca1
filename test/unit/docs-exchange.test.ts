/**
 * docs/agent-exchange.md shows the console's real answers to webmcp_discover and
 * webmcp_invoke. This replays that exchange (the real endpoint and broker over the MCP SDK
 * client, the in-test extension link) and compares every text part with the page's blocks,
 * ids and hashes masked, so the page cannot drift from what agents get.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createConsoleCore } from '../../src/main/core';
import { createAgentToken } from '../support/agent-token';
import { ok } from '../../src/shared/result';
import { FakeLink, makeDiscovery, sharedTab } from './broker.fixtures';

const DOC = fileURLToPath(new URL('../../docs/agent-exchange.md', import.meta.url));

/** The code block after each `<!-- exchange: <call> <part> -->` marker. */
function documented(): Map<string, string> {
  const text = readFileSync(DOC, 'utf8');
  const out = new Map<string, string>();
  for (const m of text.matchAll(/<!-- exchange: (\w+ \d+) -->\n```text\n([\s\S]*?)\n```/g)) out.set(m[1] as string, m[2] as string);
  return out;
}

const mask = (s: string) => s.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<uuid>').replace(/\b[0-9a-f]{64}\b/g, '<hash>');
const parts = (r: unknown) => ((r as CallToolResult).content as Array<{ text: string }>).map((c) => mask(c.text));

it('docs/agent-exchange.md is what the console answers', async () => {
  const docs = documented();
  expect([...docs.keys()]).toEqual(['discover 0', 'discover 1', 'invoke 0', 'invoke 1']);
  const dir = mkdtempSync(join(tmpdir(), 'echo-exchange-'));
  const link = new FakeLink();
  link.tabs = [{ ...sharedTab(7), title: 'Echo shop' }];
  link.discoveries.set(
    7,
    await makeDiscovery(7, [
      {
        name: 'set_cart_quantity',
        title: 'Set cart quantity',
        description: 'Sets how many of a product are in the cart.',
        inputSchema: { type: 'object', properties: { productId: { type: 'string' }, quantity: { type: 'integer', minimum: 0 } }, required: ['productId', 'quantity'], additionalProperties: false },
      },
    ]),
  );
  link.invokeHandler = async () => ok({ outcome: 'succeeded', result: '{"ok":true,"cart":{"mug":3}}', elapsedMs: 4 });
  const core = createConsoleCore({ dataDir: dir, mcpPort: 0, link, approvalTimeoutMs: 30_000 });
  await core.start();
  const secret = await createAgentToken(core.api, 'my agent');
  const client = new Client({ name: 'my-agent', version: '1.0.0' });
  try {
    await client.connect(new StreamableHTTPClientTransport(new URL(core.endpoint.url), { requestInit: { headers: { Authorization: `Bearer ${secret}` } } }));
    const d = await client.callTool({ name: 'webmcp_discover', arguments: { tabId: 7 } });
    expect(parts(d)).toEqual([docs.get('discover 0'), docs.get('discover 1')]);
    const descriptorHash = link.discoveries.get(7)!.tools[0]!.descriptorHash;
    const off = core.onEvent((e) => {
      if (e.kind === 'approvals' && e.approvals[0]) void core.api.decideApproval({ requestId: e.approvals[0].requestId, decision: 'approve' });
    });
    const r = await client.callTool({ name: 'webmcp_invoke', arguments: { tabId: 7, name: 'set_cart_quantity', descriptorHash, arguments: { productId: 'mug', quantity: 3 } } });
    off();
    expect(parts(r)).toEqual([docs.get('invoke 0'), docs.get('invoke 1')]);
  } finally {
    await client.close();
    await core.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
