/**
 * Connection exhaustion (issue 9 item 7; docs/trust-rules.md, "Vulnerabilities
 * and gaps"): any local user can open TCP connections to the console's
 * loopback listeners without a token. 1,100 idle connections once exhausted
 * the console's file descriptors, so MCP and the UI went unreachable. Each test
 * performs that flood (or a slow sender) against the real listener with its
 * real limits, then uses the console as a client would.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect as netConnect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { connectAgent } from '../support/mcp-client';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createConsoleCore, type ConsoleCore } from '../../src/main/core';
import { createAgentToken } from '../support/agent-token';
import { CONNECTION_LIMITS } from '../../src/main/core/net-guard';
import { startWebHost, type WebHost } from '../../src/main/web/server';
import { FakeLink } from './broker.fixtures';
import { webSession } from '../support/web-session';
import { FakeConsole } from '../support/fake-console';

const FLOOD = 1_100;
const cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

/** Poll `pred` on the event loop (no fixed sleep decides anything; a generous bound only ends a hung test). */
async function until(pred: () => boolean, what: string, boundMs = 60_000): Promise<void> {
  const end = Date.now() + boundMs;
  while (!pred()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * Open `n` TCP connections that never send a byte, in batches of 100: each batch waits until the
 * listener has taken the previous one (`seen`: its guard's open + evicted + refused), so the burst
 * never overflows the kernel's accept queue (511) on a loaded machine. Resolves when all are in.
 */
async function idleFlood(port: number, n: number, seen?: () => number): Promise<{ sockets: Socket[]; closed: () => number }> {
  const sockets: Socket[] = [];
  let closed = 0;
  cleanup.push(() => sockets.forEach((s) => s.destroy()));
  const base = seen?.() ?? 0;
  for (let done = 0; done < n; ) {
    const batch = Math.min(100, n - done);
    await Promise.all(
      Array.from({ length: batch }, () => new Promise<void>((resolve) => {
        const s = netConnect(port, '127.0.0.1');
        sockets.push(s);
        s.once('connect', () => resolve());
        s.once('error', () => resolve());
        s.once('close', () => {
          closed++;
          resolve();
        });
      })),
    );
    done += batch;
    if (seen) await until(() => seen() - base >= done, `the listener to take ${done} flood connections`, 60_000);
  }
  return { sockets, closed: () => closed };
}

async function startCore(limits?: Parameters<typeof createConsoleCore>[0]['mcpConnectionLimits']): Promise<ConsoleCore> {
  const dir = mkdtempSync(join(tmpdir(), 'echo-conn-'));
  const core = createConsoleCore({ dataDir: dir, mcpPort: 0, link: new FakeLink(), ...(limits ? { mcpConnectionLimits: limits } : {}) });
  await core.start();
  cleanup.push(async () => {
    await core.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  return core;
}

async function mcpClient(core: ConsoleCore): Promise<Client> {
  const secret = await createAgentToken(core.api);
  const client = await connectAgent(core.endpoint.url, secret, { name: 'conn-test', version: '1.0.0' });
  cleanup.push(() => client.close().catch(() => undefined));
  return client;
}

describe('the MCP endpoint under a connection flood', () => {
  it(`${FLOOD} idle connections from another local user: the console holds at most its cap, and an agent still connects and calls`, async () => {
    const core = await startCore();
    const guard = core.agentEndpoint.connections!;
    const port = Number(new URL(core.endpoint.url).port);
    const flood = await idleFlood(port, FLOOD, () => guard.open() + guard.evicted() + guard.refused());
    expect(guard.open()).toBeLessThanOrEqual(CONNECTION_LIMITS.maxConnections);
    expect(guard.evicted()).toBeGreaterThanOrEqual(FLOOD - CONNECTION_LIMITS.maxConnections);
    await until(() => flood.closed() >= FLOOD - CONNECTION_LIMITS.maxConnections, 'the evicted flood sockets to close');
    // The agent gets in, with the flood still holding the rest of the cap.
    const client = await mcpClient(core);
    const r = (await client.callTool({ name: 'list_tabs', arguments: {} })) as CallToolResult;
    expect(r.isError).toBeFalsy();
    expect(guard.open()).toBeLessThanOrEqual(CONNECTION_LIMITS.maxConnections);
  });

  it('idle and slow-header connections are closed by the idle and header timeouts; the agent, whose SSE stream stays open, still calls', async () => {
    const core = await startCore({ idleMs: 300, headersTimeoutMs: 1_000 });
    const guard = core.agentEndpoint.connections!;
    const port = Number(new URL(core.endpoint.url).port);
    // An agent with an open SSE stream (its GET) and a call in between: busy, never idle-closed.
    const client = await mcpClient(core);
    const idle = await idleFlood(port, 20);
    // A slow sender: half a request line, then silence.
    const slow = netConnect(port, '127.0.0.1');
    let slowClosed = false;
    slow.once('close', () => (slowClosed = true));
    cleanup.push(() => void slow.destroy());
    slow.write('POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n');
    await until(() => idle.closed() === 20 && slowClosed, 'the console to close the idle and the slow connections');
    expect(guard.timedOut()).toBeGreaterThanOrEqual(20);
    const r = (await client.callTool({ name: 'list_tabs', arguments: {} })) as CallToolResult;
    expect(r.isError).toBeFalsy();
  });
});

describe('the web host (console UI) under a connection flood', () => {
  it(`${FLOOD} idle connections: an authenticated console tab keeps working, and a new one still connects`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'echo-conn-web-'));
    writeFileSync(join(dir, 'index.html'), '<!doctype html><title>Echo</title>');
    mkdirSync(join(dir, 'assets'));
    const fake = new FakeConsole();
    const host: WebHost = await startWebHost({ api: fake, subscribe: (l) => fake.onEvent(l), rendererDir: dir, port: 0 });
    cleanup.push(async () => {
      await host.close();
      rmSync(dir, { recursive: true, force: true });
    });
    const tab = async (): Promise<{ ws: WebSocket; call(id: number, method: string): Promise<Record<string, unknown>> }> => {
      const session = await webSession(host);
      const ws = new WebSocket(session.wsUrl, { headers: { origin: host.origin, cookie: session.cookie } });
      cleanup.push(() => ws.terminate());
      const inbox: Record<string, unknown>[] = [];
      ws.on('message', (d) => inbox.push(JSON.parse(d.toString()) as Record<string, unknown>));
      await new Promise<void>((resolve, reject) => {
        ws.once('open', () => resolve());
        ws.once('error', reject);
      });
      ws.send(JSON.stringify({ type: 'hello' }));
      await until(() => inbox.some((m) => m.type === 'welcome'), 'welcome');
      return {
        ws,
        async call(id, method) {
          ws.send(JSON.stringify({ id, method }));
          await until(() => inbox.some((m) => m.id === id), `the answer to ${method}`);
          return inbox.find((m) => m.id === id)!;
        },
      };
    };
    const first = await tab();
    const flood = await idleFlood(host.port, FLOOD, () => host.connections.open() + host.connections.evicted() + host.connections.refused());
    expect(host.connections.open()).toBeLessThanOrEqual(CONNECTION_LIMITS.maxConnections);
    await until(() => flood.closed() >= FLOOD - CONNECTION_LIMITS.maxConnections, 'the evicted flood sockets to close');
    // The open tab was never evicted (an upgraded WebSocket is not idle) ...
    expect(first.ws.readyState).toBe(WebSocket.OPEN);
    expect(await first.call(1, 'getSnapshot')).toMatchObject({ id: 1, result: { ok: true } });
    // ... and a new tab gets in.
    const second = await tab();
    expect(await second.call(2, 'getSnapshot')).toMatchObject({ id: 2, result: { ok: true } });
  });
});
