/**
 * The grant MAC: what lets the extension check, right before dispatch, that a
 * one-use grant came from the paired console and covers exactly this tab,
 * frame, document, origin, tool, descriptor and arguments (DESIGN.md, "Trust
 * rules"). Shared by the console (signs) and the extension (verifies).
 *
 * mac = HMAC-SHA-256(pairing key, "echo-console/grant/v1\n" + RFC 8785 canonical
 * JSON of every Grant field except `mac`), 64 lowercase hex characters. The
 * prefix keeps a grant MAC from ever equalling an auth proof made with the same
 * key (those are over a JSON array with their own label, pairing-crypto.ts).
 */
import { canonicalJson } from './canonical';
import { hmacHex, hmacVerifyHex } from './pairing-crypto';
import { validateGrantShape } from './protocol';
import type { Grant } from './types';

/** The domain-separation prefix of the MAC input. */
export const GRANT_MAC_DOMAIN = 'echo-console/grant/v1\n';

/** The fields a grant MAC covers, in no particular order (canonical JSON sorts them). */
export const GRANT_FIELDS = [
  'requestId',
  'tabId',
  'frameId',
  'documentId',
  'origin',
  'toolName',
  'descriptorHash',
  'argumentsHash',
  'nonce',
  'expiresAt',
] as const satisfies readonly (keyof Omit<Grant, 'mac'>)[];

const utf8 = new TextEncoder();

function macInput(fields: Omit<Grant, 'mac'>): Uint8Array {
  const picked: Record<string, unknown> = {};
  for (const k of GRANT_FIELDS) picked[k] = fields[k];
  return utf8.encode(GRANT_MAC_DOMAIN + canonicalJson(picked));
}

/**
 * MAC a grant with the pairing key.
 * @param fields every Grant field but `mac` (extra properties are not copied).
 * @param key the 32-byte pairing key.
 * @returns the grant with `mac` set.
 * @throws Error `grant-invalid` when a field has the wrong type or format (the
 *   same checks the extension applies on receipt, protocol.ts `validateGrantShape`).
 */
export async function signGrant(fields: Omit<Grant, 'mac'>, key: Uint8Array): Promise<Grant> {
  const picked = {} as Omit<Grant, 'mac'>;
  for (const k of GRANT_FIELDS) (picked as Record<string, unknown>)[k] = fields[k];
  const problem = validateGrantShape({ ...picked, mac: '0'.repeat(64) }, 'grant');
  if (problem) throw Object.assign(new Error(problem), { code: 'grant-invalid' });
  return { ...picked, mac: await hmacHex(key, macInput(picked)) };
}

/**
 * Check a grant's MAC in constant time. `false` (never a throw) for a wrong
 * MAC, any tampered field, a missing or extra field, or a malformed value.
 * Expiry and one-use are NOT checked here: the extension checks them with its
 * own clock and nonce record.
 */
export async function verifyGrantMac(grant: unknown, key: Uint8Array): Promise<boolean> {
  if (validateGrantShape(grant, 'grant') !== null) return false;
  const g = grant as Grant;
  try {
    return await hmacVerifyHex(key, macInput(g), g.mac);
  } catch {
    return false;
  }
}
