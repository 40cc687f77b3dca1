// Renderer logic without a browser: the four stores against the in-test
// ConsoleApi, event routing, the link label, the token hand-off from the URL
// fragment, untrusted-text display helpers, and the WebSocket client against
// the real web host.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { WebSocket } from 'ws';
import { startWebHost, type WebHost } from '../../src/main/web/server';
import { createApprovalsStore, endingSentence, nextOpenId, sortApprovals } from '../../src/renderer/stores/approvals';
import type { Receipt } from '../../src/shared/receipt';
import { createConnectionStore, linkLabel } from '../../src/renderer/stores/connection';
import { applyEvent, bindConsole, createConsoleStores } from '../../src/renderer/stores';
import { createReceiptsStore, mergeReceipts, RECEIPT_PAGE_SIZE } from '../../src/renderer/stores/receipts';
import { createSettingsStore } from '../../src/renderer/stores/settings';
import { confusableWords, formatCount, formatDuration, hiddenCount, mixedScriptWords, prettyJson, revealInvisible, timeLeftMs } from '../../src/renderer/text';
import { exchangeToken, sessionFragment, sessionFromFragment, takeToken } from '../../src/renderer/transport/token';
import { webSession } from '../support/web-session';
import { createWsClient } from '../../src/renderer/transport/ws-client';
import { LIMITS } from '../../src/shared/limits';
import { FakeConsole, sampleApproval } from '../support/fake-console';

const t0 = 1_700_000_000_000;
const A = sampleApproval(t0, { requestId: 'a' });
const B = sampleApproval(t0 + 5, { requestId: 'b' });
const C = sampleApproval(t0 + 9, { requestId: 'c' });

