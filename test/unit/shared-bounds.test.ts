// The one UTF-8 truncation and result bounding (src/shared/bounds.ts), used by
// the extension and by the broker.
import { describe, expect, it } from 'vitest';
import { boundText, truncateUtf8 } from '../../src/shared/bounds';
import { LIMITS, utf8Bytes } from '../../src/shared/limits';

describe('truncateUtf8', () => {
  it('never splits a character and never exceeds the budget', () => {
    const s = 'aé€😀b';
    for (let max = 0; max <= utf8Bytes(s) + 1; max++) {
      const t = truncateUtf8(s, max);
      expect(utf8Bytes(t.text)).toBeLessThanOrEqual(max);
      expect(s.startsWith(t.text)).toBe(true);
      expect(t.truncated).toBe(max < utf8Bytes(s));
    }
  });
  it('keeps a U+FFFD that the text really ends with', () => {
    expect(truncateUtf8('ab\uFFFDcd', 5)).toEqual({ text: 'ab\uFFFD', truncated: true });
  });
  it('treats a negative budget as zero', () => {
    expect(truncateUtf8('abc', -4)).toEqual({ text: '', truncated: true });
  });
});

describe('boundText', () => {
  it('redacts before it cuts, and reports the original size in bytes', () => {
    const secret = JSON.stringify({ password: 'hunter2-hunter2' });
    const b = boundText(secret, 16);
    expect(b.redacted).toBe(true);
    expect(b.text).not.toContain('hunter2');
    expect(b.truncated).toBe(true);
    expect(b.originalBytes).toBe(utf8Bytes(secret));
  });
  it('defaults to LIMITS.maxResultBytes', () => {
    const b = boundText('é'.repeat(LIMITS.maxResultBytes));
    expect(b.truncated).toBe(true);
    expect(utf8Bytes(b.text)).toBe(LIMITS.maxResultBytes);
  });
});
