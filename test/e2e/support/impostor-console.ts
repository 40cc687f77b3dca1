/**
 * A process posing as Echo Console on the link socket while the real console is
 * not running (issue 9 item 1, the audit's attack): a same-user program listens
 * on the console's socket, made to look like the console's (mode 0600 in the
 * private folder), so the native host Chrome starts relays to it. It speaks
 * the console's side of the link protocol with the project's own crypto and
 * never waits for anyone: it answers `pair-result{accepted:true}` the moment
 * the extension reveals its nonce ("the person confirmed"), and, if the
 * extension then proves the key, it lists every tab, shares the one it wants,
 * discovers its tools and runs one with a grant it signs itself.
 *
 * After its accept it sends one `ping`: the extension handles link messages in
 * order, so its `pong` proves the accept was handled (`acceptHandled`), a
 * barrier in place of a clock.
 */
import { chmodSync } from 'node:fs';
import net from 'node:net';
import { argumentsHash } from '../../../src/shared/canonical';
import { signGrant } from '../../../src/shared/grant';
import { encodeFrame, FrameDecoder } from '../../../src/shared/framing';
import { authProof, derivePairing, generateEphemeral, randomHex } from '../../../src/shared/pairing-crypto';
import { PROTOCOL_VERSION } from '../../../src/shared/protocol';
import type { DiscoveryResult, SharedTab } from '../../../src/shared/types';

/** What the impostor saw and got (read it from the test). */
export interface ImpostorConsole {
  /** The type of every frame it received, in order (`host-hello`, `hello`, `pair-begin`, …). */
  readonly got: string[];
  /** Answers the extension gave to its requests, by op. Empty unless the extension trusted it. */
  readonly answers: { op: string; result: unknown }[];
  /** True once it sent `pair-result{accepted:true}`. */
  readonly accepted: boolean;
  /** True once the extension answered the ping sent after the accept (it handled the accept). */
  readonly acceptHandled: boolean;
  close(): Promise<void>;
}

/**
 * Listen on `socketPath` as an impostor console for `extensionId`; `targetUrl`
 * is the page whose tab it shares and whose tool `toolName` it runs with
 * `args` once (and only if) the extension authenticates it.
 */
export async function startImpostorConsole(o: { socketPath: string; extensionId: string; targetUrl: string; toolName: string; args: Record<string, unknown> }): Promise<ImpostorConsole> {
  const got: string[] = [];
  const answers: { op: string; result: unknown }[] = [];
  const state = { accepted: false, acceptHandled: false };
  const sockets = new Set<net.Socket>();
  const server = net.createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => {});
    const dec = new FrameDecoder();
    const send = (m: unknown): void => void s.write(encodeFrame(m));
    let pairing: { own: Awaited<ReturnType<typeof generateEphemeral>>; nonce: string; extPub: string } | null = null;
    let key: Uint8Array | null = null;
    let pairingId = '';
    const pending = new Map<string, (result: unknown) => void>();
    const request = (req: Record<string, unknown>): Promise<{ ok: boolean; value?: unknown }> =>
      new Promise((resolve) => {
        const id = randomHex(8);
        pending.set(id, (result) => {
          answers.push({ op: String(req.op), result });
          resolve(result as { ok: boolean; value?: unknown });
        });
        send({ type: 'request', id, request: req });
      });
    async function attack(): Promise<void> {
      const tabs = await request({ op: 'list-shareable-tabs' });
      const tab = ((tabs.value ?? []) as SharedTab[]).find((t) => t.url.startsWith(o.targetUrl));
      if (!tab) return;
      await request({ op: 'share-tab', tabId: tab.tabId });
      await request({ op: 'list-tabs' });
      const d = await request({ op: 'discover', tabId: tab.tabId });
      const tool = (d.value as DiscoveryResult | undefined)?.tools.find((t) => t.name === o.toolName);
      if (!tool || !key || !tool.urlHash) return;
      const grant = await signGrant(
        {
          requestId: randomHex(16), faculty: 'webmcp-invoke', operation: 'invoke', tabId: tool.tabId, frameId: tool.frameId, documentId: tool.documentId,
          origin: tool.origin, urlHash: tool.urlHash, subjectHash: tool.descriptorHash, argumentsHash: await argumentsHash(o.args), nonce: randomHex(16), expiresAt: Date.now() + 30_000,
        },
        key,
      );
      await request({
        op: 'dispatch', faculty: 'webmcp-invoke', operation: 'invoke',
        target: { tabId: tool.tabId, frameId: tool.frameId, documentId: tool.documentId },
        subject: { toolName: tool.name, descriptorHash: tool.descriptorHash }, arguments: o.args, grant, timeoutMs: 10_000,
      });
    }
    let queue = Promise.resolve();
    s.on('data', (chunk: Buffer) => {
      for (const f of dec.push(chunk)) {
        if (!f.ok) continue;
        const m = f.value as Record<string, unknown>;
        got.push(String(m.type));
        queue = queue.then(async () => {
          if (m.type === 'ping') send({ type: 'pong', seq: m.seq });
          else if (m.type === 'pong' && m.seq === 424242) state.acceptHandled = true;
          else if (m.type === 'hello') send({ type: 'hello-ack', protocolVersion: PROTOCOL_VERSION, consoleVersion: '9.9.9', paired: false });
          else if (m.type === 'pair-begin') {
            pairing = { own: await generateEphemeral(), nonce: randomHex(), extPub: String(m.publicKey) };
            send({ type: 'pair-offer', publicKey: pairing.own.publicKey, nonce: pairing.nonce });
          } else if (m.type === 'pair-reveal' && pairing) {
            const secret = await derivePairing(pairing.own, pairing.extPub, {
              protocolVersion: PROTOCOL_VERSION, extensionId: o.extensionId, extPublicKey: pairing.extPub, extNonce: String(m.nonce), consolePublicKey: pairing.own.publicKey, consoleNonce: pairing.nonce,
            });
            key = secret.key;
            pairingId = randomHex();
            send({ type: 'pair-result', accepted: true, pairingId }); // "the person confirmed": nobody did
            state.accepted = true;
            send({ type: 'ping', seq: 424242 });
          } else if (m.type === 'auth-begin' && key) {
            const nonce = randomHex();
            const proof = await authProof(key, { role: 'console', protocolVersion: PROTOCOL_VERSION, extensionId: o.extensionId, pairingId: String(m.pairingId), extNonce: String(m.nonce), consoleNonce: nonce });
            send({ type: 'auth-challenge', nonce, proof });
          } else if (m.type === 'auth-response') {
            send({ type: 'auth-ok' });
            void attack();
          } else if (m.type === 'response') {
            pending.get(String(m.id))?.(m.result);
            pending.delete(String(m.id));
          }
        });
      }
    });
  });
  await new Promise<void>((res, rej) => {
    server.once('error', rej);
    server.listen(o.socketPath, () => res());
  });
  chmodSync(o.socketPath, 0o600); // looks like the console's socket: owner and mode checks pass
  return {
    got,
    answers,
    get accepted() {
      return state.accepted;
    },
    get acceptHandled() {
      return state.acceptHandled;
    },
    close: () =>
      new Promise<void>((res) => {
        for (const s of sockets) s.destroy();
        server.close(() => res());
      }),
  };
}
