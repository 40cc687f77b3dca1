/**
 * The console API (src/shared/ipc.ts `ConsoleApi`) that both hosts carry to
 * the renderer: one handler per method, each in the four steps of
 * docs/design.md "Conventions" §2 — the host has checked the sender; here, and only here,
 * the payload is validated against its schema (API_PAYLOAD_SCHEMAS, src/shared/api-schemas.ts),
 * the work is done, and the answer is a Result; nothing throws. Bad input gets
 * a clear error and a `refused` receipt (faculty `console`, actor person); the
 * console stays up. `createConsoleCore` builds the parts and passes them here.
 */
import type { DeveloperMode } from '../developer-mode';
import type { AgentTokenInfo, ConsoleApi, ConsoleEvent, ConsoleSettings, ConsoleSnapshot, CreatedAgentToken, EndpointInfo } from '../../../shared/ipc';
import type { Actor, Receipt, ReceiptInput, VerifyReport } from '../../../shared/receipt';
import { err, ok, toErrorInfo, type Result } from '../../../shared/result';
import type { AgentEndpoint } from '../agent';
import type { Broker } from '../broker';
import type { PolicyApi } from './policy';
import type { Ledger } from '../ledger';
import type { ExtensionLink } from '../ports';
import { AgentTokenError, type SettingsStore } from '../settings';
import { validateApiPayload } from './payloads';
import type { LedgerTasks } from '../ledger-tasks';
import { gatedActionOf, RENDERER_ATTESTED_GATE, type TrustedInputGate } from '../trusted-input';
import type { Inspector } from '../inspector';
import { stopEverything } from '../stop';

const PERSON: Actor = { kind: 'person' };

/** The parts of the core the api handlers use. */
export interface ConsoleApiParts {
  /** Append a receipt; null (never a throw) when the ledger failed. */
  receipt(input: ReceiptInput): Receipt | null;
  broker: Broker;
  link: ExtensionLink;
  ledger: Ledger;
  settings: SettingsStore;
  agentEndpoint: AgentEndpoint;
  endpoint(): EndpointInfo;
  /** The agents' tokens without secrets, with their open sessions. */
  agentTokens(): AgentTokenInfo[];
  consoleSettings(): ConsoleSettings;
  /** Developer mode (../developer-mode.ts): `updateSettings` switches it. */
  developerMode: Pick<DeveloperMode, 'switchOn' | 'switchOff' | 'on'>;
  emit(e: ConsoleEvent): void;
  /** The policy methods' work (src/main/core/api/policy.ts). */
  policy: PolicyApi;
  /** The tool inspector (../inspector.ts). */
  inspector: Inspector;
  /**
   * The host's trusted-input gate (../trusted-input.ts, trust rule 19): a decision and
   * developer mode on pass only through it. Default RENDERER_ATTESTED_GATE.
   */
  inputGate?: TrustedInputGate;
  /** The full ledger check: chain, signed checkpoints and the extension's witness (default: `ledger.verifyAsync()`). */
  verifyLedger?: () => Promise<VerifyReport>;
  /** Export and retention runs (../ledger-tasks.ts). */
  ledgerTasks: Pick<LedgerTasks, 'startExport' | 'cancelExport' | 'applyRetention'>;
}

