/**
 * Issue 9 item 6, "The ledger can be cut and rewritten undetected": signed checkpoints
 * (src/main/core/ledger/checkpoints.ts), the witness, the guard triggers, in the ledger
 * core, the console core (`api.verifyLedger`) and the CLI. Each attack is performed on
 * the file with plain SQL, as someone who can write the database would, and the
 * guard triggers are put back afterwards (a careful attacker) unless the attack is
 * dropping them.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Ledger, LedgerSigningKey, MAX_UNSIGNED_TAIL } from '../../src/main/core/ledger/index';
import { ROW_COLUMNS_SQL, canonicalReceiptText, chainHash, payloadHashOf, type RawRow } from '../../src/main/core/ledger/chain';
import { TRIGGERS_SQL } from '../../src/main/core/ledger/schema';
import { FileLedgerKeyHolder, LedgerKeyError, defaultLedgerKeyFile } from '../../src/main/core/ledger/key-holder';
import { createConsoleCore } from '../../src/main/core';
import { verifyCheckpointWebCrypto, type SignedCheckpoint } from '../../src/shared/checkpoint';
import { validateConsoleToExtension, validateRequestValue } from '../../src/shared/protocol';
import type { ReceiptInput } from '../../src/shared/receipt';
import { ok, type Result } from '../../src/shared/result';
import { LedgerWitness } from '../../extension/src/background/witness';
import type { KeyValueArea } from '../../extension/src/background/store';
import { FakeLink } from './broker.fixtures';
import { tempDir } from './support/ledger-fixtures';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const TSX = path.join(ROOT, 'node_modules', '.bin', 'tsx');
const CLI = path.join(ROOT, 'scripts', 'ledger-cli.ts');

let tmp: ReturnType<typeof tempDir>;
let file: string;
let key: LedgerSigningKey;
beforeEach(() => {
  tmp = tempDir('ledger-cp-');
  file = tmp.file('l.db');
  key = LedgerSigningKey.generate();
});
afterEach(() => tmp.cleanup());

const step = (requestId: string, event: ReceiptInput['event'], extra: Partial<ReceiptInput> = {}): ReceiptInput => ({
  requestId, event, faculty: 'webmcp-invoke', origin: 'https://bank.example', toolName: 'send_statement', operation: 'invoke', actor: { kind: 'agent', name: 'a' }, ...extra,
});
/** One reviewed request: five steps and its outcome (each append its own commit, as the broker does). */
function request(l: Ledger, id: string, outcome: ReceiptInput['event'], detail: unknown = {}): void {
  for (const e of ['requested', 'validated', 'approval-shown', 'approved', 'dispatched'] as const) l.append(step(id, e));
  l.append(step(id, outcome, { detail }));
}

/**
 * The ledger of the audit: three requests (the second refused), then 3 receipts after the
 * last outcome (a new request under review), so the newest checkpoint is at #18 and 3
 * receipts are unsigned. Returns the checkpoint the extension would hold as its witness.
 */
function writeLedger(): SignedCheckpoint {
  const l = new Ledger(file, { signingKey: key, signingKeyCreated: true });
  request(l, 'r1', 'succeeded');
  request(l, 'r2', 'refused', { code: 'policy-denied' });
  request(l, 'r3', 'succeeded');
  for (const e of ['requested', 'validated', 'approval-shown'] as const) l.append(step('r4', e));
  const cp = l.latestSignedCheckpoint() as SignedCheckpoint;
  l.close();
  return cp;
}

/** Plain SQL on the file, triggers dropped first and (unless `keepDropped`) put back after. */
function attack(fn: (db: Database.Database) => void, keepDropped = false): void {
  const db = new Database(file);
  db.exec('DROP TRIGGER IF EXISTS receipts_no_update; DROP TRIGGER IF EXISTS receipts_no_delete; DROP TRIGGER IF EXISTS receipts_append_next;');
  fn(db);
  if (!keepDropped) db.exec(TRIGGERS_SQL);
  db.close();
}

