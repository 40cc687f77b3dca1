/**
 * Native messaging host registration: the host manifest Chrome reads to find
 * and start our native host, and the launcher the manifest points at.
 *
 * Manifest (developer.chrome.com/docs/extensions/develop/concepts/native-messaging,
 * "Native messaging host" and "Native messaging host location"):
 *   {name, description, path, type: "stdio", allowed_origins: ["chrome-extension://ID/"]}
 *   - Linux/macOS: `path` must be absolute; the file goes into the browser's
 *     per-user `NativeMessagingHosts` folder (below), or `<user-data-dir>/NativeMessagingHosts`
 *     for a profile started with --user-data-dir (docs/browser-facts.md, "Native messaging");
 *   - Windows: the file may live anywhere; the default value of
 *     HKCU\Software\<vendor>\NativeMessagingHosts\<name> names it (written with `reg add`).
 *
 * Per-user locations we write (user data dir + "NativeMessagingHosts"):
 *   | browser  | Linux ($XDG_CONFIG_HOME or ~/.config)   | macOS (~/Library/Application Support) | Windows registry (HKCU\Software\...) |
 *   | chrome   | google-chrome                           | Google/Chrome                         | Google\Chrome                        |
 *   | chromium | chromium                                | Chromium                              | Chromium                             |
 *   | edge     | microsoft-edge                          | Microsoft Edge                        | Microsoft\Edge                       |
 *   | brave    | BraveSoftware/Brave-Browser             | BraveSoftware/Brave-Browser           | BraveSoftware\Brave-Browser          |
 * On Linux and macOS a browser whose folder does not exist is skipped (we do not
 * create another vendor's folders), unless `force`.
 *
 * Launcher (the manifest's `path`): a shell script (Linux/macOS) or .bat (Windows)
 * that runs the bundled host (out/tools/native-host.mjs) with, in order of
 * preference, the Node binary the console named, a `node` on PATH (>= 18), or the
 * app's own executable with ELECTRON_RUN_AS_NODE=1, so a machine without Node
 * works. It passes `--socket <path>` explicitly, so the host finds the console
 * even when Chrome's environment differs from the console's (docs/link.md).
 */
import { execFile } from 'node:child_process';
import { existsSync, lstatSync, promises as fs } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { NATIVE_HOST_NAME } from '../../../shared/protocol';
import { DataFolderError, secureFolder } from '../data-folder';

/** Browsers whose native messaging locations we know. */
export type BrowserId = 'chrome' | 'chromium' | 'edge' | 'brave';
export const BROWSERS: readonly BrowserId[] = ['chrome', 'chromium', 'edge', 'brave'];

/** The manifest Chrome reads. */
export interface HostManifest {
  name: string;
  description: string;
  path: string;
  type: 'stdio';
  allowed_origins: string[];
}

/** Where one browser looks for our manifest. */
export interface ManifestTarget {
  browser: BrowserId | 'custom';
  /** The manifest file to write. */
  manifestPath: string;
  /** The browser's per-user data folder; its absence means "not installed" (Linux/macOS). */
  browserDir?: string;
  /** Windows: registry key whose default value must be `manifestPath`. */
  registryKey?: string;
}

const LINUX_DIRS: Record<BrowserId, string[]> = {
  chrome: ['google-chrome'],
  chromium: ['chromium'],
  edge: ['microsoft-edge'],
  brave: ['BraveSoftware', 'Brave-Browser'],
};
const MAC_DIRS: Record<BrowserId, string[]> = {
  chrome: ['Google', 'Chrome'],
  chromium: ['Chromium'],
  edge: ['Microsoft Edge'],
  brave: ['BraveSoftware', 'Brave-Browser'],
};
const WIN_KEYS: Record<BrowserId, string> = {
  chrome: 'Google\\Chrome',
  chromium: 'Chromium',
  edge: 'Microsoft\\Edge',
  brave: 'BraveSoftware\\Brave-Browser',
};

/**
 * The per-user manifest locations for each browser on `platform` (table in the file header).
 * @param o.home the user's home folder; o.env for XDG_CONFIG_HOME; o.windowsManifestDir where the
 *   single Windows manifest file is kept (the console's data folder).
 */
