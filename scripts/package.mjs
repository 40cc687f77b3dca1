#!/usr/bin/env node
/**
 * `npm run package [-- options]`: build the installers with electron-builder
 * (electron-builder.yml; docs/packaging.md).
 *
 *  1. `npm run build` unless `--no-build`; then check that out/ and extension/dist hold
 *     what electron-builder.yml packs.
 *  2. The Electron release for the target: `--electron-dist <dir>` (an unpacked Electron,
 *     or a folder holding its release zip), else node_modules/electron/dist when it holds
 *     this host's binary (`npx install-electron`), else the release zip downloaded into
 *     Electron's cache (@electron/get, as electron-builder itself would).
 *  3. better-sqlite3's Electron-ABI binary for the target (scripts/electron-sqlite.mjs).
 *  4. electron-builder with the targets of electron-builder.yml for the platform.
 *
 * Options: --linux | --mac | --win (default: this platform), --x64 | --arm64 | --ia32
 * | --armv7l (default: this arch), --dir (unpacked app only, no installer),
 * --no-build, --electron-dist <dir>.
 * Every failure is one line `echo-console package: <reason>` and exit 1, never a stack trace.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ensureElectronSqlite } from './electron-sqlite.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(path.join(root, 'package.json'));

/** Paths electron-builder.yml packs, which must exist before electron-builder runs (relative to root). */
export const REQUIRED_BUILD_OUTPUT = ['out/main/index.js', 'out/preload/index.cjs', 'out/renderer/index.html', 'out/tools/native-host.mjs', 'extension/dist/manifest.json'];

const PLATFORM_FLAGS = { '--linux': 'linux', '--mac': 'darwin', '--win': 'win32' };
const ARCH_FLAGS = { '--x64': 'x64', '--arm64': 'arm64', '--ia32': 'ia32', '--armv7l': 'arm' };
/** Node's arch name → Electron release / electron-builder arch name. */
const RELEASE_ARCH = { x64: 'x64', arm64: 'arm64', ia32: 'ia32', arm: 'armv7l' };
/** Electron's executable inside an unpacked release, per platform. */
const EXECUTABLE = { linux: 'electron', win32: 'electron.exe', darwin: 'Electron.app' };

function fail(reason) {
  process.stderr.write(`echo-console package: ${reason}\n`);
  process.exit(1);
}

/** First line of an error's message, for a one-line reason. */
function oneLine(e) {
  let text = e instanceof Error ? e.message : String(e);
  // fetch() says only "fetch failed"; the reason (e.g. getaddrinfo ENOTFOUND) is its cause.
  const cause = e instanceof Error && e.cause instanceof Error ? e.cause.message : '';
  if (cause && !text.includes(cause)) text = `${text.split(/\r?\n/)[0]}: ${cause}`;
  return (text.split(/\r?\n/).map((l) => l.trim()).find(Boolean) ?? 'unknown error').slice(0, 300);
}

/**
 * Parse the command line.
 * @returns {{ platform: string, arch: string, build: boolean, dir: boolean, electronDist: string | null }}
 * @throws Error naming the first unknown or incomplete option
 */
export function parseArgs(argv, host = { platform: process.platform, arch: process.arch }) {
  const o = { platform: host.platform, arch: host.arch, build: true, dir: false, electronDist: null };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a in PLATFORM_FLAGS) o.platform = PLATFORM_FLAGS[a];
    else if (a in ARCH_FLAGS) o.arch = ARCH_FLAGS[a];
    else if (a === '--dir') o.dir = true;
    else if (a === '--no-build') o.build = false;
    else if (a === '--electron-dist') {
      const v = argv[++i];
      if (!v) throw new Error('--electron-dist needs a folder');
      o.electronDist = path.resolve(v);
    } else throw new Error(`unknown option ${a} (see the header of scripts/package.mjs)`);
  }
  if (!(o.platform in EXECUTABLE)) throw new Error(`cannot package for ${o.platform}`);
  if (!(o.arch in RELEASE_ARCH)) throw new Error(`cannot package for arch ${o.arch}`);
  return o;
}

/**
 * Whether `dir` holds an Electron release for `platform`: its executable (unpacked) or
 * the release zip electron-builder accepts as electronDist.
 */
