/**
 * Structural redaction at every size (issue 8 item 6): src/shared/redact-json.ts
 * through redactText and boundText. JSON results are scanned in one pass that
 * works on a cut prefix, so a secret nested past the old 512 KiB cut is hidden;
 * the rest of the text is kept byte for byte; hostile shapes (deep nesting,
 * huge strings, many keys) complete, and what cannot be read fails closed.
 *
 * Credential-shaped strings are assembled from parts so that secret scanners do
 * not flag this file; none is a real credential.
 */
import { describe, expect, it } from 'vitest';
import { boundText, boundResult, utf8Length } from '../../src/shared/bounds';
import { LIMITS, utf8Bytes } from '../../src/shared/limits';
import { MAX_REDACT_DEPTH, redactText, redactionMarker as R } from '../../src/shared/redact';

const j = (...parts: string[]): string => parts.join('');
const GITHUB = j('gh', 'p_', 'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8');
const KiB = 1024;

/** Ordinary rows of ~200 bytes each, enough to push what follows past `bytes`. */
function padding(bytes: number): Array<Record<string, unknown>> {
  const n = Math.ceil(bytes / 200);
  return Array.from({ length: n }, (_, i) => ({ id: i, sku: `AB-${1000 + i}`, title: `Blue ceramic mug no. ${i}`, note: 'Dishwasher safe, holds 350 ml, ships in 2 days.'.padEnd(120, '.') }));
}

/** A secret nested `depth` objects deep under ordinary keys, beneath a sensitive one. */
function nest(depth: number, leaf: unknown): unknown {
  let v = leaf;
  for (let i = 0; i < depth; i++) v = { [`level${i}`]: v, ok: true };
  return v;
}

/**
 * Nested secrets beyond 512 KiB: [label, input, exact expected output], in the
 * form of test/unit/redact.test.ts's positives table.
 */
const BIG_POSITIVES: [string, string, string][] = (() => {
  const rows = padding(600 * KiB);
  const cases: Array<[string, unknown, unknown]> = [
    ['session object 40 deep past 600 KiB', { rows, account: nest(40, { session: { id: 'S3ss10nValue', exp: 1 } }) }, { rows, account: nest(40, { session: R('session') }) }],
    ['password string 20 deep past 600 KiB', { rows, a: nest(20, { profile: { password: 'hunter2-pw' } }) }, { rows, a: nest(20, { profile: { password: R('password') } }) }],
    ['cookie array past 600 KiB', { rows, cookies: [{ n: 1 }], deep: nest(10, { 'set-cookie': ['sid=abc; Path=/', 'x=1'] }) }, { rows, cookies: [{ n: 1 }], deep: nest(10, { 'set-cookie': R('cookie') }) }],
    ['name/value pair, value first, past 600 KiB', { rows, har: nest(5, { headers: [{ value: 'Bearer abc.def-123', name: 'Authorization' }] }) }, { rows, har: nest(5, { headers: [{ value: R('authorization'), name: 'Authorization' }] }) }],
    ['provider key in a string past 600 KiB', { rows, log: nest(30, { line: `used ${GITHUB} to push` }) }, { rows, log: nest(30, { line: `used ${R('api-key')} to push` }) }],
    ['JSON text inside a string past 600 KiB', { rows, content: [{ type: 'text', text: JSON.stringify({ user: 'ann', apiKey: 'k-77-secret' }) }] }, { rows, content: [{ type: 'text', text: JSON.stringify({ user: 'ann', apiKey: R('apikey') }) }] }],
  ];
  return cases.map(([label, input, expected]) => [label, JSON.stringify(input), JSON.stringify(expected)]);
})();

