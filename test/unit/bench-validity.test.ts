/**
 * The agent benchmark's validity judgement (test/bench/validity.ts): a run is
 * valid only when every call ran the rediscovery, the grant MAC check and the
 * nonce check, left all six receipts, and the ledger writes with synchronous=FULL.
 * Each way a run can fall short is shown to make it invalid.
 */
import { describe, expect, it } from 'vitest';
import { RECEIPTS_PER_CALL, judgeValidity, type ValidityInput } from '../bench/validity';

const zero = { rediscoveries: 10, macChecks: 20, nonceChecks: 30 };
function input(over: Partial<ValidityInput> = {}): ValidityInput {
  return {
    requestIds: ['a', 'b', 'c'],
    before: zero,
    after: { rediscoveries: 13, macChecks: 23, nonceChecks: 33 },
    eventsOf: () => [...RECEIPTS_PER_CALL],
    synchronous: 2,
    ...over,
  };
}

describe('agent bench validity', () => {
  it('is valid when every check and every receipt is there', () => {
    const v = judgeValidity(input());
    expect(v).toMatchObject({ calls: 3, counters: { rediscoveries: 3, macChecks: 3, nonceChecks: 3 }, requestsWithAllReceipts: 3, incomplete: [], valid: true });
  });

  it.each(['rediscoveries', 'macChecks', 'nonceChecks'] as const)('is invalid when %s fell short of one per call', (k) => {
    const v = judgeValidity(input({ after: { rediscoveries: 13, macChecks: 23, nonceChecks: 33, [k]: zero[k] + 2 } }));
    expect(v.counters[k]).toBe(2);
    expect(v.valid).toBe(false);
  });

  it('is invalid when the counters cannot be read', () => {
    expect(judgeValidity(input({ after: null })).valid).toBe(false);
    expect(judgeValidity(input({ before: null })).counters.macChecks).toBeNull();
  });

  it('is invalid when a request lacks a receipt, and names what is missing', () => {
    const v = judgeValidity(input({ eventsOf: (id) => (id === 'b' ? RECEIPTS_PER_CALL.filter((e) => e !== 'dispatched') : [...RECEIPTS_PER_CALL]) }));
    expect(v.requestsWithAllReceipts).toBe(2);
    expect(v.incomplete).toEqual([{ requestId: 'b', missing: ['dispatched'] }]);
    expect(v.valid).toBe(false);
  });

  it('is invalid when a call has no request id', () => {
    const v = judgeValidity(input({ requestIds: ['a', null, 'c'] }));
    expect(v.incomplete[0]).toEqual({ requestId: null, missing: [...RECEIPTS_PER_CALL] });
    expect(v.valid).toBe(false);
  });

  it('is invalid unless the ledger writes with synchronous=FULL', () => {
    expect(judgeValidity(input({ synchronous: 1 })).valid).toBe(false);
    expect(judgeValidity(input({ synchronous: null })).valid).toBe(false);
  });

  it('is invalid with no calls at all', () => {
    expect(judgeValidity(input({ requestIds: [] })).valid).toBe(false);
  });
});
