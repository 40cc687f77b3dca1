import { describe, expect, it } from 'vitest';
import { GRANT_FIELDS, GRANT_KEY_INFO, GRANT_MAC_DOMAIN, deriveGrantKey, signGrant, verifyGrantMac } from '../../src/shared/grant';
import { canonicalJson } from '../../src/shared/canonical';
import type { Grant } from '../../src/shared/types';
import { createHmac, hkdfSync } from 'node:crypto';
import { authProof } from '../../src/shared/pairing-crypto';
import { forgetNodeGrantKey, nodeGrantMac } from '../../src/main/core/digest';

const key = new Uint8Array(32).map((_, i) => i);
const fields: Omit<Grant, 'mac'> = {
  requestId: 'req-1',
  faculty: 'webmcp-invoke',
  operation: 'invoke',
  tabId: 7,
  frameId: 0,
  documentId: '0123456789ABCDEF0123456789ABCDEF',
  origin: 'https://shop.example',
  urlHash: '9'.repeat(64),
  subjectHash: 'a'.repeat(64),
  argumentsHash: 'b'.repeat(64),
  nonce: 'c'.repeat(32),
  expiresAt: 1_900_000_000_000,
};

describe('grant MAC (HMAC-SHA-256 with an HKDF-derived grant key over domain-separated canonical JSON)', () => {
  it('signs and verifies; the MAC equals an independent node:crypto HKDF + HMAC', async () => {
    const g = await signGrant(fields, key);
    expect(g.mac).toMatch(/^[0-9a-f]{64}$/);
    expect(await verifyGrantMac(g, key)).toBe(true);
    const grantKey = Buffer.from(hkdfSync('sha256', Buffer.from(key), Buffer.alloc(32), Buffer.from(GRANT_KEY_INFO), 32));
    expect(Buffer.from(await deriveGrantKey(key)).equals(grantKey)).toBe(true);
    const expected = createHmac('sha256', grantKey).update(GRANT_MAC_DOMAIN + canonicalJson(fields)).digest('hex');
    expect(g.mac).toBe(expected);
    expect(GRANT_MAC_DOMAIN).toBe('echo-console/grant/v2\n');
  });

  it("the console's node:crypto back end signs exactly what WebCrypto signs, and the extension's check accepts it; a new pairing key derives anew", async () => {
    const viaNode = await signGrant(fields, key, nodeGrantMac);
    expect(viaNode).toEqual(await signGrant(fields, key));
    expect(await verifyGrantMac(viaNode, key)).toBe(true);
    const other = new Uint8Array(32).fill(9);
    const next = await signGrant(fields, other, nodeGrantMac);
    expect(next.mac).toBe((await signGrant(fields, other)).mac);
    expect(next.mac).not.toBe(viaNode.mac);
    expect(await verifyGrantMac(next, key)).toBe(false);
    expect((await signGrant(fields, key, nodeGrantMac)).mac).toBe(viaNode.mac);
    // Unpair forgets the cached keys; the next grant derives again and still verifies.
    forgetNodeGrantKey();
    expect((await signGrant(fields, key, nodeGrantMac)).mac).toBe(viaNode.mac);
  });

  it('is keyed for grants only: a MAC with the pairing key itself (grant v1) or an auth proof never verifies', async () => {
    const g = await signGrant(fields, key);
    const withPairingKey = createHmac('sha256', Buffer.from(key)).update(GRANT_MAC_DOMAIN + canonicalJson(fields)).digest('hex');
    expect(await verifyGrantMac({ ...g, mac: withPairingKey }, key)).toBe(false);
    const v1 = createHmac('sha256', Buffer.from(key)).update('echo-console/grant/v1\n' + canonicalJson(fields)).digest('hex');
    expect(await verifyGrantMac({ ...g, mac: v1 }, key)).toBe(false);
    const proof = await authProof(key, { role: 'console', protocolVersion: 2, extensionId: 'a'.repeat(32), pairingId: 'c'.repeat(32), extNonce: 'c'.repeat(32), consoleNonce: 'c'.repeat(32) });
    expect(await verifyGrantMac({ ...g, mac: proof }, key)).toBe(false);
  });

  it('a grant for another operation or faculty of the same subject does not verify (a hover grant never acts as a click)', async () => {
    const hover = await signGrant({ ...fields, faculty: 'semantic', operation: 'hover' }, key);
    expect(await verifyGrantMac({ ...hover, operation: 'click' }, key)).toBe(false);
    expect(await verifyGrantMac({ ...hover, faculty: 'webmcp-invoke' }, key)).toBe(false);
  });

  it('covers every field', async () => {
    expect([...GRANT_FIELDS].sort()).toEqual(Object.keys(fields).sort());
  });

  const tamper: Record<keyof Omit<Grant, 'mac'>, unknown> = {
    requestId: 'req-2',
    faculty: 'semantic',
    operation: 'click',
    tabId: 8,
    frameId: 1,
    documentId: '0123456789ABCDEF0123456789ABCDEE',
    origin: 'https://evil.example',
    urlHash: '8'.repeat(64),
    subjectHash: 'd'.repeat(64),
    argumentsHash: 'e'.repeat(64),
    nonce: 'f'.repeat(32),
    expiresAt: 1_900_000_000_001,
  };
  it.each(Object.entries(tamper))('a changed %s fails verification', async (k, v) => {
    const g = await signGrant(fields, key);
    expect(await verifyGrantMac({ ...g, [k]: v }, key)).toBe(false);
  });

  it('a wrong key, a changed or malformed MAC, extra or missing fields all fail (never throw)', async () => {
    const g = await signGrant(fields, key);
    expect(await verifyGrantMac(g, new Uint8Array(32))).toBe(false);
    const flipped = (g.mac[0] === '0' ? '1' : '0') + g.mac.slice(1);
    expect(await verifyGrantMac({ ...g, mac: flipped }, key)).toBe(false);
    expect(await verifyGrantMac({ ...g, mac: g.mac.toUpperCase() }, key)).toBe(false);
    expect(await verifyGrantMac({ ...g, mac: '' }, key)).toBe(false);
    expect(await verifyGrantMac({ ...g, extra: 1 }, key)).toBe(false);
    const { nonce: _n, ...missing } = g;
    expect(await verifyGrantMac(missing, key)).toBe(false);
    expect(await verifyGrantMac(null, key)).toBe(false);
    expect(await verifyGrantMac('grant', key)).toBe(false);
  });

  it('refuses to sign malformed fields', async () => {
    await expect(signGrant({ ...fields, nonce: 'short' }, key)).rejects.toThrow(/nonce/);
    await expect(signGrant({ ...fields, tabId: 1.5 }, key)).rejects.toThrow(/tabId/);
    await expect(signGrant({ ...fields, operation: 'Click Now' }, key)).rejects.toThrow(/operation/);
    await expect(signGrant({ ...fields, urlHash: 'short' }, key)).rejects.toThrow(/urlHash/);
  });

  it('does not copy properties outside the Grant into the result', async () => {
    const g = await signGrant({ ...fields, sneaky: true } as Omit<Grant, 'mac'>, key);
    expect(Object.keys(g).sort()).toEqual([...GRANT_FIELDS, 'mac'].sort());
  });
});
