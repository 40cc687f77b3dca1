/**
 * The node:crypto SHA-256 back end for src/shared/canonical.ts, for the console
 * (Node and Electron main). It lives beside the core, not in src/shared, because
 * it imports node:crypto (src/shared imports no Node module; a lint rule
 * enforces it).
 */
import { createHash } from 'node:crypto';
import type { Sha256 } from '../../shared/canonical';

/** SHA-256 through node:crypto (async signature, to fit `Sha256`). */
export const nodeSha256: Sha256 = async (data) => new Uint8Array(createHash('sha256').update(data).digest());

/** Synchronous SHA-256 hex of a string's UTF-8 bytes (the ledger's hot path). */
export function sha256HexSync(text: string | Uint8Array): string {
  return createHash('sha256').update(text).digest('hex');
}
