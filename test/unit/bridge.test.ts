/**
 * The link end to end in Node: real Bridge, real Unix socket, real native host
 * (bundled, started through the real launcher and manifest), real extension
 * link core. Pairing, auth, impostors, version and origin checks, unpairing,
 * and the socket's own rules.
 */
import { promises as fs } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FileSecretStore, PAIRING_SECRET_NAME } from '../../src/main/core/bridge/index';
import { PAIRING_STORAGE_KEY } from '../../extension/src/background/link';
import { encodeFrame, FrameDecoder } from '../../src/shared/framing';
import { randomHex, toBase64 } from '../../src/shared/pairing-crypto';
import { PROTOCOL_VERSION } from '../../src/shared/protocol';
import { EXT, OTHER_EXT, buildHost, MapStorage, Rig, tempDir } from './bridge-harness';

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

async function rig(opts: { extStorage?: MapStorage } = {}): Promise<Rig> {
  const r = new Rig(dir, hostScript, `r${n++}`, opts);
  rigs.push(r);
  return r;
}

/** A raw socket client that plays native host + extension, for what the real link never sends. */
async function rawClient(socketPath: string) {
  const sock = net.createConnection(socketPath);
  await new Promise<void>((res, rej) => {
    sock.once('connect', () => res());
    sock.once('error', rej);
  });
  const dec = new FrameDecoder();
  const inbox: unknown[] = [];
  const waiters: (() => void)[] = [];
  let closed = false;
  sock.on('data', (c: Buffer) => {
    for (const f of dec.push(c)) if (f.ok) inbox.push(f.value);
    waiters.splice(0).forEach((w) => w());
  });
  sock.on('close', () => {
    closed = true;
    waiters.splice(0).forEach((w) => w());
  });
  sock.on('error', () => {});
  return {
    send: (m: unknown) => sock.write(encodeFrame(m)),
    sendRaw: (b: Uint8Array) => sock.write(b),
    async next(type: string): Promise<Record<string, unknown>> {
      for (;;) {
        const i = inbox.findIndex((m) => (m as { type: string }).type === type);
        if (i >= 0) return inbox.splice(i, 1)[0] as Record<string, unknown>;
        if (closed) throw new Error(`closed before ${type}; inbox=${JSON.stringify(inbox)}`);
        await new Promise<void>((r) => waiters.push(r));
      }
    },
    async closedNow(): Promise<void> {
      while (!closed) await new Promise<void>((r) => waiters.push(r));
    },
    end: () => sock.destroy(),
  };
}

