/**
 * The console's side of the ledger witness (docs/ledger.md, "Signed checkpoints"):
 * every checkpoint the ledger signs is handed to the paired extension over the link
 * (`witness-checkpoint`), which keeps the newest one in its own storage; `verify`
 * reads it back (`witness-read`) and checks the ledger against it, so a ledger rolled
 * back below the witness's head, or rewritten under it, fails.
 *
 * Handing over is off the agent's path: after the commit, fire and forget, newest
 * only (a checkpoint signed while another is on its way replaces the one waiting).
 * When the link comes up, the newest stored checkpoint is handed over again.
 */
import type { SignedCheckpoint } from '../../shared/checkpoint';
import type { Ledger, WitnessInput } from './ledger';
import type { ExtensionLink } from './ports';

/** How long one hand-over or read may take on the link (ms). */
export const WITNESS_TIMEOUT_MS = 10_000;

/** Hands checkpoints to the extension and reads its witness back. */
export class WitnessRelay {
  private inFlight = false;
  private waiting: SignedCheckpoint | null = null;
  private readonly unsubs: Array<() => void> = [];
  /** The newest answer of the witness to a hand-over (tests and the log). */
  lastAnswer: { kept: boolean; reason?: string } | null = null;

  /**
   * @param warn told when the extension refuses a checkpoint (it holds a newer one, or one of another key).
   */
  constructor(
    private readonly link: ExtensionLink,
    private readonly ledger: Ledger,
    private readonly warn: (message: string, detail?: unknown) => void,
  ) {
    this.unsubs.push(ledger.onCheckpoint((cp) => this.handOver(cp)));
    let wasConnected = link.status().state === 'connected';
    this.unsubs.push(
      link.onStatus((s) => {
        const connected = s.state === 'connected';
        if (connected && !wasConnected) {
          try {
            const cp = ledger.latestSignedCheckpoint();
            if (cp) this.handOver(cp);
          } catch {
            // The ledger is closing: nothing to hand over.
          }
        }
        wasConnected = connected;
      }),
    );
  }

  /** Hand `cp` to the extension when connected (newest only; never throws, never waits). */
  handOver(cp: SignedCheckpoint): void {
    if (this.link.status().state !== 'connected') return;
    if (this.inFlight) {
      if (!this.waiting || cp.count >= this.waiting.count) this.waiting = cp;
      return;
    }
    this.inFlight = true;
    // Only a checkpoint on disk leaves the console (docs/ledger.md, "Durability"): a witness holding one
    // that a power loss took back would make the next verify report a cut tail.
    void this.ledger
      .durable()
      .then(
        () => this.link.request({ op: 'witness-checkpoint', checkpoint: cp }, { timeoutMs: WITNESS_TIMEOUT_MS }),
        (e: unknown) => ({ ok: false as const, error: { code: 'ledger-unavailable', message: e instanceof Error ? e.message : String(e) } }),
      )
      .then((r) => {
      this.inFlight = false;
      if (r.ok) {
        this.lastAnswer = r.value.kept ? { kept: true } : { kept: false, reason: r.value.reason ?? 'refused' };
        if (!r.value.kept) this.warn(`the extension's witness refused checkpoint #${cp.count}: ${r.value.reason ?? 'no reason given'}`);
      } else if (r.error.code !== 'link-down') {
        this.warn(`could not hand checkpoint #${cp.count} to the extension's witness (${r.error.code}): ${r.error.message}`);
      }
      const next = this.waiting;
      this.waiting = null;
      if (next) this.handOver(next);
    });
  }

  /**
   * The witness for `Ledger.verify`: the extension's newest checkpoint, or why there is none
   * (not connected, none held, an error). Never throws.
   */
  async read(): Promise<WitnessInput> {
    if (this.link.status().state !== 'connected') return { checkpoint: null, note: 'the extension is not connected' };
    const r = await this.link.request({ op: 'witness-read' }, { timeoutMs: WITNESS_TIMEOUT_MS });
    if (!r.ok) return { checkpoint: null, note: `the extension could not be asked (${r.error.code}: ${r.error.message})` };
    return r.value ? { checkpoint: r.value } : { checkpoint: null, note: 'the extension holds no checkpoint yet' };
  }

  /** Stop listening. */
  dispose(): void {
    for (const u of this.unsubs.splice(0)) u();
  }
}
