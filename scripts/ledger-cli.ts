/**
 * The receipt ledger from a terminal (docs/ledger.md):
 *
 *   npm run ledger -- verify <file> [--checkpoint cp.json] [--public-key KEY | --key-file PEM] [--json]
 *                                              also checks the signed checkpoints (docs/ledger.md): with the
 *                                              public key given (base64 of the raw Ed25519 key, or @file), the
 *                                              web host's key file, or else the default key file of the
 *                                              ledger's folder (defaultLedgerKeyFile) or the desktop app's
 *                                              public key beside it (.pub) when one exists
 *   npm run ledger -- verify <export.jsonl> [--public-key KEY|@file | --key-file PEM] [--json]
 *                                              a JSON Lines export (the console's Export, `export`): each row's
 *                                              hash, the order, gaps reported as gaps, the signed checkpoint
 *                                              (key as above; an export in <data>/exports/ also finds the data
 *                                              folder's default key)
 *   npm run ledger -- export <file>            JSON Lines on stdout: a header line (head, newest signed
 *                                              checkpoint), then every receipt, oldest first (every Receipt
 *                                              field, null when absent); it verifies with `verify` above
 *   npm run ledger -- tail <file> [-n 20] [--json]   the newest N, oldest of them first
 *   npm run ledger -- checkpoint <file>        a checkpoint as JSON, to keep elsewhere
 *
 * Opens the file read-only, so a format-1 ledger is read as it is (not
 * migrated; its receipts show operation and subjectHash as null). Exit codes: 0 fine; 1 the chain is broken (verify);
 * 2 usage error or the file could not be opened as a ledger.
 */
import { createReadStream, existsSync, openSync, readFileSync, readSync, closeSync } from 'node:fs';
import path from 'node:path';
import { Ledger, LedgerSigningKey, keyIdOf } from '../src/main/core/ledger/index';
import { defaultLedgerKeyFile, publicKeyFile } from '../src/main/core/ledger/key-holder';
import { verifyExport } from '../src/main/core/ledger/export-verify';
import type { Checkpoint, Receipt, VerifyReport } from '../src/shared/receipt';

const USAGE = `usage: ledger verify <file | export.jsonl> [--checkpoint cp.json] [--public-key KEY|@file | --key-file PEM] [--json]
       ledger export <file>
       ledger tail <file> [-n N] [--json]
       ledger checkpoint <file>`;

class UsageError extends Error {}

interface Args {
  command: string;
  file: string;
  checkpoint?: string;
  publicKey?: string;
  keyFile?: string;
  n: number;
  json: boolean;
}

function parse(argv: string[]): Args {
  const pos: string[] = [];
  const a: Args = { command: '', file: '', n: 20, json: false };
  for (let i = 0; i < argv.length; i++) {
    const t = argv[i] as string;
    if (t === '--checkpoint') a.checkpoint = argv[++i];
    else if (t === '--public-key') a.publicKey = argv[++i];
    else if (t === '--key-file') a.keyFile = argv[++i];
    else if (t === '-n' || t === '--lines') {
      const n = Number(argv[++i]);
      if (!Number.isSafeInteger(n) || n < 1 || n > 100_000) throw new UsageError('-n takes a whole number from 1 to 100000');
      a.n = n;
    } else if (t === '--json') a.json = true;
    else if (t === '-h' || t === '--help') throw new UsageError('');
    else if (t.startsWith('-')) throw new UsageError(`unknown option ${t}`);
    else pos.push(t);
  }
  if (pos.length !== 2) throw new UsageError(pos.length < 2 ? 'a command and a ledger file are needed' : 'too many arguments');
  [a.command, a.file] = pos as [string, string];
  if (!['verify', 'export', 'tail', 'checkpoint'].includes(a.command)) throw new UsageError(`unknown command ${a.command}`);
  if (a.checkpoint !== undefined && a.command !== 'verify') throw new UsageError('--checkpoint goes with verify');
  if ((a.publicKey !== undefined || a.keyFile !== undefined) && a.command !== 'verify') throw new UsageError('--public-key and --key-file go with verify');
  if (a.publicKey !== undefined && a.keyFile !== undefined) throw new UsageError('give --public-key or --key-file, not both');
  return a;
}

function short(hash: string): string {
  return hash.slice(0, 12);
}