describe('pairing', () => {
  it('pairs when the person accepts the code; later connections authenticate without pairing', async () => {
    const r = await rig();
    expect((await r.startConsole()).ok).toBe(true);
    await r.installHost();
    r.startExtension();
    await r.until(() => r.bridge.status().state === 'awaiting-pairing' && r.link?.state().state === 'awaiting-pairing', 'codes');
    const code = r.bridge.status().pairingCode;
    expect(code).toMatch(/^\d{3} \d{3}$/);
    expect(r.link?.state().pairingCode).toBe(code);
    expect(r.bridge.status().paired).toBe(false);
    expect(r.link?.state().awaitingLocalConfirmation).toBe(true);
    expect((await r.bridge.confirmPairing(true)).ok).toBe(true);
    r.link?.confirmPairing(true);
    await r.connected();

    expect(r.bridge.status()).toMatchObject({ state: 'connected', paired: true, extensionId: EXT });
    expect(r.link?.state()).toMatchObject({ state: 'connected', paired: true });
    const stored = JSON.parse((await r.consoleStore.get(PAIRING_SECRET_NAME)) as string);
    const extStored = r.extStorage.map.get(PAIRING_STORAGE_KEY) as { pairingId: string; key: string };
    expect(extStored.pairingId).toBe(stored.pairingId);
    expect(extStored.key).toBe(stored.key);
    expect(r.audits.map((a) => a.kind)).toEqual(['paired', 'link-connected']);

    // The grant MAC made by the console verifies in the extension with the same key.
    const signed = await r.bridge.signGrant({
      requestId: 'q1', faculty: 'webmcp-invoke', operation: 'invoke', tabId: 1, frameId: 0, documentId: 'D', origin: 'https://a',
      urlHash: 'c'.repeat(64), subjectHash: 'a'.repeat(64), argumentsHash: 'b'.repeat(64), nonce: randomHex(), expiresAt: Date.now() + 1000,
    });
    expect(signed.ok).toBe(true);
    if (signed.ok) {
      expect(await r.link?.verifyGrant(signed.value)).toBe(true);
      expect(await r.link?.verifyGrant({ ...signed.value, tabId: 2 })).toBe(false);
    }
    expect(await r.bridge.request({ op: 'list-tabs' })).toEqual({ ok: true, value: [] });

    // A new worker (same storage) reconnects by challenge–response only.
    r.link?.stop();
    await r.until(() => r.bridge.status().state === 'no-extension', 'console sees the drop');
    expect(r.audits.at(-1)).toMatchObject({ kind: 'link-disconnected', extensionId: EXT });
    r.extStates.length = 0;
    r.startExtension();
    await r.connected();
    expect(r.extStates.some((s) => s.state === 'awaiting-pairing')).toBe(false);
    expect(r.audits.filter((a) => a.kind === 'paired')).toHaveLength(1);
  });

  it('a rejected pairing stores nothing, and the extension waits for the person before trying again', async () => {
    const r = await rig();
    await r.startConsole();
    await r.installHost();
    r.startExtension();
    await r.until(() => r.bridge.status().state === 'awaiting-pairing', 'code');
    await r.bridge.confirmPairing(false);
    await r.until(() => r.link?.state().state === 'refused', 'extension refused');
    expect(r.link?.state().error?.code).toBe('pairing-rejected');
    expect(r.link?.state().retryAt).toBeUndefined(); // not retrying by itself
    expect(r.bridge.status()).toMatchObject({ state: 'refused', paired: false, error: { code: 'pairing-rejected' } });
    expect(await r.consoleStore.get(PAIRING_SECRET_NAME)).toBeNull();
    expect(r.extStorage.map.size).toBe(0);
    expect(r.audits.map((a) => a.kind)).toEqual(['pairing-rejected']);
    expect((await r.bridge.confirmPairing(true)).ok).toBe(false); // nothing pending any more
    // The popup's "Pair again".
    r.link?.retry();
    await r.pair();
  });

  it('the key is kept only after the popup confirms too (the default, issue 9 item 1)', async () => {
    const r = await rig();
    await r.startConsole();
    await r.installHost();
    const link = r.startExtension();
    await r.until(() => r.bridge.status().state === 'awaiting-pairing', 'code');
    expect(link.state().awaitingLocalConfirmation).toBe(true);
    await r.bridge.confirmPairing(true);
    await r.until(() => r.bridge.status().state === 'handshaking', 'console accepted');
    expect(r.extStorage.map.size).toBe(0);
    link.confirmPairing(true);
    await r.connected();
    expect(r.extStorage.map.size).toBe(1);
  });

  it('a pairing the popup rejects leaves the console unpaired', async () => {
    const r = await rig();
    await r.startConsole();
    await r.installHost();
    const link = r.startExtension();
    await r.until(() => r.bridge.status().state === 'awaiting-pairing', 'code');
    await r.bridge.confirmPairing(true);
    link.confirmPairing(false);
    await r.until(() => r.audits.some((a) => a.kind === 'pairing-rejected'), 'rejection recorded');
    expect(await r.consoleStore.get(PAIRING_SECRET_NAME)).toBeNull();
    expect(link.state()).toMatchObject({ state: 'refused', error: { code: 'pairing-rejected' } });
  });
});

