// The renderer's transport when the console goes away: the WebSocket client
// against a real web host that stops and comes back (calls answer at once, not
// after a 30 s timeout), and failures in plain words that never name an API
// method or IPC channel (verifyLedger, receipts:verify, ...).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { WebSocket } from 'ws';
import { startWebHost, type WebHost } from '../../src/main/web/server';
import { API_METHOD_NAMES, plainError, withPlainErrors } from '../../src/renderer/transport/errors';
import { createWsClient, MESSAGES, type TransportState } from '../../src/renderer/transport/ws-client';
import type { EchoApi } from '../../src/shared/ipc';
import { CHANNELS } from '../../src/shared/ipc';
import { FakeConsole, sampleApproval } from '../support/fake-console';
import { webSession } from '../support/web-session';

const METHOD_OR_CHANNEL = new RegExp(`${[...API_METHOD_NAMES, ...Object.values(CHANNELS)].join('|')}`);

describe('WebSocket client when the console host goes away', () => {
  let dir: string;
  let host: WebHost;
  let fake: FakeConsole;
  const token = 'reachability-token-0123456789abcdef';
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'echo-reach-'));
    writeFileSync(path.join(dir, 'index.html'), 'x');
    fake = new FakeConsole({ approvals: [sampleApproval(Date.now())] });
    host = await startWebHost({ api: fake, subscribe: (l) => fake.onEvent(l), rendererDir: dir, token });
  });
  afterAll(async () => {
    await host.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers calls at once with a plain "disconnected" while reconnecting, and is open again when the host is back', async () => {
    const origin = host.origin;
    const port = host.port;
    const { sid, cookie } = await webSession(host);
    const socketFor = (url: string) => new WebSocket(url, { headers: { origin, cookie } }) as never;
    const client = createWsClient({ origin, ready: Promise.resolve(sid), callTimeoutMs: 20_000, createSocket: socketFor });
    const states: TransportState[] = [];
    client.onState((s) => states.push(s));
    expect((await client.api.getSnapshot()).ok).toBe(true);

    await host.close(); // the person pressed Ctrl+C
    await vi.waitFor(() => expect(client.state()).toBe('reconnecting'));
    const started = Date.now();
    const r = await client.api.verifyLedger();
    expect(Date.now() - started).toBeLessThan(1_000); // not the 20 s call timeout
    expect(r).toMatchObject({ ok: false, error: { code: 'disconnected' } });
    if (!r.ok) expect(r.error.message).not.toMatch(METHOD_OR_CHANNEL);

    // The same port and session key: the tab's cookie is still good (a real restart ends every session).
    host = await startWebHost({ api: fake, subscribe: (l) => fake.onEvent(l), rendererDir: dir, token, port, sessionKey: host.sessionKey });
    await vi.waitFor(() => expect(client.state()).toBe('open'), { timeout: 15_000 });
    expect((await client.api.verifyLedger()).ok).toBe(true);
    expect(states).toEqual(['open', 'reconnecting', 'open']);
    client.close();
  }, 30_000);

  it('answers a call waiting for the first connection as soon as that connection fails', async () => {
    const spare = await startWebHost({ api: fake, subscribe: (l) => fake.onEvent(l), rendererDir: dir });
    const origin = spare.origin;
    await spare.close(); // nothing listens there now
    const client = createWsClient({
      origin,
      callTimeoutMs: 20_000,
      createSocket: (url) => new WebSocket(url, { headers: { origin } }) as never,
    });
    const started = Date.now();
    const r = await client.api.getSnapshot();
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(r).toMatchObject({ ok: false, error: { code: 'disconnected' } });
    client.close();
  });

  it('says a timeout plainly, without the method name', async () => {
    const sockets: { onopen: ((e: unknown) => void) | null }[] = [];
    const client = createWsClient({
      origin: 'http://127.0.0.1:1',
      callTimeoutMs: 50,
      createSocket: () => {
        const s = { send: () => undefined, close: () => undefined, onopen: null, onmessage: null, onclose: null, onerror: null };
        sockets.push(s);
        return s;
      },
    });
    const r = await client.api.verifyLedger();
    expect(r).toMatchObject({ ok: false, error: { code: 'timeout' } });
    if (!r.ok) expect(r.error.message).not.toMatch(METHOD_OR_CHANNEL);
    client.close();
  });
});

