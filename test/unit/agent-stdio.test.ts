/**
 * The stdio command (bin/echo-console-mcp.mjs) against a running core: spawned
 * through the SDK's StdioClientTransport, relaying over the console's private agent
 * socket with the agent's own token (never TCP; the attacks are in trust-tokens.test.ts).
 */
import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
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
    const made = await core.api.createAgentToken({ name: 'Claude Desktop' });
    if (!made.ok) throw new Error(made.error.message);
    const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, '--data-dir', dir], env: { ...getDefaultEnvironment(), ECHO_CONSOLE_TOKEN: made.value.secret }, stderr: 'pipe' });
    const client = new Client({ name: 'stdio-agent', version: '1.2.3' });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toEqual(['list_tabs', 'webmcp_discover', 'webmcp_invoke', 'page_info', 'page_snapshot', 'page_extract', 'page_wait', 'page_verify', 'request_status']);
      const r = (await client.callTool({ name: 'list_tabs', arguments: {} })) as CallToolResult;
      expect((r.content as Array<{ text: string }>).map((c) => c.text).join('\n')).toContain('"tabId": 3');
      // The agent behind the relay is the actor of the receipts, named by its token; its own name is self-declared.
      const receipt = core.ledger.query({ event: 'succeeded' }).receipts[0]!;
      expect(receipt.actor).toEqual({ kind: 'agent', name: 'Claude Desktop', tokenId: made.value.token.id, clientName: 'stdio-agent', version: '1.2.3' });
    } finally {
      await client.close();
    }
  });

  it('forwards server notifications: a change of the tool registry reaches the stdio client as notifications/tools/list_changed', async () => {
    const dir = tempDir();
    core = createConsoleCore({ dataDir: dir, mcpPort: 0, link: new FakeLink() });
    await core.start();
    const made = await core.api.createAgentToken({ name: 'Cursor' });
    if (!made.ok) throw new Error(made.error.message);
    const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, '--data-dir', dir], env: { ...getDefaultEnvironment(), ECHO_CONSOLE_TOKEN: made.value.secret }, stderr: 'pipe' });
    const client = new Client({ name: 'stdio-agent', version: '1.2.3' });
    await client.connect(transport);
    try {
      const heard = new Promise<void>((resolve) => client.setNotificationHandler(ToolListChangedNotificationSchema, () => resolve()));
      core.agentEndpoint.tools.remove('page_info');
      await heard;
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['list_tabs', 'webmcp_discover', 'webmcp_invoke', 'page_snapshot', 'page_extract', 'page_wait', 'page_verify', 'request_status']);
    } finally {
      await client.close();
    }
  });

  it('exits 1 with a clear message when the console is not running, or without a token', async () => {
    const dir = tempDir();
    const { secret } = SettingsStore.open(dir).createAgentToken('Cursor'); // settings exist, but no console
    const stopped = await run(['--data-dir', dir], { ECHO_CONSOLE_TOKEN: secret });
    expect(stopped.code).toBe(1);
    expect(stopped.stderr).toMatch(/Echo Console is not running/);
    expect(stopped.stdout).toBe('');

    const none = await run(['--data-dir', join(dir, 'missing')], { ECHO_CONSOLE_TOKEN: secret });
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/Echo Console is not running/);

    const noToken = await run(['--data-dir', dir]);
    expect(noToken.code).toBe(1);
    expect(noToken.stderr).toMatch(/no agent token: in the Echo Console, Connection → Agent tokens → Create/);
  });

  it('reads the token from --token-file only when the file is this user\'s alone', async () => {
    const dir = tempDir();
    const file = join(dir, 'token.txt');
    writeFileSync(file, 'A'.repeat(43), { mode: 0o644 });
    chmodSync(file, 0o644);
    const open = await run(['--data-dir', dir, '--token-file', file]);
    expect(open.code).toBe(1);
    expect(open.stderr).toMatch(/can be opened by other users/);
    chmodSync(file, 0o600);
    const ok = await run(['--data-dir', dir, '--token-file', file]);
    expect(ok.stderr).toMatch(/Echo Console is not running/); // got past the token, to the socket
  });
});