describe('authentication', () => {
  async function seeded(consoleKey: Uint8Array, extKey: Uint8Array) {
    const pairingId = randomHex();
    const extStorage = new MapStorage();
    await extStorage.set(PAIRING_STORAGE_KEY, { v: 1, pairingId, key: toBase64(extKey), pairedAt: 1 });
    const r = await rig({ extStorage });
    await r.consoleStore.set(PAIRING_SECRET_NAME, JSON.stringify({ v: 1, pairingId, key: toBase64(consoleKey), extensionId: EXT, pairedAt: 1 }));
    await r.startConsole();
    await r.installHost();
    return { r, pairingId };
  }

  it('the right key connects', async () => {
    const key = crypto.getRandomValues(new Uint8Array(32));
    const { r } = await seeded(key, key);
    r.startExtension();
    await r.connected();
    expect(r.extStates.some((s) => s.state === 'awaiting-pairing')).toBe(false);
  });

  it('a wrong key is refused on both sides (auth-failed) and nothing is replaced', async () => {
    const { r, pairingId } = await seeded(crypto.getRandomValues(new Uint8Array(32)), crypto.getRandomValues(new Uint8Array(32)));
    r.startExtension();
    await r.until(() => r.link?.state().state === 'refused' && r.bridge.status().state === 'refused', 'both refused');
    expect(r.link?.state().error?.code).toBe('auth-failed');
    expect(r.bridge.status().error?.code).toBe('auth-failed');
    // Both UIs say what to do about it.
    expect(r.link?.state().problem?.code).toBe('pair-again');
    expect(r.bridge.status().problem?.code).toBe('pair-again');
    expect(r.audits.map((a) => a.kind)).toEqual(['link-refused']);
    expect((r.extStorage.map.get(PAIRING_STORAGE_KEY) as { pairingId: string }).pairingId).toBe(pairingId);
  });

  it('the console refuses an extension whose proof is wrong', async () => {
    const key = crypto.getRandomValues(new Uint8Array(32));
    const { r, pairingId } = await seeded(key, key);
    const c = await rawClient(r.socketPath);
    c.send({ type: 'host-hello', callerOrigin: `chrome-extension://${EXT}/`, hostVersion: '0.1.0', pid: 1 });
    c.send({ type: 'hello', protocolVersion: PROTOCOL_VERSION, extensionId: EXT, extensionVersion: '0.1.0', pairingId });
    expect(await c.next('hello-ack')).toMatchObject({ paired: true });
    c.send({ type: 'auth-begin', pairingId, nonce: randomHex() });
    const ch = await c.next('auth-challenge');
    expect(ch.proof).toMatch(/^[0-9a-f]{64}$/);
    c.send({ type: 'auth-response', proof: 'f'.repeat(64) });
    expect(await c.next('error')).toMatchObject({ code: 'auth-failed' });
    await c.closedNow();
    expect(r.bridge.status()).toMatchObject({ state: 'refused', error: { code: 'auth-failed' } });
    expect(await r.bridge.request({ op: 'list-tabs' })).toMatchObject({ ok: false, error: { code: 'link-down' } });
  });

  it('an unknown pairing is told paired:false and must pair again (the person confirms)', async () => {
    const key = crypto.getRandomValues(new Uint8Array(32));
    const { r } = await seeded(key, key);
    await r.consoleStore.delete(PAIRING_SECRET_NAME);
    await r.bridge.stop();
    await r.startConsole(); // reload: console forgot the pairing (revoked)
    r.startExtension();
    // The extension still holds a key, so replacing it needs the popup's word too (test/unit/trust-link.test.ts).
    await r.until(() => r.bridge.status().state === 'awaiting-pairing' && r.link?.state().awaitingLocalConfirmation === true, 'codes on both sides');
    // Not a silent re-pairing: both sides say the old pairing no longer works.
    expect(r.bridge.status().problem?.code).toBe('pair-again');
    expect(r.link?.state().problem).toMatchObject({ code: 'pair-again', message: expect.stringMatching(/does not know this extension’s pairing/) });
    expect((await r.bridge.confirmPairing(true)).ok).toBe(true);
    r.link?.confirmPairing(true);
    await r.connected();
    expect(r.bridge.status().problem).toBeUndefined();
    expect(r.link?.state().problem).toBeUndefined();
  });

  it('a program that grabbed the socket cannot pose as the console: the extension detects it', async () => {
    // First a real pairing, so the extension holds a key.
    const r = await rig();
    await r.startConsole();
    await r.installHost();
    r.startExtension();
    await r.pair();
    r.link?.stop();
    await r.bridge.stop();

    // The impostor listens where the console would, and answers like a console that knows the pairing.
    const got: string[] = [];
    const fake = net.createServer((s) => {
      const dec = new FrameDecoder();
      s.on('error', () => {});
      s.on('data', (c: Buffer) => {
        for (const f of dec.push(c)) {
          const m = f.ok ? (f.value as { type: string }) : { type: 'bad' };
          got.push(m.type);
          if (m.type === 'hello') s.write(encodeFrame({ type: 'hello-ack', protocolVersion: PROTOCOL_VERSION, consoleVersion: '6.6.6', paired: true }));
          if (m.type === 'auth-begin') s.write(encodeFrame({ type: 'auth-challenge', nonce: randomHex(), proof: randomHex(32) }));
        }
      });
    });
    await new Promise<void>((res) => fake.listen(r.socketPath, () => res()));
    try {
      // The real console refuses to start next to it.
      expect(await r.startConsole()).toMatchObject({ ok: false, error: { code: 'console-already-running' } });
      r.startExtension();
      await r.until(() => r.link?.state().state === 'refused', 'extension refuses the impostor');
      expect(r.link?.state().error).toMatchObject({ code: 'auth-failed' });
      expect(r.link?.state().error?.message).toMatch(/posing as the console/);
      expect(got).toContain('auth-begin');
      expect(got).not.toContain('auth-response'); // the impostor never gets a proof to replay
      expect(r.extStorage.map.has(PAIRING_STORAGE_KEY)).toBe(true); // and cannot make us forget the key
    } finally {
      await new Promise<void>((res) => fake.close(() => res()));
    }
  });
});

