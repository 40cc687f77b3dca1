/**
 * page_key end to end (issue 10 item 4 "Key"; docs/semantic-controls.md, "Key"): an MCP SDK client →
 * the console's endpoint → the pipeline (each key approved through the console API, as the person) →
 * the real link → the extension's `semantic-target` (`resolve {focused: true}`) and `semantic` (`key`)
 * faculties → the `semantic` content module in real pages (resources/hostile/semantic/tab-order.html,
 * key.html; no WebMCP tools) → back, with receipts and readbacks.
 * The Tab order is checked against Chromium's own: Playwright's real `keyboard.press('Tab')` on the same page.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Page } from '@playwright/test';
import { test, expect, type LinkWorld } from './support/link-fixture';
import { act, agent, events, header, textOf, urlHashOf, type Done } from './support/semantic-agent';
import type { SemanticTargetSubject } from '../../src/shared/ipc';
import { argumentsHash } from '../../src/shared/canonical';
import { LIMITS } from '../../src/shared/limits';

/** Press `key` with page_key as the agent (support/semantic-agent.ts act: approved as the person, or shown never to be asked). */
const press = (world: LinkWorld, client: Client, tabId: number, key: string, o: Parameters<typeof act>[4] = {}): Promise<Done> => act(world, client, 'page_key', { tabId, key }, o);

/** The data-k of the deepest focused element (through shadow roots and the frame), as the page itself says. */
const focusedOf = (page: Page) => page.evaluate(() => (globalThis as unknown as { __focused(): string }).__focused());

const TABS = 17;
const SHIFT_TABS = 6;

test('Tab and Shift+Tab follow the same order as the real key: positive tabindex, tabindex=-1, disabled, hidden, inert, open and closed shadow roots, a slot, a same-origin iframe, contenteditable, a radio group', async ({ world }) => {
  const url = world.demo.at('hostile', '/hostile/semantic/tab-order.html');
  const { page, tabId } = await world.openShared(url);
  const client = await agent(world);
  try {
    const ours: string[] = [];
    for (let i = 0; i < TABS + SHIFT_TABS; i++) {
      const key = i < TABS ? 'Tab' : 'Shift+Tab';
      const { r, view } = await press(world, client, tabId, key);
      expect(textOf(r), `${key} #${i + 1}, after ${ours.join(' ')}`).toMatch(/^Done /);
      expect(header(r)).toMatchObject({ outcome: 'succeeded', operation: 'key', trustedInput: false, readback: 'confirmed', keyDefault: 'focus-moved', effect: 'focus-moved' });
      expect(view).toMatchObject({ faculty: 'semantic', operation: 'key', kind: 'mutation', arguments: { key } });
      expect((view!.subject as SemanticTargetSubject).trustedInput).toBe(false);
      // The first press starts with nothing focused: its target is the document itself, named by its title.
      if (i === 0) expect((view!.subject as SemanticTargetSubject).fingerprint).toEqual({ role: 'document (nothing focused)', name: 'Tab order', ancestors: [], nth: 0 });
      ours.push(await focusedOf(page));
    }

    await page.reload();
    await page.locator('html[data-ready="true"]').waitFor({ state: 'attached' });
    expect(await focusedOf(page)).toBe('none');
    const real: string[] = [];
    for (let i = 0; i < TABS + SHIFT_TABS; i++) {
      await page.keyboard.press(i < TABS ? 'Tab' : 'Shift+Tab');
      real.push(await focusedOf(page));
    }
    expect(ours).toEqual(real);
    // The page has what the test is about: each kind of stop, and none of the skipped ones.
    expect(real).toEqual(expect.arrayContaining(['positive-1', 'positive-2', 'open-1', 'slotted', 'closed-1', 'closed-field', 'frame-1', 'frame-link', 'notes', 'radio-small']));
    // From an element that is not a stop itself (tabindex=-1, focused by script), in the top and in the frame:
    // navigation starts at its place in the tree, as the real key does.
    const starts: Array<[string, () => Promise<void>]> = [
      ['negative', () => page.locator('#neg').focus()],
      ['frame-negative', () => page.frameLocator('#frame').locator('[data-k=frame-negative]').focus()],
      ['open-2', () => page.locator('open-box [data-k=open-2]').focus()],
    ];
    for (const [from, focus] of starts) {
      for (const key of ['Tab', 'Shift+Tab'] as const) {
        await focus();
        expect(await focusedOf(page)).toBe(from);
        const mine = await press(world, client, tabId, key);
        expect(header(mine.r), textOf(mine.r)).toMatchObject({ outcome: 'succeeded', keyDefault: 'focus-moved' });
        const ourNext = await focusedOf(page);
        await focus();
        await page.keyboard.press(key);
        expect(ourNext, `${key} from ${from}`).toBe(await focusedOf(page));
      }
    }
    for (const skipped of ['negative', 'disabled', 'display-none', 'visibility-hidden', 'inert', 'inert-field', 'open-2', 'frame-negative', 'radio-large', 'in-closed-details']) expect(real).not.toContain(skipped);
    expect(world.core.ledger.verify().ok).toBe(true);
  } finally {
    await client.close();
  }
});

