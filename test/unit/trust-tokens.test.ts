/**
 * Agent identity and the token, attacked (issue 9 item 2; docs/design.md rule "Each agent
 * has its own token, named and revocable by the person; the name the client declares is
 * shown as such, never as its identity"; docs/trust-rules.md rule 20). Against the real
 * core (createConsoleCore, real ledger, real endpoint, real agent socket) and the real
 * stdio command (bin/echo-console-mcp.mjs, spawned): a squatter on [::1] at the console's
 * port, a squatter on the port a crashed console left in settings.json, an agent socket
 * another user owns, a revoked token, a client claiming another agent's name, a token
 * riding another token's session, and the secrets the page could read.
 */
import { execFile, spawn } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { connectAgent } from '../support/mcp-client';
import { createConsoleCore, type ConsoleCore } from '../../src/main/core';
import { SettingsStore, hashToken } from '../../src/main/core/settings';
import { agentSocketPath } from '../../src/main/data-dir.mjs';
import type { ConsoleEvent } from '../../src/shared/ipc';
import { createAgentTokenInfo } from '../support/agent-token';
import { FakeLink, makeDiscovery, sharedTab, until } from './broker.fixtures';

const BIN = resolve(__dirname, '../../bin/echo-console-mcp.mjs');
const LOCALHOST_IS_IPV6 = resolve(__dirname, '../support/localhost-is-ipv6.cjs');
const cleanup: Array<() => Promise<unknown> | unknown> = [];

afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'echo-tok-'));
  cleanup.push(() => rmSync(d, { recursive: true, force: true }));
  return d;
}

async function startCore(dir = tempDir(), port = 0): Promise<{ core: ConsoleCore; link: FakeLink; dir: string }> {
  const link = new FakeLink();
  link.tabs = [sharedTab(7)];
  link.discoveries.set(7, await makeDiscovery(7, [{ name: 'add', description: 'Adds.', inputSchema: { type: 'object', properties: { a: { type: 'number' } } } }]));
  const core = createConsoleCore({ dataDir: dir, mcpPort: port, link, approvalTimeoutMs: 30_000 });
  await core.start();
  cleanup.push(() => core.stop());
  return { core, link, dir };
}

/** A TCP listener that records every connection and every byte it is sent: another local user's squatter. */
async function squatter(host: string, port: number): Promise<{ server: Server; port: number; connections: number; bytes: () => string }> {
  const got: Buffer[] = [];
  const rec = { server: createServer(), port: 0, connections: 0, bytes: () => Buffer.concat(got).toString('utf8') };
  rec.server.on('connection', (s: Socket) => {
    rec.connections++;
    s.on('data', (d) => got.push(d));
    s.on('error', () => undefined);
  });
  await new Promise<void>((ok, fail) => {
    rec.server.once('error', fail);
    rec.server.listen(port, host, () => ok());
  });
  rec.port = (rec.server.address() as { port: number }).port;
  cleanup.push(() => new Promise((r) => rec.server.close(r)));
  return rec;
}

/** Run the stdio command to its end (stdin closed at once). */
function runStdio(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = execFile(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 20_000 }, (error, stdout, stderr) =>
      done({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
    child.stdin?.end();
  });
}

/** An MCP client over the stdio command, as Claude Desktop or Cursor start it. */
async function stdioClient(dir: string, secret: string, name: string, extra: { args?: string[]; env?: Record<string, string> } = {}): Promise<{ client: Client; transport: StdioClientTransport }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, '--data-dir', dir, ...(extra.args ?? [])],
    env: { ...getDefaultEnvironment(), ECHO_CONSOLE_TOKEN: secret, ...(extra.env ?? {}) },
    stderr: 'pipe',
  });
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(transport);
  cleanup.push(() => client.close().catch(() => undefined));
  return { client, transport };
}

async function httpClient(core: ConsoleCore, secret: string, name: string): Promise<Client> {
  const client = await connectAgent(core.endpoint.url, secret, { name, version: '2.0.0' });
  cleanup.push(() => client.close().catch(() => undefined));
  return client;
}

