/**
 * The established link, end to end in Node (real Bridge, real socket, real
 * bundled native host, real extension link core): heartbeats, requests,
 * timeouts, cancellation, a host killed mid-request, the console not running,
 * malformed messages, events.
 */
import { promises as fs } from 'node:fs';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { encodePayload } from '../../src/shared/framing';
import { EXT, buildHost, Rig, tempDir } from './bridge-harness';

let dir: string;
let hostScript: string;
let n = 0;
const rigs: Rig[] = [];

beforeAll(async () => {
  dir = await tempDir();
  hostScript = await buildHost(dir);
});
afterEach(async () => {
  await Promise.all(rigs.splice(0).map((r) => r.close()));
});
afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

async function paired(over: Parameters<Rig['startConsole']>[0] = {}, ext: Parameters<Rig['startExtension']>[0] = {}): Promise<Rig> {
  const r = new Rig(dir, hostScript, `l${n++}`);
  rigs.push(r);
  await r.startConsole(over);
  await r.installHost();
  r.startExtension(ext);
  await r.pair();
  return r;
}

describe('native host', () => {
  it('console not running: one host-error frame, exit code 2; the extension shows it and retries until the console starts', async () => {
    const r = new Rig(dir, hostScript, `l${n++}`);
    rigs.push(r);
    await r.installHost();
    // Directly, as Chrome would run it.
    const direct = spawnSync(process.execPath, [hostScript, `chrome-extension://${EXT}/`, '--socket', r.socketPath]);
    expect(direct.status).toBe(2);
    const len = direct.stdout.readUInt32LE(0);
    expect(direct.stdout.length).toBe(4 + len);
    expect(JSON.parse(direct.stdout.subarray(4).toString('utf8'))).toMatchObject({ type: 'host-error', code: 'console-not-running' });

    // Through the link: state console-not-running, retrying; then the console starts.
    r.startExtension();
    await r.until(() => r.link?.state().state === 'console-not-running', 'console-not-running');
    expect(r.link?.state().error?.message).toMatch(/not running/);
    await r.until(() => r.chrome.exits.length >= 2, 'a retry');
    expect(r.chrome.exits.every((e) => e.code === 2)).toBe(true);
    await r.startConsole();
    await r.pair();
  });

  it('with no origin argument the host refuses to run (exit 64, nothing on stdout)', () => {
    const res = spawnSync(process.execPath, [hostScript, '--socket', path.join(dir, 'none.sock')]);
    expect(res.status).toBe(64);
    expect(res.stdout.length).toBe(0);
  });

  it('exits when Chrome closes its stdin, and the console sees the link drop', async () => {
    const r = await paired();
    const child = r.chrome.lastPort?.child;
    child?.stdin?.end();
    await r.until(() => r.chrome.exits.some((e) => e.pid === child?.pid), 'host exit');
    expect(r.chrome.exits.find((e) => e.pid === child?.pid)?.code).toBe(0);
    await r.until(() => r.audits.some((a) => a.kind === 'link-disconnected'), 'console noticed');
  });
});

describe('heartbeat', () => {
  it('drives "connected": pongs update lastHeartbeatAt; a frozen host drops the link on both sides, then it reconnects', async () => {
    const r = await paired();
    const first = r.bridge.status().lastHeartbeatAt as number;
    await r.until(() => (r.bridge.status().lastHeartbeatAt ?? 0) > first, 'a later pong');
    await r.until(() => (r.link?.state().lastHeartbeatAt ?? 0) > first, 'a pong on the extension side');

    const child = r.chrome.lastPort?.child;
    child?.kill('SIGSTOP'); // the host stops relaying: no pongs either way
    try {
      await r.until(() => r.bridge.status().state !== 'connected', 'console drops the link');
      await r.until(() => r.link?.state().state !== 'connected', 'extension drops the link');
      expect(r.audits.find((a) => a.kind === 'link-disconnected')).toMatchObject({ reason: 'heartbeat-timeout' });
    } finally {
      child?.kill('SIGKILL');
    }
    await r.connected(); // reconnected with a new host, no pairing
    expect(r.audits.filter((a) => a.kind === 'paired')).toHaveLength(1);
  });
});

