/**
 * Private surfaces that appear or sit where a typed value goes (docs/semantic-controls.md, "Type and
 * fill", "Blocked surfaces"; trust rules 13 and 13f), on resources/hostile/private/turncoat.html:
 * - a fill whose first field's input makes the page turn a later field into a password field: that
 *   field and those after it are not set, and the answer says the fields before it were;
 * - page_type into a field that turns itself into a password field as it gets focus: nothing typed;
 * - page_type into a rich-text box holding a part the page marks private: typing would replace it
 *   unseen, so nothing is typed.
 */
import { test, expect } from './support/link-fixture';
import { act, agent, events, textOf } from './support/semantic-agent';

test('a field the page turns into a password field while the form is filled is not set, nor any after it, nor one that turns into one as it is focused; a rich-text box holding a private part is not typed into', async ({ world }) => {
  const { page, tabId } = await world.openShared(world.demo.at('hostile', '/hostile/private/turncoat.html'));
  const client = await agent(world);
  try {
    const fields = [
      { fingerprint: { role: 'textbox', name: 'Name' }, text: 'Ada' },
      { fingerprint: { role: 'textbox', name: 'Memo' }, text: 'mother maiden name: Byron' },
      { fingerprint: { role: 'textbox', name: 'City' }, text: 'London' },
    ];
    const filled = await act(world, client, 'page_fill', { tabId, fields });
    expect(textOf(filled.r)).toMatch(/^Error \(failed\).*\(tool-failed\).*field 2 became a blocked surface \(password\) as the fields before it were set \(those stay set\); it and the fields after it were not set/s);
    await expect(page.locator('#memo')).toHaveAttribute('type', 'password');
    await expect(page.locator('#memo')).toHaveValue('');
    await expect(page.locator('#city')).toHaveValue('');
    await expect(page.locator('#name')).toHaveValue('Ada');
    expect(JSON.stringify(world.receipts({ requestId: filled.view!.requestId }))).not.toContain('Byron');
    expect(events(world, filled.view!.requestId).slice(-2)).toEqual(['dispatched', 'failed']);

    // A field that turns itself into a password field when focused (the first thing typing does): nothing typed.
    const nick = await act(world, client, 'page_type', { tabId, fingerprint: { role: 'textbox', name: 'Nickname' }, text: 'Lovelace' });
    expect(textOf(nick.r)).toMatch(/^Error \(target-blocked\)/);
    // The receipt says why, for the person reading the timeline.
    const refused = world.receipts({ requestId: nick.view!.requestId }).find((x) => x.event === 'refused')!;
    expect(refused.detail).toMatchObject({ by: 'extension', code: 'target-blocked', message: 'the field became a blocked surface (password) as it was focused; nothing was typed' });
    await expect(page.locator('#nick')).toHaveAttribute('type', 'password');
    await expect(page.locator('#nick')).toHaveValue('');

    // The note: the person reviews it by its text, which leaves the private part out; typing would erase it.
    const typed = await act(world, client, 'page_type', { tabId, fingerprint: { role: 'textbox', name: 'Note to the bank' }, text: 'Cancel the transfer.' });
    expect(textOf(typed.r)).toMatch(/^Error \(not-actionable\).*private/s);
    expect(events(world, typed.view!.requestId).slice(-2)).toEqual(['dispatched', 'refused']);
    await expect(page.locator('#note [data-echo-private]')).toHaveText('account 7781-2291');
    await expect(page.locator('#note')).toContainText('Please move my savings');
  } finally {
    await client.close();
  }
});
