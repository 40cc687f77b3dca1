/**
 * Who serves the console's socket (issue 9 item 1; src/native-host/peer-check.ts):
 * the native host refuses a socket or folder with the wrong owner or mode, and
 * (Linux) a socket served by a process of another user. The /proc parsing runs
 * against real sockets in this process; another user is a real process running
 * as `nobody` where the tests run as root, and an injected uid or /proc view
 * elsewhere. The built host is run as Chrome runs it: it must send nothing to
 * such a socket and answer one host-error{console-untrusted}.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { promises as fs, lstatSync, readFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { HOST_EXIT } from '../../src/native-host/host-args';
import { checkSocketFiles, checkSocketPeer, parseProcNetUnix, parseStatusUids, realProbe, socketHolders, type PeerProbe } from '../../src/native-host/peer-check';
import { checkPipe, checkPipeSddl, ownerOnlyPipeAclScript, parseSddl, readPipeAclScript } from '../../src/native-host/pipe-acl';
import { FrameDecoder } from '../../src/shared/framing';
import { writeHostManifestForProfile } from '../../src/main/core/bridge/host-manifest';
import { EXT, Rig, buildHost, tempDir } from './bridge-harness';

const linux = process.platform === 'linux';
const root = typeof process.getuid === 'function' && process.getuid() === 0;
const NOBODY = 65534;

let dir: string;
let hostScript: string;
const cleanups: (() => Promise<void> | void)[] = [];

beforeAll(async () => {
  dir = await tempDir('echo-peer-');
  hostScript = await buildHost(dir);
});
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});
afterAll(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

/** A real listening socket in a fresh 0700 folder, chmod 0600 as the console makes it; `got` counts bytes received. */
async function serve(mode = 0o600, dirMode = 0o700): Promise<{ socketPath: string; folder: string; got: { bytes: number; connections: number } }> {
  const folder = await fs.mkdtemp(path.join(dir, 's'));
  await fs.chmod(folder, dirMode);
  const socketPath = path.join(folder, 'link.sock');
  const got = { bytes: 0, connections: 0 };
  const conns = new Set<net.Socket>();
  const server = net.createServer((c) => {
    got.connections++;
    conns.add(c);
    c.on('data', (d: Buffer) => void (got.bytes += d.length));
    c.on('error', () => {});
  });
  await new Promise<void>((res) => server.listen(socketPath, () => res()));
  await fs.chmod(socketPath, mode);
  cleanups.push(() => new Promise<void>((res) => (conns.forEach((c) => c.destroy()), server.close(() => res()))));
  return { socketPath, folder, got };
}

/** Run the built host as Chrome does; its stdout frames and exit code. */
function runHost(socketPath: string): Promise<{ code: number | null; frames: Record<string, unknown>[] }> {
  const child = spawn(process.execPath, [hostScript, `chrome-extension://${EXT}/`, '--socket', socketPath], { stdio: ['pipe', 'pipe', 'ignore'] });
  const dec = new FrameDecoder();
  const frames: Record<string, unknown>[] = [];
  child.stdout.on('data', (c: Buffer) => {
    for (const f of dec.push(c)) if (f.ok) frames.push(f.value as Record<string, unknown>);
  });
  return new Promise((res) => child.on('exit', (code) => res({ code, frames })));
}

