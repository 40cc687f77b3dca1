/**
 * The sign's keeper (extension/src/background/sign.ts), the effects watch
 * (extension/src/background/effects.ts), the dispatcher's use of them, and the console's
 * re-bounding of what the extension reports (src/main/core/broker/outcome.ts effectsOf), with
 * the browser replaced by recorders. The real browser is in e2e/page-sign and e2e/effects-outside-call.
 */
import { describe, expect, it } from 'vitest';
import { argumentsHash, urlHash } from '../../src/shared/canonical';
import { err, ok, type Result } from '../../src/shared/result';
import { MAX_OPENED_TABS_LISTED, type Grant, type SharedTab } from '../../src/shared/types';
import { badgeLook, countText, DEVELOPER_MODE_COLOR, PENDING_COLOR, Signs, type BadgeLook, type SignDeps } from '../../extension/src/background/sign';
import { noteNewTab, watchEffects } from '../../extension/src/background/effects';
import { Dispatcher, type DispatchRequest } from '../../extension/src/background/dispatch';
import type { DispatchFaculty } from '../../extension/src/background/faculties/registry';
import { webmcpInvoke, type WebMcpPrepared } from '../../extension/src/background/faculties/webmcp-invoke';
import type { SignState, ToSign } from '../../extension/src/lib/messages';
import { effectsOf } from '../../src/main/core/broker/outcome';

const tab = (tabId: number): SharedTab => ({ tabId, windowId: 1, title: '', url: 'https://a.example/', origin: 'https://a.example', documentId: 'D', sharedAt: 1 });

/** Recording deps; `stuck` tabs never answer the page message (a page blocked by a dialog). */
function recorder(stuck = new Set<number>()) {
  const badges: Array<[number, SignState]> = [];
  const page: Array<[number, ToSign['type'], string?]> = [];
  const deps: SignDeps = {
    async tellTop(tabId, msg) {
      page.push([tabId, msg.type, msg.type === 'echo:sign:show' ? msg.state : undefined]);
      if (stuck.has(tabId)) return new Promise(() => {});
      return ok({ state: msg.type === 'echo:sign:show' ? msg.state : 'hidden' }) as Result<{ state: SignState }>;
    },
    async badge(tabId, _look, state) {
      if (tabId !== null) badges.push([tabId, state]);
    },
  };
  return { deps, badges, page };
}

const settle = () => new Promise((r) => setTimeout(r, 0));

describe('Signs', () => {
  it('shows "shared" in new shares, "running" during a run, and takes both down when the share ends', async () => {
    const r = recorder();
    const s = new Signs(r.deps);
    s.tabsListed([tab(1)]);
    await settle();
    expect(r.badges).toEqual([[1, 'shared']]);
    expect(r.page).toEqual([[1, 'echo:sign:show', 'shared']]);
    const end = s.running(1);
    expect(s.stateOf(1)).toBe('running');
    await settle();
    end();
    end(); // a second call changes nothing
    await settle();
    expect(s.stateOf(1)).toBe('shared');
    s.tabsListed([]);
    await settle();
    expect(r.badges.map((b) => b[1])).toEqual(['shared', 'running', 'shared', 'hidden']);
    expect(r.page.map((p) => p[2] ?? p[1])).toEqual(['shared', 'running', 'shared', 'echo:sign:hide']);
  });

  it('the end of a run is drawn in the next task, after the answer that settled it has gone out', async () => {
    const r = recorder();
    const s = new Signs(r.deps);
    s.tabsListed([tab(1)]);
    await settle();
    const end = s.running(1);
    await settle();
    expect(r.badges.map((b) => b[1])).toEqual(['shared', 'running']);
    end();
    expect(s.stateOf(1)).toBe('shared');
    await Promise.resolve();
    expect(r.badges.map((b) => b[1])).toEqual(['shared', 'running']);
    await settle();
    expect(r.badges.map((b) => b[1])).toEqual(['shared', 'running', 'shared']);
    expect(r.page.map((p) => p[2])).toEqual(['shared', 'running', 'shared']);
  });

  it('a tab that is not shared never shows "running"; two runs in one tab keep it running until both end', async () => {
    const r = recorder();
    const s = new Signs(r.deps);
    const endUnshared = s.running(2);
    expect(s.stateOf(2)).toBe('hidden');
    endUnshared();
    s.tabsListed([tab(1)]);
    const a = s.running(1);
    const b = s.running(1);
    a();
    expect(s.stateOf(1)).toBe('running');
    b();
    expect(s.stateOf(1)).toBe('shared');
  });

  it('a page that does not answer holds up neither the toolbar badge nor, for long, the next message to it', async () => {
    const r = recorder(new Set([1]));
    const s = new Signs(r.deps);
    s.tabsListed([tab(1)]);
    const end = s.running(1);
    end();
    await settle();
    // The badge followed every change at once, though the page has not answered the first message.
    expect(r.badges.map((b) => b[1])).toEqual(['shared', 'running', 'shared']);
    expect(r.page.length).toBe(1);
    expect(await s.answers(1, 20)).toBe(false);
  });

  it('a page that answers, or that has no sign module to answer (fails at once), is not called unresponsive', async () => {
    const r = recorder();
    expect(await new Signs(r.deps).answers(1, 1_000)).toBe(true);
    const absent = new Signs({ ...r.deps, tellTop: async () => null });
    expect(await absent.answers(1, 1_000)).toBe(true);
  });
});

