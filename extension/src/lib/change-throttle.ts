/**
 * When a content module tells the worker that its tools changed (issue 8 item 2):
 * at most once per `minIntervalMs`, and, while changes continue, at least once
 * per `minIntervalMs` + the time one check takes. A plain debounce (wait until
 * changes stop) starves: a page re-registering a tool every 50 ms never stops,
 * and produced no notice in 15 s. Pure: the clock and timers are injected, so
 * test/unit/extension-change-throttle.test.ts drives it with fake timers.
 *
 * `poke()` records a change. The check (`run`) starts `quietMs` after the first
 * change since the last check (a burst of registrations is one check), but no
 * sooner than `minIntervalMs` after the last check started.
 */

/** The timer functions the throttle uses (the page's, by default). */
export interface ThrottleClock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const realClock: ThrottleClock = {
  now: () => performance.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
};

export interface ChangeThrottleOptions {
  /** Wait after the first change before checking, so one burst is one check (ms). */
  quietMs: number;
  /** At least this long between two checks (ms). */
  minIntervalMs: number;
}

/** Schedules one check for the changes since the last one, at a bounded rate. */
export class ChangeThrottle {
  private timer: unknown = undefined;
  private lastRun = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly run: () => void,
    private readonly o: ChangeThrottleOptions,
    private readonly clock: ThrottleClock = realClock,
  ) {}

  /** A change happened: make sure a check is scheduled. */
  poke(): void {
    if (this.timer !== undefined) return;
    const wait = Math.max(this.o.quietMs, this.lastRun + this.o.minIntervalMs - this.clock.now());
    this.timer = this.clock.setTimeout(() => {
      this.timer = undefined;
      this.lastRun = this.clock.now();
      this.run();
    }, wait);
  }

  /** Drop a scheduled check. */
  cancel(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }
}
