/**
 * The one UTF-8 truncation and the one result bounding, used by the extension
 * (before a result crosses the link) and by the broker (before the agent sees
 * it): capped at LIMITS.maxRedactInputBytes, redacted whole (src/shared/redact.ts,
 * so a secret cut in half by the truncation cannot slip past the redactor, and
 * one nested past the result limit is still seen in its JSON context), then cut
 * to LIMITS.maxResultBytes UTF-8 bytes on a character boundary and marked truncated.
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
  // Every UTF-16 unit is at least one UTF-8 byte: a longer string is cut by
  // units first, so a 100 MiB result is never encoded whole. A surrogate half
  // left at the end of the slice lies past byte maxBytes and is cut below.
  if (s.length > maxBytes + 1) s = s.slice(0, Math.max(0, Math.floor(maxBytes)) + 1);
  const bytes = encoder.encode(s);
  if (bytes.length <= maxBytes) return { text: s, truncated: false };
  let end = Math.max(0, Math.floor(maxBytes));
  // Back off continuation bytes (10xxxxxx) so the cut falls between characters.
  while (end > 0 && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--;
  return { text: decoder.decode(bytes.subarray(0, end)), truncated: true };
}

/** UTF-8 byte length of `s` without encoding it (a lone surrogate counts 3, as TextEncoder writes U+FFFD). */
export function utf8Length(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
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
 * Cap, redact, then bound: the text is first cut to LIMITS.maxRedactInputBytes
 * (4 MiB), redacted whole (structurally when it is JSON text, so a secret
 * nested anywhere in the 4 MiB is found), and only then cut to `maxBytes`.
 * @param maxBytes default LIMITS.maxResultBytes (256 KiB).
 * @param cut the text is already a prefix of a longer one (the page side cut
 *   it): its trailing partial word is dropped, as it is when the cap cuts.
 */
export function boundText(text: string, maxBytes: number = LIMITS.maxResultBytes, cut = false): BoundedText {
  const capped = truncateUtf8(text, LIMITS.maxRedactInputBytes);
  const r = redactText(capped.text, { cut: cut || capped.truncated });
  const t = truncateUtf8(r.value, maxBytes);
  return { text: t.text, truncated: t.truncated || capped.truncated, redacted: r.redacted, originalBytes: utf8Length(text) };
}

/**
 * `boundText` in the shape of an InvocationResult's fields (the extension's
 * answer over the link): `null` stays `null`; `alreadyTruncated` (the page
 * side already cut it) is kept.
 */
export function boundResult(result: string | null, alreadyTruncated: boolean): { result: string | null; truncated: boolean; redacted: boolean } {
  if (result === null) return { result: null, truncated: alreadyTruncated, redacted: false };
  const b = boundText(result, LIMITS.maxResultBytes, alreadyTruncated);
  return { result: b.text, truncated: alreadyTruncated || b.truncated, redacted: b.redacted };
}
