/**
 * What a page hides stays hidden from the agent, in real Chromium with the real extension
 * (docs/semantic-reads.md, "The view, and reads are no oracle"; trust rows 13b and 13s in docs/trust-rules.md). Each case was
 * found by a helper attacking the semantic controls on pages shaped as real ones
 * (resources/hostile/private/):
 * - content a page slots into a private container of a component's shadow root (open or closed):
 *   the walk showed it private, but a fingerprint found it, so it was clicked after a dialog, and
 *   under a low-impact allow rule scrolled to with no dialog and then read by its ref;
 * - a same-origin frame inside a private part: clicked and read by ref; a target in a same-origin frame
 *   its parent made fully transparent over a decoy: clicked;
 * - a private part inside a rich-text box (the box's value was its innerText), text the page does
 *   not render inside names (a "Reveal" code, hidden passwords), a PIN field masked with CSS;
 * - a click that did nothing, confirmed by the focus the click itself gave its button;
 * - Enter in a search field clicking the form's default button, which the page marks private;
 * - fields that name a credential by their words only (a password shown by a "show password" toggle,
 *   a card number split over four fields, a security code, a texted code): their values were read.
 */
import type { Page } from '@playwright/test';
import { test, expect } from './support/link-fixture';
import { act, agent, textOf } from './support/semantic-agent';

const counter = (page: Page, path: string) => page.evaluate((p) => p.split('.').reduce<unknown>((o, k) => (o as Record<string, unknown>)[k], globalThis), path) as Promise<number>;

test('content slotted into a private container of an open or a closed shadow root is never read, found or acted on, even under a low-impact allow rule', async ({ world }) => {
  const { page, tabId } = await world.openShared(world.demo.at('hostile', '/hostile/private/slot.html'));
  const client = await agent(world);
  try {
    const secret = 'otter maple violet seven';
    const snap = textOf(await client.callTool({ name: 'page_snapshot', arguments: { tabId } }));
    expect(snap).toContain('"Help"');
    for (const hidden of ['otter', 'Delete account', 'Close account']) expect(snap).not.toContain(hidden);
    const ex = await client.callTool({ name: 'page_extract', arguments: { tabId, selector: 'p, button, b, input' } });
    expect(textOf(ex)).toContain('Help');
    expect(textOf(ex)).not.toContain('otter');
    const v = await client.callTool({ name: 'page_verify', arguments: { tabId, text: 'otter maple' } });
    expect(textOf(v)).toMatch(/the condition does not hold/);

    // Found by a fingerprint naming what the page slotted in: refused before the person is asked, as if nothing had that name.
    for (const name of ['Delete account', 'Close account']) {
      const click = await act(world, client, 'page_click', { tabId, fingerprint: { role: 'button', name } }, { expectDialog: false });
      expect(textOf(click.r), name).toMatch(/^Error \(target-(missing|blocked)\)/);
    }
    expect([await counter(page, '__clicks.del'), await counter(page, '__clicks.close')]).toEqual([0, 0]);

    // The person allows low-impact actions on this tab: a scroll to a public button runs with no dialog, one to the slotted field gives no ref.
    const origin = new URL(page.url()).origin;
    expect(await world.core.api.addPolicyRule({ rule: { faculty: 'semantic', kind: 'low-impact-mutation', origin, tabId, action: 'allow' } })).toMatchObject({ ok: true });
    const help = await act(world, client, 'page_scroll', { tabId, fingerprint: { role: 'button', name: 'Help' } }, { expectDialog: false });
    expect(help.r.isError, textOf(help.r)).toBeFalsy();
    const scroll = await act(world, client, 'page_scroll', { tabId, fingerprint: { role: 'textbox', name: 'Copy your recovery phrase' } }, { expectDialog: false });
    expect(textOf(scroll.r)).toMatch(/^Error \(target-(missing|blocked)\)/);
    expect(textOf(scroll.r)).not.toMatch(/"ref"/);
    expect(JSON.stringify(world.receipts({ limit: 500 }))).not.toContain(secret);
  } finally {
    await client.close();
  }
});

