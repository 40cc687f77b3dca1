/**
 * Live Patch (issue 11 item 1; docs/live-patch.md) end to end: an MCP SDK client → the console's
 * endpoint → the pipeline (approved through the console API, as the person) → the real link → the
 * extension → the `semantic` content module in a real page (resources/hostile/semantic/patch.html).
 * What Playwright reads of the page (outerHTML before and after) is the proof that a revert puts it
 * back exactly.
 */
import type { Page } from '@playwright/test';
import { test, expect } from './support/link-fixture';
import { until } from './support/link-fixture';
import { act, agent, events, header, textOf } from './support/semantic-agent';
import type { LivePatchSubject } from '../../src/shared/ipc';
import { argumentsHash } from '../../src/shared/canonical';

const box = (page: Page) => page.locator('#notice-box').evaluate((el) => el.outerHTML);
const NOTICE = { role: 'status', name: 'Notice' };

test('a patch is approved once, applied and shown, listed, reverted and verified equal to the prior state; forbidden patches and a password form are refused before the person is asked; a revert after the page changed the element is revert-mismatch; the person reverts from the console; a new document drops the patches', async ({ world }) => {
  const { page, tabId } = await world.openShared(world.demo.at('hostile', '/hostile/semantic/patch.html'));
  const client = await agent(world);
  try {
    // 1. Applied after approval: the dialog shows the target and every edit; nothing touched the page before.
    const before = await box(page);
    const edits = [
      { op: 'set-text', text: 'Delivery paused' },
      { op: 'set-attribute', name: 'title', value: 'Patched by the agent' },
      { op: 'set-attribute', name: 'class', value: 'calm loud' },
      { op: 'set-style', property: 'color', value: 'rgb(200, 0, 0)' },
      { op: 'insert', element: 'note', position: 'after', text: 'Checked by the agent' },
    ];
    const patched = await act(world, client, 'page_patch', { tabId, fingerprint: NOTICE, edits }, {
      beforeApprove: async () => expect(await box(page)).toBe(before),
    });
    expect(patched.r.isError, textOf(patched.r)).toBeFalsy();
    expect(patched.view).toMatchObject({ faculty: 'live-patch', operation: 'patch', kind: 'mutation', arguments: { edits }, argumentsHash: await argumentsHash({ edits }) });
    const subject = patched.view!.subject as LivePatchSubject;
    expect(subject).toMatchObject({ type: 'live-patch', operation: 'patch', fingerprint: { role: 'status', name: 'Notice' }, edits });
    expect(subject.lines).toEqual([
      'set the text to "Delivery paused"',
      'set attribute title to "Patched by the agent"',
      'set attribute class to "calm loud"',
      'set style color: rgb(200, 0, 0)',
      'insert a note after it: "Checked by the agent"',
    ]);
    expect(subject.picture).toBeDefined();
    const h = header(patched.r);
    expect(h).toMatchObject({ outcome: 'succeeded', operation: 'patch', readback: 'confirmed', effect: 'patch-held' });
    const patchId = h.patchId as string;
    expect(patchId).toBe(h.requestId);
    expect(events(world, patchId)).toEqual(['requested', 'validated', 'approval-shown', 'approved', 'dispatched', 'readback-confirmed', 'patched', 'succeeded']);
    const patchedReceipt = world.receipts({ requestId: patchId, event: 'patched' })[0]!;
    expect(patchedReceipt.detail).toMatchObject({ patchId, priorHash: h.priorHash, afterHash: h.afterHash, edits: 5, held: true });
    expect(h.priorHash).not.toBe(h.afterHash);
    // Shown in the page: the text, the attributes, the style, our note beside it.
    const notice = page.locator('#notice');
    await expect(notice).toHaveText('Delivery paused');
    await expect(notice).toHaveAttribute('title', 'Patched by the agent');
    await expect(notice).toHaveCSS('color', 'rgb(200, 0, 0)');
    await expect(page.locator('#notice-box .echo-live-patch-note')).toHaveText('Checked by the agent');
    // Listed in the console API.
    const listed = await world.core.api.listPatches({ tabId });
    expect(listed).toMatchObject({ ok: true, value: [{ patchId, tabId, priorHash: h.priorHash, afterHash: h.afterHash, held: true, edits, target: { role: 'status', name: 'Notice' } }] });

    // 2. Reverted (reviewed: a low-impact mutation) and verified equal to the prior state.
    const reverted = await act(world, client, 'page_revert', { tabId, patchId });
    expect(reverted.r.isError, textOf(reverted.r)).toBeFalsy();
    expect(reverted.view).toMatchObject({ faculty: 'live-patch', operation: 'revert', kind: 'low-impact-mutation', subject: { type: 'live-patch', operation: 'revert', patches: [{ patchId }] } });
    const rid = header(reverted.r).requestId as string;
    expect(events(world, rid)).toEqual(['requested', 'validated', 'approval-shown', 'approved', 'dispatched', 'readback-confirmed', 'reverted', 'succeeded']);
    expect(world.receipts({ requestId: rid, event: 'reverted' })[0]!.detail).toMatchObject({ patchId, priorHash: h.priorHash, nowHash: h.priorHash, equal: true, pageChanged: false });
    expect(await box(page)).toBe(before);
    expect(await world.core.api.listPatches({ tabId })).toEqual({ ok: true, value: [] });
    // Reverted already: nothing to revert, refused before the person is asked.
    const again = await act(world, client, 'page_revert', { tabId, patchId }, { expectDialog: false });
    expect(textOf(again.r)).toMatch(/^Error \(patch-unknown\)/);

    // 3. Forbidden patches: refused before the person is asked, with no dialog, naming the edit.
    for (const [edit, why] of [
      [{ op: 'set-attribute', name: 'onclick', value: 'alert(1)' }, /"onclick" is an event handler/],
      [{ op: 'set-attribute', name: 'ONCLICK', value: 'alert(1)' }, /"ONCLICK" is an event handler/],
      [{ op: 'set-attribute', name: 'href', value: 'https://evil.example/' }, /"href" is not an allow-listed attribute/],
      [{ op: 'set-style', property: 'background-color', value: 'url(https://evil.example/x.png)' }, /url\(\)|holds a URL/],
    ] as const) {
      const r = await act(world, client, 'page_patch', { tabId, fingerprint: { role: 'link', name: 'Terms' }, edits: [{ op: 'hide' }, edit] }, { expectDialog: false });
      expect(textOf(r.r)).toMatch(/^Error \(patch-forbidden\)/);
      expect(textOf(r.r)).toMatch(/edit 2/);
      expect(textOf(r.r)).toMatch(why);
      const id = /requestId: (\S+)/.exec(textOf(r.r))![1]!;
      expect(events(world, id)).toEqual(['requested', 'refused']);
    }
    await expect(page.locator('#terms')).toHaveAttribute('href', '/terms');
    await expect(page.locator('#terms')).toBeVisible();

    // 4. A password field, and another field of its form: target-blocked before the person is asked.
    for (const fingerprint of [{ role: 'textbox', name: 'Password' }, { role: 'textbox', name: 'Email' }]) {
      const r = await act(world, client, 'page_patch', { tabId, fingerprint, edits: [{ op: 'set-attribute', name: 'title', value: 'x' }] }, { expectDialog: false });
      expect(textOf(r.r), JSON.stringify(fingerprint)).toMatch(/^Error \(target-blocked\)/);
    }

    // 5. The page changes the patched element meanwhile: the revert keeps the page's change and says revert-mismatch.
    const second = await act(world, client, 'page_patch', { tabId, fingerprint: NOTICE, edits: [{ op: 'set-attribute', name: 'title', value: 'Patched again' }, { op: 'insert', element: 'highlight', position: 'prepend', text: 'new' }] });
    const secondId = header(second.r).patchId as string;
    await expect(page.locator('#notice')).toHaveAttribute('title', 'Patched again');
    await page.locator('#rewrite').click();
    await expect(page.locator('#notice')).toHaveAttribute('title', 'set by the page');
    const mismatch = await act(world, client, 'page_revert', { tabId, patchId: secondId });
    expect(textOf(mismatch.r)).toMatch(/^Error \(revert-mismatch\)/);
    const mid = /requestId: (\S+)/.exec(textOf(mismatch.r))![1]!;
    expect(events(world, mid)).toEqual(['requested', 'validated', 'approval-shown', 'approved', 'dispatched', 'readback-mismatch', 'revert-mismatch', 'failed']);
    expect(world.receipts({ requestId: mid, event: 'revert-mismatch' })[0]!.detail).toMatchObject({ patchId: secondId, equal: false, pageChanged: true, leftAsThePageHasIt: ['attr:title'] });
    await expect(page.locator('#notice')).toHaveAttribute('title', 'set by the page');
    await expect(page.locator('.echo-live-patch-highlight')).toHaveCount(0);
    expect(await world.core.api.listPatches({ tabId })).toEqual({ ok: true, value: [] });

    // 6. The person reverts from the console (Revert all): no dialog, the person is the actor, receipted.
    const headingBefore = await page.locator('#title').evaluate((el) => el.outerHTML);
    const hidden = await act(world, client, 'page_patch', { tabId, fingerprint: { role: 'heading', name: 'Tea shop' }, edits: [{ op: 'hide' }] });
    expect(hidden.r.isError, textOf(hidden.r)).toBeFalsy();
    await expect(page.locator('#title')).toBeHidden();
    const approvalsBefore = world.core.broker.approvals.list().length;
    expect(await world.core.api.revertPatches({ tabId })).toEqual({ ok: true, value: [] });
    expect(world.core.broker.approvals.list().length).toBe(approvalsBefore);
    await expect(page.locator('#title')).toBeVisible();
    expect(await page.locator('#title').evaluate((el) => el.outerHTML)).toBe(headingBefore);
    const byPerson = world.receipts({ event: 'reverted' }).find((x) => x.actor.kind === 'person')!;
    expect(byPerson).toBeTruthy();
    expect(events(world, byPerson.requestId!)).toEqual(['requested', 'validated', 'approved', 'dispatched', 'readback-confirmed', 'reverted', 'succeeded']);
    expect(world.receipts({ requestId: byPerson.requestId! }).every((x) => x.actor.kind === 'person')).toBe(true);

    // 7. Patches end with the document: a reload drops the page's patch and the console's list forgets it.
    await act(world, client, 'page_patch', { tabId, fingerprint: NOTICE, edits: [{ op: 'set-text', text: 'Short-lived' }] });
    expect((await world.core.api.listPatches({ tabId })) ).toMatchObject({ ok: true, value: [{ tabId }] });
    await page.reload();
    await until(async () => { const l = await world.core.api.listPatches({ tabId }); return l.ok && l.value.length === 0; }, 'the list to forget the patch of the old document');
    await expect(page.locator('#notice')).toHaveText('Free delivery today');
  } finally {
    await client.close();
  }
});

