/**
 * One tab's refresh after a page change, coalesced and rate-bounded: the broker's rediscovery on
 * `tools-changed` (./index.ts) and the tool inspector's re-inspection (../inspector.ts) both use it.
 *
 * - At most one pass runs per tab; a change that comes while one runs asks for exactly one more.
 * - Passes of one tab start at least `minIntervalMs` apart (ms, `performance.now()`), whatever the
 *   frames send (their own `tools-changed` throttle is extension/src/lib/change-throttle.ts).
 * - A pass answers `stop` (end now), `again` (one more pass, at the same bounded rate) or nothing.
 *   A pass that throws ends the refresh quietly: a refresh is best effort, the checks at dispatch
 *   still hold.
 */
export type RefreshPass = () => Promise<'stop' | 'again' | void>;

/** The refreshes of every tab of one owner. */
export class TabRefresher {
  /** Tabs whose refresh is running, and whether another change came meanwhile. */
  private readonly running = new Map<number, { again: boolean }>();
  /** When each tab's last pass started (ms, performance.now()). */
  private readonly lastPass = new Map<number, number>();

  /** @param minIntervalMs the least time between two passes of one tab (ms). */
  constructor(private readonly minIntervalMs: number) {}

  /** Refresh `tabId` with `pass` now, or after the interval; while one runs, ask it for one more pass. Never throws. */
  request(tabId: number, pass: RefreshPass): void {
    const running = this.running.get(tabId);
    if (running) {
      running.again = true;
      return;
    }
    const state = { again: false };
    this.running.set(tabId, state);
    void (async () => {
      try {
        do {
          state.again = false;
          const wait = (this.lastPass.get(tabId) ?? -Infinity) + this.minIntervalMs - performance.now();
          if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
          this.lastPass.set(tabId, performance.now());
          const r = await pass();
          if (r === 'stop') break;
          if (r === 'again') state.again = true;
        } while (state.again);
      } catch {
        /* best effort: the next change, or the checks at dispatch */
      } finally {
        this.running.delete(tabId);
      }
    })();
  }
}
