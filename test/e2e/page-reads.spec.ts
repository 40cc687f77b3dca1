/**
 * page_extract, page_wait and page_verify (docs/semantic-reads.md) end to end:
 * an MCP SDK client → the console's endpoint → the pipeline → the real link →
 * the extension's `semantic-read` faculty → the `semantic` module in a real
 * page (resources/hostile/reads/reads.html, no WebMCP tools) → back, with
 * receipts. One page load; each check fails if its rule broke.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { test, expect } from './support/link-fixture';
import { createAgentToken } from '../support/agent-token';
import { withoutConsoleIds } from './support/console-ids';

const textOf = (r: unknown) => ((r as CallToolResult).content as Array<{ text: string }>).map((c) => c.text).join('\n');

interface Match { ref?: string; role?: string; tag: string; name?: string; value?: string; states?: string[]; text: string }

test('extract by selector and ref, wait for added text and a pushState URL, verify states; attribute selectors, redacted values and blocked fields refused or never matched; receipted', async ({ world }) => {
  const { page, tabId } = await world.openShared(world.demo.at('hostile', '/hostile/reads/reads.html'));
  const client = new Client({ name: 'reads-e2e', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(world.core.endpoint.url), { requestInit: { headers: { Authorization: `Bearer ${await createAgentToken(world.core.api)}` } } }),
  );
  // More calls than the token's burst (20): a rate-limited call is made again when the console says.
  const call = async (name: string, args: Record<string, unknown>): Promise<CallToolResult> => {
    for (;;) {
      const r = (await client.callTool({ name, arguments: { tabId, ...args } })) as CallToolResult;
      const limited = r.isError ? /^Error \(rate-limited\):.* Try again in (\d+) ms/.exec(textOf(r)) : null;
      if (!limited) return r;
      await new Promise((res) => setTimeout(res, Number(limited[1]) + 20));
    }
  };
  const extract = async (args: Record<string, unknown>) => {
    const r = await call('page_extract', args);
    expect(r.isError, textOf(r)).toBeFalsy();
    const t = textOf(r);
    const header = JSON.parse(/^Extract of tab \d+: (\{.*\})$/m.exec(t)![1]!) as { count: number; more: boolean; truncated: boolean; frameId: number };
    const block = /<untrusted-page-content source="page_extract tab \d+ [^"]+">\n([\s\S]*)\n<\/untrusted-page-content>$/.exec(t)![1]!;
    const [url, ...lines] = block.split('\n');
    expect(url).toMatch(/^url "http:\/\/.*\/hostile\/reads\/reads\.html"$/);
    return { header, matches: lines.map((l) => JSON.parse(l) as Match), all: t };
  };
  const check = async (name: 'page_wait' | 'page_verify', args: Record<string, unknown>) => {
    const r = await call(name, args);
    expect(r.isError, textOf(r)).toBeFalsy();
    const t = textOf(r);
    const header = JSON.parse(/^(?:Wait|Verify) on tab \d+: the condition (?:holds|does not hold)\. (\{.*\})$/m.exec(t)![1]!) as { met: boolean; elapsedMs: number };
    const block = /<untrusted-page-content source="page_(?:wait|verify) tab \d+ [^"]+">\n([\s\S]*)\n<\/untrusted-page-content>$/.exec(t)![1]!;
    return { ...header, evidence: (JSON.parse(block) as { evidence: Record<string, unknown> }).evidence, all: t };
  };
  const failure = async (name: string, args: Record<string, unknown>) => {
    const r = await call(name, args);
    expect(r.isError, textOf(r)).toBe(true);
    return textOf(r);
  };
  const outputs: string[] = [];
  // The framed private-body document is read by the snapshot below: wait for it to load.
  await page.locator('#privframe').contentFrame().locator('button').waitFor({ state: 'attached' });
  try {
    // Extract by selector: the three shown products (not the hidden one), their text, the token inside redacted.
    const products = await extract({ selector: 'li.product' });
    outputs.push(products.all);
    expect(products.header).toMatchObject({ count: 3, more: false, truncated: false, frameId: 0 });
    expect(products.matches.map((m) => m.text.split('\n')[0])).toEqual(['h2 Kettle', 'h2 Teapot', 'h2 Mug']);
    expect(products.matches[1]!.text).toContain('EUR 25');
    expect(products.matches[1]!.text).toMatch(/Gift code \[redacted:[^\]]+\] inside/);
    expect(products.all).not.toContain('ghp_A1b2');
    expect(products.all).not.toContain('Hidden spoon');
    const prices = await extract({ selector: '#products .price' });
    expect(prices.matches.map((m) => m.text)).toEqual(['EUR 30', 'EUR 25', 'EUR 8']);

    // Selectors follow the composed tree into a closed shadow root.
    expect((await extract({ selector: '#host .shadow-note' })).matches.map((m) => m.text)).toEqual(['Shadow note']);
    const shadowButton = await extract({ selector: '#host > :role(button):name("shadow")' });
    expect(shadowButton.matches).toMatchObject([{ role: 'button', name: 'Shadow button', ref: expect.stringMatching(/^[a-z]+\d+$/) }]);

    // Extract by a ref from page_snapshot: the order form's names and values, the blocked fields without theirs.
    const snap = textOf(await call('page_snapshot', {}));
    const formRef = /^form "Order" #([a-z]+\d+)$/m.exec(snap)![1]!;
    const giftRef = /checkbox "Gift wrap" \[checked\] #([a-z]+\d+)$/m.exec(snap)![1]!;
    const referenceRef = /textbox "Reference" =.* #([a-z]+\d+)$/m.exec(snap)![1]!;
    const order = await extract({ ref: formRef });
    outputs.push(order.all);
    expect(order.matches).toHaveLength(1);
    expect(order.matches[0]).toMatchObject({ ref: formRef, role: 'form', name: 'Order', tag: 'form' });
    expect(order.matches[0]!.text).toContain('textbox Full name = Ada Lovelace');
    expect(order.matches[0]!.text).toMatch(/textbox Reference = \[redacted:[^\]]+\]/);
    expect(order.matches[0]!.text).toContain('textbox Card number');

    // Blocked surfaces never match: password field, card and OTP fields, the password form, the private part.
    // (One selector list of eight alternatives: any one matching fails the count.)
    expect((await extract({ selector: '#pw, #card, #otp, form#login, #login button, #vault, #vault p, :type(password)' })).header.count).toBe(0);
    expect((await extract({ selector: '#name, #pw' })).matches.map((m) => m.name)).toEqual(['Full name']);
    const inputs = await extract({ selector: 'input' });
    outputs.push(inputs.all);
    expect(inputs.matches.map((m) => m.name)).toEqual(['Full name', 'Reference', 'Gift wrap']);
    const forms = await extract({ selector: 'form' });
    expect(forms.matches.map((m) => m.name)).toEqual(['Order']);
    expect((await check('page_verify', { selector: '#pw', state: 'present' })).met).toBe(false);
    expect((await check('page_verify', { selector: '#card', state: 'value-present' })).met).toBe(false);
    expect((await check('page_verify', { text: 'PRIVATE-12345' })).met).toBe(false);

    // Review finding 1: only elements that own a line of the snapshot match, so an inline part (code, span) is never
    // read out of the line the redactor judged; the line itself reads redacted (a label and its secret, card groups).
    expect((await extract({ selector: '#attacks code, #attacks span, #pwline > *, #cardline *' })).header.count).toBe(0);
    const lines = await extract({ selector: '#pwline, #cardline' });
    outputs.push(lines.all);
    expect(lines.matches.map((m) => m.text)).toEqual(['Password: [redacted:password]', '[redacted:card]']);
    const codeVerify = await call('page_verify', { selector: 'code', text: 's' });
    outputs.push(textOf(codeVerify));
    expect(textOf(codeVerify)).not.toContain('swordfish9');
    // Finding 3: :name() and extract give no name where the view prints none (a paragraph's title is never shown).
    expect((await extract({ selector: 'p:name("de893"), #attacks *:name("3704")' })).header.count).toBe(0);
    expect((await extract({ selector: '#ibanp' })).matches).toEqual([{ tag: 'p', text: 'IBAN DE89 •••• 3000' }]);
    // Finding 4: a framed document whose <body> is private is one private line in the snapshot: no text, no ref.
    expect(snap).toMatch(/^iframe "Private frame" #[a-z]+\d+\n generic \[blocked private\]$/m);
    for (const secret of ['BODYPRIV', 'Frame button']) expect(snap).not.toContain(secret);

    // Finding 5: one node budget per request: `*:text()` over a deep page (290,000 element visits) is cut, not walked whole.
    await page.evaluate(() => (globalThis as unknown as { buildDeep(): void }).buildDeep());
    expect((await extract({ selector: '#deep *:text("nowhere")' })).header).toMatchObject({ count: 0, truncated: true });
    await page.evaluate(() => (globalThis as unknown as { dropDeep(): void }).dropDeep());
    // A page runs at most four waits at once: a fifth is refused at once (the first answer), the four end when the text appears.
    const waits = Array.from({ length: 5 }, () => call('page_wait', { text: 'Waits released', timeoutMs: 10_000 }).then(textOf));
    expect(await Promise.race(waits)).toMatch(/^Error \(too-many-waits\)/);
    await page.evaluate(() => (globalThis as unknown as { releaseWaits(): void }).releaseWaits());
    const ended = await Promise.all(waits);
    expect(ended.filter((t) => t.startsWith('Error (too-many-waits)'))).toHaveLength(1);
    expect(ended.filter((t) => /the condition holds/.test(t))).toHaveLength(4);

    // Finding 6: ids and classes inside a password form (a rules checklist's `li.valid`) or around a password field are not matched; its text is.
    expect((await extract({ selector: 'li.valid, .rules li, ul.rules, #login li, .pw-box, div.strong' })).header.count).toBe(0);
    expect((await extract({ selector: 'li:text("20 characters")' })).header.count).toBe(1);
    // A design-system button of the password form, its <button> in a closed shadow root (no .form): blocked too; the shadow button outside a form is not.
    expect((await extract({ selector: 'button:text("Shadow sign in"), x-submit button' })).header.count).toBe(0);
    expect((await extract({ selector: 'button:text("Shadow button")' })).header.count).toBe(1);

    // Attribute selectors are refused, whatever the attribute.
    for (const selector of ['input[value^=4]', '[href]', 'input[type=password]']) {
      expect(await failure('page_extract', { selector })).toMatch(/^Error \(selector-refused\): .*attribute selectors are not allowed/);
    }
    expect(await failure('page_verify', { selector: '#name[value="Ada"]', state: 'present' })).toMatch(/attribute selectors are not allowed/);

    // Reads are no oracle: a value the view redacts is refused, never true or false; so is a needle the redactor hides.
    expect(await failure('page_verify', { ref: referenceRef, valueContains: '4' })).toMatch(/^Error \(value-redacted\)/);
    expect(await failure('page_verify', { selector: '#reference', valueEquals: '4' })).toMatch(/^Error \(value-redacted\)/);
    expect(await failure('page_verify', { selector: '#name', valueEquals: '4111 1111 1111 1111' })).toMatch(/^Error \(condition-redacted\)/);
    expect(await failure('page_wait', { text: 'ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8', timeoutMs: 100 })).toMatch(/^Error \(condition-redacted\)/);
    // A value the view shows is verified, with evidence.
    const name = await check('page_verify', { selector: '#name', valueEquals: 'Ada Lovelace' });
    expect(name).toMatchObject({ met: true, evidence: { value: 'Ada Lovelace' } });
    expect((await check('page_verify', { ref: giftRef, state: 'checked' })).met).toBe(true);
    expect((await check('page_verify', { ref: giftRef, state: 'unchecked' })).met).toBe(false);
    expect(await failure('page_verify', { selector: 'li.product', state: 'checked' })).toMatch(/^Error \(target-ambiguous\)/);

    // Wait for text the page adds later: absent first, then present once the page adds it.
    expect((await check('page_verify', { text: 'Results loaded' })).met).toBe(false);
    const waitText = check('page_wait', { text: 'Results loaded', timeoutMs: 20_000 });
    await page.evaluate(() => setTimeout(() => (globalThis as unknown as { loadResults(): void }).loadResults(), 200));
    const gotText = await waitText;
    expect(gotText.met).toBe(true);
    expect(gotText.evidence).toEqual({ found: 'Results loaded: 3 items' });
    expect(gotText.elapsedMs).toBeGreaterThan(0);

    // Wait for a same-document URL change (pushState).
    const waitUrl = check('page_wait', { urlChanged: true, timeoutMs: 20_000 });
    await page.evaluate(() => setTimeout(() => (globalThis as unknown as { goStep2(): void }).goStep2(), 200));
    const gotUrl = await waitUrl;
    expect(gotUrl.met).toBe(true);
    expect(gotUrl.evidence.url).toMatch(/\/hostile\/reads\/reads\.html\?step=2$/);
    expect(gotUrl.evidence.startUrl).toMatch(/\/hostile\/reads\/reads\.html$/);
    expect((await check('page_verify', { urlContains: 'step=2' })).met).toBe(true);

    // A condition that never holds ends at its bound, as an error.
    expect(await failure('page_wait', { text: 'Never shown', timeoutMs: 300 })).toMatch(/^Error \(wait-timeout\): .*the condition \(text\) did not hold within 300 ms/);

    // Last finding: a blocked field's line shows no states (`invalid` would tell whether the typed password meets minlength).
    await page.fill('#pw', 'short');
    await page.press('#pw', 'Tab');
    await expect(page.locator('#pw:user-invalid')).toHaveCount(1);
    expect(textOf(await call('page_snapshot', {}))).toMatch(/^ textbox:password "Password" \[blocked\]$/m);

    // Nothing secret in any answer, nor in the receipts; every read receipted with its operation.
    // Receipt UUIDs, documentIds and hashes are left out of the check: a random one may hold "4242".
    for (const t of outputs) for (const secret of ['hunter2', '5555 5555', '918273', 'PRIVATE-12345', '4111 1111', 'swordfish9', '4242', 'DE8937']) expect(withoutConsoleIds(t)).not.toContain(secret);
    const receipts = world.core.ledger.query({ limit: 200 }).receipts.filter((x) => x.faculty === 'semantic-read');
    const ops = new Set(receipts.map((x) => `${x.operation}:${x.event}`));
    for (const e of ['extract:succeeded', 'verify:succeeded', 'wait:succeeded', 'verify:failed', 'wait:failed', 'extract:failed']) expect(ops, e).toContain(e);
    const ledgerText = JSON.stringify(receipts);
    for (const secret of ['hunter2', '5555 5555', '918273', 'PRIVATE-12345', 'ghp_A1b2']) expect(withoutConsoleIds(ledgerText)).not.toContain(secret);
  } finally {
    await client.close();
  }
});
