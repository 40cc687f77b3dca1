import { describe, expect, it } from 'vitest';
import {
  authProof,
  derivePairing,
  fromBase64,
  generateEphemeral,
  pairingCommitment,
  PairingCryptoError,
  randomHex,
  verifyAuthProof,
  type AuthParams,
  type PairingTranscript,
} from '../../src/shared/pairing-crypto';
import { FORMATS } from '../../src/shared/protocol';

const EXT = 'abjcbldekikalfjmmiemkjeemkfphege';

async function pairBoth() {
  const ext = await generateEphemeral();
  const con = await generateEphemeral();
  const t: PairingTranscript = {
    protocolVersion: 1,
    extensionId: EXT,
    extPublicKey: ext.publicKey,
    extNonce: randomHex(),
    consolePublicKey: con.publicKey,
    consoleNonce: randomHex(),
  };
  const a = await derivePairing(ext, con.publicKey, t);
  const b = await derivePairing(con, ext.publicKey, t);
  return { ext, con, t, a, b };
}

describe('pairing crypto (ECDH P-256 + HKDF-SHA-256, WebCrypto)', () => {
  it('both sides derive the same 32-byte key and 6-digit code', async () => {
    const { ext, a, b } = await pairBoth();
    expect(ext.publicKey).toMatch(FORMATS.p256PublicKey);
    expect(fromBase64(ext.publicKey)?.[0]).toBe(4); // uncompressed point
    expect(a.key).toHaveLength(32);
    expect(Buffer.from(a.key).equals(Buffer.from(b.key))).toBe(true);
    expect(a.code).toMatch(/^\d{3} \d{3}$/);
    expect(a.code).toBe(b.code);
    expect(a.transcriptHash).toBe(b.transcriptHash);
  });

  it('a man in the middle ends with different keys and, almost surely, different codes', async () => {
    const ext = await generateEphemeral();
    const con = await generateEphemeral();
    const mitm = await generateEphemeral();
    const n1 = randomHex();
    const n2 = randomHex();
    const extSide = await derivePairing(ext, mitm.publicKey, {
      protocolVersion: 1, extensionId: EXT, extPublicKey: ext.publicKey, extNonce: n1, consolePublicKey: mitm.publicKey, consoleNonce: n2,
    });
    const conSide = await derivePairing(con, mitm.publicKey, {
      protocolVersion: 1, extensionId: EXT, extPublicKey: mitm.publicKey, extNonce: n1, consolePublicKey: con.publicKey, consoleNonce: n2,
    });
    expect(Buffer.from(extSide.key).equals(Buffer.from(conSide.key))).toBe(false);
    expect(extSide.transcriptHash).not.toBe(conSide.transcriptHash);
  });

  it('every transcript field changes the key and the transcript hash', async () => {
    const { con, ext, t, a } = await pairBoth();
    for (const [k, v] of [
      ['protocolVersion', 2],
      ['extensionId', 'b'.repeat(32)],
      ['extNonce', randomHex()],
      ['consoleNonce', randomHex()],
    ] as const) {
      const other = await derivePairing(con, ext.publicKey, { ...t, [k]: v });
      expect(other.transcriptHash, k).not.toBe(a.transcriptHash);
      expect(Buffer.from(other.key).equals(Buffer.from(a.key)), k).toBe(false);
    }
  });

  it('refuses a peer key that is not a P-256 point', async () => {
    const own = await generateEphemeral();
    const t = { protocolVersion: 1, extensionId: EXT, extPublicKey: '', extNonce: '', consolePublicKey: '', consoleNonce: '' };
    await expect(derivePairing(own, 'AAAA', t)).rejects.toBeInstanceOf(PairingCryptoError);
    const offCurve = Buffer.alloc(65, 1);
    offCurve[0] = 4;
    await expect(derivePairing(own, offCurve.toString('base64'), t)).rejects.toBeInstanceOf(PairingCryptoError);
  });

  it('the commitment binds public key and nonce', async () => {
    const n = randomHex();
    const c = await pairingCommitment('pk', n);
    expect(c).toMatch(FORMATS.hex64);
    expect(await pairingCommitment('pk', n)).toBe(c);
    expect(await pairingCommitment('pk', randomHex())).not.toBe(c);
    expect(await pairingCommitment('pk2', n)).not.toBe(c);
  });

  it('auth proofs are role-, nonce-, pairing- and version-bound', async () => {
    const { a } = await pairBoth();
    const p: AuthParams = { role: 'console', protocolVersion: 1, extensionId: EXT, pairingId: randomHex(), extNonce: randomHex(), consoleNonce: randomHex() };
    const proof = await authProof(a.key, p);
    expect(proof).toMatch(FORMATS.hex64);
    expect(await verifyAuthProof(a.key, p, proof)).toBe(true);
    expect(await verifyAuthProof(a.key, { ...p, role: 'extension' }, proof)).toBe(false);
    for (const k of ['extNonce', 'consoleNonce', 'pairingId'] as const) expect(await verifyAuthProof(a.key, { ...p, [k]: randomHex() }, proof), k).toBe(false);
    expect(await verifyAuthProof(a.key, { ...p, protocolVersion: 2 }, proof)).toBe(false);
    expect(await verifyAuthProof(new Uint8Array(32), p, proof)).toBe(false);
    expect(await verifyAuthProof(a.key, p, 'zz')).toBe(false);
  });
});