/** A raw HTTP POST of an initialize to 127.0.0.1:port with chosen headers. */
function rawInit(port: number, headers: Record<string, string>): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
  return new Promise((ok, fail) => {
    const req = httpRequest({ host: '127.0.0.1', port, path: '/mcp', method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers } }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => ok({ status: res.statusCode ?? 0, body: text, headers: res.headers }));
    });
    req.on('error', fail);
    req.end(body);
  });
}

/** Leave a Unix socket at `path` that nobody accepts on: a console killed with SIGKILL. */
async function staleSocket(path: string): Promise<void> {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const child = spawn(process.execPath, ['-e', `require('net').createServer().listen(${JSON.stringify(path)}, () => { require('fs').chmodSync(${JSON.stringify(path)}, 0o600); console.log('up'); })`], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((ok) => child.stdout!.once('data', () => ok()));
  const exited = new Promise((ok) => child.once('exit', ok));
  child.kill('SIGKILL');
  await exited;
}

describe('the token never goes to a port another user could hold', () => {
  it('a squatter on [::1] at the console\'s port: the stdio command, even told --url http://localhost:… with localhost resolving to ::1, never connects there and reaches the console over its socket; the endpoint refuses Host localhost', async () => {
    const { core } = await startCore();
    const port = Number(new URL(core.endpoint.url).port);
    const squat = await squatter('::1', port); // the console binds 127.0.0.1 only: [::1] on its port is free for anyone
    const agent = await createAgentTokenInfo(core.api, 'Claude Desktop');

    const { client } = await stdioClient(core.settings.file.replace(/\/settings\.json$/, ''), agent.secret, 'stdio-agent', {
      args: ['--url', `http://localhost:${port}/mcp`],
      env: { ECHO_CONSOLE_URL: `http://localhost:${port}/mcp`, NODE_OPTIONS: `--require ${LOCALHOST_IS_IPV6}` },
    });
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('list_tabs');
    expect(core.agentTokens().find((t) => t.id === agent.id)?.sessions).toBe(1);
    expect(squat.connections).toBe(0);
    expect(squat.bytes()).not.toContain(agent.secret);

    // The policy: the endpoint answers only the one address it binds. A third-party client set
    // to `localhost` is refused even when it does reach the console, so nobody keeps such a URL.
    const viaName = await rawInit(port, { Host: `localhost:${port}`, Authorization: `Bearer ${agent.secret}` });
    expect(viaName.status).toBe(403);
    expect(viaName.body).toMatch(/only http:\/\/127\.0\.0\.1/);
    expect((await rawInit(port, { Host: `[::1]:${port}`, Authorization: `Bearer ${agent.secret}` })).status).toBe(403);
    expect((await rawInit(port, { Host: `127.0.0.1:${port}`, Authorization: `Bearer ${agent.secret}` })).status).toBe(200);
    expect(squat.connections).toBe(0);
  });

  it('a stale port after a crash: settings.json names a port another user now holds and the agent socket is stale; the stdio command sends the token nowhere and says the console is not running', async () => {
    const dir = tempDir();
    const store = SettingsStore.open(dir);
    const { secret } = store.createAgentToken('Cursor');
    const squat = await squatter('127.0.0.1', 0);
    // What a crashed console leaves: its live endpoint in settings.json, its socket file.
    store.update({ endpoint: { url: `http://127.0.0.1:${squat.port}/mcp`, pid: 999_999, startedAt: 0 } });
    await staleSocket(agentSocketPath(dir));

    for (const extra of [[], ['--url', `http://127.0.0.1:${squat.port}/mcp`]]) {
      const r = await runStdio(['--data-dir', dir, ...extra], { ECHO_CONSOLE_TOKEN: secret, ECHO_CONSOLE_URL: `http://127.0.0.1:${squat.port}/mcp` });
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/Echo Console is not running/);
      expect(r.stdout).toBe('');
    }
    expect(squat.connections).toBe(0);
    expect(squat.bytes()).toBe('');
  });

  it.runIf(process.platform !== 'win32' && process.getuid?.() === 0)(
    'an agent socket, or its folder, that another user owns or may open: the stdio command refuses before sending the token',
    async () => {
      const dir = tempDir();
      const { secret } = SettingsStore.open(dir).createAgentToken('Cursor');
      const path = agentSocketPath(dir);
      mkdirSync(dirname(path), { mode: 0o700 });
      const heard: string[] = [];
      const server = createServer((s) => s.on('data', (d) => heard.push(String(d))));
      await new Promise<void>((ok) => server.listen(path, () => ok()));
      cleanup.push(() => new Promise((r) => server.close(r)));
      chmodSync(path, 0o600);

      chownSync(path, 65534, 65534); // the socket belongs to another user
      let r = await runStdio(['--data-dir', dir], { ECHO_CONSOLE_TOKEN: secret });
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/belongs to another user/);
      chownSync(path, 0, 0);

      chmodSync(dirname(path), 0o755); // the folder is open to others
      r = await runStdio(['--data-dir', dir], { ECHO_CONSOLE_TOKEN: secret });
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/can be opened by other users/);
      chmodSync(dirname(path), 0o700);

      chownSync(dirname(path), 65534, 65534); // the folder belongs to another user
      r = await runStdio(['--data-dir', dir], { ECHO_CONSOLE_TOKEN: secret });
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/belongs to another user/);
      expect(heard).toEqual([]);
    },
  );

  it('the agent socket is 0600 in a 0700 folder; a hello with no, a malformed, an oversized or a wrong token is refused and the console keeps serving', async () => {
    const { core, dir } = await startCore();
    const path = agentSocketPath(dir);
    const { statSync } = await import('node:fs');
    if (process.platform !== 'win32') {
      expect(statSync(path).mode & 0o777).toBe(0o600);
      expect(statSync(dirname(path)).mode & 0o777).toBe(0o700);
    }
    const say = (text: string) =>
      new Promise<string>((ok) => {
        const s = createConnection(path);
        let got = '';
        s.on('data', (d) => (got += d));
        s.on('close', () => ok(got));
        s.on('error', () => ok(got));
        s.write(text);
      });
    expect(JSON.parse(await say('{"echoConsoleAgent":1}\n')).error.code).toBe('bad-hello');
    expect(JSON.parse(await say('not json\n')).error.code).toBe('bad-hello');
    expect(JSON.parse(await say('x'.repeat(5000))).error.code).toBe('bad-hello');
    expect(JSON.parse(await say(`${JSON.stringify({ echoConsoleAgent: 1, token: 'A'.repeat(43) })}\n`)).error.code).toBe('unauthorized');
    expect(core.agentEndpoint.sessionCount).toBe(0);
    const agent = await createAgentTokenInfo(core.api);
    const { client } = await stdioClient(dir, agent.secret, 'after-the-noise');
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
  });
});

