/**
 * The one result shape that crosses every boundary in Echo Console (IPC, the
 * extension link, the MCP tool layer). Nothing throws raw across a boundary:
 * handlers answer `{ok: true, value}` or `{ok: false, error: {code, message}}`
 * (docs/design.md, "Conventions" §2).
 */

/** A machine-readable error: `code` is a stable kebab-case token, `message` is for people. */
export interface ErrorInfo {
  code: string;
  message: string;
  /** Optional structured detail (for example ajv's failing paths). Must be JSON-safe. */
  detail?: unknown;
}

export type Ok<T> = { ok: true; value: T };
export type Err = { ok: false; error: ErrorInfo };
export type Result<T> = Ok<T> | Err;

/** Wrap a value as a success. */
export function ok<T>(value: T): Ok<T> {
  return { ok: true, value };
}

/** Build a failure; `detail` must be JSON-serialisable. */
export function err(code: string, message: string, detail?: unknown): Err {
  return detail === undefined ? { ok: false, error: { code, message } } : { ok: false, error: { code, message, detail } };
}

/** Turn anything thrown into an ErrorInfo without leaking stack traces across a boundary. */
export function toErrorInfo(e: unknown, code = 'internal'): ErrorInfo {
  if (e && typeof e === 'object' && 'code' in e && 'message' in e && typeof (e as ErrorInfo).code === 'string') {
    return { code: (e as ErrorInfo).code, message: String((e as ErrorInfo).message) };
  }
  return { code, message: e instanceof Error ? e.message : String(e) };
}
