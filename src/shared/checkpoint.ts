/**
 * Signed checkpoints of the receipt ledger, in the manner of an RFC 6962 / RFC 9162
 * signed tree head: the console signs (count, head hash, time) with an Ed25519 key
 * kept outside its data folder, and hands the newest checkpoint to the paired
 * extension, which keeps it as a witness (docs/ledger.md, "Signed checkpoints").
 *
 * Pure TypeScript for both sides: the console signs and checks with node:crypto
 * (src/main/core/ledger/checkpoints.ts); the extension checks with WebCrypto
 * (`verifyCheckpointWebCrypto`, Ed25519 is in WebCrypto since Chrome 137).
 */

/**
 * One signed checkpoint.
 * - `count`: receipts covered, 1..count (the ledger's seq of its head); 0 for an empty ledger.
 * - `headHash`: the hash of receipt `count` (64 lowercase hex; the genesis value for 0).
 * - `time`: when it was signed, ms since the epoch (UTC).
 * - `keyId`: SHA-256 (64 lowercase hex) of the raw 32-byte Ed25519 public key.
 * - `publicKey`: that raw public key, base64 (44 characters). Carried so a witness can
 *   pin the key on first use; a verifier never trusts it without comparing `keyId`
 *   with the key it holds.
 * - `signature`: Ed25519 (RFC 8032) over `checkpointSignedText`, base64 (88 characters).
 */
export interface SignedCheckpoint {
  count: number;
  headHash: string;
  time: number;
  keyId: string;
  publicKey: string;
  signature: string;
}

/** Domain label of the signed text (a checkpoint signature can never be taken for another message). */
export const CHECKPOINT_DOMAIN = 'echo-console/ledger-checkpoint/v1';

/** The fields of a checkpoint that are signed. */
export type CheckpointFields = Pick<SignedCheckpoint, 'count' | 'headHash' | 'time' | 'keyId'>;

/**
 * The exact text that is signed, UTF-8 encoded:
 * `echo-console/ledger-checkpoint/v1\n<count>\n<headHash>\n<time>\n<keyId>`.
 * Every field is a decimal integer or lowercase hex, so the text is one-to-one with the fields.
 */
export function checkpointSignedText(f: CheckpointFields): string {
  return `${CHECKPOINT_DOMAIN}\n${f.count}\n${f.headHash}\n${f.time}\n${f.keyId}`;
}

const HEX64 = /^[0-9a-f]{64}$/;
const B64_32 = /^[A-Za-z0-9+/]{43}=$/;
const B64_64 = /^[A-Za-z0-9+/]{86}==$/;

/**
 * Whether `x` has exactly the shape of a SignedCheckpoint (no extra keys; counts and times
 * safe non-negative integers; hashes 64 lowercase hex; key 32 bytes and signature 64 bytes
 * in base64). Says nothing about the signature: see `verifyCheckpointWebCrypto` or the
 * console's `verifyCheckpointSignature`.
 * @returns null when well formed, else what is wrong, prefixed with `path`.
 */
export function checkpointShapeProblem(x: unknown, path = 'checkpoint'): string | null {
  if (typeof x !== 'object' || x === null || Array.isArray(x)) return `${path}: expected an object`;
  const o = x as Record<string, unknown>;
  const keys = ['count', 'headHash', 'time', 'keyId', 'publicKey', 'signature'];
  for (const k of Object.keys(o)) if (!keys.includes(k)) return `${path}.${k}: unknown key`;
  const int = (k: string) => (typeof o[k] === 'number' && Number.isSafeInteger(o[k]) && (o[k] as number) >= 0 ? null : `${path}.${k}: expected an integer >= 0`);
  const re = (k: string, r: RegExp, what: string) => (typeof o[k] === 'string' && r.test(o[k] as string) ? null : `${path}.${k}: expected ${what}`);
  return (
    int('count') ?? int('time') ?? re('headHash', HEX64, '64 lowercase hex') ?? re('keyId', HEX64, '64 lowercase hex') ??
    re('publicKey', B64_32, 'base64 of 32 bytes') ?? re('signature', B64_64, 'base64 of 64 bytes')
  );
}

function fromBase64(s: string): Uint8Array<ArrayBuffer> {
  const bin = atob(s);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

function hex(buf: ArrayBuffer): string {
  return [...new Uint8Array(buf)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

/**
 * Check a checkpoint with WebCrypto (the extension's witness; the console uses node:crypto):
 * the shape, that `keyId` is the SHA-256 of `publicKey`, and the Ed25519 signature.
 * Never throws.
 * @returns true only when all three hold.
 */
export async function verifyCheckpointWebCrypto(cp: SignedCheckpoint): Promise<boolean> {
  try {
    if (checkpointShapeProblem(cp) !== null) return false;
    const subtle = globalThis.crypto.subtle;
    const raw = fromBase64(cp.publicKey);
    if (hex(await subtle.digest('SHA-256', raw)) !== cp.keyId) return false;
    const key = await subtle.importKey('raw', raw, { name: 'Ed25519' }, false, ['verify']);
    return await subtle.verify({ name: 'Ed25519' }, key, fromBase64(cp.signature), new TextEncoder().encode(checkpointSignedText(cp)));
  } catch {
    return false;
  }
}
