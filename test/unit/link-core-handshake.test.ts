/**
 * The two handshake transition functions (src/shared/link-core/handshake.ts)
 * driven against each other in memory: no socket, no timers, no adapters.
 * Messages go through a JSON round trip (as on the wire); crypto requests run
 * the real WebCrypto (runCrypto); timers fire only when a test says so.
 * Pairing, auth, a wrong proof, version skew both ways, a held key that may
 * only be replaced with the popup's word, and timeouts.
 */
import { describe, expect, it } from 'vitest';
import {
  consoleInit,
  consoleStep,
  extensionInit,
  extensionStep,
  runCrypto,
  type AcceptedPairing,
  type ConsoleEffect,
  type ConsoleEnv,
  type ConsoleInput,
  type ConsoleState,
  type ExtensionEffect,
  type ExtensionEnv,
  type ExtensionInput,
  type ExtensionState,
  type HandshakeTimer,
  type LinkError,
  type Step,
} from '../../src/shared/link-core';
import { randomHex } from '../../src/shared/pairing-crypto';
import { PROTOCOL_VERSION, type ConsoleToExtension, type ExtensionToConsole } from '../../src/shared/protocol';

const EXT = 'abjcbldekikalfjmmiemkjeemkfphege';

type Sent = { from: 'console'; msg: ConsoleToExtension } | { from: 'extension'; msg: ExtensionToConsole };

/** One console and one extension connection, wired in memory. */
class Duo {
  c!: ConsoleState;
  e!: ExtensionState;
  readonly cEnv: ConsoleEnv;
  readonly eEnv: ExtensionEnv;
  /** Everything each side put on the wire, in order. */
  readonly wire: Sent[] = [];
  readonly cEffects: ConsoleEffect[] = [];
  readonly eEffects: ExtensionEffect[] = [];
  cTimer: HandshakeTimer | null = null;
  eTimer: HandshakeTimer | null = null;
  cClosed: Extract<ConsoleEffect, { kind: 'close' }> | null = null;
  eClosed: Extract<ExtensionEffect, { kind: 'close' }> | null = null;
  /** What each side's key store holds. */
  cStored: AcceptedPairing | null = null;
  eStored: { pairingId: string; key: Uint8Array } | null = null;
  /** Which messages reach the other side (a test may cut one direction). */
  deliver = { toConsole: true, toExtension: true };
  private inbox: Array<{ to: 'console' | 'extension'; raw: unknown }> = [];

  constructor(o: { consoleVersion?: number; extensionVersion?: number; cHeld?: ConsoleEnv['held']; eHeld?: ExtensionEnv['held']} = {}) {
    this.cEnv = { version: o.consoleVersion ?? PROTOCOL_VERSION, consoleVersion: '1.0.0', held: o.cHeld ?? null, handshakeTimeoutMs: 10_000, pairingTimeoutMs: 120_000 };
    this.eEnv = {
      version: o.extensionVersion ?? PROTOCOL_VERSION,
      extensionId: EXT,
      extensionVersion: '1.0.0',
      held: o.eHeld ?? null,
      handshakeTimeoutMs: 15_000,
    };
  }

  /** host-hello accepted, extension port opened: both sides' first steps, then run to quiet. */
  async start(): Promise<void> {
    await this.applyC(consoleInit(`chrome-extension://${EXT}/`, this.cEnv));
    await this.applyE(extensionInit(this.eEnv));
    await this.settle();
  }

  async console(input: ConsoleInput): Promise<void> {
    await this.applyC(consoleStep(this.c, input, this.cEnv));
    await this.settle();
  }

  async extension(input: ExtensionInput): Promise<void> {
    await this.applyE(extensionStep(this.e, input, this.eEnv));
    await this.settle();
  }

  /** Fire whichever deadline the side has armed. */
  async expire(side: 'console' | 'extension'): Promise<void> {
    const t = side === 'console' ? this.cTimer : this.eTimer;
    if (!t) throw new Error(`${side} has no timer armed`);
    if (side === 'console') await this.console({ kind: 'timer', timer: t });
    else await this.extension({ kind: 'timer', timer: t });
  }

  /** Deliver queued messages until nothing moves. */
  async settle(): Promise<void> {
    for (let guard = 0; this.inbox.length > 0; guard++) {
      if (guard > 200) throw new Error('the handshake does not settle');
      const { to, raw } = this.inbox.shift()!;
      if (to === 'console') await this.applyC(consoleStep(this.c, { kind: 'received', raw }, this.cEnv));
      else await this.applyE(extensionStep(this.e, { kind: 'received', raw }, this.eEnv));
    }
  }

  sent(from: 'console' | 'extension'): string[] {
    return this.wire.filter((w) => w.from === from).map((w) => w.msg.type);
  }

