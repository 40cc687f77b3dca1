/**
 * Runs a pure transition function (handshake.ts) for one connection: feeds it
 * one input at a time, sends what it says to send, performs its effects in
 * order, and feeds back the answers of the effects that have one. The runner
 * itself performs the three effects both roles share: `arm` / `disarm` (one
 * deadline per connection; expiry is the input `{kind:'timer'}`) and `crypto`
 * (runCrypto; its result is the input `{kind:'crypto'}`). Everything else is
 * the adapter's `perform`.
 *
 * Inputs are serialised: a message that arrives while a crypto or store
 * effect is pending waits until that step is finished, so the transition
 * functions never see a message in a `*-ing` phase from a real adapter.
 */
import type { Step, HandshakeTimer } from './handshake';
import { runCrypto, type CryptoRequest, type CryptoResult } from './crypto';

/** The effects the runner performs itself. */
type RunnerEffect = { kind: 'arm'; timer: HandshakeTimer; ms: number } | { kind: 'disarm' } | { kind: 'crypto'; req: CryptoRequest };
/** The inputs the runner makes itself. */
type RunnerInput = { kind: 'timer'; timer: HandshakeTimer } | { kind: 'crypto'; result: CryptoResult };

/** What the adapter gives the runner. */
export interface RunnerHost<S, I, M, E> {
  step(state: S, input: I): Step<S, M, E>;
  /** Put one message on the wire (never throws). */
  send(msg: M): void;
  /** Perform one adapter effect; may answer with an input to feed back (e.g. `stored`). */
  perform(effect: E): void | I | Promise<void | I>;
  /** A step, an effect or the crypto threw: the adapter ends the connection. */
  onError(e: unknown): void;
  /** Tests may replace the crypto (default: runCrypto, the real WebCrypto). */
  crypto?: (req: CryptoRequest) => Promise<CryptoResult>;
}

/** One connection's handshake driver. `S` state, `I` inputs, `M` messages sent, `E` effects. */
export class StepRunner<S, I, M, E extends { kind: string }> {
  private st: S;
  private queue: Promise<void> = Promise.resolve();
  private deadline: ReturnType<typeof setTimeout> | undefined;
  private stopped = false;

  constructor(
    private readonly host: RunnerHost<S, I, M, E>,
    first: Step<S, M, E>,
  ) {
    this.st = first.state;
    this.queue = this.apply(first).catch((e: unknown) => this.host.onError(e));
  }

  /** The current state (plain data). */
  get state(): S {
    return this.st;
  }

  /** Feed one input; resolves once it (and what it set off) was handled. */
  dispatch(input: I): Promise<void> {
    const run = this.queue.then(() => (this.stopped ? undefined : this.process(input)));
    this.queue = run.catch((e: unknown) => this.host.onError(e));
    return this.queue;
  }

  /** Stop: clear the deadline, ignore later inputs. */
  stop(): void {
    this.stopped = true;
    this.disarm();
  }

  private async process(input: I): Promise<void> {
    await this.apply(this.host.step(this.st, input));
  }

  private async apply(out: Step<S, M, E>): Promise<void> {
    this.st = out.state;
    for (const m of out.send) this.host.send(m);
    const follow: I[] = [];
    for (const e of out.effects) {
      const r = e as unknown as RunnerEffect;
      if (r.kind === 'arm') this.arm(r.timer, r.ms);
      else if (r.kind === 'disarm') this.disarm();
      else if (r.kind === 'crypto') {
        const result = await (this.host.crypto ?? runCrypto)(r.req);
        follow.push({ kind: 'crypto', result } satisfies RunnerInput as unknown as I);
      } else {
        const next = await this.host.perform(e);
        if (next) follow.push(next);
      }
    }
    for (const i of follow) if (!this.stopped) await this.process(i);
  }

  private arm(timer: HandshakeTimer, ms: number): void {
    this.disarm();
    if (this.stopped) return;
    this.deadline = setTimeout(() => void this.dispatch({ kind: 'timer', timer } satisfies RunnerInput as unknown as I), ms);
  }

  private disarm(): void {
    if (this.deadline) clearTimeout(this.deadline);
    this.deadline = undefined;
  }
}
