/**
 * The extension's `semantic-read` faculty (extension/src/background/faculties/semantic-read.ts)
 * with its chrome calls replaced by a table of frames and content answers:
 * document tags handed out once, frames placed by their key, cross-origin
 * frames never asked and told by origin only, zoom by ref (ref-unknown,
 * ref-stale, navigated), the budget, and the top leaving the shared origin.
 * The real module in real pages: test/e2e/page-snapshot.spec.ts.
 */
import { describe, expect, it } from 'vitest';
import { checkSnapshotArgs, NO_RECEIVER, semanticRead, snapshotOf, type SemanticDeps } from '../../extension/src/background/faculties/semantic-read';
import type { FrameInfo } from '../../extension/src/background/tabs';
import type { SemanticReport, ToSemantic } from '../../extension/src/lib/messages';
import { err, ok, type Result } from '../../src/shared/result';
import type { SnapshotPart } from '../../src/shared/snapshot';
import type { SharedTab } from '../../src/shared/types';

const A = 'https://a.example';
const B = 'https://b.example';
const C = 'https://c.example';
const frame = (frameId: number, url: string, parentFrameId = 0): FrameInfo => ({
  frameId, parentFrameId: frameId === 0 ? -1 : parentFrameId, documentId: `D${frameId}`, url, origin: new URL(url).origin, documentLifecycle: 'active', frameType: frameId === 0 ? 'outermost_frame' : 'sub_frame',
});

/** A fake document: its tag (once given), key, parts and refs it owns. */
interface FakeDoc {
  key: string;
  parts: SnapshotPart[];
  origin?: string;
  tag?: string;
  /** ref → its subtree parts, or 'stale'. */
  refs?: Record<string, SnapshotPart[] | 'stale'>;
}

function world(frames: FrameInfo[], docs: Record<number, FakeDoc>) {
  let last = 0;
  const asked: Array<{ frameId: number; msg: ToSemantic }> = [];
  const deps: SemanticDeps = {
    frames: async () => frames,
    inject: async (_t, ids) => new Set(ids),
    nextTag: async () => ++last,
    lastTag: async () => last,
    async ask(_t, f, msg): Promise<Result<SemanticReport> | null> {
      asked.push({ frameId: f.frameId, msg });
      const d = docs[f.frameId];
      if (!d) return null;
      if (!d.tag) {
        if (!msg.tag) return ok({ kind: 'need-tag' });
        d.tag = msg.tag;
      }
      const url = frames.find((x) => x.frameId === f.frameId)!.url;
      const snap = (parts: SnapshotPart[]) => ok({ kind: 'snapshot' as const, tag: d.tag!, key: d.key, parts, truncated: false, refs: 1, origin: d.origin ?? new URL(url).origin, url });
      if (msg.ref === undefined) return snap(d.parts);
      if (!msg.ref.startsWith(d.tag) || !/^\d/.test(msg.ref.slice(d.tag.length))) return ok({ kind: 'not-mine', tag: d.tag });
      const sub = d.refs?.[msg.ref];
      if (sub === 'stale') return err('ref-stale', 'gone');
      return sub ? snap(sub) : err('ref-unknown', 'never');
    },
  };
  return { deps, asked, docs };
}

