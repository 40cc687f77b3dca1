/**
 * The renderer's policy store and the editor's effect text, against the REAL
 * core's api (createConsoleCore; a FakeLink stands in for the extension only):
 * add, remove, a refusal kept as the store's error, a stale remove reloading
 * the console's list, and pushed `policy-rules` events routed to the store.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createConsoleCore, type ConsoleCore } from '../../src/main/core';
import { applyEvent, createConsoleStores } from '../../src/renderer/stores';
import { createPolicyStore, ruleEffect } from '../../src/renderer/stores/policy';
import { FakeLink } from './broker.fixtures';

let dir: string;
let core: ConsoleCore;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'echo-renderer-policy-'));
  core = createConsoleCore({ dataDir: dir, mcpPort: 0, link: new FakeLink(), logger: { info: () => {}, warn: () => {} } });
  await core.start();
});

afterEach(async () => {
  await core.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('policy store', () => {
  it('loads, adds and removes through the console', async () => {
    const s = createPolicyStore(core.api);
    expect(s.getState().rules).toBeNull();
    await s.getState().load();
    expect(s.getState().rules).toEqual([]);
    expect(await s.getState().add({ origin: 'https://a.example', action: 'deny' })).toBe(true);
    expect(s.getState().rules).toEqual([{ origin: 'https://a.example', action: 'deny' }]);
    await s.getState().remove(0);
    expect(s.getState().rules).toEqual([]);
    expect(core.ledger.query({ event: 'policy-changed' }).receipts).toHaveLength(2);
  });

  it("keeps the console's refusal as its error and changes nothing", async () => {
    const s = createPolicyStore(core.api);
    await s.getState().load();
    expect(await s.getState().add({ origin: 'https://a.example/path', action: 'deny' })).toBe(false);
    expect(s.getState()).toMatchObject({ rules: [], busy: false, error: { code: 'invalid-rule' } });
  });

  it('a remove against a list that changed meanwhile is refused and the current list is shown', async () => {
    const s = createPolicyStore(core.api);
    await core.api.addPolicyRule({ rule: { origin: 'https://a.example', action: 'deny' } });
    await s.getState().load();
    // Another window replaces the rule meanwhile.
    await core.api.removePolicyRule({ index: 0, rule: { origin: 'https://a.example', action: 'deny' } });
    await core.api.addPolicyRule({ rule: { origin: 'https://b.example', action: 'deny' } });
    await s.getState().remove(0);
    expect(s.getState().error?.code).toBe('policy-rule-changed');
    expect(s.getState().rules).toEqual([{ origin: 'https://b.example', action: 'deny' }]);
    expect(await core.api.listPolicyRules()).toEqual({ ok: true, value: [{ origin: 'https://b.example', action: 'deny' }] });
  });

  it('pushed policy-rules events reach the store', async () => {
    const stores = createConsoleStores({ ...core.api, onEvent: (l) => core.onEvent(l) });
    const off = core.onEvent((e) => applyEvent(stores, e));
    await core.api.addPolicyRule({ rule: { faculty: 'list-tabs', action: 'deny' } });
    expect(stores.policy.getState().rules).toEqual([{ faculty: 'list-tabs', action: 'deny' }]);
    off();
  });
});

describe('ruleEffect: the editor says what an allow cannot do', () => {
  it('names the floors', () => {
    expect(ruleEffect({ kind: 'mutation', action: 'allow' })).toMatch(/always reviewed/);
    expect(ruleEffect({ faculty: 'webmcp-invoke', action: 'allow' })).toMatch(/always reviewed/);
    expect(ruleEffect({ kind: 'low-impact-mutation', origin: 'https://a.example', action: 'allow' })).toMatch(/one shared tab/);
    expect(ruleEffect({ action: 'allow' })).toMatch(/reads only/);
    expect(ruleEffect({ tabId: 3, origin: 'https://a.example', kind: 'low-impact-mutation', action: 'allow' })).toBeNull();
    expect(ruleEffect({ kind: 'mutation', action: 'deny' })).toBeNull();
  });
});
