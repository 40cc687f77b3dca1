/**
 * A verify report completed with the checks of checkpoints.ts — guard triggers,
 * the newest signed checkpoint, the unsigned tail, the extension's witness —
 * and its one-line summary (docs/ledger.md, "Signed checkpoints").
 */
import type { Checkpoint, VerifyReport } from '../../../shared/receipt';
import type { SignedCheckpoint } from '../../../shared/checkpoint';
import { MAX_UNSIGNED_TAIL, checkCheckpoints, keyIdOf, type CheckpointReads } from './checkpoints';

/**
 * The witness `verify` checks against (the extension's copy of the newest checkpoint):
 * `{checkpoint}` when one was read, or `{checkpoint: null, note}` saying why none could be
 * (not connected, the extension holds none, it answered an error). Undefined: not asked.
 */
export type WitnessInput = { checkpoint: SignedCheckpoint | null; note?: string } | undefined;

/** What the ledger knows beside the chain report. */
export interface CheckpointContext {
  head: { count: number; headHash: string };
  reads: CheckpointReads;
  /** The Ed25519 public key that checks signatures (raw, base64), or null. */
  publicKey: string | null;
  /** The console's signing state (null: no private key here, e.g. the CLI). */
  signing: { keyId: string; held: string | null } | null;
  witness: WitnessInput;
}

/**
 * The chain report completed with the checkpoint checks. A ledger with no key,
 * no checkpoint and all its triggers, verified without a witness, gets the
 * chain report unchanged.
 */
export function withCheckpointChecks(report: VerifyReport, c: CheckpointContext): VerifyReport {
  const { witness } = c;
  const w = witness && 'checkpoint' in witness ? witness.checkpoint : null;
  const found = checkCheckpoints(c.reads, c.head.count, c.publicKey, w);
  if (!c.publicKey && !found.newest && found.problems.length === 0 && witness === undefined) return report;
  const problems = [
    ...(report.firstBroken ? [{ code: 'chain', seq: report.firstBroken.seq, message: `chain: ${report.firstBroken.reason}` }] : []),
    ...found.problems.map((p) => ({ code: p.code, seq: p.seq, message: p.message })),
  ];
  const witnessFailed = found.problems.some((p) => p.code.startsWith('witness-'));
  const first = found.problems[0];
  const out: VerifyReport = {
    ...report,
    ok: report.ok && problems.length === 0,
    ...(report.firstBroken ? {} : first ? { firstBroken: { seq: first.seq, reason: first.message } } : {}),
    problems,
    signed: {
      keyId: c.publicKey ? (c.signing?.keyId ?? keyIdOf(c.publicKey)) : null,
      checkpoint: found.newest ? { count: found.newest.count, headHash: found.newest.headHash, time: found.newest.time } : null,
      unsignedTail: found.unsignedTail,
      tailBound: MAX_UNSIGNED_TAIL,
      witness: w ? (witnessFailed ? 'failed' : 'agrees') : 'not-checked',
      ...(witness && 'note' in witness ? { witnessNote: witness.note } : witness === undefined ? { witnessNote: 'no witness was asked' } : {}),
      ...(c.signing ? { signingHeld: c.signing.held } : {}),
    },
  };
  out.summary = summarise(out);
  return out;
}


/** The report in one line for a person (the console's receipts panel and the CLI). */
function summarise(r: VerifyReport): string {
  const s = r.signed;
  if (!r.ok) {
    const list = (r.problems ?? []).map((p) => p.message).join('; ');
    return `BROKEN: ${list || (r.firstBroken?.reason ?? 'unknown')}`;
  }
  const parts = [`${r.count} receipts, chain intact`];
  if (s?.checkpoint) parts.push(`signed checkpoint at #${s.checkpoint.count}${s.keyId ? ` (key ${s.keyId.slice(0, 16)}…)` : ''}`);
  else parts.push('no signed checkpoint yet');
  if (s) {
    parts.push(
      s.unsignedTail === 0
        ? 'no unsigned tail'
        : `${s.unsignedTail} receipt${s.unsignedTail === 1 ? '' : 's'} after it unsigned (within the bound of ${s.tailBound}: a cut among them cannot be detected)`,
    );
    parts.push(s.witness === 'agrees' ? "the extension's witness agrees" : `witness not checked${s.witnessNote ? ` (${s.witnessNote})` : ''}`);
    if (s.signingHeld) parts.push(`signing held: ${s.signingHeld}`);
  }
  return parts.join('; ');
}

/**
 * A verified report checked against an earlier checkpoint: the ledger still
 * holds `checkpoint.count` receipts (else "tail cut off"), and the receipt at
 * that seq has `checkpoint.headHash` (`hashAtCount`; else "history rewritten").
 * A report that is already broken is returned as it is.
 */
export function againstCheckpoint(report: VerifyReport, checkpoint: Checkpoint, hashAtCount: string | null): VerifyReport {
  if (!report.ok) return report;
  if (report.count < checkpoint.count) {
    return {
      ...report,
      ok: false,
      firstBroken: { seq: report.count + 1, reason: `tail cut off: the checkpoint recorded ${checkpoint.count} receipts, the ledger ends at ${report.count}` },
    };
  }
  if (hashAtCount !== checkpoint.headHash) {
    return {
      ...report,
      ok: false,
      firstBroken: { seq: checkpoint.count, reason: `history rewritten: receipt ${checkpoint.count} has a different hash than the checkpoint recorded` },
    };
  }
  return report;
}