export function holdsElectron(dir, platform, arch, version) {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) return false;
  if (existsSync(path.join(dir, EXECUTABLE[platform]))) return true;
  const zip = `electron-v${version}-${platform}-${RELEASE_ARCH[arch]}.zip`;
  return readdirSync(dir).includes(zip);
}

/**
 * Find or fetch the Electron release for the target.
 * @returns {Promise<{ ok: true, electronDist: string | null } | { ok: false, reason: string }>}
 *   electronDist null: the zip is in Electron's cache, where electron-builder looks itself.
 */
async function ensureElectronRelease(o, version) {
  const label = `Electron ${version} for ${o.platform}-${RELEASE_ARCH[o.arch]}`;
  if (o.electronDist) {
    return holdsElectron(o.electronDist, o.platform, o.arch, version)
      ? { ok: true, electronDist: o.electronDist }
      : { ok: false, reason: `${label}: ${o.electronDist} holds neither ${EXECUTABLE[o.platform]} nor electron-v${version}-${o.platform}-${RELEASE_ARCH[o.arch]}.zip` };
  }
  const installed = path.join(path.dirname(require.resolve('electron/package.json')), 'dist');
  if (o.platform === process.platform && o.arch === process.arch && holdsElectron(installed, o.platform, o.arch, version)) {
    return { ok: true, electronDist: installed };
  }
  let downloadArtifact;
  try {
    // electron's own dependency; the same cache electron-builder reads.
    ({ downloadArtifact } = await import(pathToFileURL(require.resolve('@electron/get')).href));
  } catch {
    return { ok: false, reason: `${label}: @electron/get is not installed (run npm ci)` };
  }
  try {
    await downloadArtifact({ version, artifactName: 'electron', platform: o.platform, arch: RELEASE_ARCH[o.arch] });
    return { ok: true, electronDist: null };
  } catch (e) {
    return {
      ok: false,
      reason: `${label} could not be downloaded (${oneLine(e)}); packaging needs the Electron binary: connect to the network, or pass --electron-dist <folder with it>`,
    };
  }
}

async function main() {
  let o;
  try {
    o = parseArgs(process.argv.slice(2));
  } catch (e) {
    fail(oneLine(e));
  }
  // 1. build
  if (o.build) {
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    const b = spawnSync(npm, ['run', 'build'], { cwd: root, stdio: 'inherit', shell: process.platform === 'win32' });
    if (b.status !== 0) fail('the build failed (see the messages above)');
  }
  const missing = REQUIRED_BUILD_OUTPUT.filter((p) => !existsSync(path.join(root, p)));
  if (missing.length) fail(`${missing.join(', ')} missing: run \`npm run build\` first`);

  // 2. Electron itself
  const version = JSON.parse(readFileSync(require.resolve('electron/package.json'), 'utf8')).version;
  const electron = await ensureElectronRelease(o, version);
  if (!electron.ok) fail(electron.reason);

  // 3. better-sqlite3 for the target's Electron ABI
  const sqlite = await ensureElectronSqlite({ root, electronVersion: version, platform: o.platform, arch: o.arch });
  if (!sqlite.ok) fail(`the ledger database driver for the app: ${sqlite.reason}`);

  // 4. electron-builder
  let builder;
  try {
    builder = require('electron-builder');
  } catch {
    fail('electron-builder is not installed (run npm ci)');
  }
  const platform = { linux: builder.Platform.LINUX, darwin: builder.Platform.MAC, win32: builder.Platform.WINDOWS }[o.platform];
  const arch = builder.Arch[RELEASE_ARCH[o.arch]];
  try {
    const files = await builder.build({
      projectDir: root,
      // electron-builder reads electron-builder.yml from projectDir and merges this over it.
      ...(electron.electronDist ? { config: { electronDist: electron.electronDist } } : {}),
      targets: platform.createTarget(o.dir ? ['dir'] : null, arch),
      publish: 'never',
    });
    for (const f of files) process.stdout.write(`${path.relative(root, f)}\n`);
  } catch (e) {
    fail(`electron-builder failed: ${oneLine(e)}`);
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await main();
}
