// The loopback web host (src/main/web/server.ts) over real HTTP and a real
// WebSocket, against the in-test ConsoleApi: token required, Origin and Host
// checked, static files confined, API round trip, events pushed after auth only.
import { mkdtempSync, mkdirSync, writeFileSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { connect as netConnect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { resolveStatic } from '../../src/main/static-files';
import { portFrom, startWebHost, type WebHost } from '../../src/main/web/server';
import { FakeConsole, sampleApproval } from '../support/fake-console';
import { exchangeLink, tokenOf, webSession, type WebSession } from '../support/web-session';

let dir: string;
let host: WebHost;
let fake: FakeConsole;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'echo-web-'));
  writeFileSync(path.join(dir, 'index.html'), '<!doctype html><title>Echo</title>');
  mkdirSync(path.join(dir, 'assets'));
  writeFileSync(path.join(dir, 'assets', 'app.js'), 'console.log(1)');
  writeFileSync(path.join(dir, '.secret'), 'no');
  fake = new FakeConsole({ approvals: [sampleApproval()] });
  host = await startWebHost({ api: fake, subscribe: (l) => fake.onEvent(l), rendererDir: dir, port: 0, helloTimeoutMs: 500 });
});

afterAll(async () => {
  await host.close();
  rmSync(dir, { recursive: true, force: true });
});

function get(urlPath: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: host.port, path: urlPath, headers: { host: `127.0.0.1:${host.port}`, ...headers } }, (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

type Closed = { code: number };
// Messages can arrive several per tick: queue them so that no waiter misses one.
const inboxes = new WeakMap<WebSocket, { queue: Record<string, unknown>[]; waiters: ((m: Record<string, unknown>) => void)[] }>();
function connect(origin: string | null = host.origin, extra: Record<string, string> = {}, wsPath = '/api'): Promise<WebSocket> {
  const ws = new WebSocket(`ws://127.0.0.1:${host.port}${wsPath}`, { headers: { ...(origin ? { origin } : {}), ...extra } });
  const box = { queue: [] as Record<string, unknown>[], waiters: [] as ((m: Record<string, unknown>) => void)[] };
  inboxes.set(ws, box);
  ws.on('message', (d) => {
    const m = JSON.parse(d.toString()) as Record<string, unknown>;
    const w = box.waiters.shift();
    if (w) w(m);
    else box.queue.push(m);
  });
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(ws));
    ws.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
    ws.once('error', reject);
  });
}
function nextMessage(ws: WebSocket): Promise<Record<string, unknown>> {
  const box = inboxes.get(ws)!;
  const queued = box.queue.shift();
  return queued ? Promise.resolve(queued) : new Promise((resolve) => box.waiters.push(resolve));
}
function closed(ws: WebSocket): Promise<Closed> {
  return new Promise((resolve) => ws.once('close', (code) => resolve({ code })));
}
function connectWith(s: WebSession): Promise<WebSocket> {
  return connect(host.origin, { cookie: s.cookie }, `/api/${s.sid}`);
}
async function authed(): Promise<WebSocket> {
  const ws = await connectWith(await webSession(host));
  ws.send(JSON.stringify({ type: 'hello' }));
  expect(await nextMessage(ws)).toEqual({ type: 'welcome' });
  return ws;
}
async function call(ws: WebSocket, id: number, method: string, params?: unknown): Promise<Record<string, unknown>> {
  ws.send(JSON.stringify(params === undefined ? { id, method } : { id, method, params }));
  for (;;) {
    const m = await nextMessage(ws);
    if (m.id === id) return m;
  }
}

/** A client-to-server WebSocket frame (RFC 6455 §5.2: FIN, masked), short payloads only. */
function maskedFrame(opcode: number, payload: string | Buffer): Buffer {
  const data = Buffer.from(payload);
  if (data.length > 125) throw new Error('short frames only');
  const mask = randomBytes(4);
  const out = Buffer.alloc(6 + data.length);
  out[0] = 0x80 | opcode;
  out[1] = 0x80 | data.length;
  mask.copy(out, 2);
  for (let i = 0; i < data.length; i++) out[6 + i] = data[i]! ^ mask[i % 4]!;
  return out;
}

