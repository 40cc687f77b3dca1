/**
 * Crash safety: a child process appends in a loop and prints each receipt once
 * `append` has returned; we SIGKILL it 20 times at random moments. After each
 * kill the ledger must open, verify whole, and hold every acknowledged receipt
 * with the acknowledged hash: acknowledged at commit, before its background fsync.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { Ledger } from '../../src/main/core/ledger/index';
import { tempDir } from './support/ledger-fixtures';

const here = path.dirname(fileURLToPath(import.meta.url));
const CHILD = path.join(here, 'support', 'ledger-crash-child.ts');
const KILLS = 20;

const tmp = tempDir('ledger-crash-');
afterAll(() => tmp.cleanup());

/** Start the child, wait until it is appending, kill it after `delayMs`; resolve with the acknowledged lines. */
function runAndKill(file: string, delayMs: number): Promise<{ acked: [number, string][]; startCount: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, file], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    let timer: NodeJS.Timeout | undefined;
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      if (!timer && out.includes('\n')) timer = setTimeout(() => child.kill('SIGKILL'), delayMs);
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    const guard = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.on('error', reject);
    child.on('exit', (_code, signal) => {
      clearTimeout(guard);
      if (signal !== 'SIGKILL') return reject(new Error(`child exited by itself: ${err.slice(0, 500)}`));
      const lines = out.split('\n');
      lines.pop(); // an unterminated last line was never acknowledged
      const [ready, ...rest] = lines;
      const m = /^ready (\d+)$/.exec(ready ?? '');
      if (!m) return reject(new Error(`no ready line; stderr: ${err.slice(0, 500)}`));
      const acked = rest.map((l) => {
        const [seq, hash] = l.split(' ');
        return [Number(seq), String(hash)] as [number, string];
      });
      resolve({ acked, startCount: Number(m[1]) });
    });
  });
}

describe('crash safety', () => {
  it(`loses no acknowledged receipt across ${KILLS} SIGKILLs`, async () => {
    const file = tmp.file('crash.db');
    const acked = new Map<number, string>();
    let seed = 7;
    const rand = (): number => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
    let killedMidStream = 0;
    for (let round = 0; round < KILLS; round++) {
      const run = await runAndKill(file, Math.floor(rand() * 60));
      for (const [seq, hash] of run.acked) acked.set(seq, hash);
      if (run.acked.length > 0) killedMidStream++;
      const ledger = new Ledger(file);
      try {
        const report = ledger.verify();
        expect(report, `round ${round}`).toMatchObject({ ok: true });
        const maxAcked = Math.max(0, ...acked.keys());
        expect(report.count).toBeGreaterThanOrEqual(maxAcked);
        expect(report.count).toBeGreaterThanOrEqual(run.startCount);
        for (const [seq, hash] of acked) expect(ledger.get(seq)?.hash, `round ${round}, seq ${seq}`).toBe(hash);
      } finally {
        ledger.close();
      }
    }
    expect(acked.size).toBeGreaterThan(0);
    expect(killedMidStream).toBeGreaterThan(KILLS / 4); // most kills land while appends are under way
  }, 60_000);
});