export function manifestTargets(o: {
  platform: NodeJS.Platform;
  home: string;
  env?: Record<string, string | undefined>;
  windowsManifestDir?: string;
  browsers?: readonly BrowserId[];
  hostName?: string;
}): ManifestTarget[] {
  const name = o.hostName ?? NATIVE_HOST_NAME;
  const browsers = o.browsers ?? BROWSERS;
  const file = `${name}.json`;
  if (o.platform === 'win32') {
    const dir = o.windowsManifestDir ?? path.win32.join(o.home, 'AppData', 'Local', 'Echo Console', 'NativeMessagingHosts');
    return browsers.map((b) => ({
      browser: b,
      manifestPath: path.win32.join(dir, file),
      registryKey: `HKCU\\Software\\${WIN_KEYS[b]}\\NativeMessagingHosts\\${name}`,
    }));
  }
  const P = path.posix;
  if (o.platform === 'darwin') {
    return browsers.map((b) => {
      const browserDir = P.join(o.home, 'Library', 'Application Support', ...MAC_DIRS[b]);
      return { browser: b, browserDir, manifestPath: P.join(browserDir, 'NativeMessagingHosts', file) };
    });
  }
  const xdg = o.env?.XDG_CONFIG_HOME;
  const config = xdg && P.isAbsolute(xdg) ? xdg : P.join(o.home, '.config');
  return browsers.map((b) => {
    const browserDir = P.join(config, ...LINUX_DIRS[b]);
    return { browser: b, browserDir, manifestPath: P.join(browserDir, 'NativeMessagingHosts', file) };
  });
}

/**
 * The manifest for our host.
 * @param launcherPath absolute path of the launcher (Chrome runs it).
 * @param extensionIds the IDs allowed to connect; Chrome allows no wildcards.
 */
export function buildHostManifest(launcherPath: string, extensionIds: readonly string[], hostName: string = NATIVE_HOST_NAME): HostManifest {
  return {
    name: hostName,
    description: 'Echo Console: the link between the Echo Console extension and the desktop app',
    path: launcherPath,
    type: 'stdio',
    allowed_origins: extensionIds.map((id) => `chrome-extension://${id}/`),
  };
}

/** How the launcher starts the host. */
export interface LauncherSpec {
  platform: NodeJS.Platform;
  /** Absolute path of the bundled host (out/tools/native-host.mjs), or of host.ts with a loader in nodeArgs. */
  hostScript: string;
  /** The console's socket or named pipe. */
  socketPath: string;
  /** A Node binary to prefer (absolute), e.g. process.execPath when the console runs under Node. */
  nodePath?: string | null;
  /** Extra Node arguments before the script (tests: ['--import', '<tsx loader>']). */
  nodeArgs?: readonly string[];
  /** The app's executable, run with ELECTRON_RUN_AS_NODE=1 when no Node is found (Electron: process.execPath). */
  appExecutable?: string | null;
}

const shq = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;
const batq = (s: string): string => `"${s.replace(/%/g, '%%').replace(/"/g, '')}"`;

/** The launcher's file name on `platform`. */
export function launcherFileName(platform: NodeJS.Platform): string {
  return platform === 'win32' ? 'echo-console-native-host.bat' : 'echo-console-native-host';
}

