/**
 * The one validation of console API payloads: API_PAYLOAD_SCHEMAS
 * (src/shared/api-schemas.ts) compiled once with ajv (strict, first error only,
 * no coercion, no defaults, no removal). createConsoleCore runs it on every
 * call, where it writes the `refused` receipt for a bad payload; the hosts do
 * not validate again.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { API_METHODS, API_PAYLOAD_SCHEMAS, NO_PAYLOAD, type ApiMethod } from '../../../shared/api-schemas';
import { err, type Result } from '../../../shared/result';

// allErrors off: a hostile payload (50,000 levels, 600 kB strings) stops at its first fault.
const ajv = new Ajv({ strict: true, allErrors: false, coerceTypes: false, useDefaults: false, removeAdditional: false });
const VALIDATORS = new Map<ApiMethod, ValidateFunction>(API_METHODS.map((m) => [m, ajv.compile(API_PAYLOAD_SCHEMAS[m])]));

/**
 * Validate the payload of one call.
 * @param method a ConsoleApi method (the caller has looked it up already).
 * @param payload the single argument as received (untrusted); `undefined` when
 *   none was given.
 * @returns `{ok:true, value}`: the payload, or `undefined` for a method without
 *   one; else `invalid-params` with ajv's first failing path and keyword in
 *   `detail` (`{path, keyword}`) and the method named in the message.
 */
export function validateApiPayload(method: ApiMethod, payload: unknown): Result<unknown> {
  const noPayload = API_PAYLOAD_SCHEMAS[method] === NO_PAYLOAD;
  if (noPayload && payload === undefined) return { ok: true, value: undefined };
  const validate = VALIDATORS.get(method);
  if (!validate) return err('unknown-method', 'No such console API method.');
  if (!validate(payload)) {
    const first = (validate.errors ?? [])[0] as ErrorObject | undefined;
    const where = first ? `${first.instancePath || '(params)'} ${first.message ?? 'is invalid'}` : 'is invalid';
    return err('invalid-params', `Invalid parameters for ${method}: ${where}.`, first ? { path: first.instancePath, keyword: first.keyword } : undefined);
  }
  return { ok: true, value: noPayload ? undefined : payload };
}
