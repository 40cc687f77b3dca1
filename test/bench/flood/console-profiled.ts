/**
 * The flood console (./console.ts) with a CPU profile and a stall log, for
 * finding what holds the console's event loop under the flood:
 * `BENCH_FLOOD_PROFILE=1 npm run bench -- flood`. On SIGTERM it writes
 * `$TMPDIR/echo-flood.cpuprofile` (V8's format: open it in Chrome's DevTools,
 * Performance panel) and `$TMPDIR/echo-flood-stalls.json`: `{ profileStartMs,
 * stalls: [startMs, ms][], gcs: [startMs, ms, kind][] }` on `performance.now()`'s
 * clock, where a stall is a 1 ms timer that fired more than 6 ms late. The
 * profiler's 200 µs sampling costs the console a few percent, so a profiled
 * run's figures are not the bench's figures.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';

const session = new Session();
session.connect();
function post<T>(method: string, params?: object): Promise<T> {
  return new Promise((resolve, reject) => session.post(method, params ?? {}, (e, r) => (e ? reject(e) : resolve(r as T))));
}

const stalls: Array<[number, number]> = [];
const gcs: Array<[number, number, number]> = [];
let last = performance.now();
setInterval(() => {
  const now = performance.now();
  if (now - last > 6) stalls.push([last, now - last]);
  last = now;
}, 1).unref();
new PerformanceObserver((list) => {
  for (const e of list.getEntries() as Array<PerformanceEntry & { detail?: { kind?: number } }>) gcs.push([e.startTime, e.duration, e.detail?.kind ?? 0]);
}).observe({ entryTypes: ['gc'] });

let profileStartMs = 0;
await post('Profiler.enable');
await post('Profiler.setSamplingInterval', { interval: 200 });
await post('Profiler.start');
profileStartMs = performance.now();
process.on('SIGTERM', () => {
  void post<{ profile: unknown }>('Profiler.stop').then((r) => {
    writeFileSync(join(tmpdir(), 'echo-flood.cpuprofile'), JSON.stringify(r.profile));
    writeFileSync(join(tmpdir(), 'echo-flood-stalls.json'), JSON.stringify({ profileStartMs, stalls, gcs }));
  });
});
await import('./console');
