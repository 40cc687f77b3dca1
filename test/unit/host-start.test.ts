// `npm start` (scripts/start.mjs) where Electron cannot be obtained: two plain
// lines naming what failed and pointing at `npm run start:web`, a non-zero
// exit, no stack trace, and no build started.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const empty = mkdtempSync(path.join(tmpdir(), 'echo-start-'));
afterAll(() => rmSync(empty, { recursive: true, force: true }));

function start(env: Record<string, string>) {
  const r = spawnSync(process.execPath, ['scripts/start.mjs'], { encoding: 'utf8', env: { ...process.env, ...env }, timeout: 60_000 });
  return { status: r.status, stderr: r.stderr, stdout: r.stdout };
}

function expectPlainFailure(r: { status: number | null; stderr: string; stdout: string }, what: RegExp) {
  expect(r.status).toBe(1);
  // The "downloading…" note is printed only when the download takes over 2 s (a loaded machine): not part of the failure.
  const lines = r.stderr.trim().split('\n').filter((l) => !/^echo-console: downloading Electron \S+ \(first run only\)…$/.test(l));
  expect(lines).toHaveLength(2);
  expect(lines[0]).toMatch(what);
  expect(lines[1]).toBe('echo-console: `npm run start:web` runs the same console in your browser.');
  expect(r.stderr).not.toMatch(/^\s+at /m);
  expect(r.stdout).toBe(''); // the build never started
}

describe('npm start without Electron', () => {
  it.skipIf(existsSync(path.resolve('node_modules/electron/path.txt')))('says the download failed, in two lines', () => {
    // A closed port as the mirror and an empty cache: fails fast and the same way on any machine.
    const r = start({ ELECTRON_MIRROR: 'http://127.0.0.1:9/', electron_config_cache: empty, ELECTRON_OVERRIDE_DIST_PATH: '' });
    expectPlainFailure(r, /^echo-console: Electron \d+\.\d+\.\d+ could not be downloaded \(.+\), so the desktop app cannot start here\.$/);
  });

  it('says when ELECTRON_OVERRIDE_DIST_PATH holds no binary', () => {
    const r = start({ ELECTRON_OVERRIDE_DIST_PATH: empty });
    expectPlainFailure(r, /ELECTRON_OVERRIDE_DIST_PATH is set but holds no Electron binary/);
  });
});
