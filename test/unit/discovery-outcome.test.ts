/**
 * A finished `webmcp_discover` ends (a new user's trial: it stayed "open" in the Timeline and
 * `request_status` said in-progress, because its last receipt, `discovered`, is no outcome).
 * Covers: the broker's final `succeeded` receipt after `discovered`; `outcomeOf` and
 * ENDING_EVENTS (src/shared/receipt.ts) as the one rule, through the request index's fold (the
 * Timeline and its live tail) and `request_status`, for new discoveries and for those recorded
 * before (no `succeeded`); and ledger migration 4 → 5, which ends the old open rows without
 * writing a receipt, so the chain and its signed checkpoints still verify.
 */
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ok } from '../../src/shared/result';
import { ENDING_EVENTS, OUTCOME_EVENTS, outcomeOf, type Receipt, type ReceiptEvent, type ReceiptInput } from '../../src/shared/receipt';
import { foldReceipt, type RequestSummary } from '../../src/shared/request-summary';
import { Broker, type AgentContext } from '../../src/main/core/broker';
import { statusOf } from '../../src/main/core/broker/request-status';
import { LEDGER_FORMAT, Ledger, LedgerSigningKey } from '../../src/main/core/ledger/index';
import { FakeLink, makeDiscovery, sharedTab, tempLedger, trailOf } from './broker.fixtures';
import { tempDir } from './support/ledger-fixtures';

const reader: AgentContext = { actor: { kind: 'agent', name: 'discover-agent' }, kind: 'read' };

describe('outcomeOf: the one rule for how a request ended', () => {
  it('a discovery whose last receipt is `discovered` ended as succeeded; one still reading is open', () => {
    expect(ENDING_EVENTS).toEqual({ discovered: 'succeeded' });
    expect(outcomeOf(['requested', 'discovered'])).toBe('succeeded');
    expect(outcomeOf(['requested', 'discovered', 'succeeded'])).toBe('succeeded');
    expect(outcomeOf(['requested'])).toBeNull();
    expect(outcomeOf([])).toBeNull();
  });

  it('the newest outcome wins, as before: an outcome-unknown later lifted says the latter; a refusal ends a discovery that never read', () => {
    expect(outcomeOf(['requested', 'dispatched', 'outcome-unknown', 'readback-confirmed', 'succeeded'])).toBe('succeeded');
    expect(outcomeOf(['requested', 'refused'])).toBe('refused');
    expect(outcomeOf(['requested', 'approval-shown', 'approved', 'dispatched'])).toBeNull();
    for (const o of OUTCOME_EVENTS) expect(outcomeOf(['requested', o])).toBe(o);
  });

  it("the request index's fold (the Timeline's rows and its live tail) ends a discovery at `discovered`", () => {
    const fold = (events: ReceiptEvent[]): RequestSummary | null =>
      events.reduce<RequestSummary | null>(
        (prev, event, i) =>
          foldReceipt(prev, { seq: i + 1, time: 1000 + i, requestId: 'q', event, faculty: 'webmcp-discover', origin: null, tabId: 7, toolName: null, operation: 'discover', actor: { kind: 'agent', name: 'a' }, detail: () => ({}) }),
        null,
      );
    expect(fold(['requested'])?.outcome).toBeNull();
    expect(fold(['requested', 'discovered'])?.outcome).toBe('succeeded');
    expect(fold(['requested', 'discovered', 'succeeded'])?.outcome).toBe('succeeded');
  });

  it('request_status (statusOf) of a discovery recorded before the final `succeeded`: ended, succeeded', () => {
    const r = (seq: number, event: ReceiptEvent, detail: unknown = {}): Receipt => ({ seq, id: `id${seq}`, time: seq, event, requestId: 'q', toolName: null, origin: 'o', detail }) as unknown as Receipt;
    expect(statusOf('q', [r(1, 'requested'), r(2, 'discovered', { tools: 3 })])).toMatchObject({ state: 'ended', outcome: 'succeeded', detail: { tools: 3 } });
    expect(statusOf('q', [r(1, 'requested')])).toMatchObject({ state: 'in-progress' });
    expect(statusOf('q', [r(1, 'requested')])?.outcome).toBeUndefined();
  });
});

