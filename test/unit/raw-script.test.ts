/**
 * Raw JavaScript (issue 11 item 3; docs/raw-javascript.md) below the browser:
 *  - the extension's runner with chrome.userScripts replaced (absent in headless Chromium, FACTS):
 *    refused when the person has not allowed user scripts, and the exact injection when it exists;
 *    the generated user-script source run for real in Node;
 *  - the page function's bounds (value, console entries) and its CSP refusal; the console's bounds
 *    and the pipeline's redaction of what comes back;
 *  - the pipeline through the real core with a FakeLink: only while developer mode is on; the grant
 *    bound to the code's SHA-256 with tab, frame, document and URL hash; the same code twice is two
 *    approvals and no policy rule skips one; Stop after dispatch is outcome-unknown; the person's
 *    console line runs without a dialog and its receipts carry the code hash, never the code.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { rawJs, runScript, userScriptSource, type UserScriptInjection } from '../../extension/src/background/faculties/raw-js';
import { runScriptInPage } from '../../extension/src/lib/raw-script-page';
import { createConsoleCore, type ConsoleCore } from '../../src/main/core';
import { boundText } from '../../src/shared/bounds';
import { RAW_SCRIPT_BOUNDS, scriptArgumentsProblem, scriptHash, scriptOutputOf } from '../../src/shared/raw-script';
import { ok } from '../../src/shared/result';
import { FakeLink, ORIGIN, sharedTab } from './broker.fixtures';

const sha = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');
const TARGET = { tabId: 7, frameId: 0, documentId: 'doc-1' };
const URL_NOW = `${ORIGIN}/shop`;
const BOUNDS = { valueChars: RAW_SCRIPT_BOUNDS.valueChars, consoleEntries: RAW_SCRIPT_BOUNDS.consoleEntries, consoleEntryChars: RAW_SCRIPT_BOUNDS.consoleEntryChars, errorChars: RAW_SCRIPT_BOUNDS.errorChars };

/** Run with a page-like global `location` (the page function reads only location.href). */
async function inPage<T>(href: string, f: () => Promise<T>): Promise<T> {
  const g = globalThis as unknown as { location?: unknown };
  const had = g.location;
  g.location = { href };
  try {
    return await f();
  } finally {
    g.location = had;
  }
}

describe('the runner (extension side), with chrome APIs replaced', () => {
  it('USER_SCRIPT without chrome.userScripts (the person has not allowed user scripts): refused user-scripts-unavailable, nothing runs', async () => {
    let mainRuns = 0;
    const r = await runScript(TARGET, '1 + 1', 'USER_SCRIPT', URL_NOW, { executeMain: async () => void mainRuns++, userScripts: () => undefined });
    expect(r).toMatchObject({ ok: false, error: { code: 'user-scripts-unavailable', message: expect.stringContaining('Allow User Scripts') } });
    expect(mainRuns).toBe(0);
  });

  it('USER_SCRIPT with chrome.userScripts: one execute in exactly the granted document, world USER_SCRIPT, the page function around the code as JSON; its answer read back', async () => {
    const calls: UserScriptInjection[] = [];
    const code = 'console.warn("w", {a: 1}); document.title + "</script>"';
    const r = await runScript(TARGET, code, 'USER_SCRIPT', URL_NOW, {
      executeMain: async () => {
        throw new Error('MAIN must not be used');
      },
      userScripts: () => ({
        async execute(inj) {
          calls.push(inj);
          // What Chrome would do in the page: run the source (here in Node, with a page-like global).
          const g = globalThis as unknown as { document?: unknown };
          g.document = { title: 'Shop' };
          try {
            return [{ result: await inPage(URL_NOW, () => (0, eval)(inj.js[0]!.code) as Promise<unknown>) }];
          } finally {
            delete g.document;
          }
        },
      }),
    });
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ target: { tabId: 7, documentIds: ['doc-1'] }, world: 'USER_SCRIPT', injectImmediately: true });
    expect(calls[0]!.js[0]!.code).toBe(userScriptSource(code, URL_NOW));
    expect(calls[0]!.js[0]!.code).toContain(JSON.stringify(code));
    expect(r.ok).toBe(true);
    const out = scriptOutputOf(r.ok ? r.value.result : null);
    expect(out).toMatchObject({ status: 'returned', valueType: 'string', value: 'Shop</script>', console: [{ level: 'warn', text: 'w {"a":1}' }] });
  });

  it('refuses code that is not the code whose hash the grant binds (arguments-mismatch), before running anything', async () => {
    let runs = 0;
    const f = rawJs({ executeMain: async () => void runs++, userScripts: () => undefined });
    const r = await f.execute(TARGET, { requestId: 'r1', operation: 'run', prepared: { codeHash: sha('1+1') }, urls: { tab: URL_NOW, frame: URL_NOW }, args: { code: '1+2', world: 'MAIN' } });
    expect(r).toMatchObject({ ok: false, error: { code: 'arguments-mismatch' } });
    expect(runs).toBe(0);
    expect(f.checkRequest('run', { codeHash: sha('x') }, { code: 'x', world: 'ISOLATED' })).toMatch(/ISOLATED is never offered/);
    expect(f.checkRequest('run', { codeHash: 'nothex' }, { code: 'x', world: 'MAIN' })).toMatch(/codeHash/);
  });
});

