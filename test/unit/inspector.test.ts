/**
 * The tool inspector in the console core (src/main/core/inspector.ts) over an in-test link: the
 * inspection and its lint, kept apart from the agent's discoveries; the live view; and the
 * person's manual invoke through the agent's pipeline — dialog shown, person-actor receipts, the
 * reviewed schema enforced, and the trusted-input gate (rule 19) performing the attack of a script
 * that starts a run without the person's press.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createConsoleCore, type ConsoleCore } from '../../src/main/core';
import { createInputGate, type InputGate } from '../../src/main/core/trusted-input';
import { INSPECTOR_TOOL } from '../../src/main/core/inspector';
import type { ConsoleEvent, InspectorCall, InspectorView } from '../../src/shared/ipc';
import { ok } from '../../src/shared/result';
import type { PageLintFacts } from '../../src/shared/page-lint';
import { FakeLink, ORIGIN, makeDiscovery, sharedTab, until } from './broker.fixtures';

const SEARCH_SCHEMA = { type: 'object', properties: { q: { type: 'string' } }, required: ['q'], additionalProperties: false };

let dir: string;
let link: FakeLink;
let core: ConsoleCore;
let events: ConsoleEvent[];
let gate: InputGate | undefined;

async function start(opts: { gate?: InputGate } = {}) {
  dir = mkdtempSync(join(tmpdir(), 'echo-inspector-'));
  link = new FakeLink();
  link.tabs = [sharedTab(1)];
  link.discoveries.set(1, await makeDiscovery(1, [{ name: 'search', inputSchema: SEARCH_SCHEMA }, { name: 'track', inputSchema: {} }]));
  const facts: PageLintFacts = { frameId: 0, legacyApi: [{ what: 'provideContext', where: 'inline script 1' }], forms: [], scripts: { scanned: 1, skipped: 0 } };
  link.reads.set('webmcp-discover', (r) => (r.operation === 'lint' ? ok({ frames: [facts], unreached: 0 }) : ok(null)));
  core = createConsoleCore({ dataDir: dir, mcpPort: 0, link, ...(opts.gate ? { inputGate: opts.gate } : {}) });
  events = [];
  core.onEvent((e) => events.push(e));
  await core.start();
  await core.api.listShareableTabs();
  await until((l) => core.onEvent(l), () => core.broker.getSharedTabs().length === 1);
}

afterEach(async () => {
  await core.stop();
  rmSync(dir, { recursive: true, force: true });
  gate = undefined;
});

/**
 * Hold the next `discover` the link is asked: its answer is the page as it is now (read at once),
 * given only at `release()`. `asked` resolves once that discover was asked.
 */
function holdNextDiscover(): { asked: Promise<void>; release: () => void } {
  const real = link.request.bind(link);
  let release!: () => void;
  let asked!: () => void;
  const hold = new Promise<void>((r) => (release = r));
  const wasAsked = new Promise<void>((r) => (asked = r));
  let holding = true;
  link.request = (async (req: Parameters<typeof real>[0], opts?: Parameters<typeof real>[1]) => {
    const answer = real(req, opts);
    if (req.op === 'discover' && holding) {
      holding = false;
      asked();
      await hold;
    }
    return answer;
  }) as typeof link.request;
  return { asked: wasAsked, release };
}

const callEnded = (requestId: string) => until((l) => core.onEvent(l), () => events.some((e) => e.kind === 'inspector-call' && e.call.requestId === requestId));
const endOf = (requestId: string) => (events.find((e) => e.kind === 'inspector-call' && e.call.requestId === requestId) as { call: InspectorCall }).call;

