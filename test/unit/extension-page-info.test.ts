import { describe, expect, it } from 'vitest';
import { pageInfoOf, type PageInfoDeps } from '../../extension/src/background/faculties/page-info';
import type { FrameInfo } from '../../extension/src/background/tabs';
import type { PageInfoReport } from '../../extension/src/lib/messages';

const A = 'https://a.example';
const frame = (frameId: number, url: string, documentId = `D${frameId}`): FrameInfo => ({
  frameId, parentFrameId: frameId === 0 ? -1 : 0, documentId, url, origin: new URL(url).origin, documentLifecycle: 'active', frameType: frameId === 0 ? 'outermost_frame' : 'sub_frame',
});

function deps(frames: FrameInfo[], reports: Record<number, PageInfoReport | null>, injected = frames.map((f) => f.documentId)) {
  const askedFor: number[] = [];
  const d: PageInfoDeps = {
    frames: async () => frames,
    inject: async (_t, ids) => new Set(ids.filter((id) => injected.includes(id))),
    ask: async (_t, f) => (askedFor.push(f.frameId), reports[f.frameId] ?? null),
  };
  return { d, askedFor };
}

describe('pageInfoOf', () => {
  it('reads the top and same-origin frames in the page; a cross-origin frame gives only its origin and is never asked', async () => {
    const frames = [frame(0, `${A}/p?token=T&q=1`), frame(1, `${A}/f?session=S`), frame(2, 'https://b.example/x?secret=1')];
    const { d, askedFor } = deps(frames, {
      0: { url: `${A}/p?token=T&q=1#now`, title: 'Now', origin: A, webmcp: true },
      1: { url: `${A}/f?session=S&y=2`, title: 'f', origin: A, webmcp: false },
    });
    const r = await pageInfoOf(7, A, d);
    expect(r).toEqual({
      ok: true,
      value: {
        tabId: 7, url: `${A}/p?q=1#now`, title: 'Now', origin: A, documentId: 'D0', webmcp: true,
        frames: [
          { frameId: 1, sameOrigin: true, url: `${A}/f?y=2`, documentId: 'D1', webmcp: false },
          { frameId: 2, sameOrigin: false, origin: 'https://b.example' },
        ],
      },
    });
    expect(askedFor.sort()).toEqual([0, 1]);
  });

  it('a same-URL frame with an opaque origin (sandbox) is not same-origin; an unreadable one claims no WebMCP', async () => {
    const frames = [frame(0, `${A}/p`), frame(1, `${A}/sandboxed`), frame(2, `${A}/unreachable?code=1`)];
    const { d } = deps(frames, { 0: { url: `${A}/p`, title: '', origin: A, webmcp: false }, 1: { url: `${A}/sandboxed`, title: 's', origin: 'null', webmcp: true } }, ['D0', 'D1']);
    const r = await pageInfoOf(7, A, d);
    expect(r.ok && r.value.frames).toEqual([
      { frameId: 1, sameOrigin: false, origin: 'null' },
      { frameId: 2, sameOrigin: true, url: `${A}/unreachable`, documentId: 'D2', webmcp: false },
    ]);
    expect(r.ok && r.value.title).toBe('');
  });

  it('a top that left the shared origin is navigated; an unreadable or opaque top is no-document', async () => {
    expect(await pageInfoOf(7, A, deps([frame(0, 'https://b.example/')], {}).d)).toMatchObject({ ok: false, error: { code: 'navigated' } });
    expect(await pageInfoOf(7, A, deps([frame(0, `${A}/`)], {}).d)).toMatchObject({ ok: false, error: { code: 'no-document' } });
    expect(await pageInfoOf(7, A, deps([frame(0, `${A}/`)], { 0: { url: `${A}/`, title: '', origin: 'null', webmcp: false } }).d)).toMatchObject({ ok: false, error: { code: 'no-document' } });
    expect(await pageInfoOf(7, A, deps([], {}).d)).toMatchObject({ ok: false, error: { code: 'no-document' } });
  });
});