describe('requests', () => {
  it('answer through onRequest; values are validated per op; an oversized answer becomes too-large', async () => {
    const r = await paired();
    expect(await r.bridge.request({ op: 'list-tabs' })).toEqual({ ok: true, value: [] });
    const bad = await r.bridge.request({ op: 'share-tab', tabId: 4 });
    expect(bad).toMatchObject({ ok: false, error: { code: 'bad-message' } });
    if (!bad.ok) expect(bad.error.message).toMatch(/share-tab with an invalid value: value\.tabId: missing/);
    expect(await r.bridge.request({ op: 'list-shareable-tabs' })).toMatchObject({ ok: false, error: { code: 'too-large' } });
    expect(r.bridge.status().state).toBe('connected');
  });

  it('an aborted request sends cancel: the handler sees its signal abort', async () => {
    const r = await paired();
    const ac = new AbortController();
    const p = r.bridge.request({ op: 'discover', tabId: 3 }, { signal: ac.signal });
    await r.until(() => r.requests.length === 1, 'handler called');
    ac.abort();
    expect(await p).toMatchObject({ ok: false, error: { code: 'aborted' } });
    await r.until(() => r.requests[0]?.signal.aborted === true, 'handler aborted by the cancel');
    expect(r.requests.map((q) => q.req.op)).toEqual(['discover']); // cancel is handled by the link, not passed on
    expect(r.bridge.status().state).toBe('connected');
  });

  it('a request times out, and the extension is asked to cancel it', async () => {
    const r = await paired();
    const res = await r.bridge.request({ op: 'discover', tabId: 3 }, { timeoutMs: 300 });
    expect(res).toMatchObject({ ok: false, error: { code: 'timeout' } });
    await r.until(() => r.requests[0]?.signal.aborted === true, 'cancelled after the timeout');
  });

  it('host killed mid-request: link-down, reconnect, and the request is never replayed', async () => {
    const r = await paired();
    const p = r.bridge.request({ op: 'discover', tabId: 9 });
    await r.until(() => r.requests.length === 1, 'handler called');
    r.chrome.lastPort?.child.kill('SIGKILL');
    expect(await p).toMatchObject({ ok: false, error: { code: 'link-down' } });
    await r.until(() => r.requests[0]?.signal.aborted === true, 'handler aborted on the extension side');
    await r.connected();
    expect(await r.bridge.request({ op: 'list-tabs' })).toEqual({ ok: true, value: [] });
    expect(r.requests.map((q) => q.req.op)).toEqual(['discover', 'list-tabs']);
  });

  it('requests fail fast with link-down while no extension is connected', async () => {
    const r = await paired();
    r.link?.stop();
    await r.until(() => r.bridge.status().state === 'no-extension', 'dropped');
    expect(await r.bridge.request({ op: 'list-tabs' })).toMatchObject({ ok: false, error: { code: 'link-down' } });
  });

  it('refuses to send a request the extension would refuse', async () => {
    const r = await paired();
    expect(await r.bridge.request({ op: 'share-tab', tabId: -5 })).toMatchObject({ ok: false, error: { code: 'bad-request' } });
  });
});

describe('events and malformed messages', () => {
  it('events reach onEvent; a bad event or a non-JSON frame gets bad-message and the link stays up', async () => {
    const r = await paired();
    const seen: unknown[] = [];
    r.bridge.onEvent((e) => {
      seen.push(e);
      r.changed();
    });
    expect(r.link?.sendEvent({ kind: 'tools-changed', tabId: 1, frameId: 0, documentId: 'D' })).toBe(true);
    await r.until(() => seen.length === 1, 'event');
    // The link itself refuses to send an invalid event.
    expect(r.link?.sendEvent({ kind: 'tools-changed', tabId: -1, frameId: 0, documentId: 'D' })).toBe(false);
    // Bypass the link: a malformed message and a frame that is not JSON, straight into the host.
    r.chrome.lastPort?.postMessage({ type: 'event', event: { kind: 'bogus' } });
    r.chrome.lastPort?.child.stdin?.write(encodePayload(new TextEncoder().encode('{not json')));
    expect(r.link?.sendEvent({ kind: 'navigated', tabId: 1, frameId: 0, documentId: 'D2', url: 'https://a/' })).toBe(true);
    await r.until(() => seen.length === 2, 'second event');
    expect(r.bridge.status().state).toBe('connected');
    expect(await r.bridge.request({ op: 'list-tabs' })).toEqual({ ok: true, value: [] });
  });

  it('stopping the console fails in-flight requests with link-down', async () => {
    const r = await paired();
    const p = r.bridge.request({ op: 'discover', tabId: 1 });
    await r.until(() => r.requests.length === 1, 'handler called');
    await r.bridge.stop();
    expect(await p).toMatchObject({ ok: false, error: { code: 'link-down' } });
    await r.until(() => r.link?.state().state !== 'connected', 'extension notices');
  });
});
