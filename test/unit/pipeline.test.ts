/**
 * The one pipeline with a faculty other than WebMCP: a low-impact mutation
 * defined here as a constant (`semantic` / `hover`), as issue 8's semantic
 * controls will be. What the pipeline itself guarantees, whatever the faculty:
 * every step receipted with faculty, operation and subject hash; the grant
 * bound to the operation; the person's tab rule lets a low-impact mutation go
 * without a dialog only in that tab, never a mutation, never a tool that
 * declared 'read'.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Broker, type AgentContext } from '../../src/main/core/broker';
import { ToolRouter } from '../../src/main/core/policy';
import type { Ledger } from '../../src/main/core/ledger';
import { FakeLink, ORIGIN, durabilitySpy, sharedTab, standInHover, tempLedger, trailOf, until } from './broker.fixtures';

const H = (c: string) => c.repeat(64);
const hover = standInHover;

const ctx = (kind: AgentContext['kind']): AgentContext => ({ actor: { kind: 'agent', name: 'pipeline-test' }, kind });

let link: FakeLink;
let ledger: Ledger;
let cleanup: () => void;
let broker: Broker;
let policy: ToolRouter;

beforeEach(async () => {
  link = new FakeLink();
  link.tabs = [sharedTab(7), sharedTab(8)];
  ({ ledger, cleanup } = tempLedger());
  policy = new ToolRouter();
  broker = new Broker({ link, receipts: ledger, policy, approvalTimeoutMs: () => 60_000, linkGraceMs: 200 });
  await broker.listTabs(ctx('read'));
});
afterEach(() => {
  broker.dispose();
  cleanup();
});

const pending = (n: number) => until((l) => broker.approvals.onChange(l), () => broker.approvals.list().length === n);

describe('the pipeline with another faculty', () => {
  it('reviewed by default: the dialog names faculty and operation; the grant binds operation and subject; receipts carry both', async () => {
    const p = broker.action(hover, { tabId: 7, ref: 'e12', arguments: {} }, ctx('low-impact-mutation'));
    await pending(1);
    const view = broker.approvals.list()[0]!;
    expect(view).toMatchObject({ faculty: 'semantic', operation: 'hover', kind: 'low-impact-mutation', verb: 'hover over an element', subjectHash: H('a'), frame: { frameId: 0 } });
    broker.decide(view.requestId, 'approve');
    const a = await p;
    expect(a.ok).toBe(true);
    expect(link.invokes()[0]).toMatchObject({ op: 'dispatch', faculty: 'semantic', operation: 'hover', subject: { ref: 'e12' }, grant: { faculty: 'semantic', operation: 'hover', subjectHash: H('a'), urlHash: H('1') } });
    const trail = trailOf(ledger, a.requestId);
    expect(trail.map((r) => r.event)).toEqual(['requested', 'validated', 'approval-shown', 'approved', 'dispatched', 'succeeded']);
    for (const r of trail) expect(r).toMatchObject({ faculty: 'semantic', operation: 'hover' });
    expect(trail.slice(1).every((r) => r.subjectHash === H('a'))).toBe(true);
    expect(trail.find((r) => r.event === 'approved')!.actor).toEqual({ kind: 'person' });
  });

  it("the person's rule for one shared tab lets a low-impact mutation run without a dialog there, receipted as approved by that rule", async () => {
    policy.setRules([{ tabId: 7, origin: ORIGIN, kind: 'low-impact-mutation', action: 'allow', reason: 'hovering on tab 7 is fine' }]);
    const a = await broker.action(hover, { tabId: 7, ref: 'e1', arguments: {} }, ctx('low-impact-mutation'));
    expect(a.ok).toBe(true);
    const trail = trailOf(ledger, a.requestId);
    expect(trail.map((r) => r.event)).toEqual(['requested', 'validated', 'approved', 'dispatched', 'succeeded']);
    expect(trail[2]).toMatchObject({ actor: { kind: 'console' }, detail: { byRule: 0 } });
    expect(link.invokes()[0]!.grant.operation).toBe('hover');
  });

  it('that rule does nothing in another tab, for a mutation, or for an action whose tool declared read', async () => {
    policy.setRules([{ tabId: 7, origin: ORIGIN, kind: '*', action: 'allow' }]);
    const other = broker.action(hover, { tabId: 8, ref: 'e1', arguments: {} }, ctx('low-impact-mutation'));
    await pending(1);
    const mutation = broker.action(hover, { tabId: 7, ref: 'e1', arguments: {} }, ctx('mutation'));
    await pending(2);
    const misdeclared = broker.action(hover, { tabId: 7, ref: 'e1', arguments: {} }, ctx('read'));
    await pending(3);
    expect(link.invokes()).toHaveLength(0);
    for (const v of broker.approvals.list()) broker.decide(v.requestId, 'deny');
    for (const a of await Promise.all([other, mutation, misdeclared])) expect(!a.ok && a.error.code).toBe('denied');
  });
});

describe('durability: every receipt is on disk before anything leaves the console', () => {
  /** A broker over a sink that tracks which receipts a completed `durable()` covers. */
  function spyingBroker() {
    const spy = durabilitySpy(ledger);
    const b = new Broker({ link, receipts: spy.sink, policy, approvalTimeoutMs: () => 60_000, linkGraceMs: 200 });
    return { b, ...spy };
  }

  it('before the dialog, before the dispatch and before the answer, everything written is on disk (approve, deny, a rule, a refusal)', async () => {
    const { b, log, notDurable } = spyingBroker();
    try {
      await b.listTabs(ctx('read'));
      const atEffects: Array<[string, string[]]> = [];
      const off = b.approvals.onChange(() => {
        if (b.approvals.list().length > 0) atEffects.push(['dialog', notDurable()]);
      });
      link.invokeHandler = async () => (atEffects.push(['dispatch', notDurable()]), { ok: true, value: { outcome: 'succeeded', result: '{}', elapsedMs: 1 } });
      const answer = async (p: Promise<unknown>) => (await p, atEffects.push(['answer', notDurable()]));

      const approved = b.action(hover, { tabId: 7, ref: 'e1', arguments: {} }, ctx('low-impact-mutation'));
      await until((l) => b.approvals.onChange(l), () => b.approvals.list().length === 1);
      b.decide(b.approvals.list()[0]!.requestId, 'approve');
      await answer(approved);

      const denied = b.action(hover, { tabId: 7, ref: 'e2', arguments: {} }, ctx('low-impact-mutation'));
      await until((l) => b.approvals.onChange(l), () => b.approvals.list().length === 1);
      b.decide(b.approvals.list()[0]!.requestId, 'deny');
      await answer(denied);

      policy.setRules([{ tabId: 7, origin: ORIGIN, kind: 'low-impact-mutation', action: 'allow', reason: 'fine' }]);
      await answer(b.action(hover, { tabId: 7, ref: 'e3', arguments: {} }, ctx('low-impact-mutation')));
      await answer(b.action(hover, { tabId: 99, ref: 'e4', arguments: {} }, ctx('low-impact-mutation'))); // not shared: refused
      off();

      expect(atEffects.map(([e]) => e)).toEqual(['dialog', 'dispatch', 'answer', 'dialog', 'answer', 'dispatch', 'answer', 'answer']);
      for (const [effect, pending] of atEffects) expect(pending, effect).toEqual([]);
      // Every receipt was written and, by the last answer, is on disk.
      expect(log.map((e) => e.event)).toEqual(expect.arrayContaining(['requested', 'validated', 'approval-shown', 'approved', 'dispatched', 'succeeded', 'denied', 'refused']));
      expect(notDurable()).toEqual([]);
    } finally {
      b.dispose();
    }
  });

  it('when the receipts cannot be made durable, nothing is shown, read or dispatched: ledger-unavailable', async () => {
    const { b, failDurable } = spyingBroker();
    try {
      await b.listTabs(ctx('read'));
      const readsBefore = link.requests.length;
      failDurable();
      let dialogs = 0;
      const off = b.approvals.onChange(() => {
        if (b.approvals.list().length > 0) dialogs += 1;
      });
      expect(await b.action(hover, { tabId: 7, ref: 'e1', arguments: {} }, ctx('low-impact-mutation'))).toMatchObject({ ok: false, error: { code: 'ledger-unavailable' } });
      expect(dialogs).toBe(0);
      // Under the person's tab rule there is no dialog: the dispatch is what waits, and is never sent.
      policy.setRules([{ tabId: 7, origin: ORIGIN, kind: 'low-impact-mutation', action: 'allow', reason: 'fine' }]);
      expect(await b.action(hover, { tabId: 7, ref: 'e2', arguments: {} }, ctx('low-impact-mutation'))).toMatchObject({ ok: false, error: { code: 'ledger-unavailable' } });
      expect(link.invokes()).toHaveLength(0);
      expect(await b.listTabs(ctx('read'))).toMatchObject({ ok: false, error: { code: 'ledger-unavailable' } });
      expect(link.requests.length).toBe(readsBefore);
      off();
    } finally {
      b.dispose();
    }
  });

  it('twenty requests of one agent at once: while they wait for the disk none slips past the per-agent cap (4) or the shared one', async () => {
    const agentCtx = (): AgentContext => ({ actor: { kind: 'agent', name: 'flooder', tokenId: 'tok-1' }, agentToken: { id: 'tok-1', name: 'flooder' }, kind: 'low-impact-mutation' });
    const all = Array.from({ length: 20 }, (_, i) => broker.action(hover, { tabId: 7, ref: `e${i}`, arguments: {} }, agentCtx()));
    await pending(4);
    let most = 4;
    const off = broker.approvals.onChange(() => (most = Math.max(most, broker.approvals.list().length)));
    // The sixteen others are answered without the person: wait for them, in any order.
    const codes: string[] = [];
    await new Promise<void>((resolve) => {
      for (const p of all) {
        void p.then((a) => {
          codes.push(a.ok ? 'ok' : a.error.code);
          if (codes.length === 16) resolve();
        });
      }
    });
    expect(codes).toEqual(Array(16).fill('too-many-pending'));
    expect(most).toBe(4);
    for (const v of broker.approvals.list()) broker.decide(v.requestId, 'deny');
    const final = await Promise.all(all);
    off();
    expect(final.filter((a) => !a.ok && a.error.code === 'denied')).toHaveLength(4);
  });

  it('an outcome-unknown on the same subject that arises while the dispatch waits for the disk stops it: nothing is sent', async () => {
    const spy = durabilitySpy(ledger);
    let release: (() => void) | null = null;
    let holding = true;
    const sink = {
      ...spy.sink,
      durable: async () => {
        if (holding) await new Promise<void>((r) => (release = r));
        return spy.sink.durable();
      },
    };
    const b = new Broker({ link, receipts: sink, policy, approvalTimeoutMs: () => 60_000, linkGraceMs: 200 });
    try {
      holding = false;
      await b.listTabs(ctx('read'));
      // The person's tab rule: no dialog, so the first wait for the disk is the one right before the dispatch.
      policy.setRules([{ tabId: 7, origin: ORIGIN, kind: 'low-impact-mutation', action: 'allow', reason: 'fine' }]);
      holding = true;
      const p = b.action(hover, { tabId: 7, ref: 'e1', arguments: {} }, ctx('low-impact-mutation'));
      while (!release) await new Promise((r) => setImmediate(r));
      // Meanwhile an earlier request on the same subject in this document became outcome-unknown.
      b.discoveries.block('semantic', 7, 'doc-1', 'a'.repeat(64), 'earlier-request');
      holding = false;
      (release as () => void)();
      const a = await p;
      expect(a).toMatchObject({ ok: false, error: { code: 'outcome-unknown-pending' } });
      expect(link.invokes()).toHaveLength(0);
      expect(trailOf(ledger, a.requestId).map((x) => x.event)).toEqual(['requested', 'validated', 'approved', 'dispatched', 'refused']);
    } finally {
      b.dispose();
    }
  });
});
