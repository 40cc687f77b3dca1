/**
 * Broker lifecycle (docs/design.md, "Request lifecycle" and "Trust rules") against an
 * in-test ExtensionLink and a real Ledger in a temp dir.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { argumentsHash } from '../../src/shared/canonical';
import { nodeSha256 } from '../../src/main/core/digest';
import { LIMITS } from '../../src/shared/limits';
import { err, ok } from '../../src/shared/result';
import type { InvocationResult } from '../../src/shared/types';
import { Broker, type AgentContext, type InvokeRequest } from '../../src/main/core/broker';
import { ToolRouter } from '../../src/main/core/policy';
import type { Ledger } from '../../src/main/core/ledger';
import { FakeLink, makeDiscovery, sharedTab, tempLedger, trailOf, until, type ToolSpec } from './broker.fixtures';

const ADD_SCHEMA = {
  type: 'object',
  properties: { a: { type: 'number' }, b: { type: 'number' } },
  required: ['a', 'b'],
  additionalProperties: false,
};

const agent = (signal?: AbortSignal): AgentContext => ({ actor: { kind: 'agent', name: 'test-agent', version: '1.0' }, kind: 'mutation', signal });
const reader: AgentContext = { actor: { kind: 'agent', name: 'test-agent', version: '1.0' }, kind: 'read' };

let link: FakeLink;
let ledger: Ledger;
let cleanup: () => void;
let broker: Broker;

async function setup(tools: ToolSpec[], opts: { approvalTimeoutMs?: number; policy?: ToolRouter; dispatchTimeoutMs?: number } = {}) {
  link.tabs = [sharedTab(7)];
  link.discoveries.set(7, await makeDiscovery(7, tools));
  broker = new Broker({
    link,
    receipts: ledger,
    policy: opts.policy,
    approvalTimeoutMs: () => opts.approvalTimeoutMs ?? 60_000,
    dispatchTimeoutMs: opts.dispatchTimeoutMs,
    linkGraceMs: 200,
  });
  await broker.listTabs(reader);
  const d = await broker.discover({ tabId: 7 }, reader);
  expect(d.ok).toBe(true);
  return link.discoveries.get(7)!;
}

function req(name: string, hash: string, args: Record<string, unknown>, extra: Partial<InvokeRequest> = {}): InvokeRequest {
  return { tabId: 7, name, descriptorHash: hash, arguments: args, ...extra };
}

/** Wait until `n` approvals are pending (no sleeps: driven by the queue's change events). */
const pending = (n: number) => until((l) => broker.approvals.onChange(l), () => broker.approvals.list().length === n);

beforeEach(() => {
  link = new FakeLink();
  ({ ledger, cleanup } = tempLedger());
});
afterEach(() => {
  broker?.dispose();
  cleanup();
});

