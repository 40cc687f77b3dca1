/**
 * `page_snapshot`, the semantic snapshot (issue 10 item 2; docs/semantic-snapshot.md),
 * end to end: an MCP SDK client → the console's endpoint → the pipeline → the
 * real link (native messaging) → the extension's `semantic-read` faculty → its
 * isolated-world module in real pages (resources/hostile/snapshot/) → back,
 * with receipts. No WebMCP tool on these pages.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { test, expect, type LinkWorld } from './support/link-fixture';
import { createAgentToken } from '../support/agent-token';
import { withoutConsoleIds } from './support/console-ids';

const textOf = (r: unknown) => ((r as CallToolResult).content as Array<{ text: string }>).map((c) => c.text).join('\n');

interface Snap {
  /** The tree inside the untrusted block, without its `url` line. */
  tree: string;
  url: string;
  header: { truncated: boolean; bytes: number; maxBytes: number; refs: number; frames: { read: number; crossOrigin: number; notRead: number }; receiptId: string; documentId: string; frameId?: number };
}

async function agent(world: LinkWorld, name: string): Promise<Client> {
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(world.core.endpoint.url), { requestInit: { headers: { Authorization: `Bearer ${await createAgentToken(world.core.api)}` } } }),
  );
  return client;
}

async function call(client: Client, args: Record<string, unknown>): Promise<CallToolResult> {
  return (await client.callTool({ name: 'page_snapshot', arguments: args })) as CallToolResult;
}

async function snapshot(client: Client, args: Record<string, unknown>): Promise<Snap> {
  const r = await call(client, args);
  expect(r.isError, textOf(r)).toBeFalsy();
  const t = textOf(r);
  const header = JSON.parse(/^Snapshot of tab \d+: (\{.*\})$/m.exec(t)![1]!) as Snap['header'];
  const block = /<untrusted-page-content source="page_snapshot tab \d+ [^"]+">\n([\s\S]*)\n<\/untrusted-page-content>$/.exec(t)![1]!;
  const [first, ...rest] = block.split('\n');
  expect(first).toMatch(/^url "/);
  return { tree: rest.join('\n'), url: JSON.parse(first!.slice(4)) as string, header };
}

/** The ref at the end of the first line matching `re`. */
function refOf(tree: string, re: RegExp): string {
  const line = tree.split('\n').find((l) => re.test(l));
  expect(line, `a line matching ${re} in:\n${tree}`).toBeTruthy();
  const m = / #([a-z]+[0-9]+)$/.exec(line!);
  expect(m, `a ref on ${line}`).toBeTruthy();
  return m![1]!;
}

