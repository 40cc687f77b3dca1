/**
 * The target's item (docs/semantic-controls.md, "The target's item"; docs/trust-rules.md row 13i):
 * a React list keyed by index (resources/demo/store/inbox.tsx) reuses the first row's elements for
 * a message that arrives while the person reviews "Delete" on the first row. The element, its role,
 * name and position stay the same; only the row's text changes. The fingerprint carries the row's
 * text and its hash, so the dispatch refuses (target-changed) and nothing is deleted, whether the
 * agent named the button by ref or by fingerprint, and when the rows differ only past the cut of
 * their text. Real Chromium, the real extension, an MCP SDK client, approved through the console API.
 */
import type { Page } from '@playwright/test';
import { test, expect } from './support/link-fixture';
import { act, agent, events, header, refOf, textOf } from './support/semantic-agent';
import type { SemanticTargetSubject } from '../../src/shared/ipc';
import { FINGERPRINT_BOUNDS } from '../../src/shared/semantic-target';

type Inbox = { __inbox: { arrive(s: string): void; mails(): string[]; deleted: string[]; reply: string } };
const inbox = (page: Page) => page.evaluate(() => {
  const i = (globalThis as unknown as Inbox).__inbox;
  return { mails: i.mails(), deleted: [...i.deleted], reply: i.reply };
});
const arrive = (page: Page, subject: string) => page.evaluate((s) => (globalThis as unknown as Inbox).__inbox.arrive(s), subject);
const fp = (d: { view: { subject: unknown } | null }) => (d.view!.subject as SemanticTargetSubject).fingerprint;

test('a row reused for a message that arrived during the review: the approved Delete is refused (target-changed) by ref and by fingerprint, nothing is deleted; with no arrival the reviewed row is the one deleted; the dialog shows the row', async ({ world }) => {
  const { page, tabId } = await world.openShared(world.demo.url('inbox'));
  const client = await agent(world);
  try {
    // 1. By ref: the first row's Delete. The person sees the row's text (not the button's own) and its hash.
    const del = await refOf(client, tabId, /^button "Delete"/);
    const byRef = await act(world, client, 'page_click', { tabId, ref: del }, { beforeApprove: () => arrive(page, 'Your new passport appointment') });
    expect(textOf(byRef.r)).toMatch(/^Error \(target-changed\)/);
    expect(events(world, byRef.view!.requestId).at(-1)).toBe('refused');
    expect(await inbox(page)).toMatchObject({ deleted: [], mails: ['Your new passport appointment', 'Invoice 12 (paid)', 'Newsletter: spring teas', 'Your order has shipped'] });
    expect(fp(byRef)).toMatchObject({ role: 'button', name: 'Delete', ancestors: [{ role: 'main', name: 'Messages' }], nth: 0, context: 'Invoice 12 (paid) from Your Bank Archive' });
    expect(fp(byRef).contextHash).toMatch(/^[0-9a-f]{64}$/);

    // 2. By fingerprint, the agent's way: the first Delete. Another message arrives during the review: refused.
    const byFp = await act(world, client, 'page_click', { tabId, fingerprint: { role: 'button', name: 'Delete', nth: 0 } }, { beforeApprove: () => arrive(page, 'Court summons') });
    expect(fp(byFp).context).toBe('Your new passport appointment from Your Bank Archive');
    expect(textOf(byFp.r)).toMatch(/^Error \(target-changed\)/);
    expect((await inbox(page)).deleted).toEqual([]);

    // 3. Nothing arrives: the row reviewed is the row deleted (the item check does not refuse a page at rest).
    const ok = await act(world, client, 'page_click', { tabId, fingerprint: { role: 'button', name: 'Delete', nth: 1 } });
    expect(fp(ok).context).toBe('Your new passport appointment from Your Bank Archive');
    expect(header(ok.r)).toMatchObject({ outcome: 'succeeded' });
    expect(await inbox(page)).toMatchObject({ deleted: ['Your new passport appointment'], mails: ['Court summons', 'Invoice 12 (paid)', 'Newsletter: spring teas', 'Your order has shipped'] });

    // 4. Typing changes the item's text (the live count beside the box): the readback finds the box by its own
    // description, so the value set is confirmed; the review showed the count as it was.
    const typed = await act(world, client, 'page_type', { tabId, fingerprint: { role: 'textbox', name: 'Quick reply' }, text: 'Thanks, received.' });
    expect(fp(typed).context).toBe('0/200 characters');
    expect(header(typed.r)).toMatchObject({ outcome: 'succeeded', effect: 'value-set' });
    expect((await inbox(page)).reply).toBe('Thanks, received.');
  } finally {
    await client.close();
  }
});