describe('positives: nested secrets beyond 512 KiB', () => {
  it.each(BIG_POSITIVES)('%s', (_label, input, expected) => {
    expect(utf8Bytes(input)).toBeGreaterThan(512 * KiB);
    const r = redactText(input);
    expect(r.redacted).toBe(true);
    expect(r.value === expected).toBe(true); // not toBe: a 600 KiB diff helps nobody
  });
  it.each(BIG_POSITIVES)('%s: bounded for the agent, nothing of the secret is left and the ordinary rows are', (_label, input) => {
    const b = boundText(input);
    expect(b).toMatchObject({ truncated: true, redacted: true });
    expect(utf8Bytes(b.text)).toBe(LIMITS.maxResultBytes);
    for (const s of ['S3ss10nValue', 'hunter2-pw', 'sid=abc', 'abc.def-123', GITHUB, 'k-77-secret']) expect(b.text.includes(s)).toBe(false);
    expect(b.text.startsWith('{"rows":[{"id":0,"sku":"AB-1000","title":"Blue ceramic mug no. 0"')).toBe(true);
  });
  it('a secret placed just past the result limit, under a sensitive key that opens before it, is hidden in the bounded text', () => {
    const rows = padding(LIMITS.maxResultBytes - 2 * KiB);
    const text = JSON.stringify({ rows, auth: { credentials: { note: 'x'.repeat(4 * KiB), key: 'LEAK-ME-42' } } });
    const b = boundText(text);
    expect(b.text.includes('LEAK-ME')).toBe(false);
    expect(b.text.endsWith(`"auth":{"credentials":"${R('secret')}"}}`)).toBe(true);
    expect(b.truncated).toBe(false);
  });
});

describe('the JSON scan', () => {
  it('keeps untouched text byte for byte: formatting, escapes, 16+ digit ids', () => {
    const text = '{ "id": 1234567890123456789,\n  "name": "caf\\u00e9",\n  "token": "t0k3n-value" }';
    expect(redactText(text).value).toBe(`{ "id": 1234567890123456789,\n  "name": "caf\\u00e9",\n  "token": "${R('token')}" }`);
  });
  it('hides name/value pairs whichever comes first, and keeps ordinary pairs', () => {
    const text = JSON.stringify([{ name: 'Cookie', value: { a: 1 } }, { value: 'Basic dXNlcjpwYXNz', header: 'Proxy-Authorization' }, { name: 'Accept', value: 'text/html' }]);
    expect(JSON.parse(redactText(text).value)).toEqual([{ name: 'Cookie', value: R('cookie') }, { value: R('authorization'), header: 'Proxy-Authorization' }, { name: 'Accept', value: 'text/html' }]);
  });
  it('keeps null and booleans under sensitive keys', () => {
    expect(redactText('{"password":null,"otp":true}')).toEqual({ value: '{"password":null,"otp":true}', redacted: false });
  });
  it('hides card-like numbers, keeps other numbers', () => {
    expect(redactText('{"n":4111111111111111,"order":200012345678908,"t":1715900000000}').value).toBe(`{"n":"${R('card')}","order":200012345678908,"t":1715900000000}`);
  });
  it('keeps redacted keys distinct', () => {
    expect(JSON.parse(redactText(JSON.stringify({ [GITHUB]: 1, [j('gh', 'p_', 'Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2')]: 2 })).value)).toEqual({ [R('api-key')]: 1, [`${R('api-key')}#2`]: 2 });
  });

  describe('a cut prefix (the text ends inside a value) fails closed', () => {
    it.each([
      ['inside a sensitive object', '{"a":1,"session":{"id":"abc","more":{"x":"y', `{"a":1,"session":"${R('session')}"`],
      ['inside a sensitive string', '{"a":1,"password":"hunter', `{"a":1,"password":"${R('password')}"`],
      ['inside a pair value after its name', '[{"name":"Authorization","value":"Bearer abcdefgh', `[{"name":"Authorization","value":"${R('authorization')}"`],
      ['inside an ordinary string: the text rules run on the tail', `{"log":"pushed with ${GITHUB} ok`, `{"log":"pushed with ${R('api-key')} ok`],
    ])('%s', (_label, text, expected) => {
      expect(redactText(text).value).toBe(expected);
    });
    it('drops the trailing partial word when told the text was cut (half a secret no rule recognises)', () => {
      expect(redactText('{"log":"the code is XyZ12', { cut: true }).value).toBe('{"log":"the code is ');
      expect(redactText('card 4111 1111 1111', { cut: true }).value).toBe('card ');
      expect(redactText('ordinary words', { cut: false }).value).toBe('ordinary words');
    });
  });

  it('falls back to the text rules where the text stops being JSON, keeping the structural edits before', () => {
    const r = redactText('{"session":{"id":"abc"},"x": oops password=hunter2}');
    // (the `key=value` rule takes the value up to white space or a separator, the closing brace included)
    expect(r.value).toBe(`{"session":"${R('session')}","x": oops password=${R('password')}`);
  });
});

