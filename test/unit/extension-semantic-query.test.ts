/**
 * The worker side of extract, wait and verify (extension/src/background/faculties/semantic-query.ts,
 * through the `semantic-read` faculty) with chrome replaced by a table of frames and page answers:
 * the argument check, which document answers (the top, or the one owning a ref), the tag
 * handshake, refusals before any page is asked (selector-refused, condition-redacted,
 * ref-unknown), a page refusal passed through with its code, wait-timeout, and a wait whose
 * document a navigation replaced. The page side in real Chromium: test/e2e/page-reads.spec.ts.
 */
import { describe, expect, it } from 'vitest';
import { checkOf, checkQueryArgs, extractOf, type QueryDeps } from '../../extension/src/background/faculties/semantic-query';
import { semanticRead } from '../../extension/src/background/faculties/semantic-read';
import type { FrameInfo } from '../../extension/src/background/tabs';
import type { SemanticReport, ToSemanticRead } from '../../extension/src/lib/messages';
import { err, ok, type Result } from '../../src/shared/result';
import type { SharedTab } from '../../src/shared/types';

const A = 'https://a.example';
const frame = (frameId: number, url: string, documentId = `D${frameId}`): FrameInfo => ({
  frameId, parentFrameId: frameId === 0 ? -1 : 0, documentId, url, origin: new URL(url).origin, documentLifecycle: 'active', frameType: frameId === 0 ? 'outermost_frame' : 'sub_frame',
});

/** A fake tab: `answer` plays each document's module; `frames` may change while a wait runs. */
function world(frames: FrameInfo[], answer: (f: FrameInfo, msg: ToSemanticRead) => Result<SemanticReport> | null, lastTag = 3) {
  let last = lastTag;
  const asked: Array<{ frameId: number; msg: ToSemanticRead; timeoutMs: number }> = [];
  const state = { frames };
  const deps: QueryDeps = {
    frames: async () => state.frames,
    inject: async (_t, ids) => new Set(ids),
    nextTag: async () => ++last,
    lastTag: async () => last,
    async ask(_t, f, msg, timeoutMs) {
      asked.push({ frameId: f.frameId, msg, timeoutMs });
      return answer(state.frames.find((x) => x.frameId === f.frameId) ?? (f as FrameInfo), msg);
    },
  };
  return { deps, asked, state };
}

const extractAnswer = (url: string) => ok<SemanticReport>({ kind: 'extract', matches: [{ tag: 'li', text: 'Kettle' }], count: 1, more: false, truncated: false, origin: A, url });
const checkAnswer = (met: boolean, url = `${A}/`) => ok<SemanticReport>({ kind: 'check', met, evidence: { found: met ? 'x' : null }, elapsedMs: 12, origin: A, url });

describe('checkQueryArgs', () => {
  it('shapes only; a selector grammar or a redacted needle is left to the operation (its own refusal code)', () => {
    expect(checkQueryArgs('extract', {})).toMatch(/needs a ref or a selector/);
    expect(checkQueryArgs('extract', { selector: 'li', bogus: 1 })).toMatch(/no argument "bogus"/);
    expect(checkQueryArgs('extract', { selector: 'li', maxBytes: 10 })).toMatch(/maxBytes/);
    expect(checkQueryArgs('extract', { ref: 'input[value]' })).toMatch(/ref must be a ref/);
    expect(checkQueryArgs('extract', { selector: 'a[href]' })).toBeNull();
    expect(checkQueryArgs('wait', { text: 'x', timeoutMs: 30_001 })).toMatch(/timeoutMs/);
    expect(checkQueryArgs('wait', { text: 'x', urlContains: 'y' })).toMatch(/exactly one condition/);
    expect(checkQueryArgs('verify', { urlChanged: true })).toMatch(/no argument "urlChanged"/);
    expect(checkQueryArgs('verify', { state: 'checked' })).toMatch(/needs a target/);
    expect(checkQueryArgs('verify', { text: '4111 1111 1111 1111' })).toBeNull();
  });
});

