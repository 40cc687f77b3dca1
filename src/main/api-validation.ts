/**
 * Payload validation for the console API, shared by both hosts: the Electron
 * IPC handlers (src/main/ipc.ts) and the loopback web host's WebSocket
 * (src/main/web/server.ts). One JSON Schema per `ConsoleApi` method (ajv,
 * strict, no coercion, no defaults, no extra properties), and one dispatcher
 * that runs the four steps after the sender check: validate, call the core,
 * answer a Result, never throw (CONVENTIONS.md §1–2).
 *
 * Plain Node, no 'electron' import.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { ConsoleApi } from '../shared/ipc';
import { OUTCOME_EVENTS, RECEIPT_EVENTS } from '../shared/receipt';
import { err, toErrorInfo, type Result } from '../shared/result';
import { APPROVAL_TIMEOUT_RANGE } from './core/settings';

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
  'rotateToken',
  'updateSettings',
] as const satisfies ReadonlyArray<keyof ConsoleApi>;

export type ApiMethod = (typeof API_METHODS)[number];

// Compile-time check that API_METHODS lists every method of ConsoleApi.
type Missing = Exclude<keyof ConsoleApi, ApiMethod>;
const _allMethodsListed: Missing extends never ? true : Missing = true;
void _allMethodsListed;

/** Bounds on the approval timeout a person may set (ms): the core's own range. */
export const APPROVAL_TIMEOUT_BOUNDS = APPROVAL_TIMEOUT_RANGE;

const ID = { type: 'string', minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9._:-]+$' };
const TAB_ID = { type: 'integer', minimum: 0, maximum: 2 ** 31 - 1 };
const MS = { type: 'integer', minimum: 0, maximum: 8.64e15 };
const NO_PARAMS = { type: 'object', additionalProperties: false, maxProperties: 0 };

/** The JSON Schema of each method's single argument (methods without one take none, or `{}`). */
export const PARAM_SCHEMAS: Record<ApiMethod, object> = {
  getSnapshot: NO_PARAMS,
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
  verifyLedger: NO_PARAMS,
  confirmPairing: {
    type: 'object',
    additionalProperties: false,
    required: ['accept'],
    properties: { accept: { type: 'boolean' } },
  },
  unpair: NO_PARAMS,
  listShareableTabs: NO_PARAMS,
  shareTab: { type: 'object', additionalProperties: false, required: ['tabId'], properties: { tabId: TAB_ID } },
  unshareTab: { type: 'object', additionalProperties: false, required: ['tabId'], properties: { tabId: TAB_ID } },
  rotateToken: NO_PARAMS,
  updateSettings: {
    type: 'object',
    additionalProperties: false,
    minProperties: 1,
    properties: {
      approvalTimeoutMs: { type: 'integer', minimum: APPROVAL_TIMEOUT_BOUNDS.min, maximum: APPROVAL_TIMEOUT_BOUNDS.max },
      developerMode: { type: 'boolean' },
    },
  },
};

const ajv = new Ajv({ strict: true, allErrors: false, coerceTypes: false, useDefaults: false, removeAdditional: false });
const validators = new Map<string, ValidateFunction>(API_METHODS.map((m) => [m, ajv.compile(PARAM_SCHEMAS[m])]));
const noParams = new Set<string>(API_METHODS.filter((m) => PARAM_SCHEMAS[m] === NO_PARAMS));

/** Whether `name` is a ConsoleApi method (own names only: `__proto__`, `constructor`, ... are not). */
export function isApiMethod(name: unknown): name is ApiMethod {
  return typeof name === 'string' && validators.has(name);
}

/**
 * Validate the argument list of one call.
 * @param method the method name, as received (untrusted).
 * @param args   every argument the sender passed (IPC: the invoke arguments after
 *   the event; WebSocket: `[params]` or `[]`). At most one is allowed.
 * @returns `{ok:true, value: params}` (the one argument, or `undefined` for
 *   methods without one), or `unknown-method` / `invalid-params` with ajv's first
 *   failing path in `detail`.
 */
export function validateCall(method: unknown, args: readonly unknown[]): Result<unknown> {
  if (!isApiMethod(method)) return err('unknown-method', 'No such console API method.');
  if (args.length > 1) return err('invalid-params', `${method} takes at most one argument.`);
  const params = args[0];
  if (noParams.has(method) && params === undefined) return { ok: true, value: undefined };
  const validate = validators.get(method)!;
  if (!validate(params)) {
    const first = (validate.errors ?? [])[0] as ErrorObject | undefined;
    const where = first ? `${first.instancePath || '(params)'} ${first.message ?? 'is invalid'}` : 'is invalid';
    return err('invalid-params', `Invalid parameters for ${method}: ${where}.`, first ? { path: first.instancePath, keyword: first.keyword } : undefined);
  }
  return { ok: true, value: noParams.has(method) ? undefined : params };
}

/**
 * The common tail of every handler in both hosts, after the sender check:
 * validate, call `api[method]`, and answer a Result. A throw or a malformed
 * answer from the core becomes `{ok:false, error:{code:'internal'}}`; stack
 * traces never cross the boundary.
 */
export async function dispatchCall(api: ConsoleApi, method: unknown, args: readonly unknown[]): Promise<Result<unknown>> {
  const checked = validateCall(method, args);
  if (!checked.ok) return checked;
  const name = method as ApiMethod;
  try {
    const fn = api[name] as (p?: unknown) => Promise<Result<unknown>>;
    const answer = checked.value === undefined ? await fn.call(api) : await fn.call(api, checked.value);
    if (!isResult(answer)) return err('internal', `${name} returned no result.`);
    return answer;
  } catch (e) {
    return { ok: false, error: toErrorInfo(e) };
  }
}

function isResult(x: unknown): x is Result<unknown> {
  if (!x || typeof x !== 'object') return false;
  const r = x as { ok?: unknown; error?: unknown };
  if (r.ok === true) return 'value' in r;
  return r.ok === false && !!r.error && typeof r.error === 'object';
}