describe('approvals store', () => {
  it('sorts oldest first and opens the oldest by itself', () => {
    const s = createApprovalsStore(new FakeConsole());
    s.getState().setPending([C, A, B]);
    expect(s.getState().pending.map((a) => a.requestId)).toEqual(['a', 'b', 'c']);
    expect(s.getState().openId).toBe('a');
    expect(sortApprovals([B, A]).map((a) => a.requestId)).toEqual(['a', 'b']);
  });

  it('does not re-open a dismissed request, but opens the next one', () => {
    const s = createApprovalsStore(new FakeConsole());
    s.getState().setPending([A, B]);
    s.getState().close();
    expect(s.getState().openId).toBeNull();
    expect(s.getState().dismissed).toEqual(['a']);
    s.getState().setPending([A, B, C]);
    expect(s.getState().openId).toBe('b');
    expect(nextOpenId([A], null, ['a'])).toBeNull();
    s.getState().open('a');
    expect(s.getState().openId).toBe('a');
    s.getState().open('nope');
    expect(s.getState().openId).toBe('a');
  });

  it('says so when the open request vanishes (expired) without a decision', () => {
    const s = createApprovalsStore(new FakeConsole());
    s.getState().setPending([A, B]);
    s.getState().setPending([B]);
    expect(s.getState().notice).toMatch(/no longer pending/);
    expect(s.getState().openId).toBe('b');
  });

  it("says why when the request's ending receipt arrives: a URL change is named as such; other requests' receipts change nothing", () => {
    const s = createApprovalsStore(new FakeConsole());
    s.getState().setPending([A, B]);
    s.getState().setPending([B]);
    const receipt = (requestId: string, event: string, detail: Record<string, unknown>) => ({ requestId, event, detail }) as unknown as Receipt;
    s.getState().explainEnd(receipt('b', 'refused', { code: 'navigated', message: 'x' }));
    expect(s.getState().notice).toMatch(/no longer pending/);
    s.getState().explainEnd(receipt('a', 'approval-shown', {}));
    expect(s.getState().notice).toMatch(/no longer pending/);
    s.getState().explainEnd(receipt('a', 'refused', { code: 'navigated', message: 'Refused before dispatch: …' }));
    expect(s.getState().notice).toMatch(/URL changed while it waited/);
    expect(s.getState().notice).toMatch(/cannot be approved/);
    // A refused console-API call (a late "approve": requestId null) is no request's end.
    s.getState().explainEnd({ requestId: null, faculty: 'console', event: 'refused', detail: { code: 'unknown-request', message: 'No pending approval request' } } as unknown as Receipt);
    expect(s.getState().notice).toMatch(/URL changed while it waited/);
    // An ending receipt that arrives before the list changes is remembered for it.
    s.getState().setPending([C]);
    s.getState().explainEnd(receipt('c', 'expired', {}));
    s.getState().setPending([]);
    expect(s.getState().notice).toMatch(/expired before you decided/);
    expect(endingSentence(receipt('z', 'expired', {}))).toMatch(/expired/);
    expect(endingSentence(receipt('z', 'refused', { code: 'policy-denied', message: 'Denied by rule' }))).toMatch(/policy-denied.*Denied by rule/);
    expect(endingSentence(receipt('z', 'succeeded', {}))).toBeNull();
  });

  it("routes receipt events to the vanished request's notice too", () => {
    const stores = createConsoleStores(new FakeConsole() as never);
    stores.approvals.getState().setPending([A]);
    stores.approvals.getState().setPending([]);
    applyEvent(stores, { kind: 'receipts', receipts: [{ requestId: 'a', event: 'refused', detail: { code: 'navigated' } } as unknown as Receipt] });
    expect(stores.approvals.getState().notice).toMatch(/URL changed/);
  });

  it('decides once, through the API, and moves on', async () => {
    const fake = new FakeConsole({ approvals: [A, B] });
    const s = createApprovalsStore(fake);
    s.getState().setPending([A, B]);
    const first = s.getState().decide('a', 'deny', '  not now  ');
    const second = s.getState().decide('a', 'approve'); // a double click while busy
    expect(await first).toBe(true);
    expect(await second).toBe(false);
    expect(fake.calls).toEqual([{ method: 'decideApproval', params: { requestId: 'a', decision: 'deny', reason: 'not now' } }]);
    expect(s.getState().openId).toBe('b');
    expect(s.getState().notice).toBeNull();
    await s.getState().decide('b', 'approve', '   ');
    expect(fake.calls[1]).toEqual({ method: 'decideApproval', params: { requestId: 'b', decision: 'approve' } });
  });

  it('approving a form that only fills tells the person to press the page’s button; one that submits says nothing more', async () => {
    const form = { action: 'http://x/cb', actionHash: 'c'.repeat(64), method: 'post', values: [] };
    const waiting = { ...A, subject: { ...A.subject, form: { ...form, autosubmit: false } } } as typeof A;
    const submits = { ...B, subject: { ...B.subject, form: { ...form, autosubmit: true } } } as typeof B;
    const fake = new FakeConsole({ approvals: [waiting, submits] });
    const s = createApprovalsStore(fake);
    s.getState().setPending([waiting, submits]);
    expect(await s.getState().decide('b', 'approve')).toBe(true);
    expect(s.getState().notice).toBeNull();
    expect(await s.getState().decide('a', 'approve')).toBe(true);
    expect(s.getState().notice).toMatch(/Nothing is sent until you press the form's own submit button/);
  });

  it('keeps the dialog open with the error when the host refuses', async () => {
    const fake = new FakeConsole({ approvals: [] });
    const s = createApprovalsStore(fake);
    s.getState().setPending([A]);
    expect(await s.getState().decide('a', 'approve')).toBe(false);
    expect(s.getState().error?.code).toBe('unknown-request');
    expect(s.getState().openId).toBe('a');
  });
});

describe('receipts store', () => {
  it('pages newest first through queryReceipts and merges pushed receipts', async () => {
    const fake = new FakeConsole({ receiptCount: RECEIPT_PAGE_SIZE + 7 });
    const s = createReceiptsStore(fake);
    await s.getState().loadFirst();
    expect(s.getState().items).toHaveLength(RECEIPT_PAGE_SIZE);
    expect(s.getState().items[0]!.seq).toBe(RECEIPT_PAGE_SIZE + 7);
    await s.getState().loadMore();
    expect(s.getState().items).toHaveLength(RECEIPT_PAGE_SIZE + 7);
    expect(s.getState().nextCursor).toBeNull();
    await s.getState().loadMore(); // nothing more: no call
    expect(fake.calls.filter((c) => c.method === 'queryReceipts')).toHaveLength(2);
    const now = Date.now();
    const newest = { ...fake.receipts[0]!, id: 'new', seq: 999, time: now + 999 };
    s.getState().add(newest);
    s.getState().add(newest);
    expect(s.getState().items[0]!.id).toBe('new');
    expect(s.getState().items.filter((r) => r.id === 'new')).toHaveLength(1);
    expect(mergeReceipts([], [])).toEqual([]);
    // Newer receipts go on top without re-sorting the rest; a repeat among them is kept once; an older one is placed by (time, seq).
    const list = s.getState().items;
    const r = (id: string, seq: number) => ({ ...fake.receipts[0]!, id, seq, time: now + seq });
    const merged = mergeReceipts(list, [r('n2', 1001), r('n1', 1000), r('n2', 1001)]);
    expect(merged.map((x) => x.seq)).toEqual([1001, 1000, ...list.map((x) => x.seq)]);
    expect(merged.slice(2)).toEqual(list);
    const late = mergeReceipts(merged, [r('late', 500)]);
    expect(late.map((x) => x.seq)).toEqual([...merged.map((x) => x.seq), 500].sort((x, y) => y - x));
  });

  it('applies a pushed batch of receipts in one store update, each placed by seq and its request trail joined', async () => {
    const fake = new FakeConsole({ receiptCount: 5 });
    const stores = createConsoleStores(fake);
    await stores.receipts.getState().loadFirst();
    await stores.receipts.getState().find(fake.receipts[2]!.requestId!);
    let updates = 0;
    const off = stores.receipts.subscribe(() => void updates++);
    const shown = stores.receipts.getState().search!.results.length;
    const batch = [
      { ...fake.receipts[0]!, id: 'b1', seq: 101, time: Date.now(), requestId: fake.receipts[2]!.requestId },
      { ...fake.receipts[0]!, id: 'b2', seq: 103, time: Date.now(), requestId: 'elsewhere' },
      { ...fake.receipts[0]!, id: 'b3', seq: 102, time: Date.now(), requestId: 'elsewhere' },
    ];
    applyEvent(stores, { kind: 'receipts', receipts: batch });
    off();
    expect(updates).toBe(1);
    expect(stores.receipts.getState().items.slice(0, 3).map((r) => r.id)).toEqual(['b2', 'b3', 'b1']);
    expect(stores.receipts.getState().search!.results.map((r) => r.id)).toContain('b1');
    expect(stores.receipts.getState().search!.results).toHaveLength(shown + 1);
    applyEvent(stores, { kind: 'receipts', receipts: [] });
    expect(stores.receipts.getState().items).toHaveLength(8);
  });

  it('shows the verify report', async () => {
    const fake = new FakeConsole({ receiptCount: 3 });
    fake.verifyReport = { ok: false, count: 3, headHash: 'h', firstBroken: { seq: 2, reason: 'hash mismatch' } };
    const s = createReceiptsStore(fake);
    await s.getState().runVerify();
    expect(s.getState().verify).toEqual(fake.verifyReport);
  });
});

describe('connection store and link label', () => {
  it('calls connected only with a fresh heartbeat', () => {
    const now = t0;
    expect(linkLabel({ state: 'connected', paired: true, lastHeartbeatAt: now - 2_000 }, now)).toMatchObject({ tone: 'ok', text: 'Connected' });
    expect(linkLabel({ state: 'connected', paired: true, lastHeartbeatAt: now - LIMITS.heartbeatTimeoutMs - 1 }, now)).toMatchObject({ tone: 'warn', text: 'Not connected' });
    expect(linkLabel({ state: 'connected', paired: true }, now).text).toBe('Not connected');
    expect(linkLabel({ state: 'awaiting-pairing', paired: false, pairingCode: '123 456' }, now).text).toBe('Awaiting pairing');
    expect(linkLabel({ state: 'version-mismatch', paired: true }, now)).toMatchObject({ tone: 'bad', text: 'Version mismatch' });
    expect(linkLabel({ state: 'no-extension', paired: false }, now).text).toBe('Not connected');
    expect(linkLabel(null, now).text).toBe('Unknown');
  });

  it('shares and unshares tabs, creates and revokes agent tokens (the secret held only until Done), reports errors', async () => {
    const fake = new FakeConsole();
    const s = createConnectionStore(fake);
    await s.getState().loadShareable();
    expect(s.getState().shareable?.map((t) => t.tabId)).toEqual([42, 7]);
    await s.getState().share(7);
    expect(s.getState().sharedTabs.map((t) => t.tabId)).toEqual([7]);
    await s.getState().unshare(7);
    expect(s.getState().sharedTabs).toEqual([]);
    await s.getState().createAgentToken('Claude Desktop');
    const made = s.getState().newToken!;
    expect(made.token.name).toBe('Claude Desktop');
    expect(made.secret.length).toBeGreaterThan(20);
    expect(s.getState().agentTokens.map((t) => t.name)).toContain('Claude Desktop');
    s.getState().dismissNewToken();
    expect(s.getState().newToken).toBeNull();
    await s.getState().createAgentToken('Cursor');
    const cursor = s.getState().newToken!.token.id;
    await s.getState().revokeAgentToken(cursor);
    expect(s.getState().agentTokens.map((t) => t.id)).not.toContain(cursor);
    expect(s.getState().newToken).toBeNull(); // a revoked token's secret leaves the screen with it
    await s.getState().share(12345);
    expect(s.getState().error?.code).toBe('unknown-tab');
  });
});

describe('settings store', () => {
  it('checks the bounds before asking the host', async () => {
    const fake = new FakeConsole();
    const s = createSettingsStore(fake);
    await s.getState().saveApprovalTimeout(5);
    await s.getState().saveApprovalTimeout(1.5);
    expect(fake.calls).toEqual([]);
    expect(s.getState().error?.code).toBe('invalid-input');
    await s.getState().saveApprovalTimeout(90);
    expect(fake.calls).toEqual([{ method: 'updateSettings', params: { approvalTimeoutMs: 90_000 } }]);
    expect(s.getState().settings?.approvalTimeoutMs).toBe(90_000);
  });
});

describe('event routing', () => {
  it('routes each pushed event to its store, and loads the snapshot when bound (the receipts only when their page asks)', async () => {
    const fake = new FakeConsole({ approvals: [A], receiptCount: 2 });
    const api = Object.assign(fake, {});
    const stores = createConsoleStores(api);
    const off = bindConsole(api, stores, { state: () => 'open', onState: () => () => undefined });
    await vi.waitFor(() => expect(stores.approvals.getState().pending).toHaveLength(1));
    // The receipts page loads its first page when first shown, not at start (the timeline's first screenful does not wait for it).
    expect(fake.calls.filter((c) => c.method === 'queryReceipts')).toEqual([]);
    applyEvent(stores, { kind: 'receipts', receipts: [] });
    await stores.receipts.getState().loadFirst();
    expect(stores.receipts.getState().items).toHaveLength(2);
    fake.emit({ kind: 'link', link: { state: 'awaiting-pairing', paired: false, pairingCode: '481 207' } });
    expect(stores.connection.getState().link?.pairingCode).toBe('481 207');
    applyEvent(stores, { kind: 'settings', settings: { approvalTimeoutMs: 30_000, developerMode: true, developerModeIdleMinutes: 30, retentionDays: null } });
    expect(stores.settings.getState().settings?.developerMode).toBe(true);
    applyEvent(stores, { kind: 'shared-tabs', tabs: [] });
    expect(stores.connection.getState().sharedTabs).toEqual([]);
    off();
    fake.emit({ kind: 'approvals', approvals: [] });
    expect(stores.approvals.getState().pending).toHaveLength(1);
  });
});

describe('token hand-off', () => {
  const token = 'AbCdEfGhIjKlMnOpQrStUvWxYz0123456789_-abcde';
  it('takes the token from the fragment and removes it from the URL; it is never stored (issue 9 item 4)', () => {
    const replaceState = vi.fn();
    expect(takeToken({ hash: `#token=${token}`, pathname: '/', search: '' }, { replaceState })).toBe(token);
    expect(replaceState).toHaveBeenCalledWith(null, '', '/');
    expect(takeToken({ hash: '', pathname: '/', search: '' }, { replaceState })).toBeNull();
  });

  it('refuses a malformed token, and has none without a fragment', () => {
    const replaceState = vi.fn();
    expect(takeToken({ hash: '#token=<script>', pathname: '/', search: '' }, { replaceState })).toBeNull();
    expect(replaceState).toHaveBeenCalled();
    expect(takeToken({ hash: '', pathname: '/', search: '' }, { replaceState })).toBeNull();
  });

  it('spends the token once at POST /session on its own origin, and never throws', async () => {
    const seen: unknown[] = [];
    const sid = 'S'.repeat(32);
    const answer = (ok: boolean, body: unknown) => ({ ok, json: async () => body });
    expect(await exchangeToken('http://127.0.0.1:5', token, async (u, init) => (seen.push([u, init]), answer(true, { session: sid })))).toBe(sid);
    expect(seen).toEqual([['http://127.0.0.1:5/session', { method: 'POST', credentials: 'same-origin', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ token }) }]]);
    expect(await exchangeToken('http://127.0.0.1:5', token, async () => answer(false, null))).toBeNull();
    expect(await exchangeToken('http://127.0.0.1:5', token, async () => answer(true, { session: '../x' }))).toBeNull();
    expect(await exchangeToken('http://127.0.0.1:5', token, async () => Promise.reject(new Error('offline')))).toBeNull();
    expect(sessionFromFragment(sessionFragment(sid))).toBe(sid);
    expect(sessionFromFragment('#session=short')).toBeNull();
  });
});

