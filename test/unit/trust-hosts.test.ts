/**
 * docs/design.md, "Conventions" §2 and §5 attacked through a host: a renderer (or anything
 * that got hold of the web host's socket) sending malformed, oversized,
 * prototype-polluting or out-of-order messages to the REAL core behind the
 * REAL loopback web host (src/main/web/server.ts). Each must get a clear error
 * or a closed socket, change nothing (the pending approval stays pending,
 * settings stay, no prototype is polluted), and the host and core keep serving
 * the other sockets. docs/trust-rules.md maps rules to tests.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { createConsoleCore, type ConsoleCore } from '../../src/main/core';
import { developerModeOptIn, developerModeStartLines, startWebHost, type WebHost } from '../../src/main/web/server';
import { rendererAttestedGate } from '../../src/main/core/trusted-input';
import { LIMITS } from '../../src/shared/limits';
import { FakeLink, makeDiscovery, sharedTab, until } from './broker.fixtures';
import { webSession, type WebSession } from '../support/web-session';

let dir: string;
let core: ConsoleCore;
let host: WebHost;
let link: FakeLink;
const sockets: WebSocket[] = [];

type Msg = Record<string, unknown>;

function open(session?: WebSession): Promise<{ ws: WebSocket; next: () => Promise<Msg>; closed: Promise<number> }> {
  const ws = new WebSocket(session?.wsUrl ?? `ws://127.0.0.1:${host.port}/api`, { headers: { origin: host.origin, ...(session ? { cookie: session.cookie } : {}) } });
  sockets.push(ws);
  const queue: Msg[] = [];
  const waiters: ((m: Msg) => void)[] = [];
  ws.on('message', (d) => {
    const m = JSON.parse(d.toString()) as Msg;
    const w = waiters.shift();
    if (w) w(m);
    else queue.push(m);
  });
  const closed = new Promise<number>((res) => ws.once('close', (code) => res(code)));
  ws.on('error', () => undefined);
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve({ ws, closed, next: () => (queue.length ? Promise.resolve(queue.shift()!) : new Promise((r) => waiters.push(r))) }));
    ws.once('unexpected-response', (_q, res) => reject(new Error(`HTTP ${res.statusCode}`)));
  });
}

async function authed() {
  const s = await open(await webSession(host));
  s.ws.send(JSON.stringify({ type: 'hello' }));
  expect(await s.next()).toEqual({ type: 'welcome' });
  return s;
}

/** Send a raw text frame and wait for the answer with that id (events are skipped). */
async function call(s: Awaited<ReturnType<typeof authed>>, id: number, rawJson: string): Promise<Msg> {
  s.ws.send(rawJson);
  for (;;) {
    const m = await s.next();
    if (m.id === id) return m;
  }
}

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'echo-trust-hosts-'));
  writeFileSync(join(dir, 'index.html'), '<!doctype html><title>Echo</title>');
  link = new FakeLink();
  link.tabs = [sharedTab(7)];
  link.discoveries.set(7, await makeDiscovery(7, [{ name: 'pay', inputSchema: { type: 'object' } }]));
  core = createConsoleCore({ dataDir: join(dir, 'data'), mcpPort: 0, link, approvalTimeoutMs: 60_000 });
  await core.start();
  host = await startWebHost({ api: core.api, subscribe: (l) => core.onEvent(l), rendererDir: dir, port: 0, helloTimeoutMs: 2_000 });
});

