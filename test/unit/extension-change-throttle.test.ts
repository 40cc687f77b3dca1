/**
 * The tool-change throttle (extension/src/lib/change-throttle.ts; issue 8 item 2): a page that
 * re-registers a tool every 50 ms for 15 s gets a check at most once per second and, while the
 * changes go on, at least once per two seconds. A virtual clock drives it: no real waiting.
 */
import { describe, expect, it } from 'vitest';
import { ChangeThrottle, type ThrottleClock } from '../../extension/src/lib/change-throttle';

/** A virtual clock: timers fire in order as time is advanced. */
class VirtualClock implements ThrottleClock {
  private t = 0;
  private seq = 0;
  private timers = new Map<number, { at: number; fn: () => void }>();
  now(): number {
    return this.t;
  }
  setTimeout(fn: () => void, ms: number): unknown {
    const id = ++this.seq;
    this.timers.set(id, { at: this.t + Math.max(0, ms), fn });
    return id;
  }
  clearTimeout(h: unknown): void {
    this.timers.delete(h as number);
  }
  /** Advance to `until`, firing due timers in time order. */
  advance(until: number): void {
    for (;;) {
      const next = [...this.timers.entries()].sort((a, b) => a[1].at - b[1].at || a[0] - b[0])[0];
      if (!next || next[1].at > until) break;
      this.timers.delete(next[0]);
      this.t = next[1].at;
      next[1].fn();
    }
    this.t = until;
  }
}

const OPTS = { quietMs: 100, minIntervalMs: 1_000 };

describe('ChangeThrottle', () => {
  it('a change every 50 ms for 15 s: checks at most once per second, at least once per two seconds, the first soon after the first change', () => {
    const clock = new VirtualClock();
    const runs: number[] = [];
    const t = new ChangeThrottle(() => runs.push(clock.now()), OPTS, clock);
    for (let at = 0; at < 15_000; at += 50) {
      clock.advance(at);
      t.poke();
    }
    clock.advance(20_000);
    expect(runs[0]).toBe(100);
    const gaps = runs.slice(1).map((r, i) => r - (runs[i] as number));
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(1_000);
    expect(Math.max(...gaps)).toBeLessThanOrEqual(2_000);
    // The last change (14 950 ms) is checked too.
    expect(runs.at(-1)).toBeGreaterThanOrEqual(14_950);
    expect(runs.length).toBeGreaterThanOrEqual(14);
    expect(runs.length).toBeLessThanOrEqual(16);
  });

  it('a burst is one check; quiet afterwards means no more checks', () => {
    const clock = new VirtualClock();
    let runs = 0;
    const t = new ChangeThrottle(() => runs++, OPTS, clock);
    for (let i = 0; i < 20; i++) t.poke();
    clock.advance(10_000);
    expect(runs).toBe(1);
  });

  it('a lone change long after the last check is checked after the quiet time only; cancel drops a scheduled check', () => {
    const clock = new VirtualClock();
    const runs: number[] = [];
    const t = new ChangeThrottle(() => runs.push(clock.now()), OPTS, clock);
    t.poke();
    clock.advance(5_000);
    t.poke();
    clock.advance(5_050);
    expect(runs).toEqual([100]);
    clock.advance(5_100);
    expect(runs).toEqual([100, 5_100]);
    t.poke();
    t.cancel();
    clock.advance(9_000);
    expect(runs).toEqual([100, 5_100]);
  });
});