describe('each agent has its own token, named and revocable by the person', () => {
  it('a revoked token stops working at once: its HTTP and stdio sessions close, new connections with it are refused; other agents keep working', async () => {
    const { core, dir } = await startCore();
    const victim = await createAgentTokenInfo(core.api, 'Claude Desktop');
    const other = await createAgentTokenInfo(core.api, 'Cursor');
    const overHttp = await httpClient(core, victim.secret, 'claude-http');
    const { client: overStdio, transport } = await stdioClient(dir, victim.secret, 'claude-stdio');
    const bystander = await httpClient(core, other.secret, 'cursor');
    await overHttp.listTools();
    await overStdio.listTools();
    expect(core.agentTokens().map((t) => [t.name, t.sessions])).toEqual([
      ['Claude Desktop', 2],
      ['Cursor', 1],
    ]);
    const stdioClosed = new Promise<void>((ok) => (transport.onclose = () => ok()));

    const r = await core.api.revokeAgentToken({ id: victim.id });
    expect(r.ok).toBe(true);
    await stdioClosed; // the stdio command ended: its socket was cut
    await expect(overHttp.listTools()).rejects.toThrow();
    expect((await rawInit(Number(new URL(core.endpoint.url).port), { Host: new URL(core.endpoint.url).host, Authorization: `Bearer ${victim.secret}` })).status).toBe(401);
    const again = await runStdio(['--data-dir', dir], { ECHO_CONSOLE_TOKEN: victim.secret });
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/Unknown or revoked agent token/);
    expect((await bystander.listTools()).tools.length).toBeGreaterThan(0);
    expect(core.agentTokens().map((t) => [t.name, t.sessions])).toEqual([['Cursor', 1]]);
    const receipt = core.ledger.query({ event: 'token-revoked' }).receipts[0]!;
    expect(receipt.actor).toEqual({ kind: 'person' });
    expect(receipt.detail).toEqual({ tokenId: victim.id, name: 'Claude Desktop', sessionsClosed: 2 });
  });

  it('a client claiming another agent\'s name is shown and receipted under its own token\'s name, the claim marked self-declared; the broker sees the token\'s id', async () => {
    const { core, link } = await startCore();
    await createAgentTokenInfo(core.api, 'Claude Desktop');
    const cursor = await createAgentTokenInfo(core.api, 'Cursor');
    const impostor = await httpClient(core, cursor.secret, 'Claude Desktop'); // clientInfo.name says so
    await impostor.callTool({ name: 'webmcp_discover', arguments: { tabId: 7 } });
    const hash = link.discoveries.get(7)!.tools[0]!.descriptorHash;
    const seen: unknown[] = [];
    const spy = core.broker.invoke.bind(core.broker);
    core.broker.invoke = (req, ctx) => {
      seen.push(ctx.agentToken);
      return spy(req, ctx);
    };
    const call = impostor.callTool({ name: 'webmcp_invoke', arguments: { tabId: 7, name: 'add', descriptorHash: hash, arguments: { a: 1 } } });
    await until((l) => core.broker.approvals.onChange(l), () => core.broker.approvals.list().length === 1);
    const view = core.broker.approvals.list()[0]!;
    expect(view.agent).toEqual({ name: 'Cursor', tokenId: cursor.id, clientName: 'Claude Desktop', version: '2.0.0' });
    expect(seen).toEqual([{ id: cursor.id, name: 'Cursor' }]);
    await core.api.decideApproval({ requestId: view.requestId, decision: 'deny' });
    await call;
    const receipts = core.ledger.query({ requestId: view.requestId, limit: 50 }).receipts;
    expect(receipts.length).toBeGreaterThan(1);
    for (const r of receipts.filter((x) => x.actor.kind === 'agent')) {
      expect(r.actor).toEqual({ kind: 'agent', name: 'Cursor', tokenId: cursor.id, clientName: 'Claude Desktop', version: '2.0.0' });
    }
  });

  it('a token cannot ride another token\'s session: the session answers only the token that opened it (404), so nothing is done or receipted as that agent', async () => {
    const { core } = await startCore();
    const a = await createAgentTokenInfo(core.api, 'A');
    const b = await createAgentTokenInfo(core.api, 'B');
    const port = Number(new URL(core.endpoint.url).port);
    const init = await rawInit(port, { Host: `127.0.0.1:${port}`, Authorization: `Bearer ${a.secret}` });
    const sid = String(init.headers['mcp-session-id']);
    const before = core.ledger.query({ limit: 500 }).receipts.length;
    const call = await new Promise<number>((ok, fail) => {
      const req = httpRequest(
        {
          host: '127.0.0.1',
          port,
          path: '/mcp',
          method: 'POST',
          headers: { Host: `127.0.0.1:${port}`, Authorization: `Bearer ${b.secret}`, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18', 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
        },
        (res) => {
          res.resume();
          res.on('end', () => ok(res.statusCode ?? 0));
        },
      );
      req.on('error', fail);
      req.end(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'list_tabs', arguments: {} } }));
    });
    expect(call).toBe(404);
    expect(core.ledger.query({ limit: 500 }).receipts.length).toBe(before);
  });

  it('token names: refused when empty, invisible-character laden, too long or already taken (case-insensitive), with a refused receipt; the console keeps serving', async () => {
    const { core } = await startCore();
    await createAgentTokenInfo(core.api, 'Claude Desktop');
    for (const [name, code] of [
      ['   ', 'token-name-invalid'],
      ['Claude\u200BDesktop', 'token-name-invalid'],
      ['Claude\u202EDesktop', 'token-name-invalid'],
      ['x'.repeat(65), 'token-name-invalid'],
      ['claude desktop', 'token-name-taken'],
      [' Claude Desktop ', 'token-name-taken'],
    ] as const) {
      expect(await core.api.createAgentToken({ name }), JSON.stringify(name)).toMatchObject({ ok: false, error: { code } });
    }
    expect(await core.api.createAgentToken({ name: 'x', secret: 'mine' } as never)).toMatchObject({ ok: false, error: { code: 'invalid-params' } });
    expect(core.ledger.query({ event: 'refused', limit: 50 }).receipts).toHaveLength(7);
    expect(core.agentTokens().map((t) => t.name)).toEqual(['Claude Desktop']);
  });
});