describe('the page function and the bounds of what comes back', () => {
  // The page function passes each call on to the console it wrapped: keep the test's output quiet.
  beforeEach(() => {
    for (const l of ['log', 'info', 'warn', 'error', 'debug'] as const) vi.spyOn(console, l).mockImplementation(() => undefined);
  });
  afterEach(() => vi.restoreAllMocks());
  it('awaits a promise, captures console output within its bounds, and restores console', async () => {
    const before = console.log;
    const a = await inPage(URL_NOW, () => runScriptInPage('for (let i = 0; i < 130; i++) console.log("n", i, "\\"".repeat(3000)); Promise.resolve({big: "y".repeat(20000)})', URL_NOW, BOUNDS));
    expect(console.log).toBe(before);
    expect(a.kind).toBe('ran');
    const out = scriptOutputOf(JSON.stringify((a as { output: unknown }).output))!;
    expect(out.console).toHaveLength(RAW_SCRIPT_BOUNDS.consoleEntries);
    expect(out.consoleOmitted).toBe(30);
    expect(out.console[0]!.text.length).toBe(RAW_SCRIPT_BOUNDS.consoleEntryChars);
    expect(out.value!.length).toBe(RAW_SCRIPT_BOUNDS.valueChars);
    expect(out.valueTruncated).toBe(true);
    // At its bounds, with the worst JSON escaping, the answer stays whole through the pipeline's bound.
    const shaped = boundText(JSON.stringify((a as { output: unknown }).output));
    expect(shaped.truncated).toBe(false);
    expect(scriptOutputOf(shaped.text)).not.toBeNull();
  });

  it('a throw is the answer `threw` with its message; another URL is `navigated`; a page whose CSP forbids eval is `csp-blocked` before any of the code runs', async () => {
    const threw = await inPage(URL_NOW, () => runScriptInPage('throw new TypeError("nope")', URL_NOW, BOUNDS));
    expect(threw).toMatchObject({ kind: 'ran', output: { status: 'threw', error: expect.stringMatching(/^TypeError: nope/) } });
    expect(await inPage(`${URL_NOW}#moved`, () => runScriptInPage('1', URL_NOW, BOUNDS))).toMatchObject({ kind: 'navigated' });
    const g = globalThis as unknown as { eval: (s: string) => unknown; ran?: boolean };
    const realEval = g.eval;
    g.eval = () => {
      throw new EvalError("Refused to evaluate a string as JavaScript because 'unsafe-eval' is not an allowed source of script");
    };
    try {
      expect(await inPage(URL_NOW, () => runScriptInPage('globalThis.ran = true', URL_NOW, BOUNDS))).toMatchObject({ kind: 'csp-blocked', message: expect.stringContaining('unsafe-eval') });
    } finally {
      g.eval = realEval;
    }
    expect(g.ran).toBeUndefined();
  });

  it('the console re-bounds a hostile answer and the pipeline redacts secrets in it (value and console output)', () => {
    const hostile = JSON.stringify({
      status: 'returned', valueType: 'object', value: JSON.stringify({ password: 'hunter2-hunter2' }), valueTruncated: false, error: null,
      console: [...Array.from({ length: 150 }, () => ({ level: 'log', text: 'z'.repeat(1500) })), { level: 'evil', text: 'x' }, { level: 'error', text: 'card 4111 1111 1111 1111' }],
      consoleOmitted: 3, elapsedMs: 12,
    });
    const shaped = boundText(hostile);
    expect(shaped.redacted).toBe(true);
    const out = scriptOutputOf(shaped.text)!;
    expect(out.value).not.toContain('hunter2');
    expect(out.console).toHaveLength(RAW_SCRIPT_BOUNDS.consoleEntries);
    expect(out.console.every((c) => c.text.length <= RAW_SCRIPT_BOUNDS.consoleEntryChars)).toBe(true);
    expect(out.consoleOmitted).toBe(3 + 51);
    expect(JSON.stringify(scriptOutputOf(boundText(JSON.stringify({ status: 'returned', valueType: 'string', value: null, console: [{ level: 'error', text: 'card 4111 1111 1111 1111' }] })).text))).not.toContain('4111 1111 1111 1111');
    expect(scriptOutputOf('{"status":"weird","console":[]}')).toBeNull();
    expect(scriptArgumentsProblem({ code: 'x'.repeat(RAW_SCRIPT_BOUNDS.codeBytes + 1), world: 'MAIN' })).toMatch(/longer than/);
    expect(scriptArgumentsProblem({ code: '1', world: 'MAIN', extra: 1 })).toMatch(/exactly/);
  });
});

