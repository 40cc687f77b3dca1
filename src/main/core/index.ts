/**
 * The composition root of the console core (plain Node, no 'electron'):
 * `createConsoleCore(opts)` builds the ledger (dataDir/ledger.db), the settings
 * (dataDir/settings.json), the bridge to the extension, the broker and the MCP
 * endpoint, wires their events, and exposes the `ConsoleApi` (src/shared/ipc.ts)
 * that both hosts (Electron IPC, loopback web host) carry to the renderer.
 *
 * Every api method follows docs/design.md, "Conventions" §2: validate the payload (ajv, one
 * schema per method, no extra properties), do the work, answer a Result, never
 * throw. Bad input gets a clear error and a `refused` receipt (faculty
 * `console`, actor person); the console stays up.
 */
import type { AgentQuotaLimits } from './agent/quotas';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EXTENSION_ID } from '../../shared/extension-id';
import { DEVELOPER_MODE_IDLE_MINUTES } from '../../shared/limits';
import type { AgentTokenInfo, ConsoleApi, ConsoleEvent, ConsoleSettings, EndpointInfo, LinkStatus } from '../../shared/ipc';
import { agentSocketPath } from '../data-dir.mjs';
import type { Actor, Receipt, ReceiptInput } from '../../shared/receipt';
import { toErrorInfo, type Result } from '../../shared/result';
import type { SharedTab } from '../../shared/types';
import type { ConnectionLimits } from './net-guard';
import { secureFolder, tightenFile } from './data-folder';
import { AgentEndpoint } from './agent';
import { createConsoleApi } from './api';
import { DeveloperMode, type IdleTimer } from './developer-mode';
import { pageRunScript } from './agent/tools/page-run-script';
import { createPolicyApi } from './api/policy';
import { Bridge, FileSecretStore, defaultSocketPath, type LinkAuditEvent, type SecretStore } from './bridge';
import { repairHostManifests, type RepairReport } from './bridge/host-manifest';
import { Broker } from './broker';
import { recoverAtStart } from './broker/recovery';
import { Ledger, type LedgerSigningKey } from './ledger';
import { FileLedgerKeyHolder, defaultLedgerKeyFile, type LedgerKeyHolder } from './ledger/key-holder';
import { WitnessRelay } from './witness';
import { LedgerTasks } from './ledger-tasks';
import { ToolRouter, type PolicyRule } from './policy';
import type { ExtensionLink } from './ports';
import { batchReceiptEvents } from './receipt-events';
import { Turns } from './turns';
import { SETTINGS_FILE, SettingsStore } from './settings';
import type { TrustedInputGate } from './trusted-input';
import { Inspector } from './inspector';

/** How many times one console-state the extension did not take is sent again (after 1, 2, 4, 8, 16 s). */
const STATE_RETRIES = 5;

export type { ExtensionLink } from './ports';

