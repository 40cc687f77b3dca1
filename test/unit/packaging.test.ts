/**
 * Packaging (issue 12 item 8): electron-builder.yml as electron-builder reads it,
 * the afterPack hook's fuses and Electron-ABI check, the files and asarUnpack
 * globs against the real out/ of `npm run build`, an asar archive made from them
 * with @electron/asar, and `npm run package`'s plain failure without Electron.
 * Nothing here needs the Electron binary or the network (docs/packaging.md says
 * what only a real packaging run can check).
 */
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createPackageWithOptions, extractFile, listPackage, statFile } from '@electron/asar';
import { FuseV1Options, FuseVersion } from '@electron/fuses';
import { getConfig } from 'app-builder-lib/out/util/config/config.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import afterPack, { FUSES, PackagingError, type FusesModuleLike } from '../../scripts/after-pack.mjs';
import { unpackedPath } from '../../src/main/asar-paths';
import { launcherScript } from '../../src/main/core/bridge/host-manifest';

const root = path.resolve(__dirname, '..', '..');
const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { main: string; scripts: Record<string, string> };
const ELECTRON_VERSION = (JSON.parse(readFileSync(path.join(root, 'node_modules', 'electron', 'package.json'), 'utf8')) as { version: string }).version;
const built = existsSync(path.join(root, 'out', 'main', 'index.js')) && existsSync(path.join(root, 'out', 'tools', 'native-host.mjs'));

// The glob matcher electron-builder itself uses for `files` (app-builder-lib/out/fileMatcher.js, options { dot: true }).
const builderRequire = createRequire(createRequire(import.meta.url).resolve('app-builder-lib/package.json'));
const { minimatch } = builderRequire('minimatch') as { minimatch: (file: string, pattern: string, opts: { dot: boolean }) => boolean };

type Config = Awaited<ReturnType<typeof getConfig>>;
let config: Config;
let files: string[];
let asarUnpack: string[];
const tmp = mkdtempSync(path.join(tmpdir(), 'echo-pack-'));

beforeAll(async () => {
  config = await getConfig(root, null, null);
  // electron-builder normalises `files` to [{ filter: [...] }].
  const f = config.files as unknown as Array<{ filter: string[] } | string>;
  files = f.flatMap((e) => (typeof e === 'string' ? [e] : e.filter));
  asarUnpack = config.asarUnpack as string[];
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/**
 * electron-builder's rule for a pattern list: the last pattern that matches decides
 * (`!` excludes). Production dependencies under node_modules/ are copied by
 * electron-builder itself, so `files` can only exclude from them.
 */
function selected(patterns: readonly string[], rel: string, dependenciesIncluded = patterns === files): boolean {
  let inc = dependenciesIncluded && rel.startsWith('node_modules/');
  for (const p of patterns) {
    const neg = p.startsWith('!');
    if (minimatch(rel, neg ? p.slice(1) : p, { dot: true })) inc = !neg;
  }
  return inc;
}

function walk(dir: string, base = dir): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = path.join(dir, name);
    return statSync(p).isDirectory() ? walk(p, base) : [path.relative(base, p).split(path.sep).join('/')];
  });
}