  view(): Record<string, unknown> {
    const v: Record<string, unknown> = {};
    for (const e of this.eEffects) if (e.kind === 'view') Object.assign(v, e.patch);
    return v;
  }

  status(): Record<string, unknown> {
    const v: Record<string, unknown> = {};
    for (const e of this.cEffects) if (e.kind === 'status') Object.assign(v, e.patch);
    return v;
  }

  audits(): string[] {
    return this.cEffects.flatMap((e) => (e.kind === 'audit' ? [e.event.kind] : []));
  }

  private async applyC(out: Step<ConsoleState, ConsoleToExtension, ConsoleEffect>): Promise<void> {
    this.c = out.state;
    for (const m of out.send) {
      this.wire.push({ from: 'console', msg: m });
      if (this.deliver.toExtension && !this.cClosed) this.inbox.push({ to: 'extension', raw: JSON.parse(JSON.stringify(m)) });
    }
    for (const e of out.effects) {
      this.cEffects.push(e);
      if (e.kind === 'arm') this.cTimer = e.timer;
      if (e.kind === 'disarm') this.cTimer = null;
      if (e.kind === 'close') this.cClosed = e;
      if (e.kind === 'crypto') await this.applyC(consoleStep(this.c, { kind: 'crypto', result: await runCrypto(e.req) }, this.cEnv));
      if (e.kind === 'store') {
        this.cStored = e.pairing;
        this.cEnv.held = { pairingId: e.pairing.pairingId, extensionId: e.pairing.extensionId, key: e.pairing.key };
        await this.applyC(consoleStep(this.c, { kind: 'stored', ok: true }, this.cEnv));
      }
    }
  }

  private async applyE(out: Step<ExtensionState, ExtensionToConsole, ExtensionEffect>): Promise<void> {
    this.e = out.state;
    for (const m of out.send) {
      this.wire.push({ from: 'extension', msg: m });
      if (this.deliver.toConsole && !this.eClosed) this.inbox.push({ to: 'console', raw: JSON.parse(JSON.stringify(m)) });
    }
    for (const e of out.effects) {
      this.eEffects.push(e);
      if (e.kind === 'arm') this.eTimer = e.timer;
      if (e.kind === 'disarm') this.eTimer = null;
      if (e.kind === 'close') this.eClosed = e;
      if (e.kind === 'crypto') await this.applyE(extensionStep(this.e, { kind: 'crypto', result: await runCrypto(e.req) }, this.eEnv));
      if (e.kind === 'store') {
        this.eStored = { pairingId: e.pairingId, key: e.key };
        this.eEnv.held = this.eStored;
        await this.applyE(extensionStep(this.e, { kind: 'stored', ok: true }, this.eEnv));
      }
    }
  }
}

const confirm = (accept: boolean): ConsoleInput => ({ kind: 'confirm', accept, pairingId: randomHex(), now: 1 });
const errorOf = (c: { error?: LinkError } | null): LinkError | undefined => c?.error;

/** A pairing both sides hold (made earlier). */
function heldPair(key = crypto.getRandomValues(new Uint8Array(32)), otherKey = key) {
  const pairingId = randomHex();
  return { cHeld: { pairingId, extensionId: EXT, key }, eHeld: { pairingId, key: otherKey } };
}

describe('pairing, side by side', () => {
  it('a fresh extension pairs: the same code on both sides, the person confirms in the console and in the popup, both store the same key, then auth completes', async () => {
    const d = new Duo();
    await d.start();
    expect(d.c.phase).toBe('pair-confirm');
    expect(d.e.phase).toBe('pair-revealed');
    const code = d.status().pairingCode as string;
    expect(code).toMatch(/^\d{3} \d{3}$/);
    expect(d.view()).toMatchObject({ state: 'awaiting-pairing', pairingCode: code });
    expect(d.view().awaitingLocalConfirmation).toBe(true); // even with nothing held (issue 9 item 1)
    expect(d.sent('extension')).toEqual(['hello', 'pair-begin', 'pair-reveal']);
    expect(d.sent('console')).toEqual(['hello-ack', 'pair-offer']);
    expect(d.cStored).toBeNull();

    await d.console(confirm(true));
    expect(d.e.phase).toBe('pair-revealed');
    await d.extension({ kind: 'confirm', accept: true });
    expect(d.c.phase).toBe('ready');
    expect(d.e.phase).toBe('ready');
    expect(d.cStored?.key).toEqual(d.eStored?.key);
    expect(d.cStored?.pairingId).toBe(d.eStored?.pairingId);
    // The console stores only after the extension proved the new key: auth-response comes before the store.
    expect(d.sent('extension').slice(-2)).toEqual(['auth-begin', 'auth-response']);
    expect(d.sent('console').slice(-3)).toEqual(['pair-result', 'auth-challenge', 'auth-ok']);
    expect(d.audits()).toEqual(['paired', 'link-connected']);
    expect(d.status()).toMatchObject({ state: 'connected' });
    expect(d.view()).toMatchObject({ state: 'connected' });
  });

  it('the person rejecting the code ends it on both sides and stores nothing', async () => {
    const d = new Duo();
    await d.start();
    await d.console(confirm(false));
    expect(d.cClosed).toMatchObject({ reason: 'pairing-rejected', state: 'refused' });
    expect(errorOf(d.eClosed)?.code).toBe('pairing-rejected');
    expect(d.cStored).toBeNull();
    expect(d.eStored).toBeNull();
    expect(d.audits()).toEqual(['pairing-rejected']);
  });

  it('an unpaired extension keeps the key only after the popup confirms too: the console\'s accept alone stores, proves and serves nothing (issue 9 item 1)', async () => {
    const d = new Duo();
    await d.start();
    expect(d.view().awaitingLocalConfirmation).toBe(true);
    await d.console(confirm(true));
    expect(d.e.phase).toBe('pair-revealed');
    expect(d.eStored).toBeNull();
    expect(d.sent('extension')).not.toContain('auth-begin');
    await d.extension({ kind: 'confirm', accept: true });
    expect(d.e.phase).toBe('ready');
    expect(d.c.phase).toBe('ready');
  });
});