afterEach(async () => {
  for (const ws of sockets.splice(0)) ws.terminate();
  await host.close();
  await core.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('rule (CONVENTIONS §2, §5): bad console API payloads change nothing and the console keeps serving', () => {
  it('malformed, polluting, deep and oversized WebSocket messages: clear errors or closed sockets; the pending approval, settings and prototypes are untouched', async () => {
    // A pending approval an attacker would like to approve.
    const agent = { actor: { kind: 'agent' as const, name: 'a' }, kind: 'read' as const };
    await core.broker.discover({ tabId: 7 }, agent);
    const hash = link.discoveries.get(7)!.tools[0]!.descriptorHash;
    const pending = core.broker.invoke({ tabId: 7, name: 'pay', descriptorHash: hash, arguments: {} }, { ...agent, kind: 'mutation' });
    await until((l) => core.onEvent(l), () => core.broker.approvals.list().length === 1);
    const requestId = core.broker.approvals.list()[0]!.requestId;
    const settingsBefore = structuredClone(core.settings.get());

    const a = await authed();
    const b = await authed(); // a bystander: must keep working and keep receiving events
    let deep = '{}';
    for (let i = 0; i < 50_000; i++) deep = `{"a":${deep}}`;
    const bad: Array<[string, string, string]> = [
      ['a decision that is not approve/deny, with an own __proto__ saying approve', `{"id":1,"method":"decideApproval","params":{"requestId":"${requestId}","decision":"maybe","__proto__":{"decision":"approve"}}}`, 'invalid-params'],
      ['an extra field that smuggles a grant', `{"id":2,"method":"decideApproval","params":{"requestId":"${requestId}","decision":"approve","grant":{"mac":"${'f'.repeat(64)}"}}}`, 'invalid-params'],
      ['params as an array', `{"id":3,"method":"decideApproval","params":["${requestId}","approve"]}`, 'invalid-params'],
      ['a prototype method name', '{"id":4,"method":"constructor"}', 'unknown-method'],
      ['__proto__ as the method', '{"id":5,"method":"__proto__","params":{}}', 'unknown-method'],
      ['settings through __proto__', '{"id":6,"method":"updateSettings","params":{"__proto__":{"developerMode":true,"approvalTimeoutMs":10}}}', 'invalid-params'],
      ['a token with a chosen secret', '{"id":7,"method":"createAgentToken","params":{"name":"x","secret":"mine"}}', 'invalid-params'],
      ['50,000 levels of nesting', `{"id":8,"method":"queryReceipts","params":${deep}}`, 'invalid-params'],
      ['a huge reason', `{"id":9,"method":"decideApproval","params":{"requestId":"${requestId}","decision":"deny","reason":"${'r'.repeat(600_000)}"}}`, 'invalid-params'],
    ];
    for (const [what, json, code] of bad) {
      const r = await call(a, Number(JSON.parse(json.slice(0, json.indexOf(',')) + '}').id), json);
      expect(r.result, what).toMatchObject({ ok: false, error: { code } });
    }
    expect(core.broker.approvals.list().map((v) => v.requestId)).toEqual([requestId]);
    expect(link.invokes()).toEqual([]);
    expect(core.settings.get()).toEqual(settingsBefore);
    expect(({} as Msg).decision).toBeUndefined();
    expect(({} as Msg).developerMode).toBeUndefined();

    // Socket-level attacks, each on its own socket: each is closed; nothing is called.
    const receiptsBefore = core.ledger.query({ limit: 500 }).receipts.length;
    const c = await authed();
    c.ws.send(JSON.stringify({ id: 10, method: 'getSnapshot', pad: 'x'.repeat(LIMITS.maxMessageBytes) }));
    expect(await c.closed).toBe(1009); // message too big
    const d = await authed();
    d.ws.send(Buffer.from('{"id":11,"method":"decideApproval"}'), { binary: true });
    expect(await d.closed).toBe(4400);
    const e = await authed();
    e.ws.send(JSON.stringify({ id: '12', method: 'decideApproval', params: { requestId, decision: 'approve' } }));
    expect(await e.closed).toBe(4400);
    const f = await open(await webSession(host)); // no hello yet: the first message is read as the hello and fails
    f.ws.send(JSON.stringify({ id: 13, method: 'decideApproval', params: { requestId, decision: 'approve' } }));
    expect(await f.closed).toBe(4401);
    const g = await open(); // no session cookie: closed whatever it says
    g.ws.send(JSON.stringify({ type: 'hello', token: host.token }));
    expect(await g.closed).toBe(4401);
    expect(core.broker.approvals.list().map((v) => v.requestId)).toEqual([requestId]);
    expect(core.ledger.query({ limit: 500 }).receipts.length).toBe(receiptsBefore);

    // The bystander still works, sees the approval, and its decision is the one that counts.
    const snap = await call(b, 20, '{"id":20,"method":"getSnapshot"}');
    expect(snap.result).toMatchObject({ ok: true, value: { approvals: [{ requestId }] } });
    expect((await call(b, 21, JSON.stringify({ id: 21, method: 'decideApproval', params: { requestId, decision: 'approve' } }))).result).toEqual({ ok: true, value: null });
    expect((await pending).ok).toBe(true);
    expect(link.invokes()).toHaveLength(1);
    expect(core.ledger.query({ requestId, event: 'approved' }).receipts[0]!.actor).toEqual({ kind: 'person' });
    expect(core.ledger.verify().ok).toBe(true);
    // And the attacker's socket, after all that, still gets plain answers.
    expect((await call(a, 22, '{"id":22,"method":"verifyLedger"}')).result).toMatchObject({ ok: true, value: { ok: true } });
  });

  it('rule 19 in the web host: a script holding the session calls updateSettings{developerMode:true} over the WebSocket: refused (trusted-input-unavailable) with a refused receipt, developer mode stays off; off is allowed', async () => {
    const s = await authed();
    const on = await call(s, 1, '{"id":1,"method":"updateSettings","params":{"developerMode":true}}');
    expect(on.result).toMatchObject({ ok: false, error: { code: 'trusted-input-unavailable', message: expect.stringContaining('desktop app') } });
    const bundled = await call(s, 2, '{"id":2,"method":"updateSettings","params":{"developerMode":true,"approvalTimeoutMs":30000}}');
    expect(bundled.result).toMatchObject({ ok: false, error: { code: 'trusted-input-unavailable' } });
    expect(core.developerMode.on).toBe(false);
    expect(core.ledger.query({ event: 'developer-mode-on' }).receipts).toEqual([]);
    const refused = core.ledger.query({ event: 'refused', limit: 10 }).receipts;
    expect(refused).toHaveLength(2);
    expect(refused[0]).toMatchObject({ faculty: 'console', actor: { kind: 'console' }, detail: { method: 'updateSettings', action: 'developer-mode-on', code: 'trusted-input-unavailable' } });
    expect((await call(s, 3, '{"id":3,"method":"updateSettings","params":{"developerMode":false}}')).result).toMatchObject({ ok: true, value: { developerMode: false } });
  });

  it('the web host started with --developer-mode: developer mode ON passes on the renderer\'s word (receipted as the person\'s), the agent tool appears, console lines pass the gate; the start lines warn; without the flag nothing of it', async () => {
    expect(developerModeOptIn(['--port', '0'])).toBe(false);
    expect(developerModeStartLines(false)).toEqual([]);
    expect(developerModeOptIn(['--developer-mode'])).toBe(true);
    expect(developerModeStartLines(true).join(' ')).toMatch(/cannot tell your clicks and keys from a script/);
    // A second console, as `node out/main/web.js --developer-mode` builds it (src/main/web/index.ts).
    const optCore = createConsoleCore({ dataDir: join(dir, 'data-opt'), mcpPort: 0, link, approvalTimeoutMs: 60_000, inputGate: rendererAttestedGate({ developerMode: developerModeOptIn(['--developer-mode']) }) });
    await optCore.start();
    const optHost = await startWebHost({ api: optCore.api, subscribe: (l) => optCore.onEvent(l), rendererDir: dir, port: 0, helloTimeoutMs: 2_000 });
    const mainHost = host;
    host = optHost;
    try {
      const s = await authed();
      // Off: a console line is refused by the faculty (developer mode off), with a receipt.
      expect((await call(s, 1, '{"id":1,"method":"runConsoleLine","params":{"tabId":7,"code":"1"}}')).result).toMatchObject({ ok: false, error: { code: 'developer-mode-off' } });
      expect(optCore.agentEndpoint.tools.get('page_run_script')).toBeUndefined();
      expect((await call(s, 2, '{"id":2,"method":"updateSettings","params":{"developerMode":true}}')).result).toMatchObject({ ok: true, value: { developerMode: true } });
      expect(optCore.developerMode.on).toBe(true);
      expect(optCore.ledger.query({ event: 'developer-mode-on' }).receipts[0]).toMatchObject({ actor: { kind: 'person' } });
      expect(optCore.agentEndpoint.tools.get('page_run_script')).toBeDefined();
      expect((await call(s, 3, '{"id":3,"method":"updateSettings","params":{"developerMode":false}}')).result).toMatchObject({ ok: true, value: { developerMode: false } });
    } finally {
      host = mainHost;
      await optHost.close();
      await optCore.stop();
    }
    // The default web host (no flag) still refuses it, and console lines too.
    const d = await authed();
    expect((await call(d, 4, '{"id":4,"method":"runConsoleLine","params":{"tabId":7,"code":"1"}}')).result).toMatchObject({ ok: false, error: { code: 'trusted-input-unavailable' } });
    expect((await call(d, 5, '{"id":5,"method":"updateSettings","params":{"developerMode":true}}')).result).toMatchObject({ ok: false, error: { code: 'trusted-input-unavailable' } });
    expect(core.developerMode.on).toBe(false);
  });
});
