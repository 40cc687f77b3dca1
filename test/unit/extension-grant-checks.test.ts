import { describe, expect, it } from 'vitest';
import { argumentsHash, canonicalJson, urlHash } from '../../src/shared/canonical';
import { checkBeforeDispatch, type DispatchFields, type FacultyChecks, type GrantCheckDeps, type PageUrls } from '../../extension/src/lib/grant-checks';
import type { Grant, RefusalCode } from '../../src/shared/types';

const H = (c: string) => c.repeat(64);
const NOW = 1_700_000_000_000;
const ARGS = { a: 1, b: 2 };
const URLS: PageUrls = { tab: 'https://a.example/app?x=1#top', frame: 'https://a.example/app?x=1#top' };

type World = { req: DispatchFields; faculty: FacultyChecks<string>; deps: GrantCheckDeps; calls: string[]; used: Set<string> };

/** A faculty `semantic` with operations click and hover whose subject hash is the subject's `fp`; its own check passes. */
async function base(): Promise<World> {
  const grant: Grant = {
    requestId: 'r1', faculty: 'semantic', operation: 'click', tabId: 5, frameId: 0, documentId: 'DOC', origin: 'https://a.example',
    urlHash: await urlHash(URLS.tab, URLS.frame), subjectHash: H('d'), argumentsHash: await argumentsHash(ARGS),
    nonce: '0'.repeat(32), expiresAt: NOW + 30_000, mac: H('f'),
  };
  const req: DispatchFields = {
    faculty: 'semantic', operation: 'click', target: { tabId: 5, frameId: 0, documentId: 'DOC' },
    subject: { fp: H('d') }, arguments: { ...ARGS }, grant,
  };
  const calls: string[] = [];
  const used = new Set<string>();
  const faculty: FacultyChecks<string> = {
    subjectHash: async (s) => (calls.push('subject'), s.fp as string),
    check: async () => (calls.push('faculty'), { ok: true, prepared: 'ready' }),
  };
  const deps: GrantCheckDeps = {
    verifyGrant: async () => (calls.push('mac'), true),
    now: () => NOW,
    consumeNonce: async (n) => {
      calls.push('nonce');
      if (used.has(n)) return false;
      used.add(n);
      return true;
    },
    sharedOrigin: async () => (calls.push('shared'), 'https://a.example'),
    frameDocument: async () => (calls.push('frame'), { documentId: 'DOC', origin: 'https://a.example' }),
    pageUrls: async () => (calls.push('urls'), { ...URLS }),
    urlHash: (t, f) => urlHash(t, f),
    argumentsHash: (a) => (calls.push('args'), argumentsHash(a)),
    argumentsBytes: (a) => canonicalJson(a).length,
  };
  return { req, faculty, deps, calls, used };
}

async function refusal(mut: (x: World) => void): Promise<RefusalCode | 'ok'> {
  const x = await base();
  mut(x);
  const r = await checkBeforeDispatch(x.req, x.faculty, x.deps);
  return r.ok ? 'ok' : r.refusal;
}