describe('the pipeline through the real core (FakeLink)', () => {
  let dir: string;
  let core: ConsoleCore;
  let link: FakeLink;
  let fire: (() => void) | null;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'echo-raw-js-'));
    link = new FakeLink();
    link.tabs = [sharedTab(7)];
    link.reads.set('webmcp-discover', (r) => ok({ frameId: (r.arguments as { frameId: number }).frameId, documentId: 'doc-1', tabUrl: URL_NOW, frameUrl: URL_NOW, urlHash: 'a'.repeat(64) }));
    link.invokeHandler = async () => ok({ outcome: 'succeeded', result: JSON.stringify({ status: 'returned', valueType: 'number', value: '2', valueTruncated: false, error: null, console: [], consoleOmitted: 0, elapsedMs: 1 }), elapsedMs: 2 });
    fire = null;
    core = createConsoleCore({
      dataDir: join(dir, 'data'), mcpPort: 0, link, approvalTimeoutMs: 60_000,
      // A policy rule that would allow everything raw-js: it must not skip the person's approval.
      policyRules: [{ faculty: 'raw-js', origin: '*', action: 'allow', reason: 'test: allow all raw-js' }],
      developerModeTimer: (fn) => ((fire = fn), { cancel: () => void (fire = null) }),
    });
    await core.start();
    await core.broker.sharing.refresh();
  });
  afterEach(async () => {
    await core.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const agent = { actor: { kind: 'agent' as const, name: 'bot', tokenId: 'tok_0123456789abcdef' }, kind: 'mutation' as const };
  const approveNext = async (): Promise<string> => {
    for (;;) {
      const v = core.broker.approvals.list()[0];
      if (v) {
        expect(core.broker.decide(v.requestId, 'approve')).toEqual({ ok: true, value: null });
        return v.requestId;
      }
      await new Promise((r) => setImmediate(r));
    }
  };

  it('exists only while developer mode is on; refused with a receipt when off; the idle timer turns it off', async () => {
    expect(core.agentEndpoint.tools.get('page_run_script')).toBeUndefined();
    expect(core.agentEndpoint.tools.dormantOf('page_run_script')).toMatchObject({ faculty: 'raw-js', code: 'developer-mode-off' });
    const off = await core.broker.scripts.run({ tabId: 7, code: '1+1', world: 'MAIN' }, agent);
    expect(off.answer).toMatchObject({ ok: false, error: { code: 'developer-mode-off' } });
    expect(off.run.status).toBe('refused');
    expect(core.ledger.query({ requestId: off.answer.requestId }).receipts.map((r) => r.event).reverse()).toEqual(['requested', 'refused']);
    core.developerMode.switchOn();
    expect(core.agentEndpoint.tools.get('page_run_script')).toBeDefined();
    fire!();
    expect(core.developerMode.on).toBe(false);
    expect(core.agentEndpoint.tools.get('page_run_script')).toBeUndefined();
    expect(core.ledger.query({ event: 'developer-mode-off' }).receipts[0]).toMatchObject({ actor: { kind: 'console' }, detail: { why: 'idle-timeout' } });
  });

  it('binds the grant to the code SHA-256, tab, frame, document and URL hash; the same code twice is two approvals, even under an allow rule; receipts hold the hash, never the code', async () => {
    core.developerMode.switchOn();
    const code = 'document.title = "SECRET-CODE-TEXT"; 1 + 1';
    for (let i = 0; i < 2; i++) {
      const p = core.broker.scripts.run({ tabId: 7, code, world: 'MAIN' }, agent);
      const requestId = await approveNext();
      const { answer, run } = await p;
      expect(answer.ok, JSON.stringify(answer)).toBe(true);
      expect(run).toMatchObject({ status: 'succeeded', actor: 'agent', codeHash: sha(code), output: { status: 'returned', value: '2' } });
      const grant = (link.requests.filter((r) => r.op === 'dispatch').at(-1) as unknown as { grant: Record<string, unknown> }).grant;
      expect(grant).toMatchObject({ faculty: 'raw-js', operation: 'run', tabId: 7, frameId: 0, documentId: 'doc-1', urlHash: 'a'.repeat(64), subjectHash: sha(code) });
      const d = link.requests.filter((r) => r.op === 'dispatch').at(-1) as { subject: unknown; arguments: unknown; timeoutMs: number };
      expect(d).toMatchObject({ subject: { codeHash: sha(code) }, arguments: { code, world: 'MAIN' } });
      expect(d.timeoutMs).toBeLessThanOrEqual(10_000);
      const receipts = core.ledger.query({ requestId }).receipts;
      expect(receipts.map((r) => r.event).reverse()).toEqual(['requested', 'validated', 'approval-shown', 'approved', 'dispatched', 'succeeded']);
      expect(receipts.every((r) => r.subjectHash === sha(code) || r.event === 'requested')).toBe(true);
      expect(JSON.stringify(receipts)).not.toContain('SECRET-CODE-TEXT');
    }
    expect(core.ledger.query({ event: 'approval-shown', limit: 10 }).receipts).toHaveLength(2);
    expect(await scriptHash(code)).toBe(sha(code));
  });

  it('Stop after dispatch: outcome-unknown, the run stopped and offering a reload; the same code is then blocked in that document until the page is looked at again', async () => {
    core.developerMode.switchOn();
    link.invokeHandler = () => new Promise(() => undefined); // synchronous page code that never ends
    const events: string[] = [];
    core.broker.scripts.onChange((r) => events.push(r.status));
    const p = core.broker.scripts.run({ tabId: 7, code: 'while (true) {}', world: 'MAIN' }, agent);
    await approveNext();
    await link.nextInvoke();
    const running = core.broker.scripts.list().find((r) => r.status === 'running')!;
    expect(core.broker.scripts.stop(running.runId)).toMatchObject({ ok: true, value: { status: 'stopped', offerReload: true } });
    const { answer, run } = await p;
    expect(answer).toMatchObject({ ok: false, error: { code: 'outcome-unknown' } });
    expect(run).toMatchObject({ status: 'stopped', offerReload: true });
    expect(core.ledger.query({ requestId: answer.requestId, event: 'outcome-unknown' }).receipts).toHaveLength(1);
    expect(events).toEqual(['running', 'stopped', 'stopped']);
    expect(core.broker.scripts.stop(running.runId)).toMatchObject({ ok: false, error: { code: 'run-unknown' } });
    const again = await core.broker.scripts.run({ tabId: 7, code: 'while (true) {}', world: 'MAIN' }, agent);
    expect(again.answer).toMatchObject({ ok: false, error: { code: 'outcome-unknown-pending' } });
    // The run's offer: the person reloads the shared tab (receipted); another tab is refused.
    expect(await core.api.reloadTab({ tabId: 7 })).toEqual({ ok: true, value: null });
    expect(link.requests.filter((r) => r.op === 'reload-tab')).toEqual([{ op: 'reload-tab', tabId: 7 }]);
    expect(core.ledger.query({ event: 'tab-reloaded' }).receipts[0]).toMatchObject({ actor: { kind: 'person' }, faculty: 'console', tabId: 7 });
    expect(await core.api.reloadTab({ tabId: 99 })).toMatchObject({ ok: false, error: { code: 'tab-not-shared' } });
    expect(link.requests.filter((r) => r.op === 'reload-tab')).toHaveLength(1);
  });

  it("the person's console line: gated, no dialog, the person as actor, the code hash in its receipts", async () => {
    // Without developer mode: refused.
    expect(await core.api.runConsoleLine({ tabId: 7, code: 'location.href' })).toMatchObject({ ok: false, error: { code: 'trusted-input-unavailable' } });
    core.developerMode.switchOn();
    // The core's default gate is the web host's without the opt-in: console lines refused.
    expect(await core.api.runConsoleLine({ tabId: 7, code: 'location.href' })).toMatchObject({ ok: false, error: { code: 'trusted-input-unavailable' } });
    const run = await core.broker.scripts.run({ tabId: 7, code: 'location.href', world: 'MAIN' }, { actor: { kind: 'person' }, kind: 'mutation', byPerson: true });
    expect(run.run).toMatchObject({ status: 'succeeded', actor: 'person' });
    const receipts = core.ledger.query({ requestId: run.answer.requestId }).receipts;
    expect(receipts.map((r) => r.event).reverse()).toEqual(['requested', 'validated', 'approved', 'dispatched', 'succeeded']);
    expect(receipts.every((r) => r.actor.kind === 'person')).toBe(true);
    expect(receipts[0]!.subjectHash).toBe(sha('location.href'));
    expect(core.broker.approvals.list()).toEqual([]);
  });
});
