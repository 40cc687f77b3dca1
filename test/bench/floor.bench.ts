/**
 * Floor benchmark (`npm run bench -- floor`): the four echoes of floor/index.ts
 * (MCP over Streamable HTTP, native messaging through a host and Chrome, service
 * worker ⇄ content script, in-page executeTool), built from no product code: the
 * least each hop of the console's pipeline can cost on this machine, now.
 *
 * Figures (ms): p50/p95/n (and mean, min, max) of each echo, measured in
 * interleaved rounds of BENCH_FLOOR_K (default 10) of each, BENCH_FLOOR_N
 * (default 200) per series after BENCH_FLOOR_WARMUP (default 10) each; `sumP50`
 * and `sumP95`, the floor of one agent call; the load average at start and end.
 * Needs Chromium. Never asserts timings: reading them is a person's job.
 */
import { FLOOR_SERIES, loadAverage, startFloor, stats, type Floor, type FloorSeries } from './floor';

const N = Number(process.env.BENCH_FLOOR_N ?? 200);
const K = Number(process.env.BENCH_FLOOR_K ?? 10);
const WARMUP = Number(process.env.BENCH_FLOOR_WARMUP ?? 10);

/** Run `n` of every series in interleaved rounds of `k` each; answers the samples per series (ms). */
export async function floorRounds(floor: Floor, n: number, k: number): Promise<Record<FloorSeries, number[]>> {
  const out = Object.fromEntries(FLOOR_SERIES.map((s) => [s, [] as number[]])) as Record<FloorSeries, number[]>;
  for (let done = 0; done < n; done += k) {
    const m = Math.min(k, n - done);
    for (const s of FLOOR_SERIES) out[s].push(...(await floor.run(s, m)));
  }
  return out;
}

export async function run(): Promise<Record<string, unknown>> {
  const loadAtStart = loadAverage();
  const floor = await startFloor();
  try {
    await floorRounds(floor, WARMUP, WARMUP);
    const samples = await floorRounds(floor, N, K);
    const figures = Object.fromEntries(FLOOR_SERIES.map((s) => [s, stats(samples[s])])) as Record<FloorSeries, ReturnType<typeof stats>>;
    const sum = (q: 'p50' | 'p95') => Math.round(FLOOR_SERIES.reduce((a, s) => a + figures[s][q], 0) * 100) / 100;
    return { unit: 'ms', perSeries: N, roundSize: K, ...figures, sumP50: sum('p50'), sumP95: sum('p95'), inPageArgumentForm: floor.argumentForm, loadAtStart, loadAtEnd: loadAverage() };
  } finally {
    await floor.close();
  }
}