/** The launcher's exact text (compared byte for byte by `repair`). */
export function launcherScript(spec: LauncherSpec): string {
  const nodeArgs = spec.nodeArgs ?? [];
  if (spec.platform === 'win32') {
    const cmd = (bin: string): string => [bin, ...nodeArgs.map(batq), '%HOST% --socket %SOCKET% %*'].join(' ');
    const lines = [
      '@echo off',
      'rem Echo Console native messaging host launcher. Written and repaired by Echo Console; edits are overwritten.',
      'rem Chrome runs it with the caller origin (chrome-extension://ID/) as its first argument.',
      'setlocal',
      `set HOST=${batq(spec.hostScript)}`,
      `set SOCKET=${batq(spec.socketPath)}`,
    ];
    // Labels and `goto :eof` rather than ( ) blocks: %ERRORLEVEL% inside a block is expanded
    // before the block runs, and `goto :eof` keeps the host's exit code.
    // Order: the given Node, then the app's own executable, and only then a `node` from PATH
    // (issue 9 item 12: a PATH entry is not the app's to vouch for).
    if (spec.nodePath) lines.push(`if exist ${batq(spec.nodePath)} goto given_node`);
    if (spec.appExecutable) lines.push(`if exist ${batq(spec.appExecutable)} goto app_exe`);
    lines.push('where node >nul 2>nul', 'if errorlevel 1 goto no_node', cmd('node'), 'goto :eof');
    if (spec.nodePath) lines.push(':given_node', cmd(batq(spec.nodePath)), 'goto :eof');
    if (spec.appExecutable) lines.push(':app_exe', 'set ELECTRON_RUN_AS_NODE=1', `${batq(spec.appExecutable)} %HOST% --socket %SOCKET% %*`, 'goto :eof');
    lines.push(':no_node', 'echo Echo Console native host: Node.js was not found. 1>&2', 'exit /b 69');
    return lines.join('\r\n') + '\r\n';
  }
  const na = nodeArgs.map(shq).join(' ');
  const run = (bin: string): string => `exec ${bin}${na ? ` ${na}` : ''} "$HOST" --socket "$SOCKET" "$@"`;
  const lines = [
    '#!/bin/sh',
    '# Echo Console native messaging host launcher. Written and repaired by Echo Console; edits are overwritten.',
    '# Chrome runs it with the caller origin (chrome-extension://ID/) as its first argument.',
    `HOST=${shq(spec.hostScript)}`,
    `SOCKET=${shq(spec.socketPath)}`,
  ];
  // Order: the given Node, then the app's own executable (run as Node), and only then a `node`
  // from PATH (issue 9 item 12: a PATH entry is not the app's to vouch for).
  if (spec.nodePath) lines.push(`NODE=${shq(spec.nodePath)}`, `if [ -x "$NODE" ]; then ${run('"$NODE"')}; fi`);
  if (spec.appExecutable) lines.push(`APP=${shq(spec.appExecutable)}`, `if [ -x "$APP" ]; then ELECTRON_RUN_AS_NODE=1 ${run('"$APP"')}; fi`);
  lines.push(
    // Chrome started from a desktop has a short PATH; a node found there must be new enough for the host.
    `if command -v node >/dev/null 2>&1 && node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 18 ? 0 : 1)' 2>/dev/null; then ${run('node')}; fi`,
  );
  lines.push(`echo 'Echo Console native host: Node.js was not found.' >&2`, 'exit 69');
  return lines.join('\n') + '\n';
}

/** Reading and writing the Windows registry (injectable for tests). */
export interface RegistryOps {
  /** The default value of `key`, or null when the key or value is missing. */
  getDefault(key: string): Promise<string | null>;
  setDefault(key: string, value: string): Promise<void>;
}

function run(cmd: string, args: string[]): Promise<{ code: number; stdout: string }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { windowsHide: true, timeout: 10_000 }, (e, stdout) => {
      const code = e ? (typeof (e as { code?: unknown }).code === 'number' ? ((e as { code: number }).code) : 1) : 0;
      resolve({ code, stdout: String(stdout) });
    });
  });
}

/** `reg query <key> /ve` and `reg add <key> /ve /t REG_SZ /d <value> /f` (Windows only). */
export const windowsRegistry: RegistryOps = {
  async getDefault(key) {
    const r = await run('reg', ['query', key, '/ve']);
    if (r.code !== 0) return null;
    const m = /REG_SZ\s+(.*)$/m.exec(r.stdout);
    return m ? (m[1] as string).trim() : null;
  },
  async setDefault(key, value) {
    const r = await run('reg', ['add', key, '/ve', '/t', 'REG_SZ', '/d', value, '/f']);
    if (r.code !== 0) throw new Error(`reg add ${key} failed (exit ${r.code})`);
  },
};

/** Options of `repairHostManifests`. */
export interface HostInstallOptions extends Omit<LauncherSpec, 'platform'> {
  /** Extension IDs for allowed_origins. */
  extensionIds: readonly string[];
  /** Folder for the launcher (and, on Windows, the manifest file): the console's data folder. */
  launcherDir: string;
  platform?: NodeJS.Platform;
  home?: string;
  env?: Record<string, string | undefined>;
  /** Default: all of BROWSERS. */
  browsers?: readonly BrowserId[];
  /** `NativeMessagingHosts` folders to write as well (e.g. `<user-data-dir>/NativeMessagingHosts`); always written. */
  extraManifestDirs?: readonly string[];
  /** Write only `extraManifestDirs`, no browser's own location (tests). */
  onlyExtraDirs?: boolean;
  /** Write into a browser's folder even when that browser seems not installed. */
  force?: boolean;
  /** Windows registry access (default: `reg.exe`). */
  registry?: RegistryOps;
  hostName?: string;
}

