import { spawnSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  buildHostManifest,
  launcherScript,
  manifestTargets,
  repairHostManifests,
  writeHostManifestForProfile,
  type RegistryOps,
} from '../../src/main/core/bridge/host-manifest';
import { NATIVE_HOST_NAME } from '../../src/shared/protocol';
import { defaultSocketPath } from '../../src/native-host/socket-path';

const EXT = 'abjcbldekikalfjmmiemkjeemkfphege';
const N = `${NATIVE_HOST_NAME}.json`;

describe('manifest locations (developer.chrome.com native messaging, "Native messaging host location")', () => {
  const table: [NodeJS.Platform, string, string][] = [
    ['linux', 'chrome', `/home/u/.config/google-chrome/NativeMessagingHosts/${N}`],
    ['linux', 'chromium', `/home/u/.config/chromium/NativeMessagingHosts/${N}`],
    ['linux', 'edge', `/home/u/.config/microsoft-edge/NativeMessagingHosts/${N}`],
    ['linux', 'brave', `/home/u/.config/BraveSoftware/Brave-Browser/NativeMessagingHosts/${N}`],
    ['darwin', 'chrome', `/Users/u/Library/Application Support/Google/Chrome/NativeMessagingHosts/${N}`],
    ['darwin', 'chromium', `/Users/u/Library/Application Support/Chromium/NativeMessagingHosts/${N}`],
    ['darwin', 'edge', `/Users/u/Library/Application Support/Microsoft Edge/NativeMessagingHosts/${N}`],
    ['darwin', 'brave', `/Users/u/Library/Application Support/BraveSoftware/Brave-Browser/NativeMessagingHosts/${N}`],
  ];
  it.each(table)('%s %s → %s', (platform, browser, expected) => {
    const home = platform === 'darwin' ? '/Users/u' : '/home/u';
    const t = manifestTargets({ platform, home, env: {} }).find((x) => x.browser === browser);
    expect(t?.manifestPath).toBe(expected);
    expect(t?.registryKey).toBeUndefined();
  });

  it('honours XDG_CONFIG_HOME on Linux', () => {
    const t = manifestTargets({ platform: 'linux', home: '/home/u', env: { XDG_CONFIG_HOME: '/cfg' }, browsers: ['chromium'] });
    expect(t[0]?.manifestPath).toBe(`/cfg/chromium/NativeMessagingHosts/${N}`);
  });

  it.each([
    ['chrome', `HKCU\\Software\\Google\\Chrome\\NativeMessagingHosts\\${NATIVE_HOST_NAME}`],
    ['chromium', `HKCU\\Software\\Chromium\\NativeMessagingHosts\\${NATIVE_HOST_NAME}`],
    ['edge', `HKCU\\Software\\Microsoft\\Edge\\NativeMessagingHosts\\${NATIVE_HOST_NAME}`],
    ['brave', `HKCU\\Software\\BraveSoftware\\Brave-Browser\\NativeMessagingHosts\\${NATIVE_HOST_NAME}`],
  ])('win32 %s → registry %s', (browser, key) => {
    const t = manifestTargets({ platform: 'win32', home: 'C:\\Users\\u', windowsManifestDir: 'C:\\data\\NMH' }).find((x) => x.browser === browser);
    expect(t?.registryKey).toBe(key);
    expect(t?.manifestPath).toBe(`C:\\data\\NMH\\${N}`);
  });

  it('default socket locations', () => {
    expect(defaultSocketPath({ platform: 'linux', env: { XDG_RUNTIME_DIR: '/run/user/1000' }, home: '/home/u' })).toBe('/run/user/1000/echo-console/link.sock');
    expect(defaultSocketPath({ platform: 'linux', env: {}, home: '/home/u' })).toBe('/home/u/.config/echo-console/run/link.sock');
    expect(defaultSocketPath({ platform: 'darwin', env: {}, home: '/Users/u' })).toBe('/Users/u/Library/Application Support/Echo Console/run/link.sock');
    expect(defaultSocketPath({ platform: 'win32', env: {}, username: 'Ann Lee' })).toBe('\\\\.\\pipe\\echo-console-Ann_Lee');
  });
});

