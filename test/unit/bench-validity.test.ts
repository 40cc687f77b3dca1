/**
 * The agent benchmark's validity judgement (test/bench/validity.ts): a run is
 * valid only when every call ran the rediscovery, the grant MAC check and the
 * nonce check, left all six receipts, waited for an fsync before each of its
 * three effects with nothing pending at the answer, and the ledger writes with
 * synchronous at least NORMAL.
 * Each way a run can fall short is shown to make it invalid.
 */
import { describe, expect, it } from 'vitest';
import { PROBE_EXPECTED, RECEIPTS_PER_CALL, judgeProbe, judgeValidity, type ProbeObservation, type ProbeStep, type ValidityInput } from '../bench/validity';

const ok3 = { fsyncs: 3, pendingAtAnswer: 0 };
const zero = { rediscoveries: 10, macChecks: 20, nonceChecks: 30 };
function input(over: Partial<ValidityInput> = {}): ValidityInput {
  return {
    requestIds: ['a', 'b', 'c'],
    before: zero,
    after: { rediscoveries: 13, macChecks: 23, nonceChecks: 33 },
    perCall: [
      { rediscoveries: 11, macChecks: 21, nonceChecks: 31 },
      { rediscoveries: 12, macChecks: 22, nonceChecks: 32 },
      { rediscoveries: 13, macChecks: 23, nonceChecks: 33 },
    ],
    eventsOf: () => [...RECEIPTS_PER_CALL],
    synchronous: 1,
    durabilityPerCall: [ok3, ok3, { fsyncs: 4, pendingAtAnswer: 0 }],
    ...over,
  };
}

describe('agent bench validity', () => {
  it('is valid when every check and every receipt is there', () => {
    const v = judgeValidity(input());
    expect(v).toMatchObject({ calls: 3, counters: { rediscoveries: 3, macChecks: 3, nonceChecks: 3 }, callsShortOfACheck: 0, shortCalls: [], requestsWithAllReceipts: 3, incomplete: [], valid: true });
  });

  it('is invalid when one call skipped a check that another counted twice (the totals still add up)', () => {
    const v = judgeValidity(
      input({
        perCall: [
          { rediscoveries: 12, macChecks: 21, nonceChecks: 31 },
          { rediscoveries: 12, macChecks: 22, nonceChecks: 32 },
          { rediscoveries: 13, macChecks: 23, nonceChecks: 33 },
        ],
      }),
    );
    expect(v.counters.rediscoveries).toBe(3);
    expect(v.callsShortOfACheck).toBe(1);
    expect(v.shortCalls).toEqual([{ index: 1, requestId: 'b', missing: ['rediscoveries'] }]);
    expect(v.valid).toBe(false);
  });

  it('is invalid when a per-call reading is missing or unreadable', () => {
    expect(judgeValidity(input({ perCall: [{ rediscoveries: 11, macChecks: 21, nonceChecks: 31 }, null, { rediscoveries: 13, macChecks: 23, nonceChecks: 33 }] })).callsShortOfACheck).toBe(2);
    expect(judgeValidity(input({ perCall: [] })).valid).toBe(false);
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

  it('is invalid unless the ledger writes with synchronous at least NORMAL', () => {
    expect(judgeValidity(input({ synchronous: 0 })).valid).toBe(false);
    expect(judgeValidity(input({ synchronous: 2 })).valid).toBe(true);
    expect(judgeValidity(input({ synchronous: null })).valid).toBe(false);
  });

  it('is invalid when a call waited for fewer fsyncs than its three effects, answered with a receipt not on disk, or was not read', () => {
    expect(judgeValidity(input({ durabilityPerCall: [ok3, { fsyncs: 2, pendingAtAnswer: 0 }, ok3] }))).toMatchObject({ callsShortOfASync: 1, valid: false });
    expect(judgeValidity(input({ durabilityPerCall: [ok3, { fsyncs: 3, pendingAtAnswer: 1 }, ok3] }))).toMatchObject({ callsShortOfASync: 1, valid: false });
    expect(judgeValidity(input({ durabilityPerCall: [ok3, null, ok3] }))).toMatchObject({ callsShortOfASync: 1, valid: false });
    expect(judgeValidity(input({ durabilityPerCall: [ok3, ok3] }))).toMatchObject({ callsShortOfASync: 1, valid: false });
  });

  it('is invalid with no calls at all', () => {
    expect(judgeValidity(input({ requestIds: [] })).valid).toBe(false);
  });
});

describe('agent bench counter probe', () => {
  const asExpected = (): Record<ProbeStep, ProbeObservation> =>
    Object.fromEntries(Object.entries(PROBE_EXPECTED).map(([k, w]) => [k, { outcome: w.outcome, ...(w.refusal ? { refusal: w.refusal } : {}), delta: { ...w.delta } }])) as Record<ProbeStep, ProbeObservation>;

  it('is ok when each counter moved at its own check only', () => {
    expect(judgeProbe(asExpected()).ok).toBe(true);
  });

  it('is not ok when a counter moves for a request its check never saw', () => {
    const seen = asExpected();
    seen['bad-mac'] = { ...seen['bad-mac'], delta: { rediscoveries: 0, macChecks: 1, nonceChecks: 1 } };
    expect(judgeProbe(seen).ok).toBe(false);
  });

  it('is not ok when the replay was not refused as reused, or a step is missing', () => {
    const seen = asExpected();
    expect(judgeProbe({ ...seen, replay: { ...seen.replay, refusal: 'grant-invalid' } }).ok).toBe(false);
    expect(judgeProbe({ ...seen, fresh: { outcome: 'succeeded', delta: null } }).ok).toBe(false);
    const { fresh: _fresh, ...rest } = seen;
    expect(judgeProbe(rest).ok).toBe(false);
  });
});