/** The audit's re-chain: the refused outcome becomes "succeeded", every later hash recomputed. */
function rechainRefusedAsSucceeded(db: Database.Database): void {
  const rows = db.prepare(`SELECT ${ROW_COLUMNS_SQL} FROM receipts ORDER BY seq`).raw().all() as RawRow[];
  const set = db.prepare('UPDATE receipts SET event = ?, detail = ?, payload_hash = ?, prev_hash = ?, hash = ? WHERE seq = ?');
  let prev: string | null = null;
  for (const row of rows) {
    if (row[4] === 'refused') {
      row[4] = 'succeeded';
      row[14] = '{}';
      if (row[19]) row[19] = payloadHashOf(row[14]); // format 4: the payload hash too
      prev = row[15];
    }
    if (prev === null) continue;
    row[15] = prev;
    row[16] = chainHash(prev, canonicalReceiptText(row));
    set.run(row[4], row[14], row[19] ?? null, row[15], row[16], row[0]);
    prev = row[16];
  }
}

/** The audit's cut: the last `n` receipts deleted, sqlite_sequence fixed up. */
const cut = (n: number) => (db: Database.Database) => {
  const head = db.prepare('SELECT MAX(seq) FROM receipts').pluck().get() as number;
  db.prepare('DELETE FROM receipts WHERE seq > ?').run(head - n);
  db.prepare("UPDATE sqlite_sequence SET seq = ? WHERE name = 'receipts'").run(head - n);
};

const verifyWith = (witness?: SignedCheckpoint | null) => {
  const l = new Ledger(file, { readonly: true, publicKey: key.publicKey });
  try {
    return l.verify(witness === undefined ? {} : { witness: { checkpoint: witness } });
  } finally {
    l.close();
  }
};

