import { describe, expect, it } from 'vitest';
import { argumentsHash, canonicalJson } from '../../src/shared/canonical';
import { checkBeforeDispatch, type FoundTool, type GrantCheckDeps, type InvokeFields } from '../../extension/src/lib/grant-checks';
import type { Grant, RefusalCode } from '../../src/shared/types';

const H = (c: string) => c.repeat(64);
const NOW = 1_700_000_000_000;
const ARGS = { a: 1, b: 2 };

async function base(): Promise<{ req: InvokeFields; deps: GrantCheckDeps; calls: string[]; used: Set<string> }> {
  const grant: Grant = {
    requestId: 'r1', tabId: 5, frameId: 0, documentId: 'DOC', origin: 'https://a.example', toolName: 'add',
    descriptorHash: H('d'), argumentsHash: await argumentsHash(ARGS), nonce: '0'.repeat(32), expiresAt: NOW + 30_000, mac: H('f'),
  };
  const req: InvokeFields = { tabId: 5, frameId: 0, documentId: 'DOC', toolName: 'add', descriptorHash: H('d'), arguments: { ...ARGS }, grant };
  const calls: string[] = [];
  const used = new Set<string>();
  const tool: FoundTool = { canonical: '{}', descriptorHash: H('d') };
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
    toolsNamed: async () => (calls.push('rediscover'), [tool]),
    argumentsHash: (a) => (calls.push('args'), argumentsHash(a)),
    argumentsBytes: (a) => canonicalJson(a).length,
  };
  return { req, deps, calls, used };
}

async function refusal(mut: (x: Awaited<ReturnType<typeof base>>) => void): Promise<RefusalCode | 'ok'> {
  const x = await base();
  mut(x);
  const r = await checkBeforeDispatch(x.req, x.deps);
  return r.ok ? 'ok' : r.refusal;
}

describe('checkBeforeDispatch', () => {
  it('passes a good request, running every check once, in order', async () => {
    const x = await base();
    const r = await checkBeforeDispatch(x.req, x.deps);
    expect(r.ok).toBe(true);
    expect(x.calls).toEqual(['mac', 'nonce', 'shared', 'frame', 'rediscover', 'args']);
  });

  it.each<[string, (x: Awaited<ReturnType<typeof base>>) => void, RefusalCode]>([
    ['bad MAC', (x) => (x.deps.verifyGrant = async () => false), 'grant-invalid'],
    ['malformed grant', (x) => ((x.req.grant as unknown as Record<string, unknown>).nonce = 'short'), 'grant-invalid'],
    ['grant for another tab', (x) => (x.req.tabId = 6), 'grant-invalid'],
    ['grant for another frame', (x) => (x.req.frameId = 3), 'grant-invalid'],
    ['grant for another document', (x) => (x.req.documentId = 'OTHER'), 'grant-invalid'],
    ['grant for another tool', (x) => (x.req.toolName = 'sub'), 'grant-invalid'],
    ['grant for another descriptor', (x) => (x.req.descriptorHash = H('e')), 'grant-invalid'],
    ['expired', (x) => (x.deps.now = () => NOW + 30_000), 'grant-expired'],
    ['reused', (x) => x.used.add('0'.repeat(32)), 'grant-reused'],
    ['tab not shared', (x) => (x.deps.sharedOrigin = async () => null), 'tab-not-shared'],
    ['frame gone', (x) => (x.deps.frameDocument = async () => null), 'navigated'],
    ['frame holds another document', (x) => (x.deps.frameDocument = async () => ({ documentId: 'NEW', origin: 'https://a.example' })), 'navigated'],
    ['document at another origin', (x) => (x.deps.frameDocument = async () => ({ documentId: 'DOC', origin: 'https://b.example' })), 'navigated'],
    ['document died during rediscovery', (x) => (x.deps.toolsNamed = async () => null), 'navigated'],
    ['tool gone', (x) => (x.deps.toolsNamed = async () => []), 'tool-missing'],
    ['two tools with the name', (x) => (x.deps.toolsNamed = async () => [{ canonical: '', descriptorHash: H('d') }, { canonical: '', descriptorHash: H('d') }]), 'tool-ambiguous'],
    ['tool changed', (x) => (x.deps.toolsNamed = async () => [{ canonical: '', descriptorHash: H('c') }]), 'descriptor-changed'],
    ['blocked tool', (x) => (x.deps.toolsNamed = async () => [{ canonical: '', descriptorHash: H('d'), blocked: 'password-field' }]), 'tool-blocked'],
    ['other arguments', (x) => (x.req.arguments = { a: 1, b: 3 }), 'arguments-mismatch'],
    ['arguments not an object', (x) => (x.req.arguments = [1] as unknown as Record<string, unknown>), 'arguments-mismatch'],
    ['arguments without JSON form', (x) => (x.req.arguments = { a: NaN }), 'arguments-mismatch'],
    ['arguments too large', (x) => (x.req.arguments = { a: 'x'.repeat(70_000) }), 'arguments-mismatch'],
  ])('%s → %s', async (_what, mut, code) => {
    expect(await refusal(mut)).toBe(code);
  });

  it('answers the earliest failing check when several fail', async () => {
    const everything = (x: Awaited<ReturnType<typeof base>>) => {
      x.deps.now = () => NOW + 60_000;
      x.used.add('0'.repeat(32));
      x.deps.sharedOrigin = async () => null;
      x.deps.toolsNamed = async () => [];
      x.req.arguments = { z: 1 };
    };
    expect(await refusal((x) => (everything(x), (x.deps.verifyGrant = async () => false)))).toBe('grant-invalid');
    expect(await refusal(everything)).toBe('grant-expired');
    expect(await refusal((x) => (everything(x), (x.deps.now = () => NOW)))).toBe('grant-reused');
  });

  it('never asks the MAC check about a malformed grant, and never touches the nonce before the MAC passes', async () => {
    const x = await base();
    x.deps.verifyGrant = async () => (x.calls.push('mac'), false);
    await checkBeforeDispatch(x.req, x.deps);
    expect(x.calls).toEqual(['mac']);
    const y = await base();
    (y.req.grant as unknown as Record<string, unknown>).mac = 'nothex';
    await checkBeforeDispatch(y.req, y.deps);
    expect(y.calls).toEqual([]);
  });

  it('spends the nonce even when a later check refuses, so a grant is one attempt', async () => {
    const x = await base();
    x.deps.toolsNamed = async () => [];
    expect((await checkBeforeDispatch(x.req, x.deps)).ok).toBe(false);
    x.deps.toolsNamed = async () => [{ canonical: '{}', descriptorHash: H('d') }];
    const again = await checkBeforeDispatch(x.req, x.deps);
    expect(!again.ok && again.refusal).toBe('grant-reused');
  });

  it('hashes the arguments exactly as they will be passed (key order does not matter, values do)', async () => {
    expect(await refusal((x) => (x.req.arguments = { b: 2, a: 1 }))).toBe('ok');
    expect(await refusal((x) => (x.req.arguments = { a: 1, b: '2' }))).toBe('arguments-mismatch');
  });
});
