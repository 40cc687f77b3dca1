/**
 * Raw JavaScript and developer mode end to end (issue 11 items 2 and 3; docs/raw-javascript.md):
 * the real core with the web host's `--developer-mode` gate, the BUILT renderer in the same
 * Chromium as the real extension, an MCP SDK client, and real pages.
 *
 * One story: the person switches developer mode on with a real click in the confirmation (a
 * script's click() is ignored) → the agent hears notifications/tools/list_changed and sees
 * page_run_script → an approved script runs and its result comes back; a script cannot read
 * chrome.storage; a CSP page refuses evaluation (csp-blocked); code changed by one character after
 * approval is refused by the extension; the idle timer (the core's injected timer, fired by the test)
 * turns the mode off, the tool is gone and a call is refused. And, without the opt-in, the settings
 * API cannot switch it on. The receipts of each.
 */
import { createHash, randomBytes } from 'node:crypto';
import { ToolListChangedNotificationSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startWebHost } from '../../src/main/web/server';
import { argumentsHash } from '../../src/shared/canonical';
import { LIMITS } from '../../src/shared/limits';
import type { RawScriptSubject } from '../../src/shared/ipc';
import type { ScriptRun } from '../../src/shared/raw-script';
import { test, expect, until } from './support/link-fixture';
import { agent, events, header, textOf } from './support/semantic-agent';
import { launchDeveloperWorld } from './support/developer-world';
import { RENDERER_DIR, startRealConsole } from './support/real-console';

const sha = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');
const requestIdOf = (r: CallToolResult) => /requestId: (\S+)/.exec(textOf(r))?.[1] ?? (header(r).requestId as string);

