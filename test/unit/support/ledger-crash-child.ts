/**
 * Child process for test/unit/ledger-crash.test.ts: opens the ledger named in
 * argv[2], prints "ready <count>", then appends forever, printing
 * "<seq> <hash>" after each append returns (that is, once it is acknowledged
 * as durable). The parent kills it with SIGKILL at a random moment.
 * Every append is acknowledged when it returns (committed, not yet fsynced: that
 * runs in the background, docs/ledger.md "Durability"), and must survive the
 * console's crash; every third one also waits for `durable()`, so kills land
 * while an fsync is running too.
 */
import { writeSync } from 'node:fs';
import { Ledger } from '../../../src/main/core/ledger/index';
import { fullInput } from './ledger-fixtures';

const file = process.argv[2];
if (!file) throw new Error('usage: ledger-crash-child <file>');
const ledger = new Ledger(file);
writeSync(1, `ready ${ledger.head().count}\n`);
async function appendForever(): Promise<void> {
  for (let i = 0; ; i++) {
    const r = ledger.append(fullInput(i, { detail: { i, pad: 'x'.repeat(i % 7 === 0 ? 3000 : 40) } }));
    writeSync(1, `${r.seq} ${r.hash}\n`);
    if (i % 3 === 2) await ledger.durable();
  }
}
void appendForever();
