// The approval dialog of a raw-JavaScript run (docs/raw-javascript.md), in the built renderer served
// by the loopback web host over a FakeConsole: the whole code, highlighted by highlight.js as spans
// (never as markup: a string holding a tag stays text), unclipped (a 300-line script is all there, and
// "Approve once" arms only after its end was scrolled to), a bidi override and a zero-width space
// revealed as markers and counted, the SHA-256 with its fingerprint, the world, and the warning.
import { createHash } from 'node:crypto';
import { expect, test } from '@playwright/test';
import type { WebHost } from '../../src/main/web/server';
import type { ApprovalView } from '../../src/shared/ipc';
import { fingerprint } from '../../src/shared/canonical';
import { FakeConsole, sampleApproval } from '../support/fake-console';
import { startFakeWebHost, useConsoleBrowser } from './support/web-console';

const browser = useConsoleBrowser();
let host: WebHost | undefined;

test.afterEach(async () => {
  await host?.close();
});

test('a raw-JavaScript dialog shows the whole code highlighted and unclipped, hidden characters revealed, the hash, the world and the warning', async () => {
  const lines = Array.from({ length: 300 }, (_, i) => `const v${i} = ${i}; // line ${i}`);
  const code = [`const label = "<img src=x onerror=alert(1)>";`, `const admin = "user\u202Egnp.exe"; const z = "a\u200Bb";`, ...lines, 'document.title = "LAST LINE";'].join('\n');
  const hash = createHash('sha256').update(code, 'utf8').digest('hex');
  const now = Date.now();
  const view: ApprovalView = {
    ...sampleApproval(now),
    faculty: 'raw-js',
    operation: 'run',
    kind: 'mutation',
    verb: 'run its own JavaScript in the page (raw JavaScript, developer mode)',
    subjectHash: hash,
    arguments: { code, world: 'MAIN' },
    subject: { type: 'raw-script', operation: 'run', code, codeHash: hash, world: 'MAIN', timeoutMs: 10_000 },
  };
  const fake = new FakeConsole({ approvals: [view], receiptCount: 0 });
  host = await startFakeWebHost(fake);
  const page = await browser().newPage({ viewport: { width: 1280, height: 900 } });
  try {
    await page.goto(host.newConsoleUrl());
    await page.waitForURL(/#session=/);
    const block = page.getByTestId('field-script-code');
    await expect(block).toContainText('LAST LINE');
    await expect(block).toContainText('const v299 = 299;');
    await expect(block).toContainText('⟨U+202E⟩');
    await expect(block).toContainText('⟨U+200B⟩');
    await expect(block).toContainText('<img src=x onerror=alert(1)>');
    expect(await page.locator('img[src=x]').count()).toBe(0);
    // Highlighted: token spans from highlight.js, and nothing but spans and text inside.
    expect(await block.locator('span.hljs-keyword').count()).toBeGreaterThan(300);
    expect(await block.locator('code *:not(span)').count()).toBe(0);
    // Unclipped: the block is as tall as its content (the dialog scrolls, not the block).
    expect(await block.evaluate((el) => el.scrollHeight - el.clientHeight)).toBeLessThanOrEqual(1);
    await expect(page.getByTestId('field-script-hidden')).toContainText('2 invisible or direction-changing characters');
    await expect(page.getByTestId('field-script-hash')).toHaveText(hash);
    await expect(page.getByTestId('field-script-hash-fingerprint')).toHaveText(fingerprint(hash));
    await expect(page.getByTestId('field-script-world')).toHaveText('MAIN');
    await expect(page.getByTestId('field-script-warning')).toContainText('anything this page can do');
    await expect(page.getByTestId('field-title')).toContainText('303 lines');
  } finally {
    await page.close();
  }
});
