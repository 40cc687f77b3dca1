/**
 * When the console draws itself for the first time (main.tsx). React renders once the data its
 * first screen shows is in — the snapshot (approvals, link, settings) and, when the page opened on
 * a deep link (./route.ts), the timeline's first page — instead of drawing an empty shell that the
 * answers redraw a moment later: on a cold open that shell's render, layout and paint ran between
 * the socket's open and its answers, and delayed both (the timeline's first screenful, issue 12
 * "Measured"; docs/timeline.md). It also spares the person a flash of "no pending approvals"
 * before the snapshot says otherwise.
 *
 * It never waits for long: it renders as soon as the transport has failed to open (unreachable,
 * or the session refused: the page then says so), and after `capMs` at the latest, so a console
 * slow to answer shows its "connecting" page as before.
 */
import type { TransportState } from './transport/ws-client';
import type { TimelineStore } from './stores/timeline';

export interface FirstRenderOptions {
  /** Settles when the first snapshot has been answered, well or not (stores/index.ts bindConsole). */
  snapshot: Promise<unknown>;
  /** The timeline store when the page opened on a deep link (its first page is waited for); else null. */
  timeline: TimelineStore | null;
  transport: { state(): TransportState; onState(l: (s: TransportState) => void): () => void };
  /** The longest wait (ms) before rendering anyway. */
  capMs: number;
}

/** The default longest wait before the first render (ms): about the first screenful's budget. */
export const FIRST_RENDER_CAP_MS = 250;

/** Resolves when the first render may happen (see the file header); never rejects. */
export function firstRenderReady(opts: FirstRenderOptions): Promise<void> {
  return new Promise<void>((resolve) => {
    const offs: Array<() => void> = [];
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      for (const off of offs.splice(0)) off();
      resolve();
    };
    const timer = setTimeout(finish, opts.capMs);
    const failed = (s: TransportState) => s === 'reconnecting' || s === 'unauthorized';
    if (failed(opts.transport.state())) return finish();
    offs.push(opts.transport.onState((s) => failed(s) && finish()));
    const timelineReady = new Promise<void>((ready) => {
      const store = opts.timeline;
      if (!store) return ready();
      const shown = (t: ReturnType<TimelineStore['getState']>) => t.loaded || t.error !== null || t.notice !== null;
      if (shown(store.getState())) return ready();
      offs.push(store.subscribe((t) => shown(t) && ready()));
    });
    void Promise.all([opts.snapshot.then(() => undefined, () => undefined), timelineReady]).then(finish);
  });
}
