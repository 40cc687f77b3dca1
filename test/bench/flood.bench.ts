/**
 * Flood benchmark (`npm run bench -- flood`; issue 9 item 3): does one console
 * stay usable for the person while agents flood it?
 *
 * The console (./flood/console.ts: the real core, ledger, MCP endpoint with
 * its per-agent limits, and the loopback web host) runs in its own process; the
 * flood's senders (./flood/agents.ts) in another. The fixed flood: 4 agent
 * tokens × 100 `tools/call` per second for 10 s, sent open-loop, plus one
 * 700 KB JSON-RPC batch of 10,500 malformed calls at the start.
 *
 * The figure is the console UI's round trip: the web host's WebSocket API call
 * `getSnapshot` (what the console page calls to draw itself), from a client
 * holding a real session (one-time link spent at POST /session, cookie), one
 * call every 20 ms, waiting for each answer. Measured idle (10 s, as long as the
 * flood, so that both p99s rest on about 500 samples) and under the flood (its
 * 10 s) in the same run, against the target: flood p99 ≤ 3 × idle p99.
 * `BENCH_FLOOD_PROFILE=1` runs the console under a CPU profiler and a stall log
 * (./flood/console-profiled.ts).
 *
 * Also: `mainLoopBusy`, the share of time the console's main thread was busy
 * (idle window, flood window); `cpuPressure`, the share of each window in which some
 * runnable task on the machine waited for a CPU (Linux PSI, /proc/pressure/cpu); what the flood got back (HTTP statuses, tool errors by code), and how
 * many receipts it left (`verifyLedger` count before and after, which also
 * says the chain verified). `loadAtStart` / `loadAtEnd`: os.loadavg().
 * Never asserts timings: reading them is a person's job.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { WebSocket } from 'ws';
import { exchangeLink, tokenOf } from '../support/web-session';
import { WS_PATH } from '../../src/shared/web-wire';
import { cpuWaitUs, loadAverage, stats } from './floor';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const TSX = path.join(root, 'node_modules/.bin/tsx');
const TOKENS = 4;
const RATE = Number(process.env.BENCH_FLOOD_RATE ?? 100);
const SECONDS = Number(process.env.BENCH_FLOOD_SECONDS ?? 10);
// The idle reference is as long as the flood, so both p99s come from about as many samples.
const IDLE_MS = Number(process.env.BENCH_FLOOD_IDLE_MS ?? SECONDS * 1_000);
const UI_INTERVAL_MS = 20;
const TARGET = 3;

function spawnTsx(script: string, args: string[]): ChildProcessWithoutNullStreams {
  const child = spawn(TSX, [path.join(here, 'flood', script), ...args], { cwd: root, stdio: ['pipe', 'pipe', 'pipe'] });
  child.stderr.on('data', (c: Buffer) => process.stderr.write(`[${script}] ${c.toString()}`));
  return child;
}

function lines(child: ChildProcessWithoutNullStreams): AsyncIterator<string> {
  return createInterface({ input: child.stdout })[Symbol.asyncIterator]();
}

async function nextLine(it: AsyncIterator<string>, what: string): Promise<string> {
  const r = await it.next();
  if (r.done) throw new Error(`${what} ended before answering`);
  return r.value;
}

/** The console UI's API over the web host's WebSocket, as the renderer speaks it. */
class UiClient {
  private nextId = 1;
  private readonly waiting = new Map<number, (v: unknown) => void>();
  private constructor(private readonly ws: WebSocket) {
    ws.on('message', (data) => {
      const m = JSON.parse(String(data)) as { id?: number; result?: unknown };
      if (typeof m.id === 'number') this.waiting.get(m.id)?.(m.result);
    });
  }

  static async open(web: { port: number; origin: string; consoleUrl: string }): Promise<UiClient> {
    const r = await exchangeLink(web, JSON.stringify({ token: tokenOf(web.consoleUrl) }));
    if (r.status !== 200) throw new Error(`session exchange: HTTP ${r.status} ${r.body}`);
    const sid = (JSON.parse(r.body) as { session: string }).session;
    const ws = new WebSocket(`ws://127.0.0.1:${web.port}${WS_PATH}/${sid}`, { headers: { Origin: web.origin, Cookie: r.setCookie[0]!.split(';')[0]! } });
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => ws.send(JSON.stringify({ type: 'hello' })));
      ws.once('message', (d) => ((JSON.parse(String(d)) as { type?: string }).type === 'welcome' ? resolve() : reject(new Error(`no welcome: ${String(d)}`))));
      ws.once('error', reject);
      ws.once('close', (code) => reject(new Error(`socket closed ${code}`)));
    });
    return new UiClient(ws);
  }

  call(method: string, params?: unknown): Promise<unknown> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.waiting.set(id, (v) => {
        this.waiting.delete(id);
        resolve(v);
      });
      this.ws.send(JSON.stringify({ id, method, ...(params === undefined ? {} : { params }) }));
    });
  }

  /** getSnapshot round trips (ms), one every UI_INTERVAL_MS (or as soon as the last answered), until `until()`. */
  async probe(until: () => boolean): Promise<number[]> {
    const out: number[] = [];
    while (!until()) {
      const t0 = performance.now();
      await this.call('getSnapshot');
      const dt = performance.now() - t0;
      out.push(dt);
      if (dt < UI_INTERVAL_MS) await new Promise((r) => setTimeout(r, UI_INTERVAL_MS - dt));
    }
    return out;
  }

  close(): void {
    this.ws.close();
  }
}