describe('electron-builder.yml, as electron-builder reads it', () => {
  it('names the app and builds AppImage and deb, dmg, and nsis', () => {
    expect(config.appId).toBe('dev.echo-console.app');
    expect(config.productName).toBe('Echo Console');
    const targets = (t: unknown): string[] => (t as Array<string | { target: string }>).map((x) => (typeof x === 'string' ? x : x.target));
    expect(targets(config.linux?.target)).toEqual(['AppImage', 'deb']);
    expect(targets(config.mac?.target)).toEqual(['dmg']);
    expect(targets(config.win?.target)).toEqual(['nsis']);
    expect(config.linux?.executableName).toBe('echo-console');
    expect(config.asar).toBe(true);
    expect(config.afterPack).toBe('./scripts/after-pack.mjs');
    // electron-builder must not rebuild better-sqlite3 in place (the Node build the tests use).
    expect(config.npmRebuild).toBe(false);
    expect(pkg.scripts.package).toBe('node scripts/package.mjs');
  });

  it('ships the Electron-ABI better-sqlite3 and the extension outside the archive, where sqlite.ts and Chrome look', () => {
    const extra = config.extraResources as Array<{ from: string; to: string; filter?: string[] }>;
    const abi = extra.find((e) => e.from === '.electron-abi');
    expect(abi?.to).toBe('.electron-abi'); // <resources>/.electron-abi: defaultAbiDirs in src/main/core/ledger/sqlite.ts
    expect(abi?.filter).toContain('**/better_sqlite3.node');
    expect(extra.find((e) => e.from === 'extension/dist')?.to).toBe('extension');
  });

  it('packs the main entry and the whole build, unpacks the native host and native modules, drops Node-ABI binaries and source maps', () => {
    expect(selected(files, 'package.json')).toBe(true);
    expect(selected(files, pkg.main)).toBe(true);
    expect(selected(asarUnpack, pkg.main)).toBe(false); // the entry stays inside app.asar (OnlyLoadAppFromAsar)
    expect(selected(asarUnpack, 'out/tools/native-host.mjs')).toBe(true);
    expect(selected(asarUnpack, 'node_modules/any/build/Release/addon.node')).toBe(true);
    expect(selected(files, 'node_modules/better-sqlite3/build/Release/better_sqlite3.node')).toBe(false);
    expect(selected(files, 'node_modules/better-sqlite3/lib/index.js')).toBe(true);
    expect(selected(files, 'out/main/index.js.map')).toBe(false);
    expect(selected(files, 'src/main/index.ts')).toBe(false);
    expect(selected(files, 'test/unit/packaging.test.ts')).toBe(false);
  });

  it.skipIf(!built)('matches every file `npm run build` put in out/ (main, preload, renderer, tools)', () => {
    const out = walk(path.join(root, 'out')).map((f) => `out/${f}`);
    const packed = out.filter((f) => selected(files, f));
    for (const part of ['main', 'preload', 'renderer', 'tools']) expect(packed.some((f) => f.startsWith(`out/${part}/`))).toBe(true);
    // Every built file but source maps is packed; only the native host is unpacked.
    expect(out.filter((f) => !selected(files, f)).every((f) => f.endsWith('.map'))).toBe(true);
    expect(packed.filter((f) => selected(asarUnpack, f))).toEqual(out.filter((f) => f.startsWith('out/tools/') && !f.endsWith('.map')));
    // What the app loads by path from its own bundle (src/main/index.ts) is packed.
    for (const f of ['out/preload/index.cjs', 'out/renderer/index.html', 'out/tools/native-host.mjs']) expect(packed).toContain(f);
  });
});

