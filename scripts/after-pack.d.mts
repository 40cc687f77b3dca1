/** Types of after-pack.mjs (the electron-builder afterPack hook; plain JS so electron-builder loads it unbuilt). */

/** electron-builder's `Arch` enum value → Node's `process.arch` name. */
export declare const ARCH_NAMES: Readonly<Record<number, string>>;

/** The fuse decisions by @electron/fuses `FuseV1Options` name (true = on); reasons in docs/packaging.md. */
export declare const FUSES: Readonly<Record<string, boolean>>;

/** A target the hook cannot finish (e.g. the Electron-ABI better-sqlite3 binary is missing). */
export declare class PackagingError extends Error {}

/** The subset of electron-builder's AfterPackContext the hook reads. */
export interface AfterPackContextLike {
  appOutDir: string;
  /** darwin, mas, win32 or linux. */
  electronPlatformName: string;
  /** electron-builder's Arch enum: 0 ia32, 1 x64, 2 armv7l, 3 arm64, 4 universal. */
  arch: number;
  packager: {
    appInfo: { productFilename: string };
    /** Linux only. */
    executableName?: string;
    info?: { framework?: { version?: string } };
  };
}

/** The subset of @electron/fuses the hook uses. */
export interface FusesModuleLike {
  FuseVersion: { V1: string };
  FuseV1Options: Record<string, number | string>;
  flipFuses(pathToElectron: string, config: Record<string, unknown>): Promise<unknown>;
}

/** Path handed to @electron/fuses: the .app bundle (macOS), the .exe (Windows), the executable (Linux). */
export declare function electronBinaryPath(context: AfterPackContextLike): string;

/** `<resources>` of the packed app. */
export declare function resourcesDir(context: AfterPackContextLike): string;

/** The @electron/fuses config: FUSES by wire index, strictlyRequireAllFuses, resetAdHocDarwinSignature. */
export declare function fuseConfig(fusesModule: FusesModuleLike, platform: string, arch: string): Record<string | number, unknown>;

/** Keep only the target's Electron-ABI binary under `<resources>/.electron-abi`; returns its path. @throws PackagingError when missing. */
export declare function pruneElectronAbi(resources: string, key: string, label: string): string;

/** The hook; `deps` replaces @electron/fuses and the version lookups (tests). */
export default function afterPack(
  context: AfterPackContextLike,
  deps?: { fuses?: FusesModuleLike; betterSqlite3Version?: string; electronVersion?: string },
): Promise<void>;
