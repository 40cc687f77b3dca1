/**
 * The console's policy methods on the real core (createConsoleCore with a
 * FakeLink standing in for the extension only): listPolicyRules, addPolicyRule,
 * removePolicyRule. Each change is persisted to settings.json, receipted
 * (`policy-changed`, the person as actor), pushed to the renderer, and applied
 * to the very next decision without a restart; a tab rule ends with its share;
 * malformed rules are refused with a `refused` receipt and change nothing.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ConsoleEvent } from '../../src/shared/ipc';
import type { PolicyRule } from '../../src/shared/policy';
import type { SharedTab } from '../../src/shared/types';
import type { AgentContext } from '../../src/main/core/broker';
import { createConsoleCore, type ConsoleCore } from '../../src/main/core';
import { SettingsError, SettingsStore } from '../../src/main/core/settings';
import { FakeLink, ORIGIN, makeDiscovery, sharedTab, until } from './broker.fixtures';

let dir: string;
let link: FakeLink;
let core: ConsoleCore;
let events: ConsoleEvent[];

const reader: AgentContext = { actor: { kind: 'agent', name: 'policy-test' }, kind: 'read' };
const writer: AgentContext = { actor: { kind: 'agent', name: 'policy-test' }, kind: 'mutation' };
const onDisk = (): PolicyRule[] => JSON.parse(readFileSync(join(dir, 'settings.json'), 'utf8')).policyRules;
const lastRulesEvent = () => events.filter((e) => e.kind === 'policy-rules').at(-1);
const changes = () => core.ledger.query({ event: 'policy-changed', limit: 500 }).receipts;
const scrollOn = (tabId: number, origin = ORIGIN) => core.broker.policy.decide({ faculty: 'semantic', operation: 'scroll', kind: 'low-impact-mutation', origin, tabId });

async function open(): Promise<void> {
  core = createConsoleCore({ dataDir: dir, mcpPort: 0, link, logger: { info: () => {}, warn: () => {} } });
  events = [];
  core.onEvent((e) => events.push(e));
  await core.start();
  // start() asks the (connected) FakeLink for its shared tabs; wait until the broker has them.
  await until((l) => core.onEvent(l), () => core.broker.getSharedTabs().length === link.tabs.length);
}

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'echo-core-policy-'));
  link = new FakeLink();
  link.tabs = [sharedTab(1)];
  link.discoveries.set(1, await makeDiscovery(1, [{ name: 'buy', annotations: { readOnlyHint: true, untrustedContentHint: false, consequentialHint: false, debugging: false } }]));
  await open();
});

afterEach(async () => {
  await core.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('policy rules from the console', () => {
  it('add and remove: persisted, receipted with the person as actor, pushed, and applied to the very next decision', async () => {
    expect(await core.api.listPolicyRules()).toEqual({ ok: true, value: [] });
    expect((await core.broker.discover({ tabId: 1 }, reader)).ok).toBe(true);

    const rule: PolicyRule = { faculty: 'webmcp-discover', origin: ORIGIN, action: 'deny', reason: 'not this shop' };
    const added = await core.api.addPolicyRule({ rule });
    expect(added).toEqual({ ok: true, value: [rule] });
    expect(onDisk()).toEqual([rule]);
    expect(changes()).toHaveLength(1);
    expect(changes()[0]).toMatchObject({ faculty: 'console', actor: { kind: 'person' }, origin: ORIGIN, tabId: null, detail: { change: 'added', index: 0, rule } });
    expect(events).toContainEqual({ kind: 'policy-rules', rules: [rule] });

    // No restart: the agent's next discovery is denied by the new rule.
    const denied = await core.broker.discover({ tabId: 1 }, reader);
    expect(!denied.ok && denied.error.code).toBe('policy-denied');
    expect(!denied.ok && denied.error.message).toContain('not this shop');

    const removed = await core.api.removePolicyRule({ index: 0, rule });
    expect(removed).toEqual({ ok: true, value: [] });
    expect(onDisk()).toEqual([]);
    expect(changes()[0]).toMatchObject({ actor: { kind: 'person' }, detail: { change: 'removed', index: 0, rule } });
    expect(lastRulesEvent()).toEqual({ kind: 'policy-rules', rules: [] });
    expect((await core.broker.discover({ tabId: 1 }, reader)).ok).toBe(true);
    expect(core.ledger.verify().ok).toBe(true);
  });

  it('rules survive a restart of the core and apply from the first decision', async () => {
    const rule: PolicyRule = { faculty: 'list-tabs', action: 'deny' };
    expect((await core.api.addPolicyRule({ rule })).ok).toBe(true);
    await core.stop();
    await open();
    expect(await core.api.listPolicyRules()).toEqual({ ok: true, value: [rule] });
    const tabs = await core.broker.listTabs(reader);
    expect(!tabs.ok && tabs.error.code).toBe('policy-denied');
  });

  it('an allow-everything rule added from the console still leaves every invocation to the person', async () => {
    expect((await core.api.addPolicyRule({ rule: { faculty: '*', kind: '*', origin: '*', tool: '*', action: 'allow' } })).ok).toBe(true);
    expect((await core.api.addPolicyRule({ rule: { tabId: 1, faculty: 'webmcp-invoke', tool: 'buy', action: 'allow' } })).ok).toBe(true);
    const d = await core.broker.discover({ tabId: 1 }, reader);
    if (!d.ok) throw new Error(d.error.message);
    const buy = d.value.tools.find((t) => t.name === 'buy')!;
    const pending = core.broker.invoke({ tabId: 1, name: 'buy', descriptorHash: buy.descriptorHash, arguments: {} }, writer);
    await until((l) => core.broker.approvals.onChange(l), () => core.broker.approvals.list().length === 1);
    expect(link.requests.some((r) => r.op === 'dispatch')).toBe(false);
    const [view] = core.broker.approvals.list();
    expect((await core.api.decideApproval({ requestId: view!.requestId, decision: 'deny' })).ok).toBe(true);
    const r = await pending;
    expect(!r.ok && r.error.code).toBe('denied');
    expect(link.requests.some((q) => q.op === 'dispatch')).toBe(false);
  });

  it('removing a rule that is no longer at that index is refused and removes nothing', async () => {
    const a: PolicyRule = { origin: 'https://a.example', action: 'deny' };
    const b: PolicyRule = { origin: 'https://b.example', action: 'deny' };
    await core.api.addPolicyRule({ rule: a });
    await core.api.addPolicyRule({ rule: b });
    const r = await core.api.removePolicyRule({ index: 0, rule: b });
    expect(!r.ok && r.error.code).toBe('policy-rule-changed');
    expect(onDisk()).toEqual([a, b]);
    expect(core.ledger.query({ event: 'refused' }).receipts[0]).toMatchObject({ actor: { kind: 'person' }, detail: { method: 'removePolicyRule', code: 'policy-rule-changed' } });
    const gone = await core.api.removePolicyRule({ index: 5, rule: a });
    expect(!gone.ok && gone.error.code).toBe('policy-rule-changed');
  });
});

describe('tab rules', () => {
  const tabRule: PolicyRule = { tabId: 1, kind: 'low-impact-mutation', action: 'allow' };

  it('are made for a shared tab only, bound to its origin now', async () => {
    const r = await core.api.addPolicyRule({ rule: tabRule });
    expect(r).toEqual({ ok: true, value: [{ ...tabRule, origin: ORIGIN }] });
    expect(changes()[0]).toMatchObject({ actor: { kind: 'person' }, tabId: 1, origin: ORIGIN });
    expect(scrollOn(1).action).toBe('allow');
    expect(scrollOn(2).action).toBe('review');

    const notShared = await core.api.addPolicyRule({ rule: { ...tabRule, tabId: 99 } });
    expect(!notShared.ok && notShared.error.code).toBe('tab-not-shared');
    const elsewhere = await core.api.addPolicyRule({ rule: { ...tabRule, origin: 'https://bank.example' } });
    expect(!elsewhere.ok && elsewhere.error.code).toBe('tab-origin-mismatch');
    expect(core.ledger.query({ event: 'refused' }).receipts.map((x) => (x.detail as { code: string }).code).sort()).toEqual(['tab-not-shared', 'tab-origin-mismatch']);
    expect(onDisk()).toHaveLength(1);
  });

  it('are dropped (actor console) when the tab stops being shared', async () => {
    await core.api.addPolicyRule({ rule: tabRule });
    await core.api.addPolicyRule({ rule: { origin: ORIGIN, faculty: 'list-tabs', action: 'deny' } });
    link.tabs = [];
    link.emit({ kind: 'tabs-changed', tabs: [] });
    expect(onDisk()).toEqual([{ origin: ORIGIN, faculty: 'list-tabs', action: 'deny' }]);
    expect(changes()[0]).toMatchObject({ actor: { kind: 'console' }, tabId: 1, origin: ORIGIN, detail: { change: 'dropped', rules: [{ ...tabRule, origin: ORIGIN }], reason: 'the tab is no longer shared' } });
    expect(lastRulesEvent()).toEqual({ kind: 'policy-rules', rules: [{ origin: ORIGIN, faculty: 'list-tabs', action: 'deny' }] });
    // Shared again later (a new share): the old allow does not come back.
    link.tabs = [{ ...sharedTab(1), sharedAt: Date.now() + 1 }];
    link.emit({ kind: 'tabs-changed', tabs: link.tabs });
    expect(scrollOn(1).action).toBe('review');
  });

  it('stop matching at once when the tab moves to another origin, and are dropped when the console learns it', async () => {
    await core.api.addPolicyRule({ rule: tabRule });
    // Before the extension reports the move, the rule already does not match the new origin.
    expect(scrollOn(1, 'https://bank.example').action).toBe('review');
    const moved: SharedTab = { ...core.broker.getSharedTabs()[0]!, origin: 'https://bank.example', url: 'https://bank.example/' };
    link.tabs = [moved];
    link.emit({ kind: 'tabs-changed', tabs: [moved] });
    expect(onDisk()).toEqual([]);
    expect(changes()[0]).toMatchObject({ actor: { kind: 'console' }, detail: { change: 'dropped', reason: 'the tab moved to another origin' } });
    expect(scrollOn(1, ORIGIN).action).toBe('review');
  });
});

describe('tab rules across a restart', () => {
  it('a tab rule whose tab was not shared when the console started is dropped; one for a tab still shared stays', async () => {
    await core.api.addPolicyRule({ rule: { tabId: 1, kind: 'low-impact-mutation', action: 'allow' } });
    await core.stop();
    const file = join(dir, 'settings.json');
    const s = JSON.parse(readFileSync(file, 'utf8'));
    const stale: PolicyRule = { tabId: 5, origin: ORIGIN, kind: 'low-impact-mutation', action: 'allow' };
    writeFileSync(file, JSON.stringify({ ...s, policyRules: [...s.policyRules, stale] }));
    await open();
    expect(onDisk()).toEqual([{ tabId: 1, origin: ORIGIN, kind: 'low-impact-mutation', action: 'allow' }]);
    expect(changes()[0]).toMatchObject({ actor: { kind: 'console' }, tabId: 5, detail: { change: 'dropped', rules: [stale], reason: 'the tab was not shared when the console started' } });
    expect(scrollOn(5).action).toBe('review');
    expect(scrollOn(1).action).toBe('allow');
  });
});

describe('malformed rules are refused with a receipt, and change nothing', () => {
  it('each payload is refused', async () => {
    const api = core.api as unknown as Record<string, (p?: unknown) => Promise<{ ok: boolean; error?: { code: string } }>>;
    const bad: Array<[string, unknown, string]> = [
      ['addPolicyRule', {}, 'invalid-params'],
      ['addPolicyRule', { rule: {} }, 'invalid-params'],
      ['addPolicyRule', { rule: { action: 'allow-all' } }, 'invalid-params'],
      ['addPolicyRule', { rule: { action: 'allow', kind: 'mutate' } }, 'invalid-params'],
      ['addPolicyRule', { rule: { action: 'allow', faculty: 'console' } }, 'invalid-params'],
      ['addPolicyRule', { rule: { action: 'allow', tabId: -1 } }, 'invalid-params'],
      ['addPolicyRule', { rule: { action: 'allow', tabId: '1' } }, 'invalid-params'],
      ['addPolicyRule', { rule: { action: 'allow', readOnly: true } }, 'invalid-params'],
      ['addPolicyRule', { rule: { action: 'allow' }, position: 0 }, 'invalid-params'],
      ['addPolicyRule', { rule: { action: 'allow', origin: 'x'.repeat(5000) } }, 'invalid-params'],
      ['addPolicyRule', JSON.parse('{"rule":{"action":"deny","__proto__":{"action":"allow"}}}'), 'invalid-params'],
      ['addPolicyRule', { rule: { action: 'deny', origin: 'https://Shop.example' } }, 'invalid-rule'],
      ['addPolicyRule', { rule: { action: 'deny', origin: 'https://shop.example/' } }, 'invalid-rule'],
      ['addPolicyRule', { rule: { action: 'deny', origin: 'https://shop.example:443' } }, 'invalid-rule'],
      ['addPolicyRule', { rule: { action: 'deny', origin: 'javascript:alert(1)' } }, 'invalid-rule'],
      ['addPolicyRule', { rule: { action: 'allow', tabId: 1, origin: '*' } }, 'tab-origin-mismatch'],
      ['addPolicyRule', { rule: { action: 'deny', tool: 'two words' } }, 'invalid-rule'],
      ['removePolicyRule', { index: -1, rule: { action: 'deny' } }, 'invalid-params'],
      ['removePolicyRule', { index: 0 }, 'invalid-params'],
      ['listPolicyRules', { all: true }, 'invalid-params'],
    ];
    for (const [method, payload, code] of bad) {
      const r = await api[method]!(payload);
      expect(r.ok, `${method} ${JSON.stringify(payload)}`).toBe(false);
      expect(r.error!.code, `${method} ${JSON.stringify(payload)}`).toBe(code);
    }
    const refused = core.ledger.query({ event: 'refused', limit: 100 }).receipts;
    expect(refused).toHaveLength(bad.length);
    for (const r of refused) expect(r).toMatchObject({ faculty: 'console', actor: { kind: 'person' } });
    expect(changes()).toHaveLength(0);
    expect(onDisk()).toEqual([]);
    expect(core.broker.policy.getRules()).toEqual([]);
  });

  it('a settings file with a rule that could never match is refused, not silently ignored', async () => {
    await core.stop();
    const file = join(dir, 'settings.json');
    const s = JSON.parse(readFileSync(file, 'utf8'));
    writeFileSync(file, JSON.stringify({ ...s, policyRules: [{ origin: 'https://Bank.example/', action: 'deny' }] }));
    expect(() => SettingsStore.open(dir)).toThrow(SettingsError);
    expect(() => SettingsStore.open(dir)).toThrow(/policyRules\/0 origin/);
    writeFileSync(file, JSON.stringify({ ...s, policyRules: [{ tabId: 3, action: 'allow' }] }));
    expect(() => SettingsStore.open(dir)).toThrow(/tab rule must name the exact origin/);
    writeFileSync(file, JSON.stringify(s));
    await open();
  });
});
