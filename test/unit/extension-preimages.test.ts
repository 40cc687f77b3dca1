/**
 * The worker's record of what its discoveries hashed (extension/src/background/preimages.ts)
 * and how the webmcp-invoke faculty uses it: a dispatch whose hashes it holds needs no round
 * trip to the page before the one that acts; a record that does not hash to its key, or none,
 * sends it back to reading the page; the generic checks still compare the URLs' hash with the grant.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { argumentsHash, sha256Hex, urlHash } from '../../src/shared/canonical';
import { ok, type Result } from '../../src/shared/result';
import type { Grant } from '../../src/shared/types';
import { Preimages } from '../../extension/src/background/preimages';
import { webmcpInvoke, type SeenPreimages } from '../../extension/src/background/faculties/webmcp-invoke';
import { Dispatcher, type DispatchRequest } from '../../extension/src/background/dispatch';
import type { DispatchFaculty } from '../../extension/src/background/faculties/registry';
import type { FoundTool } from '../../extension/src/background/discovery';
import { stats } from '../../extension/src/background/stats';

const URL_ = 'https://a.example/items/1';
const TARGET = { tabId: 1, frameId: 0, documentId: 'DOC' };
const CANONICAL = '{"annotations":{},"description":"d","inputSchema":{},"name":"t","origin":"https://a.example","title":""}';

describe('Preimages', () => {
  it('answers what was kept under a hash, and nothing for another', () => {
    const p = new Preimages<string>(1000, (s) => s.length);
    p.remember('a'.repeat(64), 'x');
    expect(p.get('a'.repeat(64))).toBe('x');
    expect(p.get('b'.repeat(64))).toBeUndefined();
  });

  it('drops the least recently used entries once the values exceed the budget; a read counts as a use', () => {
    const p = new Preimages<string>(3 * (64 + 10), (s) => s.length);
    const k = (c: string) => c.repeat(64);
    p.remember(k('a'), '0123456789');
    p.remember(k('b'), '0123456789');
    p.remember(k('c'), '0123456789');
    expect(p.get(k('a'))).toBeDefined(); // a is now the most recent; b is the oldest
    p.remember(k('d'), '0123456789');
    expect(p.size).toBe(3);
    expect(p.get(k('b'))).toBeUndefined();
    expect([p.get(k('a')), p.get(k('c')), p.get(k('d'))].every((v) => v !== undefined)).toBe(true);
  });

  it('does not keep a value larger than the whole budget, and replacing an entry does not count it twice', () => {
    const p = new Preimages<string>(100, (s) => s.length);
    p.remember('a'.repeat(64), 'x'.repeat(200));
    expect(p.size).toBe(0);
    for (let i = 0; i < 10; i++) p.remember('b'.repeat(64), 'y'.repeat(30));
    expect(p.get('b'.repeat(64))).toBe('y'.repeat(30));
  });
});

/** A faculty over its own records, counting the page reads it falls back to. */
function facultyWith(seen: SeenPreimages, found: FoundTool[] | null) {
  const reads = { rediscoveries: 0, urlReads: 0 };
  const f = webmcpInvoke(
    async () => ((reads.rediscoveries += 1), found),
    seen,
    async () => ((reads.urlReads += 1), { tab: URL_, frame: URL_ }),
  );
  return { f, reads };
}

function records(descriptors: Array<[string, string]>, urls: Array<[string, { tab: string; frame: string }]>): SeenPreimages {
  const d = new Preimages<string>(1e6, (s) => s.length);
  const u = new Preimages<{ tab: string; frame: string }>(1e6, (x) => x.tab.length + x.frame.length);
  for (const [h, v] of descriptors) d.remember(h, v);
  for (const [h, v] of urls) u.remember(h, v);
  return { descriptors: d, urls: u };
}

describe('webmcp-invoke with the worker records', () => {
  it('a held descriptor and URL pair: no page read before the dispatch, and the page gets exactly those to compare', async () => {
    const dh = await sha256Hex(CANONICAL);
    const uh = await urlHash(URL_, URL_);
    const { f, reads } = facultyWith(records([[dh, CANONICAL]], [[uh, { tab: URL_, frame: URL_ }]]), []);
    expect(await f.check(TARGET, { toolName: 't', descriptorHash: dh }, 'https://a.example')).toEqual({ ok: true, prepared: { toolName: 't', canonical: CANONICAL } });
    expect(await f.pageUrls(TARGET, uh)).toEqual({ tab: URL_, frame: URL_ });
    expect(reads).toEqual({ rediscoveries: 0, urlReads: 0 });
  });

  it('a record that does not hash to its key is not believed: the page is asked again', async () => {
    const dh = await sha256Hex(CANONICAL);
    const forged = CANONICAL.replace('"d"', '"something else"');
    const { f, reads } = facultyWith(records([[dh, forged]], []), [{ canonical: CANONICAL, descriptorHash: dh }]);
    expect(await f.check(TARGET, { toolName: 't', descriptorHash: dh }, 'https://a.example')).toEqual({ ok: true, prepared: { toolName: 't', canonical: CANONICAL } });
    expect(reads.rediscoveries).toBe(1);
  });

  it('without a record (the worker restarted since the discovery) it reads the page, and the page decides', async () => {
    const dh = await sha256Hex(CANONICAL);
    const { f, reads } = facultyWith(records([], []), [{ canonical: CANONICAL, descriptorHash: 'c'.repeat(64) }]);
    expect(await f.check(TARGET, { toolName: 't', descriptorHash: dh }, 'https://a.example')).toMatchObject({ ok: false, refusal: 'descriptor-changed' });
    expect(await f.pageUrls(TARGET, 'e'.repeat(64))).toEqual({ tab: URL_, frame: URL_ });
    expect(reads).toEqual({ rediscoveries: 1, urlReads: 1 });
  });
});

