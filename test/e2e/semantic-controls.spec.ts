/**
 * The semantic mutations (issue 10 items 1–7; docs/semantic-controls.md) end to end: an MCP SDK
 * client → the console's endpoint → the pipeline (approval through the console API, as the person)
 * → the real link → the extension's `semantic-target` and `semantic` faculties → the `semantic`
 * content module in real pages (resources/hostile/semantic/, no WebMCP tool except ladder.html's
 * form) → back, with receipts. Each test checks several things on one page load.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Page, Worker } from '@playwright/test';
import { test, expect, type LinkWorld } from './support/link-fixture';
import { act, agent, events, header, refOf, textOf, urlHashOf } from './support/semantic-agent';
import type { ApprovalView, SemanticTargetSubject } from '../../src/shared/ipc';
import { argumentsHash } from '../../src/shared/canonical';
import { LIMITS } from '../../src/shared/limits';
import { createHash } from 'node:crypto';
import { cropBox, type Box } from '../../src/shared/semantic-picture';

/** The intersection of two boxes, or null. */
function intersect(a: Box, b: Box): Box | null {
  const x = Math.max(a.x, b.x);
  const y = Math.max(a.y, b.y);
  const w = Math.min(a.x + a.w, b.x + b.w) - x;
  const h = Math.min(a.y + a.h, b.y + b.h) - y;
  return w > 0 && h > 0 ? { x, y, w, h } : null;
}

/** The picture of the approval `view`: shown by hash, fetched by that hash, its bytes hashing to it, its hash in the `approval-shown` receipt. */
async function pictureOf(world: LinkWorld, view: ApprovalView): Promise<{ png: string; width: number; height: number }> {
  const p = (view.subject as SemanticTargetSubject).picture;
  expect(p, 'a picture was taken').toMatchObject({ status: 'captured' });
  const sha256 = (p as { sha256: string }).sha256;
  const got = await world.core.api.getTargetPicture({ sha256 });
  expect(got.ok).toBe(true);
  const v = (got as { value: { png: string; width: number; height: number } }).value;
  expect(createHash('sha256').update(Buffer.from(v.png, 'base64')).digest('hex')).toBe(sha256);
  expect(v).toMatchObject({ width: (p as { width: number }).width, height: (p as { height: number }).height });
  const shown = world.receipts({ requestId: view.requestId }).find((x) => x.event === 'approval-shown')!;
  expect(shown.detail).toMatchObject({ picture: { status: 'captured', sha256 } });
  expect(JSON.stringify(shown.detail)).not.toContain(v.png.slice(0, 64)); // the receipt holds the hash, never the picture
  return v;
}

/** The checkbox's and the password field's boxes and the viewport, CSS px, as the page lays them out now. */
async function boxesOf(page: Page): Promise<{ target: Box; password: Box; viewport: { w: number; h: number } }> {
  return page.evaluate(() => {
    const w = globalThis as unknown as { innerWidth: number; innerHeight: number; document: { querySelector(s: string): { getBoundingClientRect(): { left: number; top: number; width: number; height: number } } } };
    const box = (sel: string) => {
      const r = w.document.querySelector(sel).getBoundingClientRect();
      return { x: r.left, y: r.top, w: r.width, h: r.height };
    };
    return { target: box('#news'), password: box('#login input[type=password]'), viewport: { w: w.innerWidth, h: w.innerHeight } };
  });
}

/**
 * Decode the PNG in the extension's service worker (no extra tab: that would change which tab is
 * active) and count: the share of black pixels inside `pw` (shrunk by 1 px), and magenta outline
 * pixels around `target`.
 */
