/**
 * The common tail of every console API handler in both hosts, after the sender
 * check: the Electron IPC handlers (src/main/ipc.ts) and the loopback web host's
 * WebSocket (src/main/web/server.ts). The host routes the call (a known method
 * name, at most one argument) and passes the payload through: the core
 * validates it, once, where it writes the `refused` receipt
 * (src/main/core/api/payloads.ts with src/shared/api-schemas.ts). Answers a
 * Result and never throws (docs/design.md, "Conventions" §1–2).
 *
 * Plain Node, no 'electron' import.
 */
import type { ConsoleApi } from '../shared/ipc';
import { isApiMethod } from '../shared/api-schemas';
import { err, toErrorInfo, type Result } from '../shared/result';

/**
 * Route one call to the core.
 * @param method the method name, as received (untrusted).
 * @param args   every argument the sender passed (IPC: the invoke arguments after
 *   the event; WebSocket: `[params]` or `[]`). At most one is allowed.
 * @returns the core's Result; `unknown-method` for a name that is not a ConsoleApi
 *   method, `invalid-params` for more than one argument, `internal` when the core
 *   throws or answers something that is not a Result (no stack trace crosses).
 */
export async function dispatchCall(api: ConsoleApi, method: unknown, args: readonly unknown[]): Promise<Result<unknown>> {
  if (!isApiMethod(method)) return err('unknown-method', 'No such console API method.');
  if (args.length > 1) return err('invalid-params', `${method} takes at most one argument.`);
  try {
    const fn = api[method] as (p?: unknown) => Promise<Result<unknown>>;
    const answer = args.length === 0 ? await fn.call(api) : await fn.call(api, args[0]);
    if (!isResult(answer)) return err('internal', `${method} returned no result.`);
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