describe('auth, side by side', () => {
  it('a held pairing authenticates without pairing: the console proves first', async () => {
    const d = new Duo(heldPair());
    await d.start();
    expect(d.c.phase).toBe('ready');
    expect(d.e.phase).toBe('ready');
    const order = d.wire.map((w) => `${w.from}:${w.msg.type}`);
    expect(order.indexOf('console:auth-challenge')).toBeLessThan(order.indexOf('extension:auth-response'));
    expect(d.audits()).toEqual(['link-connected']);
    expect(d.cStored).toBeNull(); // nothing re-stored
  });

  it('a wrong key: the extension refuses the console\'s proof, never sends its own, and both say "pair again"', async () => {
    const d = new Duo(heldPair(crypto.getRandomValues(new Uint8Array(32)), crypto.getRandomValues(new Uint8Array(32))));
    await d.start();
    expect(d.sent('extension')).not.toContain('auth-response');
    expect(errorOf(d.eClosed)).toMatchObject({ code: 'auth-failed', message: expect.stringMatching(/posing as the console/), problem: { code: 'pair-again' } });
    expect(d.cClosed).toMatchObject({ reason: 'auth-failed', state: 'refused', error: { code: 'auth-failed', problem: { code: 'pair-again' } } });
    expect(d.audits()).toEqual(['link-refused']);
  });

  it('the console refuses a wrong extension proof', async () => {
    const h = heldPair();
    const d = new Duo(h);
    d.deliver.toConsole = false; // the test plays the extension towards the console
    await d.start();
    await d.console({ kind: 'received', raw: { type: 'hello', protocolVersion: PROTOCOL_VERSION, extensionId: EXT, extensionVersion: '1', pairingId: h.cHeld.pairingId } });
    await d.console({ kind: 'received', raw: { type: 'auth-begin', pairingId: h.cHeld.pairingId, nonce: randomHex() } });
    expect(d.c.phase).toBe('auth-challenged');
    await d.console({ kind: 'received', raw: { type: 'auth-response', proof: 'f'.repeat(64) } });
    expect(d.cClosed).toMatchObject({ reason: 'auth-failed', error: { code: 'auth-failed', problem: { code: 'pair-again' } } });
    expect(d.wire.at(-1)).toMatchObject({ from: 'console', msg: { type: 'error', code: 'auth-failed' } });
  });
});

describe('a held key is replaced only with the popup\'s word', () => {
  it('a console that answers paired:false makes the extension ask the popup and say "pair again"; the old key stays until then', async () => {
    const old = heldPair();
    const d = new Duo({ eHeld: old.eHeld }); // the console lost its key (or is an impostor)
    await d.start();
    expect(d.view()).toMatchObject({ state: 'awaiting-pairing', awaitingLocalConfirmation: true, problem: { code: 'pair-again' } });
    expect(d.status().problem).toMatchObject({ code: 'pair-again' });
    await d.console(confirm(true));
    expect(d.eStored).toBeNull(); // not replaced yet
    expect(d.eEnv.held).toBe(old.eHeld);
    expect(d.c.phase).toBe('await-auth');
    await d.extension({ kind: 'confirm', accept: true });
    expect(d.e.phase).toBe('ready');
    expect(d.eStored?.pairingId).not.toBe(old.eHeld.pairingId);
    expect(d.view().problem).toBeUndefined();
  });

  it('"They differ" in the popup ends it, keeps the old key, and the console records the rejection', async () => {
    const old = heldPair();
    const d = new Duo({ eHeld: old.eHeld });
    await d.start();
    await d.console(confirm(true));
    await d.extension({ kind: 'confirm', accept: false });
    expect(errorOf(d.eClosed)?.code).toBe('pairing-rejected');
    expect(d.cClosed).toMatchObject({ reason: 'pairing-rejected' });
    expect(d.cEffects).toContainEqual({ kind: 'audit', event: { kind: 'pairing-rejected', extensionId: EXT, reason: 'extension' } });
    expect(d.eStored).toBeNull();
    expect(d.cStored).toBeNull();
  });
});

