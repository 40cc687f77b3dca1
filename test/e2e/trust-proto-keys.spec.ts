/**
 * Trust rules where a real browser is the point: the hostile page
 * resources/hostile/proto-keys.html (schemas, arguments and results with OWN
 * keys named __proto__, constructor, prototype, toString, hasOwnProperty,
 * exactly as Chromium 156's getTools() reports them) driven over the REAL link
 * (console core → Bridge → native host → extension → page) through the
 * broker, the way an agent's call goes. The schema the person reviews must be
 * the one that validates the arguments; an inherited property must not stand
 * in for a required own one; own __proto__ arguments reach the page as data;
 * nothing is polluted in the console or the page. docs/trust-rules.md maps it.
 */
import type { DiscoveryResult } from '../../src/shared/types';
import type { AgentContext } from '../../src/main/core/broker/index';
import { test, expect, until } from './support/link-fixture';

const AGENT: AgentContext = { actor: { kind: 'agent', name: 'trust-e2e' }, kind: 'read' };
const MUTATE: AgentContext = { ...AGENT, kind: 'mutation' };
const own = (o: unknown, k: string) => !!o && typeof o === 'object' && Object.prototype.hasOwnProperty.call(o, k);

test('prototype-named keys from a real page: validated as own keys, shown and dispatched as data, nothing polluted', async ({ world }) => {
  const { page, tabId } = await world.openShared(world.demo.url('proto-keys'));
  const d = await world.core.broker.discover({ tabId }, AGENT);
  if (!d.ok) throw new Error(d.error.message);
  const tool = (name: string) => {
    const t = (d.value as DiscoveryResult).tools.find((x) => x.name === name);
    if (!t) throw new Error(`no ${name}`);
    return t;
  };
  const protoKeys = tool('proto_keys');
  // Not vacuous: the schema crossed Chromium, the content script, native messaging and the bridge with its own keys intact.
  const props = (protoKeys.inputSchema as { properties: object }).properties;
  expect(own(props, '__proto__')).toBe(true);
  expect(Object.keys(props)).toEqual(['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty']);

  // 1. `required: ["__proto__", "constructor"]` is not met by Object.prototype: refused before the person is asked.
  const missing = await world.core.broker.invoke({ tabId, name: 'proto_keys', descriptorHash: protoKeys.descriptorHash, arguments: JSON.parse('{"constructor":{}}') }, MUTATE);
  expect(missing.ok).toBe(false);
  if (!missing.ok) {
    expect(missing.error.code).toBe('invalid-arguments');
    expect(JSON.stringify(missing.error.detail)).toContain("__proto__");
  }
  expect(world.core.broker.approvals.list()).toEqual([]);

  // 2. Own __proto__ / constructor arguments: shown as data, approved, received by the page as own keys.
  const args = JSON.parse('{"__proto__":{"isAdmin":true},"constructor":{"prototype":{"polluted":true}},"toString":"x"}') as Record<string, unknown>;
  const pending = world.core.broker.invoke({ tabId, name: 'proto_keys', descriptorHash: protoKeys.descriptorHash, arguments: args }, MUTATE);
  const view = await until(() => world.core.broker.approvals.list().find((v) => v.subject.toolName === 'proto_keys'), 'the approval');
  expect(Object.keys(view.arguments)).toEqual(['__proto__', 'constructor', 'toString']);
  expect(own(view.subject.inputSchema && (view.subject.inputSchema as { properties: object }).properties, '__proto__')).toBe(true);
  expect(await world.core.api.decideApproval({ requestId: view.requestId, decision: 'approve' })).toEqual({ ok: true, value: null });
  const r = await pending;
  expect(r.ok).toBe(true);
  if (!r.ok) return;
  expect(JSON.parse(r.value.result ?? 'null')).toEqual({
    ownKeys: ['__proto__', 'constructor', 'toString'],
    ownProto: true,
    prototypeIsObjectPrototype: true,
    constructorType: 'object',
    pagePolluted: false,
  });
  expect(await world.execCount(page, 'proto_keys')).toBe(1);

  // 3. A result carrying __proto__ / constructor.prototype keys comes back as text, labelled, and pollutes nothing.
  const protoResult = tool('proto_result');
  const p2 = world.core.broker.invoke({ tabId, name: 'proto_result', descriptorHash: protoResult.descriptorHash, arguments: {} }, MUTATE);
  const v2 = await until(() => world.core.broker.approvals.list().find((v) => v.subject.toolName === 'proto_result'), 'the second approval');
  await world.core.api.decideApproval({ requestId: v2.requestId, decision: 'approve' });
  const r2 = await p2;
  expect(r2.ok).toBe(true);
  if (r2.ok) expect(own(JSON.parse(r2.value.result ?? 'null'), '__proto__')).toBe(true);

  // 4. A schema that itself carries own __proto__ / constructor keys: they are no keywords (ajv passes over
  // them), so `type: "object"` decides; compiling it pollutes nothing, and the person sees it as written.
  const protoSchema = tool('proto_schema');
  const badType = await world.core.broker.invoke({ tabId, name: 'proto_schema', descriptorHash: protoSchema.descriptorHash, arguments: JSON.parse('{"name":7}') }, MUTATE);
  expect(!badType.ok && badType.error.code).toBe('invalid-arguments'); // properties.name still applies
  const p3 = world.core.broker.invoke({ tabId, name: 'proto_schema', descriptorHash: protoSchema.descriptorHash, arguments: { name: 'x' } }, MUTATE);
  const v3 = await until(() => world.core.broker.approvals.list().find((v) => v.subject.toolName === 'proto_schema'), 'the third approval');
  expect(own(v3.subject.inputSchema, '__proto__')).toBe(true);
  expect(Object.getPrototypeOf(v3.subject.inputSchema)).toBe(Object.prototype);
  await world.core.api.decideApproval({ requestId: v3.requestId, decision: 'deny', reason: 'not needed' });
  const r3 = await p3;
  expect(!r3.ok && r3.error.code).toBe('denied');
  expect(await world.execCount(page, 'proto_schema')).toBe(0);

  // Nothing polluted in the console, every step has a receipt, and the ledger verifies.
  const plain = {} as Record<string, unknown>;
  expect([plain.isAdmin, plain.polluted, plain.type]).toEqual([undefined, undefined, undefined]);
  expect(world.receipts({ requestId: missing.requestId }).map((x) => x.event).reverse()).toEqual(['requested', 'refused']);
  expect(world.receipts({ requestId: r.requestId }).map((x) => x.event).reverse()).toEqual(['requested', 'validated', 'approval-shown', 'approved', 'dispatched', 'succeeded']);
  expect(world.receipts({ requestId: r3.requestId }).map((x) => x.event).reverse()).toEqual(['requested', 'validated', 'approval-shown', 'denied']);
  expect(world.core.ledger.verify().ok).toBe(true);
});
