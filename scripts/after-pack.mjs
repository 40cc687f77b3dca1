/**
 * electron-builder `afterPack` hook (electron-builder.yml): runs once per target
 * after the app is laid out in `appOutDir` and before signing, which is where the
 * Electron fuses must be flipped (a signature covers the binary).
 *
 *  1. better-sqlite3's Electron-ABI binary: keep only the one for this target in
 *     `<resources>/.electron-abi` and fail the build when it is missing, since the
 *     ledger cannot open without it (src/main/core/ledger/sqlite.ts).
 *  2. Electron fuses: flip exactly FUSES with @electron/fuses, every fuse of the
 *     wire decided (`strictlyRequireAllFuses`), so an Electron upgrade that adds a
 *     fuse fails here until someone decides it. Reasons: docs/packaging.md.
 *
 * Not electron-builder's own `electronFuses` key: it cannot require every fuse to
 * be set, and this hook is one function a unit test can call with a fake context
 * (test/unit/packaging.test.ts).
 */
import { readFileSync, readdirSync, rmSync, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { electronBindingKey } from './electron-sqlite.mjs';

const require = createRequire(import.meta.url);

/** electron-builder's `Arch` enum (builder-util) → Node's `process.arch` names. */
export const ARCH_NAMES = Object.freeze({ 0: 'ia32', 1: 'x64', 2: 'arm', 3: 'arm64', 4: 'universal' });

/**
 * The fuse decisions, by @electron/fuses `FuseV1Options` name (true = on).
 * Each reason is in docs/packaging.md, "Fuses".
 */
export const FUSES = Object.freeze({
  RunAsNode: true, // the native host launcher runs this executable with ELECTRON_RUN_AS_NODE=1
  EnableCookieEncryption: true,
  EnableNodeOptionsEnvironmentVariable: false,
  EnableNodeCliInspectArguments: false,
  EnableEmbeddedAsarIntegrityValidation: true,
  OnlyLoadAppFromAsar: true,
  LoadBrowserProcessSpecificV8Snapshot: false,
  GrantFileProtocolExtraPrivileges: false, // the renderer is served on app://, never file://
  WasmTrapHandlers: true, // Electron's default; V8's guard pages for WebAssembly bounds checks
});

/** Thrown for a target the hook cannot finish; electron-builder prints the message. */
export class PackagingError extends Error {}

/**
 * Path handed to @electron/fuses for the packed app: the `.app` bundle on macOS,
 * `<productFilename>.exe` on Windows, `<executableName>` on Linux (the same rule
 * as electron-builder's own PlatformPackager.addElectronFuses).
 * @param {{ appOutDir: string, electronPlatformName: string, packager: { appInfo: { productFilename: string }, executableName?: string } }} context
 */
export function electronBinaryPath(context) {
  const { appOutDir, electronPlatformName: platform, packager } = context;
  if (platform === 'darwin' || platform === 'mas') return path.join(appOutDir, `${packager.appInfo.productFilename}.app`);
  if (platform === 'win32') return path.join(appOutDir, `${packager.appInfo.productFilename}.exe`);
  return path.join(appOutDir, packager.executableName ?? packager.appInfo.productFilename);
}

/** `<resources>` of the packed app (Contents/Resources inside the bundle on macOS). */
export function resourcesDir(context) {
  const { appOutDir, electronPlatformName: platform, packager } = context;
  if (platform === 'darwin' || platform === 'mas') return path.join(appOutDir, `${packager.appInfo.productFilename}.app`, 'Contents', 'Resources');
  return path.join(appOutDir, 'resources');
}

/**
 * The @electron/fuses config for a target: FUSES keyed by wire index, plus
 * `strictlyRequireAllFuses` and, for Apple silicon, `resetAdHocDarwinSignature`
 * (flipping a fuse breaks the ad-hoc signature an arm64 binary must carry).
 * @param {{ FuseVersion: { V1: string }, FuseV1Options: Record<string, number> }} fusesModule
 * @param {string} platform electron-builder's electronPlatformName (darwin, mas, win32, linux)
 * @param {string} arch Node arch name
 */
export function fuseConfig(fusesModule, platform, arch) {
  const config = {
    version: fusesModule.FuseVersion.V1,
    strictlyRequireAllFuses: true,
    resetAdHocDarwinSignature: (platform === 'darwin' || platform === 'mas') && (arch === 'arm64' || arch === 'universal'),
  };
  for (const [name, on] of Object.entries(FUSES)) {
    const index = fusesModule.FuseV1Options[name];
    if (typeof index !== 'number') throw new PackagingError(`@electron/fuses knows no fuse ${name}; check docs/packaging.md before upgrading`);
    config[index] = on;
  }
  return config;
}

/**
 * Keep only `<resources>/.electron-abi/<key for this target>` and its stamp.
 * @returns {string} path of the kept binary
 * @throws PackagingError when it is missing
 */
export function pruneElectronAbi(resources, key, label) {
  const abiDir = path.join(resources, '.electron-abi');
  const keep = path.join(abiDir, key);
  if (!existsSync(keep)) {
    throw new PackagingError(
      `${label}: resources/.electron-abi/${key.split(path.sep).join('/')} is missing; ` +
        'run `node scripts/electron-sqlite.mjs --platform <p> --arch <a>` for this target first (npm run package does)',
    );
  }
  const keepDir = path.dirname(keep);
  for (const versionDir of readdirSync(abiDir)) {
    const vPath = path.join(abiDir, versionDir);
    if (vPath !== path.dirname(keepDir)) {
      rmSync(vPath, { recursive: true, force: true });
      continue;
    }
    for (const targetDir of readdirSync(vPath)) {
      if (path.join(vPath, targetDir) !== keepDir) rmSync(path.join(vPath, targetDir), { recursive: true, force: true });
    }
  }
  return keep;
}

/**
 * The hook. `deps` replaces @electron/fuses and the version lookups (tests).
 * @param {object} context electron-builder's AfterPackContext
 * @param {{ fuses?: { FuseVersion: object, FuseV1Options: object, flipFuses: Function },
 *           betterSqlite3Version?: string, electronVersion?: string }} [deps]
 */
export default async function afterPack(context, deps = {}) {
  const platform = context.electronPlatformName;
  const arch = ARCH_NAMES[context.arch];
  if (!arch || arch === 'universal') throw new PackagingError(`unsupported architecture ${String(context.arch)} (build one arch per target)`);
  const nodePlatform = platform === 'mas' ? 'darwin' : platform;
  const electronVersion =
    deps.electronVersion ?? context.packager.info?.framework?.version ?? JSON.parse(readFileSync(require.resolve('electron/package.json'), 'utf8')).version;
  const bsVersion = deps.betterSqlite3Version ?? JSON.parse(readFileSync(require.resolve('better-sqlite3/package.json'), 'utf8')).version;
  pruneElectronAbi(
    resourcesDir(context),
    electronBindingKey(bsVersion, electronVersion, nodePlatform, arch),
    `better-sqlite3 ${bsVersion} for Electron ${electronVersion} (${nodePlatform}-${arch})`,
  );
  const fuses = deps.fuses ?? (await import('@electron/fuses'));
  await fuses.flipFuses(electronBinaryPath(context), fuseConfig(fuses, platform, arch));
}