/** One thing `repair` looked at. */
export interface RepairItem {
  kind: 'launcher' | 'manifest' | 'registry';
  browser?: BrowserId | 'custom';
  /** File path or registry key. */
  target: string;
  action: 'ok' | 'created' | 'rewritten' | 'skipped' | 'failed';
  /** Why it was rewritten, skipped or failed. */
  reason?: string;
}

/** What `repair` did: every item, and whether anything changed. */
export interface RepairReport {
  launcherPath: string;
  manifest: HostManifest;
  items: RepairItem[];
  changed: boolean;
  failed: boolean;
}

async function readText(p: string): Promise<string | null> {
  try {
    return await fs.readFile(p, 'utf8');
  } catch {
    return null;
  }
}

async function exists(p: string): Promise<boolean> {
  try {
    await fs.stat(p);
    return true;
  } catch {
    return false;
  }
}

function sameManifest(text: string, want: HostManifest): string | null {
  let got: unknown;
  try {
    got = JSON.parse(text);
  } catch {
    return 'not valid JSON';
  }
  if (typeof got !== 'object' || got === null) return 'not an object';
  const g = got as Record<string, unknown>;
  for (const k of ['name', 'path', 'type'] as const) if (g[k] !== want[k]) return `${k} is ${JSON.stringify(g[k])}, expected ${JSON.stringify(want[k])}`;
  if (JSON.stringify(g.allowed_origins) !== JSON.stringify(want.allowed_origins)) return 'allowed_origins differ';
  return null;
}

/** The launcher, when present, must be a plain file of the console's user (else DataFolderError). */
function assertOwnLauncher(file: string, platform: NodeJS.Platform): void {
  if (platform === 'win32' || !existsSync(file)) return;
  const st = lstatSync(file);
  if (!st.isFile() || st.uid !== process.getuid?.()) {
    throw new DataFolderError(`${file} is not a plain file of yours (owner uid ${st.uid}); Chrome would run it as you. Remove it, then start Echo Console again.`);
  }
}

/**
 * Write, or check and fix, the launcher and every manifest (and, on Windows, the
 * registry keys). Idempotent: a second run reports every item `ok`. Never throws
 * for one target's failure; it is reported as `failed` and the others proceed.
 * @returns what was found and done, item by item.
 */
