/**
 * Test harness for the link: the real console Bridge on a real Unix socket,
 * the real native host (bundled by vite.tools.config.ts into a temp folder and
 * started through the real launcher and host manifest), and the real
 * extension link core (extension/src/background/link.ts) in Node, with a
 * small "Chrome" that does what Chrome's native messaging does: read
 * `<user-data-dir>/NativeMessagingHosts/<name>.json`, check allowed_origins,
 * spawn the manifest's `path` with the caller origin as argument, and speak
 * length-prefixed JSON over its stdio.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { promises as fs, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { build } from 'vite';
import { Bridge, MemorySecretStore, type BridgeOptions, type LinkAuditEvent } from '../../src/main/core/bridge/index';
import { writeHostManifestForProfile } from '../../src/main/core/bridge/host-manifest';
import { encodeFrame, FrameDecoder } from '../../src/shared/framing';
import { NATIVE_HOST_NAME } from '../../src/shared/protocol';
import { ok, type Result } from '../../src/shared/result';
import type { ConsoleRequest } from '../../src/shared/protocol';
import { startLink, type ExtLink, type ExtLinkState, type LinkPort, type LinkStorage, type StartLinkOptions } from '../../extension/src/background/link';

export const EXT = 'abjcbldekikalfjmmiemkjeemkfphege';
export const OTHER_EXT = 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb';

/** Build the native host once per test file into `dir`; returns the script path. */
export async function buildHost(dir: string): Promise<string> {
  await build({
    configFile: path.resolve('vite.tools.config.ts'),
    logLevel: 'silent',
    build: { outDir: path.join(dir, 'tools'), emptyOutDir: true },
  });
  return path.join(dir, 'tools', 'native-host.mjs');
}

export async function tempDir(prefix = 'echo-link-'): Promise<string> {
  // Short: a Unix socket path must stay under ~100 bytes.
  return fs.mkdtemp(path.join(os.tmpdir(), prefix));
}

/** chrome.storage.local stand-in. */
export class MapStorage implements LinkStorage {
  readonly map = new Map<string, unknown>();
  async get(k: string): Promise<unknown> {
    return structuredClone(this.map.get(k));
  }
  async set(k: string, v: unknown): Promise<void> {
    this.map.set(k, structuredClone(v));
  }
  async remove(k: string): Promise<void> {
    this.map.delete(k);
  }
}

/** Chrome's native messaging, as far as the link can see it. */
export class FakeChrome {
  readonly children: ChildProcess[] = [];
  readonly exits: { pid: number; code: number | null; signal: NodeJS.Signals | null }[] = [];
  lastPort: (LinkPort & { child: ChildProcess }) | null = null;

  constructor(
    private readonly userDataDir: string,
    private readonly extensionId: string,
    private readonly changed: () => void = () => {},
  ) {}

  connectNative(name: string): LinkPort & { child: ChildProcess } {
    const messageListeners: ((m: unknown) => void)[] = [];
    const disconnectListeners: ((e?: string) => void)[] = [];
    let disconnected = false;
    const fireDisconnect = (error?: string): void => {
      if (disconnected) return;
      disconnected = true;
      queueMicrotask(() => disconnectListeners.forEach((l) => l(error)));
    };
    const origin = `chrome-extension://${this.extensionId}/`;
    const manifestPath = path.join(this.userDataDir, 'NativeMessagingHosts', `${name}.json`);
    let manifest: { path: string; allowed_origins: string[] } | null = null;
    try {
      manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
    } catch {
      manifest = null;
    }
    if (!manifest || !manifest.allowed_origins.includes(origin)) {
      fireDisconnect(manifest ? 'Access to the specified native messaging host is forbidden.' : 'Specified native messaging host not found.');
      const dead = { postMessage() {}, disconnect() {}, onMessage() {}, onDisconnect: (l: (e?: string) => void) => disconnectListeners.push(l), child: null as unknown as ChildProcess };
      return dead;
    }
    // Like Chrome: current directory = the host's folder, origin as the first argument.
    const child = spawn(manifest.path, [origin], { cwd: path.dirname(manifest.path), stdio: ['pipe', 'pipe', 'pipe'] });
    this.children.push(child);
    child.stderr?.on('data', () => {});
    const decoder = new FrameDecoder(1024 * 1024); // Chrome's 1 MB cap on host→browser messages
    child.stdout?.on('data', (chunk: Buffer) => {
      for (const f of decoder.push(chunk)) {
        if (!f.ok) {
          child.kill('SIGKILL');
          fireDisconnect('Error when communicating with the native messaging host.');
          return;
        }
        const v = f.value;
        queueMicrotask(() => messageListeners.forEach((l) => l(v)));
      }
    });
    child.stdin?.on('error', () => {});
    child.on('exit', (code, signal) => {
      this.exits.push({ pid: child.pid ?? -1, code, signal });
      fireDisconnect('Native host has exited.');
      this.changed();
    });
    const port = {
      child,
      postMessage: (m: unknown) => {
        if (disconnected) throw new Error('Attempting to use a disconnected port object');
        child.stdin?.write(encodeFrame(m, 64 * 1024 * 1024));
      },
      disconnect: () => {
        disconnected = true; // Chrome fires no onDisconnect for the side that disconnects
        child.stdin?.end();
        const t = setTimeout(() => child.kill('SIGKILL'), 2000);
        child.once('exit', () => clearTimeout(t));
      },
      onMessage: (l: (m: unknown) => void) => void messageListeners.push(l),
      onDisconnect: (l: (e?: string) => void) => void disconnectListeners.push(l),
    };
    this.lastPort = port;
    return port;
  }

