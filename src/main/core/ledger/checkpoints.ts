/**
 * Signed checkpoints of the ledger (docs/ledger.md, "Signed checkpoints"), in the
 * manner of an RFC 6962 / RFC 9162 signed tree head: the ledger's count and head
 * hash, signed with Ed25519 (node:crypto, RFC 8032) by a key kept outside the
 * data folder (key-holder.ts), stored in the `checkpoints` table of the ledger
 * file and handed to the extension as a witness.
 *
 * This module owns the signing key type, the table, and the checks that decide
 * whether a ledger's checkpoints hold (`checkCheckpoints`), used at open (to
 * decide whether the console may go on signing) and by `verify`.
 */
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';
import type Database from 'better-sqlite3';
import { checkpointShapeProblem, checkpointSignedText, type CheckpointFields, type SignedCheckpoint } from '../../../shared/checkpoint';
import { OUTCOME_EVENTS } from '../../../shared/receipt';
import { GENESIS_PREV_HASH } from './chain';
import { missingTriggers } from './guards';

/**
 * The most receipts that may follow the newest signed checkpoint (the unprotected
 * tail). The ledger signs, in the same transaction as the receipts, whenever a
 * commit holds an outcome receipt (OUTCOME_EVENTS) or would leave more than this
 * many receipts unsigned; so an intact ledger never has an outcome receipt, nor more
 * than 15 receipts, after its newest checkpoint, even after a crash. A cut of the tail
 * inside this bound cannot be told from a ledger that simply ends there; one beyond it
 * fails verify.
 */
export const MAX_UNSIGNED_TAIL = 15;

/** The checkpoints table (created by a read-write open when missing; a read-only open tolerates its absence). */
export const CHECKPOINTS_SQL = `
CREATE TABLE IF NOT EXISTS checkpoints (
  count      INTEGER PRIMARY KEY,
  head_hash  TEXT    NOT NULL,
  time       INTEGER NOT NULL,
  key_id     TEXT    NOT NULL,
  public_key TEXT    NOT NULL,
  signature  TEXT    NOT NULL
) STRICT;
`;

export { GUARD_TRIGGERS, missingTriggers } from './guards';

/** An Ed25519 signing key for checkpoints. */
export class LedgerSigningKey {
  /** Raw 32-byte public key, base64. */
  readonly publicKey: string;
  /** SHA-256 of the raw public key, 64 lowercase hex. */
  readonly keyId: string;

  private constructor(private readonly privateKey: KeyObject) {
    const raw = rawPublicKey(createPublicKey(privateKey));
    this.publicKey = raw.toString('base64');
    this.keyId = createHash('sha256').update(raw).digest('hex');
  }

  /** A fresh key (node:crypto `generateKeyPairSync('ed25519')`). */
  static generate(): LedgerSigningKey {
    return new LedgerSigningKey(generateKeyPairSync('ed25519').privateKey);
  }

  /**
   * From a PKCS#8 private key, PEM text or DER bytes.
   * @throws Error when it is not an Ed25519 private key.
   */
  static fromPkcs8(key: string | Buffer): LedgerSigningKey {
    const k = typeof key === 'string' ? createPrivateKey(key) : createPrivateKey({ key, format: 'der', type: 'pkcs8' });
    if (k.asymmetricKeyType !== 'ed25519') throw new Error(`not an Ed25519 key (${k.asymmetricKeyType ?? 'unknown type'})`);
    return new LedgerSigningKey(k);
  }

  /** The private key as PKCS#8 PEM (for the key holder to store). */
  toPem(): string {
    return this.privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
  }

  /** Sign `(count, headHash, time)`: about 50 µs of CPU (docs/ledger.md, "Signed checkpoints"). */
  sign(f: Omit<CheckpointFields, 'keyId'>): SignedCheckpoint {
    const fields = { count: f.count, headHash: f.headHash, time: f.time, keyId: this.keyId };
    const signature = sign(null, Buffer.from(checkpointSignedText(fields), 'utf8'), this.privateKey).toString('base64');
    return { ...fields, publicKey: this.publicKey, signature };
  }
}

function rawPublicKey(k: KeyObject): Buffer {
  const jwk = k.export({ format: 'jwk' });
  if (typeof jwk.x !== 'string') throw new Error('not an Ed25519 public key');
  return Buffer.from(jwk.x, 'base64url');
}

/**
 * Whether `publicKey` (raw 32 bytes, base64) is well formed; its key id when it is.
 * @returns the key id (64 hex) or null.
 */