describe('extract', () => {
  it('asks the top document only, handing it a tag when it has none', async () => {
    let tag: string | undefined;
    const w = world([frame(0, `${A}/`), frame(1, `${A}/f`)], (_f, msg) => {
      if (!tag && msg.type === 'echo:semantic:extract' && !msg.tag) return ok({ kind: 'need-tag' });
      if (msg.type === 'echo:semantic:extract') tag ??= msg.tag;
      return extractAnswer(`${A}/`);
    });
    const r = await extractOf(1, A, { selector: 'li' }, w.deps);
    expect(r).toMatchObject({ ok: true, value: { frameId: 0, rootDocumentId: 'D0', count: 1, matches: [{ tag: 'li', text: 'Kettle' }], selector: 'li' } });
    expect(w.asked.map((a) => a.frameId)).toEqual([0, 0]);
    expect(tag).toBe('d');
  });
  it('a ref is answered by the document owning it; none left is navigated; a tag never given is ref-unknown', async () => {
    const w = world([frame(0, `${A}/`), frame(2, `${A}/f`)], (f) => (f.frameId === 2 ? extractAnswer(`${A}/f`) : ok({ kind: 'not-mine', tag: 'a' })));
    expect(await extractOf(1, A, { ref: 'b4' }, w.deps)).toMatchObject({ ok: true, value: { frameId: 2, rootDocumentId: 'D2', ref: 'b4', url: `${A}/` } });
    const gone = world([frame(0, `${A}/`)], () => ok({ kind: 'not-mine', tag: 'a' }));
    expect(await extractOf(1, A, { ref: 'b4' }, gone.deps)).toMatchObject({ ok: false, error: { code: 'navigated' } });
    const unknown = world([frame(0, `${A}/`)], () => extractAnswer(`${A}/`));
    expect(await extractOf(1, A, { ref: 'zz4' }, unknown.deps)).toMatchObject({ ok: false, error: { code: 'ref-unknown' } });
    expect(unknown.asked).toHaveLength(0);
  });
  it('an attribute selector is refused before any page is asked', async () => {
    const w = world([frame(0, `${A}/`)], () => extractAnswer(`${A}/`));
    const r = await extractOf(1, A, { selector: 'input[value^=4]' }, w.deps);
    expect(r).toMatchObject({ ok: false, error: { code: 'selector-refused', message: expect.stringMatching(/attribute selectors are not allowed/) } });
    expect(w.asked).toHaveLength(0);
  });
});

describe('wait and verify', () => {
  it('verify answers met false; a wait that ends unmet is wait-timeout; the page is given the wait plus grace', async () => {
    const w = world([frame(0, `${A}/`)], () => checkAnswer(false));
    expect(await checkOf(1, A, 'verify', { text: 'Saved' }, w.deps)).toMatchObject({ ok: true, value: { met: false, timeoutMs: 0, condition: { text: 'Saved' } } });
    expect(w.asked[0]).toMatchObject({ msg: { type: 'echo:semantic:check', condition: { text: 'Saved' }, timeoutMs: 0 } });
    const r = await checkOf(1, A, 'wait', { text: 'Saved', timeoutMs: 700 }, w.deps);
    expect(r).toMatchObject({ ok: false, error: { code: 'wait-timeout', message: expect.stringMatching(/within 700 ms/) } });
    expect(w.asked[1]!.timeoutMs).toBeGreaterThan(700);
    const d = world([frame(0, `${A}/`)], () => checkAnswer(true));
    expect(await checkOf(1, A, 'wait', { text: 'Saved' }, d.deps)).toMatchObject({ ok: true, value: { met: true, timeoutMs: 5000, evidence: { found: 'x' }, elapsedMs: 12 } });
  });
  it('refusals: a redacted needle and a bad selector before the page; the page\'s value-redacted passes with its code', async () => {
    const w = world([frame(0, `${A}/`)], () => err('value-redacted', "the target's value is redacted in the view"));
    expect(await checkOf(1, A, 'verify', { text: '4111 1111 1111 1111' }, w.deps)).toMatchObject({ ok: false, error: { code: 'condition-redacted' } });
    expect(await checkOf(1, A, 'verify', { selector: '[value]', state: 'present' }, w.deps)).toMatchObject({ ok: false, error: { code: 'selector-refused' } });
    expect(w.asked).toHaveLength(0);
    expect(await checkOf(1, A, 'verify', { selector: '#reference', valueContains: '4' }, w.deps)).toMatchObject({ ok: false, error: { code: 'value-redacted' } });
  });
  it('a wait whose top document a navigation replaced: a URL condition is judged on the new document, another is navigated', async () => {
    const w = world([frame(0, `${A}/`)], () => {
      w.state.frames = [frame(0, `${A}/done?token=abc123secret`, 'D9')];
      return null;
    });
    const r = await checkOf(1, A, 'wait', { urlChanged: true }, w.deps);
    expect(r).toMatchObject({ ok: true, value: { met: true, documentId: 'D9', evidence: { newDocument: true, url: `${A}/done` } } });
    const t = world([frame(0, `${A}/`)], () => {
      t.state.frames = [frame(0, `${A}/next`, 'D9')];
      return null;
    });
    expect(await checkOf(1, A, 'wait', { text: 'Saved' }, t.deps)).toMatchObject({ ok: false, error: { code: 'navigated' } });
  });
  it('through the faculty: the operations are declared, and a top that left the shared origin ends sharing', async () => {
    const w = world([frame(0, 'https://elsewhere.example/')], () => checkAnswer(true));
    let ended = false;
    const f = semanticRead(undefined, w.deps);
    expect(f.operations).toEqual(['snapshot', 'extract', 'wait', 'verify']);
    const shared = { tabId: 1, origin: A } as SharedTab;
    const r = await f.read('verify', 1, { text: 'x' }, { sharedTab: async () => shared, endSharing: async () => void (ended = true) });
    expect(r).toMatchObject({ ok: false, error: { code: 'tab-not-shared' } });
    expect(ended).toBe(true);
  });
});
