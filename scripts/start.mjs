#!/usr/bin/env node
/**
 * `npm start`: run the Echo Console desktop app.
 *
 *  1. Make sure Electron's binary is there. The `electron` npm package no longer
 *     downloads it at install time: its index.js downloads it on first use by
 *     running its own install.js (@electron/get), with output on our terminal and
 *     an exception on failure. We run that install.js ourselves, quietly, and turn
 *     a failure into two plain lines pointing at `npm run start:web`.
 *  2. Build (`npm run build`: electron-vite, extension, tools) unless `--no-build`.
 *  3. Make better-sqlite3 available for Electron's ABI (scripts/electron-sqlite.mjs,
 *     when present); it answers one line when it cannot.
 *  4. Launch Electron on this folder (package.json `main`: out/main/index.js) and
 *     exit with its exit code.
 *
 * Every failure is one or two lines on stderr and a non-zero exit, never a stack trace.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = new Set(process.argv.slice(2));
const WEB_HINT = '`npm run start:web` runs the same console in your browser.';

function fail(...lines) {
  for (const l of lines) process.stderr.write(`echo-console: ${l}\n`);
  process.exit(1);
}

/** A short reason from a child's output: the first line that names an error, else the last line. */
function reasonFrom(text) {
  const lines = String(text || '')
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('at '));
  const named = lines.find((l) => /^(\w*Error|Error)\b|ENOTFOUND|ECONNREFUSED|EAI_AGAIN|ETIMEDOUT|HTTP\s?\d{3}/.test(l));
  return (named ?? lines.at(-1) ?? 'no output').slice(0, 200);
}

/**
 * Run a command with its output captured; say `slowNote` only if it takes
 * longer than 2 s (a failing download is then just the two lines of `fail`).
 * @returns {Promise<{status: number | null, output: string, error?: Error}>}
 */
function runQuietly(cmd, argv, cwd, slowNote) {
  return new Promise((resolve) => {
    let output = '';
    const child = spawn(cmd, argv, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    const note = setTimeout(() => process.stderr.write(`echo-console: ${slowNote}\n`), 2_000);
    const kill = setTimeout(() => child.kill(), 10 * 60_000);
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('error', (error) => {
      clearTimeout(note);
      clearTimeout(kill);
      resolve({ status: null, output, error });
    });
    child.on('close', (status) => {
      clearTimeout(note);
      clearTimeout(kill);
      resolve({ status, output });
    });
  });
}

/**
 * Path of the Electron executable, downloading it first when missing.
 * @returns {{ok: true, path: string} | {ok: false, reason: string}}
 */
async function ensureElectron() {
  const req = createRequire(path.join(root, 'package.json'));
  let dir;
  try {
    dir = path.dirname(req.resolve('electron/package.json'));
  } catch {
    return { ok: false, reason: 'the electron package is not installed (run `npm ci`)' };
  }
  const version = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')).version;
  const binaryPath = () => {
    const pathFile = path.join(dir, 'path.txt');
    const rel = existsSync(pathFile) ? readFileSync(pathFile, 'utf8').trim() : '';
    if (process.env.ELECTRON_OVERRIDE_DIST_PATH) return path.join(process.env.ELECTRON_OVERRIDE_DIST_PATH, rel || 'electron');
    return rel ? path.join(dir, 'dist', rel) : null;
  };
  let bin = binaryPath();
  if (bin && existsSync(bin)) return { ok: true, path: bin };
  if (process.env.ELECTRON_OVERRIDE_DIST_PATH) {
    return { ok: false, reason: `ELECTRON_OVERRIDE_DIST_PATH is set but holds no Electron binary (${bin})` };
  }
  const r = await runQuietly(process.execPath, [path.join(dir, 'install.js')], dir, `downloading Electron ${version} (first run only)…`);
  bin = binaryPath();
  if (r.status === 0 && bin && existsSync(bin)) return { ok: true, path: bin };
  const why = r.error ? r.error.message : reasonFrom(r.output);
  return { ok: false, reason: `Electron ${version} could not be downloaded (${why})` };
}

// 1. Electron first: without it nothing else is worth doing.
const electron = await ensureElectron();
if (!electron.ok) fail(`${electron.reason}, so the desktop app cannot start here.`, WEB_HINT);

// 2. Build.
if (!args.has('--no-build')) {
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const b = spawnSync(npm, ['run', 'build'], { cwd: root, stdio: 'inherit', shell: process.platform === 'win32' });
  if (b.status !== 0) fail('the build failed (see the messages above).');
}
if (!existsSync(path.join(root, 'out', 'main', 'index.js'))) fail('out/main/index.js is missing: run `npm run build`.');

// 3. better-sqlite3 for Electron's ABI (the ledger engineer's script; absent in very old checkouts).
const sqliteScript = path.join(root, 'scripts', 'electron-sqlite.mjs');
if (existsSync(sqliteScript)) {
  const s = spawnSync(process.execPath, [sqliteScript, '--quiet'], { cwd: root, encoding: 'utf8' });
  if (s.status !== 0) {
    fail(`${reasonFrom(`${s.stderr}\n${s.stdout}`).replace(/^electron-sqlite:\s*/, 'the ledger database driver is not ready for Electron: ')}`, WEB_HINT);
  }
}

// 4. Launch. ELECTRON_RUN_AS_NODE would turn the app into a plain Node process.
const env = { ...process.env };
delete env.ELECTRON_RUN_AS_NODE;
const child = spawn(electron.path, [root], { cwd: root, stdio: 'inherit', env, windowsHide: false });
child.on('error', (e) => fail(`Electron could not be started (${e.message}).`, WEB_HINT));
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    if (child.exitCode === null) child.kill(signal);
  });
}
child.on('exit', (code, signal) => {
  if (signal) process.exit(1);
  process.exit(code ?? 0);
});