export function keyIdOf(publicKey: string): string | null {
  if (!/^[A-Za-z0-9+/]{43}=$/.test(publicKey)) return null;
  return createHash('sha256').update(Buffer.from(publicKey, 'base64')).digest('hex');
}

/**
 * Check one checkpoint against the public key the verifier trusts (never the key the
 * checkpoint carries): shape, key id, and the Ed25519 signature. Never throws.
 * @returns null when it holds, else why not (plain words).
 */
export function checkpointSignatureProblem(cp: unknown, trustedPublicKey: string): string | null {
  const shape = checkpointShapeProblem(cp);
  if (shape) return `malformed (${shape})`;
  const c = cp as SignedCheckpoint;
  const keyId = keyIdOf(trustedPublicKey);
  if (!keyId) return 'the public key to check it with is not 32 bytes of base64';
  if (c.keyId !== keyId) return `signed by another key (key id ${c.keyId.slice(0, 16)}…, this console's is ${keyId.slice(0, 16)}…)`;
  try {
    const key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(trustedPublicKey, 'base64').toString('base64url') }, format: 'jwk' });
    const good = verify(null, Buffer.from(checkpointSignedText(c), 'utf8'), key, Buffer.from(c.signature, 'base64'));
    return good ? null : 'the signature does not verify (forged or altered)';
  } catch (e) {
    return `the signature cannot be checked (${e instanceof Error ? e.message : String(e)})`;
  }
}

/** One thing that makes a ledger fail its checks: a stable `code` and a plain-words `message`. */
export interface LedgerProblem {
  code:
    | 'trigger-missing'
    | 'checkpoint-signature'
    | 'count-below-checkpoint'
    | 'checkpoint-mismatch'
    | 'unsigned-tail'
    | 'no-public-key'
    | 'witness-signature'
    | 'witness-count'
    | 'witness-mismatch';
  message: string;
  /** The receipt seq it concerns, when one does (0 for the file as a whole). */
  seq: number;
}

/** What `checkCheckpoints` found. */
export interface CheckpointFindings {
  problems: LedgerProblem[];
  /** The newest checkpoint in the file (null: none), whatever the problems. */
  newest: SignedCheckpoint | null;
  /** Receipts after the newest checkpoint (all of them when there is none). */
  unsignedTail: number;
}

/** Statements `checkCheckpoints` reads through (prepared once by the Ledger). */
export interface CheckpointReads {
  db: Database.Database;
  /** Whether the file has a checkpoints table (a read-only open of an older file may not). */
  hasTable: boolean;
}

const OUTCOME_IN = `(${OUTCOME_EVENTS.map((e) => `'${e}'`).join(', ')})`;

/** The newest checkpoint row, or null. */
export function newestCheckpoint(r: CheckpointReads): SignedCheckpoint | null {
  if (!r.hasTable) return null;
  const row = r.db.prepare('SELECT count, head_hash, time, key_id, public_key, signature FROM checkpoints ORDER BY count DESC LIMIT 1').raw().get() as
    | [number, string, number, string, string, string]
    | undefined;
  return row ? { count: row[0], headHash: row[1], time: row[2], keyId: row[3], publicKey: row[4], signature: row[5] } : null;
}

function hashAt(db: Database.Database, seq: number): string | null {
  if (seq === 0) return GENESIS_PREV_HASH;
  return (db.prepare('SELECT hash FROM receipts WHERE seq = ?').pluck().get(seq) as string | undefined) ?? null;
}

/**
 * The checks beyond the chain (docs/ledger.md, "Signed checkpoints"), against the head
 * `headCount` (the highest seq present):
 * - every guard trigger is present (`trigger-missing`);
 * - the newest checkpoint verifies with `publicKey` (`checkpoint-signature`), the ledger
 *   still holds its count (`count-below-checkpoint`) and receipt `count` still has its
 *   head hash (`checkpoint-mismatch`: the history was rewritten and re-chained);
 * - the receipts after it stay within MAX_UNSIGNED_TAIL and hold no outcome
 *   receipt (`unsigned-tail`: newer checkpoints were removed);
 * - when a `witness` is given (the extension's copy), it verifies with `publicKey`
 *   (`witness-signature`), the ledger holds its count (`witness-count`: rolled back
 *   below the witness's head) and receipt `count` has its hash (`witness-mismatch`).
 * With no `publicKey` (a reader without the key) the signatures cannot be checked:
 * a file holding checkpoints then gets `no-public-key`.
 * Reads a handful of rows (the tail and the checkpoint), never the whole chain.
 */
