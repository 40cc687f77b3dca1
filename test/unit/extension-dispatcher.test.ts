import { describe, expect, it } from 'vitest';
import { argumentsHash, urlHash } from '../../src/shared/canonical';
import { err, ok, type Result } from '../../src/shared/result';
import type { Grant } from '../../src/shared/types';
import { Dispatcher, type DispatchRequest } from '../../extension/src/background/dispatch';
import type { DispatchFaculty } from '../../extension/src/background/faculties/registry';
import { webmcpInvoke, type WebMcpPrepared } from '../../extension/src/background/faculties/webmcp-invoke';
import type { FoundTool } from '../../extension/src/background/discovery';
import type { ExecuteValue } from '../../extension/src/lib/messages';

const H = 'd'.repeat(64);
const URL_ = 'https://a.example/p#x';
let n = 0;

async function req(timeoutMs = 5_000): Promise<DispatchRequest> {
  const args = { a: 1 };
  const grant: Grant = {
    requestId: `r${++n}`, faculty: 'webmcp-invoke', operation: 'invoke', tabId: 1, frameId: 0, documentId: 'DOC', origin: 'https://a.example',
    urlHash: await urlHash(URL_, URL_), subjectHash: H, argumentsHash: await argumentsHash(args),
    nonce: n.toString(16).padStart(32, '0'), expiresAt: Date.now() + 30_000, mac: 'f'.repeat(64),
  };
  return {
    op: 'dispatch', faculty: 'webmcp-invoke', operation: 'invoke', target: { tabId: 1, frameId: 0, documentId: 'DOC' },
    subject: { toolName: 't', descriptorHash: H }, arguments: args, grant, timeoutMs,
  };
}

type Execute = DispatchFaculty<WebMcpPrepared>['execute'];

/** The real webmcp-invoke faculty with its chrome effects (rediscovery, URL read, messages) replaced. */
function faculty(execute: Execute, aborted: string[] = [], found: FoundTool[] = [{ canonical: '{"c":1}', descriptorHash: H }]): DispatchFaculty<WebMcpPrepared> {
  const f = webmcpInvoke(async () => found);
  return { ...f, pageUrls: async () => ({ tab: URL_, frame: URL_ }), execute, abort: (_t, id) => void aborted.push(id) };
}

/** A dispatcher whose checks all pass; `extra` adds or replaces effects. */
function dispatcher(extra: Partial<ConstructorParameters<typeof Dispatcher>[0]> = {}): Dispatcher {
  return new Dispatcher({
    verifyGrant: async () => true,
    now: () => Date.now(),
    consumeNonce: async () => true,
    sharedOrigin: async () => 'https://a.example',
    frameDocument: async () => ({ documentId: 'DOC', origin: 'https://a.example' }),
    ...extra,
  });
}

