/**
 * page_type and page_fill (issue 10 item 4, "Type", and item 6, "One approval for a form fill";
 * docs/semantic-controls.md, "Type and fill") end to end on a
 * React app with controlled inputs and no WebMCP tool (resources/demo/store/signup.tsx): an MCP SDK
 * client → the console's endpoint → the pipeline (approved through the console API, as the person)
 * → the real link → the extension → the `semantic` content module in the real page. What React
 * holds in its state (window.__signup) is the proof that it saw each value.
 */
import type { Page } from '@playwright/test';
import { test, expect } from './support/link-fixture';
import { act, agent, events, header, refOf, textOf, urlHashOf } from './support/semantic-agent';
import type { SemanticFillSubject, SemanticTargetSubject } from '../../src/shared/ipc';
import { fillSubjectHash } from '../../src/shared/semantic-fill';
import { argumentsHash } from '../../src/shared/canonical';
import { LIMITS } from '../../src/shared/limits';

type Booking = Record<'name' | 'email' | 'tea' | 'size' | 'date' | 'time' | 'notes' | 'promo' | 'card', string>;
const state = (page: Page) => page.evaluate(() => (globalThis as unknown as { __signup: { state: Booking } }).__signup.state);

test('page_type on a React form: text, email, select by label (never by value), date, time, textarea and contenteditable reach React state, each reviewed with its text and confirmed by readback; a rewritten value is a mismatch; a radio is refused; a missing option is refused; a grant for one text replayed with another is refused (arguments-mismatch)', async ({ world }) => {
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

    // 2. The other kinds of field, by fingerprint as an agent may: email, a select by an option's label (twice),
    // date, time, textarea, contenteditable.
    for (const [fingerprint, text] of [
      [{ role: 'textbox', name: 'Email' }, 'ada@example.org'],
      [{ role: 'combobox', name: 'Tea' }, 'Sencha (green)'],
      [{ role: 'combobox', name: 'Tea' }, 'Assam (black)'],
      [{ role: 'textbox', name: 'Day' }, '2026-12-24'],
      [{ role: 'textbox', name: 'Time' }, '15:30'],
      [{ role: 'textbox', name: 'Notes' }, 'Window seat,\nplease.'],
      [{ role: 'textbox', name: 'Card message' }, 'Happy birthday!'],
    ] as const) {
      const r = await act(world, client, 'page_type', { tabId, fingerprint, text });
      expect(header(r.r), `${fingerprint.name}: ${textOf(r.r)}`).toMatchObject({ outcome: 'succeeded', effect: 'value-set' });
      if (text === 'Sencha (green)') expect((await state(page)).tea).toBe('sencha');
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
    // An option's value is not what the person reviews (the page shows "Tieguanyin oolong"; "oolong" is only its
    // value): refused, nothing set, and the agent is told options go by their label.
    const byValue = await act(world, client, 'page_type', { tabId, fingerprint: { role: 'combobox', name: 'Tea' }, text: 'oolong' });
    expect(textOf(byValue.r)).toMatch(/^Error \(not-actionable\).*option-missing.*by the label the page shows/s);
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

test('page_fill: one approval shows every field and its text; all values reach React state, each re-found holding it; submitted by a separate click. A field changed during the review sets nothing; a radio in a fill is refused; the password form and a one-time-code field are blocked for type and fill, before the person is asked', async ({ world }) => {
  const { page, tabId } = await world.openShared(world.demo.url('signup'));
  const client = await agent(world);
  try {
    const name = await refOf(client, tabId, /^textbox "Your name"/);
    const fields = [
      { ref: name, text: 'Ada Lovelace' },
      { fingerprint: { role: 'textbox', name: 'Email' }, text: 'ada@example.org' },
      { fingerprint: { role: 'combobox', name: 'Tea' }, text: 'Tieguanyin oolong' },
      { fingerprint: { role: 'textbox', name: 'Day' }, text: '2026-12-31' },
      { fingerprint: { role: 'textbox', name: 'Time' }, text: '09:45' },
      { fingerprint: { role: 'textbox', name: 'Notes' }, text: 'Two cups.' },
    ];

    // 1. A field renamed by the page while the person reviews: refused target-changed, and NO field was set (all or nothing).
    const changed = await act(world, client, 'page_fill', { tabId, fields }, {
      beforeApprove: async () => void (await page.evaluate(() => (globalThis as unknown as { document: { querySelector(s: string): { setAttribute(k: string, v: string): void } } }).document.querySelector('input[name=time]').setAttribute('aria-label', 'Arrival'))),
    });
    expect(textOf(changed.r)).toMatch(/^Error \(target-changed\)/);
    expect(await state(page)).toMatchObject({ name: '', email: '', tea: '', date: '', time: '', notes: '' });
    await page.evaluate(() => (globalThis as unknown as { document: { querySelector(s: string): { removeAttribute(k: string): void } } }).document.querySelector('input[name=time]').removeAttribute('aria-label'));

    // 2. The fill: ONE dialog listing every field with its text (and the picture), the values bound by the arguments hash.
    const filled = await act(world, client, 'page_fill', { tabId, fields });
    expect(filled.r.isError, textOf(filled.r)).toBeFalsy();
    const s = filled.view!.subject as SemanticFillSubject;
    expect(filled.view).toMatchObject({ faculty: 'semantic', operation: 'fill', kind: 'mutation', arguments: { values: fields.map((f) => f.text) }, argumentsHash: await argumentsHash({ values: fields.map((f) => f.text) }) });
    expect(s).toMatchObject({ type: 'semantic-fill', operation: 'fill', formName: 'Booking', trustedInput: false, picture: { status: 'captured' } });
    expect(s.fields.map((f) => [f.fingerprint.role, f.fingerprint.name, f.text])).toEqual([
      ['textbox', 'Your name', 'Ada Lovelace'], ['textbox', 'Email', 'ada@example.org'], ['combobox', 'Tea', 'Tieguanyin oolong'],
      ['textbox', 'Day', '2026-12-31'], ['textbox', 'Time', '09:45'], ['textbox', 'Notes', 'Two cups.'],
    ]);
    expect(s.fields[0]!.ref).toBe(name);
    expect(filled.view!.subjectHash).toBe(await fillSubjectHash(s.fields.map((f) => f.fingerprint)));
    expect(header(filled.r)).toMatchObject({ outcome: 'succeeded', operation: 'fill', fields: 6, trustedInput: false, readback: 'confirmed', effect: 'values-set:6' });
    const id = header(filled.r).requestId as string;
    expect(events(world, id)).toEqual(['requested', 'validated', 'approval-shown', 'approved', 'dispatched', 'readback-confirmed', 'succeeded']);
    expect(await state(page)).toMatchObject({ name: 'Ada Lovelace', email: 'ada@example.org', tea: 'oolong', date: '2026-12-31', time: '09:45', notes: 'Two cups.' });
    // Nothing was submitted by the fill.
    await expect(page.locator('#confirmation')).toHaveCount(0);

    // 3. A radio in a fill takes no typed value: refused before the person is asked, nothing set.
    const radio = await act(world, client, 'page_fill', { tabId, fields: [{ ref: name, text: 'Eve' }, { fingerprint: { role: 'radio', name: 'Small' }, text: 'Small' }] }, { expectDialog: false });
    expect(textOf(radio.r)).toMatch(/^Error \(target-unsupported\): Field 2 /);
    expect((await state(page)).name).toBe('Ada Lovelace');

    // 4. Submitted with semantic controls only: the radio and the button, each clicked after approval.
    expect(header((await act(world, client, 'page_click', { tabId, fingerprint: { role: 'radio', name: 'Small' } })).r)).toMatchObject({ outcome: 'succeeded' });
    expect(header((await act(world, client, 'page_click', { tabId, fingerprint: { role: 'button', name: 'Book' } })).r)).toMatchObject({ outcome: 'succeeded' });
    await expect(page.locator('#confirmation')).toHaveText('Thanks, Ada Lovelace: oolong (Small) on 2026-12-31 at 09:45.');

    // 5. The password form's other field, and a one-time-code field: blocked for type and for fill, never shown to the person.
    const login = await world.openShared(world.demo.at('hostile', '/hostile/semantic/controls.html'));
    const email = { role: 'textbox', name: 'Email', form: 'Sign in form' };
    const blockedType = await act(world, client, 'page_type', { tabId: login.tabId, fingerprint: email, text: 'ada@example.org' }, { expectDialog: false });
    expect(textOf(blockedType.r)).toMatch(/^Error \(target-blocked\).*password-form/s);
    const blockedFill = await act(world, client, 'page_fill', { tabId: login.tabId, fields: [{ fingerprint: email, text: 'ada@example.org' }] }, { expectDialog: false });
    expect(textOf(blockedFill.r)).toMatch(/^Error \(target-blocked\): The field is a blocked surface \(password-form\)/);
    const otp = await act(world, client, 'page_type', { tabId: login.tabId, fingerprint: { role: 'textbox', name: 'Code' }, text: '123456' }, { expectDialog: false });
    expect(textOf(otp.r)).toMatch(/^Error \(target-blocked\).*credential-field/s);
    expect(await login.page.evaluate(() => (globalThis as unknown as { document: { querySelector(s: string): { value: string } } }).document.querySelector('#login input[name=email]').value)).toBe('');
  } finally {
    await client.close();
  }
});
