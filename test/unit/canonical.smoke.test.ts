import { describe, expect, it } from 'vitest';
import { argumentsHash, canonicalJson, descriptorHash } from '../../src/shared/canonical';
import { nodeSha256 } from '../../src/shared/digest-node';

describe('canonical smoke', () => {
  it('sorts keys and hashes the same with both back ends', async () => {
    expect(canonicalJson({ b: 1, a: [1e21, -0] })).toBe('{"a":[1e+21,0],"b":1}');
    const d = { name: 'add', description: 'x', origin: 'http://a' };
    expect(await descriptorHash(d)).toBe(await descriptorHash(d, nodeSha256));
    expect(await argumentsHash({ a: 1 })).toMatch(/^[0-9a-f]{64}$/);
    expect(() => canonicalJson({ a: NaN })).toThrow(/non-finite/);
  });
});
