/**
 * Issue 9 items 3 and 10, performed against the real console core and MCP
 * endpoint: one agent token floods calls, opens sessions and fills the
 * person's approval queue; the limits bite for that token only, each refusal
 * gives a clear error, the receipts stay bounded, and other agents keep working.
 */
import { mkdtempSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { connectAgent, textOf } from '../support/mcp-client';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createConsoleCore, type ConsoleCore } from '../../src/main/core';
import { stopAgentCore } from '../support/agent-core';
import { RECEIPT_WINDOW_MS, type AgentQuotaLimits } from '../../src/main/core/agent/quotas';
import { createAgentTokenInfo } from '../support/agent-token';
import { FakeLink, makeDiscovery, sharedTab, until } from './broker.fixtures';

const BIN = join(process.cwd(), 'bin/echo-console-mcp.mjs');
let dir: string;
let core: ConsoleCore;
let link: FakeLink;
const clients: Client[] = [];

async function start(quotas: Partial<AgentQuotaLimits>, extra: { maxSessions?: number } = {}): Promise<void> {
  core = createConsoleCore({ dataDir: dir, mcpPort: 0, link, approvalTimeoutMs: 60_000, agentQuotas: quotas });
  if (extra.maxSessions !== undefined) (core.agentEndpoint as unknown as { opts: { maxSessions: number } }).opts.maxSessions = extra.maxSessions;
  await core.start();
}

async function connect(secret: string, name = 'quota-test'): Promise<Client> {
  const client = await connectAgent(core.endpoint.url, secret, { name, version: '1.0.0' });
  clients.push(client);
  return client;
}

/** One raw POST to the endpoint: status, Retry-After and body. */
function rawPost(secret: string, body: string): Promise<{ status: number; retryAfter: string | undefined; body: string }> {
  const url = new URL(core.endpoint.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port: Number(url.port),
        path: url.pathname,
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', Authorization: `Bearer ${secret}` },
      },
      (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'], body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

function rateLimitedReceipts(tokenId: string) {
  return core.ledger.query({ limit: 500 }).receipts.filter((r) => r.detail && (r.detail as { code?: string }).code === 'rate-limited' && r.actor.tokenId === tokenId);
}

/** How many refusals the rate-limited receipts of `tokenId` account for (an episode's first, then "N more refused"). */
function refusalsReceipted(tokenId: string): number {
  return rateLimitedReceipts(tokenId).reduce((n, x) => {
    const more = /^(\d+) more refused/.exec(String((x.detail as { message?: string }).message));
    return n + (more ? Number(more[1]) : 1);
  }, 0);
}

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'echo-quota-'));
  link = new FakeLink();
  link.tabs = [sharedTab(7)];
  link.discoveries.set(7, await makeDiscovery(7, [{ name: 'add', description: 'Adds.', inputSchema: { type: 'object', properties: { a: { type: 'number' } } } }]));
});

afterEach(() => stopAgentCore(core, dir, clients));

