/**
 * better-sqlite3 in both worlds: the binding choice (Node's own build, or the
 * Electron-ABI copy in .electron-abi through `nativeBinding`), the key shared
 * with scripts/electron-sqlite.mjs, and that script's success and plain failure.
 */
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import {
  betterSqlite3Version, chooseNativeBinding, electronBindingKey, openDatabase, type BindingEnv,
} from '../../src/main/core/ledger/sqlite';
import { tempDir } from './support/ledger-fixtures';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const SCRIPT = path.join(root, 'scripts', 'electron-sqlite.mjs');
const SIM = path.join(root, 'test', 'unit', 'support', 'ledger-electron-sim.ts');
const NODE_BINARY = path.join(root, 'node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node');
const tmp = tempDir('ledger-sqlite-');
afterAll(() => tmp.cleanup());

const env = (over: Partial<BindingEnv>): BindingEnv => ({
  versions: { node: '20.20.2' },
  platform: 'linux',
  arch: 'x64',
  betterSqlite3Version: '12.11.1',
  abiDirs: ['/a/.electron-abi', '/b/.electron-abi'],
  exists: () => false,
  ...over,
});

/** A throwaway project root that shares this checkout's node_modules, so the script writes its .electron-abi there. */
function fakeRoot(name: string): string {
  const dir = path.join(tmp.dir, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'package.json'), '{"name":"fake","private":true}');
  symlinkSync(path.join(root, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  return dir;
}

function runScript(args: string[], extraEnv: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [SCRIPT, ...args], {
      env: { ...process.env, npm_config_cache: path.join(tmp.dir, 'npm-cache'), ...extraEnv },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('chooseNativeBinding', () => {
  it('uses the normal build under Node', () => {
    expect(chooseNativeBinding(env({ exists: () => true }))).toEqual({ kind: 'node' });
  });

  it('uses the first Electron-ABI binary found, keyed by both versions, platform and arch', () => {
    const want = path.join('/b/.electron-abi', 'better-sqlite3-12.11.1', 'electron-45.5.0-linux-x64', 'better_sqlite3.node');
    const choice = chooseNativeBinding(env({ versions: { electron: '45.5.0' }, exists: (f) => f === want }));
    expect(choice).toEqual({ kind: 'electron', path: want });
  });

  it('fails closed, naming the command, when the Electron binary is missing (never falls back to Node\'s ABI)', () => {
    const choice = chooseNativeBinding(env({ versions: { electron: '45.5.0', node: '22.0.0' } }));
    expect(choice.kind).toBe('missing');
    if (choice.kind !== 'missing') return;
    expect(choice.tried).toHaveLength(2);
    expect(choice.message).toMatch(/no binary for Electron 45\.5\.0 \(linux-x64\); run `node scripts\/electron-sqlite\.mjs`/);
  });

  it('opens a database with the normal build in Node', () => {
    const db = openDatabase(tmp.file('plain.db'));
    expect(db.prepare('SELECT 1 AS one').get()).toEqual({ one: 1 });
    db.close();
  });
});

describe('inside (simulated) Electron', () => {
  // A made-up Electron version, so a real .electron-abi in this checkout is never picked up.
  const sim = (abiDir: string): { ok: boolean; code?: string; message?: string } => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', SIM, tmp.file('sim.db'), '0.0.0-echo-test'], {
      cwd: root, encoding: 'utf8', env: { ...process.env, ECHO_ELECTRON_ABI_DIR: abiDir }, timeout: 30_000,
    });
    return JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}') as { ok: boolean; code?: string; message?: string };
  };

  it('refuses to open with a plain error when the Electron binary is absent', () => {
    const r = sim(path.join(tmp.dir, 'empty-abi'));
    expect(r).toMatchObject({ ok: false, code: 'sqlite-binding-missing' });
    expect(r.message).toMatch(/run `node scripts\/electron-sqlite\.mjs`/);
  });

  it('loads the binary from .electron-abi through nativeBinding', () => {
    // Stand-in: Node's own build placed under the Electron key (same ABI as this test's process).
    const abiDir = path.join(tmp.dir, 'abi');
    const target = path.join(abiDir, electronBindingKey(betterSqlite3Version(), '0.0.0-echo-test', process.platform, process.arch));
    mkdirSync(path.dirname(target), { recursive: true });
    copyFileSync(NODE_BINARY, target);
    expect(sim(abiDir)).toMatchObject({ ok: true });
  });
});