describe('broker: approve → dispatch → succeeded', () => {
  it('writes every step in order with matching hashes, and binds the grant', async () => {
    const d = await setup([{ name: 'add', inputSchema: ADD_SCHEMA }]);
    const tool = d.tools[0]!;
    const args = { a: 40, b: 2 };
    const p = broker.invoke(req('add', tool.descriptorHash, args), agent());
    await pending(1);
    const view = broker.approvals.list()[0]!;
    expect(view).toMatchObject({ subject: { toolName: 'add' }, origin: tool.origin, tab: { tabId: 7, title: 'Tab 7' }, arguments: args, agent: { name: 'test-agent' } });
    expect(broker.decide(view.requestId, 'approve').ok).toBe(true);
    const a = await p;
    expect(a.ok).toBe(true);
    if (!a.ok) return;
    expect(a.value.result).toBe('{"ok":true}');

    const wantArgs = await argumentsHash(args, nodeSha256);
    const trail = trailOf(ledger, a.requestId);
    expect(trail.map((r) => r.event)).toEqual(['requested', 'validated', 'approval-shown', 'approved', 'dispatched', 'succeeded']);
    expect(a.receiptId).toBe(trail.at(-1)!.id);
    for (const r of trail) {
      expect(r.requestId).toBe(a.requestId);
      expect(r.argumentsHash).toBe(wantArgs);
      expect(r.descriptorHash).toBe(tool.descriptorHash);
      expect(r.toolName).toBe('add');
      expect(r.tabId).toBe(7);
    }
    for (const r of trail.slice(1)) expect(r).toMatchObject({ origin: tool.origin, frameId: 0, documentId: 'doc-1' });
    expect(trail[3]!.actor).toEqual({ kind: 'person' });
    expect(trail[0]!.actor).toEqual({ kind: 'agent', name: 'test-agent', version: '1.0' });

    const [inv] = link.invokes();
    expect(inv!.arguments).toEqual(args);
    const g = inv!.grant;
    expect(g).toMatchObject({
      requestId: a.requestId,
      faculty: 'webmcp-invoke',
      operation: 'invoke',
      tabId: 7,
      frameId: 0,
      documentId: 'doc-1',
      origin: tool.origin,
      urlHash: tool.urlHash,
      subjectHash: tool.descriptorHash,
      argumentsHash: wantArgs,
    });
    expect(g.nonce).toMatch(/^[0-9a-f]{32}$/);
    expect(g.expiresAt - Date.now()).toBeGreaterThan(LIMITS.grantTtlMs - 5_000);
    expect(g.expiresAt - Date.now()).toBeLessThanOrEqual(LIMITS.grantTtlMs);
    expect(broker.approvals.list()).toEqual([]);
  });

  it('bounds and redacts the result', async () => {
    const d = await setup([{ name: 'dump' }]);
    const secret = 'sk-live_4eC39HqLyjWDarjtT1zdp7dc4eC39HqLyjWDarjtT1zdp7dc';
    link.invokeHandler = async () => ok({ outcome: 'succeeded', result: `{"password":"hunter2-${secret}","pad":"${'x'.repeat(LIMITS.maxResultBytes)}"}` });
    const p = broker.invoke(req('dump', d.tools[0]!.descriptorHash, {}), agent());
    await pending(1);
    broker.decide(broker.approvals.list()[0]!.requestId, 'approve');
    const a = await p;
    expect(a.ok).toBe(true);
    if (!a.ok) return;
    expect(a.value.truncated).toBe(true);
    expect(a.value.redacted).toBe(true);
    expect(Buffer.byteLength(a.value.result!, 'utf8')).toBeLessThanOrEqual(LIMITS.maxResultBytes);
    expect(a.value.result).not.toContain('hunter2');
  });
});

describe('broker: the person says no, or nothing', () => {
  it('deny carries the reason to the agent, and nothing is dispatched', async () => {
    const d = await setup([{ name: 'add', inputSchema: ADD_SCHEMA }]);
    const p = broker.invoke(req('add', d.tools[0]!.descriptorHash, { a: 1, b: 2 }), agent());
    await pending(1);
    broker.decide(broker.approvals.list()[0]!.requestId, 'deny', 'not on this account');
    const a = await p;
    expect(a.ok).toBe(false);
    if (a.ok) return;
    expect(a.error.code).toBe('denied');
    expect(a.error.message).toContain('not on this account');
    const trail = trailOf(ledger, a.requestId);
    expect(trail.map((r) => r.event)).toEqual(['requested', 'validated', 'approval-shown', 'denied']);
    expect(trail[3]!.detail).toEqual({ reason: 'not on this account' });
    expect(link.invokes()).toEqual([]);
  });

  it('expires: receipt, error, removed from the UI, and late decisions are errors', async () => {
    const d = await setup([{ name: 'add', inputSchema: ADD_SCHEMA }], { approvalTimeoutMs: 150 });
    const a = await broker.invoke(req('add', d.tools[0]!.descriptorHash, { a: 1, b: 2 }), agent());
    expect(a.ok).toBe(false);
    if (a.ok) return;
    expect(a.error.code).toBe('expired');
    expect(trailOf(ledger, a.requestId).map((r) => r.event)).toEqual(['requested', 'validated', 'approval-shown', 'expired']);
    expect(broker.approvals.list()).toEqual([]);
    const late = broker.decide(a.requestId, 'approve');
    expect(late.ok).toBe(false);
    if (!late.ok) expect(late.error.code).toBe('unknown-request');
    expect(link.invokes()).toEqual([]);
  });
});

