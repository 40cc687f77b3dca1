// Tools that misbehave. Each title states what executeTool() did with it in
// Chromium 156 (probed on this machine): executeTool resolves to a STRING made
// by JSON-serialising the return value, except that a string comes back raw
// (not quoted) and undefined/NaN/functions come back as the text
// "undefined"/"NaN"; a throw, a rejection or a value JSON cannot serialise
// rejects with "UnknownError: Tool was executed but the invocation failed…".
(() => {
  'use strict';
  EchoDemo.warnIfUnavailable();
  const slowMs = Math.max(0, Number(new URLSearchParams(location.search).get('slowMs')) || 10_000);
  const FIVE_MIB = 5 * 1024 * 1024;
  const empty = { type: 'object', properties: {} };
  let sideEffects = 0;

  const tool = (name, title, description, execute) => ({ name, title, description, inputSchema: empty, annotations: {}, execute });

  const tools = [
    tool('throws_error', 'Rejects: UnknownError', 'Throws an Error synchronously.', () => {
      throw new Error('throws_error: deliberate failure');
    }),
    tool('throws_string', 'Rejects: UnknownError', 'Throws a plain string, not an Error.', () => {
      throw 'throws_string: deliberate failure';
    }),
    tool('rejects_async', 'Rejects: UnknownError', 'Returns a promise that rejects.', async () => {
      await EchoDemo.sleep(10);
      throw new Error('rejects_async: deliberate failure');
    }),
    tool('hangs_forever', 'Never settles (abort the executeTool signal: AbortError)', 'Returns a promise that never settles.', () => new Promise(() => {})),
    tool('slow_result', `Resolves after ${slowMs} ms with {"ok":true}`, 'Answers slowly (?slowMs=N).', async () => {
      await EchoDemo.sleep(slowMs);
      return { ok: true, waitedMs: slowMs };
    }),
    tool('returns_5mb', 'Resolves: a 5 MiB JSON string, whole', 'Returns an object holding a 5 MiB string.', () => ({ data: 'x'.repeat(FIVE_MIB) })),
    tool('returns_plain_string', 'Resolves: the raw string (not JSON)', 'Returns a plain string.', () => 'plain text, not JSON'),
    tool('returns_json_looking_string', 'Resolves: the raw string, indistinguishable from an object result', 'Returns a string that looks like JSON.',
      () => '{"ok":true,"note":"I am a string that looks like an object"}'),
    tool('returns_undefined', 'Resolves: the text "undefined" (not JSON)', 'Returns undefined.', () => undefined),
    tool('returns_nan', 'Resolves: the text "NaN" (not JSON)', 'Returns NaN.', () => NaN),
    tool('returns_function', 'Resolves: the text "undefined"', 'Returns a function.', () => () => 'never called'),
    tool('returns_circular', 'Rejects: UnknownError (circular structure)', 'Returns an object that contains itself.', () => {
      const o = { name: 'loop' };
      o.self = o;
      return o;
    }),
    tool('returns_bigint', 'Rejects: UnknownError (BigInt inside an object)', 'Returns {n: 10n}.', () => ({ n: 10n })),
    tool('side_effect_then_throw', 'Rejects: UnknownError AFTER a side effect', 'Counts one side effect in the page, then throws.', () => {
      sideEffects += 1;
      const el = document.querySelector('[data-testid="side-effects"]');
      el.dataset.count = String(sideEffects);
      el.textContent = String(sideEffects);
      throw new Error('side_effect_then_throw: the side effect happened, then this failure');
    }),
  ];

  (async () => {
    await EchoDemo.registerAll(tools);
    EchoDemo.markReady();
  })();
})();
