/**
 * The developer console end to end (issue 11 item 4; docs/raw-javascript.md, "Developer console"):
 * the real core behind the web host started as `--developer-mode` would, the BUILT renderer with
 * its xterm in the same Chromium as the real extension, a real shared tab, and an MCP SDK client.
 *
 * One story: the Developer console page exists only while developer mode is on; the person binds
 * the terminal to the shared tab with `.tab <id>`, types a line (real key presses into the xterm),
 * and it runs in the page as the person, receipted with the code's hash; a line whose Enter is a
 * script's (a synthetic keydown) runs nothing; the agent's approved script shows in the terminal
 * live; the page's output cannot drive the terminal; Ctrl+C stops waiting for a line that never
 * ends (outcome unknown); when developer mode goes off the page is gone.
 */
import { createHash } from 'node:crypto';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Page } from '@playwright/test';
import { test, expect, until } from './support/link-fixture';
import { agent, textOf } from './support/semantic-agent';
import { launchDeveloperWorld } from './support/developer-world';

const sha = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

/** What the terminal shows (xterm's DOM rows), one string. */
const screen = (page: Page) => page.locator('.xterm-rows');

/** Type a line into the terminal with real key presses, then a real Enter. */
async function typeLine(page: Page, line: string): Promise<void> {
  await page.locator('.xterm-helper-textarea').focus();
  await page.keyboard.type(line);
  await page.keyboard.press('Enter');
}