describe('inspection', () => {
  beforeEach(() => start());

  it('lists the tools with lint from both halves, and never touches the agent\u2019s discovery or its blocks', async () => {
    // An agent's earlier call on `search` ended outcome-unknown: the agent must look again itself.
    core.broker.discoveries.block('webmcp-invoke', 1, 'doc-1', 'search', 'req-unknown');
    const r = await core.api.inspectTab({ tabId: 1 });
    if (!r.ok) throw new Error(r.error.message);
    expect(r.value.discovery.tools.map((t) => t.name)).toEqual(['search', 'track']);
    expect(r.value.lint.map((f) => [f.rule, f.toolName ?? null])).toEqual([['legacy-api', null], ['schema-missing', 'track']]);
    expect(r.value.lintPage).toEqual({ frames: 1, unreached: 0, scriptsScanned: 1, scriptsSkipped: 0 });
    expect(core.broker.latestDiscovery(1)).toBeUndefined();
    expect(core.broker.discoveries.blockedBy('webmcp-invoke', 1, 'doc-1', 'search')).toBe('req-unknown');
    // Not receipted: the person looked at their own tab; no agent was answered.
    expect(core.ledger.query({ limit: 50 }).receipts.filter((x) => x.faculty === 'webmcp-discover')).toEqual([]);
  });

  it('refuses a tab that is not shared; an extension without lint still gets the descriptor rules', async () => {
    expect(await core.api.inspectTab({ tabId: 9 })).toMatchObject({ ok: false, error: { code: 'tab-not-shared' } });
    link.reads.delete('webmcp-discover');
    const r = await core.api.inspectTab({ tabId: 1 });
    expect(r.ok && r.value.lint.map((f) => f.rule)).toEqual(['schema-missing']);
    expect(r.ok && 'error' in r.value.lintPage).toBe(true);
  });

  it('is live: a tools-changed notice pushes a new view with the new tool; unsharing ends it', async () => {
    await core.api.inspectTab({ tabId: 1 });
    link.discoveries.set(1, await makeDiscovery(1, [{ name: 'search', inputSchema: SEARCH_SCHEMA }, { name: 'track', inputSchema: {} }, { name: 'added_later', inputSchema: SEARCH_SCHEMA }]));
    link.emit({ kind: 'tools-changed', tabId: 1, frameId: 0, documentId: 'doc-1' });
    await until((l) => core.onEvent(l), () => events.some((e) => e.kind === 'inspector' && !!e.view?.discovery.tools.some((t) => t.name === 'added_later')));
    link.tabs = [];
    link.emit({ kind: 'tabs-changed', tabs: [], ended: [{ tabId: 1, reason: 'closed' }] } as never);
    await until((l) => core.onEvent(l), () => events.some((e) => e.kind === 'inspector' && e.tabId === 1 && e.view === null));
  });
});