function cli(...args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(TSX, [CLI, ...args], { encoding: 'utf8', env: { ...process.env, ECHO_CONSOLE_LEDGER_KEY_DIR: tmp.file('no-keys-here') } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('signing: every outcome in its own commit, the tail bounded', () => {
  it('every outcome receipt is covered by a checkpoint committed with it; other receipts at most MAX_UNSIGNED_TAIL behind', () => {
    const l = new Ledger(file, { signingKey: key, signingKeyCreated: true });
    const seen: SignedCheckpoint[] = [];
    l.onCheckpoint((cp) => seen.push(cp));
    request(l, 'r1', 'denied');
    expect(l.latestSignedCheckpoint()).toMatchObject({ count: 6, headHash: l.head().headHash, keyId: key.keyId });
    for (let i = 0; i < MAX_UNSIGNED_TAIL; i++) l.append(step('r2', 'requested'));
    expect(l.latestSignedCheckpoint()?.count).toBe(6);
    l.append(step('r2', 'requested'));
    expect(l.latestSignedCheckpoint()?.count).toBe(6 + MAX_UNSIGNED_TAIL + 1);
    expect(seen.map((c) => c.count)).toEqual([6, 22]);
    l.close();
  });

  it('the extension checks the console\'s signature with WebCrypto; an altered checkpoint fails there too', async () => {
    const cp = writeLedger();
    expect(await verifyCheckpointWebCrypto(cp)).toBe(true);
    expect(await verifyCheckpointWebCrypto({ ...cp, count: cp.count + 1 })).toBe(false);
    expect(await verifyCheckpointWebCrypto({ ...cp, headHash: 'f'.repeat(64) })).toBe(false);
    const other = LedgerSigningKey.generate();
    expect(await verifyCheckpointWebCrypto({ ...cp, publicKey: other.publicKey })).toBe(false);
  });

  it('an intact ledger verifies and states its unsigned tail and bound', () => {
    writeLedger();
    const r = verifyWith();
    expect(r).toMatchObject({ ok: true, count: 21, problems: [], signed: { checkpoint: { count: 18 }, unsignedTail: 3, tailBound: MAX_UNSIGNED_TAIL } });
    expect(r.summary).toMatch(/21 receipts, chain intact; signed checkpoint at #18 .*3 receipts after it unsigned \(within the bound of 15: a cut among them cannot be detected\)/);
  });
});

describe('the audit\'s attacks on the file', () => {
  it('re-chained: a refused outcome turned into succeeded, hashes recomputed, fails verify naming the signature', () => {
    writeLedger();
    attack(rechainRefusedAsSucceeded);
    const plain = new Ledger(file, { readonly: true });
    // The chain alone is consistent (what the audit saw); without the key only "cannot check" remains.
    expect(plain.verify({ parallel: false }).problems?.map((p) => p.code)).toEqual(['no-public-key']);
    plain.close();
    const r = verifyWith();
    expect(r.ok).toBe(false);
    expect(r.problems).toEqual([expect.objectContaining({ code: 'checkpoint-mismatch', seq: 18, message: expect.stringMatching(/^signature: receipt #18 no longer has the head hash its signed checkpoint recorded \(the history was rewritten and re-chained\)/) })]);
  });

  it('re-chained and re-signed with the attacker\'s own key: the signature fails', () => {
    writeLedger();
    const mine = LedgerSigningKey.generate();
    attack((db) => {
      rechainRefusedAsSucceeded(db);
      const head = db.prepare('SELECT seq, hash FROM receipts ORDER BY seq DESC LIMIT 1').raw().get() as [number, string];
      const cp = mine.sign({ count: head[0], headHash: head[1], time: Date.now() });
      db.exec('DELETE FROM checkpoints');
      db.prepare('INSERT INTO checkpoints VALUES (?, ?, ?, ?, ?, ?)').run(cp.count, cp.headHash, cp.time, cp.keyId, cp.publicKey, cp.signature);
    });
    const r = verifyWith();
    expect(r.ok).toBe(false);
    expect(r.problems?.[0]).toMatchObject({ code: 'checkpoint-signature', message: expect.stringMatching(/^signature: the signed checkpoint at #21 is not valid: signed by another key/) });
  });

  it('re-chained with every checkpoint deleted: an outcome lies in the unsigned tail, so verify fails', () => {
    writeLedger();
    attack((db) => {
      rechainRefusedAsSucceeded(db);
      db.exec('DELETE FROM checkpoints');
    });
    expect(verifyWith().problems?.[0]).toMatchObject({ code: 'unsigned-tail', seq: 6, message: expect.stringMatching(/receipt #6 \(succeeded, an outcome\) is covered by no signed checkpoint/) });
  });

  it('cut: the last 4 receipts deleted (beyond the unsigned tail of 3) fails, count below checkpoint', () => {
    writeLedger();
    attack(cut(4));
    const r = verifyWith();
    expect(r).toMatchObject({ ok: false, count: 17, firstBroken: { seq: 18 } });
    expect(r.problems).toEqual([expect.objectContaining({ code: 'count-below-checkpoint', message: 'count below checkpoint: the signed checkpoint recorded 18 receipts, the ledger ends at 17 (its tail was cut)' })]);
  });

  it('cut inside the stated tail bound (2 of the 3 unsigned receipts) is reported as what it is: an unsigned tail within the bound', () => {
    writeLedger();
    attack(cut(2));
    const r = verifyWith();
    expect(r).toMatchObject({ ok: true, count: 19, signed: { checkpoint: { count: 18 }, unsignedTail: 1, tailBound: 15 } });
    expect(r.summary).toMatch(/1 receipt after it unsigned \(within the bound of 15: a cut among them cannot be detected\)/);
  });

  it('rolled back to an older checkpoint (receipts and newer checkpoints removed): the file agrees with itself, the witness does not', () => {
    const witness = writeLedger();
    attack((db) => {
      const older = db.prepare('SELECT count FROM checkpoints WHERE count < 18 ORDER BY count DESC LIMIT 1').pluck().get() as number;
      expect(older).toBe(12);
      db.prepare('DELETE FROM receipts WHERE seq > ?').run(older);
      db.prepare('DELETE FROM checkpoints WHERE count > ?').run(older);
      db.prepare("UPDATE sqlite_sequence SET seq = ? WHERE name = 'receipts'").run(older);
    });
    expect(verifyWith().ok).toBe(true); // what nothing but a witness can catch
    const r = verifyWith(witness);
    expect(r.ok).toBe(false);
    expect(r.signed?.witness).toBe('failed');
    expect(r.problems?.[0]).toMatchObject({ code: 'witness-count', message: "witness: the extension's signed checkpoint recorded 18 receipts, the ledger ends at 12 (rolled back below the witness's head)" });
  });

  it('rewritten under the witness, with the file\'s own checkpoints rebuilt by a holder of a stolen-then-lost key: the witness still names it', () => {
    const witness = writeLedger();
    attack((db) => {
      rechainRefusedAsSucceeded(db);
      db.exec('DELETE FROM checkpoints');
      const head = db.prepare('SELECT seq, hash FROM receipts ORDER BY seq DESC LIMIT 1').raw().get() as [number, string];
      const cp = key.sign({ count: head[0], headHash: head[1], time: Date.now() }); // the worst case: the key itself was used
      db.prepare('INSERT INTO checkpoints VALUES (?, ?, ?, ?, ?, ?)').run(cp.count, cp.headHash, cp.time, cp.keyId, cp.publicKey, cp.signature);
    });
    expect(verifyWith().ok).toBe(true);
    expect(verifyWith(witness).problems?.[0]).toMatchObject({ code: 'witness-mismatch', message: expect.stringMatching(/^witness: receipt #18 no longer has the head hash/) });
  });

  it('a witness of another key (the key was replaced, or the file swapped for another ledger) fails, naming the witness', () => {
    writeLedger();
    const other = LedgerSigningKey.generate().sign({ count: 5, headHash: 'a'.repeat(64), time: 1 });
    expect(verifyWith(other).problems?.[0]).toMatchObject({ code: 'witness-signature', message: expect.stringMatching(/^witness: the extension's checkpoint \(#5\) is not valid: signed by another key.*reset the witness/) });
  });

  it('dropped guard triggers make verify fail, and a read-write open with the key does not recreate them (it holds signing instead)', () => {
    writeLedger();
    attack(() => {}, true);
    const l = new Ledger(file, { signingKey: key });
    const names = new Database(file, { readonly: true });
    expect(names.prepare("SELECT COUNT(*) FROM sqlite_master WHERE type = 'trigger'").pluck().get()).toBe(0);
    names.close();
    expect(l.signing()?.held).toMatch(/guard trigger receipts_no_update is missing/);
    request(l, 'r9', 'succeeded');
    expect(l.latestSignedCheckpoint()?.count).toBe(18); // nothing signed over the changed file
    const r = l.verify();
    expect(r.ok).toBe(false);
    expect(r.problems?.map((p) => p.code)).toEqual(['trigger-missing', 'trigger-missing', 'trigger-missing', 'unsigned-tail']);
    l.close();
  });

  it('the console never signs over a re-chained file: reopened with its key it holds signing, and verify keeps failing', () => {
    writeLedger();
    attack(rechainRefusedAsSucceeded);
    const l = new Ledger(file, { signingKey: key });
    expect(l.signing()?.held).toMatch(/history was rewritten/);
    request(l, 'r9', 'succeeded');
    expect(l.latestSignedCheckpoint()?.count).toBe(18);
    expect(l.verify().ok).toBe(false);
    l.close();
  });

  it('a ledger written before signing is adopted only by a new key; with an old key and no checkpoint it fails (they were removed)', () => {
    const l0 = new Ledger(file);
    request(l0, 'r1', 'succeeded');
    l0.close();
    const adopted = new Ledger(file, { signingKey: key, signingKeyCreated: true });
    expect(adopted.latestSignedCheckpoint()?.count).toBe(6);
    expect(adopted.verify().ok).toBe(true);
    adopted.close();
    attack((db) => db.exec('DELETE FROM checkpoints'));
    const again = new Ledger(file, { signingKey: key, signingKeyCreated: false });
    expect(again.signing()?.held).toMatch(/unsigned tail/);
    expect(again.verify().ok).toBe(false);
    again.close();
  });
});

describe('the CLI checks signatures (npm run ledger -- verify)', () => {
  const keyFile = () => {
    const dir = tmp.file('keys');
    mkdirSync(dir, { mode: 0o700 });
    const f = path.join(dir, 'k.pem');
    writeFileSync(f, key.toPem(), { mode: 0o600 });
    return f;
  };

  it('re-chained: exit 1, "signature" named', () => {
    writeLedger();
    attack(rechainRefusedAsSucceeded);
    const keyless = cli('verify', file); // without the key the chain alone looks intact, so it fails as "cannot check" ...
    expect(keyless.code).toBe(1);
    expect(keyless.stdout).not.toMatch(/chain:/);
    const r = cli('verify', file, '--key-file', keyFile());
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^BROKEN at seq 18: signature: receipt #18 no longer has the head hash its signed checkpoint recorded/);
    const p = cli('verify', file, '--public-key', key.publicKey, '--json');
    expect(p.code).toBe(1);
    expect(JSON.parse(p.stdout)).toMatchObject({ ok: false, problems: [{ code: 'checkpoint-mismatch' }] });
  });

  it("finds the desktop app's public key beside its keychain blob by default: re-chained, exit 1 with no option", () => {
    writeLedger();
    attack(rechainRefusedAsSucceeded);
    const keys = tmp.file('no-keys-here'); // the cli()'s ECHO_CONSOLE_LEDGER_KEY_DIR
    mkdirSync(keys, { mode: 0o700 });
    const pem = defaultLedgerKeyFile(tmp.dir, { ECHO_CONSOLE_LEDGER_KEY_DIR: keys });
    writeFileSync(pem.replace(/\.pem$/, '.pub'), `${key.publicKey}\n`, { mode: 0o600 });
    const r = cli('verify', file);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^BROKEN at seq 18: signature: receipt #18 no longer has the head hash/);
  });

  it('export of a signed ledger carries its newest checkpoint: verify of the export with the key passes, anchored; re-chained, it fails', () => {
    writeLedger();
    const good = cli('export', file);
    expect(good.code).toBe(0);
    const exported = tmp.file('whole.jsonl');
    writeFileSync(exported, good.stdout);
    const v = cli('verify', exported, '--public-key', key.publicKey);
    expect(v.code).toBe(0);
    expect(v.stdout).toMatch(/no gaps.*signed checkpoint #\d+ verifies/s);
    attack(rechainRefusedAsSucceeded);
    writeFileSync(exported, cli('export', file).stdout);
    expect(cli('verify', exported, '--public-key', key.publicKey).code).toBe(1);
  });

  it('a file with signed checkpoints and no key to check them fails plainly', () => {
    writeLedger();
    const r = cli('verify', file);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/no public key was given to check them/);
  });

  it('cut beyond the tail bound: exit 1, count below checkpoint; cut inside: exit 0 naming the unsigned tail and its bound', () => {
    writeLedger();
    const k = keyFile();
    attack(cut(2));
    const inside = cli('verify', file, '--key-file', k);
    expect(inside.code).toBe(0);
    expect(inside.stdout).toMatch(/^ok: 19 receipts, chain intact; signed checkpoint at #18 .*1 receipt after it unsigned \(within the bound of 15/);
    attack(cut(2));
    const beyond = cli('verify', file, '--key-file', k);
    expect(beyond.code).toBe(1);
    expect(beyond.stdout).toMatch(/^BROKEN at seq 18: count below checkpoint: the signed checkpoint recorded 18 receipts, the ledger ends at 17/);
  });

  it('dropped triggers: exit 1 naming them', () => {
    writeLedger();
    attack(() => {}, true);
    const r = cli('verify', file, '--key-file', keyFile());
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/guard trigger receipts_no_update is missing/);
  });
});

/** A FakeLink whose extension side is the real witness code over an in-memory storage area. */
class WitnessLink extends FakeLink {
  readonly area = new Map<string, unknown>();
  readonly witness = new LedgerWitness({
    get: async (k: string) => (this.area.has(k) ? { [k]: structuredClone(this.area.get(k)) } : {}),
    set: async (items: Record<string, unknown>) => {
      for (const [k, v] of Object.entries(items)) this.area.set(k, structuredClone(v));
    },
  } satisfies KeyValueArea);
  override async request(req: Parameters<FakeLink['request']>[0], opts?: Parameters<FakeLink['request']>[1]): Promise<Result<never>> {
    // The wire check both ways, as the bridge and the extension do.
    if (!validateConsoleToExtension({ type: 'request', id: 'x', request: req }).ok) throw new Error(`invalid request ${JSON.stringify(req)}`);
    if (req.op === 'witness-checkpoint') return ok(await this.witness.offer(req.checkpoint)) as never;
    if (req.op === 'witness-read') {
      const v = await this.witness.read();
      expect(validateRequestValue('witness-read', v).ok).toBe(true);
      return ok(v) as never;
    }
    return (await super.request(req as never, opts)) as never;
  }
}

describe('the console core: checkpoints go to the witness; verifyLedger checks signature and witness', () => {
  let dir: string;
  let keyDir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'core-cp-'));
    keyDir = mkdtempSync(path.join(tmpdir(), 'core-cp-keys-'));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
    rmSync(keyDir, { recursive: true, force: true });
  });

  async function runCore(link: WitnessLink, fn: (core: ReturnType<typeof createConsoleCore>) => Promise<void>, warnings: string[] = []): Promise<void> {
    const logger = { info: () => {}, warn: (m: string) => void warnings.push(m) };
    const core = createConsoleCore({ dataDir: dir, mcpPort: 0, link, ledgerKeyHolder: new FileLedgerKeyHolder(path.join(keyDir, 'k.pem'), dir), logger });
    await core.start();
    try {
      await fn(core);
    } finally {
      await core.stop();
    }
  }

  it('a rollback below the witness\'s head and a re-chain fail verifyLedger, naming the witness and the signature', async () => {
    const link = new WitnessLink();
    await runCore(link, async (core) => {
      request(core.ledger, 'r1', 'succeeded');
      request(core.ledger, 'r2', 'refused', { code: 'x' });
      request(core.ledger, 'r3', 'succeeded');
      const head = core.ledger.head().count;
      await expect.poll(async () => (await link.witness.read())?.count).toBe(head);
      const v = await core.api.verifyLedger();
      expect(v.ok && v.value).toMatchObject({ ok: true, signed: { witness: 'agrees' } });
    });
    expect(statSync(path.join(keyDir, 'k.pem')).mode & 0o777).toBe(0o600);
    file = path.join(dir, 'ledger.db');
    attack((db) => {
      db.prepare('DELETE FROM receipts WHERE seq > 6').run();
      db.prepare('DELETE FROM checkpoints WHERE count > 6').run();
      db.prepare("UPDATE sqlite_sequence SET seq = 6 WHERE name = 'receipts'").run();
    });
    await runCore(link, async (core) => {
      const v = await core.api.verifyLedger();
      expect(v.ok && v.value.ok).toBe(false);
      expect(v.ok && v.value.problems?.[0]?.message).toMatch(/witness: the extension's signed checkpoint recorded 18 receipts, the ledger ends at 6 \(rolled back below the witness's head\)/);
      // The rolled-back console's next checkpoint is refused by the witness, which keeps its head.
      request(core.ledger, 'r4', 'succeeded');
      await expect.poll(() => link.witness.read().then((w) => w?.count)).toBe(18);
      await expect.poll(() => core.witness.lastAnswer?.reason ?? '').toMatch(/^rollback: the witness holds checkpoint #18/);
    });
  });

  it('re-chained under the witness: verifyLedger fails on the signature', async () => {
    const link = new WitnessLink();
    await runCore(link, async (core) => {
      request(core.ledger, 'r1', 'refused', { code: 'x' });
      request(core.ledger, 'r2', 'succeeded');
      await expect.poll(async () => (await link.witness.read())?.count).toBe(12);
    });
    file = path.join(dir, 'ledger.db');
    attack(rechainRefusedAsSucceeded);
    const warnings: string[] = [];
    await runCore(link, async (core) => {
      const v = await core.api.verifyLedger();
      expect(v.ok && v.value.ok).toBe(false);
      expect(warnings).toContainEqual(expect.stringMatching(/^the ledger fails its checkpoint check, so this console signs no new checkpoint/));
      expect(v.ok && v.value.problems?.map((p) => p.code)).toEqual(['checkpoint-mismatch', 'witness-mismatch']);
      expect(v.ok && v.value.summary).toMatch(/^BROKEN: signature: receipt #12 no longer has the head hash/);
    }, warnings);
  });
});

describe('the link contract of the witness ops (src/shared/protocol.ts)', () => {
  it('refuses a malformed checkpoint, extra keys and a malformed answer; accepts the real thing', () => {
    const cp = key.sign({ count: 3, headHash: 'a'.repeat(64), time: 1 });
    const msg = (checkpoint: unknown) => validateConsoleToExtension({ type: 'request', id: 'r1', request: { op: 'witness-checkpoint', checkpoint } });
    expect(msg(cp).ok).toBe(true);
    expect(msg({ ...cp, count: -1 })).toMatchObject({ ok: false, error: { code: 'bad-message', message: expect.stringMatching(/checkpoint\.count/) } });
    expect(msg({ ...cp, extra: 1 })).toMatchObject({ ok: false, error: { message: expect.stringMatching(/checkpoint\.extra: unknown key/) } });
    expect(msg({ ...cp, signature: 'x' })).toMatchObject({ ok: false });
    expect(validateConsoleToExtension({ type: 'request', id: 'r2', request: { op: 'witness-read', more: 1 } }).ok).toBe(false);
    expect(validateRequestValue('witness-read', null).ok).toBe(true);
    expect(validateRequestValue('witness-read', { ...cp, headHash: 'A'.repeat(64) }).ok).toBe(false);
    expect(validateRequestValue('witness-checkpoint', { kept: 'yes' }).ok).toBe(false);
  });
});

describe('key holder: a 0600 file outside the data folder', () => {
  it('creates the key 0600 in a 0700 folder, loads it again, refuses a place inside the data folder and a file others can read', () => {
    const dataDir = tmp.file('data');
    mkdirSync(dataDir);
    expect(() => new FileLedgerKeyHolder(path.join(dataDir, 'k.pem'), dataDir)).toThrow(LedgerKeyError);
    expect(defaultLedgerKeyFile(dataDir, { XDG_STATE_HOME: '/state' }, 'linux')).toMatch(/^\/state\/echo-console-keys\/ledger-[0-9a-f]{16}\.pem$/);
    const f = tmp.file('keys/k.pem');
    const first = new FileLedgerKeyHolder(f, dataDir).load();
    expect(first.created).toBe(true);
    expect(statSync(f).mode & 0o777).toBe(0o600);
    expect(statSync(path.dirname(f)).mode & 0o777).toBe(0o700);
    const again = new FileLedgerKeyHolder(f, dataDir).load();
    expect(again).toMatchObject({ created: false, key: { keyId: first.key.keyId } });
    writeFileSync(f, first.key.toPem(), { mode: 0o644 });
    spawnSync('chmod', ['644', f]);
    expect(() => new FileLedgerKeyHolder(f, dataDir).load()).toThrow(/open to other users/);
    spawnSync('chmod', ['600', f]);
    writeFileSync(f, 'not a key');
    expect(() => new FileLedgerKeyHolder(f, dataDir).load()).toThrow(/cannot be read.*left as it is/);
  });
});

describe('the witness (extension/src/background/witness.ts) only moves forward', () => {
  it('keeps a newer checkpoint; refuses a rollback, a conflict, another key and a bad signature', async () => {
    const area = new Map<string, unknown>();
    const w = new LedgerWitness({ get: async (k) => (area.has(k) ? { [k]: area.get(k) } : {}), set: async (i) => void Object.entries(i).forEach(([k, v]) => area.set(k, v)) });
    const at = (count: number, h = 'a') => key.sign({ count, headHash: h.repeat(64), time: 1 });
    expect(await w.offer(at(5))).toEqual({ kept: true });
    expect(await w.offer(at(9))).toEqual({ kept: true });
    expect(await w.offer(at(7))).toMatchObject({ kept: false, reason: expect.stringMatching(/^rollback/) });
    expect(await w.offer(at(9, 'b'))).toMatchObject({ kept: false, reason: expect.stringMatching(/^conflict/) });
    expect(await w.offer(LedgerSigningKey.generate().sign({ count: 50, headHash: 'c'.repeat(64), time: 1 }))).toMatchObject({ kept: false, reason: expect.stringMatching(/^another-key/) });
    expect(await w.offer({ ...at(60), count: 61 })).toMatchObject({ kept: false, reason: expect.stringMatching(/^signature/) });
    expect((await w.read())?.count).toBe(9);
  });
});
