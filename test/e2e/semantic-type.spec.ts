/**
 * page_type (issue 10 item 4, "Type"; docs/semantic-controls.md, "Type and fill") end to end on a
 * React app with controlled inputs and no WebMCP tool (resources/demo/store/signup.tsx): an MCP SDK
 * client → the console's endpoint → the pipeline (approved through the console API, as the person)
 * → the real link → the extension → the `semantic` content module in the real page. What React
 * holds in its state (window.__signup) is the proof that it saw each value.
 */
import type { Page } from '@playwright/test';
import { test, expect } from './support/link-fixture';
import { act, agent, events, header, refOf, textOf, urlHashOf } from './support/semantic-agent';
import type { SemanticTargetSubject } from '../../src/shared/ipc';
import { argumentsHash } from '../../src/shared/canonical';
import { LIMITS } from '../../src/shared/limits';

type Booking = Record<'name' | 'email' | 'tea' | 'size' | 'date' | 'time' | 'notes' | 'promo' | 'card', string>;
const state = (page: Page) => page.evaluate(() => (globalThis as unknown as { __signup: { state: Booking } }).__signup.state);

test('page_type on a React form: text, email, select by value and by label, date, time, textarea and contenteditable reach React state, each reviewed with its text and confirmed by readback; a rewritten value is a mismatch; a radio is refused; a missing option is refused; a grant for one text replayed with another is refused (arguments-mismatch)', async ({ world }) => {
  const { page, tabId } = await world.openShared(world.demo.url('signup'));
  const client = await agent(world);
  try {
    // 1. The name: reviewed with its text in the arguments, set through the native setter: React's state has it.
    const name = await refOf(client, tabId, /^textbox "Your name"/);
    const typed = await act(world, client, 'page_type', { tabId, ref: name, text: 'Ada Lovelace' });
    expect(typed.r.isError, textOf(typed.r)).toBeFalsy();
    expect(typed.view).toMatchObject({ faculty: 'semantic', operation: 'type', kind: 'mutation', arguments: { text: 'Ada Lovelace' }, argumentsHash: await argumentsHash({ text: 'Ada Lovelace' }) });
    expect(typed.view!.subject).toMatchObject({ type: 'semantic-target', operation: 'type', ref: name, trustedInput: false, fingerprint: { role: 'textbox', name: 'Your name', nameAttribute: 'name', form: 'Booking' } });
    expect(header(typed.r)).toMatchObject({ outcome: 'succeeded', operation: 'type', trustedInput: false, readback: 'confirmed', effect: 'value-set' });
    const id = header(typed.r).requestId as string;
    expect(events(world, id)).toEqual(['requested', 'validated', 'approval-shown', 'approved', 'dispatched', 'readback-confirmed', 'succeeded']);
    expect((await state(page)).name).toBe('Ada Lovelace');
    await expect(page.locator('input[name=name]')).toHaveValue('Ada Lovelace');

    // 2. The other kinds of field, by fingerprint as an agent may: email, a select by an option's value then by
    // another's label, date, time, textarea, contenteditable.
    for (const [fingerprint, text] of [
      [{ role: 'textbox', name: 'Email' }, 'ada@example.org'],
      [{ role: 'combobox', name: 'Tea' }, 'sencha'],
      [{ role: 'combobox', name: 'Tea' }, 'Assam (black)'],
      [{ role: 'textbox', name: 'Day' }, '2026-12-24'],
      [{ role: 'textbox', name: 'Time' }, '15:30'],
      [{ role: 'textbox', name: 'Notes' }, 'Window seat,\nplease.'],
      [{ role: 'textbox', name: 'Card message' }, 'Happy birthday!'],
    ] as const) {
      const r = await act(world, client, 'page_type', { tabId, fingerprint, text });
      expect(header(r.r), `${fingerprint.name}: ${textOf(r.r)}`).toMatchObject({ outcome: 'succeeded', effect: 'value-set' });
      if (text === 'sencha') expect((await state(page)).tea).toBe('sencha');
    }
    expect(await state(page)).toMatchObject({ name: 'Ada Lovelace', email: 'ada@example.org', tea: 'assam', date: '2026-12-24', time: '15:30', notes: 'Window seat,\nplease.', card: 'Happy birthday!' });

    // 3. A value the page rewrites (the promo code is upper-cased by React): the readback sees another value: mismatch, never success.
    const promo = await act(world, client, 'page_type', { tabId, fingerprint: { role: 'textbox', name: 'Promo code' }, text: 'spring' });
    expect(textOf(promo.r)).toMatch(/^Error \(readback-mismatch\)/);
    expect(textOf(promo.r)).toContain('the target to hold the value typed');
    expect((await state(page)).promo).toBe('SPRING');

    // 4. A radio takes no typed value: refused before the person is asked. An option the select does not have: refused at dispatch, nothing set.
    const radio = await act(world, client, 'page_type', { tabId, fingerprint: { role: 'radio', name: 'Large' }, text: 'Large' }, { expectDialog: false });
    expect(textOf(radio.r)).toMatch(/^Error \(target-unsupported\)/);
    const missing = await act(world, client, 'page_type', { tabId, fingerprint: { role: 'combobox', name: 'Tea' }, text: 'Earl Grey' });
    expect(textOf(missing.r)).toMatch(/^Error \(not-actionable\).*option-missing/s);
    expect((await state(page)).tea).toBe('assam');

    // 5. A grant signed for one text, presented with another: arguments-mismatch and the field untouched.
    const v = typed.view!;
    const grant = await world.core.link.signGrant({
      requestId: 'replay-type', faculty: 'semantic', operation: 'type', tabId, frameId: v.frame.frameId, documentId: v.documentId, origin: v.origin,
      urlHash: await urlHashOf(world, tabId, { role: 'textbox', name: 'Your name' }),
      subjectHash: v.subjectHash, argumentsHash: await argumentsHash({ text: 'Grace Hopper' }), nonce: 'b'.repeat(32), expiresAt: Date.now() + LIMITS.grantTtlMs,
    });
    if (!grant.ok) throw new Error(grant.error.message);
    const dispatch = (text: string) => world.request({
      op: 'dispatch', faculty: 'semantic', operation: 'type', target: { tabId, frameId: v.frame.frameId, documentId: v.documentId },
      subject: { fingerprint: (v.subject as SemanticTargetSubject).fingerprint, ref: name }, arguments: { text }, grant: grant.value, timeoutMs: 10_000,
    });
    expect(await dispatch('Mallory')).toMatchObject({ ok: true, value: { outcome: 'refused', refusal: 'arguments-mismatch' } });
    expect((await state(page)).name).toBe('Ada Lovelace');
    // The nonce is spent before the arguments are checked (lib/grant-checks.ts, steps 4 and 9): the grant is gone.
    expect(await dispatch('Grace Hopper')).toMatchObject({ ok: true, value: { outcome: 'refused', refusal: 'grant-reused' } });
    expect((await state(page)).name).toBe('Ada Lovelace');

    // 6. The radio by click, then the submit button React enabled from its state; the confirmation is rendered from that state.
    const large = await refOf(client, tabId, /^radio "Large"/);
    expect(header((await act(world, client, 'page_click', { tabId, ref: large })).r)).toMatchObject({ outcome: 'succeeded' });
    await expect(page.getByRole('button', { name: 'Book' })).toBeEnabled();
    const book = await refOf(client, tabId, /^button "Book"/);
    expect(header((await act(world, client, 'page_click', { tabId, ref: book })).r)).toMatchObject({ outcome: 'succeeded' });
    await expect(page.locator('#confirmation')).toHaveText('Thanks, Ada Lovelace: assam (Large) on 2026-12-24 at 15:30.');
  } finally {
    await client.close();
  }
});
