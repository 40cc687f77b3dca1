/**
 * The crypto the handshake asks for, as data. The transition functions
 * (handshake.ts) are pure: when a step needs randomness, a key pair, a key
 * derivation or a MAC, it returns an effect `{kind:'crypto', req}`; the
 * adapter runs `runCrypto(req)` (the real WebCrypto in pairing-crypto.ts) and
 * feeds the answer back as the event `{kind:'crypto', result}`. Every random
 * value (nonces, key pairs) therefore enters a transition as an event input.
 */
import {
  authProof,
  derivePairing,
  generateEphemeral,
  pairingCommitment,
  PairingCryptoError,
  randomHex,
  verifyAuthProof,
  type AuthParams,
  type EphemeralKeyPair,
  type PairingSecret,
  type PairingTranscript,
} from '../pairing-crypto';

/** The parts of AuthParams both proofs share (role is added per proof). */
export type AuthInputs = Omit<AuthParams, 'role'>;

/** What a step can ask of the crypto. */
export type CryptoRequest =
  /** Console: a fresh ECDH key pair and nonce for a pair-offer. */
  | { op: 'console-offer' }
  /** Console: check the reveal against the commitment, then derive key and code. */
  | { op: 'console-derive'; own: EphemeralKeyPair; commitment: string; transcript: PairingTranscript }
  /** Console: a fresh console nonce and the console's proof (the console proves first). */
  | { op: 'console-challenge'; key: Uint8Array; inputs: Omit<AuthInputs, 'consoleNonce'> }
  /** Console: check the extension's proof. */
  | { op: 'console-verify'; key: Uint8Array; inputs: AuthInputs; proof: string }
  /** Extension: a fresh key pair, nonce and the commitment to it. */
  | { op: 'ext-begin' }
  /** Extension: derive key and code from the console's offer. */
  | { op: 'ext-derive'; own: EphemeralKeyPair; transcript: PairingTranscript }
  /** Extension: a fresh nonce for auth-begin. */
  | { op: 'ext-nonce' }
  /** Extension: check the console's proof; ONLY if it verifies, make our own. */
  | { op: 'ext-answer'; key: Uint8Array; inputs: AuthInputs; consoleProof: string };

/** The answer to each request, tagged with the same `op`. */
export type CryptoResult =
  | { op: 'console-offer'; own: EphemeralKeyPair; nonce: string }
  | { op: 'console-derive'; ok: true; secret: PairingSecret }
  | { op: 'console-derive'; ok: false; code: 'pairing-failed'; message: string }
  | { op: 'console-challenge'; nonce: string; proof: string }
  | { op: 'console-verify'; ok: boolean }
  | { op: 'ext-begin'; own: EphemeralKeyPair; nonce: string; commitment: string }
  | { op: 'ext-derive'; ok: true; secret: PairingSecret }
  | { op: 'ext-derive'; ok: false; message: string }
  | { op: 'ext-nonce'; nonce: string }
  | { op: 'ext-answer'; ok: true; proof: string }
  | { op: 'ext-answer'; ok: false };

/**
 * Run one crypto request with WebCrypto (Node 20 and the service worker alike).
 * Never throws for a peer's bad input (a public key off the curve is `ok:false`);
 * throws only when WebCrypto itself fails, which the adapters treat as an internal error.
 */
export async function runCrypto(req: CryptoRequest): Promise<CryptoResult> {
  switch (req.op) {
    case 'console-offer':
      return { op: req.op, own: await generateEphemeral(), nonce: randomHex(16) };
    case 'console-derive': {
      const t = req.transcript;
      if ((await pairingCommitment(t.extPublicKey, t.extNonce)) !== req.commitment) {
        return { op: req.op, ok: false, code: 'pairing-failed', message: 'The extension’s pairing nonce does not match its commitment.' };
      }
      try {
        return { op: req.op, ok: true, secret: await derivePairing(req.own, t.extPublicKey, t) };
      } catch (e) {
        if (e instanceof PairingCryptoError) return { op: req.op, ok: false, code: 'pairing-failed', message: e.message };
        throw e;
      }
    }
    case 'console-challenge': {
      const nonce = randomHex(16);
      return { op: req.op, nonce, proof: await authProof(req.key, { ...req.inputs, consoleNonce: nonce, role: 'console' }) };
    }
    case 'console-verify':
      return { op: req.op, ok: await verifyAuthProof(req.key, { ...req.inputs, role: 'extension' }, req.proof) };
    case 'ext-begin': {
      const own = await generateEphemeral();
      const nonce = randomHex(16);
      return { op: req.op, own, nonce, commitment: await pairingCommitment(own.publicKey, nonce) };
    }
    case 'ext-derive':
      try {
        return { op: req.op, ok: true, secret: await derivePairing(req.own, req.transcript.consolePublicKey, req.transcript) };
      } catch (e) {
        return { op: req.op, ok: false, message: e instanceof Error ? e.message : String(e) };
      }
    case 'ext-nonce':
      return { op: req.op, nonce: randomHex(16) };
    case 'ext-answer': {
      if (!(await verifyAuthProof(req.key, { ...req.inputs, role: 'console' }, req.consoleProof))) return { op: req.op, ok: false };
      return { op: req.op, ok: true, proof: await authProof(req.key, { ...req.inputs, role: 'extension' }) };
    }
  }
}
