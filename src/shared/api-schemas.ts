/**
 * The console API's payload contract: the ONE table of JSON Schemas, one per
 * `ConsoleApi` method (src/shared/ipc.ts, beside `CHANNELS`). The core validates
 * every call against it once, where it writes the `refused` receipt
 * (src/main/core/api/payloads.ts, used by createConsoleCore); the hosts (Electron
 * IPC, the loopback web host) only check the sender, the method name and the
 * argument count, and pass the payload through. test/unit/contracts.test.ts fails
 * if a second table appears.
 *
 * Data only (no ajv here): src/shared is compiled for the renderer too. The
 * schemas are written for ajv's strict mode: no coercion, no defaults, no extra
 * properties.
 */
import type { ConsoleApi } from './ipc';
import { APPROVAL_TIMEOUT_RANGE, DEVELOPER_MODE_IDLE_MINUTES } from './limits';
import { POLICY_LIMITS, POLICY_RULE_SCHEMA } from './policy';
import { FACULTIES, OUTCOME_EVENTS, RECEIPT_EVENTS } from './receipt';
import { EXPORT_FORMATS, RETENTION_DAYS } from './ledger-export';

/** Every ConsoleApi method name, in CHANNELS order. */
export const API_METHODS = [
  'getSnapshot',
  'decideApproval',
  'queryReceipts',
  'verifyLedger',
  'confirmPairing',
  'unpair',
  'listShareableTabs',
  'shareTab',
  'unshareTab',
  'createAgentToken',
  'revokeAgentToken',
  'updateSettings',
  'listPolicyRules',
  'addPolicyRule',
  'removePolicyRule',
  'getTargetPicture',
  'listPatches',
  'revertPatches',
  'inspectTab',
  'invokeTool',
  'queryRequests',
  'countRequests',
  'startExport',
  'cancelExport',
  'runConsoleLine',
  'stopScript',
  'listScriptRuns',
  'stopRequest',
  'stopEverything',
  'reloadTab',
] as const satisfies ReadonlyArray<keyof ConsoleApi>;

export type ApiMethod = (typeof API_METHODS)[number];

// Compile-time check that API_METHODS lists every method of ConsoleApi.
type Missing = Exclude<keyof ConsoleApi, ApiMethod>;
const _allMethodsListed: Missing extends never ? true : Missing = true;
void _allMethodsListed;

const METHOD_SET: ReadonlySet<string> = new Set(API_METHODS);

/** Whether `name` is a ConsoleApi method (own names only: `__proto__`, `constructor`, `onEvent`, ... are not). */
export function isApiMethod(name: unknown): name is ApiMethod {
  return typeof name === 'string' && METHOD_SET.has(name);
}

const ID = { type: 'string', minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9._:-]+$' };
const TAB_ID = { type: 'integer', minimum: 0, maximum: 2 ** 31 - 1 };
const MS = { type: 'integer', minimum: 0, maximum: 8.64e15 };
/** A method without a payload: called with none (`undefined`) or with `{}`. */
export const NO_PAYLOAD = { type: 'object', additionalProperties: false, maxProperties: 0 } as const;

/** The request timeline's filters (RequestFilter, src/shared/request-summary.ts). */
const REQUEST_FILTER_PROPERTIES = {
  from: MS,
  to: MS,
  origin: { type: 'string', minLength: 1, maxLength: 2048 },
  agent: { type: 'string', minLength: 1, maxLength: 200 },
  faculty: { enum: [...FACULTIES] },
  toolName: { type: 'string', minLength: 1, maxLength: 128 },
  outcome: { enum: [...OUTCOME_EVENTS, 'open'] },
  event: { enum: [...RECEIPT_EVENTS] },
  text: { type: 'string', minLength: 1, maxLength: 200 },
  requestId: ID,
} as const;
const REQUEST_CURSOR = { type: 'string', minLength: 1, maxLength: 64 };

/**
 * The JSON Schema of each method's single argument. Methods whose schema is
 * NO_PAYLOAD take none (an absent payload is accepted without validation).
 */