describe('snapshotOf', () => {
  it('hands each document a tag once, places same-origin frames by key and cross-origin ones by origin, and never asks a cross-origin frame', async () => {
    const frames = [frame(0, `${A}/?token=T&q=1`), frame(3, `${A}/inner`), frame(4, `${B}/ad`), frame(5, `${C}/widget`)];
    const w = world(frames, {
      0: { key: 'K0', parts: [{ text: 'h1 "Top"\niframe "W" #a1' }, { frameKey: null, srcOrigin: C, depth: 1 }, { text: 'iframe "In" #a2' }, { frameKey: 'K3', srcOrigin: A, depth: 1 }, { text: 'iframe "Ad" #a3' }, { frameKey: null, srcOrigin: null, depth: 1 }] },
      3: { key: 'K3', parts: [{ text: 'button "Inner" #b1' }] },
    });
    const r = await snapshotOf(7, A, {}, w.deps);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value.text).toBe(['h1 "Top"', 'iframe "W" #a1', ` cross-origin "${C}"`, 'iframe "In" #a2', ' button "Inner" #b1', 'iframe "Ad" #a3', ` cross-origin "${B}"`].join('\n'));
    expect(r.value).toMatchObject({ tabId: 7, origin: A, url: `${A}/?q=1`, documentId: 'D0', frameId: 0, rootDocumentId: 'D0', truncated: false, frames: { read: 1, crossOrigin: 2, notRead: 0 } });
    expect(new Set(w.asked.map((a) => a.frameId))).toEqual(new Set([0, 3]));
    expect(w.docs[0]!.tag).not.toBe(w.docs[3]!.tag);
    // A second snapshot hands out no new tag.
    const tags = [w.docs[0]!.tag, w.docs[3]!.tag];
    await snapshotOf(7, A, {}, w.deps);
    expect([w.docs[0]!.tag, w.docs[3]!.tag]).toEqual(tags);
    expect(await w.deps.lastTag()).toBe(2);
  });

  it('a same-origin frame that did not answer, and one with an opaque origin, are not read as page content', async () => {
    const frames = [frame(0, `${A}/`), frame(3, `${A}/slow`), frame(4, `${A}/sandboxed`)];
    const w = world(frames, {
      0: { key: 'K0', parts: [{ text: 'iframe #a1' }, { frameKey: 'K3', srcOrigin: A, depth: 1 }, { text: 'iframe #a2' }, { frameKey: 'K4', srcOrigin: A, depth: 1 }] },
      4: { key: 'K4', parts: [{ text: '"sandboxed text"' }], origin: 'null' },
    });
    const r = await snapshotOf(7, A, {}, w.deps);
    expect(r.ok && r.value.text).toBe('iframe #a1\n not-read\niframe #a2\n cross-origin "null"');
    expect(r.ok && r.value.frames).toEqual({ read: 0, crossOrigin: 1, notRead: 1 });
  });

  it('zooms into the document that owns the ref, with its child frames; stale and unknown refs say so; a gone document is navigated', async () => {
    const frames = [frame(0, `${A}/`), frame(3, `${A}/inner`)];
    const w = world(frames, {
      0: { key: 'K0', parts: [{ text: 'iframe #a1' }, { frameKey: 'K3', srcOrigin: A, depth: 1 }] },
      3: { key: 'K3', parts: [{ text: 'list #b1\n button "Go" #b2' }], refs: { b1: [{ text: 'list #b1\n button "Go" #b2' }], b9: 'stale' } },
    });
    await snapshotOf(7, A, {}, w.deps);
    w.docs[0]!.refs = { a1: [{ text: 'iframe #a1' }, { frameKey: 'K3', srcOrigin: A, depth: 1 }] };
    const z = await snapshotOf(7, A, { ref: 'b1' }, w.deps);
    expect(z).toMatchObject({ ok: true, value: { ref: 'b1', frameId: 3, rootDocumentId: 'D3', text: 'list #b1\n button "Go" #b2' } });
    const zTop = await snapshotOf(7, A, { ref: 'a1' }, w.deps);
    expect(zTop.ok && zTop.value.text).toBe('iframe #a1\n list #b1\n  button "Go" #b2');
    expect(await snapshotOf(7, A, { ref: 'b9' }, w.deps)).toMatchObject({ ok: false, error: { code: 'ref-stale' } });
    expect(await snapshotOf(7, A, { ref: 'b7' }, w.deps)).toMatchObject({ ok: false, error: { code: 'ref-unknown' } });
    // A tag never handed out.
    expect(await snapshotOf(7, A, { ref: 'q1' }, w.deps)).toMatchObject({ ok: false, error: { code: 'ref-unknown' } });
    // The frame's document is replaced: its tag is no live document's.
    const after = world([frame(0, `${A}/`), { ...frame(3, `${A}/inner`), documentId: 'D3-new' }], { 0: w.docs[0]!, 3: { key: 'K3b', parts: [] } });
    after.deps.lastTag = w.deps.lastTag;
    expect(await snapshotOf(7, A, { ref: 'b1' }, after.deps)).toMatchObject({ ok: false, error: { code: 'navigated' } });
  });

  it('injects the frames before the walk and the top only when it does not answer: a top that holds the module is not injected again', async () => {
    const frames = [frame(0, `${A}/`), frame(3, `${A}/inner`), frame(4, `${A}/refuses`)];
    const w = world(frames, {
      0: { key: 'K0', parts: [{ text: 'iframe #a1' }, { frameKey: 'K3', srcOrigin: A, depth: 1 }, { text: 'iframe #a2' }, { frameKey: 'K4', srcOrigin: A, depth: 1 }] },
      3: { key: 'K3', parts: [{ text: 'button "Inner" #b1' }] },
      4: { key: 'K4', parts: [{ text: '"never read"' }] },
    });
    // As Chrome does: no module of ours in a document until it is injected (D4 refuses scripting).
    const holding = new Set<string>();
    const injected: string[][] = [];
    const ask = w.deps.ask;
    w.deps.inject = async (_t, ids) => (injected.push(ids), new Set(ids.filter((id) => id !== 'D4').map((id) => (holding.add(id), id))));
    w.deps.ask = async (t, f, msg) => (holding.has(f.documentId) ? ask(t, f, msg) : err(NO_RECEIVER, 'none'));
    const first = await snapshotOf(7, A, {}, w.deps);
    expect(first.ok && first.value.text).toBe('iframe #a1\n button "Inner" #b1\niframe #a2\n not-read');
    // The frames first, together (the top's walk reads their keys), then the top, which did not answer.
    expect(injected).toEqual([['D3', 'D4'], ['D0']]);
    injected.length = 0;
    const again = await snapshotOf(7, A, {}, w.deps);
    expect(again.ok && again.value.text).toBe(first.ok && first.value.text);
    // The top holds the module now: only the frames are injected (a no-op where the module is).
    expect(injected).toEqual([['D3', 'D4']]);
    injected.length = 0;
    w.docs[3]!.refs = { b1: [{ text: 'button "Inner" #b1' }] };
    expect(await snapshotOf(7, A, { ref: 'b1' }, w.deps)).toMatchObject({ ok: true, value: { frameId: 3, text: 'button "Inner" #b1' } });
    expect(injected).toEqual([['D3', 'D4']]);
    // A page of one document: nothing injected once its module answers.
    const single = world([frame(0, `${A}/`)], { 0: { key: 'K0', parts: [{ text: 'h1 "Only"' }] } });
    const singleInjected: string[][] = [];
    single.deps.inject = async (_t, ids) => (singleInjected.push(ids), new Set(ids));
    await snapshotOf(7, A, {}, single.deps);
    await snapshotOf(7, A, {}, single.deps);
    expect(singleInjected).toEqual([]);
  });

  it('cuts to the budget with the marker', async () => {
    const long = Array.from({ length: 300 }, (_, i) => ` "line ${i}"`).join('\n');
    const w = world([frame(0, `${A}/`)], { 0: { key: 'K0', parts: [{ text: `main #a1\n${long}` }] } });
    const r = await snapshotOf(7, A, { maxBytes: 1024 }, w.deps);
    expect(r.ok && r.value.truncated).toBe(true);
    expect(r.ok && Buffer.byteLength(r.value.text)).toBeLessThanOrEqual(1024);
    expect(r.ok && r.value.text.split('\n').at(-1)).toMatch(/^\[truncated: the snapshot holds more than 1024 bytes; zoom into a1 /);
  });

  it('a top that left the shared origin ends sharing (tab-not-shared); an unshared tab is refused without asking the page', async () => {
    const w = world([frame(0, `${B}/`)], { 0: { key: 'K0', parts: [] } });
    expect(await snapshotOf(7, A, {}, w.deps)).toMatchObject({ ok: false, error: { code: 'navigated' } });
    const ended: number[] = [];
    const shared = { tabId: 7, origin: A } as SharedTab;
    const f = semanticRead(w.deps);
    expect(await f.read('snapshot', 7, {}, { sharedTab: async () => shared, endSharing: async (t) => void ended.push(t) })).toMatchObject({ ok: false, error: { code: 'tab-not-shared' } });
    expect(ended).toEqual([7]);
    const none = world([frame(0, `${A}/`)], { 0: { key: 'K0', parts: [] } });
    expect(await semanticRead(none.deps).read('snapshot', 7, {}, { sharedTab: async () => undefined, endSharing: async () => {} })).toMatchObject({ ok: false, error: { code: 'tab-not-shared' } });
    expect(none.asked).toEqual([]);
  });
});

describe('checkSnapshotArgs', () => {
  it('takes maxBytes within the bounds and a ref; nothing else', () => {
    expect(checkSnapshotArgs({})).toBeNull();
    expect(checkSnapshotArgs({ maxBytes: 4096, ref: 'a12' })).toBeNull();
    expect(checkSnapshotArgs({ maxBytes: 10 })).toMatch(/maxBytes/);
    expect(checkSnapshotArgs({ maxBytes: 10_000_000 })).toMatch(/maxBytes/);
    expect(checkSnapshotArgs({ maxBytes: 1.5 })).toMatch(/maxBytes/);
    expect(checkSnapshotArgs({ ref: 'a0' })).toMatch(/ref/);
    expect(checkSnapshotArgs({ ref: 'div > input[value^=a]' })).toMatch(/ref/);
    expect(checkSnapshotArgs({ selector: 'x' })).toMatch(/no argument/);
  });
});