describe('token secrets never reach the page unasked (issue 9 item 4)', () => {
  it('settings.json keeps SHA-256 hashes only; the single token of an older settings.json becomes "default", keeps working, and leaves the file', async () => {
    const dir = tempDir();
    const legacy = 'L'.repeat(43);
    writeFileSync(join(dir, 'settings.json'), JSON.stringify({ version: 1, mcpPort: 0, token: legacy, approvalTimeoutMs: 120_000, developerMode: false, policyRules: [], endpoint: null }), { mode: 0o600 });
    const { core } = await startCore(dir);
    const text = readFileSync(join(dir, 'settings.json'), 'utf8');
    expect(text).not.toContain(legacy);
    expect(JSON.parse(text).agentTokens).toEqual([{ id: 'default', name: 'default', sha256: hashToken(legacy), createdAt: expect.any(Number) }]);
    const client = await httpClient(core, legacy, 'old-config');
    await client.callTool({ name: 'list_tabs', arguments: {} });
    expect(core.ledger.query({ event: 'succeeded' }).receipts[0]!.actor).toMatchObject({ name: 'default', tokenId: 'default', clientName: 'old-config' });
  });

  it('the snapshot and every event the page receives hold no token secret (a legacy one, one made earlier, one made now); only the answer to Create carries its own', async () => {
    const dir = tempDir();
    const legacy = 'M'.repeat(43);
    writeFileSync(join(dir, 'settings.json'), JSON.stringify({ version: 1, mcpPort: 0, token: legacy, approvalTimeoutMs: 120_000, developerMode: false }), { mode: 0o600 });
    const { core } = await startCore(dir);
    const events: ConsoleEvent[] = [];
    core.onEvent((e) => events.push(e));
    const earlier = await createAgentTokenInfo(core.api, 'Earlier');
    const made = await core.api.createAgentToken({ name: 'Now' });
    if (!made.ok) throw new Error(made.error.message);
    const client = await httpClient(core, made.value.secret, 'some-client');
    await client.listTools();
    await core.api.revokeAgentToken({ id: earlier.id });
    const snap = await core.api.getSnapshot();
    expect(snap.ok).toBe(true);
    const page = JSON.stringify([snap, events]);
    for (const secret of [legacy, earlier.secret, made.value.secret]) {
      expect(page).not.toContain(secret);
      expect(page).not.toContain(hashToken(secret));
    }
    expect(snap.ok && snap.value.agentTokens.map((t) => [t.name, t.sessions])).toEqual([
      ['default', 0],
      ['Now', 1],
    ]);
    expect(events.some((e) => e.kind === 'agent-tokens')).toBe(true);
  });
});

describe('stopping the console with agents connected', () => {
  it('cuts stdio sessions and half-open hellos, removes the socket, and the stdio command exits', async () => {
    const { core, dir } = await startCore();
    const agent = await createAgentTokenInfo(core.api);
    const { transport } = await stdioClient(dir, agent.secret, 'connected-at-stop');
    const silent = createConnection(agentSocketPath(dir)); // connected, never says hello
    await new Promise<void>((ok) => silent.once('connect', () => ok()));
    const silentClosed = new Promise<void>((ok) => silent.once('close', () => ok()));
    const closed = new Promise<void>((ok) => (transport.onclose = () => ok()));
    await core.stop();
    await closed;
    await silentClosed;
    const { existsSync } = await import('node:fs');
    expect(existsSync(agentSocketPath(dir))).toBe(false);
  });
});