async function samplePixels(worker: Worker, png: string, pw: Box, target: Box): Promise<{ passwordBlack: number; passwordPixels: number; outlinePixels: number }> {
  return worker.evaluate(
    async ([src, a, t]) => {
      const bytes = Uint8Array.from(atob(src), (ch) => ch.charCodeAt(0));
      // The worker's canvas API (this file's typecheck has no DOM lib).
      type Ctx = { drawImage(b: unknown, x: number, y: number): void; getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray } };
      const g = globalThis as unknown as {
        createImageBitmap(b: Blob): Promise<{ width: number; height: number }>;
        OffscreenCanvas: new (w: number, h: number) => { width: number; height: number; getContext(k: '2d'): Ctx | null };
      };
      const bmp = await g.createImageBitmap(new Blob([bytes], { type: 'image/png' }));
      const c = new g.OffscreenCanvas(bmp.width, bmp.height);
      const ctx = c.getContext('2d')!;
      ctx.drawImage(bmp, 0, 0);
      const d = ctx.getImageData(0, 0, c.width, c.height).data;
      const at = (x: number, y: number) => d.subarray((y * c.width + x) * 4, (y * c.width + x) * 4 + 4);
      let n = 0;
      let black = 0;
      for (let y = Math.ceil(a.y + 1); y < Math.floor(a.y + a.h - 1); y++)
        for (let x = Math.ceil(a.x + 1); x < Math.floor(a.x + a.w - 1); x++) {
          if (x < 0 || y < 0 || x >= c.width || y >= c.height) continue;
          const p = at(x, y);
          n++;
          if (p[0]! < 8 && p[1]! < 8 && p[2]! < 8) black++;
        }
      let outline = 0;
      for (let y = Math.max(0, Math.floor(t.y - 12)); y < Math.min(c.height, t.y + t.h + 12); y++)
        for (let x = Math.max(0, Math.floor(t.x - 12)); x < Math.min(c.width, t.x + t.w + 12); x++) {
          const p = at(x, y);
          if (Math.abs(p[0]! - 0xd6) < 24 && p[1]! < 40 && Math.abs(p[2]! - 0x7a) < 24) outline++;
        }
      return { passwordBlack: n ? black / n : 0, passwordPixels: n, outlinePixels: outline };
    },
    [png, pw, target] as const,
  );
}

const clicks = (page: Page, label: string) => page.evaluate((l) => ((globalThis as unknown as { __clicks: Record<string, number> }).__clicks[l] ?? 0), label);

