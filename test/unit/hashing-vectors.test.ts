/**
 * src/shared/canonical.ts against test/vectors/hashing.json, whose expected
 * values come from an independent Python implementation and RFC 8785's own
 * examples (see the file's "source"), with both digest back ends; plus the
 * values that have no canonical form.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  CanonicalizationError,
  argumentsHash,
  canonicalJson,
  descriptorHash,
  fingerprint,
  sha256Hex,
  toHex,
  webCryptoSha256,
  type Sha256,
} from '../../src/shared/canonical';
import { nodeSha256, sha256HexSync } from '../../src/main/core/digest';
import { checkReject, checkVector, type HashingVector, type HashingVectorFile } from '../vectors/check-hashing';

const VECTORS_PATH = fileURLToPath(new URL('../vectors/hashing.json', import.meta.url));
const GENERATOR_PATH = fileURLToPath(new URL('../vectors/generate_hashing.py', import.meta.url));
const file = JSON.parse(readFileSync(VECTORS_PATH, 'utf8')) as HashingVectorFile;
const byName = new Map(file.vectors.map((v) => [v.name, v]));
const vector = (name: string): HashingVector => {
  const v = byName.get(name);
  if (!v) throw new Error(`no vector ${name}`);
  return v;
};

const BACKENDS: [string, Sha256][] = [
  ['webCryptoSha256', webCryptoSha256],
  ['nodeSha256', nodeSha256],
];

describe('hashing vectors file', () => {
  it('has at least 30 uniquely named vectors of every kind, with their derivation noted', () => {
    expect(file.vectors.length).toBeGreaterThanOrEqual(30);
    const names = [...file.vectors, ...file.rejects].map((v) => v.name);
    expect(new Set(names).size).toBe(names.length);
    expect(new Set(file.vectors.map((v) => v.kind))).toEqual(new Set(['canonical', 'descriptor', 'arguments']));
    expect(file.source).toMatch(/independ/i);
    for (const v of file.vectors) expect(v.sha256, v.name).toMatch(/^[0-9a-f]{64}$/);
  });

  it('is exactly what the independent Python generator writes', (ctx) => {
    if (spawnSync('python3', ['--version']).status !== 0) ctx.skip();
    expect(() => execFileSync('python3', [GENERATOR_PATH, '--check'], { stdio: 'pipe' })).not.toThrow();
  });
});

describe.each(BACKENDS)('hashing vectors with %s', (_name, sha256) => {
  it.each(file.vectors.map((v) => [v.name, v] as const))('%s', async (_n, v) => {
    expect(await checkVector(v, sha256)).toEqual([]);
  });
});

describe('hashing vector rejects', () => {
  it.each(file.rejects.map((r) => [r.name, r] as const))('%s throws CanonicalizationError', (_n, r) => {
    expect(checkReject(r)).toEqual([]);
  });
});

describe('the check fails when a vector is altered', () => {
  const base = vector('rfc8785-3.2.3-sorting');
  const flipHex = (h: string): string => (h[0] === '0' ? '1' : '0') + h.slice(1);

  it('passes unaltered', async () => {
    expect(await checkVector(base, nodeSha256)).toEqual([]);
  });
  it('catches an altered expected text', async () => {
    const altered = { ...base, canonical: base.canonical.replace('"1":"One"', '"1":"one"') };
    expect(altered.canonical).not.toBe(base.canonical);
    expect((await checkVector(altered, nodeSha256)).length).toBeGreaterThan(0);
  });
  it('catches an altered expected hash', async () => {
    expect((await checkVector({ ...base, sha256: flipHex(base.sha256) }, nodeSha256)).length).toBeGreaterThan(0);
  });
  it('catches a text and hash altered together', async () => {
    const canonical = base.canonical.replace('"1":"One"', '"1":"one"');
    const altered = { ...base, canonical, sha256: sha256HexSync(canonical) };
    expect((await checkVector(altered, webCryptoSha256)).length).toBeGreaterThan(0);
  });
  it('catches an altered input', async () => {
    const altered = { ...base, inputJson: base.inputJson.replace('"One"', '"Two"') };
    expect((await checkVector(altered, webCryptoSha256)).length).toBeGreaterThan(0);
  });
  it('catches a reject that no longer throws', () => {
    expect(checkReject({ name: 'x', inputJson: '"\\ud83d\\ude00"' }).length).toBe(1);
  });
});

describe('properties the vectors pin', () => {
  it('NFC and NFD spellings hash differently (no Unicode normalisation)', () => {
    expect(vector('nfc-e-acute').sha256).not.toBe(vector('nfd-e-combining-acute').sha256);
    expect(canonicalJson('caf\u00e9')).not.toBe(canonicalJson('cafe\u0301'));
  });
  it('keeps a JSON-parsed __proto__ key as data, and does not pollute prototypes', () => {
    const v = JSON.parse(vector('arguments-proto-key').inputJson) as Record<string, unknown>;
    expect(Object.keys(v)).toContain('__proto__');
    expect(canonicalJson(v)).toBe(vector('arguments-proto-key').canonical);
    expect(({} as Record<string, unknown>).isAdmin).toBeUndefined();
  });
  it('hashes a descriptor the same whatever extra runtime fields it carries', async () => {
    const d = JSON.parse(vector('descriptor-extra-fields-ignored').inputJson) as Record<string, unknown>;
    const plain = { name: d.name as string, title: d.title as string, description: d.description as string, inputSchema: {}, origin: d.origin as string, annotations: {} };
    expect(await descriptorHash({ ...plain, window: globalThis, execute: () => 1 } as typeof plain)).toBe(vector('descriptor-extra-fields-ignored').sha256);
    expect(await descriptorHash(plain, nodeSha256)).toBe(vector('descriptor-extra-fields-ignored').sha256);
  });
  it('the two back ends agree with each other and with node:crypto on raw bytes', async () => {
    const bytes = new TextEncoder().encode('\u20ac\ud834\udd1e');
    expect(toHex(await webCryptoSha256(bytes))).toBe(toHex(await nodeSha256(bytes)));
    expect(await sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'); // FIPS 180-2 "abc"
    expect(fingerprint('3f9ac2e01b7d44')).toBe('3f9a·c2e0·1b7d');
  });
});

describe('values with no canonical form throw CanonicalizationError', () => {
  const cyclic: Record<string, unknown> = { a: 1 };
  cyclic.self = cyclic;
  const cyclicArray: unknown[] = [];
  cyclicArray.push([cyclicArray]);
  const cases: [string, unknown][] = [
    ['NaN', NaN],
    ['NaN nested', { a: [1, NaN] }],
    ['Infinity', Infinity],
    ['-Infinity nested', { a: -Infinity }],
    ['undefined', undefined],
    ['undefined property', { a: undefined }],
    ['undefined array element', [1, undefined]],
    ['array hole', [, 1]],
    ['function', () => 1],
    ['nested function', { f: () => 1 }],
    ['symbol in array', [Symbol('s')]],
    ['BigInt', 1n],
    ['nested BigInt', { n: 10n }],
    ['cycle', cyclic],
    ['array cycle', cyclicArray],
    ['Map', new Map([[1, 2]])],
    ['Set nested', { s: new Set([1]) }],
    ['typed array', new Uint8Array([1])],
    ['toJSON giving NaN', { toJSON: () => NaN }],
    ['lone surrogate', 'a\ud800'],
    ['lone surrogate key', { '\udc00': 1 }],
  ];
  it.each(cases)('%s', (_n, value) => {
    expect(() => canonicalJson(value)).toThrow(CanonicalizationError);
  });
  it('argumentsHash and descriptorHash reject too', async () => {
    await expect(argumentsHash({ a: NaN })).rejects.toBeInstanceOf(CanonicalizationError);
    await expect(descriptorHash({ name: 'x', origin: 'http://a', inputSchema: { n: 1n } })).rejects.toBeInstanceOf(CanonicalizationError);
  });
  it('shared (non-cyclic) references and Dates are fine', () => {
    const shared = { x: 1 };
    expect(canonicalJson([shared, shared])).toBe('[{"x":1},{"x":1}]');
    expect(canonicalJson({ d: new Date(0) })).toBe('{"d":"1970-01-01T00:00:00.000Z"}');
    expect(canonicalJson(Object.assign(Object.create(null) as object, { b: 1, a: 2 }))).toBe('{"a":2,"b":1}');
  });
});