describe('broker: validation before the person is asked', () => {
  it('invalid arguments: failing paths to the agent, no approval created', async () => {
    const d = await setup([{ name: 'add', inputSchema: ADD_SCHEMA }]);
    let shown = 0;
    broker.approvals.onChange(() => shown++);
    const a = await broker.invoke(req('add', d.tools[0]!.descriptorHash, { a: 'x', c: 1 }), agent());
    expect(a.ok).toBe(false);
    if (a.ok) return;
    expect(a.error.code).toBe('invalid-arguments');
    const issues = (a.error.detail as { issues: Array<{ instancePath: string; message: string }> }).issues;
    expect(issues.map((i) => i.instancePath)).toEqual(expect.arrayContaining(['/a', '']));
    expect(issues.some((i) => /required/.test(i.message) && /b/.test(i.message))).toBe(true);
    expect(shown).toBe(0);
    expect(trailOf(ledger, a.requestId).map((r) => r.event)).toEqual(['requested', 'refused']);
  });

  it('refuses oversized and non-object arguments', async () => {
    const d = await setup([{ name: 'echo' }]);
    const big = await broker.invoke(req('echo', d.tools[0]!.descriptorHash, { s: 'x'.repeat(LIMITS.maxArgumentsBytes) }), agent());
    expect(!big.ok && big.error.code).toBe('arguments-too-large');
    const arr = await broker.invoke(req('echo', d.tools[0]!.descriptorHash, [1] as unknown as Record<string, unknown>), agent());
    expect(!arr.ok && arr.error.code).toBe('invalid-arguments');
  });

  it('hostile schemas are refused cleanly (never a crash), and the console keeps working', async () => {
    let deep: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 100; i++) deep = { type: 'object', properties: { x: deep } };
    const huge = { type: 'object', properties: Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`p${i}`, { type: 'string', description: 'y'.repeat(20) }])) };
    const d = await setup([
      { name: 'dangling', inputSchema: { type: 'object', properties: { a: { $ref: '#/$defs/nowhere' } } } },
      { name: 'remote', inputSchema: { $ref: 'https://evil.example/schema.json' } },
      { name: 'deep', inputSchema: deep },
      { name: 'huge', inputSchema: huge },
      { name: 'unknownkw', inputSchema: { type: 'object', frobnicate: true } },
      { name: 'redos', inputSchema: { type: 'object', properties: { s: { type: 'string', pattern: '^(a+)+$' } } } },
      { name: 'add', inputSchema: ADD_SCHEMA },
    ]);
    const hash = (n: string) => d.tools.find((t) => t.name === n)!.descriptorHash;
    for (const [name, args] of [
      ['dangling', { a: 1 }],
      ['remote', {}],
      ['deep', {}],
      ['huge', {}],
      ['unknownkw', {}],
      ['redos', { s: `${'a'.repeat(40)}!` }],
    ] as const) {
      const a = await broker.invoke(req(name, hash(name), args), agent());
      expect(a.ok, name).toBe(false);
      if (!a.ok) expect(a.error.code, `${name}: ${a.error.message}`).toBe('schema-rejected');
    }
    expect(broker.approvals.list()).toEqual([]);
    // Still alive: a good tool goes to approval.
    const p = broker.invoke(req('add', hash('add'), { a: 1, b: 1 }), agent());
    await pending(1);
    broker.decide(broker.approvals.list()[0]!.requestId, 'approve');
    expect((await p).ok).toBe(true);
  });
});