describe('watchEffects', () => {
  const hooks = (alive: boolean) => {
    const events: string[] = [];
    return {
      events,
      running: (tabId: number) => (events.push(`run ${tabId}`), () => void events.push(`end ${tabId}`)),
      answers: async () => alive,
    };
  };

  it('lists the tabs opened from the target tab while it ran, stripped and bounded; other tabs and earlier ones are not', async () => {
    noteNewTab(7, 100, 'https://a.example/before', Date.now() - 10_000);
    const h = hooks(true);
    const w = watchEffects({ tabId: 7, frameId: 0, documentId: 'D' }, h);
    noteNewTab(8, 101, 'https://a.example/other-tab');
    for (let i = 0; i < MAX_OPENED_TABS_LISTED + 2; i++) noteNewTab(7, 200 + i, `https://a.example/new?i=${i}&access_token=SECRET`);
    const e = await w.finish(false);
    expect(e?.openedTabs).toHaveLength(MAX_OPENED_TABS_LISTED);
    expect(e?.openedTabs?.[0]).toEqual({ url: 'https://a.example/new?i=0' });
    expect(e?.openedTabsOmitted).toBe(2);
    expect(JSON.stringify(e)).not.toContain('SECRET');
    expect(e?.pageUnresponsive).toBeUndefined();
    expect(h.events).toEqual(['run 7', 'end 7']);
  });

  it('after a timeout, asks whether the page answers: pageUnresponsive when it does not; nothing seen is undefined', async () => {
    const stuck = await watchEffects({ tabId: 9, frameId: 0, documentId: 'D' }, hooks(false)).finish(true);
    expect(stuck).toEqual({ pageUnresponsive: true });
    expect(await watchEffects({ tabId: 9, frameId: 0, documentId: 'D' }, hooks(true)).finish(true)).toBeUndefined();
    expect(await watchEffects({ tabId: 9, frameId: 0, documentId: 'D' }, hooks(false)).finish(false)).toBeUndefined();
  });
});

