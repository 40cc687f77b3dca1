/**
 * Receipts pushed to the UI in batches (src/main/core/receipt-events.ts): a
 * flood of receipts becomes a bounded number of events, in order, with none lost.
 */
import { describe, expect, it } from 'vitest';
import type { Receipt } from '../../src/shared/receipt';
import { batchReceiptEvents } from '../../src/main/core/receipt-events';

function source() {
  const listeners = new Set<(r: Receipt) => void>();
  return {
    subscribe: (l: (r: Receipt) => void) => (listeners.add(l), () => listeners.delete(l)),
    append: (seq: number) => {
      for (const l of listeners) l({ seq } as Receipt);
    },
    listening: () => listeners.size,
  };
}

describe('batchReceiptEvents', () => {
  it('1,000 receipts appended in one turn become 5 full batches, in order, none lost', () => {
    const s = source();
    const got: number[][] = [];
    const stop = batchReceiptEvents(s.subscribe, (rs) => got.push(rs.map((r) => r.seq)), { intervalMs: 60_000, maxBatch: 200 });
    for (let i = 1; i <= 1000; i++) s.append(i);
    expect(got.map((b) => b.length)).toEqual([200, 200, 200, 200, 200]);
    expect(got.flat()).toEqual(Array.from({ length: 1000 }, (_, i) => i + 1));
    stop();
  });

  it('a few receipts wait for the interval and go as one event', async () => {
    const s = source();
    const got: number[][] = [];
    const stop = batchReceiptEvents(s.subscribe, (rs) => got.push(rs.map((r) => r.seq)), { intervalMs: 5 });
    s.append(1);
    s.append(2);
    s.append(3);
    expect(got).toEqual([]);
    await new Promise<void>((resolve) => {
      const check = () => (got.length > 0 ? resolve() : setTimeout(check, 1));
      check();
    });
    expect(got).toEqual([[1, 2, 3]]);
    stop();
  });

  it('stop delivers what is waiting and unsubscribes', () => {
    const s = source();
    const got: number[][] = [];
    const stop = batchReceiptEvents(s.subscribe, (rs) => got.push(rs.map((r) => r.seq)), { intervalMs: 60_000 });
    s.append(1);
    stop();
    expect(got).toEqual([[1]]);
    expect(s.listening()).toBe(0);
    s.append(2);
    expect(got).toEqual([[1]]);
  });
});
