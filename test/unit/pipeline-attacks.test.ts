/**
 * Findings of the outside review of the issue-7 pipeline, each against the real
 * modules (the broker with the in-test FakeLink, the extension's discovery and
 * grant checks with injected chrome effects, the real MCP endpoint over HTTP).
 *
 * Each was written as `it.fails` against the reviewed code (it failed there:
 * the finding stood) and turned into a plain `it` with the fix, so each now
 * attacks the fixed rule: a same-document URL change during approval, the tab
 * URL shown vs the URL bound, blocks per faculty, recovery's look-back, and a
 * refused second SSE stream. The grant-checks test pins a behaviour the report
 * describes (a tool name outside the subject hash is refused, the nonce spent).
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { argumentsHash, descriptorHash, urlHash } from '../../src/shared/canonical';
import { nodeSha256 } from '../../src/main/core/digest';
import { ok } from '../../src/shared/result';
import type { Grant } from '../../src/shared/types';
import { Broker, type AgentContext } from '../../src/main/core/broker';
import { createConsoleCore, type ConsoleCore } from '../../src/main/core';
import { createAgentToken } from '../support/agent-token';
import { defineAgentTool } from '../../src/main/core/agent';
import type { Ledger } from '../../src/main/core/ledger';
import { discoverTab, type DiscoveryDeps } from '../../extension/src/background/discovery';
import type { FrameInfo } from '../../extension/src/background/tabs';
import { checkBeforeDispatch, type GrantCheckDeps } from '../../extension/src/lib/grant-checks';
import { webmcpInvoke as extensionWebmcpInvoke } from '../../extension/src/background/faculties/webmcp-invoke';
import { recoverAtStart } from '../../src/main/core/broker/recovery';
import { FakeLink, ORIGIN, makeDiscovery, sharedTab, standInHover, tempLedger, trailOf, until } from './broker.fixtures';

const agent = (kind: AgentContext['kind'] = 'mutation'): AgentContext => ({ actor: { kind: 'agent', name: 'review' }, kind });
const OPEN = { type: 'object', properties: { a: { type: 'number' } } };

describe('broker: what the person is shown vs what the grant binds', () => {
  let link: FakeLink;
  let ledger: Ledger;
  let cleanup: () => void;
  let broker: Broker;
  const pending = (n: number) => until((l) => broker.approvals.onChange(l), () => broker.approvals.list().length === n);

  beforeEach(async () => {
    link = new FakeLink();
    link.tabs = [sharedTab(7)];
    ({ ledger, cleanup } = tempLedger());
    broker = new Broker({ link, receipts: ledger, approvalTimeoutMs: () => 60_000, linkGraceMs: 200 });
    await broker.listTabs(agent('read'));
  });
  afterEach(() => {
    broker.dispose();
    cleanup();
  });

  // FINDING: a same-document navigation (pushState/replaceState/fragment: the extension emits
  // `navigated` with the SAME documentId) drops the discovery but leaves the pending approval open,
  // still showing the old URL; the grant it yields binds the old urlHash and can only be refused
  // (step 7) — or succeed if the page goes back to the old URL just before dispatch.
  it('a same-document navigation of the acting frame ends a pending approval (navigated) before the person can approve it', async () => {
    link.discoveries.set(7, await makeDiscovery(7, [{ name: 'add', inputSchema: OPEN }]));
    const d = (await broker.discover({ tabId: 7 }, agent('read')));
    expect(d.ok).toBe(true);
    const tool = d.ok ? d.value.tools[0]! : null;
    const p = broker.invoke({ tabId: 7, name: 'add', descriptorHash: tool!.descriptorHash, arguments: { a: 1 } }, agent());
    await pending(1);
    link.emit({ kind: 'navigated', tabId: 7, frameId: 0, documentId: 'doc-1', url: `${ORIGIN}/account/2` });
    // The console knows the page moved within the document: the descriptors stand (issue 8 item 1)...
    expect(broker.latestDiscovery(7)?.tools.map((t) => t.name)).toEqual(['add']);
    expect(broker.approvals.list()).toHaveLength(0); // ...but the dialog is still open (fails here)
    const a = await p;
    expect(!a.ok && a.error.code).toBe('navigated');
  });

  // FINDING: Pipeline.requestApproval (pipeline.ts:246-257) takes the tab URL from the WebMCP
  // discovery for EVERY faculty, not from what the faculty resolved; a non-WebMCP action shows the
  // URL of an older WebMCP discovery while its grant binds the URL hash of its own target.
  it('the dialog tab URL of a non-WebMCP faculty is the URL its own target was resolved at', async () => {
    link.discoveries.set(7, await makeDiscovery(7, [{ name: 'add', inputSchema: OPEN }]));
    expect((await broker.discover({ tabId: 7 }, agent('read'))).ok).toBe(true); // discovery.url = /shop
    // Later the tab is reported at another URL (a tabs-changed after a same-document move of the top).
    link.emit({ kind: 'tabs-changed', tabs: [{ ...sharedTab(7), url: `${ORIGIN}/account/2` }] });
    const hover = standInHover;
    const p = broker.action(hover, { tabId: 7, ref: 'e1', arguments: {} }, agent('low-impact-mutation'));
    await pending(1);
    const view = broker.approvals.list()[0]!;
    broker.decide(view.requestId, 'deny');
    await p;
    expect(view.frame.url).toBe(`${ORIGIN}/account/2`);
    expect(view.tab.url).toBe(view.frame.url); // fails: '/shop', from the WebMCP discovery
  });
});

describe('outcome-unknown blocks are lifted by another faculty\'s look', () => {
  // FINDING: Discoveries.put (discoveries.ts:360-363) lifts EVERY block of the tab, whatever its
  // faculty: after a hover whose outcome is unknown, the agent is told to call page_snapshot, but a
  // webmcp_discover of the tab (which says nothing about the hovered element) lets the hover run again.
  it('a WebMCP discovery does not lift the block of another faculty\'s unknown outcome', async () => {
    const link = new FakeLink();
    link.tabs = [sharedTab(7)];
    link.discoveries.set(7, await makeDiscovery(7, [{ name: 'add', inputSchema: OPEN }]));
    const { ledger, cleanup } = tempLedger();
    const broker = new Broker({ link, receipts: ledger, approvalTimeoutMs: () => 60_000, linkGraceMs: 50, dispatchTimeoutMs: 50 });
    const hover = standInHover;
    try {
      await broker.listTabs(agent('read'));
      link.invokeHandler = async () => ok({ outcome: 'outcome-unknown', elapsedMs: 1 });
      const ask = () => {
        const p = broker.action(hover, { tabId: 7, ref: 'e1', arguments: {} }, agent('low-impact-mutation'));
        void until((l) => broker.approvals.onChange(l), () => broker.approvals.list().length === 1).then(() => broker.decide(broker.approvals.list()[0]!.requestId, 'approve'));
        return p;
      };
      const first = await ask();
      expect(!first.ok && first.error.code).toBe('outcome-unknown');
      expect(!first.ok && first.error.message).toMatch(/page_snapshot/);
      expect((await broker.discover({ tabId: 7 }, agent('read'))).ok).toBe(true);
      const again = broker.action(hover, { tabId: 7, ref: 'e1', arguments: {} }, agent('low-impact-mutation'));
      const asked = until((l) => broker.approvals.onChange(l), () => broker.approvals.list().length === 1);
      const secondTry = await Promise.race([again.then((a) => ({ refused: !a.ok && a.error.code })), asked.then(() => ({ refused: false as const }))]);
      for (const v of broker.approvals.list()) broker.decide(v.requestId, 'deny');
      await again;
      expect(secondTry.refused).toBe('outcome-unknown-pending'); // fails: the hover is shown to the person again
    } finally {
      broker.dispose();
      cleanup();
    }
  });
});

describe('restart recovery: the look-back counts reads', () => {
  // FINDING: Ledger.openRequests walks the newest `lookback` `requested` receipts
  // (ledger/index.ts:159-163), and every read (list_tabs, page_info, discover) writes one. An agent
  // polling reads while a dispatch hangs pushes the dispatched request out of the window: after a
  // crash it gets no outcome-unknown receipt and no block. Shown with lookback 3 instead of 10,000.
  it('a request left dispatched is recovered however many reads came after it', async () => {
    const link = new FakeLink();
    link.tabs = [sharedTab(7)];
    link.discoveries.set(7, await makeDiscovery(7, [{ name: 'add', inputSchema: OPEN }]));
    link.invokeHandler = () => new Promise(() => undefined); // the page never answers; the console "crashes"
    const { ledger, cleanup } = tempLedger();
    const broker = new Broker({ link, receipts: ledger, approvalTimeoutMs: () => 60_000 });
    try {
      await broker.listTabs(agent('read'));
      const d = await broker.discover({ tabId: 7 }, agent('read'));
      const hash = d.ok ? d.value.tools[0]!.descriptorHash : '';
      const sent = link.nextInvoke();
      void broker.invoke({ tabId: 7, name: 'add', descriptorHash: hash, arguments: { a: 1 } }, agent());
      await until((l) => broker.approvals.onChange(l), () => broker.approvals.list().length === 1);
      const requestId = broker.approvals.list()[0]!.requestId;
      broker.decide(requestId, 'approve');
      await sent;
      expect(trailOf(ledger, requestId).at(-1)!.event).toBe('dispatched');
      for (let i = 0; i < 3; i++) await broker.listTabs(agent('read'));
      const report = recoverAtStart(ledger, { lookback: 3 });
      expect(report.outcomeUnknown.map((u) => u.requestId)).toEqual([requestId]); // fails: []
    } finally {
      broker.dispose();
      cleanup();
    }
  });
});

describe('extension discovery: the shown tab URL and the bound urlHash come from two reads', () => {
  const A = 'https://a.example';
  const frame = (frameId: number, url: string): FrameInfo => ({
    frameId, parentFrameId: frameId === 0 ? -1 : 0, documentId: `D${frameId}`, url, origin: new URL(url).origin, documentLifecycle: 'active', frameType: frameId === 0 ? 'outermost_frame' : 'sub_frame',
  });

  // FINDING: discoverTab (discovery.ts:242) sets DiscoveryResult.url from webNavigation's URL at
  // getAllFrames time; urlHash (discovery.ts:134) is over the URLs the content script read later,
  // when getTools() answered. A pushState in between: the dialog shows `tab.url` (ApprovalDialog
  // shows no frame URL for frame 0) = /account/1, the grant binds /account/2.
  it('the tab URL a discovery reports is the one its tools\' urlHash binds', async () => {
    const shownTop = `${A}/account/1`;
    const boundTop = `${A}/account/2`;
    const deps: DiscoveryDeps = {
      frames: async () => [frame(0, shownTop)],
      inject: async (_t, ids) => new Set(ids),
      ask: async () => ok({
        origin: A,
        urls: { tab: boundTop, frame: boundTop },
        support: { modelContext: true, legacyApi: null, argumentForm: 'object' },
        tools: [{ name: 'pay', title: '', description: 'Pays.', inputSchema: { type: 'object' }, origin: A, kind: 'imperative', passwordField: false }],
        violations: [],
      }),
    };
    const r = await discoverTab(7, A, deps);
    expect(r.ok).toBe(true);
    const d = r.ok ? r.value : null;
    const tool = d!.tools[0]!;
    expect(tool.urlHash).toBe(await urlHash(boundTop, boundTop, nodeSha256));
    expect(tool.frameUrl).toBe(boundTop);
    expect(d!.url).toBe(boundTop); // fails: /account/1
  });
});

describe('extension grant checks: the subject\'s toolName is not bound by the grant', () => {
  // Passes. The grant's subjectHash covers only subject.descriptorHash
  // (faculties/webmcp-invoke.ts:349-353); a dispatch naming ANOTHER tool with the approved
  // descriptorHash passes step 2, spends the nonce, and is refused at step 8 as
  // `descriptor-changed` — a stale-page code (the console then forgets the discovery), not `grant-invalid`.
  it('a dispatch naming another tool under a grant for `search` is refused as descriptor-changed after the nonce is spent', async () => {
    const searchHash = await descriptorHash({ name: 'search', title: '', description: 'd', inputSchema: {}, origin: ORIGIN }, nodeSha256);
    const deleteHash = await descriptorHash({ name: 'delete_all', title: '', description: 'd', inputSchema: {}, origin: ORIGIN }, nodeSha256);
    const url = `${ORIGIN}/shop`;
    const grant: Grant = {
      requestId: 'r1', faculty: 'webmcp-invoke', operation: 'invoke', tabId: 7, frameId: 0, documentId: 'doc-1', origin: ORIGIN,
      urlHash: await urlHash(url, url, nodeSha256), subjectHash: searchHash, argumentsHash: await argumentsHash({}, nodeSha256),
      nonce: 'a'.repeat(32), expiresAt: Date.now() + 30_000, mac: 'f'.repeat(64),
    };
    const spent: string[] = [];
    const deps: GrantCheckDeps = {
      verifyGrant: async () => true,
      now: () => Date.now(),
      consumeNonce: async (n) => (spent.push(n), true),
      sharedOrigin: async () => ORIGIN,
      frameDocument: async () => ({ documentId: 'doc-1', origin: ORIGIN }),
      pageUrls: async () => ({ tab: url, frame: url }),
      urlHash: (t, f) => urlHash(t, f, nodeSha256),
      argumentsHash: (a) => argumentsHash(a, nodeSha256),
      argumentsBytes: (a) => JSON.stringify(a).length,
    };
    const faculty = extensionWebmcpInvoke(async (_t, name) => [{ canonical: name, descriptorHash: name === 'delete_all' ? deleteHash : searchHash }]);
    const out = await checkBeforeDispatch(
      { faculty: 'webmcp-invoke', operation: 'invoke', target: { tabId: 7, frameId: 0, documentId: 'doc-1' }, subject: { toolName: 'delete_all', descriptorHash: searchHash }, arguments: {}, grant },
      faculty,
      deps,
    );
    expect(out).toMatchObject({ ok: false, refusal: 'descriptor-changed' });
    expect(spent).toEqual([grant.nonce]);
  });
});

describe('MCP endpoint: a second standalone SSE stream', () => {
  let dir: string;
  let core: ConsoleCore;
  /** The secret of the token the tests' agents use (made with createAgentToken, as the person does). */
  let agentSecret = '';
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'echo-review-'));
    const link = new FakeLink();
    core = createConsoleCore({ dataDir: dir, mcpPort: 0, link, approvalTimeoutMs: 30_000 });
    await core.start();
    agentSecret = await createAgentToken(core.api, 'vitest token');
  });
  afterEach(async () => {
    await core.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  function send(method: string, headers: Record<string, string>, body?: unknown): Promise<IncomingMessage> {
    const url = new URL(core.endpoint.url);
    return new Promise((resolve, reject) => {
      const req = httpRequest(
        { host: '127.0.0.1', port: Number(url.port), path: url.pathname, method, headers: { Authorization: `Bearer ${agentSecret}`, Accept: 'application/json, text/event-stream', ...(body ? { 'Content-Type': 'application/json' } : {}), ...headers } },
        resolve,
      );
      req.on('error', reject);
      req.end(body ? JSON.stringify(body) : undefined);
    });
  }
  const drain = (res: IncomingMessage) => new Promise<string>((resolve) => {
    let t = '';
    res.on('data', (c) => (t += c));
    res.on('end', () => resolve(t));
  });

  // FINDING: endpoint.ts:244 `res.once('close', () => s.streamOpen = false)` is attached to every
  // GET, also one the SDK answers 409 ("Only one SSE stream is allowed per session"). That close
  // marks the session's LIVE stream as closed: later tools/list changes are held back
  // (listChangedPending) and never reach the open stream.
  it('a refused (409) second GET does not silence list_changed on the session\'s open stream', async () => {
    const init = await send('POST', {}, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
    const sid = String(init.headers['mcp-session-id']);
    await drain(init);
    const h = { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' };
    await drain(await send('POST', h, { jsonrpc: '2.0', method: 'notifications/initialized' }));
    const live = await send('GET', { ...h, Accept: 'text/event-stream' });
    expect(live.statusCode).toBe(200);
    const second = await send('GET', { ...h, Accept: 'text/event-stream' });
    expect(second.statusCode).toBe(409);
    await drain(second);
    const session = (core.agentEndpoint as unknown as { sessions: Map<string, { streamOpen: boolean }> }).sessions.get(sid)!;
    expect(session.streamOpen).toBe(true); // fails: false, while `live` is still open
    const heard = new Promise<void>((resolve) => live.on('data', (c: Buffer) => String(c).includes('notifications/tools/list_changed') && resolve()));
    core.agentEndpoint.tools.add(defineAgentTool({ name: 'dev_x', title: 'x', kind: 'read', faculty: 'console', description: 'x', inputSchema: { type: 'object' }, handle: async () => ({ content: [] }) }));
    await heard;
    live.destroy();
  });
});

