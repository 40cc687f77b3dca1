/**
 * Who serves the console's socket (issue 9 item 1): the native host checks it
 * before it relays a single frame to the extension.
 *
 * 1. `checkSocketFiles` (every Unix): `lstat` of the socket and of its folder.
 *    The folder must be a real directory (not a symlink) owned by this user
 *    with no group or other permission bits (0700), and the socket a real
 *    socket owned by this user that no group or other user may write (and so
 *    connect to); the console's bridge makes them 0700 and 0600
 *    (src/main/core/bridge/socket-server.ts).
 * 2. `checkSocketPeer` (Linux): Node has no peer-credential API (no
 *    SO_PEERCRED), so the host finds the processes that hold a socket bound to
 *    that path: `/proc/net/unix` lists every Unix socket with its inode and
 *    bound path (the listening socket, flag __SO_ACCEPTCON 0x10000, and the
 *    connections it accepted carry the path; a client's end does not), and
 *    `/proc/<pid>/fd/*` links read `socket:[<inode>]`. Every holder must run as
 *    this user (the real and effective uid of `/proc/<pid>/status`), and a
 *    holder of the listening socket must be found at all: a process of another
 *    user is invisible to an unprivileged host (its fd folder is unreadable),
 *    which is refused the same way.
 *
 * What this does NOT stop: a process of the SAME user. It can create the
 * folder and the socket with the right owner and modes and serve it; only the
 * person's confirmation in the extension's popup stops it (docs/link.md,
 * "Who can pose as the console"). Checks 1 and 2 stop another user, and a
 * socket or folder left open to others.
 *
 * macOS has no /proc: only check 1 runs there. Windows named pipes are
 * checked by `checkPipeSddl` (pipe-acl.ts).
 */
import { lstatSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import path from 'node:path';

/** Why the host refuses the socket: `code` for the extension's host-error, `message` in plain words. */
export interface PeerProblem {
  code: 'console-untrusted';
  message: string;
}

/** The part of `fs.Stats` the checks read. */
export interface StatLike {
  uid: number;
  mode: number;
  isSocket(): boolean;
  isDirectory(): boolean;
  isSymbolicLink(): boolean;
}

/** Injected file-system and /proc access (tests pass another uid or a fake /proc; the real ones are the defaults). */
export interface PeerProbe {
  /** This process's effective uid (`process.getuid()`). */
  uid: number;
  lstat(p: string): StatLike;
  readFile(p: string): string;
  readdir(p: string): string[];
  readlink(p: string): string;
  /** Root of the proc file system (default `/proc`). */
  proc: string;
}

/** The real probe of this process. */
export function realProbe(): PeerProbe {
  return {
    uid: typeof process.getuid === 'function' ? process.getuid() : -1,
    lstat: (p) => lstatSync(p),
    readFile: (p) => readFileSync(p, 'utf8'),
    readdir: (p) => readdirSync(p),
    readlink: (p) => readlinkSync(p),
    proc: '/proc',
  };
}

const untrusted = (message: string): PeerProblem => ({ code: 'console-untrusted', message });
const octal = (mode: number): string => (mode & 0o7777).toString(8).padStart(4, '0');

/**
 * Check the owner and mode of the socket and its folder with `lstat` (never following a link).
 * @returns null when both are this user's and closed to others; a PeerProblem otherwise;
 *   `'missing'` when the socket does not exist (the console is not running).
 */
export function checkSocketFiles(socketPath: string, probe: Pick<PeerProbe, 'uid' | 'lstat'>): PeerProblem | 'missing' | null {
  const dir = path.dirname(socketPath);
  let d: StatLike;
  let s: StatLike;
  try {
    d = probe.lstat(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return 'missing';
    return untrusted(`The native host cannot inspect the console's socket folder ${dir} (${(e as NodeJS.ErrnoException).code ?? 'error'}).`);
  }
  if (d.isSymbolicLink() || !d.isDirectory()) return untrusted(`The console's socket folder ${dir} is not a plain folder (a link or a file): not trusted.`);
  if (d.uid !== probe.uid) return untrusted(`The console's socket folder ${dir} belongs to user ${d.uid}, not to you (${probe.uid}): another user may be posing as Echo Console.`);
  if ((d.mode & 0o077) !== 0) return untrusted(`The console's socket folder ${dir} is open to other users (mode ${octal(d.mode)}; Echo Console makes it 0700): not trusted.`);
  try {
    s = probe.lstat(socketPath);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return 'missing';
    return untrusted(`The native host cannot inspect the console's socket ${socketPath} (${(e as NodeJS.ErrnoException).code ?? 'error'}).`);
  }
  if (s.isSymbolicLink() || !s.isSocket()) return untrusted(`${socketPath} is not a socket: not trusted.`);
  if (s.uid !== probe.uid) return untrusted(`The console's socket ${socketPath} belongs to user ${s.uid}, not to you (${probe.uid}): another user may be posing as Echo Console.`);
  // Connecting needs write permission on the socket: no group or other write bit means nobody
  // else can talk through it. (Read bits are let pass: the console chmods 0600 just after listen,
  // and a host that connects in between must not be refused for the umask's 0755.)
  if ((s.mode & 0o022) !== 0) return untrusted(`The console's socket ${socketPath} is writable by other users (mode ${octal(s.mode)}; Echo Console makes it 0600): not trusted.`);
  return null;
}

/** One line of /proc/net/unix. */
export interface ProcUnixSocket {
  inode: number;
  /** Bound path; null for an unbound socket (a client's end). Abstract names start with '@'. */
  path: string | null;
  /** The listening socket (flag __SO_ACCEPTCON, 0x10000). */
  listening: boolean;
}

/**
 * Parse /proc/net/unix (Linux, `net/unix/af_unix.c` unix_seq_show):
 * `Num RefCount Protocol Flags Type St Inode [Path]`, numbers in hex but the
 * inode in decimal; the path is the rest of the line (it may hold spaces).
 * Lines that do not fit are skipped.
 */
export function parseProcNetUnix(text: string): ProcUnixSocket[] {
  const out: ProcUnixSocket[] = [];
  for (const line of text.split('\n').slice(1)) {
    const m = /^\s*[0-9a-fA-F]+:\s+[0-9a-fA-F]+\s+[0-9a-fA-F]+\s+([0-9a-fA-F]+)\s+[0-9a-fA-F]+\s+[0-9a-fA-F]+\s+(\d+)(?: (.*))?$/.exec(line);
    if (!m) continue;
    out.push({ inode: Number(m[2]), path: m[3] !== undefined && m[3] !== '' ? m[3] : null, listening: (parseInt(m[1] as string, 16) & 0x10000) !== 0 });
  }
  return out;
}

/** A process holding one of the socket's inodes. */
export interface SocketHolder {
  pid: number;
  /** Real and effective uid from /proc/<pid>/status. */
  uid: number;
  euid: number;
  inode: number;
  listening: boolean;
}

/** Real and effective uid from the `Uid:` line of /proc/<pid>/status, or null. */
export function parseStatusUids(status: string): { uid: number; euid: number } | null {
  const m = /^Uid:\s+(\d+)\s+(\d+)/m.exec(status);
  return m ? { uid: Number(m[1]), euid: Number(m[2]) } : null;
}

/**
 * The processes (readable to this one) that hold a socket bound to `socketPath`.
 * Unreadable processes (another user's, or gone meanwhile) are skipped.
 */
export function socketHolders(socketPath: string, probe: Pick<PeerProbe, 'readFile' | 'readdir' | 'readlink' | 'proc'>): { sockets: ProcUnixSocket[]; holders: SocketHolder[] } {
  const sockets = parseProcNetUnix(probe.readFile(`${probe.proc}/net/unix`)).filter((s) => s.path === socketPath);
  const byInode = new Map(sockets.map((s) => [s.inode, s]));
  const holders: SocketHolder[] = [];
  if (byInode.size === 0) return { sockets, holders };
  for (const pid of probe.readdir(probe.proc)) {
    if (!/^\d+$/.test(pid)) continue;
    let fds: string[];
    try {
      fds = probe.readdir(`${probe.proc}/${pid}/fd`);
    } catch {
      continue; // another user's process, or gone
    }
    for (const fd of fds) {
      let link: string;
      try {
        link = probe.readlink(`${probe.proc}/${pid}/fd/${fd}`);
      } catch {
        continue;
      }
      const m = /^socket:\[(\d+)\]$/.exec(link);
      const sock = m ? byInode.get(Number(m[1])) : undefined;
      if (!sock) continue;
      let ids: { uid: number; euid: number } | null = null;
      try {
        ids = parseStatusUids(probe.readFile(`${probe.proc}/${pid}/status`));
      } catch {
        /* gone */
      }
      holders.push({ pid: Number(pid), uid: ids?.uid ?? -1, euid: ids?.euid ?? -1, inode: sock.inode, listening: sock.listening });
    }
  }
  return { sockets, holders };
}

/**
 * Linux: refuse a socket served by a process of another user (see the file header).
 * @returns null when every holder of a socket bound to `socketPath` runs as this
 *   user and one of them holds the listening socket; a PeerProblem otherwise.
 */
export function checkSocketPeer(socketPath: string, probe: PeerProbe): PeerProblem | null {
  let found: ReturnType<typeof socketHolders>;
  try {
    found = socketHolders(socketPath, probe);
  } catch (e) {
    return untrusted(`The native host cannot read ${probe.proc}/net/unix to learn who serves the console's socket (${(e as Error).message}).`);
  }
  const foreign = found.holders.find((h) => h.uid !== probe.uid || h.euid !== probe.uid);
  if (foreign) return untrusted(`The console's socket is served by process ${foreign.pid} of user ${foreign.euid}, not by you (${probe.uid}): another user may be posing as Echo Console.`);
  if (!found.holders.some((h) => h.listening)) {
    return untrusted('No process of yours serves the console\'s socket (its owner is not visible to you): another user may be posing as Echo Console.');
  }
  return null;
}
