/// <reference types="chrome" />
// The tool inspector end to end (issue 12 items 4 and 6; docs/inspector.md): Chromium 156 with
// WebMCP on and the built extension, the native host, the real console core and its web host with
// the console UI. One story on the bad-practices page (resources/demo/bad-practices):
//  - page lint finds every rule, from both halves (DOM facts read by the extension, descriptor facts);
//  - the inspector's tool list updates live when the page registers a new tool;
//  - a manual invoke through the generated form: the approval dialog is shown and approved by a real
//    Playwright click, the page's tool ran, the receipts name the person as actor, and the call
//    history shows the run;
//  - a manual invoke whose tool the page removes while its dialog waits: refused descriptor-changed,
//    the dialog gone, nothing run.
// Build first: npx electron-vite build && npm run build:extension && npm run build:tools
import path from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { LINT_RULE_IDS } from '../../src/shared/page-lint';
import { pairedMainJob } from './support/main-job-fixture';

const world = pairedMainJob(test, 'inspector-e2e');

// README screenshots: into docs/screenshots with ECHO_UPDATE_SCREENSHOTS=1, else test-results (as main-job.spec.ts).
const SHOTS = process.env.ECHO_UPDATE_SCREENSHOTS === '1' ? path.resolve(import.meta.dirname, '../../docs/screenshots') : path.resolve('test-results/inspector-screenshots');
async function shot(ui: Page, name: string): Promise<void> {
  await ui.bringToFront();
  await ui.screenshot({ path: path.join(SHOTS, name), timeout: 20_000 });
}

