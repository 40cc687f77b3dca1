/**
 * The agent endpoint's HTTP relay (src/main/core/agent/http-relay.ts): the
 * listener runs in a worker thread and only moves bytes; the gates, quotas and
 * receipts stay in the endpoint. The same answers whether the relay runs in
 * its worker, in the main thread (`agentRelayWorker: null`), or in the main
 * thread because its worker entry could not start.
 */
import { request as httpRequest } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ConsoleCore } from '../../src/main/core';
import { startAgentCore, stopAgentCore } from '../support/agent-core';
import { connectAgent, textOf } from '../support/mcp-client';
import { FakeLink, sharedTab } from './broker.fixtures';

let world: { core: ConsoleCore; dir: string } | null = null;
const clients: Client[] = [];

afterEach(async () => {
  if (world) await stopAgentCore(world.core, world.dir, clients);
  world = null;
});

/** One raw POST to the endpoint (status and body). */
function rawPost(url: string, headers: Record<string, string>, body: string): Promise<{ status: number; body: string }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port: Number(u.port), path: u.pathname, method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers } }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const cases: Array<[string, { agentRelayWorker?: URL | null }, boolean]> = [
  ['in its worker thread (from source, the TypeScript entry)', {}, true],
  ['in the main thread (agentRelayWorker: null)', { agentRelayWorker: null }, false],
  ['in the main thread when its worker entry cannot start', { agentRelayWorker: new URL('file:///nonexistent/agent-relay.js') }, false],
];

describe.each(cases)('the HTTP relay %s', (_name, options, inWorker) => {
  it('serves an agent session and a call, refuses a request without a token and a batch, on 127.0.0.1 only', async () => {
    const link = new FakeLink();
    link.tabs = [sharedTab(7)];
    const w = await startAgentCore('echo-relay-', link, options);
    world = w;
    expect(w.core.agentEndpoint.relayInWorker).toBe(inWorker);
    expect(w.core.agentEndpoint.address()).toMatchObject({ address: '127.0.0.1', family: 'IPv4' });

    const client = await connectAgent(w.core.endpoint.url, w.agentSecret, { name: 'relay-test', version: '1.0.0' });
    clients.push(client);
    const r = (await client.callTool({ name: 'list_tabs', arguments: {} })) as CallToolResult;
    expect(r.isError).toBeFalsy();
    expect(textOf(r)).toContain('"tabId": 7');

    const noToken = await rawPost(w.core.endpoint.url, {}, '{}');
    expect(noToken.status).toBe(401);
    const batch = await rawPost(w.core.endpoint.url, { Authorization: `Bearer ${w.agentSecret}` }, '[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]');
    expect(batch.status).toBe(400);
    expect(batch.body).toContain('JSON-RPC batches are not accepted');
    const refused = w.core.ledger.query({ limit: 50 }).receipts.filter((x) => (x.detail as { code?: string } | undefined)?.code === 'batch-refused');
    expect(refused).toHaveLength(1);
  });
});