describe('scripts/electron-sqlite.mjs', () => {
  it('computes the same path as electronBindingKey (--print-path)', async () => {
    const r = await runScript(['--print-path', '--electron', '45.5.0'], {});
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe(path.join(root, '.electron-abi', electronBindingKey(betterSqlite3Version(), '45.5.0', process.platform, process.arch)));
  });

  it('fails with one plain line and exit 1 when nothing can be downloaded', async () => {
    const dir = fakeRoot('offline');
    // A closed local port stands in for "no network", here and on a machine that has one.
    const r = await runScript(['--root', dir, '--electron', '45.5.0', '--no-compile', '--quiet'], {
      npm_config_better_sqlite3_binary_host: 'http://127.0.0.1:9',
    });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^electron-sqlite: better-sqlite3 [\d.]+ for Electron 45\.5\.0 \(\S+\): download failed \(.+\); connect to the network/);
    expect(existsSync(path.join(dir, '.electron-abi', `.staging-${process.pid}`))).toBe(false);
  });

  it('rejects a bad Electron version and unknown arguments plainly', async () => {
    const bad = await runScript(['--electron', '45; rm -rf /', '--print-path'], {});
    expect(bad.code).toBe(1);
    expect(bad.stderr).toBe('electron-sqlite: not an Electron version: 45; rm -rf /\n');
    const unknown = await runScript(['--frob'], {});
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toBe('electron-sqlite: unknown argument --frob\n');
  });

  it('fetches a prebuilt binary into .electron-abi (served locally), stamps it, and then reuses it', async () => {
    const dir = fakeRoot('online');
    const version = betterSqlite3Version();
    // A prebuild tarball as better-sqlite3 publishes them: build/Release/better_sqlite3.node inside.
    const pkgDir = path.join(tmp.dir, 'tarball');
    mkdirSync(path.join(pkgDir, 'build', 'Release'), { recursive: true });
    copyFileSync(NODE_BINARY, path.join(pkgDir, 'build', 'Release', 'better_sqlite3.node'));
    const tgz = path.join(tmp.dir, 'prebuild.tar.gz');
    expect(spawnSync('tar', ['-czf', tgz, '-C', pkgDir, 'build']).status).toBe(0);
    const requested: string[] = [];
    const server = http.createServer((req, res) => {
      requested.push(req.url ?? '');
      res.writeHead(200, { 'content-type': 'application/gzip', connection: 'close' });
      res.end(readFileSync(tgz));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const host = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const first = await runScript(['--root', dir, '--electron', '45.5.0', '--no-compile', '--quiet'], { npm_config_better_sqlite3_binary_host: host });
      expect(first.stderr).toBe('');
      expect(first.code).toBe(0);
      expect(requested).toEqual([expect.stringMatching(new RegExp(`^/v${version}/better-sqlite3-v${version}-electron-v\\d+-${process.platform}-${process.arch}\\.tar\\.gz$`))]);
      const target = path.join(dir, '.electron-abi', electronBindingKey(version, '45.5.0', process.platform, process.arch));
      expect(readFileSync(target).equals(readFileSync(NODE_BINARY))).toBe(true); // (Buffer.equals: toEqual walks bytes one by one)
      const stamp = JSON.parse(readFileSync(path.join(path.dirname(target), 'stamp.json'), 'utf8')) as Record<string, unknown>;
      expect(stamp).toMatchObject({ betterSqlite3: version, electron: '45.5.0', source: 'prebuild-install' });
      // Node's own build is untouched: tests and the app can run in either order.
      expect(existsSync(NODE_BINARY)).toBe(true);
      const second = await runScript(['--root', dir, '--electron', '45.5.0', '--no-compile'], { npm_config_better_sqlite3_binary_host: host });
      expect(second.code).toBe(0);
      expect(second.stdout.trim()).toBe(target);
      expect(requested).toHaveLength(1);
    } finally {
      server.close();
    }
  });
});