describe('checkBeforeDispatch (generic, every dispatch faculty)', () => {
  it('passes a good request, running every check once, in the documented order, and hands on the checked URLs', async () => {
    const x = await base();
    const r = await checkBeforeDispatch(x.req, x.faculty, x.deps);
    expect(r).toEqual({ ok: true, prepared: 'ready', urls: URLS });
    expect(x.calls).toEqual(['mac', 'subject', 'nonce', 'shared', 'frame', 'urls', 'faculty', 'args']);
  });

  it.each<[string, (x: World) => void, RefusalCode]>([
    ['bad MAC', (x) => (x.deps.verifyGrant = async () => false), 'grant-invalid'],
    ['malformed grant (nonce)', (x) => ((x.req.grant as unknown as Record<string, unknown>).nonce = 'short'), 'grant-invalid'],
    ['v1 grant shape (toolName, no faculty)', (x) => {
      const g = x.req.grant as unknown as Record<string, unknown>;
      delete g.faculty;
      g.toolName = 'add';
    }, 'grant-invalid'],
    ['grant with an extra field', (x) => ((x.req.grant as unknown as Record<string, unknown>).extra = 1), 'grant-invalid'],
    ['grant for operation hover presented for click of the same faculty', (x) => (x.req.grant.operation = 'hover'), 'grant-invalid'],
    ['grant for another faculty', (x) => (x.req.faculty = 'webmcp-invoke'), 'grant-invalid'],
    ['grant for another tab', (x) => (x.req.target.tabId = 6), 'grant-invalid'],
    ['grant for another frame', (x) => (x.req.target.frameId = 3), 'grant-invalid'],
    ['grant for another document', (x) => (x.req.target.documentId = 'OTHER'), 'grant-invalid'],
    ['subject hashing to another subjectHash', (x) => (x.req.subject = { fp: H('e') }), 'grant-invalid'],
    ['subject without a hash (the faculty throws)', (x) => (x.faculty.subjectHash = async () => Promise.reject(new Error('no'))), 'grant-invalid'],
    ['expired', (x) => (x.deps.now = () => NOW + 30_000), 'grant-expired'],
    ['reused', (x) => x.used.add('0'.repeat(32)), 'grant-reused'],
    ['tab not shared', (x) => (x.deps.sharedOrigin = async () => null), 'tab-not-shared'],
    ['frame gone', (x) => (x.deps.frameDocument = async () => null), 'navigated'],
    ['frame holds another document', (x) => (x.deps.frameDocument = async () => ({ documentId: 'NEW', origin: 'https://a.example' })), 'navigated'],
    ['document at another origin', (x) => (x.deps.frameDocument = async () => ({ documentId: 'DOC', origin: 'https://b.example' })), 'navigated'],
    ['document unreachable for its URL', (x) => (x.deps.pageUrls = async () => null), 'navigated'],
    ['same document, pushState changed the path', (x) => (x.deps.pageUrls = async () => ({ tab: 'https://a.example/other', frame: 'https://a.example/other' })), 'navigated'],
    ['same document, fragment changed', (x) => (x.deps.pageUrls = async () => ({ tab: 'https://a.example/app?x=1#b', frame: 'https://a.example/app?x=1#b' })), 'navigated'],
    ['only a stripped query parameter differs (token=)', (x) => (x.deps.pageUrls = async () => ({ tab: 'https://a.example/app?x=1&token=2#top', frame: 'https://a.example/app?x=1&token=2#top' })), 'navigated'],
    ['the tab URL differs while the frame URL is the same', (x) => (x.deps.pageUrls = async () => ({ tab: 'https://a.example/', frame: URLS.frame })), 'navigated'],
    ['the faculty refuses', (x) => (x.faculty.check = async () => ({ ok: false, refusal: 'tool-missing', message: 'gone' })), 'tool-missing'],
    ['other arguments', (x) => (x.req.arguments = { a: 1, b: 3 }), 'arguments-mismatch'],
    ['arguments not an object', (x) => (x.req.arguments = [1] as unknown as Record<string, unknown>), 'arguments-mismatch'],
    ['arguments without JSON form', (x) => (x.req.arguments = { a: NaN }), 'arguments-mismatch'],
    ['arguments too large', (x) => (x.req.arguments = { a: 'x'.repeat(70_000) }), 'arguments-mismatch'],
  ])('%s → %s', async (_what, mut, code) => {
    expect(await refusal(mut)).toBe(code);
  });

  it('answers the earliest failing check when several fail', async () => {
    const everything = (x: World) => {
      x.req.grant.operation = 'hover';
      x.deps.now = () => NOW + 60_000;
      x.used.add('0'.repeat(32));
      x.deps.sharedOrigin = async () => null;
      x.deps.pageUrls = async () => null;
      x.faculty.check = async () => ({ ok: false, refusal: 'tool-missing', message: '' });
      x.req.arguments = { z: 1 };
    };
    expect(await refusal((x) => (everything(x), (x.deps.verifyGrant = async () => false)))).toBe('grant-invalid');
    expect(await refusal(everything)).toBe('grant-invalid');
    expect(await refusal((x) => (everything(x), (x.req.grant.operation = 'click')))).toBe('grant-expired');
    expect(await refusal((x) => (everything(x), (x.req.grant.operation = 'click'), (x.deps.now = () => NOW)))).toBe('grant-reused');
    expect(await refusal((x) => (everything(x), (x.req.grant.operation = 'click'), (x.deps.now = () => NOW), x.used.clear()))).toBe('tab-not-shared');
  });

  it('the URL check comes before the faculty check: a moved page is navigated, never "tool-missing"', async () => {
    const x = await base();
    x.deps.pageUrls = async () => ({ tab: 'https://a.example/next', frame: 'https://a.example/next' });
    x.faculty.check = async () => (x.calls.push('faculty'), { ok: false, refusal: 'tool-missing', message: '' });
    const r = await checkBeforeDispatch(x.req, x.faculty, x.deps);
    expect(!r.ok && r.refusal).toBe('navigated');
    expect(x.calls).not.toContain('faculty');
  });

  it('never asks the MAC check about a malformed grant, and never touches the nonce before the MAC and the binding pass', async () => {
    const x = await base();
    x.deps.verifyGrant = async () => (x.calls.push('mac'), false);
    await checkBeforeDispatch(x.req, x.faculty, x.deps);
    expect(x.calls).toEqual(['mac']);
    const y = await base();
    (y.req.grant as unknown as Record<string, unknown>).mac = 'nothex';
    await checkBeforeDispatch(y.req, y.faculty, y.deps);
    expect(y.calls).toEqual([]);
    const z = await base();
    z.req.grant.operation = 'hover';
    await checkBeforeDispatch(z.req, z.faculty, z.deps);
    expect(z.calls).not.toContain('nonce');
  });

  it('spends the nonce even when a later check refuses, so a grant is one attempt', async () => {
    const x = await base();
    x.deps.pageUrls = async () => null;
    expect((await checkBeforeDispatch(x.req, x.faculty, x.deps)).ok).toBe(false);
    x.deps.pageUrls = async () => ({ ...URLS });
    const again = await checkBeforeDispatch(x.req, x.faculty, x.deps);
    expect(!again.ok && again.refusal).toBe('grant-reused');
  });

  it('hashes the arguments exactly as they will be passed (key order does not matter, values do)', async () => {
    expect(await refusal((x) => (x.req.arguments = { b: 2, a: 1 }))).toBe('ok');
    expect(await refusal((x) => (x.req.arguments = { a: 1, b: '2' }))).toBe('arguments-mismatch');
  });
});