const p99 = (xs: readonly number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return Math.round((s[Math.min(s.length - 1, Math.ceil(0.99 * s.length) - 1)] ?? NaN) * 100) / 100;
};

const busyShare = (a: { active: number; idle: number }, b: { active: number; idle: number }) => {
  const active = b.active - a.active;
  return Math.round((active / (active + b.idle - a.idle)) * 1000) / 1000;
};

/** PSI's CPU wait so far (µs) and the wall clock (ms) it was read at. */
const pressureAt = () => ({ waitUs: cpuWaitUs(), atMs: performance.now() });

const pressureShare = (a: ReturnType<typeof pressureAt>, b: ReturnType<typeof pressureAt>) =>
  a.waitUs === null || b.waitUs === null ? null : Math.round(((b.waitUs - a.waitUs) / 1000 / (b.atMs - a.atMs)) * 1000) / 1000;

export async function run(): Promise<Record<string, unknown>> {
  const loadAtStart = loadAverage();
  const consoleProc = spawnTsx(process.env.BENCH_FLOOD_PROFILE ? 'console-profiled.ts' : 'console.ts', []);
  try {
    const fromConsole = lines(consoleProc);
    /** The console's main-thread event loop so far: busy and idle ms. */
    const elu = async () => {
      consoleProc.stdin.write('elu\n');
      return JSON.parse(await nextLine(fromConsole, 'the flood console')) as { active: number; idle: number };
    };
    const info = JSON.parse(await nextLine(fromConsole, 'the flood console')) as { mcpUrl: string; secrets: string[]; web: { port: number; origin: string; consoleUrl: string } };
    const ui = await UiClient.open(info.web);
    const countOf = async () => ((await ui.call('verifyLedger')) as { ok: boolean; value: { ok: boolean; count: number } }).value;
    // Warm-up, then the idle reference.
    let stop = performance.now() + 1_000;
    await ui.probe(() => performance.now() > stop);
    stop = performance.now() + IDLE_MS;
    const elu0 = await elu();
    const psi0 = pressureAt();
    const idle = await ui.probe(() => performance.now() > stop);
    const elu1 = await elu();
    const psi1 = pressureAt();
    const before = await countOf();

    const agents = spawnTsx('agents.ts', [info.mcpUrl, String(RATE), String(SECONDS), ...info.secrets.slice(0, TOKENS)]);
    const out = lines(agents);
    if ((await nextLine(out, 'the flood agents')) !== 'flooding') throw new Error('the flood agents did not start');
    const eluFlood = await elu();
    const psiFlood = pressureAt();
    let floodDone = false;
    const tallyP = nextLine(out, 'the flood agents').then((l) => {
      floodDone = true;
      return JSON.parse(l) as { batch: { bytes: number; status: number }; tallies: Array<{ sent: number; ok: number; statuses: Record<string, number>; toolErrors: Record<string, number>; transportErrors: number }> };
    });
    const flood = await ui.probe(() => floodDone);
    const elu2 = await elu();
    const psi2 = pressureAt();
    const tally = await tallyP;
    const after = await countOf();
    ui.close();

    const idleP99 = p99(idle);
    const floodP99 = p99(flood);
    const sum = (f: (t: (typeof tally.tallies)[number]) => number) => tally.tallies.reduce((n, t) => n + f(t), 0);
    return {
      flood: { tokens: TOKENS, callsPerSecondPerToken: RATE, seconds: SECONDS, batch: tally.batch },
      uiRoundTrip: { idle: { ...stats(idle), p99: idleP99 }, underFlood: { ...stats(flood), p99: floodP99 } },
      ratioP99: Math.round((floodP99 / idleP99) * 100) / 100,
      // The share of wall time the console's main thread (the UI's event loop) was busy, idle and under the flood.
      mainLoopBusy: { idle: busyShare(elu0, elu1), underFlood: busyShare(eluFlood, elu2) },
      // The share of wall time in which some runnable task on this machine waited for a CPU (Linux
      // PSI; null without it), idle and under the flood: the console cannot answer while it waits.
      cpuPressure: { idle: pressureShare(psi0, psi1), underFlood: pressureShare(psiFlood, psi2) },
      targetRatio: TARGET,
      agentsGot: {
        sent: sum((t) => t.sent),
        succeededOrAnswered: sum((t) => t.ok),
        toolErrors: tally.tallies.reduce<Record<string, number>>((m, t) => {
          for (const [k, v] of Object.entries(t.toolErrors)) m[k] = (m[k] ?? 0) + v;
          return m;
        }, {}),
        httpStatuses: tally.tallies.reduce<Record<string, number>>((m, t) => {
          for (const [k, v] of Object.entries(t.statuses)) m[k] = (m[k] ?? 0) + v;
          return m;
        }, {}),
        transportErrors: sum((t) => t.transportErrors),
      },
      receipts: { before: before.count, after: after.count, added: after.count - before.count, chainVerifies: after.ok },
      loadAtStart,
      loadAtEnd: loadAverage(),
    };
  } finally {
    const exited = new Promise((resolve) => consoleProc.once('exit', resolve));
    consoleProc.kill('SIGTERM');
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000))]);
  }
}
