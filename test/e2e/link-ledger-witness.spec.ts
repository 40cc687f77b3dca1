/**
 * Issue 9 item 6 over the REAL link: the console hands every signed checkpoint to
 * the real extension in Chromium, which keeps the newest in chrome.storage.local (the
 * area closed to content scripts with TRUSTED_CONTEXTS, like the pairing key); then
 * the ledger file is rolled back behind the console's back (receipts and the file's
 * own newer checkpoints removed, so the file agrees with itself), and the console's
 * verify fails against the witness it reads back from the extension.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { FileLedgerKeyHolder } from '../../src/main/core/ledger/key-holder';
import { TRIGGERS_SQL } from '../../src/main/core/ledger/schema';
import type { SignedCheckpoint } from '../../src/shared/checkpoint';
import { WITNESS_KEY } from '../../extension/src/background/witness';
import { test, expect, askInvoke, until, type LinkWorld } from './support/link-fixture';

/** What the extension's service worker holds as the witness (read in the worker, as Chrome stores it). */
async function witnessInExtension(w: LinkWorld): Promise<SignedCheckpoint | null> {
  const worker = await w.worker();
  const got = (await worker.evaluate(`chrome.storage.local.get(${JSON.stringify(WITNESS_KEY)})`)) as Record<string, SignedCheckpoint | undefined>;
  return got[WITNESS_KEY] ?? null;
}

test('the extension keeps the newest signed checkpoint as a witness; a ledger rolled back below it fails verify', async ({ launchWorld }) => {
  const keyDir = mkdtempSync(join(tmpdir(), 'echo-lk-keys-'));
  try {
    // The web host's holder: a 0600 key file outside the data folder (the world's data folder is another temp dir).
    const world = await launchWorld({ core: { ledgerKeyHolder: new FileLedgerKeyHolder(join(keyDir, 'ledger-key.pem'), join(keyDir, 'no-data-here')) } });
    const { tabId } = await world.openShared(world.demo.url('store'));

    // Two real requests: one the person approves (succeeded), one they deny (denied).
    const first = await askInvoke(world, tabId, 'get_cart', {}, 'witness-e2e');
    expect(await world.core.api.decideApproval({ requestId: first.view.requestId, decision: 'approve' })).toEqual({ ok: true, value: null });
    expect((await first.pending).ok).toBe(true);
    const firstCheckpoint = world.core.ledger.latestSignedCheckpoint() as SignedCheckpoint;
    const second = await askInvoke(world, tabId, 'get_cart', {}, 'witness-e2e');
    expect(await world.core.api.decideApproval({ requestId: second.view.requestId, decision: 'deny' })).toEqual({ ok: true, value: null });
    expect((await second.pending).ok).toBe(false);
    const newest = world.core.ledger.latestSignedCheckpoint() as SignedCheckpoint;
    expect(newest.count).toBeGreaterThan(firstCheckpoint.count);

    // The witness in the extension's storage is exactly the newest checkpoint the console signed.
    const held = await until(async () => {
      const w = await witnessInExtension(world);
      return w && w.count === newest.count ? w : null;
    }, 'the extension to hold the newest checkpoint');
    expect(held).toEqual(newest);
    // Kept where the pairing key is: storage.local, closed to content scripts (TRUSTED_CONTEXTS).
    const fromContentScript = await (await world.worker()).evaluate(`(async () => {
      const [r] = await chrome.scripting.executeScript({ target: { tabId: ${tabId} }, world: 'ISOLATED', func: async (k) => {
        try { return { read: true, value: JSON.stringify(await chrome.storage.local.get(k)) }; } catch (e) { return { read: false, why: String(e) }; }
      }, args: [${JSON.stringify(WITNESS_KEY)}] });
      return r && r.result;
    })()`);
    expect(fromContentScript).toMatchObject({ read: false, why: expect.stringMatching(/not allowed from this context/) });
    const fine = await world.core.api.verifyLedger();
    expect(fine.ok && fine.value).toMatchObject({ ok: true, signed: { witness: 'agrees', checkpoint: { count: newest.count } } });

    // The attack, with the console stopped: roll the file back to the first checkpoint.
    await world.stopCore();
    const db = new Database(join(world.dataDir, 'ledger.db'));
    db.exec('DROP TRIGGER receipts_no_delete');
    db.prepare('DELETE FROM receipts WHERE seq > ?').run(firstCheckpoint.count);
    db.prepare('DELETE FROM checkpoints WHERE count > ?').run(firstCheckpoint.count);
    db.prepare("UPDATE sqlite_sequence SET seq = ? WHERE name = 'receipts'").run(firstCheckpoint.count);
    db.exec(TRIGGERS_SQL);
    db.close();

    const core = await world.startCore();
    await world.waitForCoreLink((s) => s.state === 'connected', 'the extension to reconnect to the restarted console', 60_000);
    const v = await core.api.verifyLedger();
    expect(v.ok).toBe(true);
    if (!v.ok) return;
    expect(v.value.ok).toBe(false);
    expect(v.value.signed?.witness).toBe('failed');
    expect(v.value.problems?.[0]?.message).toBe(
      `witness: the extension's signed checkpoint recorded ${newest.count} receipts, the ledger ends at ${core.ledger.head().count} (rolled back below the witness's head)`,
    );
    // The witness never goes back: the rolled-back console's checkpoint was refused and the head kept.
    await expect.poll(() => core.witness.lastAnswer?.reason ?? '').toMatch(/^rollback: the witness holds checkpoint #/);
    expect(await witnessInExtension(world)).toEqual(newest);
  } finally {
    rmSync(keyDir, { recursive: true, force: true });
  }
});
