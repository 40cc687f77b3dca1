/**
 * src/shared/redact.ts: a table of strings that must be redacted (with the exact
 * output) and of ordinary text that must come out unchanged, the sensitive-key
 * matcher, and the structural walk (nesting, no mutation, cycles, depth,
 * __proto__, JSON text, digests and ids).
 *
 * Credential-shaped test strings are assembled from parts at run time so that
 * secret scanners do not flag this file; none of them is a real credential.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { MAX_REDACT_DEPTH, luhnValid, redact, redactText, redactionMarker, sensitiveKeyRule } from '../../src/shared/redact';

const j = (...parts: string[]): string => parts.join('');
const JWT = j('eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9', '.', 'eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIn0', '.', 'SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c');
const OPENAI = j('sk', '-proj-', 'Ab3dEf6hIj9kLm2nOp5qRs8tUv1w');
const GITHUB = j('gh', 'p_', 'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8');
const GITHUB_PAT = j('github', '_pat_', '11ABCDEFG0', 'abcdefghijklmnopqrstuvwxyz0123');
const AWS_ID = j('AK', 'IA', 'IOSFODNN7EXAMPLE');
const AWS_SECRET = j('wJalrXUtnFEMI', '/K7MDENG/', 'bPxRfiCYEXAMPLEKEY'); // AWS documentation's example key
const GOOGLE = j('AI', 'za', 'SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q');
const SLACK = j('xo', 'xb-', '1234567890-abcdefghij');
const STRIPE = j('sk', '_live_', '4eC39HqLyjWDarjtT1zdp7dc');
const GITLAB = j('gl', 'pat-', 'x9Y8w7V6u5T4s3R2q1P0');
const HEX32 = '9f86d081884c7d659a2feaa0c55ad015';
const HEX64 = '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08';
const GIT_SHA = '3f9ac2e01b7d44d7a6e8b16c3f6e7d2a91b0c4de';
const B64_KEY = j('Zm9vYmFy', 'X3NlY3JldF9rZXlfMTIzNDU2Nzg5MA', 'Qk1aXy9+K3Rva2Vu');
const PEM = j('-----BEGIN ', 'RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7v1Hq0bXQ\nZk9vYmFyYmF6cXV4\n-----END ', 'RSA PRIVATE KEY-----');
const PEM_PKCS8 = j('-----BEGIN ', 'PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END ', 'PRIVATE KEY-----');
const R = redactionMarker;

/** [label, input, exact expected output] */
const POSITIVES: [string, string, string][] = [
  ['query token', 'https://api.example.com/v1/items?page=2&access_token=abc123XYZ', `https://api.example.com/v1/items?page=2&access_token=${R('token')}`],
  ['query api_key', 'GET /data?api_key=k-77&q=cats', `GET /data?api_key=${R('apikey')}&q=cats`],
  ['env line', 'export API_KEY="abc def"', `export API_KEY=${R('apikey')}`],
  ['password=', 'login password=hunter2 ok', `login password=${R('password')} ok`],
  ['html attribute', '<input value=x password="pa ss">', `<input value=x password=${R('password')}>`],
  ['url userinfo', 'postgres://app:s3cret@db.internal:5432/app', `postgres://app:${R('password')}@db.internal:5432/app`],
  ['jwt alone', JWT, R('jwt')],
  ['jwt in quoted header', `curl -H "Authorization: Bearer ${JWT}"`, `curl -H "Authorization: ${R('authorization')}"`],
  ['jwt in prose', `the token was ${JWT}, it expired`, `the token was ${R('jwt')}, it expired`],
  ['bearer opaque', 'use Bearer abc.def-123_xyz now', `use Bearer ${R('bearer')} now`],
  ['bearer long letters', 'bearer abcdefghijklmnopqrstuvwxyz', `bearer ${R('bearer')}`],
  ['basic credentials', 'Basic dXNlcjpwYXNzd29yZA==', `Basic ${R('bearer')}`],
  ['authorization header line', 'Authorization: Bearer abc.def-123', `Authorization: ${R('authorization')}`],
  ['cookie header line', 'Cookie: sessionid=abc123; csrftoken=xyz', `Cookie: ${R('cookie')}`],
  ['set-cookie header line', 'set-cookie: id=a3fWa; Max-Age=2592000', `set-cookie: ${R('cookie')}`],
  ['x-api-key header', 'X-Api-Key: 12345abcde', `X-Api-Key: ${R('apikey')}`],
  ['json fragment in text', 'body was {"user": "ann", "password": "pw"} (sent)', `body was {"user": "ann", "password": "${R('password')}"} (sent)`],
  ['json fragment number pin', 'got {"pin": 4821}', `got {"pin": "${R('pin')}"}`],
  ['password label, plain word', 'password: correcthorse', `password: ${R('password')}`],
  ['PIN label', 'Your PIN: 4821', `Your PIN: ${R('pin')}`],
  ['OTP label', 'OTP: 123456', `OTP: ${R('otp')}`],
  ['token label, secret-shaped', 'token: abc123def', `token: ${R('token')}`],
  ['openai-style key', `key ${OPENAI} end`, `key ${R('api-key')} end`],
  ['github token', GITHUB, R('api-key')],
  ['github fine-grained token', GITHUB_PAT, R('api-key')],
  ['aws access key id', `id=${AWS_ID}`, `id=${R('api-key')}`],
  ['aws secret (base64, 40)', `secret is ${AWS_SECRET}`, `secret is ${R('base64')}`],
  ['google api key', GOOGLE, R('api-key')],
  ['slack token', SLACK, R('api-key')],
  ['stripe key', STRIPE, R('api-key')],
  ['gitlab token', GITLAB, R('api-key')],
  ['hex under a secret label', `client_secret=${HEX32}`, `client_secret=${R('secret')}`],
  ['hex in an api key header', `X-Api-Key: ${HEX64}`, `X-Api-Key: ${R('apikey')}`],
  ['base64 key', `k=${B64_KEY}`, `k=${R('base64')}`],
  ['slack webhook', j('https://hooks.slack.com/services/', 'T0A1B2C3D/B4E5F6G7H/', 'abcDEF123ghiJKL456mnoPQR'), `https://hooks.slack.com/services/${R('webhook')}`],
  ['discord webhook', j('see https://discord.com/api/webhooks/', '112233445566778899/', 'Ab1_Cd2-Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv1Wx2Yz3'), `see https://discord.com/api/webhooks/${R('webhook')}`],
  ['access token inside a share link', 'https://docs.example/d/x1?share=Q2hpY2tlbi1hbmQtZWdncy1mb3ItYnJlYWtmYXN0&access_token=abc123XYZ', `https://docs.example/d/x1?share=Q2hpY2tlbi1hbmQtZWdncy1mb3ItYnJlYWtmYXN0&access_token=${R('token')}`],
  ['base64url key', 'tok: Xy7_aB3-cD9eF1gH2iJ4kL5mN6oP7qR8sT9uV0wZ1yA', `tok: ${R('base64')}`],
  ['visa spaced', 'card 4111 1111 1111 1111 exp 12/29', `card ${R('card')} exp 12/29`],
  ['visa dashed', '4111-1111-1111-1111', R('card')],
  ['visa contiguous', '4111111111111111', R('card')],
  ['amex 4-6-5', 'Amex 3782 822463 10005.', `Amex ${R('card')}.`],
  ['mastercard', '5555555555554444', R('card')],
  ['mastercard 2-series', '2223003122003222', R('card')],
  ['discover', '6011111111111117', R('card')],
  ['pem rsa block', `key:\n${PEM}\nafter`, `key:\n${R('private-key')}\nafter`],
  ['pem pkcs8 block', PEM_PKCS8, R('private-key')],
  ['pem unterminated', j('x -----BEGIN ', 'EC PRIVATE KEY-----\nMHcCAQEEI'), `x ${R('private-key')}`],
];

