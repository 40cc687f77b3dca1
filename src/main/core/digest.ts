/**
 * The node:crypto SHA-256 back end for src/shared/canonical.ts, for the console
 * (Node and Electron main). It lives beside the core, not in src/shared, because
 * it imports node:crypto (src/shared imports no Node module; a lint rule
 * enforces it).
 */
import { createHash, createHmac, hkdfSync } from 'node:crypto';
import type { Sha256 } from '../../shared/canonical';
import { GRANT_KEY_INFO, type GrantMac } from '../../shared/grant';

/** SHA-256 through node:crypto (async signature, to fit `Sha256`). */
export const nodeSha256: Sha256 = async (data) => new Uint8Array(createHash('sha256').update(data).digest());

/** Synchronous SHA-256 hex of a string's UTF-8 bytes (the ledger's hot path). */
export function sha256HexSync(text: string | Uint8Array): string {
  return createHash('sha256').update(text).digest('hex');
}

/** The grant key of the pairing key used last (a new pairing derives anew); copies, never the caller's buffers. */
let grantKey: { pairingKey: Buffer; key: Buffer } | null = null;

/** Drop the cached pairing and grant keys (unpair): no copy of an old pairing key stays in memory here. */
export function forgetNodeGrantKey(): void {
  if (grantKey) {
    grantKey.pairingKey.fill(0);
    grantKey.key.fill(0);
  }
  grantKey = null;
}

/**
 * The grant MAC through node:crypto, synchronous (src/shared/grant.ts `GrantMac`): the grant key is
 * HKDF-SHA-256(pairing key, salt 32 zero bytes, info GRANT_KEY_INFO, 32 bytes), as `deriveGrantKey`.
 */
export const nodeGrantMac: GrantMac = (pairingKey, input) => {
  const pk = Buffer.from(pairingKey);
  if (!grantKey || !grantKey.pairingKey.equals(pk)) {
    grantKey = { pairingKey: pk, key: Buffer.from(hkdfSync('sha256', pk, Buffer.alloc(32), GRANT_KEY_INFO, 32)) };
  }
  return createHmac('sha256', grantKey.key).update(input).digest('hex');
};
