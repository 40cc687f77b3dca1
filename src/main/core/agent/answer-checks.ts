/**
 * The small type guards the agent tools use when they check a read faculty's
 * answer field by field (it crossed the link from the extension: JSON, but of
 * any shape). One copy for every tool in ./tools/.
 */

/** A plain object (not null, not an array). */
export const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A count: a safe integer ≥ 0. */
export const isCount = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 0;

/** A string of at most `max` UTF-16 units (default 8192). */
export const isStr = (v: unknown, max = 8192): v is string => typeof v === 'string' && v.length <= max;
