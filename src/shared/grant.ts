/**
 * The grant MAC: what lets the extension check, right before dispatch, that a
 * one-use grant came from the paired console and covers exactly this faculty,
 * operation, tab, frame, document, exact URLs, origin, subject and arguments
 * (docs/design.md, "Trust rules"). Shared by the console (signs) and the
 * extension (verifies). One shape for every faculty.
 *
 *   grant key = HKDF-SHA-256(ikm = pairing key, salt = 32 zero bytes,
 *                            info = "echo-console/grant-key/v2"), 32 bytes
 *   mac       = HMAC-SHA-256(grant key, "echo-console/grant/v2\n" + RFC 8785
 *               canonical JSON of every Grant field except `mac`), 64 hex chars
 *
 * The key is derived for this purpose only (RFC 5869 §3.2: distinct `info`
 * gives independent keys), so no other use of the pairing key (the auth
 * proofs of pairing-crypto.ts) can ever produce or check a grant MAC; the
 * domain prefix separates the MAC input from every other text MACed anywhere.
 * Both changed with protocol version 2 (grant v1 MACed with the pairing key
 * itself and bound neither faculty, operation nor URLs).
 */
import { canonicalJson } from './canonical';
import { hmacHex, hmacVerifyHex, hmacVerifyKey, type WebCryptoKey } from './pairing-crypto';
import { validateGrantShape } from './protocol';
import type { Grant } from './types';

/** The domain-separation prefix of the MAC input. */
export const GRANT_MAC_DOMAIN = 'echo-console/grant/v2\n';

/** The HKDF `info` that derives the grant key from the pairing key. */
export const GRANT_KEY_INFO = 'echo-console/grant-key/v2';

/** The fields a grant MAC covers, in no particular order (canonical JSON sorts them). */
export const GRANT_FIELDS = [
  'requestId',
  'faculty',
  'operation',
  'tabId',
  'frameId',
  'documentId',
  'origin',
  'urlHash',
  'subjectHash',
  'argumentsHash',
  'nonce',
  'expiresAt',
] as const satisfies readonly (keyof Omit<Grant, 'mac'>)[];

const utf8 = new TextEncoder();

// Type names come from whichever lib is in scope (DOM in the extension, @types/node in the console).
type Subtle = typeof globalThis.crypto.subtle;
const subtle = (): Subtle => globalThis.crypto.subtle;

/**
 * The grant key for a pairing key (see the file header). Exported for the test
 * vectors; callers sign and verify with the pairing key and never see it.
 * @param pairingKey the 32-byte pairing key.
 * @returns 32 bytes.
 */
export async function deriveGrantKey(pairingKey: Uint8Array): Promise<Uint8Array> {
  const ikm = await subtle().importKey('raw', new Uint8Array(pairingKey), 'HKDF', false, ['deriveBits']);
  const bits = await subtle().deriveBits({ name: 'HKDF', hash: 'SHA-256', salt: new Uint8Array(32), info: utf8.encode(GRANT_KEY_INFO) }, ikm, 256);
  return new Uint8Array(bits);
}

/**
 * The grant key of the pairing key used last, kept so that every grant does not
 * derive it again (one pairing key per console and per extension at a time).
 * A different pairing key (a new pairing) derives anew; the cache holds copies,
 * never the caller's buffers.
 */
let cached: { pairingKey: Uint8Array; grantKey: Promise<Uint8Array>; verifyKey: Promise<WebCryptoKey> } | null = null;

/** The cache entry of `pairingKey`, derived (and its verify key imported) on first use. */
function entryFor(pairingKey: Uint8Array): NonNullable<typeof cached> {
  const same = cached !== null && cached.pairingKey.length === pairingKey.length && cached.pairingKey.every((b, i) => b === pairingKey[i]);
  if (!same || cached === null) {
    const grantKey = deriveGrantKey(pairingKey);
    const entry = { pairingKey: new Uint8Array(pairingKey), grantKey, verifyKey: grantKey.then(hmacVerifyKey) };
    cached = entry;
    // A failed derivation or import is not kept.
    entry.verifyKey.catch(() => {
      if (cached === entry) cached = null;
    });
    return entry;
  }
  return cached;
}

function grantKeyFor(pairingKey: Uint8Array): Promise<Uint8Array> {
  return entryFor(pairingKey).grantKey;
}

function pick(fields: Omit<Grant, 'mac'>): Omit<Grant, 'mac'> {
  const picked: Record<string, unknown> = {};
  for (const k of GRANT_FIELDS) picked[k] = fields[k];
  return picked as unknown as Omit<Grant, 'mac'>;
}

function macInput(fields: Omit<Grant, 'mac'>): Uint8Array {
  return utf8.encode(GRANT_MAC_DOMAIN + canonicalJson(pick(fields)));
}

/**
 * A MAC back end for `signGrant`: the grant MAC of the file header over
 * `input` (the domain prefix and canonical JSON, as UTF-8), 64 lowercase hex
 * chars. The default is WebCrypto's (`webCryptoGrantMac`, asynchronous); the
 * console passes node:crypto's, which is synchronous (src/main/core/digest.ts
 * `nodeGrantMac`: WebCrypto in Node hops to the thread pool, ~0.7 ms per grant
 * on a busy event loop). test/unit/grant.test.ts pins both to the same vectors.
 */
export type GrantMac = (pairingKey: Uint8Array, input: Uint8Array) => string | Promise<string>;

/** The WebCrypto back end (the extension's, and the console's default). */
export const webCryptoGrantMac: GrantMac = async (pairingKey, input) => hmacHex(await grantKeyFor(pairingKey), input);

/**
 * MAC a grant.
 * @param fields every Grant field but `mac` (extra properties are not copied).
 * @param pairingKey the 32-byte pairing key (the grant key is derived from it).
 * @param mac the MAC back end (default WebCrypto's).
 * @returns the grant with `mac` set.
 * @throws Error with `code: 'grant-invalid'` when a field has the wrong type or
 *   format (the same check the extension applies on receipt, protocol.ts `validateGrantShape`).
 */
export async function signGrant(fields: Omit<Grant, 'mac'>, pairingKey: Uint8Array, mac: GrantMac = webCryptoGrantMac): Promise<Grant> {
  const picked = pick(fields);
  const problem = validateGrantShape({ ...picked, mac: '0'.repeat(64) }, 'grant');
  if (problem) throw Object.assign(new Error(problem), { code: 'grant-invalid' });
  return { ...picked, mac: await mac(pairingKey, macInput(picked)) };
}

/**
 * Check a grant's MAC in constant time. `false` (never a throw) for a wrong
 * MAC, any tampered field, a missing or extra field, or a malformed value.
 * Expiry and one-use are NOT checked here: the extension checks them with its
 * own clock and nonce record.
 */
export async function verifyGrantMac(grant: unknown, pairingKey: Uint8Array): Promise<boolean> {
  if (validateGrantShape(grant, 'grant') !== null) return false;
  const g = grant as Grant;
  try {
    // The verify key is imported once per pairing key (one WebCrypto call less per dispatch).
    return await hmacVerifyHex(await entryFor(pairingKey).verifyKey, macInput(g), g.mac);
  } catch {
    return false;
  }
}
