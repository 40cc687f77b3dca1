import { afterEach, describe, expect, it, vi } from 'vitest';
import { AgentQuotas, RECEIPT_WINDOW_MS, type QuotaRefusal } from '../../src/main/core/agent/quotas';

const alice = { tokenId: 'tok-a', tokenName: 'Alice laptop' };
const bob = { tokenId: 'tok-b', tokenName: 'Bob CI' };

function setup(limits: ConstructorParameters<typeof AgentQuotas>[1] = {}) {
  let t = 1_000_000;
  const receipts: QuotaRefusal[] = [];
  const q = new AgentQuotas((r) => receipts.push(r), limits, () => t);
  return { q, receipts, advance: (ms: number) => (t += ms) };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('per-agent quotas (issue 9 items 3 and 10)', () => {
  it('a flooding token is held to its rate, with a clear error; another token is untouched', () => {
    const { q, advance } = setup({ callsPerSecond: 10, callBurst: 20 });
    let passed = 0;
    let firstRefusal: ReturnType<AgentQuotas['take']> | undefined;
    // 100 calls in one second from Alice: the burst passes, then 10 per second.
    for (let i = 0; i < 100; i++) {
      const d = q.take(alice, 'calls');
      if (d.ok) passed++;
      else firstRefusal ??= d;
      advance(10);
    }
    expect(passed).toBe(20 + 9); // the burst, then 10/s over 0.99 s (the 10th refill lands after the last call)
    expect(firstRefusal).toMatchObject({ ok: false });
    if (firstRefusal && !firstRefusal.ok) {
      expect(firstRefusal.message).toContain('Alice laptop');
      expect(firstRefusal.message).toContain('at most 10 tool calls per second');
      expect(firstRefusal.retryAfterMs).toBeGreaterThan(0);
    }
    // Bob's budget is his own.
    for (let i = 0; i < 20; i++) expect(q.take(bob, 'calls').ok).toBe(true);
  });

  it('a flood writes a bounded number of receipts: the first refusal at once, the rest counted in one per window', () => {
    vi.useFakeTimers();
    const { q, receipts, advance } = setup({ requestsPerSecond: 5, requestBurst: 5 });
    for (let i = 0; i < 5; i++) q.take(alice, 'requests');
    for (let i = 0; i < 400; i++) q.take(alice, 'requests'); // 400 refused at the same instant
    expect(receipts).toEqual([expect.objectContaining({ token: alice, kind: 'requests', count: 1 })]);
    vi.advanceTimersByTime(RECEIPT_WINDOW_MS);
    expect(receipts).toHaveLength(2);
    expect(receipts[1]).toMatchObject({ kind: 'requests', count: 399 });
    expect(receipts[1]!.message).toMatch(/^399 more refused/);
    // Nothing more to say: no receipt for a quiet window.
    vi.advanceTimersByTime(RECEIPT_WINDOW_MS * 3);
    expect(receipts).toHaveLength(2);
    // Refilled after a second: admitted again.
    advance(1000);
    expect(q.take(alice, 'requests').ok).toBe(true);
  });

  it('bytes are metered per token, and a body over the burst waits for a full bucket instead of never passing', () => {
    const { q, advance } = setup({ bytesPerSecond: 1000, byteBurst: 4000 });
    expect(q.take(alice, 'bytes', 3000).ok).toBe(true);
    const d = q.take(alice, 'bytes', 3000);
    expect(d).toMatchObject({ ok: false, retryAfterMs: 2000 });
    advance(2000);
    expect(q.take(alice, 'bytes', 3000).ok).toBe(true);
    advance(10_000);
    expect(q.take(alice, 'bytes', 10_000_000).ok).toBe(true); // counts as the whole burst
    expect(q.take(alice, 'bytes', 1).ok).toBe(false);
  });

  it('a receipt writer that throws never breaks the answer', () => {
    const q = new AgentQuotas(() => {
      throw new Error('ledger down');
    }, { callBurst: 1, callsPerSecond: 1 });
    expect(q.take(alice, 'calls').ok).toBe(true);
    expect(q.take(alice, 'calls').ok).toBe(false);
    q.flush();
  });

  it('forget() drops a revoked token\'s buckets; flush() writes what was counted', () => {
    vi.useFakeTimers();
    const { q, receipts } = setup({ callsPerSecond: 1, callBurst: 1 });
    q.take(alice, 'calls');
    q.take(alice, 'calls');
    q.take(alice, 'calls');
    q.flush();
    expect(receipts.map((r) => r.count)).toEqual([1, 1]);
    q.forget(alice.tokenId);
    expect(q.take(alice, 'calls').ok).toBe(true);
  });
});
