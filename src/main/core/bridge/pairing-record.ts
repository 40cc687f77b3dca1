/**
 * The console's stored pairing: the record the bridge keeps in its
 * SecretStore under PAIRING_SECRET_NAME (JSON), and the check a stored record
 * must pass before its key is used (a malformed one counts as unpaired).
 */
import type { AcceptedPairing } from '../../../shared/link-core';
import { fromBase64, toBase64 } from '../../../shared/pairing-crypto';

/** The SecretStore entry holding the pairing. */
export const PAIRING_SECRET_NAME = 'extension-pairing';

/** The stored record (JSON in the SecretStore). */
export interface StoredPairing {
  v: 1;
  pairingId: string;
  /** base64 of the 32-byte key. */
  key: string;
  extensionId: string;
  pairedAt: number;
}

/** The record to store for a pairing the person accepted and the extension proved. */
export function pairingRecord(p: AcceptedPairing): StoredPairing {
  return { v: 1, pairingId: p.pairingId, key: toBase64(p.key), extensionId: p.extensionId, pairedAt: p.pairedAt };
}

/**
 * Parse the stored text: the record and its 32-byte key, or null (after a
 * warning through `warn`) when it is not JSON or not a well-formed record.
 */
export function parsePairingRecord(raw: string, warn: (message: string) => void): { record: StoredPairing; key: Uint8Array } | null {
  try {
    const p = JSON.parse(raw) as StoredPairing;
    const key = fromBase64(p.key);
    if (p.v === 1 && typeof p.pairingId === 'string' && typeof p.extensionId === 'string' && key && key.length === 32) {
      return { record: p, key };
    }
    warn('stored pairing is malformed; ignored');
  } catch {
    warn('stored pairing is not JSON; ignored');
  }
  return null;
}
