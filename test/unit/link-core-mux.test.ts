/**
 * The shared multiplexer and heartbeat (src/shared/link-core/{mux,heartbeat}.ts),
 * the console's calling half wired in memory to the extension's serving half:
 * answers, value checks, cancel on abort and on timeout, link-down on a drop,
 * nothing replayed; and the heartbeat's timeout on a clock the test moves.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Heartbeat, LinkMux } from '../../src/shared/link-core';
import type { ConsoleRequest } from '../../src/shared/protocol';
import { err, ok, type Result } from '../../src/shared/result';

afterEach(() => {
  vi.useRealTimers();
});

/** console mux → wire → extension mux → handler → wire → console mux. */
function wired(handler: (req: ConsoleRequest, ctx: { requestId: string; signal: AbortSignal }) => Promise<Result<unknown>>) {
  let n = 0;
  const sent: ConsoleRequest[] = [];
  const invalid: string[] = [];
  const ext: LinkMux = new LinkMux({
    newId: () => `e${n++}`,
    sendRequest: () => false,
    sendResponse: (id, result) => queueMicrotask(() => con.settle(id, structuredClone(result))),
  });
  const con: LinkMux = new LinkMux({
    newId: () => `c${n++}`,
    sendRequest: (id, request) => {
      sent.push(request);
      queueMicrotask(() => ext.serve(id, structuredClone(request), handler));
      return true;
    },
    sendResponse: () => {},
    checkValue: (op, value) => (op === 'list-tabs' && !Array.isArray(value) ? err('bad-message', 'value: expected an array') : ok(value)),
    onInvalidValue: (_op, m) => invalid.push(m),
  });
  return { con, ext, sent, invalid };
}

/** A handler that never settles until its signal aborts. */
function hanging() {
  const signals: AbortSignal[] = [];
  const handler = (_req: ConsoleRequest, ctx: { signal: AbortSignal }) =>
    new Promise<Result<unknown>>((resolve) => {
      signals.push(ctx.signal);
      ctx.signal.addEventListener('abort', () => resolve(ok({ outcome: 'cancelled' })));
    });
  return { handler, signals };
}

const flush = async (): Promise<void> => {
  for (let i = 0; i < 5; i++) await Promise.resolve();
};

describe('LinkMux', () => {
  it('answers a call with the handler\'s result, and checks the value for its op', async () => {
    const { con, invalid } = wired(async (req) => (req.op === 'list-tabs' ? ok([]) : ok({ not: 'an array' })));
    expect(await con.call({ op: 'list-tabs' }, { timeoutMs: 1000 })).toEqual({ ok: true, value: [] });
    const bad = wired(async () => ok({ not: 'an array' }));
    expect(await bad.con.call({ op: 'list-tabs' }, { timeoutMs: 1000 })).toMatchObject({ ok: false, error: { code: 'bad-message' } });
    expect(bad.invalid).toHaveLength(1);
    expect(invalid).toHaveLength(0);
  });

  it('an abort answers aborted and cancels on the serving side (the cancel is not passed to the handler)', async () => {
    const h = hanging();
    const { con, sent } = wired(h.handler);
    const ac = new AbortController();
    const p = con.call({ op: 'discover', tabId: 1 }, { signal: ac.signal, timeoutMs: 60_000 });
    await flush();
    expect(h.signals).toHaveLength(1);
    ac.abort();
    expect(await p).toMatchObject({ ok: false, error: { code: 'aborted' } });
    await flush();
    expect(h.signals[0]?.aborted).toBe(true);
    expect(sent.map((r) => r.op)).toEqual(['discover', 'cancel']);
    expect(con.pendingCount).toBe(0); // the cancel's own answer was dropped quietly
  });

  it('a timeout answers timeout and cancels; the late answer is dropped', async () => {
    vi.useFakeTimers();
    const h = hanging();
    const { con, sent } = wired(h.handler);
    const p = con.call({ op: 'discover', tabId: 1 }, { timeoutMs: 500 });
    await vi.advanceTimersByTimeAsync(499);
    expect(h.signals[0]?.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await p).toMatchObject({ ok: false, error: { code: 'timeout', message: expect.stringMatching(/500 ms/) } });
    await vi.advanceTimersByTimeAsync(0);
    expect(h.signals[0]?.aborted).toBe(true);
    expect(sent.at(-1)).toMatchObject({ op: 'cancel' });
    expect(con.settle('c0', ok({}))).toBe(false);
  });

  it('a drop fails every call with link-down, aborts every handler, and discards their answers', async () => {
    const h = hanging();
    let answered = 0;
    const { con, ext } = wired(async (req, ctx) => {
      const r = await h.handler(req, ctx);
      answered++;
      return r;
    });
    const p = con.call({ op: 'discover', tabId: 1 }, { timeoutMs: 60_000 });
    await flush();
    ext.abortAll();
    con.failAll();
    expect(await p).toMatchObject({ ok: false, error: { code: 'link-down' } });
    await flush();
    expect(h.signals[0]?.aborted).toBe(true);
    expect(answered).toBe(1); // the handler finished, but its answer went nowhere
    expect(await con.call({ op: 'list-tabs' }, { timeoutMs: 1000 })).toMatchObject({ ok: false, error: { code: 'link-down' } });
  });

  it('a request that cannot be sent answers too-large; a throwing handler answers internal', async () => {
    const tooBig = new LinkMux({ newId: () => 'x', sendRequest: () => false, sendResponse: () => {} });
    expect(await tooBig.call({ op: 'list-tabs' }, { timeoutMs: 1000 })).toMatchObject({ ok: false, error: { code: 'too-large' } });
    const { con } = wired(async () => {
      throw new Error('boom');
    });
    expect(await con.call({ op: 'list-tabs' }, { timeoutMs: 1000 })).toMatchObject({ ok: false, error: { code: 'internal', message: 'boom' } });
  });
});

describe('Heartbeat', () => {
  it('pings every tick while pongs arrive; drops once no pong came for timeoutMs', () => {
    let now = 1000;
    const pings: number[] = [];
    let timedOut = 0;
    const hb = new Heartbeat({ intervalMs: 100, timeoutMs: 300, now: () => now, ping: (s) => pings.push(s), onTimeout: () => timedOut++ });
    hb.start();
    now += 100;
    hb.tick();
    now += 100;
    expect(hb.pong()).toBe(1200);
    now += 300;
    hb.tick(); // exactly timeoutMs since the pong: still alive
    expect(timedOut).toBe(0);
    now += 1;
    hb.tick();
    expect(timedOut).toBe(1);
    expect(pings).toEqual([1, 2]);
    hb.stop();
  });
});