/** An execute that settles only when aborted, like a page tool that never returns (docs/browser-facts.md, "WebMCP: running tools": AbortError). */
function hanging(aborted: string[]): Execute {
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

const run = async (execute: Execute, r?: DispatchRequest, signal?: AbortSignal) => dispatcher().dispatch(r ?? (await req()), faculty(execute) as DispatchFaculty<unknown>, signal);

describe('Dispatcher outcomes', () => {
  it('succeeded: the page gets what was checked (tool, canonical descriptor, exact URLs); result bounded and redacted', async () => {
    let seen: unknown;
    const r = await run(async (_t, msg) => ((seen = msg), ok({ result: '{"token":"abc123secretvalue"}', truncated: false, elapsedMs: 3, resultBytes: 29 })));
    expect(r).toMatchObject({ ok: true, value: { outcome: 'succeeded', redacted: true, elapsedMs: 3, resultBytes: 29 } });
    expect(JSON.stringify(r)).not.toContain('abc123secretvalue');
    expect(seen).toMatchObject({ operation: 'invoke', prepared: { toolName: 't', canonical: '{"c":1}' }, urls: { tab: URL_, frame: URL_ }, args: { a: 1 } });
  });

  it("succeeded: resultBytes is the page's size before the content module's cut, else the size that arrived", async () => {
    const cut = await run(async () => ok({ result: 'x'.repeat(10), truncated: true, elapsedMs: 1, resultBytes: 6_000_000 }));
    expect(cut).toMatchObject({ ok: true, value: { resultBytes: 6_000_000, truncated: true } });
    const unsaid = await run(async () => ok({ result: 'héllo', truncated: false, elapsedMs: 1 }));
    expect(unsaid).toMatchObject({ ok: true, value: { resultBytes: 6 } });
  });

  it('what the browser saw after the answer: a page that left is reported (stripped URL); one that is replaced before answering is outcome-unknown at once', async () => {
    const d = dispatcher({ leftFor: async () => 'https://a.example/next?token=SECRET&x=1' });
    const left = await d.dispatch(await req(), faculty(async () => ok({ result: '"bye"', truncated: false, elapsedMs: 1 })) as DispatchFaculty<unknown>);
    expect(left).toMatchObject({ ok: true, value: { outcome: 'succeeded', result: '"bye"', navigatedTo: 'https://a.example/next?x=1' } });
    let resolveLeft: ((u: string) => void) | null = null;
    const replaced = dispatcher({ documentLeaves: () => ({ left: new Promise<string>((r) => (resolveLeft = r)), cancel: () => undefined }) });
    const p = replaced.dispatch(await req(60_000), faculty(() => new Promise(() => {})) as DispatchFaculty<unknown>);
    while (resolveLeft === null) await new Promise((r) => setImmediate(r)); // the run is waiting on the page
    (resolveLeft as (u: string) => void)('https://a.example/elsewhere');
    expect(await p).toMatchObject({ ok: true, value: { outcome: 'outcome-unknown', navigatedTo: 'https://a.example/elsewhere', error: { code: 'document-left' } } });
  });

  it('a page link lost under the run, with the navigation event a moment later: outcome-unknown, document-left, where it went (not a bare lost link)', async () => {
    let resolveLeft: ((u: string) => void) | null = null;
    const d = dispatcher({ documentLeaves: () => ({ left: new Promise<string>((r) => (resolveLeft = r)), cancel: () => undefined }) });
    // The content script's port closes first (the document is being replaced) ...
    const p = d.dispatch(await req(60_000), faculty(async () => {
      throw new Error('A listener indicated an asynchronous response by returning true, but the message channel closed before a response was received');
    }) as DispatchFaculty<unknown>);
    while (resolveLeft === null) await new Promise((r) => setImmediate(r));
    await new Promise((r) => setTimeout(r, 20));
    // ... and webNavigation reports the new document after it.
    (resolveLeft as (u: string) => void)('https://a.example/elsewhere?token=SECRET');
    expect(await p).toMatchObject({ ok: true, value: { outcome: 'outcome-unknown', navigatedTo: 'https://a.example/elsewhere', error: { code: 'document-left' } } });
    // With no navigation at all, the lost link is said as it is, after the bounded wait.
    const still = dispatcher({ documentLeaves: () => ({ left: new Promise<string>(() => {}), cancel: () => undefined }) });
    const r = await still.dispatch(await req(60_000), faculty(async () => {
      throw new Error('message channel closed');
    }) as DispatchFaculty<unknown>);
    expect(r).toMatchObject({ ok: true, value: { outcome: 'outcome-unknown', error: { code: 'link-to-page-lost' } } });
  });

  it('failed: the page tool threw; message bounded', async () => {
    const r = await run(async () => err('tool-failed', 'x'.repeat(10_000)));
    expect(r.ok && r.value.outcome).toBe('failed');
    expect(r.ok && (r.value.error?.message.length ?? 0)).toBeLessThanOrEqual(2048);
  });

  it('a form that waited and was not submitted is cancelled with its own code and whether it was put back; a submit without an answer is unknown; a handler without respondWith is succeeded with a note', async () => {
    expect(await run(async () => err('form-wait-timeout', 'no press', { formRestored: true }))).toMatchObject({
      ok: true,
      value: { outcome: 'cancelled', error: { code: 'form-wait-timeout' }, formRestored: true },
    });
    expect(await run(async () => err('form-cancelled', 'reset', { formRestored: false }))).toMatchObject({ ok: true, value: { outcome: 'cancelled', error: { code: 'form-cancelled' }, formRestored: false } });
    expect(await run(async () => err('submitted-no-answer', 'x'))).toMatchObject({ ok: true, value: { outcome: 'outcome-unknown', error: { code: 'submitted-no-answer' } } });
    expect(await run(async () => err('handled-without-answer', 'x'))).toMatchObject({ ok: true, value: { outcome: 'succeeded', result: null, note: 'handled-without-answer' } });
  });

  it('cancelled through the link signal (the console cancelled, or the link dropped)', async () => {
    const aborted: string[] = [];
    const ac = new AbortController();
    const p = dispatcher().dispatch(await req(), faculty(hanging(aborted), aborted) as DispatchFaculty<unknown>, ac.signal);
    await new Promise((r) => setTimeout(r, 20));
    ac.abort();
    expect(await p).toMatchObject({ ok: true, value: { outcome: 'cancelled' } });
  });

  it('cancelled by requestId (the cancel op)', async () => {
    const aborted: string[] = [];
    const d = dispatcher();
    const r = await req();
    const p = d.dispatch(r, faculty(hanging(aborted), aborted) as DispatchFaculty<unknown>);
    await new Promise((res) => setTimeout(res, 20));
    expect(d.cancel(r.grant.requestId)).toEqual({ cancelled: true });
    expect(d.cancel(r.grant.requestId)).toEqual({ cancelled: false });
    expect(await p).toMatchObject({ ok: true, value: { outcome: 'cancelled' } });
    expect(d.cancel('nope')).toEqual({ cancelled: false });
  });

  it('a signal already aborted before dispatch: nothing is dispatched', async () => {
    let dispatched = false;
    const ac = new AbortController();
    ac.abort();
    const r = await run(async () => ((dispatched = true), ok({ result: null, truncated: false, elapsedMs: 0 })), undefined, ac.signal);
    expect(r).toMatchObject({ ok: true, value: { outcome: 'cancelled' } });
    expect(dispatched).toBe(false);
  });

  it('outcome-unknown after the timeout, and the page run is aborted', async () => {
    const aborted: string[] = [];
    const r = await dispatcher().dispatch(await req(50), faculty(() => new Promise(() => {}), aborted) as DispatchFaculty<unknown>);
    expect(r).toMatchObject({ ok: true, value: { outcome: 'outcome-unknown', error: { code: 'timeout' } } });
    expect(aborted.length).toBe(1);
  });

  it('undeliverable message = nothing ran = refused navigated; a lost page mid-run = outcome-unknown', async () => {
    const notDelivered = await run(async () => Promise.reject(new Error('Could not establish connection. Receiving end does not exist.')));
    expect(notDelivered).toMatchObject({ ok: true, value: { outcome: 'refused', refusal: 'navigated' } });
    const lost = await run(async () => Promise.reject(new Error('The message port closed before a response was received.')));
    expect(lost).toMatchObject({ ok: true, value: { outcome: 'outcome-unknown' } });
  });

  it('content-side last-moment checks map to refusals (the URL comparison in the acting task is navigated)', async () => {
    for (const [code, refusal] of [['descriptor-changed', 'descriptor-changed'], ['tool-missing', 'tool-missing'], ['tool-ambiguous', 'tool-ambiguous'], ['tool-blocked', 'tool-blocked'], ['no-webmcp', 'tool-missing'], ['navigated', 'navigated']] as const) {
      const r = await run(async () => err(code, 'x'));
      expect(r).toMatchObject({ ok: true, value: { outcome: 'refused', refusal } });
    }
    const unknown = await run(async () => err('something-else', 'x'));
    expect(unknown).toMatchObject({ ok: true, value: { outcome: 'outcome-unknown', error: { code: 'content-error' } } });
  });

  it("the faculty's own checks: ambiguous, changed and blocked tools never reach the page", async () => {
    for (const [found, refusal] of [
      [[], 'tool-missing'],
      [[{ canonical: '', descriptorHash: H }, { canonical: '', descriptorHash: H }], 'tool-ambiguous'],
      [[{ canonical: '', descriptorHash: 'c'.repeat(64) }], 'descriptor-changed'],
      [[{ canonical: '', descriptorHash: H, blocked: 'password-field' }], 'tool-blocked'],
    ] as const) {
      let ran = false;
      const f = faculty(async () => ((ran = true), ok({ result: null, truncated: false, elapsedMs: 0 })), [], [...found]);
      const r = await dispatcher().dispatch(await req(), f as DispatchFaculty<unknown>);
      expect(r).toMatchObject({ ok: true, value: { outcome: 'refused', refusal } });
      expect(ran).toBe(false);
    }
  });

  it('a grant that is not even an object is refused grant-invalid by the one shape check, and nothing runs', async () => {
    for (const grant of [null, 'x', { requestId: 'r' }]) {
      let ran = false;
      const r = await req();
      (r as unknown as { grant: unknown }).grant = grant;
      const out = await run(async () => ((ran = true), ok({ result: null, truncated: false, elapsedMs: 0 })), r);
      expect(out).toMatchObject({ ok: true, value: { outcome: 'refused', refusal: 'grant-invalid' } });
      expect(ran).toBe(false);
    }
  });

  it("a malformed request, or a subject the faculty's request check refuses, is bad-request, not a throw", async () => {
    const f = faculty(async () => ok({ result: null, truncated: false, elapsedMs: 0 })) as DispatchFaculty<unknown>;
    expect(await dispatcher().dispatch({} as DispatchRequest, f)).toMatchObject({ ok: false, error: { code: 'bad-request' } });
    for (const subject of [{ toolName: 't' }, { toolName: 't', descriptorHash: 'XYZ' }, { toolName: 'bad name', descriptorHash: H }, { toolName: 't', descriptorHash: H, extra: 1 }]) {
      const r = await req();
      r.subject = subject;
      expect(await dispatcher().dispatch(r, f)).toMatchObject({ ok: false, error: { code: 'bad-request' } });
    }
  });
});