describe('broker: descriptors come from the latest discovery', () => {
  it('unknown or changed descriptor → refused, telling the agent to discover again', async () => {
    const d = await setup([{ name: 'add', inputSchema: ADD_SCHEMA }]);
    const wrong = await broker.invoke(req('add', 'a'.repeat(64), { a: 1, b: 2 }), agent());
    expect(!wrong.ok && wrong.error.code).toBe('descriptor-unknown');
    expect(!wrong.ok && wrong.error.message).toMatch(/webmcp_discover/);
    const other = await broker.invoke({ ...req('add', d.tools[0]!.descriptorHash, { a: 1, b: 2 }), tabId: 99 }, agent());
    expect(!other.ok && other.error.message).toMatch(/discover/);
  });

  it('a navigation drops the discovery and refuses a pending approval for the old document with navigated', async () => {
    const d = await setup([{ name: 'add', inputSchema: ADD_SCHEMA }]);
    const p = broker.invoke(req('add', d.tools[0]!.descriptorHash, { a: 1, b: 2 }), agent());
    await pending(1);
    link.emit({ kind: 'navigated', tabId: 7, frameId: 0, documentId: 'doc-2', url: 'http://127.0.0.1:8765/next' });
    const a = await p;
    expect(!a.ok && a.error.code).toBe('navigated');
    const last = trailOf(ledger, a.requestId).at(-1)!;
    expect(last.event).toBe('refused');
    expect(last.detail).toMatchObject({ code: 'navigated' });
    expect(broker.approvals.list()).toHaveLength(0);
    const again = await broker.invoke(req('add', d.tools[0]!.descriptorHash, { a: 1, b: 2 }), agent());
    expect(!again.ok && again.error.code).toBe('descriptor-unknown');
  });

  it('accepts the documentId discovery gave; another document is refused as navigated before the person is asked', async () => {
    // A short expiry: without the check the stale call would wait for the person, then expire (and fail this test quickly).
    const d = await setup([{ name: 'add', inputSchema: ADD_SCHEMA }], { approvalTimeoutMs: 2_000 });
    const tool = d.tools[0]!;
    // Same page, reloaded and discovered again: the descriptor (hence its hash) is unchanged, the document is new.
    link.discoveries.set(7, await makeDiscovery(7, [{ name: 'add', inputSchema: ADD_SCHEMA }], 'doc-2'));
    expect((await broker.discover({ tabId: 7 }, reader)).ok).toBe(true);
    const stale = await broker.invoke(req('add', tool.descriptorHash, { a: 1, b: 2 }, { documentId: tool.documentId }), agent());
    expect(!stale.ok && stale.error.code).toBe('navigated');
    expect(!stale.ok && stale.error.message).toMatch(/new document.*webmcp_discover \{"tabId": 7\}/s);
    expect(broker.approvals.list()).toEqual([]);
    expect(trailOf(ledger, stale.requestId).map((r) => r.event)).toEqual(['requested', 'refused']);
    expect(trailOf(ledger, stale.requestId).at(-1)!.detail).toMatchObject({ code: 'navigated' });

    const p = broker.invoke(req('add', tool.descriptorHash, { a: 1, b: 2 }, { documentId: 'doc-2' }), agent());
    await pending(1);
    broker.decide(broker.approvals.list()[0]!.requestId, 'approve');
    const a = await p;
    expect(a.ok).toBe(true);
    expect(link.invokes()[0]!).toMatchObject({ target: { documentId: 'doc-2' }, grant: { documentId: 'doc-2' } });
  });

  it('an extension refusal for a changed descriptor asks for rediscovery', async () => {
    const d = await setup([{ name: 'add', inputSchema: ADD_SCHEMA }]);
    link.invokeHandler = async () => ok({ outcome: 'refused', refusal: 'descriptor-changed' } satisfies InvocationResult);
    const p = broker.invoke(req('add', d.tools[0]!.descriptorHash, { a: 1, b: 2 }), agent());
    await pending(1);
    broker.decide(broker.approvals.list()[0]!.requestId, 'approve');
    const a = await p;
    expect(!a.ok && a.error.code).toBe('descriptor-changed');
    expect(!a.ok && a.error.message).toMatch(/webmcp_discover/);
    expect(trailOf(ledger, a.requestId).at(-1)!.event).toBe('refused');
  });
});

describe('broker: policy', () => {
  it('readOnlyHint:true still needs approval for invoke', async () => {
    const d = await setup([{ name: 'peek', annotations: { readOnlyHint: true, untrustedContentHint: false, consequentialHint: false, debugging: false } }]);
    const p = broker.invoke(req('peek', d.tools[0]!.descriptorHash, {}), agent());
    await pending(1);
    expect(link.invokes()).toEqual([]);
    expect(broker.approvals.list()[0]!.subject.annotations).toMatchObject({ readOnlyHint: true });
    broker.decide(broker.approvals.list()[0]!.requestId, 'approve');
    expect((await p).ok).toBe(true);
  });

  it('a local "allow" rule cannot skip review for invoke, but a "deny" rule refuses', async () => {
    const router = new ToolRouter([
      { faculty: 'webmcp-invoke', tool: 'peek', action: 'allow' },
      { faculty: 'webmcp-invoke', tool: 'wipe', action: 'deny', reason: 'never wipe' },
    ]);
    expect(router.decide({ faculty: 'webmcp-invoke', kind: 'read', toolName: 'peek', annotations: { readOnlyHint: true } }).action).toBe('review');
    expect(router.decide({ faculty: 'list-tabs', kind: 'read' }).action).toBe('allow');
    const d = await setup([{ name: 'peek' }, { name: 'wipe' }], { policy: router });
    const denied = await broker.invoke(req('wipe', d.tools[1]!.descriptorHash, {}), agent());
    expect(!denied.ok && denied.error.code).toBe('policy-denied');
    expect(!denied.ok && denied.error.message).toContain('never wipe');
    const p = broker.invoke(req('peek', d.tools[0]!.descriptorHash, {}), agent());
    await pending(1);
    broker.decide(broker.approvals.list()[0]!.requestId, 'approve');
    expect((await p).ok).toBe(true);
  });
});

