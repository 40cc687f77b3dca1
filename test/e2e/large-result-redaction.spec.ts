/**
 * Redaction at any size (issue 8 item 6), end to end through the console's pipeline, the real
 * link and the real extension on resources/hostile/large-result.html: `export_account` answers
 * ~800 KiB of JSON whose secrets sit under a ~600 KiB session object and 30 levels deep in
 * settings, past the 512 KiB where the content module used to cut (which broke the JSON and left
 * only the plain-text rules). The agent receives none of the secrets and every ordinary value:
 * order numbers, UUIDs, SHA-256 digests, share links, the data: thumbnail.
 */
import { test, expect, approveView, askInvoke } from './support/link-fixture';


interface PageRecord {
  secrets: Record<string, string>;
  text: string;
  ordinary: { shareLink: string; orders: Array<Record<string, unknown>>; thumbnail: string; footer: string };
}

test('a result over 512 KiB with secrets nested deep: the agent receives none of them, and the ordinary content whole', async ({ world }) => {
  const { page, tabId } = await world.openShared(`${world.demo.hostileOrigin}/hostile/large-result.html`);
  const rec = await page.evaluate(() => (globalThis as unknown as { __largeResult: PageRecord }).__largeResult);
  const size = new TextEncoder().encode(rec.text).length;
  expect(size).toBeGreaterThan(700 * 1024);
  // Where each secret sits in what the page returns: past 512 KiB, or inside an object opened before it.
  expect(rec.text.indexOf(rec.secrets.githubToken as string)).toBeGreaterThan(512 * 1024);
  expect(rec.text.indexOf(rec.secrets.sessionId as string)).toBeLessThan(1024);

  const { pending, view } = await askInvoke(world, tabId, 'export_account', {}, 'redaction-e2e');
  await approveView(world, view);
  const a = await pending;
  if (!a.ok) throw new Error(`${a.error.code}: ${a.error.message}`);
  expect(a.value).toMatchObject({ outcome: 'succeeded', redacted: true, truncated: false });
  const text = a.value.result ?? '';

  // None of the secrets, nor any recognisable piece of one.
  for (const [name, secret] of Object.entries(rec.secrets)) {
    expect(text.includes(secret), `${name} reached the agent`).toBe(false);
    expect(text.includes(secret.slice(-12)), `the end of ${name} reached the agent`).toBe(false);
  }
  // The ordinary content, value for value; the hidden parts as markers where they were.
  const out = JSON.parse(text) as Record<string, unknown>;
  expect((out.account as Record<string, unknown>).shareLink).toBe(rec.ordinary.shareLink);
  expect(out.session).toBe('[redacted:session]');
  expect(out.orders).toEqual(rec.ordinary.orders);
  expect(out.thumbnail).toBe(rec.ordinary.thumbnail);
  expect(out.footer).toBe(rec.ordinary.footer);
  let settings = out.settings as Record<string, unknown>;
  for (let d = 29; d >= 0; d--) settings = settings[`group${d}`] as Record<string, unknown>;
  expect(settings).toEqual({
    profile: { displayName: 'Ann Example', language: 'en-GB' },
    integrations: {
      github: { connected: true, auth: { token: '[redacted:token]', scopes: ['repo'] } },
      smtp: { host: 'smtp.example.com', port: 587, password: '[redacted:password]' },
      webhooks: [{ url: 'https://example.com/hooks/orders', headers: [{ value: '[redacted:authorization]', name: 'Authorization' }, { name: 'Accept', value: 'application/json' }] }],
      billing: { cardOnFile: '[redacted:card]', brand: 'visa' },
      recovery: { codes: { primary: { secret: '[redacted:secret]' } } },
    },
  });

  // The receipt records the page's size and the flags, never the text.
  const receipt = world.receipts({ requestId: a.requestId }).find((r) => r.event === 'succeeded');
  expect(receipt?.detail).toMatchObject({ resultBytes: size, redacted: true, truncated: false });
  const ledger = JSON.stringify(world.receipts({}));
  for (const secret of Object.values(rec.secrets)) expect(ledger.includes(secret)).toBe(false);
});
