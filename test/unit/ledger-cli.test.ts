/**
 * scripts/ledger-cli.ts run as a child process: verify (plain, --json,
 * --checkpoint), export, tail, checkpoint, and its exit codes and messages.
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ledger } from '../../src/main/core/ledger/index';
import { TRIGGERS_SQL } from '../../src/main/core/ledger/schema';
import type { Receipt } from '../../src/shared/receipt';
import { fullInput, tempDir, writeFormat1Ledger } from './support/ledger-fixtures';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const CLI = path.join(root, 'scripts', 'ledger-cli.ts');
const tmp = tempDir('ledger-cli-');
const good = tmp.file('good.db');
let stored: Receipt[] = [];

function cli(...args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ['--import', 'tsx', CLI, ...args], { cwd: root, encoding: 'utf8', timeout: 30_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

beforeAll(() => {
  const l = new Ledger(good);
  stored = l.appendBatch(Array.from({ length: 25 }, (_, i) => fullInput(i + 1)));
  stored.push(l.append(fullInput(26, { origin: 'https://evil.example\n#999 forged line', toolName: 'x y' })));
  l.close();
});
afterAll(() => tmp.cleanup());

describe('ledger CLI', () => {
  it('verify: exit 0 and a one-line report on an intact ledger; --json gives the report object', () => {
    const r = cli('verify', good);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`ok: 26 receipts, chain intact; head ${stored[25]?.hash}\n`);
    const j = cli('verify', good, '--json');
    expect(JSON.parse(j.stdout)).toEqual({ ok: true, count: 26, headHash: stored[25]?.hash });
  });

  it('verify: exit 1 naming the first broken seq on a tampered ledger', () => {
    const bad = tmp.file('bad.db');
    const l = new Ledger(bad);
    l.appendBatch(Array.from({ length: 5 }, (_, i) => fullInput(i)));
    l.close();
    const db = new Database(bad);
    db.exec("DROP TRIGGER receipts_no_update; UPDATE receipts SET tool_name = 'evil' WHERE seq = 3");
    db.exec(TRIGGERS_SQL);
    db.close();
    const r = cli('verify', bad);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^BROKEN at seq 3 \(id [0-9a-f-]{36}\): hash does not match the receipt content .*; 2 receipts intact before it/);
  });

  it('verify --checkpoint: exit 1 when the tail after the checkpoint is gone', () => {
    const f = tmp.file('cut.db');
    const l = new Ledger(f);
    l.appendBatch(Array.from({ length: 6 }, (_, i) => fullInput(i)));
    l.close();
    const cp = cli('checkpoint', f);
    expect(cp.code).toBe(0);
    expect(JSON.parse(cp.stdout)).toMatchObject({ count: 6 });
    writeFileSync(tmp.file('cp.json'), cp.stdout);
    expect(cli('verify', f, '--checkpoint', tmp.file('cp.json')).stdout).toMatch(/^ok: 6 receipts, chain intact, consistent with the checkpoint/);
    const db = new Database(f);
    db.exec("DROP TRIGGER receipts_no_delete; DELETE FROM receipts WHERE seq > 4; UPDATE sqlite_sequence SET seq = 4");
    db.exec(TRIGGERS_SQL); // a careful attacker puts the trigger back (a missing one fails verify by itself)
    db.close();
    expect(cli('verify', f).code).toBe(0);
    const r = cli('verify', f, '--checkpoint', tmp.file('cp.json'));
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^BROKEN at seq 5: tail cut off: the checkpoint recorded 6 receipts, the ledger ends at 4/);
  });

  it('export: a header line with the head, then JSON Lines of every receipt, oldest first; it verifies as an export', () => {
    const r = cli('export', good);
    expect(r.code).toBe(0);
    const [header, ...lines] = r.stdout.trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect((header as { echoLedgerExport: { head: { count: number } } }).echoLedgerExport.head.count).toBe(stored.length);
    expect(lines).toEqual(stored);
    const file = tmp.file('whole.jsonl');
    writeFileSync(file, r.stdout);
    const v = cli('verify', file);
    expect(v.code).toBe(0);
    expect(v.stdout).toMatch(/no gaps/);
  });

  it('tail: the newest 20 by default, one per line, oldest of them first; -n and --json', () => {
    const r = cli('tail', good);
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(20);
    expect(lines[0]).toMatch(
      /^#7 \S+Z succeeded webmcp-invoke op=invoke https:\/\/shop\.example add_to_cart subject=aaaaaaaaaaaa req=req-7 actor=agent:claude-code [0-9a-f]{12}$/,
    );
    // A hostile origin is quoted, so it cannot forge a line of its own.
    expect(lines[19]).toMatch(/^#26 .* "https:\/\/evil\.example\\n#999 forged line" "x y" /);
    const three = cli('tail', good, '-n', '3', '--json');
    expect(three.stdout.trimEnd().split('\n').map((l) => (JSON.parse(l) as Receipt).seq)).toEqual([24, 25, 26]);
  });

  it('a receipt without operation or subject shows "-" for them', () => {
    const f = tmp.file('plain.db');
    const l = new Ledger(f);
    l.append(fullInput(1, { operation: null, subjectHash: null }));
    l.close();
    expect(cli('tail', f).stdout).toMatch(/^#1 \S+Z succeeded webmcp-invoke op=- https:\/\/shop\.example add_to_cart subject=- req=req-1 /);
  });

  it('reads a format-1 ledger as it is: verify, export and tail, and leaves it at format 1', () => {
    const f = tmp.file('v1.db');
    const old = writeFormat1Ledger(f, [fullInput(1), fullInput(2)].map(({ operation: _o, subjectHash: _s, ...v1 }) => v1));
    expect(cli('verify', f).stdout).toBe(`ok: 2 receipts, chain intact; head ${old[1]?.hash}\n`);
    const exported = cli('export', f).stdout.trimEnd().split('\n').slice(1).map((x) => JSON.parse(x) as Receipt);
    expect(exported).toEqual(old.map((r) => ({ ...r, operation: null, subjectHash: null })));
    expect(cli('tail', f).stdout).toMatch(/^#1 .* op=- .* subject=- /);
    const db = new Database(f, { readonly: true });
    expect(db.pragma('user_version', { simple: true })).toBe(1);
    db.close();
  });

  it('exit 2 with a plain message for usage errors and unopenable files', () => {
    for (const args of [[], ['verify'], ['frobnicate', good], ['tail', good, '-n', 'x'], ['export', good, '--checkpoint', 'x']]) {
      const r = cli(...args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(/usage: ledger verify/);
    }
    const missing = cli('verify', tmp.file('missing.db'));
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^ledger: cannot open .*missing\.db: /);
    writeFileSync(tmp.file('text.db'), 'hello');
    const junk = cli('verify', tmp.file('text.db'));
    expect(junk.code).toBe(2);
    expect(junk.stderr).not.toMatch(/\n\s+at /); // no stack trace
  });
});
