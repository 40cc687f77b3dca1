/**
 * The one UTF-8 truncation and the one result bounding, used by the extension
 * (before a result crosses the link) and by the broker (before the agent sees
 * it): redacted first (src/shared/redact.ts, so a secret cut in half by the
 * truncation cannot slip past the redactor), then cut to LIMITS.maxResultBytes
 * UTF-8 bytes on a character boundary and marked truncated.
 *
 * Pure and platform-neutral (TextEncoder/TextDecoder only): it runs in Node,
 * the service worker and the renderer. test/unit/contracts.test.ts fails if a
 * second definition of either appears elsewhere.
 */
import { LIMITS } from './limits';
import { redactText } from './redact';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * Cut `s` to at most `maxBytes` UTF-8 bytes without splitting a character
 * (a cut never ends inside a multi-byte sequence; a surrogate pair is one
 * 4-byte character). A string that fits is returned unchanged.
 * @param maxBytes the budget in UTF-8 bytes (negative counts as 0).
 * @returns the prefix and whether anything was cut.
 */
export function truncateUtf8(s: string, maxBytes: number): { text: string; truncated: boolean } {
  const bytes = encoder.encode(s);
  if (bytes.length <= maxBytes) return { text: s, truncated: false };
  let end = Math.max(0, Math.floor(maxBytes));
  // Back off continuation bytes (10xxxxxx) so the cut falls between characters.
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--;
  return { text: decoder.decode(bytes.subarray(0, end)), truncated: true };
}

/** A bounded result: still UNTRUSTED page text. */
export interface BoundedText {
  text: string;
  /** Whether the text was cut to the budget. */
  truncated: boolean;
  /** Whether the redactor replaced anything. */
  redacted: boolean;
  /** UTF-8 bytes of the text before bounding. */
  originalBytes: number;
}

/**
 * Redact likely secrets, then bound to `maxBytes` UTF-8 bytes.
 * @param maxBytes default LIMITS.maxResultBytes (256 KiB).
 */
export function boundText(text: string, maxBytes: number = LIMITS.maxResultBytes): BoundedText {
  const r = redactText(text);
  const t = truncateUtf8(r.value, maxBytes);
  return { text: t.text, truncated: t.truncated, redacted: r.redacted, originalBytes: encoder.encode(text).length };
}

/**
 * `boundText` in the shape of an InvocationResult's fields (the extension's
 * answer over the link): `null` stays `null`; `alreadyTruncated` (the page
 * side already cut it) is kept.
 */
export function boundResult(result: string | null, alreadyTruncated: boolean): { result: string | null; truncated: boolean; redacted: boolean } {
  if (result === null) return { result: null, truncated: alreadyTruncated, redacted: false };
  const b = boundText(result);
  return { result: b.text, truncated: alreadyTruncated || b.truncated, redacted: b.redacted };
}
