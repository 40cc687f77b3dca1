/**
 * The link's cryptography, one implementation for the console (Node 20) and
 * the extension (MV3 service worker): WebCrypto only (`globalThis.crypto.subtle`),
 * no Node or Chrome APIs, no dependencies.
 *
 * Pairing (once, confirmed by the person, docs/link.md "Pairing"):
 *   - both sides make an ephemeral ECDH P-256 key pair and a 16-byte nonce;
 *   - the extension first sends its public key and a COMMITMENT to its nonce,
 *     reveals the nonce only after the console sent its own public key and
 *     nonce; so neither a man in the middle nor a fake console can choose its
 *     values after seeing the other side's, and cannot grind the short code
 *     (the numeric-comparison pattern of Bluetooth SSP / ZRTP);
 *   - transcript T = JSON of [domain, protocolVersion, extensionId, extPub,
 *     extNonce, consolePub, consoleNonce]; both compute SHA-256(T);
 *   - pairing key (32 bytes) = HKDF-SHA-256(ikm = ECDH shared secret,
 *     salt = SHA-256(T), info = "echo-console pairing key v1");
 *   - comparison code = first 4 bytes of SHA-256(T) as a big-endian uint32,
 *     mod 10^6, shown as "123 456". A man in the middle has two different
 *     transcripts and, because of the commitment, one chance in 10^6 that the
 *     codes agree.
 *
 * Every later connection (challenge–response, console proves first):
 *   proof(role) = HMAC-SHA-256(pairing key, JSON of [auth domain, role,
 *   protocolVersion, extensionId, pairingId, extNonce, consoleNonce]).
 *   `role` ("console" / "extension") keeps one side's proof from ever being
 *   replayed as the other's; both nonces are fresh per connection.
 */

/** Domain-separation labels; a change to any of them is a protocol change. */
export const PAIRING_LABELS = {
  transcript: 'echo-console/pairing-transcript/v1',
  commitment: 'echo-console/pairing-commitment/v1',
  keyInfo: 'echo-console pairing key v1',
  auth: 'echo-console/link-auth/v1',
} as const;

const utf8 = new TextEncoder();
// Type names come from whichever lib is in scope (DOM in the extension, @types/node in the console).
type Subtle = typeof globalThis.crypto.subtle;
/** A WebCrypto key (the DOM's CryptoKey, or node's webcrypto.CryptoKey). */
export type WebCryptoKey = Awaited<ReturnType<Subtle['importKey']>>;
const subtle = (): Subtle => globalThis.crypto.subtle;

// WebCrypto wants an ArrayBuffer-backed view; copying also detaches us from caller buffers.
const bytes = (u: Uint8Array): Uint8Array<ArrayBuffer> => new Uint8Array(u);

/** `n` random bytes as lowercase hex (default 16 bytes → 32 chars: nonces, pairing ids). */
export function randomHex(n = 16): string {
  return toHexStr(globalThis.crypto.getRandomValues(new Uint8Array(n)));
}

/** Lowercase hex of bytes. */
export function toHexStr(b: Uint8Array): string {
  let s = '';
  for (const x of b) s += x.toString(16).padStart(2, '0');
  return s;
}

/** Bytes of an even-length hex string; `null` when it is not hex. */
export function fromHex(hex: string): Uint8Array | null {
  if (hex.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(hex)) return null;
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}

/** Standard base64 (with padding) of bytes. */
export function toBase64(b: Uint8Array): string {
  let bin = '';
  for (const x of b) bin += String.fromCharCode(x);
  return btoa(bin);
}

/** Bytes of standard base64; `null` when it does not decode. */
export function fromBase64(s: string): Uint8Array | null {
  try {
    const bin = atob(s);
    const out = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out;
  } catch {
    return null;
  }
}

async function sha256(data: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(await subtle().digest('SHA-256', bytes(data)));
}

/** An ephemeral ECDH P-256 key pair for one pairing attempt; `publicKey` is base64 of the raw 65-byte point. */
export interface EphemeralKeyPair {
  privateKey: WebCryptoKey;
  publicKey: string;
}

/** Make a fresh ECDH P-256 key pair (the private key is not extractable). */
export async function generateEphemeral(): Promise<EphemeralKeyPair> {
  const pair = (await subtle().generateKey({ name: 'ECDH', namedCurve: 'P-256' }, false, ['deriveBits'])) as {
    privateKey: WebCryptoKey;
    publicKey: WebCryptoKey;
  };
  const raw = new Uint8Array(await subtle().exportKey('raw', pair.publicKey));
  return { privateKey: pair.privateKey, publicKey: toBase64(raw) };
}

/** The extension's commitment to its nonce: SHA-256 hex of JSON [label, publicKey, nonce]. */
export async function pairingCommitment(publicKey: string, nonce: string): Promise<string> {
  return toHexStr(await sha256(utf8.encode(JSON.stringify([PAIRING_LABELS.commitment, publicKey, nonce]))));
}

/** Everything both sides saw during one pairing, in the same order on both sides. */
export interface PairingTranscript {
  protocolVersion: number;
  extensionId: string;
  extPublicKey: string;
  extNonce: string;
  consolePublicKey: string;
  consoleNonce: string;
}

