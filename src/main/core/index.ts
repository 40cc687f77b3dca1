/**
 * The composition root of the console core (plain Node, no 'electron'):
 * `createConsoleCore(opts)` builds the ledger (dataDir/ledger.db), the settings
 * (dataDir/settings.json), the bridge to the extension, the broker and the MCP
 * endpoint, wires their events, and exposes the `ConsoleApi` (src/shared/ipc.ts)
 * that both hosts (Electron IPC, loopback web host) carry to the renderer.
 *
 * Every api method follows CONVENTIONS.md §2: validate the payload (ajv, one
 * schema per method, no extra properties), do the work, answer a Result, never
 * throw. Bad input gets a clear error and a `refused` receipt (faculty
 * `console`, actor person); the console stays up.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EXTENSION_ID } from '../../shared/extension-id';
import type { ConsoleApi, ConsoleEvent, ConsoleSettings, ConsoleSnapshot, EndpointInfo, LinkStatus } from '../../shared/ipc';
import type { Actor, Receipt, ReceiptInput } from '../../shared/receipt';
import { err, ok, toErrorInfo, type Result } from '../../shared/result';
import type { SharedTab } from '../../shared/types';
import { AgentEndpoint } from './agent';
import { validateApiPayload } from './api-payloads';
import { Bridge, FileSecretStore, defaultSocketPath, type LinkAuditEvent, type SecretStore } from './bridge';
import { repairHostManifests, type RepairReport } from './bridge/host-manifest';
import { Broker } from './broker';
import { Ledger } from './ledger';
import { ToolRouter, type PolicyRule } from './policy';
import type { ExtensionLink } from './ports';
import { SettingsStore } from './settings';

export type { ExtensionLink } from './ports';

/** Options of `createConsoleCore`. Only `dataDir` is required. */
export interface ConsoleCoreOptions {
  /** The console's data folder (ledger.db, settings.json, secrets). Created 0700 if missing. */
  dataDir: string;
  /** MCP port on 127.0.0.1, overriding settings.json for this run (0: any free port; tests). */
  mcpPort?: number;
  /** The bridge's Unix socket or named pipe (default: the platform default, src/native-host/socket-path.ts). */
  socketPath?: string;
  /** Where the pairing key lives (default: FileSecretStore at dataDir/secrets.json). */
  secretStore?: SecretStore;
  /** Extension ids allowed to connect (default: the fixed id from src/shared/extension-id.ts). */
  extensionIds?: readonly string[];
  /** Approval timeout for this run (ms), overriding settings.json (tests). */
  approvalTimeoutMs?: number;
  /** Sent with each invoke: after dispatch began, this long without a settle is outcome-unknown (ms). */
  dispatchTimeoutMs?: number;
  /** Extra local policy rules, checked before the settings file's rules. */
  policyRules?: PolicyRule[];
  /** The command line shown to the person for stdio MCP clients (default: `node <repo>/bin/echo-console-mcp.mjs --data-dir <dataDir>`). */
  stdioCommand?: string;
  /**
   * Write (or repair) the native messaging host launcher (in dataDir/native-host) and the
   * host manifests of the installed browsers at `start()`, so Chrome can start the host
   * that reaches this console's socket (docs/link.md, "The native host"). Without it the
   * extension finds no host. Failures are reported in `nativeHostReport`, never fatal.
   * Tests leave it out and write a manifest into their own browser profile instead.
   */
  nativeHost?: { hostScript: string; nodePath?: string | null; appExecutable?: string | null };
  /**
   * Origins of the console's own pages, e.g. the loopback web host's
   * `http://127.0.0.1:<port>` and `http://localhost:<port>`. A browser tab showing one
   * is never listed, shared, discovered or invoked for the agent (it shows the MCP
   * token and the approvals). A host that learns its port after creating the core
   * calls `setConsoleOrigins` instead. The MCP endpoint's own origin is added at start.
   */
  consoleOrigins?: readonly string[];
  /** UNIT TESTS ONLY: use this link instead of the real Bridge. */
  link?: ExtensionLink;
  /** Reported to the extension and to MCP clients. */
  consoleVersion?: string;
  logger?: { info(message: string, detail?: unknown): void; warn(message: string, detail?: unknown): void };
}