describe('the generic checks over a held URL pair', () => {
  const g = globalThis as unknown as { chrome?: unknown };
  afterEach(() => delete g.chrome);

  async function request(bound: string): Promise<DispatchRequest> {
    const dh = await sha256Hex(CANONICAL);
    const args = { a: 1 };
    const grant: Grant = {
      requestId: 'r1', faculty: 'webmcp-invoke', operation: 'invoke', ...TARGET, origin: 'https://a.example',
      urlHash: await urlHash(bound, bound), subjectHash: dh, argumentsHash: await argumentsHash(args),
      nonce: '1'.repeat(32), expiresAt: Date.now() + 30_000, mac: 'f'.repeat(64),
    };
    return { op: 'dispatch', faculty: 'webmcp-invoke', operation: 'invoke', target: TARGET, subject: { toolName: 't', descriptorHash: dh }, arguments: args, grant, timeoutMs: 5_000 };
  }

  const dispatcher = () =>
    new Dispatcher({
      verifyGrant: async () => true,
      now: () => Date.now(),
      consumeNonce: async () => true,
      sharedOrigin: async () => 'https://a.example',
      frameDocument: async () => ({ documentId: 'DOC', origin: 'https://a.example' }),
    });

  it('a record filed under the wrong hash never passes step 7: navigated, and nothing is sent to the page', async () => {
    const r = await request(URL_);
    const dh = r.grant.subjectHash;
    // The URL pair the grant's hash is filed under is another page's.
    const seen = records([[dh, CANONICAL]], [[r.grant.urlHash, { tab: 'https://a.example/items/2', frame: 'https://a.example/items/2' }]]);
    const sent: unknown[] = [];
    g.chrome = { tabs: { sendMessage: async (_t: number, m: unknown) => (sent.push(m), ok({ result: null, truncated: false, elapsedMs: 0 })) } };
    const out = await dispatcher().dispatch(r, webmcpInvoke(async () => [], seen) as DispatchFaculty<unknown>);
    expect(out).toMatchObject({ ok: true, value: { outcome: 'refused', refusal: 'navigated' } });
    expect(sent).toEqual([]);
  });

  it("the page gets the held URLs and descriptor in the one message that acts; the rediscovery counts when the page's answer shows it ran", async () => {
    const r = await request(URL_);
    const seen = records([[r.grant.subjectHash, CANONICAL]], [[r.grant.urlHash, { tab: URL_, frame: URL_ }]]);
    const answers: Array<Result<unknown>> = [ok({ result: '1', truncated: false, elapsedMs: 1 }), { ok: false, error: { code: 'no-webmcp', message: 'x' } }];
    const sent: Array<Record<string, unknown>> = [];
    g.chrome = { tabs: { sendMessage: async (_t: number, m: Record<string, unknown>) => (sent.push(m), answers.shift()) } };
    const before = stats().rediscoveries;
    const first = await dispatcher().dispatch(r, webmcpInvoke(async () => [], seen) as DispatchFaculty<unknown>);
    expect(first).toMatchObject({ ok: true, value: { outcome: 'succeeded' } });
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ type: 'echo:webmcp:execute', toolName: 't', expected: CANONICAL, urls: { tab: URL_, frame: URL_ } });
    expect(stats().rediscoveries).toBe(before + 1);
    // A page without WebMCP answered before listing anything: no rediscovery ran, none is counted.
    const second = await dispatcher().dispatch({ ...r, grant: { ...r.grant, requestId: 'r2', nonce: '2'.repeat(32) } }, webmcpInvoke(async () => [], seen) as DispatchFaculty<unknown>);
    expect(second).toMatchObject({ ok: true, value: { outcome: 'refused', refusal: 'tool-missing' } });
    expect(stats().rediscoveries).toBe(before + 1);
  });
});