describe('the socket and its folder: lstat owner and mode', () => {
  it('accepts the console\'s own layout (folder 0700, socket 0600, this user)', async () => {
    const s = await serve();
    expect(checkSocketFiles(s.socketPath, realProbe())).toBeNull();
    expect(checkSocketFiles(path.join(s.folder, 'nothing.sock'), realProbe())).toBe('missing');
  });

  it.each([
    ['a folder open to the group', 0o600, 0o750, /socket folder .* open to other users \(mode 0750/],
    ['a folder open to everyone', 0o600, 0o777, /open to other users \(mode 0777/],
    ['a socket others may write (connect to)', 0o666, 0o700, /socket .* writable by other users \(mode 0666/],
    ['a socket the group may write', 0o620, 0o700, /writable by other users \(mode 0620/],
  ])('refuses %s, and the built host sends nothing to it (host-error console-untrusted, exit 4)', async (_what, mode, dirMode, message) => {
    const s = await serve(mode, dirMode);
    const p = checkSocketFiles(s.socketPath, realProbe());
    expect(p).toMatchObject({ code: 'console-untrusted', message: expect.stringMatching(message) });
    const run = await runHost(s.socketPath);
    expect(run.code).toBe(HOST_EXIT.consoleUntrusted);
    expect(run.frames).toEqual([{ type: 'host-error', code: 'console-untrusted', message: expect.stringMatching(message) }]);
    expect(s.got).toEqual({ bytes: 0, connections: 0 }); // not even connected
  });

  it('refuses a socket and a folder owned by another user (the real files, another uid injected as "this user")', async () => {
    const s = await serve();
    const probe = { ...realProbe(), uid: 4242 };
    expect(checkSocketFiles(s.socketPath, probe)).toMatchObject({ code: 'console-untrusted', message: expect.stringMatching(/folder .* belongs to user \d+, not to you \(4242\)/) });
    // Folder right, socket another user's: lstat of the socket is read too.
    const uid = lstatSync(s.folder).uid;
    const sockOnly = { uid, lstat: (p: string) => (p === s.socketPath ? { ...lstatSync(p), uid: uid + 1, isSocket: () => true, isDirectory: () => false, isSymbolicLink: () => false } : lstatSync(p)) };
    expect(checkSocketFiles(s.socketPath, sockOnly)).toMatchObject({ message: expect.stringMatching(/socket .* belongs to user/) });
  });

  it('refuses a folder that is a symbolic link, and a plain file where the socket should be', async () => {
    const s = await serve();
    const link = path.join(dir, `l${Date.now()}`);
    await fs.symlink(s.folder, link);
    cleanups.push(() => fs.rm(link, { force: true }));
    expect(checkSocketFiles(path.join(link, 'link.sock'), realProbe())).toMatchObject({ message: expect.stringMatching(/not a plain folder/) });
    const file = path.join(s.folder, 'file.sock');
    await fs.writeFile(file, 'x', { mode: 0o600 });
    expect(checkSocketFiles(file, realProbe())).toMatchObject({ message: expect.stringMatching(/is not a socket/) });
  });

  it.runIf(root)('refuses files that really belong to another user (chowned to nobody)', async () => {
    const s = await serve();
    await fs.chown(s.socketPath, NOBODY, NOBODY);
    expect(checkSocketFiles(s.socketPath, realProbe())).toMatchObject({ message: expect.stringMatching(new RegExp(`socket .* belongs to user ${NOBODY}`)) });
    await fs.chown(s.folder, NOBODY, NOBODY);
    expect(checkSocketFiles(s.socketPath, realProbe())).toMatchObject({ message: expect.stringMatching(new RegExp(`folder .* belongs to user ${NOBODY}`)) });
  });
});

describe.runIf(linux)('who serves it (Linux): /proc/net/unix and /proc/<pid>/fd', () => {
  it('parses the real /proc/net/unix: the listener (flag __SO_ACCEPTCON) and the accepted end carry the path, the client end does not', async () => {
    const s = await serve();
    const client = net.createConnection(s.socketPath);
    cleanups.push(() => void client.destroy());
    await new Promise<void>((res) => client.once('connect', () => res()));
    const mine = parseProcNetUnix(readFileSync('/proc/net/unix', 'utf8')).filter((x) => x.path === s.socketPath);
    expect(mine.filter((x) => x.listening)).toHaveLength(1);
    expect(mine.filter((x) => !x.listening).length).toBeGreaterThanOrEqual(1);
    const { holders } = socketHolders(s.socketPath, realProbe());
    expect(holders.every((h) => h.pid === process.pid)).toBe(true);
    expect(holders.some((h) => h.listening)).toBe(true);
    expect(checkSocketPeer(s.socketPath, realProbe())).toBeNull();
  });

  it('parses lines with spaces in the path, abstract names and unbound sockets; skips junk', () => {
    const text = [
      'Num       RefCount Protocol Flags    Type St Inode Path',
      '0000000000000000: 00000002 00000000 00010000 0001 01 1001 /run/user/1000/echo console/link.sock',
      '0000000000000000: 00000003 00000000 00000000 0001 03 1002 @abstract',
      '0000000000000000: 00000003 00000000 00000000 0001 03 1003',
      'garbage line',
    ].join('\n');
    expect(parseProcNetUnix(text)).toEqual([
      { inode: 1001, path: '/run/user/1000/echo console/link.sock', listening: true },
      { inode: 1002, path: '@abstract', listening: false },
      { inode: 1003, path: null, listening: false },
    ]);
    expect(parseStatusUids('Name:\tnode\nUid:\t1000\t1000\t1000\t1000\nGid:\t1000\n')).toEqual({ uid: 1000, euid: 1000 });
    expect(parseStatusUids('Name:\tx\n')).toBeNull();
  });

  it('refuses a socket served by a process of another uid (the real parsing; this user injected as uid 4242)', async () => {
    const s = await serve();
    expect(checkSocketPeer(s.socketPath, { ...realProbe(), uid: 4242 })).toMatchObject({
      code: 'console-untrusted',
      message: expect.stringMatching(new RegExp(`served by process ${process.pid} of user \\d+, not by you \\(4242\\)`)),
    });
  });

  it('refuses when no holder of the listening socket is visible (an unprivileged host cannot read another user\'s /proc/<pid>/fd)', async () => {
    const s = await serve();
    const real = realProbe();
    const unprivileged: PeerProbe = {
      ...real,
      readdir: (p) => {
        if (p === `/proc/${process.pid}/fd`) throw Object.assign(new Error('EACCES'), { code: 'EACCES' });
        return real.readdir(p);
      },
    };
    expect(checkSocketPeer(s.socketPath, unprivileged)).toMatchObject({ message: expect.stringMatching(/No process of yours serves/) });
  });

  it.runIf(root)('another user really serving the socket (a process running as nobody, files chowned to this user): refused; the built host sends it nothing', async () => {
    const folder = await fs.mkdtemp(path.join(os.tmpdir(), 'echo-nobody-')); // not under `dir` (0700): nobody must reach it
    cleanups.push(() => fs.rm(folder, { recursive: true, force: true }));
    await fs.chmod(folder, 0o777); // so nobody can bind in it; closed again below
    const socketPath = path.join(folder, 'link.sock');
    const script = `const net=require('net');const s=net.createServer(c=>{c.on('data',d=>process.stdout.write('GOT '+d.length+'\\n'));c.on('error',()=>{})});s.listen(process.env.SOCK,()=>process.stdout.write('ready\\n'));`;
    const child: ChildProcess = spawn(process.execPath, ['-e', script], { uid: NOBODY, gid: NOBODY, env: { SOCK: socketPath }, stdio: ['ignore', 'pipe', 'inherit'] });
    cleanups.push(() => void child.kill('SIGKILL'));
    let out = '';
    await new Promise<void>((res, rej) => {
      child.stdout?.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('ready')) res();
      });
      child.once('exit', (c) => rej(new Error(`the nobody server exited (${c})`)));
    });
    // Made to look like ours: owner and modes pass the lstat checks.
    await fs.chown(socketPath, process.getuid!(), process.getgid!());
    await fs.chmod(socketPath, 0o600);
    await fs.chown(folder, process.getuid!(), process.getgid!());
    await fs.chmod(folder, 0o700);
    expect(checkSocketFiles(socketPath, realProbe())).toBeNull();
    const { holders } = socketHolders(socketPath, realProbe());
    expect(holders.find((h) => h.listening)).toMatchObject({ pid: child.pid, uid: NOBODY, euid: NOBODY });
    expect(checkSocketPeer(socketPath, realProbe())).toMatchObject({ message: expect.stringMatching(new RegExp(`process ${child.pid} of user ${NOBODY}`)) });

    const run = await runHost(socketPath);
    expect(run.code).toBe(HOST_EXIT.consoleUntrusted);
    expect(run.frames).toEqual([{ type: 'host-error', code: 'console-untrusted', message: expect.stringMatching(/another user may be posing as Echo Console/) }]);
    // The host connected (it must, to ask who accepted) but sent no byte: no host-hello, nothing of Chrome's.
    expect(out).not.toMatch(/GOT/);
  });
});

describe('Windows: the named pipe carries an owner-only DACL (tested against SDDL text: these machines run Linux)', () => {
  const ME = 'S-1-5-21-1004336348-1177238915-682003330-1001';
  const OTHER = 'S-1-5-21-1004336348-1177238915-682003330-1002';
  const PIPE = '\\\\.\\pipe\\echo-console-alice';

  it('accepts exactly what the console sets: the SDDL of ownerOnlyPipeAclScript, with the SID filled in', () => {
    const script = ownerOnlyPipeAclScript(PIPE);
    const sddl = /SetSecurityDescriptorSddlForm\("([^"]+)"\)/.exec(script)?.[1]?.replaceAll('$($sid)', ME);
    expect(sddl).toBe(`O:${ME}D:P(A;;GA;;;${ME})`);
    expect(checkPipeSddl(sddl as string, ME)).toBeNull();
    // As Windows prints it back (generic rights mapped to file rights, a group added).
    expect(checkPipeSddl(`O:${ME}G:${ME}D:P(A;;FA;;;${ME})`, ME)).toBeNull();
    expect(checkPipeSddl(`O:${ME}D:P(A;;FA;;;${ME})(D;;FA;;;WD)(A;;FA;;;OW)`, ME)).toBeNull(); // a deny and the owner's rights take nothing
  });

  it.each([
    ["Node's default pipe DACL (Everyone and Anonymous may read, SYSTEM and Administrators anything)", `O:${ME}G:${ME}D:(A;;FA;;;SY)(A;;FA;;;BA)(A;;FA;;;${ME})(A;;FR;;;WD)(A;;FR;;;AN)`, /lets SY in/],
    ['a pipe another user owns (squatted before the console started)', `O:${OTHER}D:P(A;;FA;;;${OTHER})`, /belongs to S-1-5-21-.*-1002, not to you/],
    ['a pipe another user owns that also lets me in', `O:${OTHER}D:P(A;;FA;;;${ME})(A;;FA;;;${OTHER})`, /belongs to .*-1002/],
    ['my pipe that lets another user in', `O:${ME}D:P(A;;FA;;;${ME})(A;;GRGW;;;${OTHER})`, /lets S-1-5-21-.*-1002 in \(rights GRGW\)/],
    ['Everyone by an object ACE', `O:${ME}D:P(A;;FA;;;${ME})(OA;;CC;;;WD)`, /lets WD in/],
    ['a null DACL (anyone may do anything)', `O:${ME}D:NO_ACCESS_CONTROL`, /no access list/],
    ['no DACL part at all', `O:${ME}G:${ME}`, /no access list/],
    ['an empty answer', '', /belongs to nobody known/],
  ])('refuses %s', (_what, sddl, reason) => {
    expect(checkPipeSddl(sddl, ME)).toMatch(reason);
  });

  it('parses owner aliases and ACE fields', () => {
    expect(parseSddl('O:BAG:SYD:P(A;OICI;FA;;;SY)(D;;FW;;;WD)')).toEqual({
      owner: 'BA',
      dacl: { flags: 'P', aces: [{ type: 'A', flags: 'OICI', rights: 'FA', sid: 'SY' }, { type: 'D', flags: '', rights: 'FW', sid: 'WD' }] },
    });
    expect(checkPipeSddl(`O:${ME}D:P(A;;FA;;;${ME})`, 'not a sid')).toMatch(/cannot tell who you are/);
  });

  it('the host reads SID and SDDL with one PowerShell script, and fails closed when it fails', () => {
    const script = readPipeAclScript("\\\\.\\pipe\\o'brien");
    expect(script).toContain("GetAccessControl('\\\\.\\pipe\\o''brien')"); // single-quoted, quote doubled
    expect(script).toContain("GetSecurityDescriptorSddlForm('Owner, Access')");
    expect(ownerOnlyPipeAclScript("\\\\.\\pipe\\o'brien")).toContain("SetAccessControl('\\\\.\\pipe\\o''brien', $ds)");
    let ran = '';
    expect(checkPipe(PIPE, (s) => ((ran = s), `${ME}\r\nO:${ME}D:P(A;;FA;;;${ME})\r\n`))).toBeNull();
    expect(ran).toBe(readPipeAclScript(PIPE));
    expect(checkPipe(PIPE, () => `${ME}\nO:${ME}D:(A;;FA;;;${ME})(A;;FR;;;WD)\n`)).toMatch(/lets WD in/);
    expect(checkPipe(PIPE, () => { throw new Error('powershell.exe: Access is denied.\nmore'); })).toMatch(/could not read the access list .*Access is denied\.\)$/);
  });
});

describe('what the extension shows', () => {
  it('a socket in a folder open to others: the real extension link shows "refused" with the host\'s reason, stores nothing, serves nothing, and keeps retrying', async () => {
    const s = await serve(0o600, 0o755);
    const r = new Rig(s.folder, hostScript, 'open');
    cleanups.push(() => r.close());
    // The manifest names the served socket's path (link.sock), not the Rig's default.
    await writeHostManifestForProfile(r.profile, { extensionIds: [EXT], hostScript, socketPath: s.socketPath, nodePath: process.execPath });
    r.startExtension();
    await r.until(() => r.link?.state().error?.code === 'console-untrusted', 'the host to refuse the socket');
    expect(r.link?.state()).toMatchObject({ state: 'refused', paired: false, error: { message: expect.stringMatching(/open to other users \(mode 0755/) } });
    expect(r.link?.state().retryAt).toBeGreaterThan(0); // not the person's to fix here: it tries again
    expect(r.requests).toEqual([]);
    expect(r.extStorage.map.size).toBe(0);
    expect(s.got).toEqual({ bytes: 0, connections: 0 });
  });
});
