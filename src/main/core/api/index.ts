/**
 * The console API (src/shared/ipc.ts `ConsoleApi`) that both hosts carry to
 * the renderer: one handler per method, each in the four steps of
 * docs/design.md "Conventions" §2 — the host has checked the sender; here the payload is
 * validated against its schema (ajv, one per method, no extra properties),
 * the work is done, and the answer is a Result; nothing throws. Bad input gets
 * a clear error and a `refused` receipt (faculty `console`, actor person); the
 * console stays up. `createConsoleCore` builds the parts and passes them here.
 */
import { Ajv, type ValidateFunction } from 'ajv';
import type { ConsoleApi, ConsoleEvent, ConsoleSettings, ConsoleSnapshot, EndpointInfo } from '../../../shared/ipc';
import { RECEIPT_EVENTS, type Actor, type Receipt, type ReceiptInput } from '../../../shared/receipt';
import { err, ok, toErrorInfo, type Result } from '../../../shared/result';
import type { AgentEndpoint } from '../agent';
import type { Broker } from '../broker';
import { POLICY_PAYLOAD_SCHEMAS, type PolicyApi } from './policy';
import type { Ledger } from '../ledger';
import type { ExtensionLink } from '../ports';
import { APPROVAL_TIMEOUT_RANGE, type SettingsStore } from '../settings';

// ---- payload schemas, one per ConsoleApi method ------------------------------------

const ajv = new Ajv({ strict: true, allErrors: true });
const obj = (properties: Record<string, unknown>, required: string[] = []) => ({ type: 'object', additionalProperties: false, properties, required });
const tabIdSchema = { type: 'integer', minimum: 0, maximum: 2_147_483_647 };
const noArgs = { anyOf: [{ type: 'null' }, obj({})] };
const PAYLOAD_SCHEMAS: Record<keyof ConsoleApi, object> = {
  getSnapshot: noArgs,
  decideApproval: obj(
    { requestId: { type: 'string', minLength: 1, maxLength: 64 }, decision: { enum: ['approve', 'deny'] }, reason: { type: 'string', maxLength: 2000 } },
    ['requestId', 'decision'],
  ),
  queryReceipts: obj({
    from: { type: 'integer', minimum: 0 },
    to: { type: 'integer', minimum: 0 },
    origin: { type: 'string', maxLength: 2048 },
    toolName: { type: 'string', maxLength: 2048 },
    event: { enum: [...RECEIPT_EVENTS] },
    outcome: { enum: ['succeeded', 'failed', 'outcome-unknown', 'refused', 'denied', 'expired', 'cancelled'] },
    requestId: { type: 'string', maxLength: 2048 },
    id: { type: 'string', maxLength: 128 },
    cursor: { type: 'string', maxLength: 256 },
    limit: { type: 'integer', minimum: 1, maximum: 500 },
  }),
  verifyLedger: noArgs,
  confirmPairing: obj({ accept: { type: 'boolean' } }, ['accept']),
  unpair: noArgs,
  listShareableTabs: noArgs,
  shareTab: obj({ tabId: tabIdSchema }, ['tabId']),
  unshareTab: obj({ tabId: tabIdSchema }, ['tabId']),
  rotateToken: noArgs,
  updateSettings: obj({
    approvalTimeoutMs: { type: 'integer', minimum: APPROVAL_TIMEOUT_RANGE.min, maximum: APPROVAL_TIMEOUT_RANGE.max },
    developerMode: { type: 'boolean' },
  }),
  ...POLICY_PAYLOAD_SCHEMAS,
};
const VALIDATORS = Object.fromEntries(Object.entries(PAYLOAD_SCHEMAS).map(([k, s]) => [k, ajv.compile(s)])) as Record<keyof ConsoleApi, ValidateFunction>;

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
  consoleSettings(): ConsoleSettings;
  emit(e: ConsoleEvent): void;
  /** The policy methods' work (src/main/core/api/policy.ts). */
  policy: PolicyApi;
}

/** Build the ConsoleApi over the core's parts. Never throws; every method answers a Result. */
export function createConsoleApi(p: ConsoleApiParts): ConsoleApi {
  const { broker, link, ledger, settings, agentEndpoint, receipt } = p;

  /** Validate, run, answer; bad input and thrown errors become a Result and a receipt. */
  function handler<K extends keyof ConsoleApi>(method: K, work: (payload: Parameters<ConsoleApi[K]>[0]) => Promise<Result<unknown>> | Result<unknown>): ConsoleApi[K] {
    const validate = VALIDATORS[method];
    const refusedReceipt = (code: string, message: string) =>
      receipt({ requestId: null, event: 'refused', faculty: 'console', actor: PERSON, detail: { method, code, message: message.slice(0, 500) } });
    const fn = async (payload?: unknown) => {
      const x = payload === undefined ? null : payload;
      if (!validate(x)) {
        const why = (validate.errors ?? []).map((e) => `${e.instancePath || '(payload)'} ${e.message ?? ''}`.trim()).join('; ');
        const message = `Invalid payload for ${method}: ${why}`;
        refusedReceipt('invalid-payload', message);
        return err('invalid-payload', message);
      }
      try {
        const r = await work(x as Parameters<ConsoleApi[K]>[0]);
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
      ok({ approvals: broker.approvals.list(), link: link.status(), sharedTabs: broker.getSharedTabs(), endpoint: p.endpoint(), settings: p.consoleSettings() }),
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
    verifyLedger: handler('verifyLedger', async () => ok(await ledger.verifyAsync())),
    confirmPairing: handler('confirmPairing', (x) => link.confirmPairing(x.accept)),
    unpair: handler('unpair', () => link.unpair()),
    // The console's own page is never offered, nor shared (the person would hand the agent the MCP token and the approvals).
    listShareableTabs: handler('listShareableTabs', () => broker.sharing.shareable()),
    shareTab: handler('shareTab', (x) => broker.sharing.share(x.tabId)),
    unshareTab: handler('unshareTab', (x) => broker.sharing.unshare(x.tabId)),
    rotateToken: handler('rotateToken', async () => {
      settings.rotateToken();
      // The old token already fails at the next request; closing the sessions also ends their open streams.
      await agentEndpoint.closeSessions();
      receipt({ requestId: null, event: 'token-rotated', faculty: 'console', actor: PERSON, detail: {} });
      const info = p.endpoint();
      p.emit({ kind: 'endpoint', endpoint: info });
      return ok(info);
    }),
    updateSettings: handler('updateSettings', (x) => {
      const before = settings.get();
      settings.update(x);
      if (x.developerMode !== undefined && x.developerMode !== before.developerMode) {
        receipt({ requestId: null, event: x.developerMode ? 'developer-mode-on' : 'developer-mode-off', faculty: 'console', actor: PERSON, detail: {} });
      }
      const s = p.consoleSettings();
      p.emit({ kind: 'settings', settings: s });
      return ok(s);
    }),
    listPolicyRules: handler('listPolicyRules', () => p.policy.list()),
    addPolicyRule: handler('addPolicyRule', (x) => p.policy.add(x)),
    removePolicyRule: handler('removePolicyRule', (x) => p.policy.remove(x)),
  };
}
