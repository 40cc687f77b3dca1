/**
 * Same-document navigation in the console (issue 8 item 1; docs/broker.md,
 * "Same-document navigation"): a pushState keeps the discovery; a request on a
 * moved frame asks the extension where the frame is now, and the person
 * reviews, the grant binds and the receipt records that; a new document, or a
 * locate that finds one, drops the discovery. The extension's `locate` itself
 * (extension/src/background/faculties/webmcp-discover.ts) is checked with its
 * effects injected.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Broker, type AgentContext } from '../../src/main/core/broker';
import type { Ledger } from '../../src/main/core/ledger';
import { err, ok } from '../../src/shared/result';
import { urlHash } from '../../src/shared/canonical';
import type { FrameLocation } from '../../src/shared/types';
import { nodeSha256 } from '../../src/main/core/digest';
import { locateFrame } from '../../extension/src/background/faculties/webmcp-discover';
import { FakeLink, ORIGIN, discoveredBroker, durabilitySpy, makeDiscovery, sharedTab, trailOf, until } from './broker.fixtures';

const OPEN = { type: 'object', properties: {}, additionalProperties: false };
const agent = (kind: AgentContext['kind'] = 'mutation'): AgentContext => ({ actor: { kind: 'agent', name: 'spa-test' }, kind });

let link: FakeLink;
let ledger: Ledger;
let cleanup: () => void;
let broker: Broker;
let locates: Array<Record<string, unknown>>;
let answerLocate: (args: { frameId: number; documentId: string }) => Promise<ReturnType<typeof ok<FrameLocation>> | ReturnType<typeof err>>;

beforeEach(async () => {
  link = new FakeLink();
  link.tabs = [sharedTab(7)];
  link.discoveries.set(7, await makeDiscovery(7, [{ name: 'delete_current_item', inputSchema: OPEN }]));
  locates = [];
  const item2 = `${ORIGIN}/spa/items/2`;
  answerLocate = async ({ frameId, documentId }) => ok({ frameId, documentId, tabUrl: item2, frameUrl: item2, urlHash: await urlHash(item2, item2, nodeSha256) });
  link.reads.set('webmcp-discover', (r) => {
    locates.push({ operation: r.operation, ...r.arguments });
    // The FakeLink's read answers synchronously; the promise is resolved by the pipeline's await.
    return answerLocate(r.arguments as { frameId: number; documentId: string }) as never;
  });
  ({ broker, ledger, close: cleanup } = await discoveredBroker(link));
});
afterEach(() => cleanup());

const pending = () => until((l) => broker.approvals.onChange(l), () => broker.approvals.list().length === 1);
const tool = () => broker.latestDiscovery(7)!.tools[0]!;

describe('same-document navigation (console)', () => {
  it('a pushState keeps the discovery; the next call is reviewed and granted on the page as it is now, and says so', async () => {
    const before = tool();
    link.emit({ kind: 'navigated', tabId: 7, frameId: 0, documentId: 'doc-1', url: `${ORIGIN}/spa/items/2` });
    expect(broker.latestDiscovery(7)?.tools.map((t) => t.descriptorHash)).toEqual([before.descriptorHash]);

    const p = broker.invoke({ tabId: 7, name: 'delete_current_item', descriptorHash: before.descriptorHash, arguments: {} }, agent());
    await pending();
    expect(locates).toEqual([{ operation: 'locate', frameId: 0, documentId: 'doc-1' }]);
    const view = broker.approvals.list()[0]!;
    expect(view.tab.url).toBe(`${ORIGIN}/spa/items/2`);
    expect(view.frame.url).toBe(`${ORIGIN}/spa/items/2`);
    broker.decide(view.requestId, 'approve');
    const a = await p;
    expect(a).toMatchObject({ ok: true, value: { movedSinceDiscovery: true, url: `${ORIGIN}/spa/items/2` } });
    const item2Hash = await urlHash(`${ORIGIN}/spa/items/2`, `${ORIGIN}/spa/items/2`, nodeSha256);
    expect(link.grants.at(-1)?.urlHash).toBe(item2Hash);
    expect(link.grants.at(-1)?.urlHash).not.toBe(before.urlHash);
    const validated = trailOf(ledger, a.requestId).find((r) => r.event === 'validated')!;
    expect(validated.detail).toMatchObject({ url: `${ORIGIN}/spa/items/2`, frameUrl: `${ORIGIN}/spa/items/2`, movedSinceLook: true });

    // Located once: the next call on the unmoved page reads nothing more.
    const q = broker.invoke({ tabId: 7, name: 'delete_current_item', descriptorHash: before.descriptorHash, arguments: {} }, agent());
    await pending();
    broker.decide(broker.approvals.list()[0]!.requestId, 'approve');
    expect(await q).toMatchObject({ ok: true, value: { movedSinceDiscovery: false } });
    expect(locates).toHaveLength(1);
    expect(link.grants.at(-1)?.urlHash).toBe(item2Hash);
  });

  it("a tool in an iframe after the TOP moved: the dialog's tab URL is the one its located hash covers, not the discovery's", async () => {
    link.discoveries.set(7, await makeDiscovery(7, [{ name: 'delete_current_item', inputSchema: OPEN }, { name: 'in_frame', inputSchema: OPEN, frameId: 3 }]));
    expect((await broker.discover({ tabId: 7 }, agent('read'))).ok).toBe(true);
    const frameTool = broker.latestDiscovery(7)!.tools.find((t) => t.frameId === 3)!;
    const item2 = `${ORIGIN}/spa/items/2`;
    answerLocate = async ({ frameId, documentId }) => ok({ frameId, documentId, tabUrl: item2, frameUrl: `${ORIGIN}/frame`, urlHash: await urlHash(item2, `${ORIGIN}/frame`, nodeSha256) });
    link.emit({ kind: 'navigated', tabId: 7, frameId: 0, documentId: 'doc-1', url: item2 });
    const p = broker.invoke({ tabId: 7, frameId: 3, name: 'in_frame', descriptorHash: frameTool.descriptorHash, arguments: {} }, agent());
    await pending();
    expect(locates).toEqual([{ operation: 'locate', frameId: 3, documentId: 'doc-1' }]);
    const view = broker.approvals.list()[0]!;
    expect(view.tab.url).toBe(item2);
    expect(view.frame.url).toBe(`${ORIGIN}/frame`);
    broker.decide(view.requestId, 'approve');
    const a = await p;
    expect(a).toMatchObject({ ok: true, value: { url: item2, movedSinceDiscovery: true } });
    expect(link.grants.at(-1)?.urlHash).toBe(await urlHash(item2, `${ORIGIN}/frame`, nodeSha256));
  });

  it('nothing written waits for its fsync when the console asks the extension to locate, and a cancel during it is receipted cancelled', async () => {
    const { sink, notDurable } = durabilitySpy(ledger);
    const b = new Broker({ link, receipts: sink, approvalTimeoutMs: () => 60_000, linkGraceMs: 200 });
    try {
      await b.listTabs(agent('read'));
      expect((await b.discover({ tabId: 7 }, agent('read'))).ok).toBe(true);
      link.emit({ kind: 'navigated', tabId: 7, frameId: 0, documentId: 'doc-1', url: `${ORIGIN}/spa/items/2` });
      const unsyncedAtLocate: string[][] = [];
      const ac = new AbortController();
      const inner = answerLocate;
      answerLocate = async (a) => {
        unsyncedAtLocate.push(notDurable());
        ac.abort(); // the agent cancels while the console asks the extension
        return inner(a);
      };
      const t = b.latestDiscovery(7)!.tools[0]!;
      const r = await b.invoke({ tabId: 7, name: t.name, descriptorHash: t.descriptorHash, arguments: {} }, { ...agent(), signal: ac.signal });
      expect(unsyncedAtLocate).toEqual([[]]);
      expect(r).toMatchObject({ ok: false, error: { code: 'cancelled' } });
      expect(trailOf(ledger, r.requestId).map((x) => x.event)).toEqual(['requested', 'cancelled']);
    } finally {
      b.dispose();
    }
  });

  it('no move, no locate: the call binds the URL hash of the discovery', async () => {
    const t = tool();
    const p = broker.invoke({ tabId: 7, name: 'delete_current_item', descriptorHash: t.descriptorHash, arguments: {} }, agent());
    await pending();
    broker.decide(broker.approvals.list()[0]!.requestId, 'approve');
    expect(await p).toMatchObject({ ok: true, value: { movedSinceDiscovery: false } });
    expect(locates).toEqual([]);
    expect(link.grants.at(-1)?.urlHash).toBe(t.urlHash);
  });

  it('a new document in the top frame drops the discovery: descriptor-unknown, nothing is asked', async () => {
    const t = tool();
    link.emit({ kind: 'navigated', tabId: 7, frameId: 0, documentId: 'doc-2', url: `${ORIGIN}/spa/items/2` });
    expect(broker.latestDiscovery(7)).toBeUndefined();
    const a = await broker.invoke({ tabId: 7, name: 'delete_current_item', descriptorHash: t.descriptorHash, arguments: {} }, agent());
    expect(a).toMatchObject({ ok: false, error: { code: 'descriptor-unknown' } });
    expect(broker.approvals.list()).toEqual([]);
  });

  it('a locate that finds another document, or answers for another one, refuses before the person sees anything', async () => {
    const t = tool();
    link.emit({ kind: 'navigated', tabId: 7, frameId: 0, documentId: 'doc-1', url: `${ORIGIN}/spa/items/2` });
    answerLocate = async () => err('navigated', 'the frame holds another document now');
    const a = await broker.invoke({ tabId: 7, name: 'delete_current_item', descriptorHash: t.descriptorHash, arguments: {} }, agent());
    expect(a).toMatchObject({ ok: false, error: { code: 'navigated' } });
    // An extension answering for another document than asked is not believed.
    answerLocate = async ({ frameId }) => ok({ frameId, documentId: 'doc-9', tabUrl: `${ORIGIN}/x`, frameUrl: `${ORIGIN}/x`, urlHash: 'a'.repeat(64) });
    const b = await broker.invoke({ tabId: 7, name: 'delete_current_item', descriptorHash: t.descriptorHash, arguments: {} }, agent());
    expect(b).toMatchObject({ ok: false, error: { code: 'bad-answer' } });
    expect(broker.approvals.list()).toEqual([]);
    expect(link.grants).toEqual([]);
  });
});

describe('locate in the extension', () => {
  const deps = (doc: { documentId: string; origin: string } | null, urls: { tab: string; frame: string } | null) => ({
    frameDocument: async () => doc,
    pageUrls: async () => urls,
  });

  it('reads the frame in that very document: stripped URLs for the person, the exact-URL hash for the grant', async () => {
    const exact = 'https://a.example/items?id=2&token=s3cr3t#top';
    const r = await locateFrame(3, 'https://a.example', 0, 'DOC', deps({ documentId: 'DOC', origin: 'https://a.example' }, { tab: exact, frame: exact }));
    expect(r).toEqual({ ok: true, value: { frameId: 0, documentId: 'DOC', tabUrl: 'https://a.example/items?id=2#top', frameUrl: 'https://a.example/items?id=2#top', urlHash: await urlHash(exact, exact) } });
  });

  it('refuses navigated for another document, another origin, or a document it cannot read', async () => {
    const u = { tab: 'https://a.example/', frame: 'https://a.example/' };
    expect(await locateFrame(3, 'https://a.example', 0, 'DOC', deps({ documentId: 'OTHER', origin: 'https://a.example' }, u))).toMatchObject({ ok: false, error: { code: 'navigated' } });
    expect(await locateFrame(3, 'https://a.example', 0, 'DOC', deps({ documentId: 'DOC', origin: 'https://b.example' }, u))).toMatchObject({ ok: false, error: { code: 'navigated' } });
    expect(await locateFrame(3, 'https://a.example', 0, 'DOC', deps(null, u))).toMatchObject({ ok: false, error: { code: 'navigated' } });
    expect(await locateFrame(3, 'https://a.example', 0, 'DOC', deps({ documentId: 'DOC', origin: 'https://a.example' }, null))).toMatchObject({ ok: false, error: { code: 'navigated' } });
  });
});