describe('the afterPack hook', () => {
  const ELECTRON = '45.5.0';
  const BS = '12.11.1';
  type Flip = { file: string; config: Record<string, unknown> };

  function fakeFuses(): { module: FusesModuleLike; flips: Flip[] } {
    const flips: Flip[] = [];
    return {
      flips,
      module: {
        FuseVersion,
        FuseV1Options: FuseV1Options as unknown as Record<string, number>,
        flipFuses: async (file, cfg) => {
          flips.push({ file, config: cfg });
          return 0;
        },
      },
    };
  }

  /** A laid-out app with Electron-ABI binaries for several targets under `<resources>/.electron-abi`. */
  function layOut(name: string, platform: string, targets: string[]): { appOutDir: string; resources: string } {
    const appOutDir = path.join(tmp, name);
    const resources = platform === 'darwin' ? path.join(appOutDir, 'Echo Console.app', 'Contents', 'Resources') : path.join(appOutDir, 'resources');
    for (const t of targets) {
      const dir = path.join(resources, '.electron-abi', t);
      mkdirSync(dir, { recursive: true });
      writeFileSync(path.join(dir, 'better_sqlite3.node'), t);
    }
    return { appOutDir, resources };
  }

  const ctx = (appOutDir: string, electronPlatformName: string, arch: number) => ({
    appOutDir,
    electronPlatformName,
    arch,
    packager: { appInfo: { productFilename: 'Echo Console' }, executableName: electronPlatformName === 'linux' ? 'echo-console' : undefined },
  });

  it('flips exactly the documented fuses, every fuse of the wire decided, on the Linux executable', async () => {
    const { appOutDir, resources } = layOut('linux-x64', 'linux', [
      `better-sqlite3-${BS}/electron-${ELECTRON}-linux-x64`,
      `better-sqlite3-${BS}/electron-${ELECTRON}-linux-arm64`,
      `better-sqlite3-${BS}/electron-44.0.0-linux-x64`,
      `better-sqlite3-12.0.0/electron-${ELECTRON}-linux-x64`,
    ]);
    const f = fakeFuses();
    await afterPack(ctx(appOutDir, 'linux', 1), { fuses: f.module, electronVersion: ELECTRON, betterSqlite3Version: BS });
    expect(f.flips).toHaveLength(1);
    expect(f.flips[0]!.file).toBe(path.join(appOutDir, 'echo-console'));
    expect(f.flips[0]!.config).toEqual({
      version: FuseVersion.V1,
      strictlyRequireAllFuses: true,
      resetAdHocDarwinSignature: false,
      [FuseV1Options.RunAsNode]: true,
      [FuseV1Options.EnableCookieEncryption]: true,
      [FuseV1Options.EnableNodeOptionsEnvironmentVariable]: false,
      [FuseV1Options.EnableNodeCliInspectArguments]: false,
      [FuseV1Options.EnableEmbeddedAsarIntegrityValidation]: true,
      [FuseV1Options.OnlyLoadAppFromAsar]: true,
      [FuseV1Options.LoadBrowserProcessSpecificV8Snapshot]: false,
      [FuseV1Options.GrantFileProtocolExtraPrivileges]: false,
      [FuseV1Options.WasmTrapHandlers]: true,
    });
    // Only this target's binary is shipped.
    expect(walk(path.join(resources, '.electron-abi'))).toEqual([`better-sqlite3-${BS}/electron-${ELECTRON}-linux-x64/better_sqlite3.node`]);
  });

  it('decides every fuse @electron/fuses knows, so an upgrade that adds one fails until it is decided', () => {
    const known = Object.keys(FuseV1Options).filter((k) => Number.isNaN(Number(k)));
    expect(Object.keys(FUSES).sort()).toEqual(known.sort());
  });

  it('keeps RunAsNode on because the native host launcher runs the app executable as Node', () => {
    const script = launcherScript({ hostScript: '/opt/Echo Console/resources/app.asar.unpacked/out/tools/native-host.mjs', socketPath: '/run/s', appExecutable: '/opt/Echo Console/echo-console', platform: 'linux' });
    expect(script).toContain('ELECTRON_RUN_AS_NODE=1');
    expect(FUSES.RunAsNode).toBe(true);
  });

  it('targets the .app bundle and resets the ad-hoc signature on macOS arm64, the .exe on Windows', async () => {
    const mac = layOut('mac-arm64', 'darwin', [`better-sqlite3-${BS}/electron-${ELECTRON}-darwin-arm64`]);
    const f = fakeFuses();
    await afterPack(ctx(mac.appOutDir, 'darwin', 3), { fuses: f.module, electronVersion: ELECTRON, betterSqlite3Version: BS });
    expect(f.flips[0]!.file).toBe(path.join(mac.appOutDir, 'Echo Console.app'));
    expect(f.flips[0]!.config.resetAdHocDarwinSignature).toBe(true);
    const win = layOut('win-x64', 'win32', [`better-sqlite3-${BS}/electron-${ELECTRON}-win32-x64`]);
    await afterPack(ctx(win.appOutDir, 'win32', 1), { fuses: f.module, electronVersion: ELECTRON, betterSqlite3Version: BS });
    expect(f.flips[1]!.file).toBe(path.join(win.appOutDir, 'Echo Console.exe'));
    expect(f.flips[1]!.config.resetAdHocDarwinSignature).toBe(false);
  });

  it('fails the build, before any fuse is flipped, when the target has no Electron-ABI better-sqlite3', async () => {
    const { appOutDir } = layOut('linux-arm64', 'linux', [`better-sqlite3-${BS}/electron-${ELECTRON}-linux-x64`]);
    const f = fakeFuses();
    const run = afterPack(ctx(appOutDir, 'linux', 3), { fuses: f.module, electronVersion: ELECTRON, betterSqlite3Version: BS });
    await expect(run).rejects.toThrow(PackagingError);
    await expect(run).rejects.toThrow(/electron-45\.5\.0-linux-arm64\/better_sqlite3\.node is missing/);
    expect(f.flips).toHaveLength(0);
    await expect(afterPack(ctx(appOutDir, 'darwin', 4), { fuses: f.module })).rejects.toThrow(/unsupported architecture/);
  });
});