describe('untrusted text', () => {
  it('reveals hidden characters by category, astral ones too (issue 9 item 5): TAG runs show what they spell', () => {
    const tags = [...'send to eve'].map((c) => String.fromCodePoint(0xe0000 + c.charCodeAt(0))).join('');
    expect(revealInvisible(`ok${tags}!`)).toBe('ok⟨hidden TAG text "send to eve"⟩!');
    expect(hiddenCount(`ok${tags}!`)).toBe(11);
    // variation selectors (BMP and supplement), private use (BMP and plane 15), unassigned, soft hyphen, word joiner, line separator
    for (const [c, cp] of [['\uFE0F', 'FE0F'], ['\u{E0100}', 'E0100'], ['\uE000', 'E000'], ['\u{F0000}', 'F0000'], ['\u{E0080}', 'E0080'], ['\u00AD', '00AD'], ['\u2060', '2060'], ['\u2028', '2028'], ['\u3164', '3164']] as const) {
      expect(revealInvisible(`a${c}b`), cp).toBe(`a⟨U+${cp}⟩b`);
      expect(hiddenCount(`a${c}b`), cp).toBe(1);
    }
    expect(hiddenCount('plain text, émoji 😀, 日本語\n\t')).toBe(0);
  });

  it('flags words mixing scripts beyond UTS #39 "Highly Restrictive", and only those', () => {
    expect(mixedScriptWords('https://p\u0430ypal.example/login')).toEqual([{ word: 'p\u0430ypal', scripts: ['Latin', 'Cyrillic'] }]);
    expect(mixedScriptWords('\u03BFpen the d\u043Eor')).toEqual([
      { word: '\u03BFpen', scripts: ['Greek', 'Latin'] },
      { word: 'd\u043Eor', scripts: ['Latin', 'Cyrillic'] },
    ]);
    // Japanese (Han + Hiragana + Katakana + Latin), Korean (Hangul + Han) and whole-script words are not mixing.
    expect(mixedScriptWords('漢字とカタカナとABC 한국어漢字 Москва café naïve')).toEqual([]);
  });


  it('flags whole-script and compatibility look-alikes of Latin words with the UTS #39 confusables table (issue 9 item 5)', () => {
    // All Cyrillic "раураl" mixes no scripts, so only the confusables table catches it.
    expect(mixedScriptWords('send it to \u0440\u0430\u0443\u0440\u0430l')).toEqual([{ word: '\u0440\u0430\u0443\u0440\u0430l', scripts: ['Cyrillic', 'Latin'] }]);
    expect(mixedScriptWords('grant \u0455\u0441\u043e\u0440\u0435 admin')).toEqual([]);
    expect(confusableWords('grant \u0455\u0441\u043e\u0440\u0435 admin')).toEqual([{ word: '\u0455\u0441\u043e\u0440\u0435', looksLike: 'scope' }]);
    // Full-width and mathematical letters (compatibility forms), a Cherokee capital, a ligature.
    expect(confusableWords('to \uff4d\uff41\uff4c\uff4c\uff4f\uff52\uff59@evil, \u{1d41a}\u{1d41d}\u{1d426}\u{1d422}\u{1d427} \u13aapple \ufb01le')).toEqual([
      { word: '\uff4d\uff41\uff4c\uff4c\uff4f\uff52\uff59', looksLike: 'mallory' },
      { word: '\u{1d41a}\u{1d41d}\u{1d426}\u{1d422}\u{1d427}', looksLike: 'admin' },
      { word: '\u13aapple', looksLike: 'Apple' },
      { word: '\ufb01le', looksLike: 'file' },
    ]);
    // Plain ASCII, accented Latin, ordinary Cyrillic, Greek and CJK words, and one-letter words in their own script are not flagged.
    expect(confusableWords('mI01 rn hello café naïve señor Straße Zürich İstanbul Москва сказал хорошо а Καλημέρα Ο 東京都 서울 カタカナ العربية')).toEqual([]);
    expect(confusableWords('x'.repeat(5) + ' \u0430\u0430'.repeat(20), 3)).toHaveLength(3);
  });

  it('reveals bidi overrides, zero-width and control characters, keeps newlines', () => {
    expect(revealInvisible('abc\u202Egnp.exe')).toBe('abc⟨U+202E⟩gnp.exe');
    expect(revealInvisible('a\u200Bb\u0000c\nd\te')).toBe('a⟨U+200B⟩b⟨U+0000⟩c\nd\te');
    expect(revealInvisible('<img src=x onerror=alert(1)>')).toBe('<img src=x onerror=alert(1)>');
    expect(prettyJson({ a: 'x\u2066y' })).toBe('{\n  "a": "x⟨U+2066⟩y"\n}');
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(prettyJson(cyclic)).toBe('(not representable as JSON)');
  });

  it('formats the time left', () => {
    expect(formatDuration(119_001)).toBe('2:00');
    expect(formatDuration(61_000)).toBe('1:01');
    expect(formatDuration(-5)).toBe('0:00');
    expect(formatDuration(3_600_000)).toBe('1:00:00');
    // Counts as toLocaleString('en') writes them, without Intl.
    for (const n of [0, 7, 999, 1000, 12_345, 1_000_000, 196_000, 1_234_567_890, -4200]) expect(formatCount(n)).toBe(n.toLocaleString('en'));
    // Odd inputs read as Intl writes them, never a truncated or exponent form ("1,234" for 1234.5, "1e+21", "-0" for -0.5).
    for (const n of [1234.5, -0.5, NaN, Infinity, -Infinity, 1e21, 2 ** 53 + 2]) expect(formatCount(n)).toBe(n.toLocaleString('en'));
  });

  it('never shows more time left than the request timeout, even with a clock tick from before it arrived', () => {
    const a = { createdAt: 1_000_000, expiresAt: 1_120_000 };
    expect(formatDuration(timeLeftMs(a, 999_200))).toBe('2:00'); // stale tick: would read 2:01
    expect(timeLeftMs(a, 1_060_000)).toBe(60_000);
    expect(timeLeftMs(a, 1_130_000)).toBeLessThan(0);
  });
});