test('open and closed shadow roots and a same-origin iframe are inside; a cross-origin iframe is one line with its origin; no coordinates; receipted', async ({ world }) => {
  const { tabId } = await world.openShared(world.demo.at('hostile', '/hostile/snapshot/shadow-frames.html'));
  const client = await agent(world, 'snapshot-e2e');
  try {
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('page_snapshot');
    const s = await snapshot(client, { tabId });
    const t = s.tree;
    expect(t).toMatch(/^h1 "Shadow roots and frames"$/m);
    // Open shadow root, with its slotted light text in place.
    expect(t).toMatch(/^h2 "Open shadow heading"$/m);
    expect(t).toMatch(/^"Open shadow text: Slotted light text"$/m);
    expect(t).toMatch(/^button "Open shadow button" #[a-z]+\d+$/m);
    // Closed shadow root (chrome.dom.openOrClosedShadowRoot), with a field's value.
    expect(t).toMatch(/^"Closed shadow text"$/m);
    expect(t).toMatch(/^textbox "Closed field" ="closed value" #[a-z]+\d+$/m);
    expect(t).toMatch(/^link "Closed shadow link" #[a-z]+\d+$/m);
    // The same-origin iframe's document, indented under its iframe line.
    expect(t).toMatch(/^iframe "Same-origin frame" #[a-z]+\d+\n h2 "Inner frame heading"\n "Inner frame text same-origin content"\n button "Inner frame button" #[a-z]+\d+$/m);
    // The cross-origin iframe: its origin only, nothing of its content.
    expect(t).toMatch(new RegExp(`^iframe "Cross-origin frame" #[a-z]+\\d+\\n cross-origin "${world.demo.crossOrigin.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}"$`, 'm'));
    expect(t).not.toContain('CROSS-ORIGIN-CONTENT-NEVER-READ');
    expect(t).toMatch(/^"After the frames"$/m);
    expect(s.header.frames).toEqual({ read: 1, crossOrigin: 1, notRead: 0 });
    // The frame's refs carry another document tag than the top's.
    const topRef = refOf(t, /^button "Open shadow button"/);
    const frameRef = refOf(t, /^ button "Inner frame button"/);
    expect(topRef.replace(/\d+$/, '')).not.toBe(frameRef.replace(/\d+$/, ''));
    // No screen coordinates anywhere.
    expect(textOf(await call(client, { tabId }))).not.toMatch(/\b(x|y|left|top|width|height|box|bounds|rect)\s*[=:]/i);

    // Zoom into the same-origin frame's content through its iframe ref in the top document.
    const z = await snapshot(client, { tabId, ref: refOf(t, /^iframe "Same-origin frame"/) });
    expect(z.tree).toMatch(/^iframe "Same-origin frame" #[a-z]+\d+\n h2 "Inner frame heading"/);
    expect(z.tree).not.toContain('Open shadow');
    // A ref of the frame's own document answers from that document.
    const zf = await snapshot(client, { tabId, ref: frameRef });
    expect(zf.tree).toBe(`button "Inner frame button" #${frameRef}`);
    expect(zf.header.frameId).toBeGreaterThan(0);

    const trail = world.receipts({ limit: 20 }).filter((x) => x.faculty === 'semantic-read').reverse();
    expect(trail.map((x) => x.event)).toEqual(['requested', 'succeeded', 'requested', 'succeeded', 'requested', 'succeeded', 'requested', 'succeeded']);
    expect(trail[1]).toMatchObject({ tabId, operation: 'snapshot', origin: world.demo.hostileOrigin, documentId: s.header.documentId, actor: { kind: 'agent', clientName: 'snapshot-e2e' } });
    expect(trail[1]!.detail).toMatchObject({ truncated: false, frames: { read: 1, crossOrigin: 1, notRead: 0 } });
  } finally {
    await client.close();
  }
});

test('states and values of select, radio, checkbox, date and text inputs; the password form, card and one-time-code fields and the private part are blocked with no value; secrets redacted', async ({ world }) => {
  const { tabId } = await world.openShared(world.demo.at('hostile', '/hostile/snapshot/form.html'));
  const client = await agent(world, 'snapshot-form');
  try {
    const s = await snapshot(client, { tabId });
    const t = s.tree;
    expect(t).toMatch(/^form "Order" #[a-z]+\d+$/m);
    expect(t).toMatch(/^ textbox "Full name" ="Ada Lovelace" \[required\] #[a-z]+\d+$/m);
    expect(t).toMatch(/^ combobox "Size" ="Medium" #[a-z]+\d+\n  option "Small"\n  option "Medium" \[selected\]\n  option "Large"$/m);
    expect(t).toMatch(/^ group "Delivery" #[a-z]+\d+\n  radio "Post" #[a-z]+\d+\n  radio "Courier" \[checked\] #[a-z]+\d+$/m);
    expect(t).toMatch(/^ checkbox "Gift wrap" \[checked\] #[a-z]+\d+$/m);
    expect(t).toMatch(/^ textbox:date "Delivery date" ="2026-12-24" #[a-z]+\d+$/m);
    expect(t).toMatch(/^ group #[a-z]+\d+\n  button "More options" \[collapsed\] #[a-z]+\d+$/m);
    expect(t).not.toContain('Hidden option text');
    expect(t).toMatch(/^ button "Show coupons" \[collapsed\] #[a-z]+\d+$/m);
    expect(t).toMatch(/^ button "Place order" \[disabled\] #[a-z]+\d+$/m);
    // A likely secret in a field's value is redacted (src/shared/redact.ts), the rest kept.
    expect(t).toMatch(/^ textbox "Notes" ="Leave it with \[redacted:[^\]]+\] at the door" #[a-z]+\d+$/m);
    expect(t).not.toContain('ghp_A1b2');
    // Card and one-time-code fields: blocked, no value, no ref.
    expect(t).toMatch(/^ textbox "Card number" \[blocked\]$/m);
    expect(t).toMatch(/^ textbox "Code from SMS" \[blocked\]$/m);
    expect(withoutConsoleIds(t)).not.toContain('4111'); // not in a random id or hash (support/console-ids.ts)
    expect(withoutConsoleIds(t)).not.toContain('918273');
    // The form holding a password: the form and every field blocked, no values, no refs.
    expect(t).toMatch(/^form "Sign in" \[blocked\]\n textbox "Email" \[blocked\]\n textbox:password "Password" \[blocked\]\n button "Sign in" \[blocked\]$/m);
    expect(t).not.toContain('alice@example.com');
    expect(t).not.toContain('hunter2');
    // The page's private part: one line, its role only.
    expect(t).toMatch(/^region \[blocked private\]$/m);
    expect(t).not.toContain('PRIVATE-12345');
    expect(t).not.toContain('private-field-value');
    expect(t).not.toContain('Balance');
    // Nor does it name anything else (aria-labelledby pointing into it gives no name).
    expect(t).toMatch(/^button "Show" #[a-z]+\d+$/m);
    // A colour input is a typed field; a number input's role says its type; grid items' words stay apart.
    expect(t).toMatch(/^textbox:color "Badge colour" ="#3366cc" #[a-z]+\d+$/m);
    expect(t).toMatch(/^spinbutton "Count" ="3" #[a-z]+\d+$/m);
    expect(t).toMatch(/^"Grid left Grid right"$/m);
    // A heading inside a link keeps its line (the link's name already holds its text).
    expect(t).toMatch(/^link "Card heading with more words" #[a-z]+\d+\n h3 "Card heading"$/m);
    // The person types a password: still never shown.
    const page = world.context.pages().find((p) => p.url().includes('/snapshot/form.html'))!;
    await page.locator('#login input[type=password]').fill('typed-Secret-777');
    await page.locator('input[name=name]').fill('Grace Hopper');
    const again = await snapshot(client, { tabId });
    expect(again.tree).not.toContain('typed-Secret-777');
    expect(again.tree).toMatch(/^ textbox "Full name" ="Grace Hopper" \[required focused\] #[a-z]+\d+$/m);
    // The same element keeps its ref across snapshots.
    expect(refOf(again.tree, /^ checkbox "Gift wrap"/)).toBe(refOf(t, /^ checkbox "Gift wrap"/));
    // No password anywhere in the receipts either.
    expect(JSON.stringify(world.receipts({ limit: 20 }))).not.toMatch(/hunter2|typed-Secret/);
  } finally {
    await client.close();
  }
});

test('a byte budget cuts with the marker naming refs to zoom into; zooming by ref shows the rest', async ({ world }) => {
  const { tabId } = await world.openShared(world.demo.at('hostile', '/hostile/snapshot/long.html'));
  const client = await agent(world, 'snapshot-budget');
  try {
    const whole = await snapshot(client, { tabId });
    expect(whole.header.truncated).toBe(false);
    expect(whole.tree).toContain('"Article 3 paragraph 60: some words to read."');
    expect(whole.tree).not.toMatch(/^\[truncated/m);

    const cut = await snapshot(client, { tabId, maxBytes: 1024 });
    expect(cut.header).toMatchObject({ truncated: true, maxBytes: 1024 });
    expect(cut.header.bytes).toBeLessThanOrEqual(1024);
    expect(Buffer.byteLength(cut.tree)).toBeLessThanOrEqual(1024);
    const marker = cut.tree.split('\n').at(-1)!;
    expect(marker).toMatch(/^\[truncated: the snapshot holds more than 1024 bytes; zoom into ([a-z]+\d+)(, [a-z]+\d+)* /);
    expect(cut.tree).not.toContain('Article 1 paragraph 60');
    // Every line before the marker is whole, and each is a line of the whole snapshot.
    for (const l of cut.tree.split('\n').slice(0, -1)) expect(whole.tree.split('\n')).toContain(l);
    const article1 = refOf(whole.tree, /^ article "Article 1"/);
    expect(marker).toContain(article1);

    const zoom = await snapshot(client, { tabId, ref: article1 });
    expect(zoom.header.truncated).toBe(false);
    expect(zoom.tree.split('\n')[0]).toBe(`article "Article 1" #${article1}`);
    expect(zoom.tree).toContain('"Article 1 paragraph 60: some words to read."');
    expect(zoom.tree).not.toContain('Article 2');
  } finally {
    await client.close();
  }
});

test('a ref whose element left the DOM is ref-stale; a ref from the previous document is navigated; refs are never reused', async ({ world }) => {
  const { page, tabId } = await world.openShared(world.demo.at('hostile', '/hostile/snapshot/form.html'));
  const client = await agent(world, 'snapshot-refs');
  try {
    const s = await snapshot(client, { tabId });
    const removeRef = refOf(s.tree, /^button "Remove me"/);
    const keptRef = refOf(s.tree, /^link "Go to the frames page"/);
    await page.locator('#removable').evaluate((el: { remove(): void }) => el.remove());
    const stale = await call(client, { tabId, ref: removeRef });
    expect(stale.isError).toBe(true);
    expect(textOf(stale)).toMatch(/^Error \(ref-stale\)/);
    expect(world.receipts({ limit: 1 })[0]).toMatchObject({ faculty: 'semantic-read', event: 'failed', detail: { error: { code: 'ref-stale' } } });
    // A ref that was never handed out.
    const unknown = await call(client, { tabId, ref: 'zzzzz1' });
    expect(textOf(unknown)).toMatch(/^Error \(ref-unknown\)/);
    // The element still in the page zooms fine.
    expect((await snapshot(client, { tabId, ref: keptRef })).tree).toBe(`link "Go to the frames page" #${keptRef}`);

    // A navigation to another document of the shared origin: the old refs are from an earlier document.
    await page.goto(world.demo.at('hostile', '/hostile/snapshot/form.html?again=1'));
    await page.locator('html[data-ready="true"]').waitFor({ state: 'attached' });
    await expect.poll(() => world.core.broker.getSharedTabs().find((x) => x.tabId === tabId)?.documentId).not.toBe(s.header.documentId);
    const nav = await call(client, { tabId, ref: keptRef });
    expect(nav.isError).toBe(true);
    expect(textOf(nav)).toMatch(/^Error \(navigated\)/);
    // The same page again: the same element gets a ref of a new document tag, never an old ref.
    const fresh = await snapshot(client, { tabId });
    const newRef = refOf(fresh.tree, /^link "Go to the frames page"/);
    expect(newRef).not.toBe(keptRef);
    expect(newRef.replace(/\d+$/, '')).not.toBe(keptRef.replace(/\d+$/, ''));
    const oldRefs = new Set([...s.tree.matchAll(/#([a-z]+\d+)$/gm)].map((m) => m[1]));
    for (const m of fresh.tree.matchAll(/#([a-z]+\d+)$/gm)) expect(oldRefs.has(m[1])).toBe(false);

    // An unshared tab is refused.
    await world.core.api.unshareTab({ tabId });
    expect(textOf(await call(client, { tabId }))).toMatch(/^Error \(tab-not-shared\)/);
  } finally {
    await client.close();
  }
});
