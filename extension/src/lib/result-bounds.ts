/**
 * Bounds on what a page's tool hands back: redaction of likely secrets
 * (src/shared/redact.ts) and the LIMITS.maxResultBytes cap. Pure (unit-tested).
 */
import { LIMITS, utf8Bytes } from '../../../src/shared/limits';
import { redactText } from '../../../src/shared/redact';
import type { InvocationResult } from '../../../src/shared/types';

/** Cut a UTF-8 string to at most `maxBytes` bytes at a code point boundary. */
export function truncateUtf8(s: string, maxBytes: number): { text: string; truncated: boolean } {
  if (utf8Bytes(s) <= maxBytes) return { text: s, truncated: false };
  const bytes = new TextEncoder().encode(s).slice(0, maxBytes);
  // TextDecoder drops a cut multi-byte sequence at the end as U+FFFD; remove that.
  let text = new TextDecoder().decode(bytes);
  if (text.endsWith('\uFFFD')) text = text.slice(0, -1);
  return { text, truncated: true };
}

/**
 * Bound and redact a tool result: redacted first (src/shared/redact.ts, so a
 * secret is judged whole), then cut to LIMITS.maxResultBytes UTF-8 bytes.
 */
export function boundResult(result: string | null, alreadyTruncated: boolean): Pick<InvocationResult, 'result' | 'truncated' | 'redacted'> {
  if (result === null) return { result: null, truncated: alreadyTruncated, redacted: false };
  const r = redactText(result);
  const cut = truncateUtf8(r.value, LIMITS.maxResultBytes);
  return { result: cut.text, truncated: alreadyTruncated || cut.truncated, redacted: r.redacted };
}