test('a password form is blocked for keys, Enter included, before the person is asked; a Tab grant presented with Enter is refused; Enter activates a button and submits a search form, each with a confirmed readback', async ({ world }) => {
  const { page, tabId } = await world.openShared(world.demo.at('hostile', '/hostile/semantic/key.html'));
  const client = await agent(world);
  const clicks = (k: string) => page.evaluate((l) => (globalThis as unknown as { __clicks: Record<string, number> }).__clicks[l] ?? 0, k);
  try {
    // 1. Enter in the password field, and in the email field of the form holding it: target-blocked, no dialog, nothing submitted.
    for (const [sel, reason] of [['#pw', 'password'], ['#email', 'password-form']] as const) {
      await page.locator(sel).focus();
      const blocked = await press(world, client, tabId, 'Enter', { expectDialog: false });
      expect(textOf(blocked.r)).toMatch(/^Error \(target-blocked\)/);
      expect(textOf(blocked.r)).toContain(`(${reason})`);
      const tab = await press(world, client, tabId, 'Tab', { expectDialog: false });
      expect(textOf(tab.r)).toMatch(/^Error \(target-blocked\)/);
    }
    expect(await clicks('login')).toBe(0);
    // Navigation may bring the focus onto a blocked control, as the real key would (focus reveals nothing);
    // the next key there is refused, Enter included.
    await page.locator('#hello').focus();
    const back = await press(world, client, tabId, 'Shift+Tab');
    expect(header(back.r), textOf(back.r)).toMatchObject({ outcome: 'succeeded', keyDefault: 'focus-moved' });
    expect(await page.evaluate(() => (globalThis as unknown as { document: { activeElement: { textContent: string } } }).document.activeElement.textContent)).toBe('Sign in');
    const submit = await press(world, client, tabId, 'Enter', { expectDialog: false });
    expect(textOf(submit.r)).toMatch(/^Error \(target-blocked\)/);
    expect(await clicks('login')).toBe(0);

    // 2. Enter on a button activates it; the readback sees the page's answer.
    await page.locator('#hello').focus();
    const hello = await press(world, client, tabId, 'Enter');
    expect(header(hello.r), textOf(hello.r)).toMatchObject({ outcome: 'succeeded', operation: 'key', trustedInput: false, readback: 'confirmed', keyDefault: 'activated', effect: 'activated:dom-changed-near-target' });
    await expect(page.locator('#said')).toHaveText('hello 1');
    const rid = header(hello.r).requestId as string;
    expect(events(world, rid)).toEqual(['requested', 'validated', 'approval-shown', 'approved', 'dispatched', 'readback-confirmed', 'succeeded']);
    const v = hello.view!;
    const s = v.subject as SemanticTargetSubject;
    expect(s).toMatchObject({ type: 'semantic-target', operation: 'key', fingerprint: { role: 'button', name: 'Say hello' }, trustedInput: false });

    // 3. A grant the console signed for Tab on that button, presented with Enter: arguments-mismatch, the button not activated.
    const grant = await world.core.link.signGrant({
      requestId: 'key-replay-1', faculty: 'semantic', operation: 'key', tabId, frameId: v.frame.frameId, documentId: v.documentId, origin: v.origin,
      urlHash: await urlHashOf(world, tabId, { role: 'button', name: 'Say hello' }), subjectHash: v.subjectHash, argumentsHash: await argumentsHash({ key: 'Tab' }), nonce: 'b'.repeat(32),
      expiresAt: Date.now() + LIMITS.grantTtlMs,
    });
    if (!grant.ok) throw new Error(grant.error.message);
    const dispatch = (key: string) => world.request({
      op: 'dispatch', faculty: 'semantic', operation: 'key', target: { tabId, frameId: v.frame.frameId, documentId: v.documentId },
      subject: { fingerprint: s.fingerprint, ref: s.ref, focused: true }, arguments: { key }, grant: grant.value, timeoutMs: 10_000,
    });
    expect(await dispatch('Enter')).toMatchObject({ ok: true, value: { outcome: 'refused', refusal: 'arguments-mismatch' } });
    expect(await clicks('hello')).toBe(1);
    // A key outside the allow-list never reaches the page: the extension's request check refuses it.
    expect(await dispatch('a')).toMatchObject({ ok: false, error: { code: 'bad-request' } });
    // The grant is spent by its first attempt, as every grant is.
    expect(await dispatch('Tab')).toMatchObject({ ok: true, value: { outcome: 'refused', refusal: 'grant-reused' } });

    // 3b. The focus moves while the person reviews Enter on the button: the approved element no longer
    // holds the focus at dispatch, refused target-changed; neither it nor the newly focused field acted on.
    await page.locator('#hello').focus();
    const moved = await press(world, client, tabId, 'Enter', { beforeApprove: () => page.locator('#q').focus() });
    expect(textOf(moved.r)).toMatch(/^Error \(target-changed\)/);
    expect([await clicks('hello'), await clicks('search')]).toEqual([1, 0]);

    // 4. Enter in a form's only text field: implicit submission through its default button.
    await page.locator('#q').fill('tea');
    await page.locator('#q').focus();
    const searched = await press(world, client, tabId, 'Enter');
    expect(header(searched.r), textOf(searched.r)).toMatchObject({ outcome: 'succeeded', keyDefault: 'submitted', readback: 'confirmed', effect: 'submitted:dom-changed-near-target' });
    await expect(page.locator('#found')).toHaveText('searched tea');

    // 5. An arrow on a checked radio moves to the next one and checks it.
    await page.locator('#small').focus();
    const arrow = await press(world, client, tabId, 'ArrowDown');
    expect(header(arrow.r), textOf(arrow.r)).toMatchObject({ outcome: 'succeeded', keyDefault: 'checked', effect: 'checked' });
    await expect(page.locator('#large')).toBeChecked();

    // 6. Escape inside an open modal dialog: cancel, then closed.
    await page.locator('#open').click();
    await page.locator('#inside').focus();
    const esc = await press(world, client, tabId, 'Escape');
    expect(header(esc.r), textOf(esc.r)).toMatchObject({ outcome: 'succeeded', keyDefault: 'dialog-closed', effect: 'dialog-closed' });
    expect(await page.evaluate(() => (globalThis as unknown as { __cancels: number }).__cancels)).toBe(1);
    await expect(page.locator('#dlg')).not.toHaveAttribute('open');

    // 7. PageDown with nothing but the body focused scrolls the page.
    await page.evaluate(() => (globalThis as unknown as { document: { activeElement: { blur(): void } } }).document.activeElement.blur());
    const down = await press(world, client, tabId, 'PageDown');
    expect(header(down.r), textOf(down.r)).toMatchObject({ outcome: 'succeeded', keyDefault: 'scrolled', effect: 'scrolled' });
    expect((down.view!.subject as SemanticTargetSubject).fingerprint.role).toBe('document (nothing focused)');
    expect(await page.evaluate(() => (globalThis as unknown as { scrollY: number }).scrollY)).toBeGreaterThan(100);
    expect(world.core.ledger.verify().ok).toBe(true);
  } finally {
    await client.close();
  }
});

test('the ladder for keys: Enter in a field of a form that is a declarative WebMCP tool is refused naming the tool, before the person is asked', async ({ world }) => {
  const { page, tabId } = await world.openShared(world.demo.at('hostile', '/hostile/semantic/ladder.html'));
  const client = await agent(world);
  try {
    await page.locator('input[name=email]').focus();
    const refused = await press(world, client, tabId, 'Enter', { expectDialog: false });
    expect(textOf(refused.r)).toMatch(/^Error \(narrower-capability-available\): .*"subscribe_news"/);
    expect(await page.evaluate(() => (globalThis as unknown as { __clicks: Record<string, number> }).__clicks.join ?? 0)).toBe(0);
  } finally {
    await client.close();
  }
});