describe('broker: one approval, one request', () => {
  it('queues concurrent requests; approving one does not release the other; no reuse', async () => {
    const d = await setup([{ name: 'add', inputSchema: ADD_SCHEMA }]);
    const h = d.tools[0]!.descriptorHash;
    const p1 = broker.invoke(req('add', h, { a: 1, b: 1 }), agent());
    const p2 = broker.invoke(req('add', h, { a: 2, b: 2 }), agent());
    await pending(2);
    // Which request reaches the queue first is not fixed (each hashes its arguments first): match by arguments.
    const v1 = broker.approvals.list().find((v) => v.arguments.a === 1);
    const v2 = broker.approvals.list().find((v) => v.arguments.a === 2);
    expect(v1!.requestId).not.toBe(v2!.requestId);
    expect(v1!.argumentsHash).not.toBe(v2!.argumentsHash);
    broker.decide(v1!.requestId, 'approve');
    const a1 = await p1;
    expect(a1.ok).toBe(true);
    // The second is still waiting; approving the first again is an error.
    expect(broker.approvals.list().map((v) => v.requestId)).toEqual([v2!.requestId]);
    expect(link.invokes()).toHaveLength(1);
    const again = broker.decide(v1!.requestId, 'approve');
    expect(!again.ok && again.error.code).toBe('unknown-request');
    expect(link.invokes()).toHaveLength(1);
    broker.decide(v2!.requestId, 'approve');
    expect((await p2).ok).toBe(true);
    const [g1, g2] = link.grants;
    expect(g1!.nonce).not.toBe(g2!.nonce);
    expect(g1!.requestId).not.toBe(g2!.requestId);
    expect(broker.decide('no-such-request', 'deny').ok).toBe(false);
  });
});

describe('broker: flooding', () => {
  it('refuses beyond the bound of waiting approvals, without showing them', async () => {
    await setup([{ name: 'add', inputSchema: ADD_SCHEMA }]);
    broker.dispose();
    broker = new Broker({ link, receipts: ledger, maxPendingApprovals: 2, approvalTimeoutMs: () => 60_000 });
    await broker.listTabs(reader);
    await broker.discover({ tabId: 7 }, reader);
    const h = link.discoveries.get(7)!.tools[0]!.descriptorHash;
    const waiting = [broker.invoke(req('add', h, { a: 1, b: 1 }), agent()), broker.invoke(req('add', h, { a: 2, b: 2 }), agent())];
    await pending(2);
    const third = await broker.invoke(req('add', h, { a: 3, b: 3 }), agent());
    expect(!third.ok && third.error.code).toBe('too-many-pending');
    expect(broker.approvals.list()).toHaveLength(2);
    for (const v of broker.approvals.list()) broker.decide(v.requestId, 'deny');
    await Promise.all(waiting);
  });
});

describe('broker: outcome-unknown', () => {
  for (const [label, handler] of [
    ['the extension reports it', async () => ok({ outcome: 'outcome-unknown' } satisfies InvocationResult)],
    ['the link times out', async () => err('timeout', 'no answer')],
    ['the link drops mid-dispatch', async () => err('link-down', 'dropped')],
    ['the extension reports it cancelled a dispatched call', async () => ok({ outcome: 'cancelled', elapsedMs: 5 } satisfies InvocationResult)],
    ['the extension sends a malformed answer', async () => ok({ outcome: 'maybe' } as unknown as InvocationResult)],
  ] as const) {
    it(`blocks the tool in that document until the tab is discovered again (${label})`, async () => {
      const d = await setup([{ name: 'pay' }]);
      const h = d.tools[0]!.descriptorHash;
      link.invokeHandler = handler;
      const p = broker.invoke(req('pay', h, {}), agent());
      await pending(1);
      broker.decide(broker.approvals.list()[0]!.requestId, 'approve');
      const a = await p;
      expect(!a.ok && a.error.code).toBe('outcome-unknown');
      expect(!a.ok && a.error.message).toMatch(/webmcp_discover/);
      expect(trailOf(ledger, a.requestId).at(-1)!.event).toBe('outcome-unknown');

      const blocked = await broker.invoke(req('pay', h, {}), agent());
      expect(!blocked.ok && blocked.error.code).toBe('outcome-unknown-pending');
      expect(!blocked.ok && blocked.error.message).toMatch(/webmcp_discover \{"tabId": 7\}/);

      expect((await broker.discover({ tabId: 7 }, reader)).ok).toBe(true);
      link.invokeHandler = async () => ok({ outcome: 'succeeded', result: 'null' });
      const p2 = broker.invoke(req('pay', h, {}), agent());
      await pending(1);
      broker.decide(broker.approvals.list()[0]!.requestId, 'approve');
      expect((await p2).ok).toBe(true);
    });
  }
});

