// The approval dialog of a semantic mutation (issue 10 item 6; docs/semantic-controls.md) in real
// Chromium, served by the loopback web host over the built renderer, against the in-test ConsoleApi
// holding one pending `page_click` whose target fingerprint carries hostile page text. Checks: the
// operation, every field of the fingerprint and its hash, that the events are synthetic, all as text,
// and the target's picture: fetched by its hash, checked against it and shown as an image. Run `npx electron-vite build` first (`npm test` does).
import { expect, test } from '@playwright/test';
import type { WebHost } from '../../src/main/web/server';
import type { ApprovalView } from '../../src/shared/ipc';
import { FakeConsole, sampleApproval } from '../support/fake-console';
import { startFakeWebHost, useConsoleBrowser } from './support/web-console';
import { createHash } from 'node:crypto';
import { tinyPng } from '../support/png';

const browser = useConsoleBrowser();
let host: WebHost | undefined;

test.afterEach(async () => {
  await host?.close();
});

test("a semantic click shows the operation, the target fingerprint and its hash as text, synthetic events, and the target's picture by its hash", async () => {
  const now = Date.now();
  const hash = 'c'.repeat(64);
  const png = tinyPng(6, 4);
  const pictureHash = createHash('sha256').update(png).digest('hex');
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
      picture: { status: 'captured', sha256: pictureHash, width: 6, height: 4, bytes: png.length },
    },
  };
  const fake = new FakeConsole({ approvals: [view], receiptCount: 0 });
  fake.pictures.set(pictureHash, { png: png.toString('base64'), width: 6, height: 4 });
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
    // The picture: asked for by its hash, its bytes hash to it, shown as an image (a blob: URL).
    const img = page.getByTestId('field-target-picture');
    await expect(img).toBeVisible();
    expect(await img.evaluate((el) => [(el as unknown as { naturalWidth: number }).naturalWidth, (el as unknown as { src: string }).src.slice(0, 5)])).toEqual([6, 'blob:']);
    await expect(page.getByTestId('field-target-picture-hash')).toHaveText(pictureHash);
    expect(fake.calls.filter((c) => c.method === 'getTargetPicture').map((c) => c.params)).toContainEqual({ sha256: pictureHash });
    // Page text stays text: no element was made from the name.
    expect(await page.locator('img[src=x]').count()).toBe(0);
  } finally {
    await page.close();
  }
});

test('a form fill shows every field with the text it will hold, as text (markup and invisible characters in a value revealed, never rendered), in one dialog', async () => {
  const now = Date.now();
  const base = sampleApproval(now);
  const fp = (name: string, nth = 0) => ({ role: 'textbox', name, form: 'Booking', ancestors: [{ role: 'form', name: 'Booking' }], nth });
  const view: ApprovalView = {
    ...base,
    faculty: 'semantic',
    operation: 'fill',
    verb: 'fill several fields of a form of the page',
    subjectHash: 'd'.repeat(64),
    arguments: { values: ['Ada', 'ada@example.org\u202e', '<b>bold</b>', ''] },
    subject: {
      type: 'semantic-fill',
      operation: 'fill',
      formName: 'Booking',
      fields: [
        { ref: 'a1', fingerprint: fp('Your name'), fingerprintHash: '1'.repeat(64), text: 'Ada' },
        { ref: 'a2', fingerprint: fp('Email'), fingerprintHash: '2'.repeat(64), text: 'ada@example.org\u202e' },
        { ref: 'a3', fingerprint: fp('Notes'), fingerprintHash: '3'.repeat(64), text: '<b>bold</b>' },
        { ref: 'a4', fingerprint: fp('Promo code'), fingerprintHash: '4'.repeat(64), text: '' },
      ],
      trustedInput: false,
      picture: { status: 'none', reason: 'tab-not-active' },
    },
  };
  const fake = new FakeConsole({ approvals: [view], receiptCount: 0 });
  host = await startFakeWebHost(fake);
  const page = await browser().newPage({ viewport: { width: 1280, height: 1000 } });
  try {
    await page.goto(host.newConsoleUrl());
    await page.waitForURL(/#session=/);
    await expect(page.getByTestId('field-semantic-operation')).toHaveText('fill');
    await expect(page.getByTestId('field-title')).toHaveText('Fill 4 fields of the form the page names “Booking”');
    const rows = page.getByTestId('fill-field');
    await expect(rows).toHaveCount(4);
    await expect(rows.nth(0)).toContainText('textbox “Your name”');
    await expect(rows.nth(0)).toContainText('1'.repeat(64));
    await expect(page.getByTestId('fill-value')).toHaveText(['Ada', 'ada@example.org⟨U+202E⟩', '<b>bold</b>', '(empty: the field is cleared)']);
    expect(await page.locator('.fill-fields b').count()).toBe(0);
    await expect(page.getByTestId('field-semantic-notes')).toContainText('Nothing is submitted');
  } finally {
    await page.close();
  }
});
