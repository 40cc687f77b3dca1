/**
 * Shaping page results before the agent sees them: redacted first (so a secret
 * cut in half by truncation cannot slip past the redactor), then bounded to
 * LIMITS.maxResultBytes on a UTF-8 character boundary and marked truncated.
 */
import { LIMITS } from '../../../shared/limits';
import { redactText } from '../../../shared/redact';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A result ready for the agent: still UNTRUSTED page text. */
export interface ShapedText {
  text: string;
  truncated: boolean;
  redacted: boolean;
  /** UTF-8 bytes of the page's text before shaping. */
  originalBytes: number;
}

/**
 * Truncate `s` to at most `maxBytes` UTF-8 bytes without splitting a character.
 * @returns the prefix and whether anything was cut.
 */
export function truncateUtf8(s: string, maxBytes: number): { text: string; truncated: boolean; bytes: number } {
  const bytes = encoder.encode(s);
  if (bytes.length <= maxBytes) return { text: s, truncated: false, bytes: bytes.length };
  let end = Math.max(0, maxBytes);
  // Back off continuation bytes (10xxxxxx) so the cut falls between characters.
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--;
  return { text: decoder.decode(bytes.subarray(0, end)), truncated: true, bytes: bytes.length };
}

/**
 * Redact likely secrets (src/shared/redact.ts), then bound to `maxBytes`
 * (default LIMITS.maxResultBytes).
 */
export function shapeResult(text: string, maxBytes: number = LIMITS.maxResultBytes): ShapedText {
  const r = redactText(text);
  const t = truncateUtf8(r.value, maxBytes);
  return { text: t.text, truncated: t.truncated, redacted: r.redacted, originalBytes: encoder.encode(text).length };
}
