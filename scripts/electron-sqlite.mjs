#!/usr/bin/env node
/**
 * Makes better-sqlite3's native module available for Electron's ABI, next to
 * (never instead of) the Node build that the tests use:
 *
 *   .electron-abi/better-sqlite3-<v>/electron-<electronVersion>-<platform>-<arch>/better_sqlite3.node
 *
 * src/main/core/ledger/sqlite.ts loads that file through better-sqlite3's
 * `nativeBinding` option when `process.versions.electron` is set. The key formula
 * here must match `electronBindingKey` there (test/unit/ledger-sqlite.test.ts
 * compares the two through `--print-path`).
 *
 * How the binary is obtained, in order:
 *  1. already there (a stamp.json beside it matches): nothing to do;
 *  2. prebuild-install (better-sqlite3's own dependency) downloads the prebuilt
 *     binary that better-sqlite3 publishes for this Electron ABI, run in a staging
 *     folder so node_modules/better-sqlite3/build is never touched;
 *  3. node-gyp (bundled with npm) compiles it against Electron's headers.
 * Both 2 and 3 need a network; without one the script fails with one plain line.
 *
 * CLI:   node scripts/electron-sqlite.mjs [--electron <version>] [--root <dir>]
 *                                         [--platform <p>] [--arch <a>] (packaging for another target;
 *                                          only the download works across targets)
 *                                         [--no-compile] [--print-path] [--quiet]
 *        exits 0 when the binary is ready (prints its path), 1 with one line
 *        "electron-sqlite: <reason>" otherwise.
 * API:   import { ensureElectronSqlite } from './electron-sqlite.mjs'
 *        await ensureElectronSqlite({ root }) -> { ok: true, path, cached } | { ok: false, reason }
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const DEFAULT_ROOT = path.resolve(here, '..');

/** Same formula as electronBindingKey in src/main/core/ledger/sqlite.ts. */
export function electronBindingKey(betterSqlite3Version, electronVersion, platform, arch) {
  return path.join(`better-sqlite3-${betterSqlite3Version}`, `electron-${electronVersion}-${platform}-${arch}`, 'better_sqlite3.node');
}

function readJson(file) {
  return JSON.parse(fs.readFileSync(file, 'utf8'));
}

function sha256File(file) {
  return createHash('sha256').update(fs.readFileSync(file)).digest('hex');
}

/** Last non-empty line of a child's output, trimmed, for a one-line reason. */
function lastLine(text) {
  const lines = String(text || '').split(/\r?\n/).map((l) => l.trim()).filter(Boolean);
  return (lines[lines.length - 1] || 'no output').slice(0, 200);
}

/**
 * Resolve what the build needs to know about the checkout at `root`.
 * @returns {{ ok: true, bsDir: string, bsVersion: string, electronVersion: string, electronDir: string | null } | { ok: false, reason: string }}
 */
export function describeCheckout({ root = DEFAULT_ROOT, electronVersion } = {}) {
  const req = createRequire(path.join(root, 'package.json'));
  let bsPkg;
  try {
    bsPkg = req.resolve('better-sqlite3/package.json');
  } catch {
    return { ok: false, reason: `better-sqlite3 is not installed under ${root} (run npm install)` };
  }
  let electronDir = null;
  let version = electronVersion || process.env.ECHO_ELECTRON_VERSION || '';
  try {
    const ePkg = req.resolve('electron/package.json');
    electronDir = path.dirname(ePkg);
    if (!version) version = readJson(ePkg).version;
  } catch {
    /* electron not installed: only fine when a version was given */
  }
  if (!version) return { ok: false, reason: 'electron is not installed and no --electron <version> was given' };
  if (!/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(version)) return { ok: false, reason: `not an Electron version: ${version}` };
  return { ok: true, bsDir: path.dirname(bsPkg), bsVersion: readJson(bsPkg).version, electronVersion: version, electronDir };
}

/** Path of the Electron executable if it is installed (never triggers its download). */
function electronExecutable(electronDir) {
  if (!electronDir) return null;
  try {
    const rel = fs.readFileSync(path.join(electronDir, 'path.txt'), 'utf8').trim();
    const exe = path.join(electronDir, 'dist', rel);
    return fs.existsSync(exe) ? exe : null;
  } catch {
    return null;
  }
}