test('an overlay covers the button: target-covered names it; closing it by a click, then the click works, each confirmed by readback with receipts; a stale ref; a disabled button is not actionable; blocked surfaces are never shown to the person', async ({ world }) => {
  const { page, tabId } = await world.openShared(world.demo.at('hostile', '/hostile/semantic/controls.html'));
  const client = await agent(world);
  try {
    const buy = await refOf(client, tabId, /^button "Buy tea"/);

    // 1. The banner covers "Buy tea": refused after approval, right before the events, naming the cover with a ref.
    const covered = await act(world, client, 'page_click', { tabId, ref: buy });
    expect(covered.r.isError).toBe(true);
    const coveredText = textOf(covered.r);
    expect(coveredText).toMatch(/^Error \(target-covered\)/);
    expect(coveredText).toMatch(/<untrusted-page-content[^>]*>\n\{"role":"dialog","name":"Cookie banner","ref":"[a-z]+\d+"\}/);
    expect(await clicks(page, 'buy')).toBe(0);
    // What the person reviewed: the operation, the target's fingerprint and its hash, no picture, synthetic events.
    const s = covered.view!.subject as SemanticTargetSubject;
    expect(covered.view).toMatchObject({ faculty: 'semantic', operation: 'click', kind: 'mutation', subjectHash: s.fingerprintHash });
    expect(s).toMatchObject({ type: 'semantic-target', operation: 'click', ref: buy, trustedInput: false, fingerprint: { role: 'button', name: 'Buy tea', nth: 0 } });
    // The picture was taken (the tab is its window's active tab and the button is in view), kept by hash.
    const coveredPicture = await pictureOf(world, covered.view!);
    expect(coveredPicture.width).toBeGreaterThan(0);
    expect(s.fingerprint.ancestors).toEqual([{ role: 'region', name: 'Offer' }, { role: 'main', name: 'Shop' }]);
    expect(events(world, covered.view!.requestId)).toEqual(['requested', 'validated', 'approval-shown', 'approved', 'dispatched', 'refused']);

    // 2. Close the banner with a click: the readback sees the banner (and the target) go.
    const close = await refOf(client, tabId, /^button "Close banner"/);
    const closed = await act(world, client, 'page_click', { tabId, ref: close });
    expect(closed.r.isError, textOf(closed.r)).toBeFalsy();
    expect(header(closed.r)).toMatchObject({ outcome: 'succeeded', operation: 'click', trustedInput: false, readback: 'confirmed', effect: 'target-removed-or-changed' });
    await expect(page.locator('#banner')).toHaveCount(0);

    // 3. Now the same ref clicks through; evidence with role, name, fingerprint hash, frame, document, stripped URL; no coordinates.
    const bought = await act(world, client, 'page_click', { tabId, ref: buy });
    expect(bought.r.isError, textOf(bought.r)).toBeFalsy();
    expect(header(bought.r)).toMatchObject({ outcome: 'succeeded', trustedInput: false, readback: 'confirmed', effect: 'dom-changed-near-target' });
    const evidence = JSON.parse(/<untrusted-page-content[^>]*>\n([\s\S]*?)\n<\/untrusted-page-content>/.exec(textOf(bought.r))![1]!) as Record<string, unknown>;
    expect(evidence).toMatchObject({ role: 'button', name: 'Buy tea', fingerprintHash: s.fingerprintHash, frameId: 0, documentId: covered.view!.documentId });
    expect(evidence.url).toMatch(/\/hostile\/semantic\/controls\.html$/);
    expect(textOf(bought.r)).not.toMatch(/clientX|clientY|"x"|"y"|left|top|width|height/);
    expect(await clicks(page, 'buy')).toBe(1);
    await expect(page.locator('#status')).toHaveText('bought 1');
    const rid = header(bought.r).requestId as string;
    expect(events(world, rid)).toEqual(['requested', 'validated', 'approval-shown', 'approved', 'dispatched', 'readback-confirmed', 'succeeded']);
    expect(world.receipts({ requestId: rid }).find((x) => x.event === 'readback-confirmed')!.detail).toMatchObject({ effect: 'dom-changed-near-target' });

    // 4. A stale ref (the banner's button left the page): refused before the person is asked.
    const stale = await act(world, client, 'page_click', { tabId, ref: close }, { expectDialog: false });
    expect(textOf(stale.r)).toMatch(/^Error \(ref-stale\)/);

    // 5. A checkbox by fingerprint: the readback sees it checked. Its picture: cropped around it, the
    // checkbox outlined, the sign-in form's password field (inside the crop) painted black.
    await page.locator('#login input[type=password]').fill('hunter2-secret');
    await page.locator('#login input[type=password]').evaluate((el) => ((el as unknown as { style: { background: string } }).style.background = '#00ff00'));
    let where: Awaited<ReturnType<typeof boxesOf>> | null = null;
    const news = await act(world, client, 'page_click', { tabId, fingerprint: { role: 'checkbox', name: 'Send me news' } }, { beforeApprove: async () => void (where = await boxesOf(page)) });
    const newsPicture = await pictureOf(world, news.view!);
    const crop = cropBox(where!.target, where!.viewport);
    expect(newsPicture.width / crop.w).toBeCloseTo(newsPicture.height / crop.h, 1);
    const k = newsPicture.width / crop.w;
    const inPicture = (b: Box): Box => ({ x: (b.x - crop.x) * k, y: (b.y - crop.y) * k, w: b.w * k, h: b.h * k });
    const pw = intersect(where!.password, crop);
    expect(pw, 'the password field lies inside the crop').not.toBeNull();
    const px = await samplePixels(await world.worker(), newsPicture.png, inPicture(pw!), inPicture(where!.target));
    expect(px.passwordBlack).toBe(1); // every pixel of the password field is black: no green, no dots
    expect(px.passwordPixels).toBeGreaterThan(100);
    expect(px.outlinePixels).toBeGreaterThan(20); // the magenta outline around the checkbox
    expect(header(news.r)).toMatchObject({ outcome: 'succeeded', effect: 'state-changed:checked' });
    await expect(page.locator('#news')).toBeChecked();

    // 6. A disabled button is not actionable: refused after review, right before the events, saying why.
    // (A private part holds a button of the same description: never counted, so this one is not ambiguous.)
    const off = await act(world, client, 'page_click', { tabId, fingerprint: { role: 'button', name: 'Unavailable' } });
    expect(textOf(off.r)).toMatch(/^Error \(not-actionable\)/);
    expect(textOf(off.r)).toMatch(/<untrusted-page-content[^>]*>\ndisabled\n/);
    expect(await clicks(page, 'off')).toBe(0);

    // 7. Blocked surfaces, refused before the person is asked: a password form's button, a password field, a private part.
    // A label whose click goes to a one-time-code field is blocked as that field is.
    // Through shadow DOM too: a submit button inside a custom element's closed shadow root, and a form whose
    // password field sits in a shadow root; the snapshot marks both [blocked] as well.
    const snap = textOf(await client.callTool({ name: 'page_snapshot', arguments: { tabId } }));
    for (const name of ['Shadow sign in', 'Wrapped sign in']) expect(snap, name).toMatch(new RegExp(`button "${name}".*\\[blocked\\]`));
    for (const fingerprint of [{ role: 'button', name: 'Sign in' }, { role: 'textbox', name: 'Password' }, { role: 'textbox', name: 'Email' }, { role: 'button', name: 'Shadow sign in' }, { role: 'button', name: 'Wrapped sign in' }, { role: 'button', name: 'Paste code' }]) {
      const blocked = await act(world, client, 'page_click', { tabId, fingerprint }, { expectDialog: false });
      expect(textOf(blocked.r), JSON.stringify(fingerprint)).toMatch(/^Error \(target-blocked\)/);
    }
    // A private part is never matched: a query naming what it says answers as if nothing had that name
    // (target-missing, not target-blocked, which would confirm the guess).
    const guess = await act(world, client, 'page_click', { tabId, fingerprint: { role: 'button', name: 'Private action' } }, { expectDialog: false });
    expect(textOf(guess.r)).toMatch(/^Error \(target-missing\)/);
    expect([await clicks(page, 'secret'), await clicks(page, 'shadow-signin'), await clicks(page, 'wrapped-signin')]).toEqual([0, 0, 0]);

    // 8. The page turns the target private during the action's frame waits (once its own scroll brought it into
    // view): the blocked rules run again in the task that fires the events, with no wait between.
    const late = await act(world, client, 'page_click', { tabId, fingerprint: { role: 'button', name: 'Late trap' } });
    expect(textOf(late.r)).toMatch(/^Error \(target-blocked\)/);
    expect(await clicks(page, 'trap')).toBe(0);
    expect(world.core.ledger.verify().ok).toBe(true);
  } finally {
    await client.close();
  }
});

