/**
 * The data folder is trusted only when it is the person's alone (issue 9 item 8;
 * src/main/core/data-folder.ts). The attacks: another user owns the folder, or
 * can write it or its parent, or left a launcher of theirs for Chrome to run.
 * Ownership by another user is staged with a real `chown` where the tests run
 * as root (this machine and CI), and with the injected uid of the checks
 * everywhere.
 */
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createConsoleCore } from '../../src/main/core';
import { launcherFileName, repairHostManifests } from '../../src/main/core/bridge/host-manifest';
import { DataFolderError, secureFolder } from '../../src/main/core/data-folder';
import { FakeLink } from './broker.fixtures';

const isRoot = process.getuid?.() === 0;
const OTHER_UID = 54321;
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), 'echo-df-'));
  dirs.push(d);
  return d;
}
const mode = (p: string) => statSync(p).mode & 0o777;

describe('the data folder', () => {
  it('owned by another user: refused before anything is read or written (injected uid)', () => {
    const dir = join(tmp(), 'data');
    mkdirSync(dir, { mode: 0o700 });
    expect(() => secureFolder(dir, { uid: (process.getuid?.() ?? 0) + 1 })).toThrow(DataFolderError);
    expect(() => secureFolder(dir, { uid: (process.getuid?.() ?? 0) + 1 })).toThrow(/belongs to another user/);
  });

  it.runIf(isRoot)('owned by another user (a real chown): the console core refuses to start there and writes nothing', () => {
    const dir = join(tmp(), 'data');
    mkdirSync(dir, { mode: 0o700 });
    chownSync(dir, OTHER_UID, OTHER_UID);
    expect(() => createConsoleCore({ dataDir: dir, mcpPort: 0, link: new FakeLink() })).toThrow(DataFolderError);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('ours but open to group and others: repaired to 0700, said in the log, and the ledger and settings are 0600', async () => {
    const dir = join(tmp(), 'data');
    mkdirSync(dir);
    chmodSync(dir, 0o777);
    const warned: string[] = [];
    const core = createConsoleCore({ dataDir: dir, mcpPort: 0, link: new FakeLink(), logger: { info: () => {}, warn: (m) => warned.push(m) } });
    try {
      await core.start();
      expect(mode(dir)).toBe(0o700);
      expect(warned.join('\n')).toMatch(/data folder repaired: .*0777 → 0700/);
      for (const f of ['ledger.db', 'settings.json']) expect(mode(join(dir, f)), f).toBe(0o600);
      for (const f of ['ledger.db-wal', 'ledger.db-shm']) if (existsSync(join(dir, f))) expect(mode(join(dir, f)), f).toBe(0o600);
    } finally {
      await core.stop();
    }
  });

  it('a parent that others may write (not sticky) is refused: they could swap the whole folder', () => {
    const parent = join(tmp(), 'shared');
    mkdirSync(parent);
    chmodSync(parent, 0o777);
    expect(() => secureFolder(join(parent, 'data'))).toThrow(/can be changed by another user/);
    // A sticky world-writable parent (like /tmp) is fine: others cannot rename what is ours.
    chmodSync(parent, 0o1777);
    expect(secureFolder(join(parent, 'data'))).toEqual([]);
  });

  it('a symbolic link is refused', async () => {
    const base = tmp();
    mkdirSync(join(base, 'real'), { mode: 0o700 });
    const { symlinkSync } = await import('node:fs');
    symlinkSync(join(base, 'real'), join(base, 'link'));
    expect(() => secureFolder(join(base, 'link'))).toThrow(/symbolic link/);
  });
});

describe('the native-host launcher Chrome runs as the person', () => {
  const opts = (base: string) => ({
    extensionIds: ['abjcbldekikalfjmmiemkjeemkfphege'],
    socketPath: join(base, 'c.sock'),
    launcherDir: join(base, 'data', 'native-host'),
    hostScript: '/opt/echo/native-host.mjs',
    nodePath: '/usr/bin/node',
    extraManifestDirs: [join(base, 'profile', 'NativeMessagingHosts')],
    onlyExtraDirs: true,
    platform: 'linux' as const,
  });

  it('a launcher folder open to others is repaired to 0700 before the launcher is written', async () => {
    const base = tmp();
    mkdirSync(join(base, 'data'), { mode: 0o700 });
    mkdirSync(join(base, 'data', 'native-host'));
    chmodSync(join(base, 'data', 'native-host'), 0o777);
    const r = await repairHostManifests(opts(base));
    expect(r.failed).toBe(false);
    expect(mode(join(base, 'data', 'native-host'))).toBe(0o700);
    expect(mode(r.launcherPath) & 0o022).toBe(0);
  });

  it.runIf(isRoot)("a launcher another user left there is never pointed at: no manifest is written", async () => {
    const base = tmp();
    mkdirSync(join(base, 'data', 'native-host'), { recursive: true, mode: 0o700 });
    const planted = join(base, 'data', 'native-host', launcherFileName('linux'));
    writeFileSync(planted, '#!/bin/sh\necho planted\n', { mode: 0o755 });
    chownSync(planted, OTHER_UID, OTHER_UID);
    const r = await repairHostManifests(opts(base));
    expect(r.failed).toBe(true);
    expect(r.items.find((i) => i.kind === 'launcher')).toMatchObject({ action: 'failed', reason: expect.stringMatching(/not a plain file of yours/) });
    expect(r.items.filter((i) => i.kind === 'manifest').every((i) => i.action === 'failed')).toBe(true);
    expect(existsSync(join(base, 'profile', 'NativeMessagingHosts'))).toBe(false);
  });

  it.runIf(isRoot)('a launcher folder owned by another user is refused, and no manifest is written', async () => {
    const base = tmp();
    mkdirSync(join(base, 'data'), { mode: 0o700 });
    mkdirSync(join(base, 'data', 'native-host'), { mode: 0o700 });
    chownSync(join(base, 'data', 'native-host'), OTHER_UID, OTHER_UID);
    const r = await repairHostManifests(opts(base));
    expect(r.items.find((i) => i.kind === 'launcher')).toMatchObject({ action: 'failed', reason: expect.stringMatching(/belongs to another user/) });
    expect(existsSync(join(base, 'profile', 'NativeMessagingHosts'))).toBe(false);
  });
});