test('a same-origin frame inside a private part is private as a whole: not found, clicked or read by ref; a frame beside it is; a frame made fully transparent over a decoy is not actionable', async ({ world }) => {
  const { page, tabId } = await world.openShared(world.demo.at('hostile', '/hostile/private/frame.html'));
  const client = await agent(world);
  try {
    const snap = textOf(await client.callTool({ name: 'page_snapshot', arguments: { tabId } }));
    expect(snap).toContain('Show statements');
    expect(snap).not.toContain('Confirm transfer');
    const click = await act(world, client, 'page_click', { tabId, fingerprint: { role: 'button', name: 'Confirm transfer of 5,000 EUR' } }, { expectDialog: false });
    expect(textOf(click.r)).toMatch(/^Error \(target-(missing|blocked)\)/);
    expect(await page.frameLocator('#f').locator('body').evaluate(() => (globalThis as unknown as { __sent: number }).__sent)).toBe(0);

    // The frame beside it is open to the same path: reviewed, clicked, and read by the ref its answer gives.
    const open = await act(world, client, 'page_click', { tabId, fingerprint: { role: 'button', name: 'Show statements' } });
    expect(open.r.isError, textOf(open.r)).toBeFalsy();
    expect(await page.frameLocator('#open').locator('body').evaluate(() => (globalThis as unknown as { __sent: number }).__sent)).toBe(1);
    const ref = /"ref":\s*"([a-z]+\d+)"/.exec(textOf(open.r))?.[1];
    expect(ref, textOf(open.r)).toBeTruthy();
    expect(textOf(await client.callTool({ name: 'page_extract', arguments: { tabId, ref } }))).toContain('Show statements');

    // A frame its parent made fully transparent over a decoy: the person would see the decoy, so the
    // button inside is not actionable (refused after review, right before the events).
    const clear = await act(world, client, 'page_click', { tabId, fingerprint: { role: 'button', name: 'Send 5,000 EUR' } });
    expect(textOf(clear.r)).toMatch(/^Error \(not-actionable\)/);
    expect(await page.frameLocator('#clear').locator('body').evaluate(() => (globalThis as unknown as { __sent: number }).__sent)).toBe(0);
  } finally {
    await client.close();
  }
});

test('a private part inside a rich-text box, text the page does not render, and a PIN masked with CSS never reach the agent; a click whose only sign is the focus it gave its own button is not confirmed; Enter never clicks a private default button', async ({ world }) => {
  const { page, tabId } = await world.openShared(world.demo.at('hostile', '/hostile/private/secrets.html'));
  await page.locator('#pin').fill('4921');
  const client = await agent(world);
  try {
    const snap = textOf(await client.callTool({ name: 'page_snapshot', arguments: { tabId } }));
    // What is shown stays shown: the box's own text, the masked code, the heading, the link and the field (blocked).
    for (const shown of ['Your sign-in code is', 'Do not share it', '••••-••••', 'Wi-Fi password', 'Card PIN', 'Transfer PIN']) expect(snap).toContain(shown);
    for (const hidden of ['482913', '7391-2284', 'correct-horse-battery', '4827', '4921']) expect(snap).not.toContain(hidden);
    expect(snap).toMatch(/textbox "Transfer PIN".*\[blocked\]/);
    const ex = textOf(await client.callTool({ name: 'page_extract', arguments: { tabId, selector: '#editor' } }));
    expect(ex).toContain('Your sign-in code is');
    expect(ex).not.toContain('482913');
    expect(textOf(await client.callTool({ name: 'page_verify', arguments: { tabId, selector: '#editor', valueContains: '4829' } }))).toMatch(/the condition does not hold/);
    const pin = await act(world, client, 'page_click', { tabId, fingerprint: { role: 'textbox', name: 'Transfer PIN' } }, { expectDialog: false });
    expect(textOf(pin.r)).toMatch(/^Error \(target-blocked\)/);

    // Reveal: what the person is shown, what the agent gets back and what is receipted hold no hidden code.
    const reveal = await act(world, client, 'page_click', { tabId, fingerprint: { role: 'button', name: 'Reveal' } }, {
      beforeApprove: async (v) => expect(JSON.stringify(v.subject)).not.toContain('7391'),
    });
    expect(textOf(reveal.r)).not.toContain('7391');
    expect(await counter(page, '__mail.revealed')).toBe(1);
    expect(JSON.stringify(world.receipts({ limit: 500 }))).not.toMatch(/7391|482913|4921|correct-horse/);

    // Archive does nothing; the page's hover hint changes the row (so the fingerprint no longer finds the
    // button) and the click's own focus of the button is all that moved: not confirmed.
    const archive = await act(world, client, 'page_click', { tabId, fingerprint: { role: 'button', name: 'Archive' } });
    expect(await counter(page, '__mail.clicks')).toBe(1);
    expect(textOf(archive.r)).toMatch(/readback-mismatch/);

    // Enter in a search field would click the form's default button, which the page marks private: refused, nothing submitted.
    const focus = await act(world, client, 'page_focus', { tabId, fingerprint: { role: 'textbox', name: 'Search orders' } });
    expect(focus.r.isError, textOf(focus.r)).toBeFalsy();
    const enter = await act(world, client, 'page_key', { tabId, key: 'Enter' });
    expect(textOf(enter.r)).toMatch(/^Error \(target-blocked\)/);
    expect(await page.evaluate(() => (globalThis as unknown as { __mail: { ops: string[] } }).__mail.ops)).toEqual([]);
  } finally {
    await client.close();
  }
});