describe('version skew', () => {
  it('an extension speaking protocol 1: the console says "update the extension", and so does the extension', async () => {
    const d = new Duo({ extensionVersion: 1 });
    await d.start();
    expect(d.cClosed).toMatchObject({ state: 'version-mismatch', error: { code: 'version-mismatch', problem: { code: 'extension-outdated' } } });
    expect(d.cClosed?.error?.problem?.message).toMatch(/^Update the Echo Console extension/);
    expect(d.wire.find((w) => w.from === 'console')?.msg).toMatchObject({ type: 'error', code: 'version-mismatch', protocolVersion: PROTOCOL_VERSION });
    expect(errorOf(d.eClosed)?.problem).toMatchObject({ code: 'extension-outdated' });
    expect(d.audits()).toEqual(['link-refused']);
  });

  it('a console of protocol 1 (it answers version-mismatch without naming its version): the extension says "update Echo Console"', async () => {
    const d = new Duo();
    d.deliver.toExtension = false;
    await d.start();
    await d.extension({ kind: 'received', raw: { type: 'error', code: 'version-mismatch', message: 'Version mismatch: the extension speaks link protocol v2, this console speaks v1.' } });
    expect(errorOf(d.eClosed)).toMatchObject({ code: 'version-mismatch', problem: { code: 'console-outdated' } });
    expect(errorOf(d.eClosed)?.problem?.message).toMatch(/^Update Echo Console/);
  });

  it('a hello-ack of another version is refused by the extension, naming which side is older', async () => {
    const newerConsole = new Duo({ consoleVersion: PROTOCOL_VERSION + 1 });
    await newerConsole.start();
    expect(newerConsole.cClosed?.error?.problem?.code).toBe('extension-outdated');
    expect(errorOf(newerConsole.eClosed)?.problem?.code).toBe('extension-outdated');
    const d = new Duo();
    d.deliver.toExtension = false;
    await d.start();
    await d.extension({ kind: 'received', raw: { type: 'hello-ack', protocolVersion: PROTOCOL_VERSION + 1, consoleVersion: '9', paired: false, extra: 1 } });
    expect(errorOf(d.eClosed)).toMatchObject({ code: 'version-mismatch', problem: { code: 'extension-outdated' } });
    expect(d.wire.at(-1)).toMatchObject({ from: 'extension', msg: { type: 'error', code: 'version-mismatch', protocolVersion: PROTOCOL_VERSION } });
  });
});

describe('timeouts', () => {
  it('nobody confirms the code: the console says pairing-timeout, records it, and the extension stops', async () => {
    const d = new Duo();
    await d.start();
    expect(d.cTimer).toBe('pairing');
    await d.expire('console');
    expect(d.cClosed).toMatchObject({ reason: 'pairing-timeout', state: 'no-extension' });
    expect(d.audits()).toEqual(['pairing-rejected']);
    expect(errorOf(d.eClosed)?.code).toBe('pairing-timeout');
  });

  it('a console that never answers hello: the extension gives up with handshake-timeout', async () => {
    const d = new Duo();
    d.deliver.toConsole = false;
    await d.start();
    expect(d.eTimer).toBe('handshake');
    await d.expire('extension');
    expect(errorOf(d.eClosed)?.code).toBe('handshake-timeout');
  });

  it('an extension that stops mid-handshake: the console times out and shows no extension', async () => {
    const d = new Duo();
    d.deliver.toConsole = false;
    await d.start();
    expect(d.cTimer).toBe('handshake');
    await d.expire('console');
    expect(d.cClosed).toMatchObject({ reason: 'handshake-timeout', state: 'no-extension' });
  });

  it('a dropped link while the person decides is recorded as link-dropped', async () => {
    const d = new Duo();
    await d.start();
    await d.console({ kind: 'drop', reason: 'host-disconnected' });
    expect(d.cEffects).toContainEqual({ kind: 'audit', event: { kind: 'pairing-rejected', extensionId: EXT, reason: 'link-dropped' } });
  });
});