export function checkCheckpoints(r: CheckpointReads, headCount: number, publicKey: string | null, witness?: SignedCheckpoint | null): CheckpointFindings {
  const problems: LedgerProblem[] = [];
  for (const t of missingTriggers(r.db)) {
    problems.push({ code: 'trigger-missing', seq: 0, message: `guard trigger ${t} is missing or altered: someone with write access to the file dropped or replaced it (it is never recreated)` });
  }
  const newest = newestCheckpoint(r);
  const covered = newest ? newest.count : 0;
  if (newest && !publicKey) {
    problems.push({ code: 'no-public-key', seq: newest.count, message: 'the ledger holds signed checkpoints but no public key was given to check them (--public-key or --key-file)' });
  } else if (newest && publicKey) {
    const why = checkpointSignatureProblem(newest, publicKey);
    if (why) problems.push({ code: 'checkpoint-signature', seq: newest.count, message: `signature: the signed checkpoint at #${newest.count} is not valid: ${why}` });
    else if (headCount < newest.count) {
      problems.push({ code: 'count-below-checkpoint', seq: headCount + 1, message: `count below checkpoint: the signed checkpoint recorded ${newest.count} receipts, the ledger ends at ${headCount} (its tail was cut)` });
    } else if (hashAt(r.db, newest.count) !== newest.headHash) {
      problems.push({ code: 'checkpoint-mismatch', seq: newest.count, message: `signature: receipt #${newest.count} no longer has the head hash its signed checkpoint recorded (the history was rewritten and re-chained)` });
    }
  }
  const unsignedTail = Math.max(0, headCount - covered);
  if (publicKey || newest) {
    const outcome = r.db.prepare(`SELECT seq, event FROM receipts WHERE seq > ? AND event IN ${OUTCOME_IN} ORDER BY seq LIMIT 1`).raw().get(covered) as [number, string] | undefined;
    if (outcome) {
      problems.push({ code: 'unsigned-tail', seq: outcome[0], message: `unsigned tail: receipt #${outcome[0]} (${outcome[1]}, an outcome) is covered by no signed checkpoint; the console signs every outcome in the same commit, so signed checkpoints were removed` });
    } else if (unsignedTail > MAX_UNSIGNED_TAIL) {
      problems.push({ code: 'unsigned-tail', seq: covered + 1, message: `unsigned tail: ${unsignedTail} receipts follow the newest signed checkpoint (#${covered}), more than the bound of ${MAX_UNSIGNED_TAIL}; signed checkpoints were removed` });
    }
  }
  if (witness) {
    if (!publicKey) {
      problems.push({ code: 'no-public-key', seq: witness.count, message: 'a witness checkpoint was given but no public key to check it' });
    } else {
      const why = checkpointSignatureProblem(witness, publicKey);
      const hint = why?.startsWith('signed by another key') ? '; if a new ledger or key was started on purpose, reset the witness (docs/ledger.md, "Signed checkpoints")' : '';
      if (why) problems.push({ code: 'witness-signature', seq: witness.count, message: `witness: the extension's checkpoint (#${witness.count}) is not valid: ${why}${hint}` });
      else if (headCount < witness.count) {
        problems.push({ code: 'witness-count', seq: headCount + 1, message: `witness: the extension's signed checkpoint recorded ${witness.count} receipts, the ledger ends at ${headCount} (rolled back below the witness's head)` });
      } else if (hashAt(r.db, witness.count) !== witness.headHash) {
        problems.push({ code: 'witness-mismatch', seq: witness.count, message: `witness: receipt #${witness.count} no longer has the head hash the extension's signed checkpoint recorded (the history was rewritten)` });
      }
    }
  }
  return { problems, newest, unsignedTail };
}

/**
 * At a read-write open with a key, inside the caller's write transaction: adopt a
 * ledger that has never been signed when the key is new (sign its head through
 * `store`), else check the newest checkpoint and the tail.
 * @returns why signing must be held (the console never signs over a tampered file), or null.
 */
export function signingAtOpen(
  db: Database.Database,
  reads: CheckpointReads,
  key: LedgerSigningKey,
  head: { count: number; headHash: string },
  keyCreated: boolean,
  now: () => number,
  store: (cp: SignedCheckpoint) => void,
): string | null {
  const newest = newestCheckpoint(reads);
  if (!newest && head.count > 0 && keyCreated && missingTriggers(db).length === 0) {
    store(key.sign({ count: head.count, headHash: head.headHash, time: now() }));
    return null;
  }
  const found = checkCheckpoints(reads, head.count, key.publicKey);
  return found.problems.length ? found.problems.map((p) => p.message).join('; ') : null;
}