describe('web host: HTTP', () => {
  it('prints a console URL with the token in the fragment only', () => {
    expect(host.consoleUrl).toBe(`http://127.0.0.1:${host.port}/#token=${host.token}`);
    expect(host.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('serves index.html with the CSP (own ws origin) and security headers', async () => {
    const r = await get('/');
    expect(r.status).toBe(200);
    expect(r.body).toContain('<title>Echo</title>');
    const csp = String(r.headers['content-security-policy']);
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain(`connect-src 'self' ws://127.0.0.1:${host.port}`);
    expect(r.headers['x-content-type-options']).toBe('nosniff');
    expect(r.headers['referrer-policy']).toBe('no-referrer');
    expect((await get('/assets/app.js')).headers['content-type']).toMatch(/^text\/javascript/);
  });

  it('refuses a foreign Host header (DNS rebinding)', async () => {
    expect((await get('/', { host: `evil.example:${host.port}` })).status).toBe(421);
    expect((await get('/', { host: `localhost:${host.port}` })).status).toBe(421);
  });

  it.each(['/../package.json', '/%2e%2e/x', '/assets/../../etc/passwd', '/.secret', '/assets//app.js', '/a%00b', '/nope.js'])(
    'does not serve %s',
    async (p) => {
      expect((await get(p)).status).toBe(404);
    },
  );

  it('confines static paths to the renderer folder', () => {
    expect(resolveStatic('/r', '/')).toBe(path.resolve('/r/index.html'));
    expect(resolveStatic('/r', '/assets/a.js?v=1')).toBe(path.resolve('/r/assets/a.js'));
    expect(resolveStatic('/r', '/..')).toBeNull();
    expect(resolveStatic('/r', '/a\\..\\b')).toBeNull();
  });
});

describe('web host: the one-time link and the session cookie (issue 9 item 4)', () => {
  it('spends a link once: the first exchange sets an HttpOnly, SameSite=Strict cookie; a second use of the same link is refused and sets nothing', async () => {
    const token = tokenOf(host.newConsoleUrl());
    const first = await exchangeLink(host, JSON.stringify({ token }));
    expect(first.status).toBe(200);
    const sid = (JSON.parse(first.body) as { session: string }).session;
    expect(sid).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(first.setCookie).toHaveLength(1);
    const attrs = first.setCookie[0]!.split(';').map((a) => a.trim());
    expect(attrs[0]).toMatch(new RegExp(`^${host.sessionCookieName}=[A-Za-z0-9_-]{43}$`));
    // The Path is the session's own socket: the browser sends the cookie nowhere else, on any port.
    expect(attrs.slice(1).sort()).toEqual(['HttpOnly', `Path=/api/${sid}`, 'SameSite=Strict']);
    expect(attrs[0]).not.toContain(token);

    const again = await exchangeLink(host, JSON.stringify({ token }));
    expect(again.status).toBe(403);
    expect(again.setCookie).toEqual([]);
    expect(again.body).toContain('already used');
  });

  it('refuses an exchange from another origin (another port of 127.0.0.1 too), without Origin, with a foreign Host, by GET, or oversized; the link stays unspent', async () => {
    const token = tokenOf(host.newConsoleUrl());
    const body = JSON.stringify({ token });
    expect((await exchangeLink(host, body, { origin: 'https://evil.example' })).status).toBe(403);
    expect((await exchangeLink(host, body, { origin: `http://127.0.0.1:${host.port + 1}` })).status).toBe(403);
    expect((await exchangeLink(host, body, { origin: `http://localhost:${host.port}` })).status).toBe(403);
    expect((await exchangeLink(host, body, { origin: undefined })).status).toBe(403);
    expect((await exchangeLink(host, body, { host: `evil.example:${host.port}` })).status).toBe(421);
    expect((await get('/session')).status).toBe(405);
    expect((await exchangeLink(host, JSON.stringify({ token, pad: 'x'.repeat(2048) }))).status).toBe(413);
    for (const bad of ['', 'null', '[]', '{"token":42}', '{"token":"' + 'x'.repeat(300) + '"}', 'not json']) {
      expect((await exchangeLink(host, bad)).status).toBe(403);
    }
    expect((await exchangeLink(host, body)).status).toBe(200); // still good for our own page
  });

  it('a session cookie signed by another run (another key) opens nothing', async () => {
    const other = await startWebHost({ api: fake, subscribe: () => undefined, rendererDir: dir, port: 0 });
    const foreign = await webSession(other);
    await other.close();
    const ws = await connect(host.origin, { cookie: `${host.sessionCookieName}=${foreign.cookie.split('=')[1]}` }, `/api/${foreign.sid}`);
    const c = closed(ws);
    ws.send(JSON.stringify({ type: 'hello' }));
    expect((await c).code).toBe(4401);
  });

  it("a session's cookie opens only its own socket path: presented on another session's path, or on /api, it opens nothing", async () => {
    const a = await webSession(host);
    const b = await webSession(host);
    for (const path of [`/api/${b.sid}`, '/api', '/api/', `/api/${a.sid}x`]) {
      const ws = await connect(host.origin, { cookie: a.cookie }, path);
      const c = closed(ws);
      ws.send(JSON.stringify({ type: 'hello' }));
      expect((await c).code, path).toBe(4401);
    }
    const ok = await connectWith(a);
    ok.send(JSON.stringify({ type: 'hello' }));
    expect(await nextMessage(ok)).toEqual({ type: 'welcome' });
    ok.close();
  });
});

describe('web host: WebSocket', () => {
  it('refuses an upgrade from another Origin, from no Origin, or with a foreign Host', async () => {
    await expect(connect('https://evil.example')).rejects.toThrow('HTTP 403');
    await expect(connect('null')).rejects.toThrow('HTTP 403');
    await expect(connect(`http://localhost:${host.port}`)).rejects.toThrow('HTTP 403');
    await expect(connect(null)).rejects.toThrow('HTTP 403');
    await expect(connect(host.origin, { host: `evil.example:${host.port}` })).rejects.toThrow('HTTP 421');
  });

  it('closes a socket without a session cookie at once, whatever it sends (an old-style hello with the link token too)', async () => {
    const a = await connect();
    const ca = closed(a);
    a.send(JSON.stringify({ type: 'hello', token: host.token }));
    expect((await ca).code).toBe(4401);

    const forged = await webSession(host);
    const b = await connect(host.origin, { cookie: `${host.sessionCookieName}=${'A'.repeat(43)}` }, `/api/${forged.sid}`);
    const cb = closed(b);
    b.send(JSON.stringify({ id: 1, method: 'getSnapshot' }));
    expect((await cb).code).toBe(4401);
    expect(fake.calls).toHaveLength(0);
  });

  it('closes a session socket that sends a call before its hello, or never says hello', async () => {
    const session = await webSession(host);
    const b = await connectWith(session);
    const cb = closed(b);
    b.send(JSON.stringify({ id: 1, method: 'getSnapshot' }));
    expect((await cb).code).toBe(4401);
    // No hello in time: closed with its own code (nothing read; the page may reconnect), not as refused.
    const ws = await connectWith(session);
    expect((await closed(ws)).code).toBe(4408);
    expect(fake.calls).toHaveLength(0);
  });

  it('reads nothing more from a socket it refused: a hello and a decision sent behind a refused first call are never run', async () => {
    const before = fake.calls.length;
    const ws = await connectWith(await webSession(host));
    const c = closed(ws);
    // One burst: the host refuses the first message (a call before the hello) and must stop reading there.
    ws.send(JSON.stringify({ id: 1, method: 'getSnapshot' }));
    ws.send(JSON.stringify({ type: 'hello' }));
    ws.send(JSON.stringify({ id: 2, method: 'decideApproval', params: { requestId: 'req-1', decision: 'approve' } }));
    // The close handshake completes only after the host has read every frame sent before ours.
    expect((await c).code).toBe(4401);
    expect(fake.calls.slice(before)).toEqual([]);
    expect(fake.approvals.map((a) => a.requestId)).toContain('req-1');
  });

  it("a hello that arrives after the host closed the socket for no hello (the page's open event ran late) is not read, nor the calls behind it", async () => {
    // The page's side of the race, byte for byte: its socket is still open when it sends the hello and a
    // decision, but the host's 4408 'no hello in time' close frame is already on its way. The page answers
    // the decision `disconnected`, not done (src/renderer/transport/ws-client.ts: never read), so it must not run.
    const before = fake.calls.length;
    const session = await webSession(host);
    const sock = netConnect(host.port, '127.0.0.1');
    let got = Buffer.alloc(0);
    const seen = (test: (b: Buffer) => boolean) =>
      new Promise<void>((resolve) => {
        const check = () => {
          if (!test(got)) return;
          sock.off('data', onData);
          resolve();
        };
        const onData = (d: Buffer) => {
          got = Buffer.concat([got, d]);
          check();
        };
        sock.on('data', onData);
        check();
      });
    sock.write(
      [
        `GET /api/${session.sid} HTTP/1.1`,
        `Host: 127.0.0.1:${host.port}`,
        `Origin: ${host.origin}`,
        `Cookie: ${session.cookie}`,
        'Upgrade: websocket',
        'Connection: Upgrade',
        `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}`,
        'Sec-WebSocket-Version: 13',
        '',
        '',
      ].join('\r\n'),
    );
    const headEnd = () => got.indexOf('\r\n\r\n');
    await seen((b) => headEnd() >= 0 && b.length >= headEnd() + 4 + 4);
    expect(got.subarray(0, 12).toString()).toBe('HTTP/1.1 101');
    const frame = got.subarray(headEnd() + 4);
    // The host's close frame (opcode 8) with 4408: it waited for a hello and gave up.
    expect(frame[0]).toBe(0x88);
    expect(frame.readUInt16BE(2)).toBe(4408);
    sock.write(maskedFrame(0x1, JSON.stringify({ type: 'hello' })));
    sock.write(maskedFrame(0x1, JSON.stringify({ id: 1, method: 'decideApproval', params: { requestId: 'req-1', decision: 'approve' } })));
    const ended = new Promise<void>((resolve) => sock.once('close', () => resolve()));
    sock.end(maskedFrame(0x8, Buffer.from([0x03, 0xe8])));
    // The host ends the connection once it reads our close frame, so it has read everything before it.
    await ended;
    expect(fake.calls.slice(before)).toEqual([]);
    expect(fake.approvals.map((a) => a.requestId)).toContain('req-1');
  });

  it('answers calls after the token, validating payloads like IPC', async () => {
    const ws = await authed();
    const snap = await call(ws, 1, 'getSnapshot');
    expect(snap.result).toMatchObject({ ok: true, value: { approvals: [{ requestId: 'req-1' }] } });

    const bad = await call(ws, 2, 'decideApproval', { requestId: 'req-1', decision: 'yes' });
    expect(bad.result).toMatchObject({ ok: false, error: { code: 'invalid-params' } });
    const unknown = await call(ws, 3, '__proto__', {});
    expect(unknown.result).toMatchObject({ ok: false, error: { code: 'unknown-method' } });
    expect(fake.calls.map((c) => c.method)).toEqual(['getSnapshot']);

    ws.send(JSON.stringify({ id: 4, method: 'decideApproval', params: { requestId: 'req-1', decision: 'approve' } }));
    expect(await nextMessage(ws)).toEqual({ event: { kind: 'approvals', approvals: [] } });
    expect(await nextMessage(ws)).toMatchObject({ event: { kind: 'receipts', receipts: [{ event: 'approved' }] } });
    expect(await nextMessage(ws)).toEqual({ id: 4, result: { ok: true, value: null } });
    ws.close();
  });

  it('closes on a message that is not JSON', async () => {
    const ws = await authed();
    const c = closed(ws);
    ws.send('not json');
    expect((await c).code).toBe(4400);
  });

  it('pushes events to authenticated sockets only', async () => {
    const stranger = await connect();
    const ws = await authed();
    const seen = nextMessage(ws);
    fake.emit({ kind: 'settings', settings: { approvalTimeoutMs: 60_000, developerMode: false, developerModeIdleMinutes: 30, retentionDays: null } });
    expect(await seen).toMatchObject({ event: { kind: 'settings' } });
    expect(inboxes.get(stranger)!.queue).toEqual([]);
    stranger.close();
    ws.close();
  });
});

describe('web host: port option', () => {
  it('reads --port, --port=, then $ECHO_CONSOLE_WEB_PORT, default 0', () => {
    expect(portFrom([], {})).toBe(0);
    expect(portFrom(['--port', '8123'], {})).toBe(8123);
    expect(portFrom(['--port=0'], { ECHO_CONSOLE_WEB_PORT: '9000' })).toBe(0);
    expect(portFrom([], { ECHO_CONSOLE_WEB_PORT: '9000' })).toBe(9000);
    for (const bad of ['x', '-1', '65536', '1.5']) expect(() => portFrom(['--port', bad], {})).toThrow(/--port/);
  });

  it('refuses to start without a built renderer', async () => {
    await expect(startWebHost({ api: fake, subscribe: () => undefined, rendererDir: path.join(dir, 'assets') })).rejects.toThrow(/not built/);
  });
});