describe('WebSocket client: every close and reconnect order answers each call once, with its own answer', () => {
  /** A socket the test drives by hand: it records what the client sends. */
  class Scripted {
    sent: Record<string, unknown>[] = [];
    onopen: ((ev: unknown) => void) | null = null;
    onmessage: ((ev: { data: unknown }) => void) | null = null;
    onclose: ((ev: { code: number }) => void) | null = null;
    onerror: ((ev: unknown) => void) | null = null;
    send(d: string) {
      this.sent.push(JSON.parse(d) as Record<string, unknown>);
    }
    close() {}
    open() {
      this.onopen?.({});
    }
    say(m: unknown) {
      this.onmessage?.({ data: JSON.stringify(m) });
    }
    drop(code: number) {
      this.onerror?.({});
      this.onclose?.({ code });
    }
  }
  const start = () => {
    const sockets: Scripted[] = [];
    // No call may wait for its timeout here: a hang fails the test by its own timeout.
    const client = createWsClient({ origin: 'http://127.0.0.1:1', ready: 'sid', callTimeoutMs: 3_600_000, createSocket: () => (sockets.push(new Scripted()), sockets.at(-1)!) });
    return { client, sockets };
  };

  it('close() answers every call still waiting, at once: one waiting for the socket ("not done"), one sent ("not known"), one made after', async () => {
    const { client, sockets } = start();
    const waiting = client.api.getSnapshot();
    client.close();
    expect(await waiting).toMatchObject({ ok: false, error: { code: 'disconnected', message: MESSAGES.disconnected } });
    expect(sockets[0]!.sent).toEqual([]);

    const second = start();
    second.sockets[0]!.open();
    second.sockets[0]!.say({ type: 'welcome' });
    const sent = second.client.api.verifyLedger();
    second.client.close();
    expect(await sent).toMatchObject({ ok: false, error: { code: 'disconnected', message: MESSAGES.dropped } });
    expect(await second.client.api.listPolicyRules()).toMatchObject({ ok: false, error: { code: 'disconnected', message: MESSAGES.disconnected } });
    expect(second.sockets[0]!.sent.map((m) => m.type ?? m.method)).toEqual(['hello', 'verifyLedger']);
  });

  it('a close before the socket opened answers the waiting call `disconnected` at once', async () => {
    const { client, sockets } = start();
    const a = client.api.getSnapshot();
    sockets[0]!.drop(1006);
    expect(await a).toMatchObject({ ok: false, error: { code: 'disconnected' } });
    expect(client.state()).toBe('reconnecting');
    expect(sockets[0]!.sent).toEqual([]);
    client.close();
  });

  it('a close after the hello but before the welcome (not 4401): the call sent behind the hello is "not known", later calls answer at once, and the next socket answers by id', async () => {
    const { client, sockets } = start();
    const a = client.api.getSnapshot();
    sockets[0]!.open();
    expect(sockets[0]!.sent).toEqual([{ type: 'hello' }, { id: 1, method: 'getSnapshot' }]);
    sockets[0]!.drop(1011);
    expect(await a).toMatchObject({ ok: false, error: { code: 'disconnected', message: MESSAGES.dropped } });
    expect(client.state()).toBe('reconnecting');
    expect(await client.api.verifyLedger()).toMatchObject({ ok: false, error: { code: 'disconnected', message: MESSAGES.disconnected } });
    // The retry: its hello is out, its welcome not back yet; a call is still not sent.
    await vi.waitFor(() => expect(sockets).toHaveLength(2), { timeout: 5_000 });
    const s = sockets[1]!;
    s.open();
    expect(await client.api.verifyLedger()).toMatchObject({ ok: false, error: { code: 'disconnected' } });
    expect(s.sent).toEqual([{ type: 'hello' }]);
    s.say({ type: 'welcome' });
    expect(client.state()).toBe('open');
    const b = client.api.verifyLedger();
    const c = client.api.listPolicyRules();
    const [idB, idC] = s.sent.slice(1).map((m) => m.id as number);
    expect(idB).not.toBe(idC);
    // Answered out of order: each call gets its own answer, once.
    s.say({ id: idC, result: { ok: true, value: 'rules' } });
    s.say({ id: idB, result: { ok: true, value: 'ledger' } });
    s.say({ id: idB, result: { ok: true, value: 'again' } });
    expect(await b).toEqual({ ok: true, value: 'ledger' });
    expect(await c).toEqual({ ok: true, value: 'rules' });
    client.close();
  }, 10_000);

  it("4408 (the host waited too long for the hello, its open event ran late): the calls behind the hello answer 'not done', and the page reconnects", async () => {
    const { client, sockets } = start();
    const a = client.api.decideApproval({ requestId: 'x', decision: 'approve' });
    sockets[0]!.open();
    sockets[0]!.drop(4408);
    // The host read nothing after closing (src/main/web/server.ts): "not done", never "refused" or "not known".
    expect(await a).toMatchObject({ ok: false, error: { code: 'disconnected', message: MESSAGES.disconnected } });
    expect(client.state()).toBe('reconnecting');
    await vi.waitFor(() => expect(sockets).toHaveLength(2), { timeout: 5_000 });
    sockets[1]!.open();
    sockets[1]!.say({ type: 'welcome' });
    expect(client.state()).toBe('open');
    client.close();
  });

  it("4401 before the welcome (refused: no session, or a first message that is not a hello): the calls behind the hello answer `unauthorized` and no socket follows; 4401 once open answers \"not known\"", async () => {
    const { client, sockets } = start();
    const a = client.api.decideApproval({ requestId: 'x', decision: 'approve' });
    sockets[0]!.open();
    const b = client.api.getSnapshot(); // made after the hello went out: sent at once
    expect(sockets[0]!.sent.map((m) => m.type ?? m.method)).toEqual(['hello', 'decideApproval', 'getSnapshot']);
    sockets[0]!.drop(4401);
    expect(await a).toMatchObject({ ok: false, error: { code: 'unauthorized' } });
    expect(await b).toMatchObject({ ok: false, error: { code: 'unauthorized' } });
    expect(client.state()).toBe('unauthorized');
    expect(await client.api.getSnapshot()).toMatchObject({ ok: false, error: { code: 'unauthorized' } });
    client.close();

    const second = start();
    second.sockets[0]!.open();
    second.sockets[0]!.say({ type: 'welcome' });
    const c = second.client.api.decideApproval({ requestId: 'x', decision: 'approve' });
    second.sockets[0]!.drop(4401);
    // Read and maybe run: the page must not say it was refused.
    expect(await c).toMatchObject({ ok: false, error: { code: 'disconnected', message: MESSAGES.dropped } });
    second.client.close();
  });
});

