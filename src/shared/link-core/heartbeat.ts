/**
 * The one heartbeat both peers run (docs/link.md "Heartbeat"): a ping every
 * `intervalMs` from the hello on; when no pong arrived for `timeoutMs` the
 * link is dropped. "Connected" in either UI means "a pong arrived within
 * timeoutMs" (`lastPongAt`). Pings are answered by the handshake step.
 */

/** Options of `Heartbeat` (ms). */
export interface HeartbeatOptions {
  intervalMs: number;
  timeoutMs: number;
  /** Send `ping{seq}`. */
  ping(seq: number): void;
  /** No pong for `timeoutMs`: drop the link. Called once; the heartbeat stops itself first. */
  onTimeout(): void;
  /** Clock (ms since the epoch); default Date.now. */
  now?: () => number;
}

/** A heartbeat for one connection. */
export class Heartbeat {
  private timer: ReturnType<typeof setInterval> | undefined;
  private seq = 0;
  private last = 0;
  private readonly now: () => number;

  constructor(private readonly o: HeartbeatOptions) {
    this.now = o.now ?? Date.now;
  }

  /** ms since the epoch of the last pong (or of `start`). */
  get lastPongAt(): number {
    return this.last;
  }

  /** Start pinging (idempotent); counts as a fresh pong. */
  start(): void {
    this.last = this.now();
    if (this.timer) return;
    this.timer = setInterval(() => this.tick(), this.o.intervalMs);
  }

  /** One period elapsed: time out, or ping. Exposed for tests that drive the clock. */
  tick(): void {
    if (this.now() - this.last > this.o.timeoutMs) {
      this.stop();
      this.o.onTimeout();
      return;
    }
    this.o.ping(++this.seq);
  }

  /** A pong arrived; returns its time (ms since the epoch). */
  pong(): number {
    this.last = this.now();
    return this.last;
  }

  /** Restart the clock without a pong (the handshake just completed). */
  touch(): number {
    return this.pong();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
