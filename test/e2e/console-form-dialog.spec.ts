// The approval dialog of a form tool, in the real renderer (built out/renderer) served by the web
// host to real Chromium, against the in-test ConsoleApi (issue 8 item 4): it says the tool is a
// form, where it submits (stripped action, method), whether approving submits it or only fills it
// for the person to press the page's button, and every value that will be submitted, marked as the
// agent's or as already in the form.
import { expect, test } from '@playwright/test';
import type { ApprovalView } from '../../src/shared/ipc';
import { FakeConsole, sampleApproval } from '../support/fake-console';
import { startFakeWebHost, useConsoleBrowser } from './support/web-console';

const browser = useConsoleBrowser();

function formApproval(autosubmit: boolean): ApprovalView {
  const base = sampleApproval(Date.now());
  return {
    ...base,
    subject: {
      ...base.subject,
      toolName: 'request_callback',
      toolKind: 'declarative',
      form: {
        action: 'http://127.0.0.1:8765/appointment/callback',
        actionHash: 'c'.repeat(64),
        method: 'post',
        autosubmit,
        values: [
          { name: 'day', value: '2026-12-15', from: 'agent' },
          { name: 'reminder', value: '09:15', from: 'form' },
          { name: 'note', value: '<b>hi</b>', from: 'form' },
        ],
      },
    },
  } as ApprovalView;
}

for (const autosubmit of [false, true]) {
  test(`a form tool's dialog (${autosubmit ? 'toolautosubmit' : 'fills only'}): where it submits, whether approving submits, every value and where it comes from`, async () => {
    const fake = new FakeConsole({ approvals: [formApproval(autosubmit)] });
    const host = await startFakeWebHost(fake);
    const page = await browser().newPage();
    try {
      await page.goto(host.newConsoleUrl());
      const form = page.getByTestId('field-form');
      await expect(form).toBeVisible();
      await expect(page.getByTestId('field-form-autosubmit')).toHaveText(
        autosubmit ? 'Approving submits this form at once.' : 'Approving fills the form; you then press the page’s own button to submit it. The agent’s call waits for that.',
      );
      await expect(page.getByTestId('field-form-method')).toHaveText('POST');
      await expect(page.getByTestId('field-form-action')).toHaveText('http://127.0.0.1:8765/appointment/callback');
      const row = (name: string) => page.locator(`[data-testid="field-form-values"] tr[data-name="${name}"]`);
      await expect(row('day')).toContainText('2026-12-15');
      await expect(row('day')).toContainText('from the agent');
      await expect(row('reminder')).toContainText('09:15');
      await expect(row('reminder')).toContainText('already in the form');
      // Page text stays text.
      await expect(row('note').getByTestId('form-value')).toHaveText('<b>hi</b>');
      await expect(page.getByTestId('field-subject-hash')).toBeVisible();
    } finally {
      await page.close();
      await host.close();
    }
  });
}