describe('the dispatcher with a watch', () => {
  const URL_ = 'https://a.example/p';
  async function req(timeoutMs: number): Promise<DispatchRequest> {
    const args = {};
    const grant: Grant = {
      requestId: `w${timeoutMs}`, faculty: 'webmcp-invoke', operation: 'invoke', tabId: 1, frameId: 0, documentId: 'DOC', origin: 'https://a.example',
      urlHash: await urlHash(URL_, URL_), subjectHash: 'd'.repeat(64), argumentsHash: await argumentsHash(args),
      nonce: String(timeoutMs).padStart(32, '0'), expiresAt: Date.now() + 30_000, mac: 'f'.repeat(64),
    };
    return { op: 'dispatch', faculty: 'webmcp-invoke', operation: 'invoke', target: { tabId: 1, frameId: 0, documentId: 'DOC' }, subject: { toolName: 't', descriptorHash: 'd'.repeat(64) }, arguments: args, grant, timeoutMs };
  }
  const H = 'd'.repeat(64);
  /** The real webmcp-invoke faculty with its page effects replaced (as in unit/extension-dispatcher). */
  const faculty = (execute: DispatchFaculty<WebMcpPrepared>['execute']): DispatchFaculty =>
    ({ ...webmcpInvoke(async () => [{ canonical: '{"c":1}', descriptorHash: H }]), pageUrls: async () => ({ tab: URL_, frame: URL_ }), execute, abort: () => undefined }) as DispatchFaculty<unknown>;
  const deps = (finishes: boolean[], effects: Awaited<ReturnType<ReturnType<NonNullable<ConstructorParameters<typeof Dispatcher>[0]['watch']>>['finish']>>) => ({
    verifyGrant: async () => true, now: () => Date.now(), consumeNonce: async () => true,
    sharedOrigin: async () => 'https://a.example', frameDocument: async () => ({ documentId: 'DOC', origin: 'https://a.example' }),
    watch: () => ({ finish: async (timedOut: boolean) => (finishes.push(timedOut), effects) }),
  });

  it('attaches what the watch saw to the answer, and says a timed-out page does not respond', async () => {
    const finishes: boolean[] = [];
    const answered = await new Dispatcher(deps(finishes, { openedTabs: [{ url: 'https://a.example/n' }] })).dispatch(await req(5_000), faculty(async () => ok({ result: '"x"', truncated: false, elapsedMs: 1 })));
    expect(answered).toMatchObject({ ok: true, value: { outcome: 'succeeded', effects: { openedTabs: [{ url: 'https://a.example/n' }] } } });
    const stuck = await new Dispatcher(deps(finishes, { pageUnresponsive: true })).dispatch(await req(20), faculty(() => new Promise(() => {})));
    expect(stuck).toMatchObject({ ok: true, value: { outcome: 'outcome-unknown', effects: { pageUnresponsive: true }, error: { code: 'timeout' } } });
    expect(stuck.ok && stuck.value.error?.message).toMatch(/does not respond/);
    expect(finishes).toEqual([false, true]);
    const failed = await new Dispatcher(deps(finishes, undefined)).dispatch(await req(5_001), faculty(async () => err('tool-failed', 'no')));
    expect(failed.ok && failed.value.effects).toBeUndefined();
  });
});

describe('the dispatcher tells the page before it starts the watch', () => {
  it('sends the run first, then starts the watch from the moment the dispatch began', async () => {
    const URL_ = 'https://a.example/p';
    const H = 'd'.repeat(64);
    const args = {};
    const grant: Grant = {
      requestId: 'order', faculty: 'webmcp-invoke', operation: 'invoke', tabId: 1, frameId: 0, documentId: 'DOC', origin: 'https://a.example',
      urlHash: await urlHash(URL_, URL_), subjectHash: H, argumentsHash: await argumentsHash(args),
      nonce: 'a'.repeat(32), expiresAt: Date.now() + 30_000, mac: 'f'.repeat(64),
    };
    const order: string[] = [];
    let toldAt = 0;
    let watchedFrom = 0;
    const faculty = {
      ...webmcpInvoke(async () => [{ canonical: '{"c":1}', descriptorHash: H }]),
      pageUrls: async () => ({ tab: URL_, frame: URL_ }),
      // The page is told synchronously, as chrome.tabs.sendMessage does before its first await.
      execute: () => {
        order.push('page told');
        toldAt = Date.now();
        return Promise.resolve(ok({ result: '"x"', truncated: false, elapsedMs: 1 }));
      },
      abort: () => undefined,
    } as DispatchFaculty<unknown>;
    const d = new Dispatcher({
      verifyGrant: async () => true, now: () => Date.now(), consumeNonce: async () => true,
      sharedOrigin: async () => 'https://a.example', frameDocument: async () => ({ documentId: 'DOC', origin: 'https://a.example' }),
      watch: (_t, since) => {
        order.push('watch started');
        watchedFrom = since;
        return { finish: async () => (order.push('watch finished'), undefined) };
      },
    });
    const out = await d.dispatch({ op: 'dispatch', faculty: 'webmcp-invoke', operation: 'invoke', target: { tabId: 1, frameId: 0, documentId: 'DOC' }, subject: { toolName: 't', descriptorHash: H }, arguments: args, grant, timeoutMs: 5_000 }, faculty);
    expect(out).toMatchObject({ ok: true, value: { outcome: 'succeeded' } });
    expect(order).toEqual(['page told', 'watch started', 'watch finished']);
    expect(watchedFrom).toBeGreaterThan(0);
    expect(watchedFrom).toBeLessThanOrEqual(toldAt);
  });

  it('a new tab opened at the very moment the dispatch began is listed (the watch counts from the start, not from when it was set up)', async () => {
    const start = Date.now() - 50;
    noteNewTab(31, 310, 'https://a.example/opened-at-start', start);
    const e = await watchEffects({ tabId: 31, frameId: 0, documentId: 'D' }, { running: () => () => undefined, answers: async () => true }, start).finish(false);
    expect(e?.openedTabs).toEqual([{ url: 'https://a.example/opened-at-start' }]);
  });
});

