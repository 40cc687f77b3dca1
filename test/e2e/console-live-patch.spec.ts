// The console's renderer for Live Patch (docs/live-patch.md), served by the loopback web host over a
// FakeConsole: the approval dialog of a patch (the target, every edit as text with its whole value,
// hostile page text shown as text), and the Live Patches panel listing active patches per tab with
// Revert and Revert all, which call ConsoleApi.revertPatches.
import { expect, test } from '@playwright/test';
import type { WebHost } from '../../src/main/web/server';
import type { ApprovalView } from '../../src/shared/ipc';
import type { LivePatchInfo, PatchEdit } from '../../src/shared/live-patch';
import { describeEdit } from '../../src/shared/live-patch';
import { FakeConsole, sampleApproval } from '../support/fake-console';
import { startFakeWebHost, useConsoleBrowser } from './support/web-console';

const browser = useConsoleBrowser();
let host: WebHost | undefined;

test.afterEach(async () => {
  await host?.close();
});

const edits: PatchEdit[] = [
  { op: 'set-text', text: 'Delivery paused <b>now</b>' },
  { op: 'set-attribute', name: 'title', value: 'Checked' },
  { op: 'insert', element: 'note', position: 'after', text: 'Noted by the agent' },
];

const patch = (patchId: string, tabId: number, name: string): LivePatchInfo => ({
  patchId, tabId, frameId: 0, documentId: 'D1', origin: 'http://shop.example', url: 'http://shop.example/', target: { ref: 'a3', role: 'status', name, fingerprintHash: 'd'.repeat(64) },
  edits, priorHash: 'e'.repeat(64), afterHash: 'f'.repeat(64), appliedAt: Date.now(), held: true,
});

test('a patch dialog shows the target and every edit as text; the Live Patches panel lists patches per tab and reverts one, then all', async () => {
  const now = Date.now();
  const base = sampleApproval(now);
  const view: ApprovalView = {
    ...base,
    faculty: 'live-patch',
    operation: 'patch',
    kind: 'mutation',
    verb: 'change how an element of the page looks (a Live Patch, reversible)',
    arguments: { edits },
    subject: {
      type: 'live-patch', operation: 'patch', ref: 'a3', fingerprint: { role: 'status', name: 'Notice <img src=x onerror=alert(1)>', ancestors: [], nth: 0 },
      fingerprintHash: 'd'.repeat(64), edits, lines: edits.map(describeEdit), patches: [], trustedInput: false, picture: { status: 'none', reason: 'tab-not-active' },
    },
  };
  const fake = new FakeConsole({ approvals: [view], receiptCount: 0 });
  fake.patches = [patch('p-one', 7, 'Notice'), patch('p-two', 7, 'Banner'), patch('p-three', 9, 'Other')];
  host = await startFakeWebHost(fake);
  const page = await browser().newPage({ viewport: { width: 1280, height: 1000 } });
  try {
    await page.goto(host.newConsoleUrl());
    await page.waitForURL(/#session=/);
    await expect(page.getByTestId('field-patch-operation')).toHaveText('patch');
    await expect(page.getByTestId('field-title')).toHaveText('Patch the status the page names “Notice <img src=x onerror=alert(1)>” (3 edits, reversible)');
    const lines = page.getByTestId('field-patch-edits').locator('li');
    await expect(lines).toHaveText(['set the text to "Delivery paused <b>now</b>"', 'set attribute title to "Checked"', 'insert a note after it: "Noted by the agent"']);
    await expect(page.getByTestId('field-patch-notes')).toContainText('Nothing has touched the page yet');
    expect(await page.locator('img[src=x]').count()).toBe(0);
    expect(await page.locator('b', { hasText: 'now' }).count()).toBe(0);
    await page.getByTestId('close-button').click();

    await page.getByTestId('nav-patches').click();
    await expect(page.getByTestId('live-patch-row')).toHaveCount(3);
    await expect(page.getByTestId('live-patches-tab-7').getByTestId('live-patch-row')).toHaveCount(2);
    await page.getByTestId('revert-p-one').click();
    await expect(page.getByTestId('live-patch-row')).toHaveCount(2);
    expect(fake.calls.filter((c) => c.method === 'revertPatches').map((c) => c.params)).toEqual([{ tabId: 7, patchIds: ['p-one'] }]);
    await page.getByTestId('revert-all-9').click();
    await expect(page.getByTestId('live-patch-row')).toHaveCount(1);
    expect(fake.calls.filter((c) => c.method === 'revertPatches').map((c) => c.params)).toEqual([{ tabId: 7, patchIds: ['p-one'] }, { tabId: 9 }]);
  } finally {
    await page.close();
  }
});