describe('WebSocket client against the web host', () => {
  let dir: string;
  let host: WebHost;
  let fake: FakeConsole;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'echo-wsc-'));
    writeFileSync(path.join(dir, 'index.html'), 'x');
    fake = new FakeConsole({ approvals: [A] });
    host = await startWebHost({ api: fake, subscribe: (l) => fake.onEvent(l), rendererDir: dir });
  });
  afterAll(async () => {
    await host.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const socketWith = (cookie: string | null) => (url: string) => new WebSocket(url, { headers: { origin: host.origin, ...(cookie ? { cookie } : {}) } }) as never;

  it('authenticates (session cookie), calls, and receives events', async () => {
    const session = await webSession(host);
    const client = createWsClient({ origin: host.origin, ready: Promise.resolve(session.sid), createSocket: socketWith(session.cookie) });
    const snap = await client.api.getSnapshot();
    expect(client.state()).toBe('open');
    expect(snap).toMatchObject({ ok: true, value: { approvals: [{ requestId: 'a' }] } });
    const events: unknown[] = [];
    client.api.onEvent((e) => events.push(e));
    expect(await client.api.decideApproval({ requestId: 'a', decision: 'approve' })).toEqual({ ok: true, value: null });
    await vi.waitFor(() => expect(events).toContainEqual({ kind: 'approvals', approvals: [] }));
    expect(await client.api.shareTab({ tabId: -1 })).toMatchObject({ ok: false, error: { code: 'invalid-params' } });
    client.close();
  });

  /** A socket factory that also writes what goes out (`sent <type or method>`) and the welcome coming back, in order. */
  const loggedSocket = (cookie: string | null, log: string[]) => (url: string) => {
    const ws = new WebSocket(url, { headers: { origin: host.origin, ...(cookie ? { cookie } : {}) } });
    const send = ws.send.bind(ws);
    ws.send = ((d: string) => {
      const m = JSON.parse(d) as { type?: string; method?: string };
      log.push(`sent ${m.type ?? m.method}`);
      send(d);
    }) as never;
    // Registered before the client's own onmessage, so it logs before the client acts.
    ws.on('message', (d) => {
      if ((JSON.parse(String(d)) as { type?: string }).type === 'welcome') log.push('welcome');
    });
    return ws as never;
  };

  it('sends the calls made before the first connection right behind the hello, before the welcome comes back', async () => {
    const session = await webSession(host);
    const log: string[] = [];
    const client = createWsClient({ origin: host.origin, ready: session.sid, createSocket: loggedSocket(session.cookie, log) });
    const [snap, page] = await Promise.all([client.api.getSnapshot(), client.api.queryReceipts({ limit: 1 })]);
    expect(snap.ok).toBe(true);
    expect(page.ok).toBe(true);
    // One round trip for the first screenful, not two: the answers were asked before the welcome.
    expect(log).toEqual(['sent hello', 'sent getSnapshot', 'sent queryReceipts', 'welcome']);
    expect(client.state()).toBe('open');
    // Once open, a call goes out at once.
    expect((await client.api.verifyLedger()).ok).toBe(true);
    expect(log.at(-1)).toBe('sent verifyLedger');
    client.close();
  });

  it('creates the socket in the same task when the session id is already known (a reload)', () => {
    const urls: string[] = [];
    const client = createWsClient({
      origin: 'http://127.0.0.1:1',
      ready: 'known-session-id',
      createSocket: (url) => {
        urls.push(url);
        return { send: () => undefined, close: () => undefined, onopen: null, onmessage: null, onclose: null, onerror: null };
      },
    });
    expect(urls).toEqual(['ws://127.0.0.1:1/api/known-session-id']);
    client.close();
  });

  it('a page without a session that sends a decision right behind its hello: the console never reads it, and the call answers unauthorized', async () => {
    fake.approvals = [A];
    const log: string[] = [];
    const client = createWsClient({ origin: host.origin, ready: null, createSocket: loggedSocket(null, log) });
    const before = fake.calls.length;
    const r = await client.api.decideApproval({ requestId: 'a', decision: 'approve' });
    expect(r).toMatchObject({ ok: false, error: { code: 'unauthorized' } });
    expect(client.state()).toBe('unauthorized');
    // The attack was made (the decision went out behind the hello) and came to nothing.
    expect(log).toEqual(['sent hello', 'sent decideApproval']);
    expect(fake.calls.slice(before)).toEqual([]);
    expect(fake.approvals.map((a) => a.requestId)).toContain('a');
    client.close();
  });

  it('stops without a session and answers calls with unauthorized', async () => {
    const client = createWsClient({ origin: host.origin, createSocket: socketWith(null) });
    const states: string[] = [];
    client.onState((s) => states.push(s));
    expect(await client.api.getSnapshot()).toMatchObject({ ok: false, error: { code: 'unauthorized' } });
    expect(states).toEqual(['unauthorized']);
    client.close();
  });
});

describe('settings store: developer mode', () => {
  it('switches through updateSettings, and shows the host\'s refusal as its own words', async () => {
    const fake = new FakeConsole();
    const s = createSettingsStore(fake);
    await s.getState().setDeveloperMode(true);
    expect(fake.calls).toEqual([{ method: 'updateSettings', params: { developerMode: true } }]);
    expect(s.getState().settings?.developerMode).toBe(true);
    fake.updateSettings = async () => ({ ok: false, error: { code: 'trusted-input-unavailable', message: 'Switching developer mode on is only possible in the desktop app.' } });
    await s.getState().setDeveloperMode(true);
    expect(s.getState()).toMatchObject({ developerModeBusy: false, developerModeError: { code: 'trusted-input-unavailable' } });
  });
});