/**
 * One line for a person: seq, UTC time, event, faculty, operation, origin,
 * tool, subject hash prefix, request, actor, hash prefix ("-" for an absent field).
 */
function line(r: Receipt): string {
  const parts = [
    `#${r.seq}`,
    new Date(r.time).toISOString(),
    r.event,
    r.faculty,
    `op=${r.operation ?? '-'}`,
    r.origin ?? '-',
    r.toolName ?? '-',
    `subject=${r.subjectHash ? short(r.subjectHash) : '-'}`,
    r.requestId ? `req=${r.requestId}` : 'req=-',
    `actor=${r.actor.kind}${r.actor.name ? `:${r.actor.name}` : ''}`,
    short(r.hash),
  ];
  // JSON.stringify escapes control characters, so a hostile origin or tool name cannot forge lines.
  return parts.map((p) => (/^[\x21-\x7e]+$/.test(p) ? p : JSON.stringify(p))).join(' ');
}

/**
 * The public key that checks the signatures: --public-key (base64, or @file holding it),
 * --key-file (a PKCS#8 PEM private key, as the web host keeps it), else the default key
 * file of the ledger's folder when it exists, else none (then a ledger holding signed
 * checkpoints fails with `no-public-key`).
 */
function publicKeyFor(args: Args, dataDir = path.dirname(path.resolve(args.file))): { key: string | null; from: string } {
  if (args.publicKey !== undefined) {
    const text = args.publicKey.startsWith('@') ? readText(args.publicKey.slice(1)).trim() : args.publicKey;
    if (!keyIdOf(text)) throw new UsageError('--public-key takes the base64 of a raw 32-byte Ed25519 public key (or @file holding it)');
    return { key: text, from: '--public-key' };
  }
  const file = args.keyFile ?? defaultLedgerKeyFile(dataDir);
  if (args.keyFile === undefined && !existsSync(file)) {
    // The desktop app keeps its key in the keychain and its public key beside it.
    const pub = publicKeyFile(file);
    if (!existsSync(pub)) return { key: null, from: 'none' };
    const text = readText(pub).trim();
    if (!keyIdOf(text)) throw new UsageError(`${pub} does not hold a base64 Ed25519 public key`);
    return { key: text, from: pub };
  }
  try {
    return { key: LedgerSigningKey.fromPkcs8(readText(file)).publicKey, from: file };
  } catch (e) {
    throw new UsageError(`cannot read the key file ${file}: ${e instanceof Error ? e.message : String(e)}`);
  }
}

function readText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (e) {
    throw new UsageError(`cannot read ${file}: ${e instanceof Error ? e.message : String(e)}`);
  }
}

function describe(report: VerifyReport, withCheckpoint: boolean): string {
  if (report.problems && !report.ok) {
    const fb = report.firstBroken;
    return `BROKEN at seq ${fb?.seq ?? '?'}${fb?.id ? ` (id ${fb.id})` : ''}: ${report.problems.map((p) => p.message).join('; ')}; ` +
      `${report.count} receipts intact before it, last good hash ${report.headHash}`;
  }
  if (report.ok && report.summary) {
    return `ok: ${report.summary.replace(/^\d+ receipts, chain intact/, `${report.count} receipts, chain intact${withCheckpoint ? ', consistent with the checkpoint' : ''}`)}; head ${report.headHash}`;
  }
  if (report.ok) {
    return `ok: ${report.count} receipts, chain intact${withCheckpoint ? ', consistent with the checkpoint' : ''}; head ${report.headHash}`;
  }
  const fb = report.firstBroken;
  return `BROKEN at seq ${fb?.seq ?? '?'}${fb?.id ? ` (id ${fb.id})` : ''}: ${fb?.reason ?? 'unknown'}; ` +
    `${report.count} receipts intact before it, last good hash ${report.headHash}`;
}

function readCheckpoint(file: string): Checkpoint {
  let cp: unknown;
  try {
    cp = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new UsageError(`cannot read checkpoint ${file}: ${e instanceof Error ? e.message : String(e)}`);
  }
  return cp as Checkpoint;
}

/**
 * Whether `file` is to be opened as a ledger: it starts with SQLite's header ("SQLite
 * format 3\0"), or it is not a JSON Lines export either (its first non-blank character
 * is not `{`), so the ledger open reports it plainly. Otherwise it is read as an export.
 */