describe('handshake checks', () => {
  it('an older extension (protocol 1) is told plainly, on both sides, to update the extension', async () => {
    const r = await rig();
    await r.startConsole();
    await r.installHost();
    r.startExtension({ protocolVersion: PROTOCOL_VERSION - 1 });
    await r.until(() => r.bridge.status().state === 'version-mismatch' && r.link?.state().state === 'version-mismatch', 'both mismatch');
    expect(r.bridge.status().error?.message).toMatch(new RegExp(`extension speaks link protocol v${PROTOCOL_VERSION - 1}, this console speaks v${PROTOCOL_VERSION}`));
    expect(r.bridge.status().problem).toMatchObject({ code: 'extension-outdated', message: expect.stringMatching(/^Update the Echo Console extension/) });
    // The extension (as a v2 one pretending to be v1 reads it): the console's error names the console's version.
    expect(r.link?.state().problem).toMatchObject({ code: 'extension-outdated' });
    expect(r.link?.state().error?.message).toMatch(/Update the Echo Console extension/);
    expect(r.link?.state().retryAt).toBeUndefined();
  });

  it('a newer extension is told, on both sides, that the console needs the update', async () => {
    const r = await rig();
    await r.startConsole();
    await r.installHost();
    r.startExtension({ protocolVersion: PROTOCOL_VERSION + 1 });
    await r.until(() => r.bridge.status().state === 'version-mismatch' && r.link?.state().state === 'version-mismatch', 'both mismatch');
    expect(r.bridge.status().error?.message).toMatch(new RegExp(`extension speaks link protocol v${PROTOCOL_VERSION + 1}, this console speaks v${PROTOCOL_VERSION}`));
    expect(r.bridge.status().problem?.code).toBe('console-outdated');
    expect(r.link?.state().problem?.code).toBe('console-outdated');
    expect(r.link?.state().error?.message).toMatch(new RegExp(`protocol v${PROTOCOL_VERSION + 1}.*v${PROTOCOL_VERSION}`));
    expect(r.link?.state().retryAt).toBeUndefined();
  });

  it('a console of protocol 1 (its version-mismatch names no version): the extension says "update Echo Console"', async () => {
    const r = await rig();
    await r.installHost();
    // Answers exactly as the v1 bridge did: error{code, message}, no protocolVersion.
    const fake = net.createServer((s) => {
      const dec = new FrameDecoder();
      s.on('error', () => {});
      s.on('data', (c: Buffer) => {
        for (const f of dec.push(c)) {
          const m = f.ok ? (f.value as { type: string; protocolVersion?: number }) : { type: 'bad' };
          if (m.type === 'hello') {
            s.end(encodeFrame({ type: 'error', code: 'version-mismatch', message: `Version mismatch: the extension speaks link protocol v${m.protocolVersion}, this console speaks v1. Update Echo Console and its extension to the same release.` }));
          }
        }
      });
    });
    await new Promise<void>((res) => fake.listen(r.socketPath, () => res()));
    try {
      r.startExtension();
      await r.until(() => r.link?.state().state === 'version-mismatch', 'the extension sees the mismatch');
      expect(r.link?.state().problem).toMatchObject({ code: 'console-outdated', message: expect.stringMatching(/^Update Echo Console/) });
      expect(r.link?.state().retryAt).toBeUndefined();
    } finally {
      await new Promise<void>((res) => fake.close(() => res()));
    }
  });

  it('an origin the console does not expect is refused', async () => {
    const r = await rig();
    await r.startConsole();
    await r.installHost([EXT, OTHER_EXT]);
    r.startExtension({ extensionId: OTHER_EXT });
    await r.until(() => r.link?.state().state === 'refused', 'refused');
    expect(r.link?.state().error?.code).toBe('origin-not-allowed');
    expect(r.audits[0]).toMatchObject({ kind: 'link-refused', code: 'origin-not-allowed', callerOrigin: `chrome-extension://${OTHER_EXT}/` });
  });

  it('Chrome itself refuses an extension the manifest does not allow, and a missing host is "not-installed"', async () => {
    const r = await rig();
    await r.startConsole();
    await r.installHost([OTHER_EXT]);
    r.startExtension();
    await r.until(() => r.link?.state().state === 'not-installed', 'not installed');
    expect(r.link?.state().error?.message).toMatch(/forbidden/);
    r.link?.stop();
    const r2 = await rig();
    await r2.startConsole();
    r2.startExtension(); // no manifest written
    await r2.until(() => r2.link?.state().state === 'not-installed', 'not installed');
    expect(r2.link?.state().error?.message).toMatch(/not found/);
    // The advice holds while the console runs: it registers the host at start, for the browsers present then.
    expect(r2.link?.state().error?.message).toContain(
      'Echo Console registers its native host when it starts. If this browser had never run before the console started, restart the console, then click Try again.',
    );
    expect(r2.link?.state().error?.message).not.toMatch(/Start Echo Console once/);
  });

  it('a hello naming another extension than Chrome reported is refused', async () => {
    const r = await rig();
    await r.startConsole();
    const c = await rawClient(r.socketPath);
    c.send({ type: 'host-hello', callerOrigin: `chrome-extension://${EXT}/`, hostVersion: '0.1.0', pid: 1 });
    c.send({ type: 'hello', protocolVersion: PROTOCOL_VERSION, extensionId: OTHER_EXT, extensionVersion: '0.1.0', pairingId: null });
    expect(await c.next('error')).toMatchObject({ code: 'origin-not-allowed' });
    await c.closedNow();
  });

  it('a malformed handshake message gets bad-message and the console stays up', async () => {
    const r = await rig();
    await r.startConsole();
    const c = await rawClient(r.socketPath);
    c.send({ type: 'host-hello', callerOrigin: `chrome-extension://${EXT}/`, hostVersion: '0.1.0', pid: 1 });
    c.send({ type: 'hello', protocolVersion: PROTOCOL_VERSION, extensionId: 'nope' });
    expect(await c.next('error')).toMatchObject({ code: 'bad-message' });
    await c.closedNow();
    const c2 = await rawClient(r.socketPath);
    c2.sendRaw(new Uint8Array([0xff, 0xff, 0xff, 0x7f])); // a 2 GB length header
    expect(await c2.next('error')).toMatchObject({ code: 'bad-message' });
    await c2.closedNow();
    // Still serving: a real extension pairs afterwards.
    await r.installHost();
    r.startExtension();
    await r.pair();
  });

  it('only one extension connection at a time', async () => {
    const r = await rig();
    await r.startConsole();
    await r.installHost();
    r.startExtension();
    await r.pair();
    const c = await rawClient(r.socketPath);
    c.send({ type: 'host-hello', callerOrigin: `chrome-extension://${EXT}/`, hostVersion: '0.1.0', pid: 1 });
    expect(await c.next('error')).toMatchObject({ code: 'already-connected' });
    await c.closedNow();
    expect(r.bridge.status().state).toBe('connected');
    expect(r.audits.filter((a) => a.kind === 'link-refused')).toHaveLength(1);

    // A second console probing the socket neither disturbs the link nor leaves a receipt.
    const second = await rig();
    expect(await second.startConsole({ socketPath: r.socketPath })).toMatchObject({ ok: false, error: { code: 'console-already-running' } });
    expect(r.bridge.status().state).toBe('connected');
    expect(r.audits.filter((a) => a.kind === 'link-refused')).toHaveLength(1);
    expect(await r.bridge.request({ op: 'list-tabs' })).toEqual({ ok: true, value: [] });
  });
});

