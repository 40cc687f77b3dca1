/**
 * Benchmark runner: `npm run bench [-- name ...]`.
 *
 * Runs every test/bench/<name>.bench.ts module (or only the names given), one
 * after the other, and prints one JSON object: `{ "<name>": figures, ... }`.
 * A module exports `async function run(): Promise<Record<string, unknown>>`;
 * it measures its subject side by side with a reference taken in the same run
 * (so a slow or busy machine shifts both), and never asserts timings: reading
 * the figures is a person's job. Progress goes to stderr; exit 1 if a module
 * failed (its entry is then `{ "error": message }`).
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const SUFFIX = '.bench.ts';

interface BenchModule {
  run: () => Promise<Record<string, unknown>>;
}

async function main(argv: string[]): Promise<number> {
  const available = readdirSync(here).filter((f) => f.endsWith(SUFFIX)).map((f) => f.slice(0, -SUFFIX.length)).sort();
  const wanted = argv.length ? argv.map((a) => a.replace(/\.bench\.ts$/, '')) : available;
  const unknown = wanted.filter((w) => !available.includes(w));
  if (unknown.length) {
    process.stderr.write(`bench: no such benchmark: ${unknown.join(', ')} (have: ${available.join(', ') || 'none'})\n`);
    return 2;
  }
  const out: Record<string, unknown> = {};
  let failed = false;
  for (const name of wanted) {
    process.stderr.write(`bench: ${name} ...\n`);
    const started = performance.now();
    try {
      const mod = (await import(pathToFileURL(path.join(here, name + SUFFIX)).href)) as Partial<BenchModule>;
      if (typeof mod.run !== 'function') throw new Error(`${name}${SUFFIX} does not export run()`);
      out[name] = await mod.run();
    } catch (e) {
      failed = true;
      out[name] = { error: e instanceof Error ? e.message : String(e) };
    }
    process.stderr.write(`bench: ${name} done in ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
  }
  process.stdout.write(JSON.stringify(out, null, 2) + '\n');
  return failed ? 1 : 0;
}

main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