describe('per-agent limits under attack (issue 9 items 3 and 10)', () => {
  it('one token floods tools/call: past its burst each call gets a clear rate-limited error, a few receipts record the flood, and another agent is served', async () => {
    await start({ callsPerSecond: 0.1, callBurst: 5, requestsPerSecond: 1000, requestBurst: 1000 });
    const mallory = await createAgentTokenInfo(core.api, 'mallory');
    const alice = await createAgentTokenInfo(core.api, 'alice');
    const m = await connect(mallory.secret);
    const before = core.ledger.query({ limit: 500 }).receipts.length;
    const started = Date.now();
    const answers = (await Promise.all(Array.from({ length: 60 }, () => m.callTool({ name: 'list_tabs', arguments: {} })))) as CallToolResult[];
    const limited = answers.filter((r) => r.isError && textOf(r).startsWith('Error (rate-limited)'));
    // The burst passes (within the refill of the test's own run time), the rest are refused.
    expect(limited.length).toBeGreaterThanOrEqual(50);
    expect(answers.length - limited.length).toBeGreaterThanOrEqual(5);
    expect(textOf(limited[0])).toContain('agent token "mallory"');
    expect(textOf(limited[0])).toMatch(/at most 0\.1 tool calls per second \(bursts of 5\)\. Try again in \d+ ms\./);
    // The flood is receipted, boundedly: an episode's first refusal at once, the rest counted into one
    // more per RECEIPT_WINDOW_MS (1 s), so at most two a second however many calls came.
    const receipts = rateLimitedReceipts(mallory.id);
    const windows = Math.ceil((Date.now() - started) / RECEIPT_WINDOW_MS);
    expect(receipts.length).toBeGreaterThanOrEqual(1);
    expect(receipts.length).toBeLessThanOrEqual(2 * windows);
    expect(receipts[0]!.actor).toMatchObject({ kind: 'agent', name: 'mallory', tokenId: mallory.id });
    // Allowed list_tabs calls write their own read receipts; refused ones only the bounded rate-limited ones.
    const written = core.ledger.query({ limit: 500 }).receipts.length - before;
    expect(written).toBeLessThan(60);
    // Alice is not touched by Mallory's flood.
    const a = await connect(alice.secret);
    const r = (await a.callTool({ name: 'list_tabs', arguments: {} })) as CallToolResult;
    expect(r.isError).toBeFalsy();
    // Nothing is lost: the receipts account for every refused call.
    core.agentEndpoint.quotas.flush();
    const counted = refusalsReceipted(mallory.id);
    expect(counted).toBe(limited.length);
  });

  it('over the private agent socket (the stdio command) the same call rate holds: a flood past the burst gets rate-limited errors, receipted boundedly', async () => {
    await start({ callsPerSecond: 0.1, callBurst: 3 });
    const mallory = await createAgentTokenInfo(core.api, 'mallory over stdio');
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, '--data-dir', dir],
      env: { ...getDefaultEnvironment(), ECHO_CONSOLE_TOKEN: mallory.secret },
      stderr: 'pipe',
    });
    const client = new Client({ name: 'stdio-flooder', version: '1.0.0' });
    await client.connect(transport);
    clients.push(client);
    const answers = (await Promise.all(Array.from({ length: 30 }, () => client.callTool({ name: 'list_tabs', arguments: {} })))) as CallToolResult[];
    const limited = answers.filter((r) => r.isError && textOf(r).startsWith('Error (rate-limited)'));
    expect(limited.length).toBeGreaterThanOrEqual(26);
    expect(textOf(limited[0])).toContain('agent token "mallory over stdio"');
    core.agentEndpoint.quotas.flush();
    const counted = refusalsReceipted(mallory.id);
    expect(counted).toBe(limited.length);
    expect(rateLimitedReceipts(mallory.id).length).toBeLessThan(limited.length);
  });

  it('one token floods HTTP requests: 429 with Retry-After before the body is read, and a 700 KB batch behind it is refused unread', async () => {
    await start({ requestsPerSecond: 0.1, requestBurst: 3 });
    const mallory = await createAgentTokenInfo(core.api, 'mallory');
    const init = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
    const statuses = await Promise.all(Array.from({ length: 20 }, () => rawPost(mallory.secret, init)));
    const refused = statuses.filter((s) => s.status === 429);
    expect(refused.length).toBeGreaterThanOrEqual(15);
    expect(Number(refused[0]!.retryAfter)).toBeGreaterThanOrEqual(1);
    expect(JSON.parse(refused[0]!.body)).toMatchObject({ jsonrpc: '2.0', error: { message: expect.stringContaining('agent token "mallory"') } });
    // A 700 KB batch of malformed calls while limited: refused at the door, never parsed into 20,000 receipts.
    const batch = JSON.stringify(Array.from({ length: 20_000 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 7 } })));
    expect(batch.length).toBeGreaterThan(700_000);
    const b = await rawPost(mallory.secret, batch);
    expect(b.status).toBe(429);
    // Mallory's receipts: the first 429 at once, the others counted; never one per message of the batch.
    expect(core.ledger.query({ limit: 500 }).receipts.filter((r) => r.actor.tokenId === mallory.id).length).toBeLessThanOrEqual(4);
  });

  it('request bytes are metered per token: a token that keeps sending large bodies is held to its byte rate', async () => {
    await start({ bytesPerSecond: 10_000, byteBurst: 20_000 });
    const mallory = await createAgentTokenInfo(core.api, 'mallory');
    const big = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', pad: 'x'.repeat(15_000) });
    const first = await rawPost(mallory.secret, big);
    expect(first.status).not.toBe(429);
    const second = await rawPost(mallory.secret, big);
    expect(second.status).toBe(429);
    expect(JSON.parse(second.body).error.message).toContain('bytes per second');
  });

  it('one token fills the approval queue: its fifth pending request is refused too-many-pending, another agent still reaches the person', async () => {
    await start({ maxPendingApprovals: 4 });
    const mallory = await createAgentTokenInfo(core.api, 'mallory');
    const alice = await createAgentTokenInfo(core.api, 'alice');
    const m = await connect(mallory.secret);
    await m.callTool({ name: 'webmcp_discover', arguments: { tabId: 7 } });
    const hash = link.discoveries.get(7)!.tools[0]!.descriptorHash;
    const invoke = (c: Client, a: number) => c.callTool({ name: 'webmcp_invoke', arguments: { tabId: 7, name: 'add', descriptorHash: hash, arguments: { a } } });
    const pending = [1, 2, 3, 4].map((i) => invoke(m, i));
    await until((l) => core.onEvent(l), () => core.broker.approvals.list().length === 4);
    const fifth = (await invoke(m, 5)) as CallToolResult;
    expect(fifth.isError).toBe(true);
    expect(textOf(fifth)).toContain('Error (too-many-pending)');
    expect(textOf(fifth)).toContain('"mallory" already has 4 requests waiting');
    expect(core.broker.approvals.list()).toHaveLength(4);
    // Alice's request is shown to the person.
    const a = await connect(alice.secret);
    await a.callTool({ name: 'webmcp_discover', arguments: { tabId: 7 } });
    const aliceCall = invoke(a, 9);
    await until((l) => core.onEvent(l), () => core.broker.approvals.list().length === 5);
    expect(core.broker.approvals.list().filter((x) => x.agent.tokenId === alice.id)).toHaveLength(1);
    for (const x of core.broker.approvals.list()) await core.api.decideApproval({ requestId: x.requestId, decision: 'deny' });
    await Promise.all([...pending, aliceCall]);
  });

  it('one token opens sessions: it pushes out its own oldest idle ones, never another agent\'s, even at the endpoint\'s cap', async () => {
    await start({ maxSessions: 3 }, { maxSessions: 4 });
    const mallory = await createAgentTokenInfo(core.api, 'mallory');
    const alice = await createAgentTokenInfo(core.api, 'alice');
    const a = await connect(alice.secret);
    const bob = await createAgentTokenInfo(core.api, 'bob');
    const b = await connect(bob.secret);
    for (let i = 0; i < 6; i++) await connect(mallory.secret);
    const counts = core.agentEndpoint.sessionsByToken();
    expect(counts.get(mallory.id)).toBeLessThanOrEqual(3);
    expect(counts.get(alice.id)).toBe(1);
    expect(counts.get(bob.id)).toBe(1);
    // Alice and Bob's sessions still answer.
    expect(((await a.callTool({ name: 'list_tabs', arguments: {} })) as CallToolResult).isError).toBeFalsy();
    expect(((await b.callTool({ name: 'list_tabs', arguments: {} })) as CallToolResult).isError).toBeFalsy();
    // At the endpoint's cap (4), a new agent gets in by pushing out one of Mallory's, the token with the most.
    const carol = await createAgentTokenInfo(core.api, 'carol');
    await connect(carol.secret);
    const after = core.agentEndpoint.sessionsByToken();
    expect(after.get(alice.id)).toBe(1);
    expect(after.get(bob.id)).toBe(1);
    expect(after.get(carol.id)).toBe(1);
    expect(after.get(mallory.id)).toBe(1);
  });
});
