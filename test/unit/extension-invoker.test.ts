import { describe, expect, it } from 'vitest';
import { argumentsHash } from '../../src/shared/canonical';
import { err, ok, type Result } from '../../src/shared/result';
import type { Grant } from '../../src/shared/types';
import { Invoker, type DispatchDeps, type InvokeRequest } from '../../extension/src/background/invoke';
import type { ExecuteValue } from '../../extension/src/lib/messages';

const H = 'd'.repeat(64);
let n = 0;

async function req(timeoutMs = 5_000): Promise<InvokeRequest> {
  const args = { a: 1 };
  const grant: Grant = {
    requestId: `r${++n}`, tabId: 1, frameId: 0, documentId: 'DOC', origin: 'https://a.example', toolName: 't', descriptorHash: H,
    argumentsHash: await argumentsHash(args), nonce: n.toString(16).padStart(32, '0'), expiresAt: Date.now() + 30_000, mac: 'f'.repeat(64),
  };
  return { op: 'invoke', tabId: 1, frameId: 0, documentId: 'DOC', toolName: 't', descriptorHash: H, arguments: args, grant, timeoutMs };
}

function invoker(execute: DispatchDeps['execute'], aborted: string[] = []): Invoker {
  return new Invoker(
    {
      verifyGrant: async () => true,
      now: () => Date.now(),
      consumeNonce: async () => true,
      sharedOrigin: async () => 'https://a.example',
      frameDocument: async () => ({ documentId: 'DOC', origin: 'https://a.example' }),
      toolsNamed: async () => [{ canonical: '{}', descriptorHash: H }],
    },
    { execute, abort: (_t, id) => void aborted.push(id) },
  );
}

/** An execute that settles only when aborted, like a page tool that never returns (docs/browser-facts.md, "WebMCP: running tools": AbortError). */
function hanging(aborted: string[]): DispatchDeps['execute'] {
  return (_t, msg) =>
    new Promise<Result<ExecuteValue>>((resolve) => {
      const timer = setInterval(() => {
        if (aborted.includes(msg.requestId)) {
          clearInterval(timer);
          resolve(err('aborted', 'AbortError'));
        }
      }, 5);
    });
}

describe('Invoker outcomes', () => {
  it('succeeded: bounded and redacted result', async () => {
    const r = await invoker(async () => ok({ result: '{"token":"abc123secretvalue"}', truncated: false, elapsedMs: 3 })).invoke(await req());
    expect(r).toMatchObject({ ok: true, value: { outcome: 'succeeded', redacted: true, elapsedMs: 3 } });
    expect(JSON.stringify(r)).not.toContain('abc123secretvalue');
  });

  it('failed: the page tool threw; message bounded', async () => {
    const r = await invoker(async () => err('tool-failed', 'x'.repeat(10_000))).invoke(await req());
    expect(r.ok && r.value.outcome).toBe('failed');
    expect(r.ok && (r.value.error?.message.length ?? 0)).toBeLessThanOrEqual(2048);
  });

  it('cancelled through the link signal (the console cancelled, or the link dropped)', async () => {
    const aborted: string[] = [];
    const inv = invoker(hanging(aborted), aborted);
    const ac = new AbortController();
    const p = inv.invoke(await req(), ac.signal);
    await new Promise((r) => setTimeout(r, 20));
    ac.abort();
    expect(await p).toMatchObject({ ok: true, value: { outcome: 'cancelled' } });
  });

  it('cancelled by requestId (the cancel op)', async () => {
    const aborted: string[] = [];
    const inv = invoker(hanging(aborted), aborted);
    const r = await req();
    const p = inv.invoke(r);
    await new Promise((res) => setTimeout(res, 20));
    expect(inv.cancel(r.grant.requestId)).toEqual({ cancelled: true });
    expect(inv.cancel(r.grant.requestId)).toEqual({ cancelled: false });
    expect(await p).toMatchObject({ ok: true, value: { outcome: 'cancelled' } });
    expect(inv.cancel('nope')).toEqual({ cancelled: false });
  });

  it('a signal already aborted before dispatch: nothing is dispatched', async () => {
    let dispatched = false;
    const ac = new AbortController();
    ac.abort();
    const r = await invoker(async () => ((dispatched = true), ok({ result: null, truncated: false, elapsedMs: 0 }))).invoke(await req(), ac.signal);
    expect(r).toMatchObject({ ok: true, value: { outcome: 'cancelled' } });
    expect(dispatched).toBe(false);
  });

  it('outcome-unknown after the timeout, and the page tool is aborted', async () => {
    const aborted: string[] = [];
    const r = await invoker(() => new Promise(() => {}), aborted).invoke(await req(50));
    expect(r).toMatchObject({ ok: true, value: { outcome: 'outcome-unknown', error: { code: 'timeout' } } });
    expect(aborted.length).toBe(1);
  });

  it('undeliverable message = nothing ran = refused navigated; a lost page mid-run = outcome-unknown', async () => {
    const notDelivered = await invoker(async () => Promise.reject(new Error('Could not establish connection. Receiving end does not exist.'))).invoke(await req());
    expect(notDelivered).toMatchObject({ ok: true, value: { outcome: 'refused', refusal: 'navigated' } });
    const lost = await invoker(async () => Promise.reject(new Error('The message port closed before a response was received.'))).invoke(await req());
    expect(lost).toMatchObject({ ok: true, value: { outcome: 'outcome-unknown' } });
  });

  it('content-side last-moment checks map to refusals', async () => {
    for (const [code, refusal] of [['descriptor-changed', 'descriptor-changed'], ['tool-missing', 'tool-missing'], ['tool-ambiguous', 'tool-ambiguous'], ['tool-blocked', 'tool-blocked'], ['no-webmcp', 'tool-missing']] as const) {
      const r = await invoker(async () => err(code, 'x')).invoke(await req());
      expect(r).toMatchObject({ ok: true, value: { outcome: 'refused', refusal } });
    }
  });

  it('a malformed request is an error, not a throw', async () => {
    expect(await invoker(async () => ok({ result: null, truncated: false, elapsedMs: 0 })).invoke({} as InvokeRequest)).toMatchObject({ ok: false, error: { code: 'bad-request' } });
  });
});
