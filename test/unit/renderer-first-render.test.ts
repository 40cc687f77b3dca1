// When the console draws itself first (src/renderer/first-render.ts): once the first screen's data
// is in, or at once when the transport failed, or at the cap; never before the data otherwise.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { firstRenderReady } from '../../src/renderer/first-render';
import { createTimelineStore } from '../../src/renderer/stores/timeline';
import { FakeConsole } from '../support/fake-console';
import { fakeTransport } from '../support/fake-transport';

/** A promise and its resolve, to answer the snapshot when the test says. */
function deferred() {
  let resolve: () => void = () => undefined;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** Whether `p` has settled after the pending microtasks ran. */
async function settled(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  void p.then(() => (done = true));
  for (let i = 0; i < 20; i++) await Promise.resolve();
  return done;
}

afterEach(() => vi.useRealTimers());

describe('the first render', () => {
  it('waits for the snapshot, and for a deep link also for the timeline’s first page; then renders', async () => {
    const fake = new FakeConsole({ receiptCount: 3 });
    const timeline = createTimelineStore(fake);
    const snap = deferred();
    const t = fakeTransport('connecting');
    const ready = firstRenderReady({ snapshot: snap.promise, timeline, transport: t.transport, capMs: 3_600_000 });
    expect(await settled(ready)).toBe(false);
    snap.resolve();
    expect(await settled(ready)).toBe(false); // the deep link's page is not in yet
    t.go('open');
    expect(await settled(ready)).toBe(false); // the welcome alone is not the data
    await timeline.getState().setFilter({});
    expect(timeline.getState().loaded).toBe(true);
    expect(await settled(ready)).toBe(true);
    expect(t.listeners.size).toBe(0); // it let go of the transport
  });

  it('without a deep link renders once the snapshot is answered, well or not', async () => {
    const snap = deferred();
    const ready = firstRenderReady({ snapshot: snap.promise, timeline: null, transport: fakeTransport('open').transport, capMs: 3_600_000 });
    expect(await settled(ready)).toBe(false);
    snap.resolve();
    expect(await settled(ready)).toBe(true);
    const failed = firstRenderReady({ snapshot: Promise.reject(new Error('no')), timeline: null, transport: fakeTransport('open').transport, capMs: 3_600_000 });
    expect(await settled(failed)).toBe(true);
  });

  it('renders at once when the transport cannot open (unreachable or refused), so the page can say so', async () => {
    for (const s of ['reconnecting', 'unauthorized'] as const) {
      const t = fakeTransport('connecting');
      const ready = firstRenderReady({ snapshot: new Promise(() => undefined), timeline: createTimelineStore(new FakeConsole()), transport: t.transport, capMs: 3_600_000 });
      expect(await settled(ready)).toBe(false);
      t.go(s);
      expect(await settled(ready), s).toBe(true);
      expect(await settled(firstRenderReady({ snapshot: new Promise(() => undefined), timeline: null, transport: fakeTransport(s).transport, capMs: 3_600_000 })), s).toBe(true);
    }
  });

  it('renders at the cap when the console is slow to answer (the "connecting" page, as before)', async () => {
    vi.useFakeTimers();
    const ready = firstRenderReady({ snapshot: new Promise(() => undefined), timeline: null, transport: fakeTransport('connecting').transport, capMs: 250 });
    await vi.advanceTimersByTimeAsync(249);
    expect(await settled(ready)).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await settled(ready)).toBe(true);
  });
});