export async function repairHostManifests(o: HostInstallOptions): Promise<RepairReport> {
  const platform = o.platform ?? process.platform;
  const P = platform === 'win32' ? path.win32 : path.posix;
  const launcherPath = P.join(o.launcherDir, launcherFileName(platform));
  const manifest = buildHostManifest(launcherPath, o.extensionIds, o.hostName);
  const manifestText = JSON.stringify(manifest, null, 2) + '\n';
  const items: RepairItem[] = [];

  // 1. the launcher. Chrome runs it as the person, so its folder must be the person's
  // alone, checked before every write (../data-folder.ts; issue 9 item 8).
  const script = launcherScript({ ...o, platform });
  let launcherSafe = true;
  try {
    const repaired = secureFolder(o.launcherDir, { platform });
    assertOwnLauncher(launcherPath, platform);
    const have = await readText(launcherPath);
    let action: RepairItem['action'] = 'ok';
    let reason: string | undefined;
    if (have === null) action = 'created';
    else if (have !== script) [action, reason] = ['rewritten', 'content differed'];
    if (repaired.length && action === 'ok') [action, reason] = ['rewritten', `folder repaired: ${repaired.join('; ')}`];
    if (have === null || have !== script) await fs.writeFile(launcherPath, script, { mode: 0o755 });
    if (platform !== 'win32') {
      const st = await fs.stat(launcherPath);
      if ((st.mode & 0o100) === 0 || (st.mode & 0o022) !== 0) {
        await fs.chmod(launcherPath, 0o755);
        if (action === 'ok') [action, reason] = ['rewritten', 'mode was not 0755'];
      }
    }
    items.push({ kind: 'launcher', target: launcherPath, action, reason });
  } catch (e) {
    launcherSafe = false;
    items.push({ kind: 'launcher', target: launcherPath, action: 'failed', reason: (e as Error).message });
  }

  // 2. the manifests
  const targets: ManifestTarget[] = o.onlyExtraDirs
    ? []
    : manifestTargets({
        platform,
        home: o.home ?? homedir(),
        env: o.env ?? process.env,
        windowsManifestDir: P.join(o.launcherDir, 'NativeMessagingHosts'),
        browsers: o.browsers,
        hostName: o.hostName,
      });
  for (const dir of o.extraManifestDirs ?? []) targets.push({ browser: 'custom', manifestPath: P.join(dir, `${manifest.name}.json`) });

  const written = new Set<string>();
  for (const t of targets) {
    if (!launcherSafe) {
      // Never point a browser at a launcher another user may have written.
      items.push({ kind: 'manifest', browser: t.browser, target: t.manifestPath, action: 'failed', reason: 'the launcher could not be written safely (see the launcher item); no manifest points at it' });
      continue;
    }
    if (t.browserDir && !o.force && !(await exists(t.browserDir))) {
      items.push({ kind: 'manifest', browser: t.browser, target: t.manifestPath, action: 'skipped', reason: `${t.browserDir} does not exist (browser not installed)` });
      continue;
    }
    if (!written.has(t.manifestPath)) {
      written.add(t.manifestPath);
      try {
        const have = await readText(t.manifestPath);
        const problem = have === null ? 'missing' : sameManifest(have, manifest);
        if (problem) {
          await fs.mkdir(P.dirname(t.manifestPath), { recursive: true });
          await fs.writeFile(t.manifestPath, manifestText, { mode: 0o644 });
        }
        items.push({
          kind: 'manifest',
          browser: t.browser,
          target: t.manifestPath,
          action: problem === null ? 'ok' : problem === 'missing' ? 'created' : 'rewritten',
          reason: problem && problem !== 'missing' ? problem : undefined,
        });
      } catch (e) {
        items.push({ kind: 'manifest', browser: t.browser, target: t.manifestPath, action: 'failed', reason: (e as Error).message });
      }
    }
    if (t.registryKey) {
      const reg = o.registry ?? windowsRegistry;
      try {
        const have = await reg.getDefault(t.registryKey);
        if (have !== t.manifestPath) await reg.setDefault(t.registryKey, t.manifestPath);
        items.push({
          kind: 'registry',
          browser: t.browser,
          target: t.registryKey,
          action: have === t.manifestPath ? 'ok' : have === null ? 'created' : 'rewritten',
          reason: have !== null && have !== t.manifestPath ? `pointed at ${have}` : undefined,
        });
      } catch (e) {
        items.push({ kind: 'registry', browser: t.browser, target: t.registryKey, action: 'failed', reason: (e as Error).message });
      }
    }
  }
  for (const i of items) if (i.reason === undefined) delete i.reason;
  return {
    launcherPath,
    manifest,
    items,
    changed: items.some((i) => i.action === 'created' || i.action === 'rewritten'),
    failed: items.some((i) => i.action === 'failed'),
  };
}

/**
 * Test helper (and for a browser started with --user-data-dir): write the
 * launcher into `launcherDir` (default `<userDataDir>/echo-console-host`) and
 * the manifest into `<userDataDir>/NativeMessagingHosts/<name>.json`, the
 * per-profile location Chromium reads (docs/browser-facts.md, "Native messaging").
 */
export async function writeHostManifestForProfile(
  userDataDir: string,
  o: Omit<HostInstallOptions, 'launcherDir' | 'extraManifestDirs' | 'onlyExtraDirs'> & { launcherDir?: string },
): Promise<{ manifestPath: string; launcherPath: string; report: RepairReport }> {
  const report = await repairHostManifests({
    ...o,
    launcherDir: o.launcherDir ?? path.join(userDataDir, 'echo-console-host'),
    extraManifestDirs: [path.join(userDataDir, 'NativeMessagingHosts')],
    onlyExtraDirs: true,
  });
  return {
    manifestPath: path.join(userDataDir, 'NativeMessagingHosts', `${report.manifest.name}.json`),
    launcherPath: report.launcherPath,
    report,
  };
}
