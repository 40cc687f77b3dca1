/**
 * Failures as the person reads them. Every Result error the renderer shows goes
 * through `plainError`: transport failures (the console went away, did not
 * answer, refused the page's session) become sentences saying what happened and
 * what to do, and no message ever names an API method (`verifyLedger`,
 * `queryReceipts`, …) or an IPC channel. `withPlainErrors` applies it to every
 * method of an `EchoApi` and turns a rejected promise (IPC `invoke` can reject
 * when the main process is gone) into a Result too.
 */
import { CHANNELS, type ConsoleApi, type EchoApi } from '../../shared/ipc';
import type { ErrorInfo, Result } from '../../shared/result';
import { MESSAGES } from './ws-client';

/** The sentence for each transport and boundary code, when the message given is not already ours. */
const PLAIN: Record<string, string> = {
  disconnected: MESSAGES.disconnected,
  timeout: MESSAGES.timeout,
  unauthorized: MESSAGES.unauthorized,
  'forbidden-sender': 'The console refused this window as the sender of the request. Reopen the console window.',
  'unknown-method': 'The console does not offer this action. This page and the console may be from different versions: reload the page.',
  'invalid-params': 'The console refused the request as malformed, so nothing was done.',
  internal: 'The console hit an internal error, so this may not have been done. Check the receipts, then try again.',
};

/** Every ConsoleApi method (CHANNELS has one entry per method, plus `events`). */
export const API_METHOD_NAMES = Object.keys(CHANNELS).filter((k): k is keyof ConsoleApi => k !== 'events');

const OWN_MESSAGES = new Set<string>(Object.values(MESSAGES));

/** Words that must never reach the person: API method names and IPC channel names. */
const INTERNAL_NAMES = new RegExp(`\\b(${[...API_METHOD_NAMES, ...Object.values(CHANNELS)].map((n) => n.replace(/[.*+?^${}()|[\]\\:-]/g, '\\$&')).join('|')})\\b`);

/** The same error with a message a person can act on (the code is kept for the UI's own decisions). */
export function plainError(e: ErrorInfo): ErrorInfo {
  const code = typeof e.code === 'string' ? e.code : 'internal';
  const message = typeof e.message === 'string' ? e.message : '';
  if (OWN_MESSAGES.has(message)) return { code, message };
  if (code === 'invalid-params') {
    const field = fieldOf(e.detail);
    return { code, message: field ? `${PLAIN[code]!.slice(0, -1)} (the field “${field}” was not accepted).` : PLAIN[code]! };
  }
  if (code in PLAIN && code !== 'internal') return { code, message: PLAIN[code]! };
  if (!message || INTERNAL_NAMES.test(message)) return { code, message: PLAIN[code] ?? `The console could not do this (${code}).` };
  return { code, message };
}

function fieldOf(detail: unknown): string | null {
  if (!detail || typeof detail !== 'object') return null;
  const path = (detail as { path?: unknown }).path;
  if (typeof path !== 'string' || path === '') return null;
  const last = path.split('/').filter(Boolean).pop();
  return last && /^[A-Za-z0-9_]{1,64}$/.test(last) ? last : null;
}

/** Wrap every ConsoleApi method so its failures read plainly and never reject. */
export function withPlainErrors(api: EchoApi): EchoApi {
  const wrapped = { onEvent: (l: Parameters<EchoApi['onEvent']>[0]) => api.onEvent(l) } as EchoApi;
  for (const name of API_METHOD_NAMES) {
    const fn = api[name] as (p?: unknown) => Promise<Result<unknown>>;
    (wrapped as unknown as Record<string, (p?: unknown) => Promise<Result<unknown>>>)[name] = async (p?: unknown) => {
      let r: Result<unknown>;
      try {
        r = p === undefined ? await fn.call(api) : await fn.call(api, p);
      } catch {
        return { ok: false, error: { code: 'disconnected', message: MESSAGES.disconnected } };
      }
      if (!r || typeof r !== 'object') return { ok: false, error: plainError({ code: 'internal', message: '' }) };
      return r.ok ? r : { ok: false, error: plainError(r.error ?? { code: 'internal', message: '' }) };
    };
  }
  return wrapped;
}