/** Try to open an in-memory database with `binary` inside Electron (run as Node). Returns null when fine. */
function checkLoadsInElectron(exe, bsDir, binary) {
  const code =
    'const D=require(process.argv[1]);const db=new D(":memory:",{nativeBinding:process.argv[2]});' +
    'db.prepare("select 1").get();db.close();';
  const r = spawnSync(exe, ['-e', code, bsDir, binary], {
    env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return r.status === 0 ? null : lastLine(r.stderr || r.error?.message);
}

function tryPrebuild(staging, bsDir, c, platform, arch) {
  fs.mkdirSync(staging, { recursive: true });
  fs.copyFileSync(path.join(bsDir, 'package.json'), path.join(staging, 'package.json'));
  let bin;
  try {
    bin = createRequire(path.join(bsDir, 'package.json')).resolve('prebuild-install/bin.js');
  } catch {
    return { ok: false, reason: 'prebuild-install is not installed' };
  }
  const r = spawnSync(
    process.execPath,
    [bin, '--runtime', 'electron', '--target', c.electronVersion, '--platform', platform, '--arch', arch],
    { cwd: staging, encoding: 'utf8', timeout: 180_000 },
  );
  const out = path.join(staging, 'build', 'Release', 'better_sqlite3.node');
  // prebuild-install exits 0 with a warning when the download fails; the file decides.
  if (fs.existsSync(out)) return { ok: true, file: out, source: 'prebuild-install' };
  const why = lastLine(r.stderr || r.stdout || r.error?.message).replace(/^prebuild-install (warn|WARN|info) (install )?/, '');
  return { ok: false, reason: `download failed (${why})` };
}

function npmNodeGyp() {
  const candidates = [];
  if (process.env.npm_config_node_gyp) candidates.push(process.env.npm_config_node_gyp);
  // npm ships node-gyp: <prefix>/lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js
  const prefix = path.dirname(path.dirname(process.execPath));
  candidates.push(path.join(prefix, 'lib', 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'));
  candidates.push(path.join(path.dirname(process.execPath), 'node_modules', 'npm', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'));
  return candidates.find((f) => fs.existsSync(f)) || null;
}

function gypFailure(r) {
  const text = `${r.stderr || ''}\n${r.stdout || ''}`;
  const net = /ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ETIMEDOUT|getaddrinfo|network connectivity/.exec(text);
  if (net) return `no network: ${net[0] === 'network connectivity' ? 'could not download Electron headers' : net[0]}`;
  const errLine = text.split(/\r?\n/).find((l) => /^gyp ERR! (stack )?\S/.test(l) && !/not ok|stack\s+at /.test(l));
  return (errLine || lastLine(r.stderr || r.error?.message)).slice(0, 200);
}

function tryCompile(staging, bsDir, c, arch) {
  const gyp = npmNodeGyp();
  if (!gyp) return { ok: false, reason: 'build from source failed (node-gyp not found)' };
  const common = ['--runtime=electron', `--target=${c.electronVersion}`, `--arch=${arch}`, '--dist-url=https://electronjs.org/headers'];
  // Headers first: without them (no network) there is no point copying the sources.
  const headers = spawnSync(process.execPath, [gyp, 'install', ...common], { cwd: staging, encoding: 'utf8', timeout: 300_000 });
  if (headers.status !== 0) return { ok: false, reason: `build from source failed (${gypFailure(headers)})` };
  for (const part of ['binding.gyp', 'src', 'deps']) {
    fs.cpSync(path.join(bsDir, part), path.join(staging, part), { recursive: true });
  }
  const r = spawnSync(process.execPath, [gyp, 'rebuild', '--release', ...common], { cwd: staging, encoding: 'utf8', timeout: 900_000 });
  const out = path.join(staging, 'build', 'Release', 'better_sqlite3.node');
  if (r.status === 0 && fs.existsSync(out)) return { ok: true, file: out, source: 'node-gyp' };
  return { ok: false, reason: `build from source failed (${gypFailure(r)})` };
}

/**
 * Make sure the Electron-ABI binary exists; fetch or build it if not.
 * @param {{ root?: string, electronVersion?: string, platform?: string, arch?: string,
 *           compile?: boolean, log?: (line: string) => void }} [opts]
 *   root: project root holding node_modules and .electron-abi (default: this repo);
 *   compile: allow the node-gyp fallback (default true).
 * @returns {Promise<{ ok: true, path: string, cached: boolean } | { ok: false, reason: string }>}
 *   Never throws: every failure becomes `{ ok: false, reason }` with a one-line reason.
 */
export async function ensureElectronSqlite(opts = {}) {
  const root = path.resolve(opts.root || DEFAULT_ROOT);
  const platform = opts.platform || process.platform;
  const arch = opts.arch || process.arch;
  const log = opts.log || (() => {});
  if (!/^[a-z0-9_]+$/.test(platform) || !/^[a-z0-9_]+$/.test(arch)) return { ok: false, reason: `not a platform/arch: ${platform}/${arch}` };
  try {
    const c = describeCheckout({ root, electronVersion: opts.electronVersion });
    if (!c.ok) return c;
    const target = path.join(root, '.electron-abi', electronBindingKey(c.bsVersion, c.electronVersion, platform, arch));
    const stampFile = path.join(path.dirname(target), 'stamp.json');
    if (fs.existsSync(target) && fs.existsSync(stampFile)) {
      const stamp = readJson(stampFile);
      if (stamp.sha256 === sha256File(target)) return { ok: true, path: target, cached: true };
      log('stale or damaged binary; fetching again');
    }
    const label = `better-sqlite3 ${c.bsVersion} for Electron ${c.electronVersion} (${platform}-${arch})`;
    const staging = path.join(root, '.electron-abi', `.staging-${process.pid}`);
    fs.rmSync(staging, { recursive: true, force: true });
    try {
      log(`fetching ${label}`);
      let got = tryPrebuild(staging, c.bsDir, c, platform, arch);
      const reasons = [];
      if (!got.ok) {
        reasons.push(got.reason);
        if (opts.compile !== false && platform === process.platform) {
          log(`no prebuilt binary (${got.reason}); compiling against Electron headers`);
          got = tryCompile(staging, c.bsDir, c, arch);
          if (!got.ok) reasons.push(got.reason);
        }
      }
      if (!got.ok) return { ok: false, reason: `${label}: ${reasons.join('; ')}; connect to the network and run \`node scripts/electron-sqlite.mjs\` again` };
      const exe = platform === process.platform && arch === process.arch ? electronExecutable(c.electronDir) : null;
      if (exe) {
        const bad = checkLoadsInElectron(exe, c.bsDir, got.file);
        if (bad) return { ok: false, reason: `${label}: the ${got.source} binary does not load in Electron (${bad})` };
      }
      fs.mkdirSync(path.dirname(target), { recursive: true });
      const tmp = `${target}.tmp-${process.pid}`;
      fs.copyFileSync(got.file, tmp);
      fs.renameSync(tmp, target); // atomic: a running app never sees half a file
      fs.writeFileSync(
        stampFile,
        JSON.stringify({ betterSqlite3: c.bsVersion, electron: c.electronVersion, platform, arch, source: got.source,
          checkedInElectron: Boolean(exe), sha256: sha256File(target), createdAt: new Date().toISOString() }, null, 2) + '\n',
      );
      return { ok: true, path: target, cached: false };
    } finally {
      fs.rmSync(staging, { recursive: true, force: true });
    }
  } catch (e) {
    return { ok: false, reason: `unexpected: ${e instanceof Error ? e.message : String(e)}` };
  }
}

function parseArgs(argv) {
  const o = { compile: true, printPath: false, quiet: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--electron') o.electronVersion = argv[++i];
    else if (a === '--root') o.root = argv[++i];
    else if (a === '--platform') o.platform = argv[++i];
    else if (a === '--arch') o.arch = argv[++i];
    else if (a === '--no-compile') o.compile = false;
    else if (a === '--print-path') o.printPath = true;
    else if (a === '--quiet') o.quiet = true;
    else throw new Error(`unknown argument ${a}`);
  }
  return o;
}

async function main() {
  let o;
  try {
    o = parseArgs(process.argv.slice(2));
  } catch (e) {
    process.stderr.write(`electron-sqlite: ${e.message}\n`);
    return 2;
  }
  if (o.printPath) {
    if (!/^[a-z0-9_]+$/.test(o.platform || 'x') || !/^[a-z0-9_]+$/.test(o.arch || 'x')) {
      process.stderr.write(`electron-sqlite: not a platform/arch: ${o.platform}/${o.arch}\n`);
      return 1;
    }
    const c = describeCheckout({ root: path.resolve(o.root || DEFAULT_ROOT), electronVersion: o.electronVersion });
    if (!c.ok) {
      process.stderr.write(`electron-sqlite: ${c.reason}\n`);
      return 1;
    }
    process.stdout.write(path.join(path.resolve(o.root || DEFAULT_ROOT), '.electron-abi',
      electronBindingKey(c.bsVersion, c.electronVersion, o.platform || process.platform, o.arch || process.arch)) + '\n');
    return 0;
  }
  const r = await ensureElectronSqlite({ ...o, log: o.quiet ? undefined : (l) => process.stderr.write(`electron-sqlite: ${l}\n`) });
  if (!r.ok) {
    process.stderr.write(`electron-sqlite: ${r.reason}\n`);
    return 1;
  }
  if (!o.quiet) process.stdout.write(`${r.path}\n`);
  return 0;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().then((code) => process.exit(code));
}