describe('plain errors', () => {
  it('turns transport and boundary codes into sentences that never name a method or channel', () => {
    const raw = [
      { code: 'timeout', message: 'verifyLedger got no answer.' },
      { code: 'disconnected', message: 'Not connected to the console host.' },
      { code: 'unauthorized', message: 'The console host refused this page’s token.' },
      { code: 'internal', message: 'queryReceipts returned no result.' },
      { code: 'invalid-params', message: 'Invalid parameters for queryReceipts: /requestId must match pattern.', detail: { path: '/requestId', keyword: 'pattern' } },
      { code: 'unknown-method', message: 'No such console API method.' },
      { code: 'forbidden-sender', message: 'receipts:verify from a foreign frame' },
      { code: 'weird', message: "Error invoking remote method 'receipts:verify': reply was never sent" },
    ];
    for (const e of raw) {
      const plain = plainError(e);
      expect(plain.code).toBe(e.code);
      expect(plain.message).not.toMatch(METHOD_OR_CHANNEL);
      expect(plain.message).toMatch(/^[A-Z].*[.)]$/);
    }
    expect(plainError(raw[0]!).message).toMatch(/did not answer in time/);
    expect(plainError(raw[4]!).message).toMatch(/“requestId”/);
    // The core's own sentences pass through.
    expect(plainError({ code: 'unknown-tab', message: 'No such tab.' })).toEqual({ code: 'unknown-tab', message: 'No such tab.' });
    expect(plainError(plainError(raw[0]!))).toEqual(plainError(raw[0]!));
  });

  it('wraps every API method: failures read plainly, a rejected IPC call becomes a Result', async () => {
    const fake = new FakeConsole();
    const api: EchoApi = Object.assign(fake, {
      verifyLedger: () => Promise.reject(new Error("Error invoking remote method 'receipts:verify'")),
      unpair: async () => ({ ok: false as const, error: { code: 'timeout', message: 'unpair got no answer.' } }),
    });
    const wrapped = withPlainErrors(api);
    expect(Object.keys(wrapped).sort()).toEqual([...API_METHOD_NAMES, 'onEvent'].sort());
    const v = await wrapped.verifyLedger();
    expect(v).toMatchObject({ ok: false, error: { code: 'disconnected' } });
    const u = await wrapped.unpair();
    expect(u.ok).toBe(false);
    if (!u.ok) expect(u.error.message).not.toMatch(/unpair/);
    expect((await wrapped.listShareableTabs()).ok).toBe(true);
    expect(fake.calls.map((c) => c.method)).toEqual(['listShareableTabs']);
  });
});