describe('manual invoke', () => {
  beforeEach(() => start());

  it('goes through the dialog and the pipeline with the person as actor, and is receipted', async () => {
    const v = (await core.api.inspectTab({ tabId: 1 })) as { ok: true; value: InspectorView };
    const search = v.value.discovery.tools.find((t) => t.name === 'search')!;
    const started = await core.api.invokeTool({ tabId: 1, frameId: 0, name: 'search', descriptorHash: search.descriptorHash, documentId: 'doc-1', arguments: { q: 'tent' } });
    if (!started.ok) throw new Error(started.error.message);
    const { requestId } = started.value;
    // The dialog is shown: nothing reached the page yet.
    await until((l) => core.onEvent(l), () => core.broker.approvals.list().some((a) => a.requestId === requestId));
    const view = core.broker.approvals.list().find((a) => a.requestId === requestId)!;
    expect(view.agent.name).toBe('You (tool inspector)');
    expect(view.arguments).toEqual({ q: 'tent' });
    expect(link.invokes()).toHaveLength(0);
    expect(await core.api.decideApproval({ requestId, decision: 'approve' })).toEqual({ ok: true, value: null });
    await callEnded(requestId);
    expect(endOf(requestId)).toMatchObject({ ok: true, toolName: 'search', value: { outcome: 'succeeded', result: '{"ok":true}' } });
    const trail = core.ledger.query({ requestId, limit: 50 }).receipts.reverse();
    expect(trail.map((r) => [r.event, r.actor.kind])).toEqual([
      ['requested', 'person'],
      ['validated', 'person'],
      ['approval-shown', 'person'],
      ['approved', 'person'],
      ['dispatched', 'person'],
      ['succeeded', 'person'],
    ]);
    expect(trail[0]!.detail).toMatchObject({ agentTool: INSPECTOR_TOOL });
    expect(trail.every((r) => r.faculty === 'webmcp-invoke' && r.toolName === 'search' && r.descriptorHash === search.descriptorHash)).toBe(true);
    // The grant binds the same things as an agent's.
    expect(link.grants[0]).toMatchObject({ requestId, faculty: 'webmcp-invoke', operation: 'invoke', subjectHash: search.descriptorHash });
  });

  it('arguments are validated against the reviewed schema before the dialog; an unknown descriptor is refused', async () => {
    const v = (await core.api.inspectTab({ tabId: 1 })) as { ok: true; value: InspectorView };
    const search = v.value.discovery.tools.find((t) => t.name === 'search')!;
    const bad = await core.api.invokeTool({ tabId: 1, frameId: 0, name: 'search', descriptorHash: search.descriptorHash, documentId: 'doc-1', arguments: { q: 5, extra: true } });
    if (!bad.ok) throw new Error(bad.error.message);
    await callEnded(bad.value.requestId);
    expect(endOf(bad.value.requestId)).toMatchObject({ ok: false, error: { code: 'invalid-arguments' } });
    const stale = await core.api.invokeTool({ tabId: 1, frameId: 0, name: 'search', descriptorHash: 'b'.repeat(64), documentId: 'doc-1', arguments: { q: 'x' } });
    if (!stale.ok) throw new Error(stale.error.message);
    await callEnded(stale.value.requestId);
    expect(endOf(stale.value.requestId)).toMatchObject({ ok: false, error: { code: 'descriptor-unknown' } });
    expect(core.broker.approvals.list()).toEqual([]);
    expect(link.invokes()).toHaveLength(0);
  });

  it('after a same-document navigation a run first reads where the page is now (locate), and the dialog shows that URL', async () => {
    const v = (await core.api.inspectTab({ tabId: 1 })) as { ok: true; value: InspectorView };
    const search = v.value.discovery.tools.find((t) => t.name === 'search')!;
    const moved = `${ORIGIN}/shop#/other-item`;
    const loc = { frameId: 0, documentId: 'doc-1', tabUrl: moved, frameUrl: moved, urlHash: 'c'.repeat(64) };
    link.reads.set('webmcp-discover', (r) => (r.operation === 'locate' ? ok(loc) : ok({ frames: [], unreached: 0 })));
    link.emit({ kind: 'navigated', tabId: 1, frameId: 0, documentId: 'doc-1', url: moved });
    const started = await core.api.invokeTool({ tabId: 1, frameId: 0, name: 'search', descriptorHash: search.descriptorHash, documentId: 'doc-1', arguments: { q: 'x' } });
    if (!started.ok) throw new Error(started.error.message);
    await until((l) => core.onEvent(l), () => core.broker.approvals.list().length === 1);
    expect(core.broker.approvals.list()[0]!.tab.url).toBe(moved);
    expect(link.requests.some((r) => r.op === 'read' && r.operation === 'locate')).toBe(true);
  });

  it('a waiting dialog goes when the page changes or removes its tool (a tab no agent discovered), refused descriptor-changed; one for a tool still there stays', async () => {
    const v = (await core.api.inspectTab({ tabId: 1 })) as { ok: true; value: InspectorView };
    const hashOf = (name: string) => v.value.discovery.tools.find((t) => t.name === name)!.descriptorHash;
    const run = async (name: string, args: Record<string, unknown>) => {
      const r = await core.api.invokeTool({ tabId: 1, frameId: 0, name, descriptorHash: hashOf(name), documentId: 'doc-1', arguments: args });
      if (!r.ok) throw new Error(r.error.message);
      await until((l) => core.onEvent(l), () => core.broker.approvals.list().some((a) => a.requestId === r.value.requestId));
      return r.value.requestId;
    };
    const changed = await run('search', { q: 'tent' });
    const kept = await run('track', {});
    // No agent ever discovered this tab: only the inspector knows it.
    expect(core.broker.latestDiscovery(1)).toBeUndefined();
    // The page re-registers `search` with another description (a new descriptor hash) and keeps `track`.
    link.discoveries.set(1, await makeDiscovery(1, [{ name: 'search', description: 'now sends the query elsewhere', inputSchema: SEARCH_SCHEMA }, { name: 'track', inputSchema: {} }]));
    link.emit({ kind: 'tools-changed', tabId: 1, frameId: 0, documentId: 'doc-1' });
    // The inspector's new view (the page's tools now) is pushed after what it found was judged.
    const reinspected = () => events.some((e) => e.kind === 'inspector' && e.view?.discovery.tools.some((t) => t.name === 'search' && t.descriptorHash !== hashOf('search')));
    await until((l) => core.onEvent(l), reinspected);
    expect(core.broker.approvals.list().map((a) => a.requestId)).toEqual([kept]);
    await callEnded(changed);
    expect(endOf(changed)).toMatchObject({ ok: false, error: { code: 'descriptor-changed' } });
    expect(core.ledger.query({ requestId: changed, limit: 1 }).receipts[0]).toMatchObject({ event: 'refused', detail: { code: 'descriptor-changed' } });
    // Nothing reached the page.
    expect(link.invokes()).toHaveLength(0);
  });

  it('a dialog that opened while the inspection was asked is not judged by its answer (the page may have added the tool since)', async () => {
    await core.api.inspectTab({ tabId: 1 });
    // Hold the inspector's next discover: its answer is the page before `fresh` came.
    const held = holdNextDiscover();
    link.emit({ kind: 'tools-changed', tabId: 1, frameId: 0, documentId: 'doc-1' });
    await held.asked;
    // Meanwhile the page registers `fresh`; an agent discovers it and asks to run it.
    link.discoveries.set(1, await makeDiscovery(1, [{ name: 'search', inputSchema: SEARCH_SCHEMA }, { name: 'track', inputSchema: {} }, { name: 'fresh', inputSchema: {} }]));
    const d = await core.broker.discover({ tabId: 1 }, { actor: { kind: 'agent', name: 'a' }, kind: 'read' });
    if (!d.ok) throw new Error(d.error.message);
    const fresh = d.value.tools.find((t) => t.name === 'fresh')!;
    void core.broker.invoke({ tabId: 1, name: 'fresh', descriptorHash: fresh.descriptorHash, arguments: {} }, { actor: { kind: 'agent', name: 'a' }, kind: 'mutation' });
    await until((l) => core.onEvent(l), () => core.broker.approvals.list().length === 1);
    const [waiting] = core.broker.approvals.list();
    held.release();
    // The held inspection lands (without `fresh`) and pushes its view: the agent's dialog stays.
    await until((l) => core.onEvent(l), () => events.filter((e) => e.kind === 'inspector' && e.view !== null).length >= 2);
    expect(core.broker.approvals.list().map((a) => a.requestId)).toEqual([waiting!.requestId]);
  });

  it('a dialog opened from the old view while the inspection after a change was asked is judged by one more inspection, not left up', async () => {
    const v = (await core.api.inspectTab({ tabId: 1 })) as { ok: true; value: InspectorView };
    const oldSearch = v.value.discovery.tools.find((t) => t.name === 'search')!.descriptorHash;
    // Hold the inspector's next discover.
    const held = holdNextDiscover();
    // The page re-registers `search` with another description and says so: the inspection is asked.
    link.discoveries.set(1, await makeDiscovery(1, [{ name: 'search', description: 'now sends the query elsewhere', inputSchema: SEARCH_SCHEMA }, { name: 'track', inputSchema: {} }]));
    link.emit({ kind: 'tools-changed', tabId: 1, frameId: 0, documentId: 'doc-1' });
    await held.asked;
    // Meanwhile the person runs `search` from the view still shown (the old descriptor): a dialog opens.
    const r = await core.api.invokeTool({ tabId: 1, frameId: 0, name: 'search', descriptorHash: oldSearch, documentId: 'doc-1', arguments: { q: 'tent' } });
    if (!r.ok) throw new Error(r.error.message);
    await until((l) => core.onEvent(l), () => core.broker.approvals.list().some((a) => a.requestId === r.value.requestId));
    held.release();
    // That inspection leaves it (it opened while asked); no further change comes from the page, yet
    // the dialog for a descriptor the page no longer holds goes: one more inspection judges it.
    await callEnded(r.value.requestId);
    expect(endOf(r.value.requestId)).toMatchObject({ ok: false, error: { code: 'descriptor-changed' } });
    expect(link.invokes()).toHaveLength(0);
    // (Fails by the test's timeout when no inspection comes after the held one; the next one is one REFRESH_MIN_INTERVAL_MS later.)
  }, 15_000);

  it('a waiting dialog for a tool in a frame the inspection did not hear from (timed out, past the limits) or dropped for size stays: silence is not removal', async () => {
    const specs = [
      { name: 'search', inputSchema: SEARCH_SCHEMA },
      { name: 'widget', inputSchema: {}, frameId: 2 },
      { name: 'faraway', inputSchema: {}, frameId: 3 },
      { name: 'track', inputSchema: {} },
    ];
    link.discoveries.set(1, await makeDiscovery(1, specs));
    const v = (await core.api.inspectTab({ tabId: 1 })) as { ok: true; value: InspectorView };
    const run = async (name: string) => {
      const t = v.value.discovery.tools.find((x) => x.name === name)!;
      const r = await core.api.invokeTool({ tabId: 1, frameId: t.frameId, name, descriptorHash: t.descriptorHash, documentId: 'doc-1', arguments: {} });
      if (!r.ok) throw new Error(r.error.message);
      await until((l) => core.onEvent(l), () => core.broker.approvals.list().some((a) => a.requestId === r.value.requestId));
      return r.value.requestId;
    };
    const waiting = [await run('widget'), await run('faraway'), await run('track')];
    // The page's tools are unchanged, but this discovery did not hear from frame 2 (busy: frame-timeout),
    // frame 3 was past the frame limit, and `track` was dropped to keep the answer under the message limit.
    const next = await makeDiscovery(1, [specs[0]!]);
    next.violations = [
      { frameId: 2, reason: 'frame-timeout' },
      { frameId: 3, reason: 'too-many-frames' },
      { frameId: 0, reason: 'message-too-large', name: 'track' },
    ];
    link.discoveries.set(1, next);
    link.emit({ kind: 'tools-changed', tabId: 1, frameId: 0, documentId: 'doc-1' });
    await until((l) => core.onEvent(l), () => events.some((e) => e.kind === 'inspector' && e.view !== null && e.view.discovery.violations.length === 3));
    expect(core.broker.approvals.list().map((a) => a.requestId).sort()).toEqual([...waiting].sort());
  });

  it('needs an inspection of the tab first', async () => {
    expect(await core.api.invokeTool({ tabId: 1, frameId: 0, name: 'search', descriptorHash: 'a'.repeat(64), documentId: 'doc-1', arguments: {} })).toMatchObject({ ok: false, error: { code: 'not-inspected' } });
  });
});