test('rows whose text is the same for its first 300 characters: the cut text the person reads is the same, the hash of the whole row is not; a message arriving during the review is refused (target-changed), nothing is deleted', async ({ world }) => {
  const { page, tabId } = await world.openShared(`${world.demo.url('inbox')}?layout=list`);
  const client = await agent(world);
  try {
    const resolve = async (nth: number) => {
      const r = await world.request({ op: 'read', faculty: 'semantic-target', operation: 'resolve', tabId, arguments: { fingerprint: { role: 'button', name: 'Delete', nth } } });
      if (!r.ok) throw new Error(r.error.message);
      return (r.value as { fingerprint: { ancestors: unknown; context: string; contextHash: string } }).fingerprint;
    };
    // The list item names itself by its text, cut: the same for every row; so is the item's cut text. Its hash differs.
    const [one, two] = [await resolve(0), await resolve(1)];
    const first = await act(world, client, 'page_click', { tabId, fingerprint: { role: 'button', name: 'Delete', nth: 0 } }, { beforeApprove: () => arrive(page, 'Your new passport appointment') });
    expect(textOf(first.r)).toMatch(/^Error \(target-changed\)/);
    expect((await inbox(page)).deleted).toEqual([]);
    expect(fp(first)).toMatchObject(one);
    expect(two.ancestors).toEqual(one.ancestors);
    expect(one.context).toHaveLength(FINGERPRINT_BOUNDS.context);
    expect(two.context).toBe(one.context);
    expect(two.contextHash).not.toBe(one.contextHash);
  } finally {
    await client.close();
  }
});

type Items = { __items: { arrive(kind: string, text: string, at?: string): void; rows(kind: string): string[]; deleted: string[] } };
const items = (page: Page) => page.evaluate(() => {
  const i = (globalThis as unknown as Items).__items;
  return { deleted: [...i.deleted], payments: i.rows('payments'), mails: i.rows('mails') };
});
const arriveIn = (page: Page, kind: string, text: string, at?: string) => page.evaluate(([k, t, w]) => (globalThis as unknown as Items).__items.arrive(k!, t!, w), [kind, text, at]);

test('a table row reused while its actions cell holds Edit and Delete, and a row whose action bar holds a Reply link: the item is the row, not the cell or the bar, so the reused row is refused (target-changed), nothing is deleted', async ({ world }) => {
  // resources/hostile/semantic/items.html: the rows' first 64 characters are the same (the row's name in
  // `ancestors` is too); an actions cell "Edit Delete" and an action bar "Reply Delete" are the same in
  // every row. Taken as the item, they let the approved Delete delete the row that arrived during the review.
  const { page, tabId } = await world.openShared(world.demo.at('hostile', '/hostile/semantic/items.html'));
  const client = await agent(world);
  try {
    const snap = textOf(await client.callTool({ name: 'page_snapshot', arguments: { tabId } }));
    const payment = /"Ann Lee"\n\s*"50\.00 EUR"\n\s*button "Edit" #[a-z0-9]+\n\s*button "Delete" #([a-z]+[0-9]+)/.exec(snap)?.[1];
    const mail = /"Invoice 12 \(paid\)"\n\s*link "Reply" #[a-z0-9]+\n\s*button "Delete" #([a-z]+[0-9]+)/.exec(snap)?.[1];
    expect([payment, mail], snap).toEqual([expect.any(String), expect.any(String)]);

    const byRow = await act(world, client, 'page_click', { tabId, ref: payment }, { beforeApprove: () => arriveIn(page, 'payments', 'Mallory Ltd') });
    expect(fp(byRow).context).toMatch(/^Standing order, .* Ann Lee 50\.00 EUR Edit$/);
    expect(textOf(byRow.r)).toMatch(/^Error \(target-changed\)/);
    // The refusal says what changed: the row, not the button (fixed words, no page text).
    expect(textOf(byRow.r)).toContain("What changed: its item's text (the row or card it stands in: a list that reuses its rows, or text that changes on its own).");
    const byBar = await act(world, client, 'page_click', { tabId, ref: mail }, { beforeApprove: () => arriveIn(page, 'mails', 'Court summons') });
    expect(fp(byBar).context).toBe('Invoice 12 (paid) Reply');
    expect(textOf(byBar.r)).toMatch(/^Error \(target-changed\)/);
    expect(await items(page)).toMatchObject({ deleted: [], payments: ['Mallory Ltd', 'Ann Lee', 'Bob Stone', 'Cleo Park'], mails: ['Court summons', 'Invoice 12 (paid)', 'Newsletter: spring teas', 'Your order has shipped'] });

    // At rest, the row reviewed is the row deleted.
    const ok = await act(world, client, 'page_click', { tabId, fingerprint: { role: 'button', name: 'Delete', context: 'Court summons Reply' } });
    expect(header(ok.r)).toMatchObject({ outcome: 'succeeded' });
    expect((await items(page)).deleted).toEqual(['Court summons']);
  } finally {
    await client.close();
  }
});