describe('broker: cancellation (MCP notifications/cancelled → AbortSignal)', () => {
  it('before dispatch: cancels the pending approval, removes it from the UI, receipt cancelled', async () => {
    const d = await setup([{ name: 'add', inputSchema: ADD_SCHEMA }]);
    const ctl = new AbortController();
    const p = broker.invoke(req('add', d.tools[0]!.descriptorHash, { a: 1, b: 2 }), agent(ctl.signal));
    await pending(1);
    const id = broker.approvals.list()[0]!.requestId;
    ctl.abort();
    const a = await p;
    expect(!a.ok && a.error.code).toBe('cancelled');
    expect(broker.approvals.list()).toEqual([]);
    expect(trailOf(ledger, a.requestId).map((r) => r.event)).toEqual(['requested', 'validated', 'approval-shown', 'cancelled']);
    expect(!broker.decide(id, 'approve').ok).toBe(true);
    expect(link.invokes()).toEqual([]);
  });

  it('during dispatch: aborts the link request (the link cancels it in the extension), records outcome-unknown and blocks', async () => {
    const d = await setup([{ name: 'pay' }]);
    link.invokeHandler = () => new Promise(() => undefined); // the page never settles
    const ctl = new AbortController();
    const p = broker.invoke(req('pay', d.tools[0]!.descriptorHash, {}), agent(ctl.signal));
    await pending(1);
    const reached = link.nextInvoke();
    broker.decide(broker.approvals.list()[0]!.requestId, 'approve');
    await reached;
    ctl.abort();
    const a = await p;
    expect(!a.ok && a.error.code).toBe('outcome-unknown');
    const trail = trailOf(ledger, a.requestId);
    expect(trail.map((r) => r.event)).toEqual(['requested', 'validated', 'approval-shown', 'approved', 'dispatched', 'outcome-unknown']);
    expect(trail.at(-1)!.detail).toMatchObject({ reason: 'cancelled-during-dispatch' });
    expect(link.aborted).toEqual([a.requestId]);
    const blocked = await broker.invoke(req('pay', d.tools[0]!.descriptorHash, {}), agent());
    expect(!blocked.ok && blocked.error.code).toBe('outcome-unknown-pending');
  });
});

describe('broker: operationId', () => {
  it('is recorded and shown but never injected into the arguments', async () => {
    const d = await setup([{ name: 'order', inputSchema: { type: 'object', properties: { item: { type: 'string' }, operationId: { type: 'string' } }, additionalProperties: false } }]);
    const args = { item: 'tea' };
    const p = broker.invoke(req('order', d.tools[0]!.descriptorHash, args, { operationId: 'op-123' }), agent());
    await pending(1);
    const view = broker.approvals.list()[0]!;
    expect(view.operationId).toBe('op-123');
    expect(view.arguments).toEqual(args);
    broker.decide(view.requestId, 'approve');
    const a = await p;
    expect(a.ok).toBe(true);
    expect(link.invokes()[0]!.arguments).toEqual({ item: 'tea' });
    expect(link.invokes()[0]!.grant.argumentsHash).toBe(await argumentsHash(args, nodeSha256));
    const trail = trailOf(ledger, a.requestId);
    expect(trail[0]!.detail).toMatchObject({ operationId: 'op-123' });
    expect(trail.find((r) => r.event === 'approval-shown')!.detail).toMatchObject({ operationId: 'op-123' });
  });
});