/** Ordinary text that must come back unchanged. */
const NEGATIVES: [string, string][] = [
  ['token as a word', 'Each token costs $0.002; the token limit is 4096 tokens.'],
  ['token label with prose', 'Token: a unit of text.'],
  ['session label with a word', 'Session: Tuesday'],
  ['password in prose', 'Forgot your password? Password must be at least 12 characters.'],
  ['secret in prose', 'The secret to good bread is time.'],
  ['bearer in prose', 'The bearer of this letter is a friend.'],
  ['basic in prose', 'Basic principles of design'],
  ['url without secrets', 'https://example.com/docs/getting-started?page=2&sort=asc#install'],
  ['github url', 'https://github.com/openai/whisper/blob/main/README.md'],
  ['url with user name only', 'ssh://git@github.com/o/r.git'],
  ['url with object id', 'https://shop.example.com/api/orders/507f1f77bcf86cd799439011/items'],
  ['url with uuid', 'https://example.com/users/550e8400-e29b-41d4-a716-446655440000/profile/settings'],
  ['uuid', '550e8400-e29b-41d4-a716-446655440000'],
  ['iso date-time', '2024-05-17T12:34:56.789Z'],
  ['iso date', 'due 2024-05-17'],
  ['phone us', '+1 (415) 555-0132'],
  ['phone uk', '+44 20 7946 0958'],
  ['phone dashed', '415-555-0132'],
  ['13 digits starting with 1', '1234567890123'],
  ['epoch milliseconds', '1715900000000'],
  ['card-like failing luhn', '4111 1111 1111 1112'],
  ['isbn', 'ISBN 978-3-16-148410-0'],
  ['product ids', 'Order #12345, SKU AB-1234-XY, product id 987654'],
  ['short numbers', '42 3.14 -7 1e6'],
  ['price', 'Price: 1,299.00 EUR'],
  ['llm parameters', 'max_tokens=256&temperature=0.2'],
  ['short hex', 'color #deadbeef and id 9f86d081'],
  ['slug', 'How-To-Configure-Nginx-Reverse-Proxy-In-2024-Guide-Complete'],
  ['camel case identifier', 'getUserAccountSettingsForOrganization2FAEnabled'],
  ['sk- without digits', 'see sk-learn-tutorial-for-beginners'],
  ['one character class', 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'],
  ['file path', 'src/main/core/ledger/input.test.ts'],
  ['pinned option', 'pinned: true, spin: 3'],
  ['empty', ''],
  ['unicode prose', 'Grüße aus München 🍺: Passwort vergessen?'],
  // Hex is not hidden by shape (issue 8 item 6): commits, SHA-1/256, MD5 and ids keep their value.
  ['hex 32', `md5 ${HEX32}`],
  ['hex 64 after a digest label', `digest: ${HEX64}.`],
  ['0x hex 64 (a transaction hash)', `0x${HEX64}`],
  ['git sha in prose', `fixed in ${GIT_SHA}`],
  ['git sha in a URL', `https://github.com/o/r/commit/${GIT_SHA}`],
  // Share links are capabilities the person passes on: their tokens stay.
  ['share link', 'https://docs.example/d/8fKq2?share=Xy7_aB3-cD9eF1gH2iJ4kL5mN6oP7qR8sT9uV0wZ1yA'],
  ['invite link', 'Join us: https://app.example.com/join?invite=Zm9vYmFyX3NlY3JldF9rZXlfMTIzNDU2Nzg5MA'],
  ['google docs link', 'https://docs.google.com/document/d/1aBcD3fGh5JkL7nPq9RsT1vWx3Yz5AbC7dEf9GhIjK/edit?usp=sharing'],
  ['data: image', 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=='],
  ['SRI integrity', 'sha384-oqVuAfXRKap7fdgcCY5uykM6+R9GqQ8K/uxy9rx7HNQlGYl1kPzQho1wx4JwY8wC'],
  ['15-digit order number starting 200', 'Order 200012345678908 shipped'],
];

describe('redactText: positives', () => {
  it.each(POSITIVES)('%s', (_label, input, expected) => {
    const r = redactText(input);
    expect(r.value).toBe(expected);
    expect(r.redacted).toBe(true);
  });
  it.each(POSITIVES)('%s: redacting again changes nothing', (_label, input) => {
    const once = redactText(input).value;
    expect(redactText(once)).toEqual({ value: once, redacted: false });
  });
});

describe('redactText: ordinary text is unchanged', () => {
  it.each(NEGATIVES)('%s', (_label, input) => {
    expect(redactText(input)).toEqual({ value: input, redacted: false });
  });
});

describe('redactText on JSON text (tool results arrive as JSON strings)', () => {
  it('redacts structurally, keeping the rest of the text byte for byte', () => {
    const text = JSON.stringify({ user: { name: 'ann', session: { id: 'x', exp: 1 } }, n: 1 }, null, 2);
    const expected = JSON.stringify({ user: { name: 'ann', session: R('session') }, n: 1 }, null, 2);
    expect(redactText(text)).toEqual({ value: expected, redacted: true });
  });
  it('keeps the original text, formatting included, when nothing is hidden', () => {
    const text = '{ "a": [1, 2],\n  "b": "plain" }';
    expect(redactText(text)).toEqual({ value: text, redacted: false });
  });
  it('treats invalid JSON as plain text', () => {
    expect(redactText('{"password": "pw", oops').value).toBe(`{"password": "${R('password')}", oops`);
  });
});

describe('sensitiveKeyRule', () => {
  const sensitive: [string, string][] = [
    ['password', 'password'], ['Password', 'password'], ['PASS_WORD', 'password'], ['passwd', 'password'], ['passcode', 'password'],
    ['pin', 'pin'], ['PIN', 'pin'], ['token', 'token'], ['access_token', 'token'], ['refresh-token', 'token'], ['githubToken', 'token'],
    ['secret', 'secret'], ['client_secret', 'secret'], ['authorization', 'authorization'], ['Proxy-Authorization', 'authorization'],
    ['cookie', 'cookie'], ['Set-Cookie', 'cookie'], ['session', 'session'], ['sessionId', 'session'], ['PHPSESSID', 'session'],
    ['otp', 'otp'], ['api key', 'apikey'], ['apiKey', 'apikey'], ['api_key', 'apikey'], ['x-api-key', 'apikey'], ['X-API-KEY', 'apikey'],
    ['private_key', 'privatekey'], ['db_password', 'password'], ['cvv', 'card'],
  ];
  it.each(sensitive)('%s is sensitive (%s)', (key, rule) => {
    expect(sensitiveKeyRule(key)).toBe(rule);
  });
  it.each(['max_tokens', 'tokenCount', 'token_count', 'pinned', 'spin', 'passenger', 'author', 'cookies_enabled', 'secretary', 'sessions', 'description', 'keyboard', 'id', ''])(
    '%s is not sensitive',
    (key) => {
      expect(sensitiveKeyRule(key)).toBeNull();
    },
  );
});

describe('luhnValid (ISO/IEC 7812-1 Annex B)', () => {
  it.each([['4111111111111111', true], ['79927398713', true], ['4111111111111112', false], ['', false], ['12a4', false]] as const)('%s → %s', (d, ok) => {
    expect(luhnValid(d)).toBe(ok);
  });
});

describe('redact: structured values', () => {
  it('replaces values under sensitive keys whole, at any depth, and walks arrays', () => {
    const input = {
      user: 'ann',
      Password: 'pw',
      nested: { 'api key': { v: 1 }, list: [{ refresh_token: 'r' }, { note: `see ${OPENAI}` }], count: 3 },
      pin: 1234,
      headers: [
        { name: 'Authorization', value: 'Bearer x' },
        { name: 'Accept', value: 'text/html' },
      ],
    };
    expect(redact(input)).toEqual({
      value: {
        user: 'ann',
        Password: R('password'),
        nested: { 'api key': R('apikey'), list: [{ refresh_token: R('token') }, { note: `see ${R('api-key')}` }], count: 3 },
        pin: R('pin'),
        headers: [
          { name: 'Authorization', value: R('authorization') },
          { name: 'Accept', value: 'text/html' },
        ],
      },
      redacted: true,
    });
  });

  it('keeps null and booleans under sensitive keys (they carry no secret)', () => {
    expect(redact({ password: null, otp: true, token: false })).toEqual({ value: { password: null, otp: true, token: false }, redacted: false });
  });

  it('redacts a plain string, and passes other primitives through', () => {
    expect(redact('password=x')).toEqual({ value: `password=${R('password')}`, redacted: true });
    expect(redact(42)).toEqual({ value: 42, redacted: false });
    expect(redact(null)).toEqual({ value: null, redacted: false });
    expect(redact(undefined)).toEqual({ value: undefined, redacted: false });
    expect(redact(4111111111111111)).toEqual({ value: R('card'), redacted: true });
  });

  it('never mutates its input', () => {
    const input = { a: { password: 'pw', list: [JWT, { token: 't' }] }, s: `k ${HEX32}` };
    const before = structuredClone(input);
    const r = redact(input);
    expect(input).toEqual(before);
    expect(r.value).not.toBe(input);
    expect(r.redacted).toBe(true);
  });

  it('works on frozen input', () => {
    const input = Object.freeze({ token: 'x', inner: Object.freeze({ ok: 1 }) });
    expect(redact(input).value).toEqual({ token: R('token'), inner: { ok: 1 } });
  });

  it('turns cycles into a marker and copies shared references', () => {
    const a: Record<string, unknown> = { name: 'a' };
    a.self = a;
    const arr: unknown[] = [1];
    arr.push(arr);
    const shared = { x: 1 };
    const r = redact({ a, arr, one: shared, two: shared });
    expect(r.value).toEqual({ a: { name: 'a', self: R('cycle') }, arr: [1, R('cycle')], one: { x: 1 }, two: { x: 1 } });
    expect(r.redacted).toBe(true);
    expect(() => JSON.stringify(r.value)).not.toThrow();
  });

  it('survives deep nesting, hiding what lies beyond MAX_REDACT_DEPTH', () => {
    let deep: unknown = 'bottom';
    for (let i = 0; i < 100_000; i++) deep = [deep];
    const r = redact(deep);
    expect(r.redacted).toBe(true);
    let v = r.value;
    for (let i = 0; i < MAX_REDACT_DEPTH; i++) v = (v as unknown[])[0];
    expect(v).toBe(R('too-deep'));
    const shallow = redact({ a: { b: { c: 'fine' } } });
    expect(shallow).toEqual({ value: { a: { b: { c: 'fine' } } }, redacted: false });
  });

  it('keeps a JSON-parsed __proto__ key as an own data property, without touching prototypes', () => {
    const input = JSON.parse('{"__proto__": {"password": "x", "polluted": 1}, "a": 1}') as object;
    const r = redact(input);
    const out = r.value as Record<string, unknown>;
    expect(Object.keys(out)).toEqual(['__proto__', 'a']);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.getOwnPropertyDescriptor(out, '__proto__')?.value).toEqual({ password: R('password'), polluted: 1 });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(JSON.stringify(out)).toBe(`{"__proto__":{"password":"${R('password')}","polluted":1},"a":1}`);
  });

  it('keeps hex digests and ids, and base64 under digest- and id-named keys; hides them under secret keys', () => {
    const docId = 'A1B2C3D4E5F60718293A4B5C6D7E8F90';
    const input = { descriptorHash: HEX64, documentId: docId, commit: GIT_SHA, sha256s: [HEX64], note: HEX64, checksum: B64_KEY, other: B64_KEY, sessionId: HEX32 };
    const expected = { ...input, other: R('base64'), sessionId: R('session') };
    expect(redact(input).value).toEqual(expected);
    expect(JSON.parse(redactText(JSON.stringify(input)).value)).toEqual(expected);
  });

  it('redacts secrets in keys, keeping keys distinct', () => {
    const r = redact({ [GITHUB]: 1, [GITLAB]: 2, plain: 3 });
    expect(r.value).toEqual({ [R('api-key')]: 1, [`${R('api-key')}#2`]: 2, plain: 3 });
  });

  it('uses toJSON (Date), and hides what cannot be read', () => {
    const hostile = {
      get boom(): string {
        throw new Error('no');
      },
    };
    const r = redact({ when: new Date(0), hostile });
    expect(r.value).toEqual({ when: '1970-01-01T00:00:00.000Z', hostile: R('unreadable') });
  });
});

describe('redact.ts stays portable', () => {
  it.each(['redact.ts', 'redact-json.ts', 'redact-shapes.ts', 'redact-keys.ts'])('%s has no node: imports or require (it runs in the extension), only its sibling', (file) => {
    const src = readFileSync(fileURLToPath(new URL(`../../src/shared/${file}`, import.meta.url)), 'utf8');
    expect(src).not.toMatch(/from\s+['"]node:|require\(|from\s+['"](fs|path|crypto|os)['"]/);
    for (const line of src.match(/^import .*$/gm) ?? []) expect(line).toMatch(/from '\.\/redact-(json|shapes|keys)';$/);
  });
});

describe('redactText: more shapes', () => {
  it('finds header values inside quoted command lines', () => {
    expect(redactText(`curl -H 'Cookie: a=1; b=2' -H "Accept: text/html" https://x.test`).value).toBe(
      `curl -H 'Cookie: ${R('cookie')}' -H "Accept: text/html" https://x.test`,
    );
  });
  it('does not round 16+ digit ids in JSON text when something else is hidden', () => {
    const text = '{"id": 1234567890123456789, "password": "pw", "n": 1}';
    expect(redactText(text).value).toBe(`{"id": 1234567890123456789, "password": "${R('password')}", "n": 1}`);
  });
});
