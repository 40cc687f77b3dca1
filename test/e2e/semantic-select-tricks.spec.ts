/**
 * Selects whose labels mislead, and forms whose handlers move the fields still to be filled
 * (docs/semantic-controls.md, "Type and fill"; trust rules 13 and 13f), on
 * resources/hostile/semantic/checkout.html:
 * - two enabled options that read the same (two "Standard" in two groups; "Paper" and "Pa​per" with a
 *   zero-width space) are refused option-ambiguous, whichever the agent names: the person reviews the
 *   text only and could not tell which one is chosen;
 * - an option in a disabled <optgroup> is not chosen (the person cannot choose it either);
 * - a select that re-renders its options on focus, so the named option now reads otherwise: nothing chosen;
 * - a fill whose first field's handlers move the second field into another form, or rename the third:
 *   that field and those after it are not set, the answer says which and that the ones before stay set;
 * - a field that moves itself into another form or relabels itself as it is focused (page_type, page_fill): not set;
 * - an editor whose beforeinput handler inserts a private chip: nothing typed, the receipt saying so;
 * - a select whose change handler turns the next field into a password field: that field is not set.
 */
import { test, expect } from './support/link-fixture';
import { act, agent, events, textOf } from './support/semantic-agent';

test('select options that read alike are refused, a disabled group is not chosen, options re-rendered on focus choose nothing; a fill whose handlers move, rename or make private a later field stops there', async ({ world }) => {
  const { page, tabId } = await world.openShared(world.demo.at('hostile', '/hostile/semantic/checkout.html'));
  const client = await agent(world);
  const pick = (name: string, text: string) => act(world, client, 'page_type', { tabId, fingerprint: { role: 'combobox', name }, text });
  try {
    // Two "Standard": the free one and the £50 one. The dialog shows "Standard" only.
    const standard = await pick('Delivery', 'Standard');
    expect(textOf(standard.r)).toMatch(/^Error \(not-actionable\).*option-ambiguous/s);
    expect(events(world, standard.view!.requestId).slice(-2)).toEqual(['dispatched', 'refused']);
    await expect(page.locator('#delivery')).toHaveValue('');

    // "Paper" and the priced "Pa​per" look the same; the agent naming either is refused.
    for (const text of ['Paper', 'Pa\u200Bper']) {
      const wrap = await pick('Gift wrap', text);
      expect(textOf(wrap.r), JSON.stringify(text)).toMatch(/^Error \(not-actionable\).*option-ambiguous/s);
      await expect(page.locator('#wrap')).toHaveValue('none');
    }

    // An option of a disabled group: the person cannot choose it in the page, nor may the agent.
    // Nor an option the page does not show in the list (`hidden`, or display: none).
    for (const text of ['Premium cover', 'Staff cover', 'Legacy cover']) {
      const cover = await pick('Cover', text);
      expect(textOf(cover.r), text).toMatch(/^Error \(not-actionable\).*option-missing/s);
      await expect(page.locator('#cover')).toHaveValue('none');
    }

    // The store list re-rendered on focus: "Camden" is now "Croydon (collect £4)"; nothing is chosen.
    const store = await pick('Store', 'Camden');
    expect(textOf(store.r)).toMatch(/^Error \(not-actionable\).*option-changed.*option-missing.*none was chosen/s);
    expect(await page.locator('#store').evaluate((s) => (s as unknown as { selectedIndex: number }).selectedIndex)).toBe(0);

    // The Note field is moved into the "Bank transfer" form by the Name field's input handler.
    const moved = await act(world, client, 'page_fill', { tabId, fields: [
      { fingerprint: { role: 'textbox', name: 'Full name' }, text: 'Ada' },
      { fingerprint: { role: 'textbox', name: 'Note' }, text: 'Leave with neighbour' },
    ] });
    expect(textOf(moved.r)).toMatch(/^Error \(failed\).*\(tool-failed\).*field 2 changed as the fields before it were set \(target-changed: field 2 changed while it was checked\); the fields before it stay set, it and the fields after it were not set/s);
    await expect(page.locator('#fullname')).toHaveValue('Ada');
    await expect(page.locator('#transfer #note')).toHaveValue('');

    // The Nickname field is renamed "Payee reference" by the Name field's change handler.
    const renamed = await act(world, client, 'page_fill', { tabId, fields: [
      { fingerprint: { role: 'textbox', name: 'Full name' }, text: 'Ada Lovelace' },
      { fingerprint: { role: 'textbox', name: 'Nickname' }, text: 'Countess' },
    ] });
    expect(textOf(renamed.r)).toMatch(/field 2 changed as the fields before it were set \(target-changed/);
    await expect(page.locator('#fullname')).toHaveValue('Ada Lovelace');
    await expect(page.locator('#nick')).toHaveValue('');
    expect(JSON.stringify(world.receipts({ requestId: renamed.view!.requestId }))).not.toContain('Countess');

    // A field that moves itself into the "Bank transfer" form as it is focused: nothing typed.
    const instr = await act(world, client, 'page_type', { tabId, fingerprint: { role: 'textbox', name: 'Instructions' }, text: 'Pay 400 to the courier' });
    expect(textOf(instr.r)).toMatch(/^Error \(target-changed\)/);
    expect(world.receipts({ requestId: instr.view!.requestId }).find((x) => x.event === 'refused')!.detail).toMatchObject({ code: 'target-changed' });
    await expect(page.locator('#transfer #instr')).toHaveValue('');
    // In a fill, a later field that relabels itself "Payee IBAN" as it is focused: it is not set.
    const contact = await act(world, client, 'page_fill', { tabId, fields: [
      { fingerprint: { role: 'textbox', name: 'Phone' }, text: '020 7946 0000' },
      { fingerprint: { role: 'textbox', name: 'Order reference' }, text: 'HL-2291' },
    ] });
    expect(textOf(contact.r)).toMatch(/field 2: it changed as it was focused \(target-changed: field 2 changed while it was checked\); it and the fields after it were not set \(the fields before it were\)/);
    await expect(page.locator('#phone')).toHaveValue('020 7946 0000');
    await expect(page.locator('#ref')).toHaveValue('');

    // The editor inserts a private chip as typing starts: typing would replace it unseen, so nothing is typed.
    const gift = await act(world, client, 'page_type', { tabId, fingerprint: { role: 'textbox', name: 'Gift message' }, text: 'With love' });
    expect(textOf(gift.r)).toMatch(/^Error \(target-blocked\)/);
    await expect(page.locator('#gift [data-echo-private]')).toHaveText('Visa •••• 4242');
    await expect(page.locator('#gift')).toContainText('Happy birthday!');
    // The receipt says what happened, in fixed words: not that the box was private as it was focused.
    expect(world.receipts({ requestId: gift.view!.requestId }).find((x) => x.event === 'refused')!.detail).toMatchObject({ code: 'target-blocked', message: 'the editable box took a part the page marks private as typing began (its beforeinput handler), which typing would replace; nothing was typed' });

    // Choosing a question turns the Answer field into a password field: the answer is not set.
    const security = await act(world, client, 'page_fill', { tabId, fields: [
      { fingerprint: { role: 'combobox', name: 'Question' }, text: "First pet's name" },
      { fingerprint: { role: 'textbox', name: 'Answer' }, text: 'Rex' },
    ] });
    expect(textOf(security.r)).toMatch(/field 2 became a blocked surface \(password\) as the fields before it were set/);
    await expect(page.locator('#question')).toHaveValue('pet');
    await expect(page.locator('#answer')).toHaveValue('');
  } finally {
    await client.close();
  }
});