export const API_PAYLOAD_SCHEMAS: Readonly<Record<ApiMethod, object>> = {
  getSnapshot: NO_PAYLOAD,
  decideApproval: {
    type: 'object',
    additionalProperties: false,
    required: ['requestId', 'decision'],
    properties: {
      requestId: ID,
      decision: { enum: ['approve', 'deny'] },
      reason: { type: 'string', maxLength: 500 },
    },
  },
  queryReceipts: {
    type: 'object',
    additionalProperties: false,
    properties: {
      from: MS,
      to: MS,
      origin: { type: 'string', minLength: 1, maxLength: 2048 },
      toolName: { type: 'string', minLength: 1, maxLength: 128 },
      event: { enum: [...RECEIPT_EVENTS] },
      outcome: { enum: [...OUTCOME_EVENTS] },
      requestId: ID,
      id: ID,
      cursor: { type: 'string', minLength: 1, maxLength: 1024 },
      limit: { type: 'integer', minimum: 1, maximum: 500 },
    },
  },
  verifyLedger: NO_PAYLOAD,
  confirmPairing: {
    type: 'object',
    additionalProperties: false,
    required: ['accept'],
    properties: { accept: { type: 'boolean' } },
  },
  unpair: NO_PAYLOAD,
  listShareableTabs: NO_PAYLOAD,
  shareTab: { type: 'object', additionalProperties: false, required: ['tabId'], properties: { tabId: TAB_ID } },
  unshareTab: { type: 'object', additionalProperties: false, required: ['tabId'], properties: { tabId: TAB_ID } },
  // The name's characters are checked by the store (agentTokenNameProblem, src/main/core/settings).
  createAgentToken: { type: 'object', additionalProperties: false, required: ['name'], properties: { name: { type: 'string', minLength: 1, maxLength: 200 } } },
  revokeAgentToken: { type: 'object', additionalProperties: false, required: ['id'], properties: { id: { type: 'string', pattern: '^(default|tok_[0-9a-f]{16})$' } } },
  updateSettings: {
    type: 'object',
    additionalProperties: false,
    minProperties: 1,
    properties: {
      approvalTimeoutMs: { type: 'integer', minimum: APPROVAL_TIMEOUT_RANGE.min, maximum: APPROVAL_TIMEOUT_RANGE.max },
      developerMode: { type: 'boolean' },
      developerModeIdleMinutes: { type: 'integer', minimum: DEVELOPER_MODE_IDLE_MINUTES.min, maximum: DEVELOPER_MODE_IDLE_MINUTES.max },
      retentionDays: { anyOf: [{ type: 'null' }, { type: 'integer', minimum: RETENTION_DAYS.min, maximum: RETENTION_DAYS.max }] },
    },
  },
  listPolicyRules: NO_PAYLOAD,
  // One rule shape (src/shared/policy.ts), the same the settings file is checked against.
  addPolicyRule: { type: 'object', additionalProperties: false, required: ['rule'], properties: { rule: POLICY_RULE_SCHEMA } },
  removePolicyRule: {
    type: 'object',
    additionalProperties: false,
    required: ['index', 'rule'],
    properties: { index: { type: 'integer', minimum: 0, maximum: POLICY_LIMITS.maxRules - 1 }, rule: POLICY_RULE_SCHEMA },
  },
  getTargetPicture: { type: 'object', additionalProperties: false, required: ['sha256'], properties: { sha256: { type: 'string', pattern: '^[0-9a-f]{64}$' } } },
  listPatches: { type: 'object', additionalProperties: false, properties: { tabId: { type: 'integer', minimum: 0, maximum: 2147483647 } } },
  revertPatches: {
    type: 'object',
    additionalProperties: false,
    required: ['tabId'],
    properties: {
      tabId: { type: 'integer', minimum: 0, maximum: 2147483647 },
      patchIds: { type: 'array', minItems: 1, maxItems: 64, uniqueItems: true, items: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$' } },
    },
  },
  inspectTab: { type: 'object', additionalProperties: false, required: ['tabId'], properties: { tabId: TAB_ID } },
  // The arguments are the page tool's: shaped and validated against its reviewed schema by the pipeline, like an agent's.
  invokeTool: {
    type: 'object',
    additionalProperties: false,
    required: ['tabId', 'frameId', 'name', 'descriptorHash', 'documentId', 'arguments'],
    properties: {
      tabId: TAB_ID,
      frameId: { type: 'integer', minimum: 0, maximum: 2 ** 53 - 1 },
      name: { type: 'string', pattern: '^[A-Za-z0-9_.-]{1,128}$' },
      descriptorHash: { type: 'string', pattern: '^[0-9a-f]{64}$' },
      documentId: { type: 'string', minLength: 1, maxLength: 128 },
      arguments: { type: 'object' },
    },
  },
  queryRequests: {
    type: 'object',
    additionalProperties: false,
    properties: { ...REQUEST_FILTER_PROPERTIES, cursor: REQUEST_CURSOR, after: REQUEST_CURSOR, limit: { type: 'integer', minimum: 1, maximum: 500 } },
  },
  countRequests: { type: 'object', additionalProperties: false, properties: REQUEST_FILTER_PROPERTIES },
  // LedgerFilter (src/shared/ledger-export.ts); the ledger checks it again (filtered-export.ts).
  startExport: {
    type: 'object',
    additionalProperties: false,
    required: ['filter', 'format'],
    properties: {
      format: { enum: [...EXPORT_FORMATS] },
      // The timeline's filters (one table), applied receipt by receipt; `open` is a request's state, not a receipt's.
      filter: { type: 'object', additionalProperties: false, properties: { ...REQUEST_FILTER_PROPERTIES, outcome: { enum: [...OUTCOME_EVENTS] } } },
    },
  },
  cancelExport: { type: 'object', additionalProperties: false, required: ['exportId'], properties: { exportId: { type: 'string', pattern: '^exp_[0-9a-f]{16}$' } } },
  // The code's UTF-8 bytes are bounded again by the faculty (RAW_SCRIPT_BOUNDS.codeBytes); a schema counts characters.
  runConsoleLine: {
    type: 'object',
    additionalProperties: false,
    required: ['tabId', 'code'],
    properties: { tabId: TAB_ID, frameId: TAB_ID, code: { type: 'string', minLength: 1, maxLength: 65536 }, world: { enum: ['MAIN', 'USER_SCRIPT'] } },
  },
  stopScript: { type: 'object', additionalProperties: false, required: ['runId'], properties: { runId: ID } },
  listScriptRuns: NO_PAYLOAD,
  stopRequest: { type: 'object', additionalProperties: false, required: ['requestId'], properties: { requestId: ID } },
  stopEverything: NO_PAYLOAD,
  reloadTab: { type: 'object', additionalProperties: false, required: ['tabId'], properties: { tabId: TAB_ID } },
};