describe('unpairing', () => {
  it('from the console: both sides forget the key, the extension waits for the person', async () => {
    const r = await rig();
    await r.startConsole();
    await r.installHost();
    r.startExtension();
    await r.pair();
    expect((await r.bridge.unpair()).ok).toBe(true);
    await r.until(() => r.link?.state().state === 'refused', 'extension unpaired');
    expect(r.link?.state()).toMatchObject({ paired: false, error: { code: 'unpaired' } });
    expect(r.extStorage.map.size).toBe(0);
    expect(r.bridge.status()).toMatchObject({ state: 'no-extension', paired: false });
    expect(await r.consoleStore.get(PAIRING_SECRET_NAME)).toBeNull();
    expect(r.audits.map((a) => a.kind)).toEqual(['paired', 'link-connected', 'link-disconnected', 'unpaired']);
    expect(await r.bridge.signGrant({} as never)).toMatchObject({ ok: false, error: { code: 'not-paired' } });
  });

  it('from the extension: the console forgets the key too', async () => {
    const r = await rig();
    await r.startConsole();
    await r.installHost();
    r.startExtension();
    await r.pair();
    await r.link?.unpair();
    await r.until(() => r.audits.some((a) => a.kind === 'unpaired'), 'console unpaired');
    expect(r.audits.find((a) => a.kind === 'unpaired')).toMatchObject({ by: 'extension' });
    expect(await r.consoleStore.get(PAIRING_SECRET_NAME)).toBeNull();
    expect(r.bridge.status().paired).toBe(false);
    expect(r.link?.state()).toMatchObject({ state: 'refused', paired: false, error: { code: 'unpaired' } });
    r.link?.retry();
    await r.pair(); // must pair again
  });
});