/** The running console core. */
export interface ConsoleCore {
  /** Listen on the link socket and the MCP port; writes the live endpoint into settings.json. */
  start(): Promise<void>;
  /** Stop both listeners, cancel pending approvals, close the ledger. Idempotent. */
  stop(): Promise<void>;
  /** The console API the hosts expose to the renderer. Never throws. */
  readonly api: ConsoleApi;
  /** Listen to pushed events; returns the unsubscribe function. */
  onEvent(listener: (e: ConsoleEvent) => void): () => void;
  /** The MCP endpoint as the person needs it (url is '' before start). */
  readonly endpoint: EndpointInfo;
  /** For tests and tools: the parts. */
  readonly ledger: Ledger;
  readonly broker: Broker;
  readonly link: ExtensionLink;
  readonly settings: SettingsStore;
  readonly agentEndpoint: AgentEndpoint;
  /** What `start()` did with the native host manifests (null without `opts.nativeHost`, or before start). */
  readonly nativeHostReport: RepairReport | null;
  /**
   * The console's own page origins, for a host that binds after creating the core (the
   * loopback web host). Replaces the origins set before (opts.consoleOrigins stays). A tab
   * at one of them that is shared right now is unshared at once.
   */
  setConsoleOrigins(origins: readonly string[]): void;
}

const PERSON: Actor = { kind: 'person' };

/**
 * Build the console core. Synchronous: opens the ledger and the settings file
 * (creating both on first run, with a fresh MCP token) and constructs the parts;
 * `start()` then listens.
 * @throws SettingsError for an invalid settings.json; the ledger's errors for an
 *   unusable ledger.db (LedgerFormatError, NativeBindingMissingError, SqliteError).
 */