test('target-changed between approval and dispatch; a hover grant replayed as a click is refused; a page ticking near the target does not confirm a click that did nothing; hover, focus and scroll with readback; clicks inside open and closed shadow roots and a same-origin iframe; typing into a field in a shadow root and in the iframe', async ({ world }) => {
  const { page, tabId } = await world.openShared(world.demo.at('hostile', '/hostile/semantic/controls.html'));
  const client = await agent(world);
  try {
    // 1. The page renames the button while the person reviews it: refused target-changed, nothing clicked.
    const draft = await refOf(client, tabId, /^button "Delete draft"/);
    const changed = await act(world, client, 'page_click', { tabId, ref: draft }, { beforeApprove: async () => void (await page.evaluate(() => (globalThis as unknown as { __rename(): void }).__rename())) });
    expect(textOf(changed.r)).toMatch(/^Error \(target-changed\)/);
    expect(await clicks(page, 'draft')).toBe(0);
    expect(events(world, changed.view!.requestId).slice(-1)).toEqual(['refused']);
    // The inbox: rows differ only by their text. Each row's "Remove" has its row in its fingerprint, so "the first
    // Remove" is ambiguous (refused before the person is asked, naming the refs), and Ann's is told by her row: a
    // new mail arriving at the top during the review changes nothing, and Ann's row is the one removed.
    const ambiguous = await act(world, client, 'page_click', { tabId, fingerprint: { role: 'button', name: 'Remove', nth: 0 } }, { expectDialog: false });
    expect(textOf(ambiguous.r)).toMatch(/^Error \(target-ambiguous\): 2 elements match/);
    const annRow = [{ role: 'listitem', name: 'Mail from Ann Remove' }, { role: 'list', name: 'Inbox' }, { role: 'main', name: 'Shop' }];
    const inbox = await act(world, client, 'page_click', { tabId, fingerprint: { role: 'button', name: 'Remove', ancestors: annRow } }, { beforeApprove: async () => void (await page.evaluate(() => (globalThis as unknown as { __newMail(): void }).__newMail())) });
    expect((inbox.view!.subject as SemanticTargetSubject).fingerprint.ancestors).toEqual(annRow);
    expect(header(inbox.r)).toMatchObject({ outcome: 'succeeded', effect: 'target-removed-or-changed' });
    expect([await clicks(page, 'remove-eve'), await clicks(page, 'remove-ann')]).toEqual([0, 1]);
    await expect(page.locator('#inbox li')).toHaveText(['Mail from Eve Remove', 'Mail from Bob Remove']);

    // 2. Hover shows the tooltip: confirmed by readback; reviewed as a low-impact mutation.
    const menu = await refOf(client, tabId, /^button "Menu"/);
    const hover = await act(world, client, 'page_hover', { tabId, ref: menu });
    expect(hover.view).toMatchObject({ operation: 'hover', kind: 'low-impact-mutation' });
    expect(header(hover.r)).toMatchObject({ outcome: 'succeeded', operation: 'hover', effect: 'dom-changed-near-target' });
    await expect(page.locator('#tip')).toHaveText('Open the menu');
    expect(await clicks(page, 'menu')).toBe(0);
    // A click whose only visible reactions are to the hover (a tip) and the pointer down (a ripple) is not
    // confirmed by them: the readback counts what follows the click event.
    const noop = await act(world, client, 'page_click', { tabId, fingerprint: { role: 'button', name: 'Does nothing' } });
    expect(textOf(noop.r)).toMatch(/^Error \(readback-mismatch\)/);
    expect(await clicks(page, 'noop')).toBe(1);
    await expect(page.locator('#noop-tip')).toHaveText('Nothing here');
    // A page that changes the area near the target on its own (a price ticking every 10 ms since before the
    // review): those changes are noise, not the click's effect. A click that does nothing is a mismatch, and
    // says how much it ignored; a click that adds a line to the same section is still confirmed.
    // The price is in the buttons' item (the section's text): ticking while the person reviews "Watch price",
    // the approved item is not the one at dispatch, so it is refused target-changed, nothing clicked (the safe
    // side, docs/semantic-controls.md "The target's item"). A price the page marks as a live region is not
    // the item's text: the click goes ahead and the readback tells the ticks from the click's effect.
    await page.evaluate(() => (globalThis as unknown as { __ticker(on: boolean): void }).__ticker(true));
    try {
      const moving = await act(world, client, 'page_click', { tabId, fingerprint: { role: 'button', name: 'Watch price' } });
      expect(textOf(moving.r)).toMatch(/^Error \(target-changed\)/);
      expect(await clicks(page, 'idle')).toBe(0);
      await page.locator('#price').evaluate((el) => el.setAttribute('aria-live', 'polite'));
      const idle = await act(world, client, 'page_click', { tabId, fingerprint: { role: 'button', name: 'Watch price' } });
      expect(textOf(idle.r)).toMatch(/^Error \(readback-mismatch\)/);
      expect(await clicks(page, 'idle')).toBe(1);
      const mismatch = world.receipts({ requestId: idle.view!.requestId }).find((x) => x.event === 'readback-mismatch')!;
      expect((mismatch.detail as { observations: { noiseIgnored?: number; domChangesNear: number } }).observations).toMatchObject({ domChangesNear: 0, noiseIgnored: expect.any(Number) });
      const note = await act(world, client, 'page_click', { tabId, fingerprint: { role: 'button', name: 'Add a note' } });
      expect(header(note.r)).toMatchObject({ outcome: 'succeeded', effect: 'dom-changed-near-target' });
    } finally {
      await page.evaluate(() => (globalThis as unknown as { __ticker(on: boolean): void }).__ticker(false));
    }

    // 3. A grant made for that hover, presented as a click of the same target: grant-invalid, the page never clicked.
    // The tip the hover showed is the only text beside "Menu" and would make it the button's item (a fingerprint
    // other than the reviewed one: target-changed); the page hides it again, as menus do when the pointer leaves.
    await page.locator('#tip').evaluate((el) => { el.textContent = ''; });
    const v = hover.view!;
    const grant = await world.core.link.signGrant({
      requestId: 'replay-1', faculty: 'semantic', operation: 'hover', tabId, frameId: v.frame.frameId, documentId: v.documentId, origin: v.origin,
      urlHash: await urlHashOf(world, tabId),
      subjectHash: v.subjectHash, argumentsHash: await argumentsHash({}), nonce: 'a'.repeat(32), expiresAt: Date.now() + LIMITS.grantTtlMs,
    });
    if (!grant.ok) throw new Error(grant.error.message);
    const dispatch = (operation: string) => world.request({
      op: 'dispatch', faculty: 'semantic', operation, target: { tabId, frameId: v.frame.frameId, documentId: v.documentId },
      subject: { fingerprint: (v.subject as SemanticTargetSubject).fingerprint, ref: menu }, arguments: {}, grant: grant.value, timeoutMs: 10_000,
    });
    expect(await dispatch('click')).toMatchObject({ ok: true, value: { outcome: 'refused', refusal: 'grant-invalid' } });
    expect(await clicks(page, 'menu')).toBe(0);
    // The same grant for the operation it names still works once (it was not spent by the refusal), then never again.
    expect(await dispatch('hover')).toMatchObject({ ok: true, value: { outcome: 'succeeded' } });
    expect(await dispatch('hover')).toMatchObject({ ok: true, value: { outcome: 'refused', refusal: 'grant-reused' } });
    expect(await clicks(page, 'menu')).toBe(0);

    // 4. Focus and scroll of a field far below the fold; the scroll under the person's rule allowing
    // low-impact actions in this one tab (no dialog; approved by that rule, receipted).
    const far = await refOf(client, tabId, /^textbox "Far field"/);
    const origin = new URL(page.url()).origin;
    expect(await world.core.api.addPolicyRule({ rule: { faculty: 'semantic', kind: 'low-impact-mutation', origin, tabId, action: 'allow' } })).toMatchObject({ ok: true });
    const scrolled = await act(world, client, 'page_scroll', { tabId, ref: far }, { expectDialog: false });
    expect(header(scrolled.r)).toMatchObject({ outcome: 'succeeded', operation: 'scroll', effect: 'in-viewport' });
    const scrollId = header(scrolled.r).requestId as string;
    expect(events(world, scrollId)).toEqual(['requested', 'validated', 'approved', 'dispatched', 'readback-confirmed', 'succeeded']);
    expect(world.receipts({ requestId: scrollId }).find((x) => x.event === 'approved')!.actor).toEqual({ kind: 'console' });
    const focused = await act(world, client, 'page_focus', { tabId, ref: far }, { expectDialog: false });
    expect(header(focused.r)).toMatchObject({ outcome: 'succeeded', operation: 'focus', effect: 'focused' });
    expect(await page.evaluate(() => (globalThis as unknown as { document: { activeElement: { id: string } } }).document.activeElement.id)).toBe('far');

    // 5. Clicks inside an open and a closed shadow root (the hit test goes through both) and in a same-origin iframe;
    // a click is a mutation, reviewed whatever the tab's rule (act waits for each dialog).
    for (const [re, label] of [[/^button "Open shadow action"/, 'open-shadow'], [/^button "Closed shadow action"/, 'closed-shadow']] as const) {
      const done = await act(world, client, 'page_click', { tabId, ref: await refOf(client, tabId, re) });
      expect(done.r.isError, textOf(done.r)).toBeFalsy();
      expect(header(done.r), label).toMatchObject({ outcome: 'succeeded', readback: 'confirmed' });
      expect(await clicks(page, label)).toBe(1);
    }
    // A parent's overlay over the frame covers the frame's button: named, with no ref (it is not the frame document's).
    const frameAction = await refOf(client, tabId, /^button "Frame action"/);
    const coverFrame = (on: boolean) => page.evaluate((o) => (globalThis as unknown as { __coverFrame(on: boolean): void }).__coverFrame(o), on);
    await coverFrame(true);
    const frameCovered = await act(world, client, 'page_click', { tabId, ref: frameAction });
    expect(textOf(frameCovered.r)).toMatch(/^Error \(target-covered\)/);
    expect(textOf(frameCovered.r)).toContain('{"role":"dialog","name":"Frame cover","ref":null}');
    await coverFrame(false);
    const inFrame = await act(world, client, 'page_click', { tabId, ref: frameAction });
    expect(header(inFrame.r)).toMatchObject({ outcome: 'succeeded', readback: 'confirmed', effect: 'dom-changed-near-target' });
    expect(inFrame.view!.frame.frameId).not.toBe(0);
    await expect(page.frameLocator('#frame').locator('#said')).toHaveText('frame done');

    // 6. Typing into a text field inside the open shadow root and into one in the same-origin iframe: reviewed,
    // set, and confirmed by readback in its own document; the frame's is dispatched to the frame.
    const shadowNote = await act(world, client, 'page_type', { tabId, ref: await refOf(client, tabId, /^textbox "Shadow note"/), text: 'from the agent' });
    expect(header(shadowNote.r), textOf(shadowNote.r)).toMatchObject({ outcome: 'succeeded', readback: 'confirmed', effect: 'value-set' });
    await expect(page.locator('open-box input[name=shadow-note]')).toHaveValue('from the agent'); // Playwright's CSS pierces open shadow roots
    const frameNote = await act(world, client, 'page_type', { tabId, ref: await refOf(client, tabId, /^textbox "Frame note"/), text: 'in the frame' });
    expect(header(frameNote.r), textOf(frameNote.r)).toMatchObject({ outcome: 'succeeded', readback: 'confirmed', effect: 'value-set' });
    expect(frameNote.view!.frame.frameId).not.toBe(0);
    await expect(page.frameLocator('#frame').locator('#frame-note')).toHaveValue('in the frame');
  } finally {
    await client.close();
  }
});

