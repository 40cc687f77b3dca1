/**
 * Forms: the person approves what will actually be submitted (issue 8 item 4), end to end through
 * the console's pipeline, the real link, the real extension and real Chromium 156 on
 * resources/demo/appointment and resources/hostile/form-tricks.html.
 *  - Chromium's executeTool fills only the fields the agent names; the others keep what they hold
 *    (an earlier call's value too). The approval (the ApprovalView the console builds) shows every
 *    effective value, marked agent or form, and that is what the page's handler receives.
 *  - the dialog's subject says the form's action (stripped), method, and whether approving submits it;
 *  - a page that adds toolautosubmit, or changes a field, after the person saw the form is refused
 *    before dispatch (`form-changed`), and its handler never runs.
 */
import type { Page } from '@playwright/test';
import { test, expect, approveView, askInvoke, type LinkWorld } from './support/link-fixture';
import type { ApprovalView } from '../../src/shared/ipc';

/** Discover, invoke, wait for the approval the console builds (the person then approves with `approve`). */
const ask = (world: LinkWorld, tabId: number, name: string, args: Record<string, unknown>) => askInvoke(world, tabId, name, args, 'forms-e2e');
const approve = approveView;

const received = async (page: Page, id: string) => {
  const el = page.locator(`[data-testid="${id}"]`);
  return { count: Number(await el.getAttribute('data-count')), fields: JSON.parse((await el.getAttribute('data-received')) ?? 'null') as Record<string, string> | null };
};

const valuesOf = (view: ApprovalView) => Object.fromEntries((view.subject.form?.values ?? []).map((v) => [v.name, { value: v.value, from: v.from }]));

test('a second call that omits an optional field: the approval shows and binds the value the first call left, and it is what the page receives', async ({ world }) => {
  const { page, tabId } = await world.openShared(world.demo.url('appointment'));
  const demo = world.demo.demoOrigin;

  // Call 1 sets the optional reminder.
  {
    const { pending, view, descriptorHash } = await ask(world, tabId, 'book_appointment', { day: '2026-12-14', at: '10:30', reminder: '09:15' });
    expect(view.subject.form).toMatchObject({ action: `${demo}/appointment/booked`, method: 'post', autosubmit: true });
    expect(valuesOf(view)).toEqual({
      day: { value: '2026-12-14', from: 'agent' },
      at: { value: '10:30', from: 'agent' },
      reminder: { value: '09:15', from: 'agent' },
      note: { value: '', from: 'form' },
      channel: { value: 'web', from: 'form' },
    });
    // The grant binds the form too: the subject hash is not the bare descriptor's.
    expect(view.subject.descriptorHash).toBe(descriptorHash);
    expect(view.subjectHash).not.toBe(descriptorHash);
    await approve(world, view);
    const a = await pending;
    expect(a).toMatchObject({ ok: true, value: { outcome: 'succeeded', descriptorHash } });
    expect(await received(page, 'book-result')).toEqual({ count: 1, fields: { day: '2026-12-14', at: '10:30', reminder: '09:15', note: '', channel: 'web' } });
  }
  // Call 2 omits it: Chromium keeps 09:15 in the field, so the person is shown 09:15, from the form.
  {
    const { pending, view } = await ask(world, tabId, 'book_appointment', { day: '2026-12-15', at: '11:00' });
    expect(valuesOf(view)).toEqual({
      day: { value: '2026-12-15', from: 'agent' },
      at: { value: '11:00', from: 'agent' },
      reminder: { value: '09:15', from: 'form' },
      note: { value: '', from: 'form' },
      channel: { value: 'web', from: 'form' },
    });
    expect(view.arguments).toEqual({ day: '2026-12-15', at: '11:00' });
    await approve(world, view);
    expect(await pending).toMatchObject({ ok: true, value: { outcome: 'succeeded' } });
    expect(await received(page, 'book-result')).toEqual({ count: 2, fields: { day: '2026-12-15', at: '11:00', reminder: '09:15', note: '', channel: 'web' } });
  }
  // The form that waits for the person says so.
  {
    const { pending, view } = await ask(world, tabId, 'request_callback', { day: '2026-12-16', at: '14:00' });
    expect(view.subject.form).toMatchObject({ action: `${demo}/appointment/callback`, method: 'post', autosubmit: false });
    expect(await world.core.api.decideApproval({ requestId: view.requestId, decision: 'deny' })).toEqual({ ok: true, value: null });
    expect(await pending).toMatchObject({ ok: false, error: { code: 'denied' } });
  }
});

test('a page that adds toolautosubmit, or changes a field it submits, after the person saw the form: refused before dispatch, nothing submitted', async ({ world }) => {
  const { page, tabId } = await world.openShared(`${world.demo.hostileOrigin}/hostile/form-tricks.html`);
  {
    const { pending, view } = await ask(world, tabId, 'send_message', { text: 'hello' });
    expect(view.subject.form).toMatchObject({ autosubmit: false, method: 'post' });
    expect(valuesOf(view).to).toEqual({ value: 'support@example.test', from: 'form' });
    await page.evaluate(() => (globalThis as unknown as { __tricks: { armAutosubmit(): void } }).__tricks.armAutosubmit());
    await approve(world, view);
    const a = await pending;
    expect(a).toMatchObject({ ok: false, error: { code: 'form-changed' } });
    expect(!a.ok && a.error.message).toMatch(/toolautosubmit/);
    const refused = world.receipts({ requestId: a.requestId }).find((r) => r.event === 'refused');
    expect(refused?.detail).toMatchObject({ code: 'form-changed' });
    expect((await received(page, 'message-result')).count).toBe(0);
    // Not filled either: the check runs before executeTool.
    expect(await page.locator('#message input[name=text]').inputValue()).toBe('');
  }
  await page.reload();
  await page.locator('html[data-ready="true"]').waitFor({ state: 'attached' });
  {
    const { pending, view } = await ask(world, tabId, 'send_message', { text: 'hello' });
    await page.evaluate(() => (globalThis as unknown as { __tricks: { redirect(): void } }).__tricks.redirect());
    await approve(world, view);
    const a = await pending;
    expect(a).toMatchObject({ ok: false, error: { code: 'form-changed' } });
    expect(!a.ok && a.error.message).toMatch(/values the form would submit changed/);
    expect((await received(page, 'message-result')).count).toBe(0);
  }
});