describe('broker: link and pairing', () => {
  it('refuses before asking the person when the extension is not connected', async () => {
    const d = await setup([{ name: 'add', inputSchema: ADD_SCHEMA }]);
    link.state = 'no-extension';
    const a = await broker.invoke(req('add', d.tools[0]!.descriptorHash, { a: 1, b: 2 }), agent());
    expect(!a.ok && a.error.code).toBe('link-down');
    expect(broker.approvals.list()).toEqual([]);
  });

  it('no grant without a pairing key: refused, nothing dispatched', async () => {
    const d = await setup([{ name: 'add', inputSchema: ADD_SCHEMA }]);
    link.signFails = true;
    const p = broker.invoke(req('add', d.tools[0]!.descriptorHash, { a: 1, b: 2 }), agent());
    await pending(1);
    broker.decide(broker.approvals.list()[0]!.requestId, 'approve');
    const a = await p;
    expect(!a.ok && a.error.code).toBe('grant-unavailable');
    expect(link.invokes()).toEqual([]);
  });

  it('unsharing a tab cancels its pending approvals', async () => {
    const d = await setup([{ name: 'add', inputSchema: ADD_SCHEMA }]);
    const p = broker.invoke(req('add', d.tools[0]!.descriptorHash, { a: 1, b: 2 }), agent());
    await pending(1);
    link.emit({ kind: 'tabs-changed', tabs: [] });
    const a = await p;
    expect(!a.ok && a.error.code).toBe('cancelled');
    expect(broker.latestDiscovery(7)).toBeUndefined();
  });
});

describe("discovery marks a tool whose schema the console cannot use (issue 8 item 3), and Chromium's own schemas are usable", () => {
  const TIME_SCHEMA = { type: 'object', properties: { at: { type: 'string', format: '^([01][0-9]|2[0-3]):[0-5][0-9]$' } }, required: ['at'] };
  const BROKEN_SCHEMA = { type: 'object', properties: { a: { $ref: '#/$defs/nowhere' } } };

  it('unusable with the reason at discovery, and the call is refused schema-rejected before any dialog', async () => {
    const d = await setup([{ name: 'at_time', inputSchema: TIME_SCHEMA }, { name: 'broken', inputSchema: BROKEN_SCHEMA }]);
    const seen = broker.latestDiscovery(7)!;
    expect(seen.tools.find((t) => t.name === 'at_time')?.unusable).toBeUndefined();
    expect(seen.tools.find((t) => t.name === 'broken')?.unusable).toMatch(/^schema-rejected: the inputSchema cannot be compiled/);
    const broken = d.tools.find((t) => t.name === 'broken')!;
    const r = await broker.invoke(req('broken', broken.descriptorHash, { a: 1 }), agent());
    expect(r).toMatchObject({ ok: false, error: { code: 'schema-rejected' } });
    expect(broker.approvals.list()).toEqual([]);
    // The time tool validates against Chromium's pattern: a bad time never reaches the person.
    const time = d.tools.find((t) => t.name === 'at_time')!;
    expect(await broker.invoke(req('at_time', time.descriptorHash, { at: '7pm' }), agent())).toMatchObject({ ok: false, error: { code: 'invalid-arguments' } });
    const p = broker.invoke(req('at_time', time.descriptorHash, { at: '19:00' }), agent());
    await pending(1);
    broker.decide(broker.approvals.list()[0]!.requestId, 'approve');
    expect(await p).toMatchObject({ ok: true });
  });
});

describe('resultBytes is the size the page gave, before any cut (issue 8 item 5)', () => {
  it("records the extension's size of the whole result, and never less than what reached the console", async () => {
    const d = await setup([{ name: 'add', inputSchema: ADD_SCHEMA }]);
    const run = async (result: string, resultBytes: number | undefined) => {
      link.invokeHandler = async () => ({ ok: true, value: { outcome: 'succeeded', result, truncated: true, elapsedMs: 1, ...(resultBytes !== undefined ? { resultBytes } : {}) } });
      const p = broker.invoke(req('add', d.tools[0]!.descriptorHash, { a: 1, b: 2 }), agent());
      await pending(1);
      broker.decide(broker.approvals.list()[0]!.requestId, 'approve');
      const a = await p;
      return trailOf(ledger, a.requestId).find((r) => r.event === 'succeeded')!.detail as { resultBytes: number };
    };
    expect((await run('{"cut":"here', 5_242_900)).resultBytes).toBe(5_242_900);
    // A size smaller than what arrived is not believed.
    expect((await run('x'.repeat(100), 3)).resultBytes).toBe(100);
    expect((await run('abc', undefined)).resultBytes).toBe(3);
  });
});