test('fields that name a credential by their words only: a password shown by a "show password" toggle, a card number split over four fields, a security code and a texted code (also named in camelCase or in German) never reach the agent and are blocked; look-alike ordinary fields stay open (an Indian "PIN code" is postal)', async ({ world }) => {
  const { page, tabId } = await world.openShared(world.demo.at('hostile', '/hostile/private/fields.html'));
  // The person types their password and presses the eye button to check it (the field is type=text now), then pays.
  await page.locator('#user').fill('ada');
  await page.locator('#pw').fill('Tr0ub4dor&3horse');
  await page.locator('#eye').click();
  expect(await page.locator('#pw').getAttribute('type')).toBe('text');
  for (const [n, v] of <Array<[string, string]>>[['cc1', '4111'], ['cc2', '1111'], ['cc3', '1111'], ['cc4', '1111'], ['cvc', '737'], ['otp', '602913'], ['promo', 'SPRING'], ['postcode', 'EC1A 1BB'], ['pinned', 'buy oolong']]) {
    await page.locator(`[name=${n}]`).fill(v);
  }
  // A camelCase React form, a German security code, and an Indian address's PIN code (postal).
  for (const [n, v] of <Array<[string, string]>>[['cardCvc', '8537'], ['otpCode', '774411'], ['pruef', '9264'], ['pinCode', '110001']]) await page.locator(`[name=${n}]`).fill(v);
  const client = await agent(world);
  try {
    const snap = textOf(await client.callTool({ name: 'page_snapshot', arguments: { tabId } }));
    for (const hidden of ['Tr0ub4dor', '737', '602913', 'ada']) expect(snap).not.toContain(hidden);
    expect(snap).not.toMatch(/4111[\s\S]*1111/);
    for (const shown of ['SPRING', 'EC1A 1BB', 'buy oolong', '110001']) expect(snap).toContain(shown);
    for (const hidden of ['8537', '774411', '9264']) expect(snap).not.toContain(hidden);
    const ex = textOf(await client.callTool({ name: 'page_extract', arguments: { tabId, selector: 'input, textarea' } }));
    for (const hidden of ['Tr0ub4dor', '737', '602913', '4111']) expect(ex).not.toContain(hidden);
    expect(ex).toContain('SPRING');
    // Each is refused before the person is asked, with the reason; the sign-in form is a password form again.
    const blocked = async (fingerprint: Record<string, unknown>) => {
      const r = await world.request({ op: 'read', faculty: 'semantic-target', operation: 'resolve', tabId, arguments: { fingerprint } });
      if (!r.ok) throw new Error(r.error.message);
      return (r.value as { blocked: string | null }).blocked;
    };
    expect(await blocked({ role: 'textbox', name: 'Password' })).toBe('password');
    expect(await blocked({ role: 'textbox', name: 'User ID' })).toBe('password-form');
    expect(await blocked({ role: 'button', name: 'Sign in' })).toBe('password-form');
    expect(await blocked({ role: 'textbox', name: 'Card number, digits 13 to 16' })).toBe('credential-field');
    expect(await blocked({ role: 'textbox', name: 'Security code' })).toBe('credential-field');
    expect(await blocked({ role: 'textbox', name: 'Code we texted you' })).toBe('credential-field');
    for (const name of ['•••', '000000', 'Prüfnummer']) expect(await blocked({ role: 'textbox', name }), name).toBe('credential-field');
    for (const name of ['Promo code', 'Postal code', 'PIN code', 'Passport number', 'Pinned note']) expect(await blocked({ role: 'textbox', name }), name).toBeNull();
    const typed = await act(world, client, 'page_type', { tabId, fingerprint: { role: 'textbox', name: 'Password' }, text: 'hunter2' }, { expectDialog: false });
    expect(textOf(typed.r)).toMatch(/^Error \(target-blocked\)/);
    await expect(page.locator('#pw')).toHaveValue('Tr0ub4dor&3horse');
    // \b keeps digits that happen to sit inside a hex or base64 hash from counting as the code.
    expect(JSON.stringify(world.receipts({ limit: 500 }))).not.toMatch(/Tr0ub4dor|\b602913\b|\b737\b/);
  } finally {
    await client.close();
  }
});