describe('a discovery through the broker', () => {
  let link: FakeLink;
  let ledger: Ledger;
  let cleanup: () => void;
  let broker: Broker;

  beforeEach(async () => {
    link = new FakeLink();
    ({ ledger, cleanup } = tempLedger());
    link.tabs = [sharedTab(7)];
    link.discoveries.set(7, await makeDiscovery(7, [{ name: 'add_to_cart' }]));
    link.reads.set('webmcp-discover', () => ok({}));
    broker = new Broker({ link, receipts: ledger, approvalTimeoutMs: () => 60_000, linkGraceMs: 200 });
    await broker.listTabs(reader);
  });
  afterEach(() => {
    broker.dispose();
    cleanup();
  });

  it('writes `succeeded` after `discovered`; its Timeline row is succeeded, not open; request_status says ended, succeeded', async () => {
    const d = await broker.discover({ tabId: 7 }, reader);
    expect(d.ok).toBe(true);
    const trail = trailOf(ledger, d.requestId);
    expect(trail.map((r) => r.event)).toEqual(['requested', 'discovered', 'succeeded']);
    expect(trail[2]).toMatchObject({ faculty: 'webmcp-discover', operation: 'discover', tabId: 7, detail: { after: 'discovered' } });
    // The agent is handed the last receipt's id: the one that ended the request.
    expect(d.receiptId).toBe(trail[2]?.id);

    const rows = ledger.queryRequests({ requestId: d.requestId }).requests;
    expect(rows).toMatchObject([{ requestId: d.requestId, outcome: 'succeeded', steps: 3 }]);
    expect(ledger.countRequests({ outcome: 'open', faculty: 'webmcp-discover' })).toBe(0);
    expect(ledger.countRequests({ outcome: 'succeeded', faculty: 'webmcp-discover' })).toBe(1);

    const s = await broker.requestStatus(d.requestId, reader);
    expect(s).toMatchObject({ ok: true, value: { requestId: d.requestId, state: 'ended', outcome: 'succeeded' } });
    expect(s.ok && s.value.events.map((e) => e.event)).toEqual(['requested', 'discovered', 'succeeded']);
  });
});

describe('ledger format 5: discoveries recorded before it', () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeEach(() => {
    tmp = tempDir('discovery-outcome-');
  });
  afterEach(() => tmp.cleanup());

  const agent = { kind: 'agent' as const, name: 'old-agent' };
  const discovery = (requestId: string, event: ReceiptEvent, detail: unknown = {}): ReceiptInput => ({ requestId, event, faculty: 'webmcp-discover', operation: 'discover', tabId: 7, origin: 'https://shop.example', actor: agent, detail });

  it('a format-4 ledger whose discoveries are open rows migrates: they are succeeded, others stay as they were, no receipt is written, and it verifies', () => {
    const file = tmp.file('v4.db');
    const key = LedgerSigningKey.generate();
    // The receipts format-4 code wrote: a discovery ended at `discovered`, one still reading, one refused.
    let l = new Ledger(file, { signingKey: key, signingKeyCreated: true });
    l.appendBatch([discovery('old', 'requested'), discovery('old', 'discovered', { tools: 2 })]);
    l.appendBatch([discovery('reading', 'requested')]);
    l.appendBatch([discovery('refused', 'requested'), discovery('refused', 'refused', { code: 'policy-denied' })]);
    const before = l.verify({ parallel: false });
    expect(before).toMatchObject({ ok: true, count: 5 });
    l.close();
    // Make it the format-4 file that code left: its fold had no ENDING_EVENTS, so the row of `old` is open.
    const raw = new Database(file);
    raw.prepare("UPDATE requests SET outcome = NULL WHERE request_id = 'old'").run();
    raw.pragma('user_version = 4');
    raw.close();

    l = new Ledger(file, { signingKey: key });
    try {
      expect(l.format).toBe(LEDGER_FORMAT);
      expect(LEDGER_FORMAT).toBe(5);
      const outcome = (id: string) => l.queryRequests({ requestId: id }).requests[0]?.outcome;
      expect(outcome('old')).toBe('succeeded');
      expect(outcome('reading')).toBeNull();
      expect(outcome('refused')).toBe('refused');
      expect(l.countRequests({ outcome: 'open' })).toBe(1);
      // No receipt written: the same chain, the same head, its signed checkpoints intact.
      const after = l.verify({ parallel: false });
      expect(after).toMatchObject({ ok: true, count: 5, headHash: before.headHash });
      expect(after.problems ?? []).toEqual([]);
      expect(l.get(5)?.event).toBe('refused');
    } finally {
      l.close();
    }
    const db = new Database(file, { readonly: true });
    expect(db.pragma('user_version', { simple: true })).toBe(5);
    db.close();
  });
});
