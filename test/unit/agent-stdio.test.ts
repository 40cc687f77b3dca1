/**
 * The stdio command (bin/echo-console-mcp.mjs) against a running core: spawned
 * through the SDK's StdioClientTransport, relaying to the HTTP endpoint.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ToolListChangedNotificationSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createConsoleCore, type ConsoleCore } from '../../src/main/core';
import { SettingsStore } from '../../src/main/core/settings';
import { FakeLink, sharedTab } from './broker.fixtures';

const BIN = resolve(__dirname, '../../bin/echo-console-mcp.mjs');
const dirs: string[] = [];
let core: ConsoleCore | null = null;

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'echo-stdio-'));
  dirs.push(d);
  return d;
}

function run(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = execFile(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 20_000 }, (error, stdout, stderr) =>
      done({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
    child.stdin?.end();
  });
}

afterEach(async () => {
  await core?.stop();
  core = null;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('stdio command', () => {
  it('relays MCP to the running console (tools/list, tools/call)', async () => {
    const dir = tempDir();
    const link = new FakeLink();
    link.tabs = [sharedTab(3)];
    core = createConsoleCore({ dataDir: dir, mcpPort: 0, link });
    await core.start();
    const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, '--data-dir', dir], stderr: 'pipe' });
    const client = new Client({ name: 'stdio-agent', version: '1.2.3' });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual(['list_tabs', 'webmcp_discover', 'webmcp_invoke', 'page_info', 'request_status']);
      const r = (await client.callTool({ name: 'list_tabs', arguments: {} })) as CallToolResult;
      expect((r.content as Array<{ text: string }>).map((c) => c.text).join('\n')).toContain('"tabId": 3');
      // The agent behind the relay is the actor of the receipts.
      const receipt = core.ledger.query({ event: 'succeeded' }).receipts[0]!;
      expect(receipt.actor).toEqual({ kind: 'agent', name: 'stdio-agent', version: '1.2.3' });
    } finally {
      await client.close();
    }
  });

  it('forwards server notifications: a change of the tool registry reaches the stdio client as notifications/tools/list_changed', async () => {
    const dir = tempDir();
    core = createConsoleCore({ dataDir: dir, mcpPort: 0, link: new FakeLink() });
    await core.start();
    const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, '--data-dir', dir], stderr: 'pipe' });
    const client = new Client({ name: 'stdio-agent', version: '1.2.3' });
    await client.connect(transport);
    try {
      const heard = new Promise<void>((resolve) => client.setNotificationHandler(ToolListChangedNotificationSchema, () => resolve()));
      core.agentEndpoint.tools.remove('page_info');
      await heard;
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['list_tabs', 'webmcp_discover', 'webmcp_invoke', 'request_status']);
    } finally {
      await client.close();
    }
  });

  it('exits 1 with a clear message when the console is not running', async () => {
    const dir = tempDir();
    SettingsStore.open(dir); // settings exist, but no live endpoint
    const stopped = await run(['--data-dir', dir]);
    expect(stopped.code).toBe(1);
    expect(stopped.stderr).toMatch(/Echo Console is not running/);
    expect(stopped.stdout).toBe('');

    // A stale endpoint (the console crashed): nothing answers there.
    const store = SettingsStore.open(dir);
    store.update({ endpoint: { url: 'http://127.0.0.1:9/mcp', pid: 1, startedAt: 0 } });
    const stale = await run(['--data-dir', dir]);
    expect(stale.code).toBe(1);
    expect(stale.stderr).toMatch(/not running: nothing answers/);

    const none = await run(['--data-dir', join(dir, 'missing')]);
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/no settings/);
  });

  it('refuses non-loopback URLs so the token never leaves the machine', async () => {
    const r = await run(['--url', 'http://example.com/mcp'], { ECHO_CONSOLE_TOKEN: 't' });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/only ever http:\/\/127\.0\.0\.1/);
  });
});