test('bad-practices page: every lint rule, a live tool list, and a manual invoke approved in the dialog with person-actor receipts', async () => {
  test.setTimeout(120_000);
  const { job } = world;
  const ui = job.consolePage!;
  const page = await job.openPage(job.servers.url('bad-practices'));
  const tabId = await job.shareThroughApi(page);

  await ui.getByTestId('nav-inspector').click();
  await expect(ui.locator(`[data-testid=inspector-tab] option[value="${tabId}"]`)).toHaveCount(1);
  await ui.getByTestId('inspector-tab').selectOption(String(tabId));

  // Page lint: every rule, each where the page put it.
  const lint = ui.getByTestId('inspector-lint');
  await expect(lint.getByTestId('lint-rule')).toHaveCount(LINT_RULE_IDS.length);
  expect(await lint.getByTestId('lint-rule').evaluateAll((els) => els.map((e) => e.getAttribute('data-rule')))).toEqual([...LINT_RULE_IDS]);
  const finding = (rule: string, tool?: string) => lint.locator(`[data-testid=lint-finding][data-rule="${rule}"]${tool ? `[data-tool="${tool}"]` : ''}`);
  await expect(finding('legacy-api')).toHaveText([/^navigator\.modelContext in "inline script 1"/, /^provideContext in "inline script 1"/]);
  await expect(finding('form-sensitive-field', 'quick_sign_in')).toContainText('a password field');
  await expect(finding('form-sensitive-field', 'save_card')).toContainText('a card field');
  await expect(finding('autosubmit-consequential', 'pay_order')).toHaveCount(1);
  // Chromium 156 reports no inputSchema for a tool registered without one.
  await expect(finding('schema-missing', 'track_order')).toHaveCount(1);
  await expect(finding('schema-open', 'search_products')).toHaveCount(1);
  await expect(finding('description-empty', 'contact_us')).toHaveCount(1);
  await expect(finding('description-long', 'store_policies')).toHaveCount(1);
  await expect(finding('schema-huge', 'bulk_update_cart')).toContainText('60 properties');
  await expect(finding('schema-ref', 'apply_coupon')).toHaveCount(1);
  await expect(finding('name-collision', 'get_help')).toContainText('registered in frames 0, ');
  await expect(finding('hidden-instructions', 'recommend_products')).toContainText('hidden-instructions');
  // Each rule says why and links to the draft or Chrome's guidance.
  await expect(lint.locator('[data-rule="schema-open"] a').first()).toHaveAttribute('href', 'https://developer.chrome.com/docs/ai/webmcp/best-practices');
  await shot(ui, 'inspector-lint.png');

  // Live: the page registers a tool; the list shows it without the person doing anything.
  const rows = ui.getByTestId('inspector-tool-row');
  await expect(rows.and(ui.locator('[data-tool="search_products"]'))).toHaveCount(1);
  expect(await page.evaluate(() => (globalThis as unknown as { __badPractices: { addTool(n: string): Promise<{ result: string }> } }).__badPractices.addTool('added_live'))).toMatchObject({ result: 'registered' });
  await expect(rows.and(ui.locator('[data-tool="added_live"]'))).toHaveCount(1, { timeout: 15_000 });

  // A manual invoke of search_products from the form generated from its inputSchema.
  await ui.getByTestId('inspector-tool-search_products').click();
  const detail = ui.getByTestId('inspector-tool-detail');
  await expect(detail.getByTestId('inspector-annotations')).toHaveText(/"readOnlyHint":true/);
  await detail.getByTestId('inspector-field-query').fill('tent');
  await detail.getByTestId('inspector-run').click();
  await expect(detail.getByTestId('inspector-call-status')).toHaveAttribute('data-state', 'pending');

  // The approval dialog, as for an agent, naming the person; approved by a real click.
  const dialog = ui.getByTestId('approval-dialog');
  await expect(dialog).toBeVisible();
  await expect(dialog.getByTestId('field-agent')).toHaveText('You (tool inspector)');
  await expect(dialog.getByTestId('field-arguments')).toContainText('"query": "tent"');
  const view = job.core.broker.approvals.list().find((a) => a.subject.toolName === 'search_products')!;
  expect(view).toBeTruthy();
  await dialog.getByTestId('end-of-request').scrollIntoViewIfNeeded(); // Approve arms once the whole request was seen
  await expect(dialog.getByTestId('approve-button')).toBeEnabled();
  await dialog.getByTestId('approve-button').click();

  await expect(detail.getByTestId('inspector-call-status')).toHaveAttribute('data-state', 'succeeded', { timeout: 30_000 });
  await expect(detail.getByTestId('inspector-call-result')).toContainText('Trail tent');
  await detail.getByTestId('inspector-invoke-form').scrollIntoViewIfNeeded();
  await shot(ui, 'inspector-tool.png');
  expect(await job.execCount(page, 'search_products')).toBe(1);

  // The receipts: the whole trail with the person as actor, on the agent's faculty.
  const trail = job.core.ledger.query({ requestId: view.requestId, limit: 50 }).receipts.reverse();
  expect(trail.map((r) => [r.event, r.actor.kind])).toEqual([
    ['requested', 'person'],
    ['validated', 'person'],
    ['approval-shown', 'person'],
    ['approved', 'person'],
    ['dispatched', 'person'],
    ['succeeded', 'person'],
  ]);
  expect(new Set(trail.map((r) => `${r.faculty} ${r.toolName} ${r.tabId}`))).toEqual(new Set([`webmcp-invoke search_products ${tabId}`]));

  // The call history, from the receipts.
  await expect(detail.locator('[data-testid=inspector-history-row][data-who=person][data-event=succeeded]')).toHaveCount(1);

  // A run whose tool the page removes while its dialog waits (no agent ever discovered this tab):
  // the inspector's re-inspection refuses it (descriptor-changed) and the dialog goes; nothing ran.
  await ui.getByTestId('inspector-tool-added_live').click();
  await detail.getByTestId('inspector-run').click();
  await expect(dialog).toBeVisible();
  await expect(dialog.getByTestId('field-agent')).toHaveText('You (tool inspector)');
  const removed = job.core.broker.approvals.list().find((a) => a.subject.toolName === 'added_live')!;
  expect(removed).toBeTruthy();
  expect(job.core.broker.latestDiscovery(tabId)).toBeUndefined();
  await page.evaluate(() => (globalThis as unknown as { __badPractices: { removeTool(n: string): void } }).__badPractices.removeTool('added_live'));
  await expect(dialog).toBeHidden({ timeout: 15_000 });
  await expect(rows.and(ui.locator('[data-tool="added_live"]'))).toHaveCount(0);
  const removedTrail = job.core.ledger.query({ requestId: removed.requestId, limit: 50 }).receipts.reverse();
  expect(removedTrail.map((r) => r.event)).toEqual(['requested', 'validated', 'approval-shown', 'refused']);
  // Refused by the console, not by the person.
  expect(removedTrail.at(-1)).toMatchObject({ actor: { kind: 'console' }, detail: { code: 'descriptor-changed' } });
  expect(job.consoleProblems).toEqual([]);
});