describe('effectsOf (the console re-bounds what the extension reports)', () => {
  it('strips and cuts the URLs again, counts the rest, keeps only a true pageUnresponsive', () => {
    const many = Array.from({ length: MAX_OPENED_TABS_LISTED + 3 }, (_, i) => ({ url: `https://user:pw@a.example/${i}?token=T` }));
    const e = effectsOf({ outcome: 'succeeded', effects: { openedTabs: many, openedTabsOmitted: 1, pageUnresponsive: 'yes' as unknown as boolean } });
    expect(e.openedTabs).toHaveLength(MAX_OPENED_TABS_LISTED);
    expect(e.openedTabs?.[0]).toEqual({ url: 'https://a.example/0' });
    expect(e.openedTabsOmitted).toBe(4);
    expect(e.pageUnresponsive).toBeUndefined();
    expect(effectsOf({ outcome: 'succeeded' })).toEqual({});
  });
});

describe('the action badge carries the console state (issue 12 item 7): pending count, red while developer mode is on', () => {
  it('badgeLook: the count is the text while approvals wait, the sign otherwise; red in developer mode on every tab', () => {
    expect(badgeLook('hidden', { pending: 0, developerMode: false })).toMatchObject({ text: '' });
    expect(badgeLook('hidden', { pending: 3, developerMode: false })).toMatchObject({ text: '3', color: PENDING_COLOR, title: expect.stringContaining('3 approvals waiting') });
    expect(badgeLook('shared', { pending: 1, developerMode: false })).toMatchObject({ text: '1', title: expect.stringContaining('this tab is shared') });
    expect(badgeLook('shared', { pending: 0, developerMode: false })).toMatchObject({ text: 'ON', color: '#1a73e8' });
    expect(badgeLook('running', { pending: 0, developerMode: true })).toMatchObject({ text: 'RUN', color: DEVELOPER_MODE_COLOR, title: expect.stringContaining('DEVELOPER MODE') });
    expect(badgeLook('hidden', { pending: 2, developerMode: true })).toMatchObject({ text: '2', color: DEVELOPER_MODE_COLOR });
    expect([countText(0), countText(99), countText(100)]).toEqual(['', '99', '99+']);
  });

  it('consoleState sets the global badge and redraws every tab the sign touched, once per change', async () => {
    const drawn: Array<[number | null, BadgeLook]> = [];
    const signs = new Signs({ tellTop: async () => null, badge: async (tabId, look) => void drawn.push([tabId, look]) });
    signs.tabsListed([tab(5)]);
    drawn.length = 0;
    signs.consoleState({ pending: 2, developerMode: true });
    signs.consoleState({ pending: 2, developerMode: true }); // no change: nothing drawn
    expect(drawn).toEqual([
      [null, expect.objectContaining({ text: '2', color: DEVELOPER_MODE_COLOR })],
      [5, expect.objectContaining({ text: '2', color: DEVELOPER_MODE_COLOR })],
    ]);
    // The share ends: the tab's own badge keeps the count (per-tab values equal to the global ones).
    drawn.length = 0;
    signs.tabsListed([]);
    await settle();
    expect(drawn).toEqual([[5, expect.objectContaining({ text: '2', color: DEVELOPER_MODE_COLOR })]]);
  });
});