/** Build the ConsoleApi over the core's parts. Never throws; every method answers a Result. */
export function createConsoleApi(p: ConsoleApiParts): ConsoleApi {
  const { broker, link, ledger, settings, agentEndpoint, receipt } = p;
  const inputGate = p.inputGate ?? RENDERER_ATTESTED_GATE;

  /**
   * Validate (validateApiPayload: API_PAYLOAD_SCHEMAS of src/shared/api-schemas.ts, the
   * only place a payload is checked), run, answer; bad input and thrown errors become a
   * Result and a receipt.
   */
  function handler<K extends keyof ConsoleApi>(method: K, work: (payload: Parameters<ConsoleApi[K]>[0]) => Promise<Result<unknown>> | Result<unknown>): ConsoleApi[K] {
    const refusedReceipt = (code: string, message: string) =>
      receipt({ requestId: null, event: 'refused', faculty: 'console', actor: PERSON, detail: { method, code, message: message.slice(0, 500) } });
    const fn = async (payload?: unknown) => {
      const checked = validateApiPayload(method, payload);
      if (!checked.ok) {
        refusedReceipt(checked.error.code, checked.error.message);
        return checked;
      }
      // Trust rule 19: only the person's own input decides or switches developer mode on.
      // The receipt's actor is the console, never the person: nobody knows who sent it.
      const action = gatedActionOf(method, checked.value);
      if (action) {
        const admitted = inputGate.admit(action);
        if (!admitted.ok) {
          const target = method === 'decideApproval' || method === 'stopRequest' ? { requestId: (checked.value as { requestId: string }).requestId } : {};
          receipt({ requestId: null, event: 'refused', faculty: 'console', actor: { kind: 'console' }, detail: { method, action, ...target, code: admitted.error.code, message: admitted.error.message } });
          return admitted;
        }
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

  return {
    getSnapshot: handler('getSnapshot', (): Result<ConsoleSnapshot> =>
      // No token secret in here: the snapshot reaches the page (issue 9 item 4).
      ok({ approvals: broker.approvals.list(), inFlight: broker.inFlight.list(), link: link.status(), sharedTabs: broker.getSharedTabs(), endpoint: p.endpoint(), agentTokens: p.agentTokens(), settings: p.consoleSettings() }),
    ),
    decideApproval: handler('decideApproval', (x) => broker.decide(x.requestId, x.decision, x.reason)),
    queryReceipts: handler('queryReceipts', (x) => {
      try {
        return ok(ledger.query(x));
      } catch (e) {
        return err('invalid-query', toErrorInfo(e).message);
      }
    }),
    // verifyAsync yields to the event loop between chunks: a million-receipt check
    // must not freeze the Electron main thread (and with it the approval dialog).
    // With the core's checkpoint and witness checks (src/main/core/index.ts, docs/ledger.md).
    verifyLedger: handler('verifyLedger', async () => ok(p.verifyLedger ? await p.verifyLedger() : await ledger.verifyAsync())),
    confirmPairing: handler('confirmPairing', (x) => link.confirmPairing(x.accept)),
    unpair: handler('unpair', () => link.unpair()),
    // The console's own page is never offered, nor shared (the person would hand the agent the MCP token and the approvals).
    listShareableTabs: handler('listShareableTabs', () => broker.sharing.shareable()),
    shareTab: handler('shareTab', (x) => broker.sharing.share(x.tabId)),
    unshareTab: handler('unshareTab', (x) => broker.sharing.unshare(x.tabId)),
    createAgentToken: handler('createAgentToken', (x): Result<CreatedAgentToken> => {
      let made: ReturnType<SettingsStore['createAgentToken']>;
      try {
        made = settings.createAgentToken(x.name);
      } catch (e) {
        if (e instanceof AgentTokenError) return err(e.code, e.message);
        throw e;
      }
      receipt({ requestId: null, event: 'token-created', faculty: 'console', actor: PERSON, detail: { tokenId: made.token.id, name: made.token.name } });
      const tokens = p.agentTokens();
      p.emit({ kind: 'agent-tokens', tokens });
      // The secret is in this answer only: never in a snapshot or an event.
      return ok({ token: tokens.find((t) => t.id === made.token.id)!, secret: made.secret });
    }),
    revokeAgentToken: handler('revokeAgentToken', async (x): Promise<Result<AgentTokenInfo[]>> => {
      let gone: ReturnType<SettingsStore['revokeAgentToken']>;
      try {
        gone = settings.revokeAgentToken(x.id);
      } catch (e) {
        if (e instanceof AgentTokenError) return err(e.code, e.message);
        throw e;
      }
      // The secret already fails at the next request; closing its sessions ends their streams and in-flight calls.
      const sessionsClosed = await agentEndpoint.closeSessionsOf(gone.id);
      receipt({ requestId: null, event: 'token-revoked', faculty: 'console', actor: PERSON, detail: { tokenId: gone.id, name: gone.name, sessionsClosed } });
      const tokens = p.agentTokens();
      p.emit({ kind: 'agent-tokens', tokens });
      return ok(tokens);
    }),
    updateSettings: handler('updateSettings', (x) => {
      const { developerMode, ...persisted } = x;
      if (Object.keys(persisted).length > 0) settings.update(persisted);
      // A new retention period applies at once (in the background: it may erase many payloads).
      if ('retentionDays' in persisted) void p.ledgerTasks.applyRetention();
      // Developer mode is never persisted; switching it on passed the trusted-input gate above
      // (gatedActionOf); its receipt and event come from DeveloperMode's onSwitch.
      if (developerMode === true) p.developerMode.switchOn();
      else if (developerMode === false) p.developerMode.switchOff('person');
      const s = p.consoleSettings();
      p.emit({ kind: 'settings', settings: s });
      return ok(s);
    }),
    listPolicyRules: handler('listPolicyRules', () => p.policy.list()),
    addPolicyRule: handler('addPolicyRule', (x) => p.policy.add(x)),
    removePolicyRule: handler('removePolicyRule', (x) => p.policy.remove(x)),
    getTargetPicture: handler('getTargetPicture', (x) => {
      const pic = broker.pictures.get(x.sha256);
      return pic ? ok({ png: pic.png.toString('base64'), width: pic.width, height: pic.height }) : err('picture-not-found', 'No picture with that hash is kept (pictures live in memory, for the last few approvals only).');
    }),
    listPatches: handler('listPatches', (x) => ok(broker.patches.list(x.tabId))),
    // The person's Revert / Revert all (issue 11 item 1): receipted with the person as actor by the pipeline.
    revertPatches: handler('revertPatches', (x) => broker.revertPatches({ tabId: x.tabId, ...(x.patchIds ? { patchIds: x.patchIds } : {}) })),
    // The tool inspector (issue 12 items 4 and 6, docs/inspector.md).
    inspectTab: handler('inspectTab', (x) => p.inspector.inspect(x.tabId)),
    // Passed the trusted-input gate above (gatedActionOf: the person's decision); the dialog is still shown.
    invokeTool: handler('invokeTool', (x) => p.inspector.invoke(x)),
    // The request timeline (docs/timeline.md): read from the ledger's request index, never by scanning receipts.
    queryRequests: handler('queryRequests', (x) => {
      try {
        return ok(ledger.queryRequests(x));
      } catch (e) {
        return err('invalid-query', toErrorInfo(e).message);
      }
    }),
    countRequests: handler('countRequests', (x) => {
      try {
        return ok(ledger.countRequestsAt(x));
      } catch (e) {
        return err('invalid-query', toErrorInfo(e).message);
      }
    }),
    startExport: handler('startExport', (x) => p.ledgerTasks.startExport(x)),
    cancelExport: handler('cancelExport', (x) => p.ledgerTasks.cancelExport(x.exportId)),
    // The person's developer-console line (issue 11 item 4): passed the trusted-input gate above
    // (`developer-console-line`); the faculty refuses it while developer mode is off. The run's own
    // outcome (refused, outcome-unknown, …) is in the answered run, receipted by the pipeline.
    runConsoleLine: handler('runConsoleLine', async (x) => {
      const { answer, run } = await broker.scripts.run(
        { tabId: x.tabId, ...(x.frameId !== undefined ? { frameId: x.frameId } : {}), code: x.code, world: x.world ?? 'MAIN' },
        { actor: PERSON, kind: 'mutation', byPerson: true },
      );
      if (!answer.ok && answer.error.code === 'developer-mode-off') return err(answer.error.code, answer.error.message);
      return ok(run);
    }),
    stopScript: handler('stopScript', (x) => broker.scripts.stop(x.runId)),
    listScriptRuns: handler('listScriptRuns', () => ok(broker.scripts.list())),
    // Stop (issue 12 item 5, docs/stop.md): the person's decisions, gated above like Approve/Deny.
    stopRequest: handler('stopRequest', (x) => broker.stop(x.requestId)),
    stopEverything: handler('stopEverything', async () => ok(await stopEverything({ broker, agentEndpoint, developerMode: p.developerMode, receipt }))),
    // The person's reload of a shared tab (offered after a Stop or a raw-JavaScript run left an outcome unknown), receipted.
    reloadTab: handler('reloadTab', async (x): Promise<Result<null>> => {
      const tab = broker.sharing.get(x.tabId);
      if (!tab) return err('tab-not-shared', `Tab ${x.tabId} is not shared: only a shared tab can be reloaded from the console.`);
      const r = await link.request({ op: 'reload-tab', tabId: x.tabId }, { timeoutMs: 10_000 });
      if (!r.ok) return r;
      receipt({ requestId: null, event: 'tab-reloaded', faculty: 'console', actor: PERSON, tabId: x.tabId, origin: tab.origin, detail: {} });
      return ok(null);
    }),
  };
}