test('the ladder: a button of a form that is a declarative WebMCP tool is refused naming the tool, before the person is asked; a button outside it is clicked', async ({ world }) => {
  const { page, tabId } = await world.openShared(world.demo.at('hostile', '/hostile/semantic/ladder.html'));
  const client = await agent(world);
  try {
    const refused = await act(world, client, 'page_click', { tabId, fingerprint: { role: 'button', name: 'Join' } }, { expectDialog: false });
    expect(textOf(refused.r)).toMatch(/^Error \(narrower-capability-available\): .*"subscribe_news"/);
    expect(await clicks(page, 'join')).toBe(0);
    const plain = await act(world, client, 'page_click', { tabId, fingerprint: { role: 'button', name: 'Plain button' } });
    expect(header(plain.r)).toMatchObject({ outcome: 'succeeded', readback: 'confirmed' });
    expect(await clicks(page, 'plain')).toBe(1);
  } finally {
    await client.close();
  }
});

test('without WebMCP (the browser feature off) the same form button is open to the semantic path: reviewed and clicked; a click the page shows no sign of is readback-mismatch, never success', async ({ launchWorld }) => {
  const world = await launchWorld({ chromiumArgs: ['--disable-features=WebMCPTesting'] });
  const { page, tabId } = await world.openShared(world.demo.at('hostile', '/hostile/semantic/ladder.html'));
  expect(await page.evaluate(() => 'modelContext' in (globalThis as unknown as { document: object }).document)).toBe(false);
  const client = await agent(world);
  try {
    const joined = await act(world, client, 'page_click', { tabId, fingerprint: { role: 'button', name: 'Join' } });
    expect(joined.view).toMatchObject({ faculty: 'semantic', operation: 'click' });
    expect(await clicks(page, 'join')).toBe(1);
    // The Join button changes nothing on the page (the form's submit is prevented): the readback says so, no success is claimed.
    expect(textOf(joined.r)).toMatch(/^Error \(readback-mismatch\)/);
    expect(events(world, joined.view!.requestId).slice(-3)).toEqual(['dispatched', 'readback-mismatch', 'failed']);
  } finally {
    await client.close();
  }
});