test('developer mode on by the person in the web host (--developer-mode), list_changed, approved scripts with results, chrome.storage unreadable, CSP refusal, a one-character change refused, the idle timeout; receipts of each', async ({ launchWorld }) => {
  // What `node out/main/web.js --developer-mode` builds; the idle timer fired by the test instead of waiting 30 minutes.
  const { world, host, idleArmed, fireIdle } = await launchDeveloperWorld(launchWorld);
  const client = await agent(world);
  let listChanged = 0;
  client.setNotificationHandler(ToolListChangedNotificationSchema, async () => void listChanged++);
  const toolNames = async () => (await client.listTools()).tools.map((t) => t.name);
  // The live feed of runs the developer console subscribes to (ConsoleEvent `script-run`).
  const runs: ScriptRun[] = [];
  const unsubscribe = world.core.onEvent((e) => void (e.kind === 'script-run' && runs.push(e.run)));
  try {
    expect(await toolNames()).not.toContain('page_run_script');

    // 1. The person switches developer mode on in the console tab; a script's click() does nothing.
    const consolePage = await world.context.newPage();
    await consolePage.goto(host.newConsoleUrl());
    await consolePage.waitForURL(/#session=/);
    await consolePage.getByTestId('nav-settings').click();
    await consolePage.getByTestId('developer-mode-on-ask').click();
    await consolePage.evaluate(() => (globalThis as unknown as { document: { querySelector(s: string): { click(): void } } }).document.querySelector('[data-testid="developer-mode-confirm-on"]').click());
    await expect(consolePage.getByTestId('developer-mode-ignored')).toBeVisible();
    expect(world.core.developerMode.on).toBe(false);
    await consolePage.getByTestId('developer-mode-confirm-on').click();
    await expect(consolePage.getByTestId('developer-mode-on')).toBeVisible();
    await expect(consolePage).toHaveTitle(/^DEVELOPER MODE/);
    expect(world.core.developerMode.on).toBe(true);
    expect(world.receipts({ event: 'developer-mode-on' })[0]).toMatchObject({ actor: { kind: 'person' }, detail: { on: true, by: 'person' } });

    // 2. The agent is told, and the tool is there.
    await until(() => listChanged >= 1, 'notifications/tools/list_changed');
    expect(await toolNames()).toContain('page_run_script');

    // 3. An approved script runs and its result comes back; the dialog showed the whole code and its hash.
    const { page, tabId } = await world.openShared(world.demo.at('hostile', '/hostile/raw-js/page.html'));
    const code = 'console.log("hello from", document.title);\ndocument.getElementById("marker").textContent = "ran";\nPromise.resolve(document.title.length + 1)';
    const before = new Set(world.core.broker.approvals.list().map((v) => v.requestId));
    const pending = client.callTool({ name: 'page_run_script', arguments: { tabId, code, world: 'MAIN' } }) as Promise<CallToolResult>;
    const view = await until(() => world.core.broker.approvals.list().find((v) => !before.has(v.requestId)), 'the approval of page_run_script');
    expect(view).toMatchObject({ faculty: 'raw-js', operation: 'run', kind: 'mutation', subjectHash: sha(code), arguments: { code, world: 'MAIN' }, argumentsHash: await argumentsHash({ code, world: 'MAIN' }) });
    expect(view.subject as RawScriptSubject).toMatchObject({ type: 'raw-script', code, codeHash: sha(code), world: 'MAIN' });
    await expect(consolePage.getByTestId('field-script-code')).toHaveText(code);
    await expect(consolePage.getByTestId('field-script-hash')).toHaveText(sha(code));
    await expect(consolePage.getByTestId('field-script-warning')).toContainText('anything this page can do');
    await expect(page.locator('#marker')).toHaveText('untouched'); // nothing before approval
    expect(await world.core.api.decideApproval({ requestId: view.requestId, decision: 'approve' })).toEqual({ ok: true, value: null });
    const ran = await pending;
    expect(ran.isError, textOf(ran)).toBeFalsy();
    expect(header(ran)).toMatchObject({ outcome: 'succeeded', codeHash: sha(code), world: 'MAIN', status: 'returned' });
    expect(textOf(ran)).toMatch(/untrusted/);
    expect(textOf(ran)).toMatch(/"value":\s*"22"/); // "Raw JavaScript target".length + 1
    expect(textOf(ran)).toContain('hello from Raw JavaScript target');
    await expect(page.locator('#marker')).toHaveText('ran');
    const runId = header(ran).requestId as string;
    expect(events(world, runId)).toEqual(['requested', 'validated', 'approval-shown', 'approved', 'dispatched', 'succeeded']);
    expect(world.receipts({ requestId: runId }).every((r) => r.event === 'requested' || r.subjectHash === sha(code))).toBe(true);
    expect(JSON.stringify(world.receipts({ requestId: runId }))).not.toContain('hello from');
    expect(runs.filter((r) => r.codeHash === sha(code)).map((r) => [r.actor, r.status])).toEqual([['agent', 'running'], ['agent', 'succeeded']]);
    expect(runs.find((r) => r.status === 'succeeded')!.output).toMatchObject({ status: 'returned', value: '22', console: [{ level: 'log', text: 'hello from Raw JavaScript target' }] });

    // 3b. The same in the page's same-origin iframe, by its frameId: the dialog names the frame, and the script
    //     runs in that document only (its title is the frame's; the top's marker stays as step 3 left it).
    const w = await world.worker();
    const frames = await w.evaluate((id) => chrome.webNavigation.getAllFrames({ tabId: id }), tabId);
    const inner = frames!.find((f) => f.url.endsWith('/raw-js/frame.html'))!;
    expect(inner.frameId).toBeGreaterThan(0);
    const frameCode = 'document.getElementById("marker").textContent = "ran in the frame"; document.title';
    const frameP = client.callTool({ name: 'page_run_script', arguments: { tabId, frameId: inner.frameId, code: frameCode, world: 'MAIN' } }) as Promise<CallToolResult>;
    const frameView = await until(() => world.core.broker.approvals.list().find((v) => v.subjectHash === sha(frameCode)), 'the approval of the frame script');
    expect(frameView.frame.frameId).toBe(inner.frameId);
    await expect(consolePage.getByTestId('field-frame')).toHaveText(String(inner.frameId));
    await world.core.api.decideApproval({ requestId: frameView.requestId, decision: 'approve' });
    const frameRan = await frameP;
    expect(header(frameRan), textOf(frameRan)).toMatchObject({ outcome: 'succeeded', frameId: inner.frameId, status: 'returned' });
    expect(textOf(frameRan)).toMatch(/"value":\s*"Raw JavaScript frame"/);
    await expect(page.frameLocator('#inner').locator('#marker')).toHaveText('ran in the frame');
    await expect(page.locator('#marker')).toHaveText('ran');

    // 4. A script cannot read chrome.storage (where the pairing key is): the MAIN world has none.
    expect(await w.evaluate(async () => Object.keys(await chrome.storage.local.get(null)).length)).toBeGreaterThan(0);
    const steal = '(async () => { try { return "READ " + JSON.stringify(await chrome.storage.local.get(null)); } catch (e) { return "unreadable: " + e.name; } })()';
    const stealP = client.callTool({ name: 'page_run_script', arguments: { tabId, code: steal, world: 'MAIN' } }) as Promise<CallToolResult>;
    const stealView = await until(() => world.core.broker.approvals.list().find((v) => v.subjectHash === sha(steal)), 'the approval of the storage read');
    await world.core.api.decideApproval({ requestId: stealView.requestId, decision: 'approve' });
    const stolen = await stealP;
    expect(textOf(stolen)).toMatch(/unreadable: (TypeError|ReferenceError)/);
    expect(textOf(stolen)).not.toContain('READ');
    // And USER_SCRIPT: not allowed in this browser, refused clearly before anything runs.
    const us = client.callTool({ name: 'page_run_script', arguments: { tabId, code: '1', world: 'USER_SCRIPT' } }) as Promise<CallToolResult>;
    const usView = await until(() => world.core.broker.approvals.list().find((v) => (v.arguments as { world?: string }).world === 'USER_SCRIPT'), 'the approval of the USER_SCRIPT run');
    await world.core.api.decideApproval({ requestId: usView.requestId, decision: 'approve' });
    const usR = await us;
    expect(textOf(usR)).toMatch(/^Error \(user-scripts-unavailable\).*Allow User Scripts/);
    expect(events(world, requestIdOf(usR)).at(-1)).toBe('refused');

    // 5. A page whose CSP forbids eval: a clear refusal, never a silent failure; nothing ran.
    const csp = await world.openShared(world.demo.at('hostile', '/hostile/raw-js/no-eval.html'));
    const cspCode = 'document.getElementById("marker").textContent = "ran"; 1';
    const cspP = client.callTool({ name: 'page_run_script', arguments: { tabId: csp.tabId, code: cspCode, world: 'MAIN' } }) as Promise<CallToolResult>;
    const cspView = await until(() => world.core.broker.approvals.list().find((v) => v.tab.tabId === csp.tabId), 'the approval on the CSP page');
    await world.core.api.decideApproval({ requestId: cspView.requestId, decision: 'approve' });
    const cspR = await cspP;
    expect(textOf(cspR)).toMatch(/^Error \(csp-blocked\): The page's Content-Security-Policy forbids evaluating JavaScript/);
    expect(events(world, requestIdOf(cspR))).toEqual(['requested', 'validated', 'approval-shown', 'approved', 'dispatched', 'refused']);
    expect(world.receipts({ requestId: requestIdOf(cspR), event: 'refused' })[0]!.detail).toMatchObject({ code: 'csp-blocked', by: 'extension' });
    await expect(csp.page.locator('#marker')).toHaveText('untouched');

    // 6. Code changed by one character after approval: the grant binds the approved code's hash, and
    //    the extension refuses the other code before it runs (both ways of carrying it).
    const approved = 'document.getElementById("marker").textContent = "A"';
    const changed = 'document.getElementById("marker").textContent = "B"';
    const loc = await world.request({ op: 'read', faculty: 'webmcp-discover', operation: 'locate', tabId, arguments: { frameId: 0, documentId: null } });
    if (!loc.ok) throw new Error(loc.error.message);
    const l = loc.value as { documentId: string; urlHash: string };
    const grantFor = async (args: Record<string, unknown>) => {
      const g = await world.core.link.signGrant({
        requestId: `r-${randomBytes(6).toString('hex')}`, faculty: 'raw-js', operation: 'run', tabId, frameId: 0, documentId: l.documentId, origin: world.demo.hostileOrigin,
        urlHash: l.urlHash, subjectHash: sha(approved), argumentsHash: await argumentsHash(args), nonce: randomBytes(16).toString('hex'), expiresAt: Date.now() + LIMITS.grantTtlMs,
      });
      if (!g.ok) throw new Error(g.error.message);
      return g.value;
    };
    const dispatch = async (subjectCode: string, args: Record<string, unknown>, grantArgs: Record<string, unknown>) =>
      world.request({ op: 'dispatch', faculty: 'raw-js', operation: 'run', target: { tabId, frameId: 0, documentId: l.documentId }, subject: { codeHash: sha(subjectCode) }, arguments: args, grant: await grantFor(grantArgs), timeoutMs: 10_000 }, { timeoutMs: 20_000 });
    // The approved grant, the changed code in the arguments.
    const one = await dispatch(approved, { code: changed, world: 'MAIN' }, { code: approved, world: 'MAIN' });
    expect(one).toMatchObject({ ok: true, value: { outcome: 'refused', refusal: 'arguments-mismatch' } });
    // A grant over the changed arguments but the approved code's hash as its subject: the code is hashed again.
    const two = await dispatch(approved, { code: changed, world: 'MAIN' }, { code: changed, world: 'MAIN' });
    expect(two).toMatchObject({ ok: true, value: { outcome: 'refused', refusal: 'arguments-mismatch' } });
    await expect(page.locator('#marker')).toHaveText('ran');
    // Through the pipeline, the changed script is another script: its own approval, its own hash.
    const again = client.callTool({ name: 'page_run_script', arguments: { tabId, code: changed, world: 'MAIN' } }) as Promise<CallToolResult>;
    const againView = await until(() => world.core.broker.approvals.list().find((v) => v.subjectHash === sha(changed)), 'a new approval for the changed code');
    expect(againView.subjectHash).not.toBe(sha(approved));
    await world.core.api.decideApproval({ requestId: againView.requestId, decision: 'deny', reason: 'not what I approved' });
    expect(textOf(await again)).toMatch(/^Error \(denied\)/);

    // 7. The person's own line (the developer console's entry): no dialog, live, Stop → outcome-unknown, then the offered reload.
    const lineCode = 'document.getElementById("marker").textContent = "person"; new Promise(() => {})';
    const line = world.core.api.runConsoleLine({ tabId, code: lineCode });
    const running = await until(() => runs.find((r) => r.actor === 'person' && r.status === 'running'), "the person's run to start");
    await expect(page.locator('#marker')).toHaveText('person');
    expect(world.core.broker.approvals.list()).toEqual([]);
    expect(await world.core.api.stopScript({ runId: running.runId })).toMatchObject({ ok: true, value: { status: 'stopped', offerReload: true } });
    const ended = await line;
    expect(ended).toMatchObject({ ok: true, value: { status: 'stopped', offerReload: true, actor: 'person', codeHash: sha(lineCode) } });
    const lineId = (ended as { value: ScriptRun }).value.requestId!;
    expect(events(world, lineId)).toEqual(['requested', 'validated', 'approved', 'dispatched', 'outcome-unknown']);
    // The subject hash is known from `validated` on (the request is recorded before anything is checked).
    expect(world.receipts({ requestId: lineId }).every((r) => r.actor.kind === 'person' && (r.event === 'requested' || r.subjectHash === sha(lineCode)))).toBe(true);
    expect(await world.core.api.reloadTab({ tabId })).toEqual({ ok: true, value: null });
    await expect(page.locator('#marker')).toHaveText('untouched');
    expect(world.receipts({ event: 'tab-reloaded' })[0]).toMatchObject({ actor: { kind: 'person' }, tabId });

    // 8. The idle timeout turns developer mode off: receipt, list_changed, the tool gone, a call refused with a receipt.
    const changes = listChanged;
    expect(idleArmed()).toBe(true);
    fireIdle();
    expect(world.core.developerMode.on).toBe(false);
    expect(world.receipts({ event: 'developer-mode-off' })[0]).toMatchObject({ actor: { kind: 'console' }, detail: { on: false, by: 'console', why: 'idle-timeout' } });
    await until(() => listChanged > changes, 'list_changed after the idle timeout');
    expect(await toolNames()).not.toContain('page_run_script');
    await expect(consolePage.getByTestId('developer-mode-on')).toHaveCount(0);
    const late = (await client.callTool({ name: 'page_run_script', arguments: { tabId, code: '1', world: 'MAIN' } })) as CallToolResult;
    expect(textOf(late)).toMatch(/^Error \(developer-mode-off\)/);
    expect(world.receipts({ requestId: requestIdOf(late) }).map((r) => [r.event, r.faculty])).toEqual([['refused', 'raw-js'], ['requested', 'raw-js']]);
    await consolePage.close();
  } finally {
    unsubscribe();
    await client.close();
    await host.close();
  }
});

test('without --developer-mode, the web host refuses developer mode on from the settings switch, even for a real click; refused with a receipt', async () => {
  const c = await startRealConsole('echo-rawjs-');
  try {
    const page = await c.browser.newPage();
    await page.goto(c.host.newConsoleUrl());
    await page.waitForURL(/#session=/);
    await page.getByTestId('nav-settings').click();
    await page.getByTestId('developer-mode-on-ask').click();
    await page.getByTestId('developer-mode-confirm-on').click();
    await expect(page.getByTestId('developer-mode-error')).toContainText('--developer-mode');
    expect(c.core.developerMode.on).toBe(false);
    expect(c.core.ledger.query({ event: 'developer-mode-on' }).receipts).toEqual([]);
    expect(c.core.ledger.query({ event: 'refused' }).receipts[0]).toMatchObject({ actor: { kind: 'console' }, detail: { method: 'updateSettings', action: 'developer-mode-on', code: 'trusted-input-unavailable' } });
    expect(await c.core.api.updateSettings({ developerMode: true })).toMatchObject({ ok: false, error: { code: 'trusted-input-unavailable' } });
    expect(c.core.agentEndpoint.tools.get('page_run_script')).toBeUndefined();
  } finally {
    await c.close();
  }
});