function isSqliteFile(file: string): boolean {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return true; // let the ledger open report it
  }
  try {
    const buf = Buffer.alloc(256);
    const n = readSync(fd, buf, 0, 256, 0);
    if (n >= 16 && buf.subarray(0, 16).toString('latin1') === 'SQLite format 3\0') return true;
    return !buf.subarray(0, n).toString('utf8').trimStart().startsWith('{');
  } finally {
    closeSync(fd);
  }
}

/** `verify <export.jsonl>` (export-verify.ts): exit 0 ok (gaps allowed), 1 broken or the checkpoint fails, 2 usage. */
async function verifyExportFile(args: Args): Promise<number> {
  if (args.checkpoint !== undefined) {
    process.stderr.write('ledger: --checkpoint goes with a ledger file, not an export (the export carries its signed checkpoint)\n');
    return 2;
  }
  let key: string | null;
  try {
    key = publicKeyFor(args).key;
    // The console writes exports to <data folder>/exports/: the data folder's default key then applies.
    if (key === null && args.publicKey === undefined && args.keyFile === undefined) key = publicKeyFor(args, path.dirname(path.dirname(path.resolve(args.file)))).key;
  } catch (e) {
    process.stderr.write(`ledger: ${(e as Error).message}\n`);
    return 2;
  }
  const report = await verifyExport(createReadStream(args.file), key);
  process.stdout.write(args.json ? `${JSON.stringify(report)}\n` : `${report.summary}${report.gaps.length ? `\n  gaps: ${report.gaps.map((g) => (g.from === g.to ? `#${g.from}` : `#${g.from}..#${g.to}`)).join(', ')}${report.gapCount > report.gaps.length ? ', …' : ''}` : ''}\n`);
  return report.ok ? 0 : 1;
}

async function main(argv: string[]): Promise<number> {
  let args: Args;
  try {
    args = parse(argv);
  } catch (e) {
    const msg = (e as Error).message;
    process.stderr.write(`${msg ? `ledger: ${msg}\n` : ''}${USAGE}\n`);
    return 2;
  }
  if (args.command === 'verify' && !isSqliteFile(args.file)) return verifyExportFile(args);
  let ledger: Ledger;
  let publicKey: string | null = null;
  try {
    if (args.command === 'verify') publicKey = publicKeyFor(args).key;
  } catch (e) {
    process.stderr.write(`ledger: ${(e as Error).message}\n`);
    return 2;
  }
  try {
    ledger = new Ledger(args.file, { readonly: true, ...(publicKey ? { publicKey } : {}) });
  } catch (e) {
    process.stderr.write(`ledger: cannot open ${args.file}: ${(e as Error).message}\n`);
    return 2;
  }
  try {
    switch (args.command) {
      case 'verify': {
        const report = args.checkpoint ? ledger.verifyAgainst(readCheckpoint(args.checkpoint)) : ledger.verify();
        process.stdout.write(args.json ? `${JSON.stringify(report)}\n` : `${describe(report, Boolean(args.checkpoint))}\n`);
        return report.ok ? 0 : 1;
      }
      case 'export':
        // The console's whole-range export (a header line with the head and the newest signed
        // checkpoint, then every receipt): `verify <export.jsonl>` then ties it to the signed head.
        await ledger.exportFiltered(process.stdout);
        return 0;
      case 'tail': {
        const page = ledger.query({ limit: Math.min(args.n, 500) });
        const receipts = [...page.receipts];
        let cursor = page.nextCursor;
        while (receipts.length < args.n && cursor) {
          const next = ledger.query({ limit: Math.min(args.n - receipts.length, 500), cursor });
          receipts.push(...next.receipts);
          cursor = next.nextCursor;
        }
        receipts.reverse();
        process.stdout.write(receipts.map((r) => (args.json ? JSON.stringify(r) : line(r)) + '\n').join(''));
        return 0;
      }
      case 'checkpoint':
        process.stdout.write(`${JSON.stringify(ledger.checkpoint())}\n`);
        return 0;
      default:
        return 2;
    }
  } catch (e) {
    process.stderr.write(`ledger: ${(e as Error).message}\n`);
    return 2;
  } finally {
    ledger.close();
  }
}

// `ledger export file | head` closes the pipe early: that is not an error.
process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (e.code === 'EPIPE') process.exit(0);
  throw e;
});

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    process.stderr.write(`ledger: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exitCode = 2;
  },
);