describe('the socket and the key file', () => {
  it('folder 0700, socket 0600, a stale socket is replaced, a non-socket file is left alone', async () => {
    const sub = path.join(dir, 'sockdir');
    const sockPath = path.join(sub, 'l.sock');
    // A stale socket: bound, then its server died without unlinking.
    await fs.mkdir(sub, { recursive: true, mode: 0o755 });
    await fs.chmod(sub, 0o755);
    const stale = net.createServer();
    await new Promise<void>((res) => stale.listen(sockPath, () => res()));
    // Keep the file, drop the listener: close() would unlink it, so copy the inode via a hard link first.
    await fs.link(sockPath, `${sockPath}.keep`);
    await new Promise<void>((res) => stale.close(() => res()));
    await fs.rename(`${sockPath}.keep`, sockPath);

    const r = await rig();
    const started = await r.startConsole({ socketPath: sockPath });
    expect(started.ok).toBe(true);
    expect((await fs.stat(sub)).mode & 0o777).toBe(0o700);
    expect((await fs.stat(sockPath)).mode & 0o777).toBe(0o600);
    await r.bridge.stop();

    const occupied = path.join(dir, 'plainfile.sock');
    await fs.writeFile(occupied, 'not a socket');
    const r2 = await rig();
    expect(await r2.startConsole({ socketPath: occupied })).toMatchObject({ ok: false, error: { code: 'socket-path-occupied' } });
    expect(await fs.readFile(occupied, 'utf8')).toBe('not a socket');

    const r3 = await rig();
    expect(await r3.startConsole({ socketPath: path.join(dir, 'x'.repeat(120)) })).toMatchObject({ ok: false, error: { code: 'socket-path-too-long' } });
  });

  it('FileSecretStore writes 0600 and fails closed on a file others can read or a corrupt one', async () => {
    const f = path.join(dir, 'secrets', 'link.json');
    const warnings: string[] = [];
    const s = new FileSecretStore(f, (m) => warnings.push(m));
    await s.set('a', 'b');
    expect((await fs.stat(f)).mode & 0o777).toBe(0o600);
    expect((await fs.stat(path.dirname(f))).mode & 0o777).toBe(0o700);
    expect(await s.get('a')).toBe('b');
    await fs.chmod(f, 0o644);
    expect(await s.get('a')).toBeNull();
    expect(warnings.join()).toMatch(/readable by other users/);
    await fs.writeFile(f, '{oops', { mode: 0o600 });
    await fs.chmod(f, 0o600);
    expect(await s.get('a')).toBeNull();
    await s.set('c', 'd');
    await s.delete('c');
    expect(await s.get('c')).toBeNull();
  });
});
