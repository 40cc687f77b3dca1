// The approval dialog of a semantic mutation (issue 10 item 6; docs/semantic-controls.md) in real
// Chromium, served by the loopback web host over the built renderer, against the in-test ConsoleApi
// holding one pending `page_click` whose target fingerprint carries hostile page text. Checks: the
// operation, every field of the fingerprint and its hash, that the events are synthetic and that no
// picture is shown, all as text. Run `npx electron-vite build` first (`npm test` does).
import { expect, test } from '@playwright/test';
import type { WebHost } from '../../src/main/web/server';
import type { ApprovalView } from '../../src/shared/ipc';
import { FakeConsole, sampleApproval } from '../support/fake-console';
import { startFakeWebHost, useConsoleBrowser } from './support/web-console';

const browser = useConsoleBrowser();
let host: WebHost | undefined;

test.afterEach(async () => {
  await host?.close();
});

test('a semantic click shows the operation, the target fingerprint and its hash as text, synthetic events, and no picture', async () => {
  const now = Date.now();
  const hash = 'c'.repeat(64);
  const base = sampleApproval(now);
  const view: ApprovalView = {
    ...base,
    faculty: 'semantic',
    operation: 'click',
    verb: 'click an element of the page',
    subjectHash: hash,
    arguments: {},
    subject: {
      type: 'semantic-target',
      operation: 'click',
      ref: 'a7',
      fingerprint: {
        role: 'button',
        name: 'Buy <img src=x onerror=alert(1)>',
        form: 'Checkout',
        nameAttribute: 'buy',
        ancestors: [{ role: 'region', name: 'Offer' }, { role: 'main', name: 'Shop' }],
        nth: 1,
      },
      fingerprintHash: hash,
      trustedInput: false,
      picture: 'none',
    },
  };
  const fake = new FakeConsole({ approvals: [view], receiptCount: 0 });
  host = await startFakeWebHost(fake);
  const page = await browser().newPage({ viewport: { width: 1280, height: 1000 } });
  try {
    await page.goto(host.newConsoleUrl());
    await page.waitForURL(/#session=/);
    await expect(page.getByTestId('field-semantic-operation')).toHaveText('click');
    await expect(page.getByTestId('field-title')).toHaveText('Click the button the page names “Buy <img src=x onerror=alert(1)>”');
    const target = page.getByTestId('field-semantic-target');
    for (const t of ['Role', 'button', 'Form', 'Checkout', 'Name attribute', 'buy', 'region “Offer” › main “Shop”', 'element 2 of those with this description', 'a7']) {
      await expect(target).toContainText(t);
    }
    await expect(page.getByTestId('field-fingerprint-hash')).toHaveText(hash);
    await expect(page.getByTestId('field-faculty')).toHaveText('semantic · click');
    await expect(page.getByTestId('field-semantic-notes')).toContainText('trustedInput false');
    await expect(page.getByTestId('field-semantic-notes')).toContainText('No picture of the target is shown');
    // Page text stays text: no element was made from the name.
    expect(await page.locator('img[src=x]').count()).toBe(0);
  } finally {
    await page.close();
  }
});
