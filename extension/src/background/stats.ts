/**
 * Counters of the checks every dispatch must pass through (issue 7, item 10: the
 * agent benchmark proves with them that its calls were not fast because a check
 * was skipped). core.ts increments two where it builds the generic checks' deps,
 * faculties/webmcp-invoke.ts the third when the page answers its dispatch:
 * - `rediscoveries`: the fresh rediscovery in the target document right before a WebMCP
 *   dispatch, which the page-side runner makes in the task that calls `executeTool`
 *   (content/webmcp.ts `execute`), counted when its answer shows it ran;
 * - `macChecks`: grant MAC checks (`verifyGrant`);
 * - `nonceChecks`: one-use nonce checks (`consumeNonce`).
 * They count calls, whatever the answer, since the worker started (a restarted
 * worker starts again from 0). Read through `globalThis.echoConsole.stats()`.
 */

/** The counters' shape: each a count of calls since the worker started. */
export interface CheckCounters {
  rediscoveries: number;
  macChecks: number;
  nonceChecks: number;
}

const counters: CheckCounters = { rediscoveries: 0, macChecks: 0, nonceChecks: 0 };

/** Count one call of check `k`. */
export function count(k: keyof CheckCounters): void {
  counters[k] += 1;
}

/** A copy of the counters (plain data, safe to hand out). */
export function stats(): CheckCounters {
  return { ...counters };
}