/** Options of `createConsoleCore`. Only `dataDir` is required. */
export interface ConsoleCoreOptions {
  /** The console's data folder (ledger.db, settings.json, secrets). Created 0700 if missing. */
  dataDir: string;
  /** MCP port on 127.0.0.1, overriding settings.json for this run (0: any free port; tests). */
  mcpPort?: number;
  /** The MCP endpoint's connection limits (default CONNECTION_LIMITS, ./net-guard.ts); tests pass small ones. */
  mcpConnectionLimits?: Partial<ConnectionLimits>;
  /** Per-agent-token limits (default AGENT_QUOTA_LIMITS, ./agent/quotas.ts: rates, sessions, pending approvals); tests pass small ones. */
  agentQuotas?: Partial<AgentQuotaLimits>;
  /** The bridge's Unix socket or named pipe (default: the platform default, src/native-host/socket-path.ts). */
  socketPath?: string;
  /**
   * The private agent socket the stdio command reaches (default: agentSocketPath(dataDir),
   * src/main/data-dir.mjs, which is where the command looks). Tests may pass another.
   */
  agentSocketPath?: string;
  /** Where the pairing key lives (default: FileSecretStore at dataDir/secrets.json). */
  secretStore?: SecretStore;
  /**
   * Where the ledger's checkpoint signing key lives, outside the data folder (docs/ledger.md,
   * "Signed checkpoints"). Default: a 0600 file at `defaultLedgerKeyFile(dataDir)`; the
   * Electron host passes its safeStorage holder (src/main/ledger-key.ts). A key that cannot
   * be used is logged and the console runs without signing; its verify then says so.
   */
  ledgerKeyHolder?: LedgerKeyHolder;
  /** Extension ids allowed to connect (default: the fixed id from src/shared/extension-id.ts). */
  extensionIds?: readonly string[];
  /** Approval timeout for this run (ms), overriding settings.json (tests). */
  approvalTimeoutMs?: number;
  /** Sent with each invoke: after dispatch began, this long without a settle is outcome-unknown (ms). */
  /** How long a form without toolautosubmit waits for the person's submit after approval (ms; default 5 min, broker/pipeline.ts FORM_WAIT_TIMEOUT_MS). */
  formWaitTimeoutMs?: number;
  /** How often an agent waiting on such a form gets a progress notification (ms, default 10 s). */
  progressIntervalMs?: number;
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
  /**
   * The host's trusted-input gate (./trusted-input.ts, trust rule 19): the Electron host
   * passes one fed by the console window's real input events. Default
   * RENDERER_ATTESTED_GATE: decisions on the renderer's word, developer mode on refused.
   */
  inputGate?: TrustedInputGate;
  /** Arms developer mode's idle timer (default setTimeout); tests inject their clock. */
  developerModeTimer?: (fn: () => void, ms: number) => IdleTimer;
  /** UNIT TESTS ONLY: use this link instead of the real Bridge. */
  link?: ExtensionLink;
  /** Reported to the extension and to MCP clients. */
  consoleVersion?: string;
  logger?: { info(message: string, detail?: unknown): void; warn(message: string, detail?: unknown): void };
  /**
   * The console's clock (ms since the epoch) for the ledger's receipt times and retention
   * (default Date.now). Tests inject one to drive retention without waiting days.
   */
  now?: () => number;
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
  /** The MCP endpoint as the person needs it (url is '' before start). Holds no token secret. */
  readonly endpoint: EndpointInfo;
  /** The agents' tokens as the console shows them (no secrets). */
  agentTokens(): AgentTokenInfo[];
  /** For tests and tools: the parts. */
  readonly ledger: Ledger;
  /** Verify, export and retention runs (./ledger-tasks.ts). */
  readonly ledgerTasks: LedgerTasks;
  readonly witness: WitnessRelay;
  readonly broker: Broker;
  readonly link: ExtensionLink;
  readonly settings: SettingsStore;
  readonly agentEndpoint: AgentEndpoint;
  /** The tool inspector (./inspector.ts). */
  readonly inspector: Inspector;
  /** Developer mode (never persisted); the Electron host calls `touch()` on each press of the person's. */
  readonly developerMode: DeveloperMode;
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
 * (creating both on first run; no agent token until the person creates one) and constructs the parts;
 * `start()` then listens.
 * @throws DataFolderError for a data folder another user owns or can replace
 *   (./data-folder.ts); SettingsError for an invalid settings.json; the ledger's
 *   errors for an unusable ledger.db (LedgerFormatError, NativeBindingMissingError, SqliteError).
 */
export function createConsoleCore(opts: ConsoleCoreOptions): ConsoleCore {
  const log = opts.logger ?? { info: () => {}, warn: (m: string, d?: unknown) => console.warn(`[core] ${m}`, d ?? '') };
  // The folder holds the token, the secrets, the ledger and the launcher Chrome runs as the
  // person: refuse one another user owns, repair one we own but left open (./data-folder.ts).
  for (const r of secureFolder(opts.dataDir)) log.warn(`data folder repaired: ${r}`);
  const settings = SettingsStore.open(opts.dataDir, { ...(opts.mcpPort !== undefined ? { mcpPort: opts.mcpPort } : {}) });
  const ledgerFile = join(opts.dataDir, 'ledger.db');
  let signing: { key: LedgerSigningKey; created: boolean } | null = null;
  let keyProblem: string | null = null;
  try {
    const holder = opts.ledgerKeyHolder ?? new FileLedgerKeyHolder(defaultLedgerKeyFile(opts.dataDir), opts.dataDir);
    signing = holder.load();
    log.info(`ledger checkpoints are signed with a key kept ${holder.description}`);
  } catch (e) {
    keyProblem = toErrorInfo(e).message;
    log.warn(`the ledger's signing key cannot be used, so no checkpoint is signed: ${keyProblem}`);
  }
  const now = opts.now ?? Date.now;
  const ledger = new Ledger(ledgerFile, { ...(signing ? { signingKey: signing.key, signingKeyCreated: signing.created } : {}), ...(opts.now ? { now: opts.now } : {}) });
  // Fail closed, and say so: a file that fails its checkpoint check is never signed over (docs/ledger.md).
  const held = ledger.signing()?.held;
  if (held) log.warn(`the ledger fails its checkpoint check, so this console signs no new checkpoint (Verify ledger names what failed): ${held}`);
  // SQLite creates its files with the umask's mode (0644): receipts are the person's alone.
  for (const f of [ledgerFile, `${ledgerFile}-wal`, `${ledgerFile}-shm`]) {
    const r = tightenFile(f);
    if (r) log.info(`data folder: ${r}`);
  }
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
  // Agents' work yields to the person's console: one piece per pass of the event loop (./turns.ts).
  const turns = new Turns();
  const broker = new Broker({
    link,
    receipts: ledger,
    turns,
    policy,
    consoleOrigins: consoleOrigins(),
    approvalTimeoutMs: effectiveTimeout,
    ...(opts.dispatchTimeoutMs !== undefined ? { dispatchTimeoutMs: opts.dispatchTimeoutMs } : {}),
    ...(opts.formWaitTimeoutMs !== undefined ? { formWaitTimeoutMs: opts.formWaitTimeoutMs } : {}),
    ...(opts.progressIntervalMs !== undefined ? { progressIntervalMs: opts.progressIntervalMs } : {}),
    ...(opts.agentQuotas?.maxPendingApprovals !== undefined ? { maxPendingPerAgent: opts.agentQuotas.maxPendingApprovals } : {}),
  });
  // Every signed checkpoint goes to the paired extension, which keeps the newest as a witness.
  const witness = new WitnessRelay(link, ledger, (m, d) => log.warn(m, d));
  // Verify, export and retention (./ledger-tasks.ts): chunked, with progress events.
  const ledgerTasks = new LedgerTasks({
    ledger,
    dataDir: opts.dataDir,
    emit: (e) => emit(e),
    receipt: (i) => receipt(i),
    now,
    retentionDays: () => settings.get().retentionDays ?? null,
    log,
    verify: async (onProgress) => {
      const report = await ledger.verifyAsync({ witness: await witness.read(), onProgress });
      if (keyProblem && report.summary !== undefined) report.summary += `; no signing key: ${keyProblem}`;
      else if (keyProblem) report.summary = `no signing key, checkpoints not checked: ${keyProblem}`;
      return report;
    },
  });
  const verifyLedger = () => ledgerTasks.verify();
  const agentEndpoint = new AgentEndpoint({
    broker,
    port: opts.mcpPort ?? settings.get().mcpPort,
    authenticate: (secret) => {
      const t = settings.findAgentToken(secret);
      return t ? { id: t.id, name: t.name } : null;
    },
    onSessionsChanged: () => emit({ kind: 'agent-tokens', tokens: agentTokens() }),
    serverInfo: { name: 'echo-console', version: opts.consoleVersion ?? '0.1.0' },
    settingsFile: join(opts.dataDir, SETTINGS_FILE),
    ...(opts.mcpConnectionLimits ? { connectionLimits: opts.mcpConnectionLimits } : {}),
    ...(opts.agentQuotas ? { quotas: opts.agentQuotas } : {}),
    turns,
  });
  const stdioCommand = opts.stdioCommand ?? defaultStdioCommand(opts.dataDir);
  const endpoint = (): EndpointInfo => ({ url: agentEndpoint.url, stdioCommand });
  const agentTokens = (): AgentTokenInfo[] => {
    const open = agentEndpoint.sessionsByToken();
    return settings.get().agentTokens.map((t) => ({ id: t.id, name: t.name, createdAt: t.createdAt, sessions: open.get(t.id) ?? 0 }));
  };
  const idleMinutes = () => settings.get().developerModeIdleMinutes ?? DEVELOPER_MODE_IDLE_MINUTES.default;
  // Never persisted, off at every start; on only through the trusted-input gate (./developer-mode.ts).
  const developerMode = new DeveloperMode({
    tools: agentEndpoint.tools,
    developerTools: [pageRunScript],
    idleMs: () => idleMinutes() * 60_000,
    onSwitch: (sw) => {
      receipt({ requestId: null, event: sw.on ? 'developer-mode-on' : 'developer-mode-off', faculty: 'console', actor: sw.by === 'person' ? PERSON : { kind: 'console' }, detail: { ...sw } });
      // Raw JavaScript waiting for the person ends with the mode (../faculties/raw-js.ts).
      if (!sw.on) broker.scripts.developerModeOff(sw.by === 'person' ? 'person' : sw.why);
      emit({ kind: 'settings', settings: consoleSettings() });
      tellExtension();
    },
    ...(opts.developerModeTimer ? { setTimer: opts.developerModeTimer } : {}),
  });
  const consoleSettings = (): ConsoleSettings => ({
    approvalTimeoutMs: effectiveTimeout(),
    developerMode: developerMode.on,
    developerModeIdleMinutes: idleMinutes(),
    retentionDays: settings.get().retentionDays ?? null,
  });
  // Raw JavaScript runs only while it is on, and each run re-arms its idle timer.
  broker.scripts.useDeveloperMode(developerMode);

  // ---- wiring -------------------------------------------------------------------
  const unsubs: Array<() => void> = [];
  // Batched (./receipt-events.ts): one event per receipt was most of the console's work under a flood.
  unsubs.push(batchReceiptEvents((l) => ledger.onAppend(l), (receipts) => emit({ kind: 'receipts', receipts })));
  unsubs.push(
    broker.approvals.onChange((approvals) => {
      emit({ kind: 'approvals', approvals });
      tellExtension();
    }),
  );
  // Coalesced to one event per pass of the event loop: a request changes phase several times in a
  // row, and under a flood of agent calls one event per change would be most of the UI's traffic.
  let inFlightQueued = false;
  unsubs.push(
    broker.inFlight.onChange(() => {
      if (inFlightQueued) return;
      inFlightQueued = true;
      setImmediate(() => {
        inFlightQueued = false;
        if (!stopped) emit({ kind: 'in-flight', requests: broker.inFlight.list() });
      });
    }),
  );
  unsubs.push(broker.patches.onChange((patches) => emit({ kind: 'live-patches', patches })));
  unsubs.push(broker.scripts.onChange((run) => emit({ kind: 'script-run', run })));
  // Sharing writes its own receipts (src/main/core/sharing); the UI hears every change.
  unsubs.push(broker.onSharedTabs((tabs) => emit({ kind: 'shared-tabs', tabs })));
  let lastState: LinkStatus['state'] | null = null;
  unsubs.push(
    link.onStatus((s) => {
      emit({ kind: 'link', link: s });
      if (s.state !== 'connected') sentToExtension = null;
      if (s.state === 'connected' && lastState !== 'connected') {
        failedState = null;
        void refreshSharedTabs();
        tellExtension();
      }
      lastState = s.state;
    }),
  );

  // The extension's action badge shows the pending count, red while developer mode is on (issue 12
  // item 7; extension/src/background/sign.ts): told at each change and at each (re)connection.
  let sentToExtension: string | null = null;
  /** The state the extension did not take (a timeout, a busy worker), and how often it was sent again. */
  let stateRetries = 0;
  let failedState: string | null = null;
  let stateRetryTimer: ReturnType<typeof setTimeout> | null = null;
  function tellExtension(): void {
    if (stopped || link.status().state !== 'connected') return;
    const state = { pending: broker.approvals.list().length, developerMode: developerMode.on };
    const key = JSON.stringify(state);
    if (key === sentToExtension) return;
    sentToExtension = key;
    void link.request({ op: 'console-state', ...state }, { timeoutMs: 10_000 }).then((r) => {
      if (r.ok) {
        if (sentToExtension === key) failedState = null;
        return;
      }
      // Stopped meanwhile (the closing link fails what was on its way): nothing to retry, no timer after stop.
      if (stopped || sentToExtension !== key) return;
      sentToExtension = null;
      if (failedState !== key) [failedState, stateRetries] = [key, 0];
      // Not taken while the link stays up (the extension timed out or failed it): without a retry
      // the badge would show a stale count until the next change. Again after 1, 2, 4, 8, 16 s;
      // an extension that does not know the op ('unknown-op': an older one) is not asked again,
      // and a dropped link is told at its reconnection.
      if (r.error.code === 'unknown-op' || stateRetries >= STATE_RETRIES || stateRetryTimer) return;
      stateRetryTimer = setTimeout(() => {
        stateRetryTimer = null;
        tellExtension();
      }, 1_000 * 2 ** stateRetries++);
      stateRetryTimer.unref?.();
    });
  }

  async function refreshSharedTabs(): Promise<Result<SharedTab[]>> {
    return broker.sharing.refresh();
  }

  // The person's rules: listed, added and removed from the console (src/main/core/api/policy.ts).
  // A tab rule ends with its share, also one that ended while the console was away.
  const policyApi = createPolicyApi(
    { settings, router: policy, extraRules: opts.policyRules ?? [], sharedTabs: () => broker.getSharedTabs(), receipt, emit },
    (m, e) => log.warn(m, toErrorInfo(e)),
  );
  for (const r of settings.get().policyRules) {
    if (r.tabId !== undefined && broker.sharing.recordedShare(r.tabId)?.origin !== r.origin) policyApi.dropTabRules(r.tabId, 'the tab was not shared when the console started');
  }
  unsubs.push(broker.sharing.onShareEnded((tabId, reason) => policyApi.dropTabRules(tabId, reason)));

  // The tool inspector: its own discoveries, live views, the person's manual invoke (./inspector.ts).
  const inspector = new Inspector({ link, broker, emit });

  // ---- the api ------------------------------------------------------------------
  const api = createConsoleApi({
    inspector,
    policy: policyApi,
    receipt,
    broker,
    link,
    ledger,
    settings,
    agentEndpoint,
    endpoint,
    agentTokens,
    consoleSettings,
    developerMode,
    emit,
    ...(opts.inputGate ? { inputGate: opts.inputGate } : {}),
    verifyLedger,
    ledgerTasks,
  });

  let started = false;
  let stopped = false;
  let nativeHostReport: RepairReport | null = null;
  return {
    api,
    ledger,
    ledgerTasks,
    witness,
    broker,
    link,
    settings,
    agentEndpoint,
    developerMode,
    inspector,
    get endpoint() {
      return endpoint();
    },
    agentTokens,
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
      // Restart recovery, once this console owns the link (a second console is refused
      // above, so it never cancels the live one's requests): a request left dispatched
      // becomes outcome-unknown and blocks its subject; a pending approval is cancelled.
      try {
        const recovered = recoverAtStart(ledger);
        for (const b of recovered.blocks) broker.discoveries.block(b.faculty, b.tabId, b.documentId, b.subject, b.requestId);
        if (recovered.outcomeUnknown.length || recovered.cancelled.length) {
          log.info('restart recovery', { outcomeUnknown: recovered.outcomeUnknown.length, cancelled: recovered.cancelled.length, blocks: recovered.blocks.length });
        }
      } catch (e) {
        log.warn('restart recovery failed', toErrorInfo(e));
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
      // The stdio command's way in: the private agent socket, never TCP (issue 9 item 2). Not
      // fatal: HTTP agents still work, and the command says the console cannot be reached.
      const agentSock = opts.agentSocketPath ?? agentSocketPath(resolve(opts.dataDir));
      const sock = await agentEndpoint.listenAgentSocket(agentSock);
      if (!sock.ok) log.warn(`the agent socket for the stdio command could not start (${sock.code}): ${sock.message}`);
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
      if (link.status().state === 'connected') {
        void refreshSharedTabs();
        tellExtension();
      }
      // Retention now and hourly (a no-op while the person keeps payloads forever, the default).
      ledgerTasks.startRetention();
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      if (stateRetryTimer) clearTimeout(stateRetryTimer);
      inspector.dispose();
      broker.dispose();
      witness.dispose();
      developerMode.dispose();
      ledgerTasks.stop();
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