describe.skipIf(!built)('the asar layout of out/ (@electron/asar)', () => {
  it('holds the main entry, and leaves the native host and native modules beside it, where the app looks for them', async () => {
    // Stage the app folder as electron-builder.yml selects it (package.json, out/, better-sqlite3's JS).
    const app = path.join(tmp, 'app');
    const candidates = ['package.json', ...walk(path.join(root, 'out')).map((f) => `out/${f}`)];
    const bs = path.join(root, 'node_modules', 'better-sqlite3');
    candidates.push(...walk(bs).map((f) => `node_modules/better-sqlite3/${f}`));
    for (const rel of candidates.filter((f) => selected(files, f))) {
      mkdirSync(path.dirname(path.join(app, rel)), { recursive: true });
      copyFileSync(path.join(root, rel), path.join(app, rel));
    }
    // A native module of a dependency, as a prebuilt package would ship it.
    mkdirSync(path.join(app, 'node_modules', 'native-dep', 'build', 'Release'), { recursive: true });
    writeFileSync(path.join(app, 'node_modules', 'native-dep', 'build', 'Release', 'addon.node'), 'not really ELF');

    // asarUnpack in @electron/asar's terms: `dir/**` is unpackDir, `**/*.ext` is unpack.
    expect(asarUnpack).toEqual(['out/tools/**', '**/*.node']);
    const archive = path.join(tmp, 'resources', 'app.asar');
    mkdirSync(path.dirname(archive), { recursive: true });
    await createPackageWithOptions(app, archive, { unpackDir: 'out/tools', unpack: '*.node' });

    const listed = listPackage(archive, { isPack: false }).map((p) => p.split(path.sep).join('/'));
    expect(listed).toContain(`/${pkg.main}`);
    expect(JSON.parse(extractFile(archive, 'package.json').toString('utf8')).main).toBe(pkg.main);
    expect(extractFile(archive, pkg.main).length).toBeGreaterThan(0);
    expect(listed).not.toContain('/node_modules/better-sqlite3/build/Release/better_sqlite3.node');

    // Unpacked: listed in the header, content in app.asar.unpacked at the same relative path.
    const host = 'out/tools/native-host.mjs';
    expect((statFile(archive, host) as { unpacked?: boolean }).unpacked).toBe(true);
    expect((statFile(archive, 'node_modules/native-dep/build/Release/addon.node') as { unpacked?: boolean }).unpacked).toBe(true);
    expect((statFile(archive, pkg.main) as { unpacked?: boolean }).unpacked).toBeFalsy();
    // The path src/main/index.ts hands the launcher (import.meta.url inside app.asar, made unpacked) is a real file.
    const hostInArchive = path.join(archive, 'out', 'main', '..', 'tools', 'native-host.mjs');
    expect(readFileSync(unpackedPath(path.normalize(hostInArchive)), 'utf8')).toBe(readFileSync(path.join(root, host), 'utf8'));
    expect(existsSync(path.join(tmp, 'resources', 'app.asar.unpacked', pkg.main))).toBe(false);
    // The unpacked host runs on its own (dependencies bundled, nothing read from the archive):
    // started by hand, without Chrome's origin argument, it says so and exits 64 (docs/link.md).
    const run = spawnSync(process.execPath, [unpackedPath(path.normalize(hostInArchive))], { cwd: tmp, encoding: 'utf8', input: '' });
    expect(run.status).toBe(64);
    expect(run.stderr).toMatch(/no chrome-extension:\/\/ origin argument/);
  });
});

describe('unpackedPath', () => {
  it('maps a path inside app.asar to app.asar.unpacked, POSIX and Windows, and leaves other paths alone', () => {
    expect(unpackedPath('/opt/Echo Console/resources/app.asar/out/tools/native-host.mjs')).toBe('/opt/Echo Console/resources/app.asar.unpacked/out/tools/native-host.mjs');
    expect(unpackedPath('C:\\Program Files\\Echo Console\\resources\\app.asar\\out\\tools\\native-host.mjs')).toBe(
      'C:\\Program Files\\Echo Console\\resources\\app.asar.unpacked\\out\\tools\\native-host.mjs',
    );
    expect(unpackedPath('/home/me/echo-console/out/tools/native-host.mjs')).toBe('/home/me/echo-console/out/tools/native-host.mjs');
    expect(unpackedPath('/home/me/app.asar.d/x')).toBe('/home/me/app.asar.d/x');
  });
});

describe('npm run package without Electron', () => {
  it('fails with one plain line, no stack trace, when the Electron binary is not there', () => {
    const empty = mkdtempSync(path.join(tmp, 'no-electron-'));
    const r = spawnSync(process.execPath, [path.join(root, 'scripts', 'package.mjs'), '--no-build', '--electron-dist', empty], { cwd: root, encoding: 'utf8' });
    expect(r.status).toBe(1);
    const lines = r.stderr.trim().split('\n');
    if (built && existsSync(path.join(root, 'extension', 'dist', 'manifest.json'))) {
      const exe = process.platform === 'win32' ? 'electron.exe' : process.platform === 'darwin' ? 'Electron.app' : 'electron';
      expect(lines).toEqual([
        `echo-console package: Electron ${ELECTRON_VERSION} for ${process.platform}-${process.arch}: ${empty} holds neither ${exe} nor electron-v${ELECTRON_VERSION}-${process.platform}-${process.arch}.zip`,
      ]);
    } else {
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^echo-console package: .* missing: run `npm run build` first$/);
    }
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});