describe('hostile shapes complete and fail closed', () => {
  it('a million levels of nesting: hidden past MAX_REDACT_DEPTH, no stack overflow', () => {
    const text = '['.repeat(1_000_000) + '"password=abc"' + ']'.repeat(1_000_000);
    const r = redactText(text);
    expect(r.value).toBe('['.repeat(MAX_REDACT_DEPTH) + JSON.stringify(R('too-deep')) + ']'.repeat(MAX_REDACT_DEPTH));
    const unclosed = '{"a":'.repeat(500_000);
    expect(redactText(unclosed).value).toBe('{"a":'.repeat(MAX_REDACT_DEPTH) + JSON.stringify(R('too-deep')));
  });
  it('a 4 MiB string, a 4 MiB base64 run and 200,000 keys', () => {
    const huge = JSON.stringify({ s: 'word '.repeat(800_000), token: 'x'.repeat(1_000_000) });
    expect(redactText(huge).value).toBe(JSON.stringify({ s: 'word '.repeat(800_000), token: R('token') }));
    const run = 'Xy7'.repeat(1_400_000);
    expect(redactText(`key ${run} end`).value).toBe(`key ${R('base64')} end`);
    const many = JSON.stringify(Object.fromEntries(Array.from({ length: 200_000 }, (_, i) => [`k${i}`, i % 1000 === 0 ? { secret: i } : i])));
    const r = JSON.parse(redactText(many).value) as Record<string, unknown>;
    expect(Object.keys(r).length).toBe(200_000);
    expect(r.k1000).toEqual({ secret: R('secret') });
    expect(r.k999).toBe(999);
  });
  it('regex-hostile text: long runs of label characters, colons and spaces', () => {
    const text = `${'a:'.repeat(300_000)} ${'a '.repeat(300_000)}${' '.repeat(500_000)}password`;
    expect(redactText(text).value).toBe(text);
  });
});

describe('boundText: cap, redact, then cut', () => {
  it(`caps the input at LIMITS.maxRedactInputBytes (${LIMITS.maxRedactInputBytes} bytes) and reports the original size`, () => {
    const text = JSON.stringify({ rows: padding(LIMITS.maxRedactInputBytes + 100 * KiB) });
    const b = boundText(text);
    expect(b.truncated).toBe(true);
    expect(b.originalBytes).toBe(utf8Bytes(text));
    expect(utf8Bytes(b.text)).toBeLessThanOrEqual(LIMITS.maxResultBytes);
  });
  it('a sensitive value cut off by the cap stays hidden, and content after a large hidden value reaches the agent', () => {
    const text = JSON.stringify({ a: 1, cookie: { jar: 'c'.repeat(LIMITS.maxRedactInputBytes) }, after: 'never read' });
    expect(boundText(text).text).toBe(`{"a":1,"cookie":"${R('cookie')}"`);
    const shrinking = JSON.stringify({ secret: 's'.repeat(2 * 1024 * KiB), after: 'kept' });
    expect(boundText(shrinking)).toMatchObject({ text: `{"secret":"${R('secret')}","after":"kept"}`, truncated: false, redacted: true });
  });
  it('boundResult passes the page side\'s cut on, so the trailing partial word is dropped', () => {
    expect(boundResult('{"note":"see code ABCD12', true)).toEqual({ result: '{"note":"see code ', truncated: true, redacted: false });
  });
  it('utf8Length counts what TextEncoder writes', () => {
    for (const s of ['', 'abc', 'é', '€', '😀', '\ud800', 'a\udc00b', 'Grüße 🍺']) expect(utf8Length(s)).toBe(utf8Bytes(s));
  });
});
