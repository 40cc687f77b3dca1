/**
 * Small hand-written validators for the link's messages (src/shared/protocol.ts):
 * no eval and no code generation, so they run in the extension's service worker,
 * whose CSP forbids what ajv needs. A validator (`Check`) is a function
 * (value, path) → error text naming the path, or null when the value passes.
 * They compose from the pieces below, so a message type is one line per field.
 * The contract itself (which messages, which fields) is protocol.ts's.
 */
import { LIMITS } from './limits';

/** A validator: the value and its path (`msg.field[2]`) → what is wrong, prefixed with the path, or null. */
export type Check = (v: unknown, path: string) => string | null;

/** A plain object (not null, not an array). */
export const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const has = (o: object, k: string): boolean => Object.prototype.hasOwnProperty.call(o, k);

/** A string of `min`..`max` UTF-16 units (default 0..LIMITS.maxMessageBytes), matching `pattern` (described as `what`) when given. */
export function str(opts: { min?: number; max?: number; pattern?: RegExp; what?: string } = {}): Check {
  const { min = 0, max = LIMITS.maxMessageBytes, pattern, what } = opts;
  return (v, p) => {
    if (typeof v !== 'string') return `${p}: expected a string`;
    if (v.length < min || v.length > max) return `${p}: length ${v.length} is outside ${min}..${max}`;
    if (pattern && !pattern.test(v)) return `${p}: expected ${what ?? String(pattern)}`;
    return null;
  };
}
/** A safe integer in `min`..`max` (default 0..MAX_SAFE_INTEGER). */
export function int(min = 0, max = Number.MAX_SAFE_INTEGER): Check {
  return (v, p) => (Number.isSafeInteger(v) && (v as number) >= min && (v as number) <= max ? null : `${p}: expected an integer in ${min}..${max}`);
}
/** A finite number. */
export const num: Check = (v, p) => (typeof v === 'number' && Number.isFinite(v) ? null : `${p}: expected a finite number`);
/** A boolean. */
export const bool: Check = (v, p) => (typeof v === 'boolean' ? null : `${p}: expected a boolean`);
/** Exactly null. */
export const nul: Check = (v, p) => (v === null ? null : `${p}: expected null`);
/** One of these literal values. */
export function oneOf(...values: readonly (string | number | boolean | null)[]): Check {
  return (v, p) => (values.includes(v as never) ? null : `${p}: expected one of ${values.map((x) => JSON.stringify(x)).join(', ')}`);
}
/** null, or what `c` accepts. */
export function nullable(c: Check): Check {
  return (v, p) => (v === null ? null : c(v, p));
}
/** An array of at most `max` items, each accepted by `c`. */
export function arr(c: Check, max: number): Check {
  return (v, p) => {
    if (!Array.isArray(v)) return `${p}: expected an array`;
    if (v.length > max) return `${p}: ${v.length} items exceed the limit of ${max}`;
    for (let i = 0; i < v.length; i++) {
      const e = c(v[i], `${p}[${i}]`);
      if (e) return e;
    }
    return null;
  };
}
/** Any JSON value, nesting at most `maxDepth` (JSON.parse output is otherwise already JSON). */
export function json(maxDepth = 64): Check {
  const walk = (v: unknown, p: string, d: number): string | null => {
    if (v === null || typeof v === 'string' || typeof v === 'boolean') return null;
    if (typeof v === 'number') return Number.isFinite(v) ? null : `${p}: non-finite number`;
    if (typeof v !== 'object') return `${p}: not a JSON value`;
    if (d >= maxDepth) return `${p}: nested deeper than ${maxDepth}`;
    for (const [k, child] of Array.isArray(v) ? v.entries() : Object.entries(v)) {
      const e = walk(child, `${p}.${k}`, d + 1);
      if (e) return e;
    }
    return null;
  };
  return (v, p) => (v === undefined ? `${p}: missing` : walk(v, p, 0));
}
const OPTIONAL = Symbol('optional');
/** A field of `obj`: a required check, or an optional one (`opt`). */
export type Field = Check | { [OPTIONAL]: Check };
/** An optional field of `obj`: absent or undefined passes, otherwise `c` decides. */
export const opt = (c: Check): Field => ({ [OPTIONAL]: c });
/**
 * An object with exactly these fields. `strict`: refuse unknown keys (link
 * messages); otherwise unknown keys are tolerated (domain values others extend).
 */
export function obj(shape: Record<string, Field>, strict = true): Check {
  return (v, p) => {
    if (!isObj(v)) return `${p}: expected an object`;
    for (const [k, f] of Object.entries(shape)) {
      const optional = typeof f !== 'function';
      const check = optional ? f[OPTIONAL] : f;
      if (!has(v, k) || v[k] === undefined) {
        if (optional) continue;
        return `${p}.${k}: missing`;
      }
      const e = check(v[k], `${p}.${k}`);
      if (e) return e;
    }
    if (strict) for (const k of Object.keys(v)) if (!has(shape, k)) return `${p}.${k}: unexpected field`;
    return null;
  };
}
/** A discriminated union on `key`: one object shape per tag. */
export function tagged(key: string, table: Record<string, Check>): Check {
  return (v, p) => {
    if (!isObj(v)) return `${p}: expected an object`;
    const tag = v[key];
    if (typeof tag !== 'string' || !has(table, tag)) return `${p}.${key}: unknown ${key} ${JSON.stringify(tag)?.slice(0, 40)}`;
    return (table[tag] as Check)(v, p);
  };
}
/** `c`, then (when it passes) `extra` on the object. */
export function also(c: Check, extra: (v: Record<string, unknown>, p: string) => string | null): Check {
  return (v, p) => c(v, p) ?? extra(v as Record<string, unknown>, p);
}

/**
 * Run `check` on `x` at path `root`.
 * @returns null when it passes, else what is wrong (`root.field: why`); a validator that throws
 *   (a getter on a hostile object) counts as a failure, never takes the caller down.
 */
export function checkProblem(check: Check, x: unknown, root: string): string | null {
  try {
    return check(x, root);
  } catch (thrown) {
    return `${root}: ${thrown instanceof Error ? thrown.message : String(thrown)}`;
  }
}