export function createConsoleCore(opts: ConsoleCoreOptions): ConsoleCore {
  const log = opts.logger ?? { info: () => {}, warn: (m: string, d?: unknown) => console.warn(`[core] ${m}`, d ?? '') };
  const settings = SettingsStore.open(opts.dataDir, { ...(opts.mcpPort !== undefined ? { mcpPort: opts.mcpPort } : {}) });
  const ledger = new Ledger(join(opts.dataDir, 'ledger.db'));
  const listeners = new Set<(e: ConsoleEvent) => void>();
  const emit = (e: ConsoleEvent) => {
    for (const l of listeners) {
      try {
        l(e);
      } catch (x) {
        log.warn('event listener failed', toErrorInfo(x));
      }
    }
  };
  const receipt = (input: ReceiptInput): Receipt | null => {
    try {
      return ledger.append(input);
    } catch (e) {
      log.warn('could not write a receipt', { event: input.event, error: toErrorInfo(e) });
      return null;
    }
  };

  const socketPath = opts.socketPath ?? defaultSocketPath();
  const link: ExtensionLink =
    opts.link ??
    new Bridge({
      socketPath,
      expectedExtensionIds: opts.extensionIds ?? [EXTENSION_ID],
      secretStore: opts.secretStore ?? new FileSecretStore(join(opts.dataDir, 'secrets.json'), (m) => log.warn(m)),
      consoleVersion: opts.consoleVersion ?? '0.1.0',
      logger: log,
      onAudit: (e) => auditReceipt(e),
    });

  function auditReceipt(e: LinkAuditEvent): void {
    receipt(linkAuditReceipt(e));
  }

  const effectiveTimeout = () => opts.approvalTimeoutMs ?? settings.get().approvalTimeoutMs;
  const policy = new ToolRouter([...(opts.policyRules ?? []), ...settings.get().policyRules]);
  // The console's own pages: from the options, from the host (setConsoleOrigins), and the MCP endpoint's origin.
  let hostOrigins: readonly string[] = [];
  let endpointOrigins: readonly string[] = [];
  const consoleOrigins = () => [...(opts.consoleOrigins ?? []), ...hostOrigins, ...endpointOrigins];
  const broker = new Broker({
    link,
    receipts: ledger,
    policy,
    consoleOrigins: consoleOrigins(),
    approvalTimeoutMs: effectiveTimeout,
    ...(opts.dispatchTimeoutMs !== undefined ? { dispatchTimeoutMs: opts.dispatchTimeoutMs } : {}),
  });
  const agentEndpoint = new AgentEndpoint({
    broker,
    port: opts.mcpPort ?? settings.get().mcpPort,
    token: () => settings.get().token,
    serverInfo: { name: 'echo-console', version: opts.consoleVersion ?? '0.1.0' },
  });
  const stdioCommand = opts.stdioCommand ?? defaultStdioCommand(opts.dataDir);
  const endpoint = (): EndpointInfo => ({ url: agentEndpoint.url, token: settings.get().token, stdioCommand });
  const consoleSettings = (): ConsoleSettings => {
    const s = settings.get();
    return { approvalTimeoutMs: effectiveTimeout(), developerMode: s.developerMode };
  };

  // ---- wiring -------------------------------------------------------------------
  const unsubs: Array<() => void> = [];
  unsubs.push(ledger.onAppend((r) => emit({ kind: 'receipt', receipt: r })));
  unsubs.push(broker.approvals.onChange((approvals) => emit({ kind: 'approvals', approvals })));
  unsubs.push(
    broker.onSharedTabs((tabs, complete) => {
      recordSharing(tabs, complete);
      emit({ kind: 'shared-tabs', tabs });
    }),
  );
  let lastState: LinkStatus['state'] | null = null;
  unsubs.push(
    link.onStatus((s) => {
      emit({ kind: 'link', link: s });
      if (s.state === 'connected' && lastState !== 'connected') void refreshSharedTabs();
      lastState = s.state;
    }),
  );

  // ---- sharing receipts ---------------------------------------------------------------
  // The ONE place that writes tab-shared / tab-unshared: every new shared-tab list (the
  // extension's tabs-changed events, list-tabs answers after a (re)connect or for the
  // agent, the console's own share/unshare) is compared with the shares already
  // recorded. A share is one (tabId, sharedAt): the extension keeps sharedAt across
  // same-origin navigations and worker restarts, and a new share gets a new one. The
  // shares still open in the ledger seed the comparison, so a restarted console does
  // not record again the tabs the browser kept shared meanwhile.
  interface KnownShare {
    tabId: number;
    origin: string | null;
    documentId: string | null;
    /** Absent for shares recorded before sharedAt was kept in the receipt. */
    sharedAt?: number;
  }
  const known = openSharesFromLedger();
  /** Tabs the person is sharing or unsharing from the console right now: their receipts say via 'console'. */
  const consoleActions = new Set<number>();

  function openSharesFromLedger(): Map<number, KnownShare> {
    const open = new Map<number, KnownShare>();
    try {
      const rows = [...ledger.query({ event: 'tab-shared', limit: 500 }).receipts, ...ledger.query({ event: 'tab-unshared', limit: 500 }).receipts].sort((a, b) => a.seq - b.seq);
      for (const r of rows) {
        if (r.tabId === null) continue;
        if (r.event === 'tab-unshared') {
          open.delete(r.tabId);
          continue;
        }
        const sharedAt = (r.detail as { sharedAt?: unknown } | null)?.sharedAt;
        open.set(r.tabId, { tabId: r.tabId, origin: r.origin, documentId: r.documentId, ...(typeof sharedAt === 'number' ? { sharedAt } : {}) });
      }
    } catch (e) {
      log.warn('could not read the open shares from the ledger', toErrorInfo(e));
    }
    return open;
  }

  function recordSharing(tabs: SharedTab[], complete: boolean): void {
    const now = new Map(tabs.map((t) => [t.tabId, t]));
    const via = (tabId: number) => (consoleActions.has(tabId) ? 'console' : 'extension');
    for (const k of [...known.values()]) {
      const t = now.get(k.tabId);
      if (t && t.origin === k.origin && (k.sharedAt === undefined || k.sharedAt === t.sharedAt)) continue;
      // Before the extension's first whole list, only the console's own unshare proves a share ended.
      if (!t && !complete && !consoleActions.has(k.tabId)) continue;
      known.delete(k.tabId);
      receipt({ requestId: null, event: 'tab-unshared', faculty: 'console', actor: PERSON, tabId: k.tabId, origin: k.origin, documentId: k.documentId, detail: { via: via(k.tabId) } });
    }
    for (const t of tabs) {
      const k = known.get(t.tabId);
      if (k) {
        // The same share; a same-origin navigation only moved it to a new document.
        k.documentId = t.documentId || k.documentId;
        k.sharedAt ??= t.sharedAt;
        continue;
      }
      known.set(t.tabId, { tabId: t.tabId, origin: t.origin, documentId: t.documentId || null, sharedAt: t.sharedAt });
      receipt({
        requestId: null,
        event: 'tab-shared',
        faculty: 'console',
        actor: PERSON,
        tabId: t.tabId,
        origin: t.origin,
        documentId: t.documentId || null,
        detail: { via: via(t.tabId), sharedAt: t.sharedAt },
      });
    }
  }

  async function refreshSharedTabs(): Promise<Result<SharedTab[]>> {
    const r = await link.request({ op: 'list-tabs' }, { timeoutMs: 10_000 });
    if (r.ok) broker.setSharedTabs(r.value);
    return r;
  }

  // ---- the api ------------------------------------------------------------------

  /**
   * Validate (validateApiPayload: API_PAYLOAD_SCHEMAS of src/shared/api-schemas.ts, the
   * only place a payload is checked), run, answer; bad input and thrown errors become a
   * Result and a receipt.
   */
  function handler<K extends keyof ConsoleApi>(method: K, work: (p: Parameters<ConsoleApi[K]>[0]) => Promise<Result<unknown>> | Result<unknown>): ConsoleApi[K] {
    const refusedReceipt = (code: string, message: string) =>
      receipt({ requestId: null, event: 'refused', faculty: 'console', actor: PERSON, detail: { method, code, message: message.slice(0, 500) } });
    const fn = async (payload?: unknown) => {
      const checked = validateApiPayload(method, payload);
      if (!checked.ok) {
        refusedReceipt(checked.error.code, checked.error.message);
        return checked;
      }
      try {
        const r = await work(checked.value as Parameters<ConsoleApi[K]>[0]);
        if (!r.ok) refusedReceipt(r.error.code, r.error.message);
        return r;
      } catch (e) {
        const info = toErrorInfo(e);
        refusedReceipt(info.code, info.message);
        return err(info.code, info.message);
      }
    };
    return fn as unknown as ConsoleApi[K];
  }

  const api: ConsoleApi = {
    getSnapshot: handler('getSnapshot', (): Result<ConsoleSnapshot> =>
      ok({ approvals: broker.approvals.list(), link: link.status(), sharedTabs: broker.getSharedTabs(), endpoint: endpoint(), settings: consoleSettings() }),
    ),
    decideApproval: handler('decideApproval', (p) => broker.decide(p.requestId, p.decision, p.reason)),
    queryReceipts: handler('queryReceipts', (p) => {
      try {
        return ok(ledger.query(p));
      } catch (e) {
        return err('invalid-query', toErrorInfo(e).message);
      }
    }),
    // verifyAsync yields to the event loop between chunks: a million-receipt check
    // must not freeze the Electron main thread (and with it the approval dialog).
    verifyLedger: handler('verifyLedger', async () => ok(await ledger.verifyAsync())),
    confirmPairing: handler('confirmPairing', (p) => link.confirmPairing(p.accept)),
    unpair: handler('unpair', () => link.unpair()),
    // The console's own page is never offered, nor shared (the person would hand the agent the MCP token and the approvals).
    listShareableTabs: handler('listShareableTabs', async () => {
      const r = await link.request({ op: 'list-shareable-tabs' }, { timeoutMs: 10_000 });
      return r.ok ? ok(r.value.filter((t) => !broker.isConsoleTab(t))) : r;
    }),
    shareTab: handler('shareTab', async (p) => {
      const consoleTab = () => err('console-tab', `Tab ${p.tabId} shows the Echo Console itself; the console is never shared with the agent.`);
      const candidates = await link.request({ op: 'list-shareable-tabs' }, { timeoutMs: 10_000 });
      if (candidates.ok && candidates.value.some((t) => t.tabId === p.tabId && broker.isConsoleTab(t))) return consoleTab();
      consoleActions.add(p.tabId);
      try {
        const r = await link.request({ op: 'share-tab', tabId: p.tabId }, { timeoutMs: 10_000 });
        if (!r.ok) return r;
        if (broker.isConsoleTab(r.value)) {
          // It navigated to the console meanwhile: undo at once.
          await link.request({ op: 'unshare-tab', tabId: p.tabId }, { timeoutMs: 10_000 });
          return consoleTab();
        }
        // The receipt is written by recordSharing (via 'console'), once, whichever list reports the share first.
        broker.putSharedTab(r.value);
        return r;
      } finally {
        consoleActions.delete(p.tabId);
      }
    }),
    unshareTab: handler('unshareTab', async (p) => {
      consoleActions.add(p.tabId);
      try {
        const r = await link.request({ op: 'unshare-tab', tabId: p.tabId }, { timeoutMs: 10_000 });
        if (!r.ok) return r;
        broker.dropSharedTab(p.tabId);
        return ok(null);
      } finally {
        consoleActions.delete(p.tabId);
      }
    }),
    rotateToken: handler('rotateToken', async () => {
      settings.rotateToken();
      // The old token already fails at the next request; closing the sessions also ends their open streams.
      await agentEndpoint.closeSessions();
      receipt({ requestId: null, event: 'token-rotated', faculty: 'console', actor: PERSON, detail: {} });
      const info = endpoint();
      emit({ kind: 'endpoint', endpoint: info });
      return ok(info);
    }),
    updateSettings: handler('updateSettings', (p) => {
      const before = settings.get();
      settings.update(p);
      if (p.developerMode !== undefined && p.developerMode !== before.developerMode) {
        receipt({ requestId: null, event: p.developerMode ? 'developer-mode-on' : 'developer-mode-off', faculty: 'console', actor: PERSON, detail: {} });
      }
      const s = consoleSettings();
      emit({ kind: 'settings', settings: s });
      return ok(s);
    }),
  };

  let started = false;
  let stopped = false;
  let nativeHostReport: RepairReport | null = null;
  return {
    api,
    ledger,
    broker,
    link,
    settings,
    agentEndpoint,
    get endpoint() {
      return endpoint();
    },
    get nativeHostReport() {
      return nativeHostReport;
    },
    onEvent(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    setConsoleOrigins(origins) {
      hostOrigins = [...origins];
      broker.setConsoleOrigins(consoleOrigins());
    },
    async start() {
      if (started) return;
      if (stopped) throw new Error('this console core was stopped; create a new one');
      started = true;
      if (link instanceof Bridge) {
        const r = await link.start();
        if (!r.ok) throw Object.assign(new Error(`The extension link could not start (${r.error.code}): ${r.error.message}`), { code: r.error.code });
      }
      try {
        const { url } = await agentEndpoint.start();
        settings.update({ endpoint: { url, pid: process.pid, startedAt: Date.now() } });
        // The endpoint answers nothing without the token, but a tab on it is still the console's, not a page for the agent.
        const port = new URL(url).port;
        endpointOrigins = [`http://127.0.0.1:${port}`, `http://localhost:${port}`];
        broker.setConsoleOrigins(consoleOrigins());
      } catch (e) {
        if (link instanceof Bridge) await link.stop();
        throw e;
      }
      emit({ kind: 'endpoint', endpoint: endpoint() });
      if (opts.nativeHost && link instanceof Bridge) {
        try {
          nativeHostReport = await repairHostManifests({
            extensionIds: opts.extensionIds ?? [EXTENSION_ID],
            socketPath,
            launcherDir: join(opts.dataDir, 'native-host'),
            hostScript: opts.nativeHost.hostScript,
            nodePath: opts.nativeHost.nodePath ?? null,
            appExecutable: opts.nativeHost.appExecutable ?? null,
          });
          if (nativeHostReport.failed) log.warn('some native host manifests could not be written', nativeHostReport.items.filter((i) => i.action === 'failed'));
        } catch (e) {
          log.warn('could not write the native host manifests', toErrorInfo(e));
        }
      }
      if (link.status().state === 'connected') void refreshSharedTabs();
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      broker.dispose();
      for (const u of unsubs.splice(0)) u();
      await agentEndpoint.stop();
      if (link instanceof Bridge) await link.stop();
      try {
        if (started) settings.update({ endpoint: null });
      } catch (e) {
        log.warn('could not clear the endpoint from settings', toErrorInfo(e));
      }
      ledger.close();
    },
  };
}

/**
 * The receipt for one link event the bridge reports (its `onAudit` hook):
 * paired, pairing-rejected, unpaired, link-connected, link-disconnected, and a
 * `refused` receipt (faculty `link`) for a connection the bridge refused.
 */
export function linkAuditReceipt(e: LinkAuditEvent): ReceiptInput {
  const ext = (id?: string, version?: string): Actor => ({ kind: 'extension', ...(id ? { name: id } : {}), ...(version ? { version } : {}) });
  const base = { requestId: null, faculty: 'link' as const };
  switch (e.kind) {
    case 'paired':
      return { ...base, event: 'paired', actor: PERSON, detail: { extensionId: e.extensionId, pairingId: e.pairingId } };
    case 'pairing-rejected':
      return { ...base, event: 'pairing-rejected', actor: e.reason === 'person' ? PERSON : { kind: 'console' }, detail: { extensionId: e.extensionId, reason: e.reason } };
    case 'unpaired':
      return { ...base, event: 'unpaired', actor: e.by === 'person' ? PERSON : ext(e.extensionId), detail: { extensionId: e.extensionId, pairingId: e.pairingId, by: e.by } };
    case 'link-connected':
      return { ...base, event: 'link-connected', actor: ext(e.extensionId, e.extensionVersion), detail: { pairingId: e.pairingId } };
    case 'link-disconnected':
      return { ...base, event: 'link-disconnected', actor: ext(e.extensionId), detail: { reason: e.reason } };
    case 'link-refused':
      return { ...base, event: 'refused', actor: { kind: 'console' }, detail: { code: e.code, message: e.message, extensionId: e.extensionId ?? null, callerOrigin: e.callerOrigin ?? null } };
  }
}

/** `node <repo>/bin/echo-console-mcp.mjs --data-dir <dataDir>`, with the repo found from this module's location. */
function defaultStdioCommand(dataDir: string): string {
  const q = (s: string) => (/[\s"'\\$`]/.test(s) ? JSON.stringify(s) : s);
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 8; i++) {
    const bin = join(dir, 'bin', 'echo-console-mcp.mjs');
    if (existsSync(bin)) return `node ${q(bin)} --data-dir ${q(dataDir)}`;
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  return `echo-console-mcp --data-dir ${q(dataDir)}`;
}
