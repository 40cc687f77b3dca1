/**
 * The Windows named pipe's access rights (issue 9 item 1): the console gives
 * its pipe an owner-only DACL right after it listens, and the native host
 * checks the owner and the DACL before it relays a frame. Node has no API for
 * a pipe's security descriptor, so both go through Windows PowerShell (present
 * on every supported Windows) and .NET's `System.IO.Directory` access-control
 * calls, which accept a `\\.\pipe\NAME` path; the descriptor travels as SDDL
 * text ("Security Descriptor String Format",
 * learn.microsoft.com/windows/win32/secauthz/security-descriptor-string-format).
 *
 * What cannot run here: these machines are Linux. The SDDL parsing and the
 * decision are pure and tested against text (unit/trust-native-host); the
 * PowerShell scripts are tested as text only (docs/link.md says so).
 *
 * Owner-only, as decided here: the owner is the user's own SID, and every
 * ACE that ALLOWS anything names that SID (or `OW`, the owner's rights).
 * Deny ACEs are harmless. A missing or null DACL (`NO_ACCESS_CONTROL`) grants
 * everyone everything and is refused. The default DACL Node's pipes get
 * (Everyone and Anonymous may read, Administrators and SYSTEM may do
 * anything) is refused too: that is what the console's own DACL replaces.
 */

/** One access-control entry of an SDDL DACL. */
export interface SddlAce {
  /** `A` allow, `D` deny, `OA`/`OD` object ACEs, `XA`, `ZA`, …: anything ending in `A` allows. */
  type: string;
  flags: string;
  rights: string;
  /** A SID string (`S-1-5-21-…`) or an alias (`WD` Everyone, `SY`, `BA`, `AN`, `OW`, …). */
  sid: string;
}

/** The owner and DACL of an SDDL string. */
export interface ParsedSddl {
  owner: string | null;
  /** null when the string has no `D:` part. */
  dacl: { flags: string; aces: SddlAce[] } | null;
}

/** Parse the owner and DACL of an SDDL string (`O:…G:…D:P(A;;GA;;;S-1-…)…`). Unknown parts are ignored. */
export function parseSddl(sddl: string): ParsedSddl {
  const text = sddl.trim();
  const owner = /(?:^|\))?O:([^():]+?)(?=[GDS]:|$)/.exec(text)?.[1] ?? null;
  const d = /D:([A-Z_]*)((?:\([^)]*\))*)/.exec(text);
  if (!d) return { owner, dacl: null };
  const aces: SddlAce[] = [];
  for (const m of (d[2] ?? '').matchAll(/\(([^)]*)\)/g)) {
    const f = (m[1] ?? '').split(';');
    aces.push({ type: f[0] ?? '', flags: f[1] ?? '', rights: f[2] ?? '', sid: f[5] ?? '' });
  }
  return { owner, dacl: { flags: d[1] ?? '', aces } };
}

/**
 * Decide whether a pipe's SDDL is owner-only for `userSid` (see the file header).
 * @returns null when it is; a plain-words reason otherwise.
 */
export function checkPipeSddl(sddl: string, userSid: string): string | null {
  if (!/^S-1-\d+(-\d+)+$/.test(userSid)) return `cannot tell who you are (SID "${userSid.slice(0, 80)}")`;
  const p = parseSddl(sddl);
  if (p.owner !== userSid) return `the console's pipe belongs to ${p.owner ?? 'nobody known'}, not to you (${userSid}): another user may be posing as Echo Console`;
  if (!p.dacl || p.dacl.flags.includes('NO_ACCESS_CONTROL')) return "the console's pipe has no access list: anyone may open it";
  for (const ace of p.dacl.aces) {
    if (!ace.type.endsWith('A')) continue; // deny and audit entries take nothing away from the owner
    if (ace.sid !== userSid && ace.sid !== 'OW') return `the console's pipe lets ${ace.sid} in (rights ${ace.rights || 'none'}): Echo Console makes it owner-only`;
  }
  return null;
}

/** PowerShell single-quoted string literal. */
const psQuote = (s: string): string => `'${s.replace(/'/g, "''")}'`;

/**
 * The Windows PowerShell script the native host runs: prints the user's SID on the first
 * line and the pipe's owner + DACL as SDDL on the second. (Opening the pipe to read its
 * descriptor takes one connection, which the console drops as one that never said host-hello.)
 */
export function readPipeAclScript(pipePath: string): string {
  return [
    '$ErrorActionPreference = "Stop"',
    '[System.Security.Principal.WindowsIdentity]::GetCurrent().User.Value',
    `[System.IO.Directory]::GetAccessControl(${psQuote(pipePath)}).GetSecurityDescriptorSddlForm('Owner, Access')`,
  ].join('; ');
}

/** The Windows PowerShell script the console runs right after it listens: owner-only DACL (protected, full access for the user alone). */
export function ownerOnlyPipeAclScript(pipePath: string): string {
  return [
    '$ErrorActionPreference = "Stop"',
    '$sid = [System.Security.Principal.WindowsIdentity]::GetCurrent().User.Value',
    '$ds = New-Object System.Security.AccessControl.DirectorySecurity',
    '$ds.SetSecurityDescriptorSddlForm("O:$($sid)D:P(A;;GA;;;$($sid))")',
    `[System.IO.Directory]::SetAccessControl(${psQuote(pipePath)}, $ds)`,
  ].join('; ');
}

/** Runs a PowerShell script; answers its stdout or throws. Injected in tests. */
export type PowerShellRunner = (script: string) => string;

/**
 * Check the pipe at `pipePath` with `run` (Windows PowerShell by default).
 * @returns null when owner-only for this user; a plain-words reason otherwise (also when
 *   PowerShell fails: the host fails closed).
 */
export function checkPipe(pipePath: string, run: PowerShellRunner): string | null {
  let out: string;
  try {
    out = run(readPipeAclScript(pipePath));
  } catch (e) {
    return `the native host could not read the access list of the console's pipe (${(e as Error).message.split('\n')[0]?.slice(0, 200)})`;
  }
  const [sid = '', sddl = ''] = out.split(/\r?\n/).map((l) => l.trim()).filter(Boolean);
  return checkPipeSddl(sddl, sid);
}
