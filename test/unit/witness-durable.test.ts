/**
 * A signed checkpoint reaches the extension's witness only once it is on disk
 * (src/main/core/witness.ts; docs/ledger.md, "Durability"): a witness that held
 * a checkpoint a power loss took back would make the next verify report a cut tail.
 */
import { fsync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { Ledger, LedgerSigningKey } from '../../src/main/core/ledger/index';
import { WitnessRelay } from '../../src/main/core/witness';
import { FakeLink } from './broker.fixtures';
import { consoleInput, tempDir } from './support/ledger-fixtures';

const tmp = tempDir('witness-durable-');
afterEach(() => tmp.cleanup());

const turn = () => new Promise<void>((r) => setImmediate(r));

describe('the witness gets a checkpoint only after its fsync', () => {
  it('signed at an outcome, held back while the log is not fsynced, handed over once it is', async () => {
    const held: Array<() => void> = [];
    const ledger = new Ledger(tmp.file('w.db'), {
      signingKey: LedgerSigningKey.generate(),
      signingKeyCreated: true,
      syncFd: (fd, done) => held.push(() => fsync(fd, done)),
    });
    const link = new FakeLink();
    const relay = new WitnessRelay(link, ledger, () => undefined);
    const handedOver = () => link.requests.filter((r) => r.op === 'witness-checkpoint');
    try {
      ledger.append(consoleInput({ requestId: '00000000-0000-4000-8000-000000000001', event: 'succeeded', faculty: 'webmcp-invoke' }));
      expect(ledger.latestSignedCheckpoint()?.count).toBe(1);
      for (let i = 0; i < 20; i++) await turn();
      expect(held).toHaveLength(1); // the fsync was asked for and has not run
      expect(handedOver()).toEqual([]);
      held.shift()!();
      while (handedOver().length === 0) await turn();
      expect(handedOver()[0]).toMatchObject({ checkpoint: { count: 1 } });
      expect(ledger.durabilityCounts()).toMatchObject({ commits: 1, durableCommits: 1 });
    } finally {
      relay.dispose();
      ledger.close();
    }
  });
});