describe('trusted input (rule 19)', () => {
  it('a script in the console window cannot start a run without the person\u2019s press; with one, the dialog is still shown', async () => {
    let now = 1_000_000;
    gate = createInputGate({ now: () => now });
    await start({ gate });
    const v = (await core.api.inspectTab({ tabId: 1 })) as { ok: true; value: InspectorView };
    const search = v.value.discovery.tools.find((t) => t.name === 'search')!;
    const call = { tabId: 1, frameId: 0, name: 'search', descriptorHash: search.descriptorHash, documentId: 'doc-1', arguments: { q: 'tent' } };
    // The attack: a direct API call with no real input on the window.
    expect(await core.api.invokeTool(call)).toMatchObject({ ok: false, error: { code: 'no-trusted-input' } });
    expect(core.ledger.query({ event: 'requested', limit: 10 }).receipts.filter((r) => r.faculty === 'webmcp-invoke')).toEqual([]);
    expect(core.ledger.query({ event: 'refused', limit: 10 }).receipts[0]).toMatchObject({ faculty: 'console', actor: { kind: 'console' }, detail: { method: 'invokeTool', action: 'decision' } });
    // The person's press starts it; the press is spent, so the approval needs another one.
    gate.noteInput('mouseDown');
    now += 10;
    const started = await core.api.invokeTool(call);
    if (!started.ok) throw new Error(started.error.message);
    await until((l) => core.onEvent(l), () => core.broker.approvals.list().length === 1);
    expect(await core.api.decideApproval({ requestId: started.value.requestId, decision: 'approve' })).toMatchObject({ ok: false, error: { code: 'no-trusted-input' } });
    expect(link.invokes()).toHaveLength(0);
    gate.noteInput('mouseUp');
    expect(await core.api.decideApproval({ requestId: started.value.requestId, decision: 'approve' })).toEqual({ ok: true, value: null });
    await callEnded(started.value.requestId);
    expect(link.invokes()).toHaveLength(1);
  });
});