/** What a pairing yields on each side: the same key and code when no one interfered. */
export interface PairingSecret {
  /** 32 bytes: the pairing key (HMAC key for auth proofs and grant MACs). */
  key: Uint8Array;
  /** Six digits as "123 456", for the person to compare. */
  code: string;
  /** SHA-256 hex of the transcript. */
  transcriptHash: string;
}

/** Thrown when the peer's public key is not a valid P-256 point. */
export class PairingCryptoError extends Error {
  readonly code = 'bad-public-key';
}

/**
 * Derive the pairing key and comparison code from our ephemeral private key and
 * the peer's public key (see the file header for the construction).
 * @param own our key pair from `generateEphemeral`.
 * @param peerPublicKey base64 raw P-256 point from the peer.
 * @throws PairingCryptoError when the peer key does not decode or is not on the curve.
 */
export async function derivePairing(own: EphemeralKeyPair, peerPublicKey: string, t: PairingTranscript): Promise<PairingSecret> {
  const raw = fromBase64(peerPublicKey);
  if (!raw || raw.length !== 65) throw new PairingCryptoError('peer public key is not a 65-byte P-256 point');
  let peer: WebCryptoKey;
  try {
    peer = await subtle().importKey('raw', bytes(raw), { name: 'ECDH', namedCurve: 'P-256' }, false, []);
  } catch (e) {
    throw new PairingCryptoError(`peer public key rejected: ${e instanceof Error ? e.message : String(e)}`);
  }
  const shared = new Uint8Array(await subtle().deriveBits({ name: 'ECDH', public: peer }, own.privateKey, 256));
  const transcript = JSON.stringify([
    PAIRING_LABELS.transcript,
    t.protocolVersion,
    t.extensionId,
    t.extPublicKey,
    t.extNonce,
    t.consolePublicKey,
    t.consoleNonce,
  ]);
  const th = await sha256(utf8.encode(transcript));
  const ikm = await subtle().importKey('raw', bytes(shared), 'HKDF', false, ['deriveBits']);
  const key = new Uint8Array(
    await subtle().deriveBits({ name: 'HKDF', hash: 'SHA-256', salt: bytes(th), info: utf8.encode(PAIRING_LABELS.keyInfo) }, ikm, 256),
  );
  const n = new DataView(th.buffer, th.byteOffset, 4).getUint32(0, false) % 1_000_000;
  const digits = String(n).padStart(6, '0');
  return { key, code: `${digits.slice(0, 3)} ${digits.slice(3)}`, transcriptHash: toHexStr(th) };
}

async function hmacKey(key: Uint8Array, usage: 'sign' | 'verify'): Promise<WebCryptoKey> {
  return subtle().importKey('raw', bytes(key), { name: 'HMAC', hash: 'SHA-256' }, false, [usage]);
}

/** HMAC-SHA-256 of `data` with `key`, as 64 lowercase hex characters. */
export async function hmacHex(key: Uint8Array, data: Uint8Array): Promise<string> {
  return toHexStr(new Uint8Array(await subtle().sign('HMAC', await hmacKey(key, 'sign'), bytes(data))));
}

/**
 * Check an HMAC-SHA-256 given as hex. Constant-time: WebCrypto's `verify`
 * compares without early exit. A malformed `macHex` is simply `false`.
 */
export async function hmacVerifyHex(key: Uint8Array | WebCryptoKey, data: Uint8Array, macHex: string): Promise<boolean> {
  if (typeof macHex !== 'string' || !/^[0-9a-f]{64}$/.test(macHex)) return false;
  const mac = fromHex(macHex) as Uint8Array;
  return subtle().verify('HMAC', key instanceof Uint8Array ? await hmacKey(key, 'verify') : key, bytes(mac), bytes(data));
}

/**
 * `key` imported once as an HMAC-SHA-256 verify key, for a caller that checks many MACs with
 * one key (`hmacVerifyHex` accepts it in place of the bytes): each import is a WebCrypto call.
 */
export function hmacVerifyKey(key: Uint8Array): Promise<WebCryptoKey> {
  return hmacKey(key, 'verify');
}

/** The inputs of one connection's challenge–response. */
export interface AuthParams {
  role: 'console' | 'extension';
  protocolVersion: number;
  extensionId: string;
  pairingId: string;
  extNonce: string;
  consoleNonce: string;
}

function authMessage(p: AuthParams): Uint8Array {
  return utf8.encode(JSON.stringify([PAIRING_LABELS.auth, p.role, p.protocolVersion, p.extensionId, p.pairingId, p.extNonce, p.consoleNonce]));
}

/** The proof `role` sends: HMAC-SHA-256(pairing key, domain-separated transcript), 64 hex chars. */
export async function authProof(key: Uint8Array, p: AuthParams): Promise<string> {
  return hmacHex(key, authMessage(p));
}

/** Check the peer's proof for `p.role` (the peer's role) in constant time. */
export async function verifyAuthProof(key: Uint8Array, p: AuthParams, proof: string): Promise<boolean> {
  return hmacVerifyHex(key, authMessage(p), proof);
}