describe('manifest and launcher content', () => {
  it('builds the manifest Chrome expects', () => {
    expect(buildHostManifest('/x/launch', [EXT])).toEqual({
      name: NATIVE_HOST_NAME,
      description: expect.any(String),
      path: '/x/launch',
      type: 'stdio',
      allowed_origins: [`chrome-extension://${EXT}/`],
    });
    expect(NATIVE_HOST_NAME).toMatch(/^[a-z0-9_]+(\.[a-z0-9_]+)*$/); // Chrome's rule for host names
  });

  it('the Windows launcher is a .bat with CRLF, quoting, and the Electron fallback', () => {
    const s = launcherScript({
      platform: 'win32',
      hostScript: 'C:\\App\\resources\\out\\tools\\native-host.mjs',
      socketPath: '\\\\.\\pipe\\echo-console-u',
      appExecutable: 'C:\\App\\Echo Console.exe',
    });
    expect(s).toContain('\r\n');
    expect(s).toContain('set HOST="C:\\App\\resources\\out\\tools\\native-host.mjs"');
    expect(s).toContain('set ELECTRON_RUN_AS_NODE=1');
    expect(s).toContain('"C:\\App\\Echo Console.exe" %HOST% --socket %SOCKET% %*');
  });
});

describe('repairHostManifests (temp dirs)', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'echo-nmh-'));
  });
  afterEach(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  const base = () => ({
    extensionIds: [EXT],
    hostScript: '/opt/echo/out/tools/native-host.mjs',
    socketPath: '/run/user/1/echo-console/link.sock',
    launcherDir: path.join(dir, 'data', 'native-host'),
    platform: 'linux' as const,
    home: path.join(dir, 'home'),
    env: {},
    appExecutable: '/opt/echo/echo-console',
  });

  it('writes only for installed browsers, then reports everything ok, then repairs what broke', async () => {
    await fs.mkdir(path.join(dir, 'home', '.config', 'chromium'), { recursive: true });
    const first = await repairHostManifests(base());
    const byBrowser = Object.fromEntries(first.items.filter((i) => i.kind === 'manifest').map((i) => [i.browser, i.action]));
    expect(byBrowser).toEqual({ chrome: 'skipped', chromium: 'created', edge: 'skipped', brave: 'skipped' });
    expect(first.items.find((i) => i.kind === 'launcher')?.action).toBe('created');
    expect(first.changed).toBe(true);

    const manifestPath = path.join(dir, 'home', '.config', 'chromium', 'NativeMessagingHosts', N);
    const written = JSON.parse(await fs.readFile(manifestPath, 'utf8'));
    expect(written.path).toBe(first.launcherPath);
    expect(written.allowed_origins).toEqual([`chrome-extension://${EXT}/`]);
    expect((await fs.stat(first.launcherPath)).mode & 0o777).toBe(0o755);

    const second = await repairHostManifests(base());
    expect(second.changed).toBe(false);
    expect(second.items.filter((i) => i.action !== 'skipped').every((i) => i.action === 'ok')).toBe(true);

    // Break both: a manifest naming another origin, a tampered launcher that lost its x bit.
    await fs.writeFile(manifestPath, JSON.stringify({ ...written, allowed_origins: ['chrome-extension://evil/'] }));
    await fs.writeFile(first.launcherPath, '#!/bin/sh\nexec /tmp/evil "$@"\n', { mode: 0o644 });
    await fs.chmod(first.launcherPath, 0o644);
    const third = await repairHostManifests(base());
    expect(third.items.find((i) => i.kind === 'manifest' && i.browser === 'chromium')).toMatchObject({ action: 'rewritten', reason: 'allowed_origins differ' });
    expect(third.items.find((i) => i.kind === 'launcher')).toMatchObject({ action: 'rewritten' });
    expect(await fs.readFile(first.launcherPath, 'utf8')).toBe(launcherScript({ ...base() }));
    expect((await fs.stat(first.launcherPath)).mode & 0o777).toBe(0o755);

    await fs.writeFile(manifestPath, '{not json');
    expect((await repairHostManifests(base())).items.find((i) => i.browser === 'chromium')).toMatchObject({ action: 'rewritten', reason: 'not valid JSON' });
  });

  it('force writes every browser; a failing target is reported, the others still written', async () => {
    await fs.mkdir(path.join(dir, 'home', '.config'), { recursive: true });
    // A file where the Edge folder should be: mkdir fails for that one target only.
    await fs.writeFile(path.join(dir, 'home', '.config', 'microsoft-edge'), 'x');
    const r = await repairHostManifests({ ...base(), force: true });
    const actions = Object.fromEntries(r.items.filter((i) => i.kind === 'manifest').map((i) => [i.browser, i.action]));
    expect(actions).toEqual({ chrome: 'created', chromium: 'created', edge: 'failed', brave: 'created' });
    expect(r.failed).toBe(true);
  });

  it('Windows: one manifest file plus a registry key per browser, repaired when it points elsewhere', async () => {
    const reg = new Map<string, string>();
    const registry: RegistryOps = {
      getDefault: async (k) => reg.get(k) ?? null,
      setDefault: async (k, v) => void reg.set(k, v),
    };
    // path.win32 joins with backslashes; on Linux those are plain file-name characters, which is fine here.
    const o = { ...base(), platform: 'win32' as const, launcherDir: 'C:\\data', registry, browsers: ['chrome', 'edge'] as const };
    const cwd = process.cwd();
    process.chdir(dir);
    try {
      const r = await repairHostManifests(o);
      expect(r.items.filter((i) => i.kind === 'registry').map((i) => i.action)).toEqual(['created', 'created']);
      expect(reg.get(`HKCU\\Software\\Google\\Chrome\\NativeMessagingHosts\\${NATIVE_HOST_NAME}`)).toBe(`C:\\data\\NativeMessagingHosts\\${N}`);
      expect(r.manifest.path).toBe('C:\\data\\echo-console-native-host.bat');
      reg.set(`HKCU\\Software\\Microsoft\\Edge\\NativeMessagingHosts\\${NATIVE_HOST_NAME}`, 'C:\\elsewhere.json');
      const again = await repairHostManifests(o);
      expect(again.items.filter((i) => i.kind === 'registry').map((i) => i.action)).toEqual(['ok', 'rewritten']);
    } finally {
      process.chdir(cwd);
    }
  });

  it('writeHostManifestForProfile writes <user-data-dir>/NativeMessagingHosts/<name>.json', async () => {
    const profile = path.join(dir, 'profile');
    const r = await writeHostManifestForProfile(profile, { extensionIds: [EXT], hostScript: '/h.mjs', socketPath: '/s.sock', nodePath: process.execPath });
    expect(r.manifestPath).toBe(path.join(profile, 'NativeMessagingHosts', N));
    expect(JSON.parse(await fs.readFile(r.manifestPath, 'utf8')).path).toBe(r.launcherPath);
    expect(r.report.items.map((i) => i.kind)).toEqual(['launcher', 'manifest']);
  });

  it("the shell launcher runs the app's own executable (ELECTRON_RUN_AS_NODE=1) before any node on PATH, and PATH's node only without it", async () => {
    const app = path.join(dir, 'fake app');
    await fs.writeFile(app, '#!/bin/sh\necho "app as-node=$ELECTRON_RUN_AS_NODE"\n', { mode: 0o755 });
    // A `node` planted early on PATH (issue 9 item 12): it must not be the one Chrome's host runs as.
    const planted = path.join(dir, 'planted-bin');
    await fs.mkdir(planted);
    await fs.writeFile(path.join(planted, 'node'), '#!/bin/sh\ncase "$1" in -e) exit 0;; esac\necho "planted node ran"\n', { mode: 0o755 });
    const launcher = path.join(dir, 'launch-order');
    await fs.writeFile(launcher, launcherScript({ platform: 'linux', hostScript: '/h.mjs', socketPath: '/x.sock', appExecutable: app }), { mode: 0o755 });
    const env = { PATH: `${planted}:/usr/bin:/bin` };
    expect(spawnSync('/bin/sh', [launcher, `chrome-extension://${EXT}/`], { env, encoding: 'utf8' }).stdout.trim()).toBe('app as-node=1');
    // Without an app executable (the web host, a Node install), PATH's node is what there is.
    await fs.writeFile(launcher, launcherScript({ platform: 'linux', hostScript: '/h.mjs', socketPath: '/x.sock' }), { mode: 0o755 });
    expect(spawnSync('/bin/sh', [launcher, `chrome-extension://${EXT}/`], { env, encoding: 'utf8' }).stdout.trim()).toBe('planted node ran');
  });

  it('the shell launcher falls back to the app executable with ELECTRON_RUN_AS_NODE=1 when no Node is found', async () => {
    const app = path.join(dir, 'fake app');
    await fs.writeFile(app, '#!/bin/sh\necho "as-node=$ELECTRON_RUN_AS_NODE args=$*"\n', { mode: 0o755 });
    const launcher = path.join(dir, 'launch');
    await fs.writeFile(
      launcher,
      launcherScript({ platform: 'linux', hostScript: "/o'dd/host.mjs", socketPath: '/s p/x.sock', nodePath: '/no/such/node', appExecutable: app }),
      { mode: 0o755 },
    );
    const r = spawnSync('/bin/sh', [launcher, `chrome-extension://${EXT}/`], { env: { PATH: '/nonexistent' }, encoding: 'utf8' });
    expect(r.stdout.trim()).toBe(`as-node=1 args=/o'dd/host.mjs --socket /s p/x.sock chrome-extension://${EXT}/`);

    // With Node on PATH it still runs the app's own executable (issue 9 item 12).
    const r2 = spawnSync('/bin/sh', [launcher, `chrome-extension://${EXT}/`], { env: { PATH: path.dirname(process.execPath) }, encoding: 'utf8' });
    expect(r2.stdout.trim()).toBe(`as-node=1 args=/o'dd/host.mjs --socket /s p/x.sock chrome-extension://${EXT}/`);
  });
});