test('the developer console: bound to a shared tab, a line typed runs as the person with its hash, a synthetic Enter runs nothing, the agent’s script shows live, page output is inert, Ctrl+C stops waiting, gone when developer mode is off', async ({ launchWorld }) => {
  const { world, host, fireIdle } = await launchDeveloperWorld(launchWorld);
  const client = await agent(world);
  try {
    const { page, tabId } = await world.openShared(world.demo.at('hostile', '/hostile/raw-js/page.html'));
    const consolePage = await world.context.newPage();
    await consolePage.goto(host.newConsoleUrl());
    await consolePage.waitForURL(/#session=/);
    // No Developer console while developer mode is off.
    await expect(consolePage.getByTestId('nav-settings')).toBeVisible();
    await expect(consolePage.getByTestId('nav-developer')).toHaveCount(0);
    await consolePage.getByTestId('nav-settings').click();
    await consolePage.getByTestId('developer-mode-on-ask').click();
    await consolePage.getByTestId('developer-mode-confirm-on').click();
    await expect(consolePage.getByTestId('developer-mode-on')).toBeVisible();

    // The terminal lists the shared tab; nothing runs until it is bound.
    await consolePage.getByTestId('nav-developer').click();
    await expect(screen(consolePage)).toContainText(`${tabId}  ${world.demo.hostileOrigin}`);
    await typeLine(consolePage, '.tab ' + tabId);
    await expect(screen(consolePage)).toContainText(`Bound to tab ${tabId}`);

    // A line typed by the person runs in the page, as the person; its receipts carry the code's hash.
    const line = 'document.getElementById("marker").textContent = "from the terminal"; "length " + document.title.length';
    await typeLine(consolePage, line);
    await expect(screen(consolePage)).toContainText('untrusted page output · sha256 ' + sha(line).slice(0, 12));
    await expect(page.locator('#marker')).toHaveText('from the terminal');
    await expect(screen(consolePage)).toContainText('"length 21"');
    const mine = await until(() => world.receipts({ event: 'succeeded' }).find((r) => r.faculty === 'raw-js' && r.subjectHash === sha(line)), 'the receipt of the line');
    expect(mine.actor).toMatchObject({ kind: 'person' });
    expect(world.receipts({ requestId: mine.requestId ?? undefined }).map((r) => r.event)).not.toContain('approval-shown'); // the person's own Enter is the decision
    expect(JSON.stringify(world.receipts({ requestId: mine.requestId ?? undefined }))).not.toContain('from the terminal');

    // A script's synthetic Enter into the terminal runs nothing.
    const before = world.receipts({}).length;
    await consolePage.locator('.xterm-helper-textarea').focus();
    await consolePage.keyboard.type('document.getElementById("marker").textContent = "synthetic"');
    // Playwright's dispatchEvent builds the event in the page, as a script would: isTrusted is false.
    await consolePage.locator('.xterm-helper-textarea').dispatchEvent('keydown', { key: 'Enter', code: 'Enter', keyCode: 13, bubbles: true, cancelable: true });
    await expect(screen(consolePage)).toContainText('Not run: that Enter did not come from your keyboard.');
    await expect(page.locator('#marker')).toHaveText('from the terminal');
    expect(world.receipts({}).filter((r) => r.faculty === 'raw-js').length).toBe(world.receipts({}).slice(0, before).filter((r) => r.faculty === 'raw-js').length);

    // The page's output cannot drive the terminal: its escape sequences show as markers.
    await typeLine(consolePage, 'console.log("\\u001b[2J\\u001b[Hcleared"); "done"');
    await expect(screen(consolePage)).toContainText('⟨U+001B⟩[2J⟨U+001B⟩[Hcleared');
    await expect(screen(consolePage)).toContainText(`Bound to tab ${tabId}`); // the screen was not cleared

    // The agent's script, approved in the dialog, shows in the terminal as it runs and ends.
    const agentCode = 'document.querySelectorAll("*").length > 0';
    const pending = client.callTool({ name: 'page_run_script', arguments: { tabId, code: agentCode, world: 'MAIN' } }) as Promise<CallToolResult>;
    const view = await until(() => world.core.broker.approvals.list().find((v) => v.subjectHash === sha(agentCode)), 'the approval of the agent’s script');
    await world.core.api.decideApproval({ requestId: view.requestId, decision: 'approve' });
    expect((await pending).isError, textOf(await pending)).toBeFalsy();
    await consolePage.getByTestId('nav-developer').click();
    await expect(screen(consolePage)).toContainText(`tab ${tabId} runs a script in MAIN (sha256 ${sha(agentCode).slice(0, 12)}`);
    await expect(screen(consolePage)).toContainText(`script sha256 ${sha(agentCode).slice(0, 12)}… ended:`);

    // Ctrl+C stops waiting for a line that never ends: outcome unknown, reload offered.
    // The line marks the page first, so the test presses Ctrl+C only once the line has reached the page
    // (a Stop before the send would rightly be `cancelled`, nothing having run).
    const endlessLine = 'document.getElementById("marker").textContent = "endless"; new Promise(() => {})';
    await typeLine(consolePage, endlessLine);
    await expect(page.locator('#marker')).toHaveText('endless');
    const endless = await until(() => world.receipts({ event: 'dispatched' }).find((r) => r.faculty === 'raw-js' && r.subjectHash === sha(endlessLine)), 'the endless line dispatched');
    await consolePage.keyboard.press('Control+C');
    await expect(screen(consolePage)).toContainText('Stopped waiting.');
    const terminalText = await screen(consolePage).textContent();
    const trail = () => world.receipts({ requestId: endless.requestId ?? undefined });
    await until(() => trail().find((r) => r.event === 'outcome-unknown'), 'the outcome-unknown receipt of the stopped line').catch((e: Error) => {
      throw new Error(`${e.message}; its receipts: ${trail().map((r) => r.event).join(', ')}; the terminal: ${terminalText}`);
    });
    await expect(screen(consolePage)).toContainText('Outcome unknown (outcome-unknown)');

    // Developer mode off (the idle timeout): the page and its nav entry are gone.
    fireIdle();
    await expect(consolePage.getByTestId('nav-developer')).toHaveCount(0);
    await expect(consolePage.getByTestId('developer-console')).toHaveCount(0);
    await consolePage.close();
  } finally {
    await client.close();
    await host.close();
  }
});