  killAll(): void {
    for (const c of this.children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  }
}

export const quietLogger = { info: () => {}, warn: () => {} };

/** One console + one extension wired together, with an event-driven `until`. */
export class Rig {
  readonly events = new EventEmitter();
  readonly audits: LinkAuditEvent[] = [];
  readonly consoleStore = new MemorySecretStore();
  readonly extStorage: MapStorage;
  readonly extStates: ExtLinkState[] = [];
  readonly requests: { req: ConsoleRequest; signal: AbortSignal }[] = [];
  bridge!: Bridge;
  chrome!: FakeChrome;
  link: ExtLink | null = null;
  readonly socketPath: string;
  readonly profile: string;

  constructor(
    readonly dir: string,
    readonly hostScript: string,
    name: string,
    opts: { extStorage?: MapStorage } = {},
  ) {
    this.socketPath = path.join(dir, `${name}.sock`);
    this.profile = path.join(dir, `${name}-profile`);
    this.extStorage = opts.extStorage ?? new MapStorage();
    this.events.setMaxListeners(100);
  }

  changed = (): void => {
    this.events.emit('change');
  };

  async startConsole(over: Partial<BridgeOptions> = {}): Promise<Result<{ socketPath: string }>> {
    this.bridge = new Bridge({
      socketPath: this.socketPath,
      expectedExtensionIds: [EXT],
      secretStore: this.consoleStore,
      logger: quietLogger,
      onAudit: (e) => {
        this.audits.push(e);
        this.changed();
      },
      timing: { heartbeatIntervalMs: 200, heartbeatTimeoutMs: 3000 },
      ...over,
    });
    this.bridge.onStatus(this.changed);
    return this.bridge.start();
  }

  async installHost(extensionIds: string[] = [EXT]): Promise<void> {
    await writeHostManifestForProfile(this.profile, {
      extensionIds,
      hostScript: this.hostScript,
      socketPath: this.socketPath,
      nodePath: process.execPath,
    });
  }

  startExtension(over: Partial<StartLinkOptions> & { extensionId?: string } = {}): ExtLink {
    const extensionId = over.extensionId ?? EXT;
    this.chrome = new FakeChrome(this.profile, extensionId, this.changed);
    this.link = startLink({
      connect: () => this.chrome.connectNative(NATIVE_HOST_NAME),
      storage: this.extStorage,
      extensionId,
      extensionVersion: '0.1.0',
      logger: quietLogger,
      onRequest: async (req, ctx) => {
        this.requests.push({ req, signal: ctx.signal });
        this.changed();
        if (req.op === 'list-tabs') return ok([]);
        if (req.op === 'share-tab') return ok({ wrong: true }); // not a SharedTab
        if (req.op === 'list-shareable-tabs') {
          // Over the 1 MiB link cap: the link must answer too-large instead.
          const tab = { tabId: 1, windowId: 1, title: 'x'.repeat(600_000), url: 'u', origin: 'o', documentId: 'd', sharedAt: 0 };
          return ok([tab, tab]);
        }
        // Everything else waits until cancelled (a page tool that never settles).
        return new Promise<Result<unknown>>((resolve) =>
          ctx.signal.addEventListener('abort', () => {
            this.changed();
            resolve({ ok: true, value: { outcome: 'cancelled' } });
          }),
        );
      },
      onState: (s) => {
        this.extStates.push(s);
        this.changed();
      },
      timing: { heartbeatIntervalMs: 200, heartbeatTimeoutMs: 3000, backoffInitialMs: 50, backoffMaxMs: 400 },
      ...over,
    });
    return this.link;
  }

  /** Resolve once `pred()` holds, re-checking on every change either side reports. */
  until(pred: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = (): void => {
        let okNow = false;
        try {
          okNow = pred();
        } catch {
          okNow = false;
        }
        if (okNow) {
          clearTimeout(timer);
          this.events.off('change', check);
          resolve();
        }
      };
      const timer = setTimeout(() => {
        this.events.off('change', check);
        reject(
          new Error(
            `timed out waiting for ${what}; console=${JSON.stringify(this.bridge?.status())} ext=${JSON.stringify(this.link?.state())}`,
          ),
        );
      }, timeoutMs);
      this.events.on('change', check);
      check();
    });
  }

  /**
   * Pair from scratch as the person would: compare the codes, accept in the console AND in the
   * popup (issue 9 item 1: the extension keeps no key on the console's word alone), and wait
   * until both sides are connected.
   */
  async pair(): Promise<string> {
    await this.until(
      () => this.bridge.status().state === 'awaiting-pairing' && this.link?.state().state === 'awaiting-pairing' && this.link.state().awaitingLocalConfirmation === true,
      'pairing code',
    );
    const code = this.bridge.status().pairingCode as string;
    if (this.link?.state().pairingCode !== code) throw new Error(`the codes differ: console ${code}, extension ${this.link?.state().pairingCode}`);
    const r = await this.bridge.confirmPairing(true);
    if (!r.ok) throw new Error(r.error.message);
    this.link?.confirmPairing(true);
    await this.connected();
    return code;
  }

  async connected(): Promise<void> {
    await this.until(() => this.bridge.status().state === 'connected' && this.link?.state().state === 'connected', 'both connected');
  }

  async close(): Promise<void> {
    this.link?.stop();
    this.chrome?.killAll();
    await this.bridge?.stop();
  }
}