test("a blocked field's value is never the item's text: a texted code typed into a React-controlled textarea (its value mirrored into its text content) does not reach the dialog's item, the fingerprint or the receipts", async ({ world }) => {
  const { page, tabId } = await world.openShared(world.demo.at('hostile', '/hostile/semantic/items.html'));
  await page.locator('#code').pressSequentially('602913');
  expect(await page.locator('#code').evaluate((t) => t.textContent)).toBe('602913');
  const client = await agent(world);
  try {
    const snap = textOf(await client.callTool({ name: 'page_snapshot', arguments: { tabId } }));
    expect(snap).toMatch(/textbox "Code we texted you" \[blocked/);
    const r = await world.request({ op: 'read', faculty: 'semantic-target', operation: 'resolve', tabId, arguments: { fingerprint: { role: 'button', name: 'Verify' } } });
    expect(r.ok).toBe(true);
    const verify = await act(world, client, 'page_click', { tabId, fingerprint: { role: 'button', name: 'Verify' } });
    expect(fp(verify).context).toBe('Enter the code we texted to your phone ending 42.');
    for (const seen of [snap, JSON.stringify(r), JSON.stringify(verify.view), textOf(verify.r), JSON.stringify(world.receipts({ limit: 500 }))]) expect(seen).not.toContain('602913');
    // Nor can the agent test a guess of it: a query naming the item with the code matches nothing.
    const guess = await act(world, client, 'page_click', { tabId, fingerprint: { role: 'button', name: 'Verify', context: 'Enter the code we texted to your phone ending 42. 602913' } }, { expectDialog: false });
    expect(textOf(guess.r)).toMatch(/^Error \(target-missing\)/);
  } finally {
    await client.close();
  }
});

test('a relative time ticking in the row during the review ("2 min ago", then "3 min ago") does not refuse the click: the item counts the <time>\'s datetime, not its words; a row reused for an entry that reads the same but for its time is still refused', async ({ world }) => {
  const { page, tabId } = await world.openShared(world.demo.at('hostile', '/hostile/semantic/items.html'));
  const client = await agent(world);
  const tick = () => page.evaluate(() => (globalThis as unknown as { __items: { tick(): void } }).__items.tick());
  try {
    // The row's name among the ancestors counts the time as the item does.
    const ticked = await act(world, client, 'page_click', { tabId, ref: await refOf(client, tabId, /^button "Hide"/) }, { beforeApprove: tick });
    expect(textOf(ticked.r)).toMatch(/^Done /);
    expect(fp(ticked).context).toBe('Payment to Ann Lee, 50.00 EUR 2026-12-05T07:00:00Z');
    expect(fp(ticked).ancestors[0]).toEqual({ role: 'listitem', name: 'Payment to Ann Lee, 50.00 EUR 2026-12-05T07:00:00Z Hide' });
    expect(header(ticked.r)).toMatchObject({ outcome: 'succeeded' });
    expect((await items(page)).deleted).toEqual(['Payment to Ann Lee, 50.00 EUR']);

    // The same payment again, made just now: same words, another time. Reusing Bob's row for it is refused.
    const reused = await act(world, client, 'page_click', { tabId, ref: await refOf(client, tabId, /^button "Hide"/) }, { beforeApprove: () => arriveIn(page, 'activity', 'Payment to Bob Stone, 20.00 EUR', '2026-12-05T07:02:00Z') });
    expect(fp(reused).context).toBe('Payment to Bob Stone, 20.00 EUR 2026-12-05T06:58:00Z');
    expect(textOf(reused.r)).toMatch(/^Error \(target-changed\)/);
    expect((await items(page)).deleted).toEqual(['Payment to Ann Lee, 50.00 EUR']);
  } finally {
    await client.close();
  }
});

test('a card holding its own text is the item, not the look-alike layout column around it: a line beside the card that the page rewrites during the review does not refuse the click', async ({ world }) => {
  const { page, tabId } = await world.openShared(world.demo.at('hostile', '/hostile/semantic/items.html'));
  const client = await agent(world);
  try {
    const add = await act(world, client, 'page_click', { tabId, fingerprint: { role: 'button', name: 'Add to cart' } }, { beforeApprove: () => page.evaluate(() => (globalThis as unknown as { __items: { viewers(): void } }).__items.viewers()) });
    expect(textOf(add.r)).toMatch(/^Done /);
    expect(fp(add).context).toBe('Oolong, 100 g');
    expect(await page.evaluate(() => (globalThis as unknown as { __items: { added: number } }).__items.added)).toBe(1);
  } finally {
    await client.close();
  }
});