test('a patch is refused on a target holding a blocked surface inside a shadow root (a closed one\'s password form, an open one\'s card frame), on a frame itself, and on text that is a form value (an option, an editable box)', async ({ world }) => {
  const { page, tabId } = await world.openShared(world.demo.at('hostile', '/hostile/semantic/patch-blocked.html'));
  const client = await agent(world);
  const formData = () => page.evaluate(() => {
    const d = globalThis as unknown as { document: { getElementById(id: string): unknown; querySelector(s: string): { textContent: string } } };
    const F = (globalThis as unknown as { FormData: new (f: unknown) => Iterable<[string, string]> }).FormData;
    return { form: Object.fromEntries(new F(d.document.getElementById('checkout'))), note: d.document.querySelector('#note').textContent };
  });
  try {
    const hide = [{ op: 'set-style', property: 'opacity', value: '0.01' }];
    for (const fingerprint of [{ role: 'region', name: 'Sign in' }, { role: 'region', name: 'Payment' }, { role: 'iframe', name: 'Portal sign in' }]) {
      const r = await act(world, client, 'page_patch', { tabId, fingerprint, edits: hide });
      expect(textOf(r.r), fingerprint.name).toMatch(/^Error \(target-blocked\)/);
      // The receipt says why (the content script's fixed words and the reason), for the person reading the timeline.
      const refused = world.receipts({ requestId: r.view!.requestId }).find((x) => x.event === 'refused')!;
      expect(refused.detail, fingerprint.name).toMatchObject({ by: 'extension', code: 'target-blocked', message: expect.stringMatching(/^the target is or holds a blocked surface \(/) });
    }
    expect(await page.locator('#signin, #pay, #portal').evaluateAll((els) => els.map((el) => (globalThis as unknown as { getComputedStyle(e: unknown): { opacity: string } }).getComputedStyle(el).opacity))).toEqual(['1', '1', '1']);

    const before = await formData();
    expect(before).toEqual({ form: { ship: 'express' }, note: 'Leave at the door' });
    for (const [fingerprint, edits] of [
      [{ role: 'option', name: 'express' }, [{ op: 'set-text', text: 'standard' }]],
      [{ role: 'option', name: 'express' }, [{ op: 'insert', element: 'note', position: 'append', text: ' (fast)' }]],
      [{ role: 'textbox', name: 'Note to the courier' }, [{ op: 'set-text', text: 'Ring twice' }]],
      [{ role: 'textbox', name: 'Note to the courier' }, [{ op: 'insert', element: 'highlight', position: 'append', text: 'Ring twice' }]],
    ] as const) {
      const r = await act(world, client, 'page_patch', { tabId, fingerprint, edits });
      expect(textOf(r.r), JSON.stringify(edits)).toMatch(/^Error \(not-actionable\)[\s\S]*form value/);
    }
    expect(await formData()).toEqual(before);
  } finally {
    await client.close();
  }
});
