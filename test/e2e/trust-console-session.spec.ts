// Trust rule 19 and issue 9 item 4 in the loopback web host, attacked in real
// Chromium: the console URL's token is one-time (a second load with it, in
// another browser context, is refused, and so is a script that replays it), the
// session lives in an HttpOnly, SameSite=Strict cookie (no secret in
// sessionStorage, localStorage or document.cookie) that the browser sends to no
// other server on 127.0.0.1 (cookies ignore ports: its Path is the session's own
// socket), a page of another port on 127.0.0.1 cannot open the API socket, and a
// script's synthetic click() on "Approve once" or "Deny" decides nothing. What the
// web host cannot stop is asserted too, so the docs stay honest: a script in the
// console's OWN tab holds the session (docs/hosts.md).
// Run `npx electron-vite build` first (`npm test` does).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, test, type Page } from '@playwright/test';
import type { WebHost } from '../../src/main/web/server';
import { FakeConsole, sampleApproval } from '../support/fake-console';
import { startFakeWebHost, useConsoleBrowser } from './support/web-console';
import { exchangeLink, tokenOf } from '../support/web-session';


const browser = useConsoleBrowser();
let host: WebHost;
let fake: FakeConsole;

test.beforeEach(async () => {
  const now = Date.now();
  fake = new FakeConsole({ approvals: [sampleApproval(now, { expiresAt: now + 300_000 })] });
  host = await startFakeWebHost(fake);
});

test.afterEach(async () => {
  await host?.close();
});

/**
 * A script in `page` opens the console's API socket (at `/api/<sid>`, the session id in
 * the page's own fragment when there is one) and says what happened: `welcome`, or `closed:<code>`.
 */
function scriptOpensSocket(page: Page, port: number, sid = "new URLSearchParams(location.hash.slice(1)).get('session') || ''"): Promise<string> {
  return page.evaluate(`new Promise((resolve) => {
    const ws = new WebSocket('ws://127.0.0.1:${port}/api/' + (${sid}));
    ws.onopen = () => ws.send(JSON.stringify({ type: 'hello' }));
    ws.onmessage = (e) => { resolve(JSON.parse(e.data).type || 'message'); ws.close(); };
    ws.onclose = (e) => resolve('closed:' + e.code);
  })`) as Promise<string>;
}

/** Wait for the console page to show its one pending approval (the session works). */
async function consoleReady(page: Page): Promise<void> {
  await expect(page.getByRole('dialog')).toBeVisible();
}

test('a console link is one-time: opened again in another browser context it is refused, and replaying its token from a script is refused too', async () => {
  const url = host.newConsoleUrl();
  const token = tokenOf(url);
  const person = await browser().newContext();
  const leaked = await browser().newContext();
  try {
    const mine = await person.newPage();
    await mine.goto(url);
    await consoleReady(mine);
    expect(mine.url()).not.toContain(token); // the token left the address bar at once
    expect(mine.url()).toMatch(/#session=[A-Za-z0-9_-]{32}$/);

    // The same link a second time (a leaked history entry, a shoulder-surfed URL): refused.
    const other = await leaked.newPage();
    await other.goto(url);
    await expect(other.getByTestId('console-banner')).toContainText('The console refused this page’s session.');
    await expect(other.getByRole('dialog')).toHaveCount(0);
    // A script on that page replays the token and tries the API socket: nothing opens.
    const replay = await other.evaluate(`fetch('/session', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ token: ${JSON.stringify(token)} }) }).then((r) => r.status)`);
    expect(replay).toBe(403);
    expect(await scriptOpensSocket(other, host.port)).toBe('closed:4401');
    expect(await leaked.cookies()).toEqual([]);

    // Even with the person's session id (say, read off their screen), the other context has no cookie.
    const sid = new URL(mine.url()).hash.slice('#session='.length);
    expect(await scriptOpensSocket(other, host.port, JSON.stringify(sid))).toBe('closed:4401');
    // The person's tab is untouched, and a reload keeps its session (the id in the fragment, the cookie in the browser).
    await mine.reload();
    await consoleReady(mine);
    expect(fake.calls.filter((c) => c.method === 'decideApproval')).toEqual([]);
  } finally {
    await person.close();
    await leaked.close();
  }
});

test('the session is an HttpOnly, SameSite=Strict cookie; sessionStorage, localStorage and document.cookie hold no session secret', async () => {
  const context = await browser().newContext();
  try {
    const page = await context.newPage();
    const url = host.newConsoleUrl();
    await page.goto(url);
    await consoleReady(page);
    const cookies = await context.cookies(); // all of them: the page's own URL (path /) is not where the cookie goes
    expect(cookies).toHaveLength(1);
    const sid = new URL(page.url()).hash.slice('#session='.length);
    expect(cookies[0]).toMatchObject({ name: host.sessionCookieName, httpOnly: true, sameSite: 'Strict', path: `/api/${sid}`, domain: '127.0.0.1' });
    const session = cookies[0]!.value;
    // Everything a script in the page can read.
    const readable = (await page.evaluate(`JSON.stringify({
      session: Object.fromEntries(Object.keys(sessionStorage).map((k) => [k, sessionStorage.getItem(k)])),
      local: Object.fromEntries(Object.keys(localStorage).map((k) => [k, localStorage.getItem(k)])),
      cookie: document.cookie,
      href: location.href,
    })`)) as string;
    expect(JSON.parse(readable)).toEqual({ session: {}, local: {}, cookie: '', href: `${host.origin}/#session=${sid}` });
    expect(readable).not.toContain(session);
    expect(readable).not.toContain(tokenOf(url));
  } finally {
    await context.close();
  }
});

test('another server on 127.0.0.1 (same site: cookies ignore ports) never receives the session cookie, and its page cannot open the API socket or spend a link, even beside the open console', async () => {
  const context = await browser().newContext();
  // Another local user's server: it records every Cookie header the browser sends it.
  const cookiesSeen: string[] = [];
  const server: Server = createServer((req, res) => {
    cookiesSeen.push(`${req.url} ${req.headers.cookie ?? ''}`);
    res.writeHead(200, { 'Content-Type': 'text/html' });
    res.end('<!doctype html><title>elsewhere</title>');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const evilOrigin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const mine = await context.newPage();
    await mine.goto(host.newConsoleUrl());
    await consoleReady(mine);
    const sid = new URL(mine.url()).hash.slice('#session='.length);
    const evil = await context.newPage();
    // The person visits it; it sends the browser to the paths a cookie might be scoped to, on its own port.
    for (const p of ['/', '/api', '/api/', '/session']) await evil.goto(`${evilOrigin}${p}`);
    await evil.evaluate(`Promise.all(['/api', '/api/x', '/'].map((p) => fetch(p, { credentials: 'include' })))`);
    expect(cookiesSeen.length).toBeGreaterThanOrEqual(7);
    expect(cookiesSeen.filter((c) => c.includes('echo-session'))).toEqual([]);
    // Even told the session id, its page's socket is refused at the upgrade (403, Origin): a close without a code of ours.
    expect(await scriptOpensSocket(evil, host.port, JSON.stringify(sid))).toBe('closed:1006');
    // It POSTs a fresh link's token cross-origin (no-cors): refused by Origin (403; CORP blocks the answer), the link stays unspent.
    const token = tokenOf(host.newConsoleUrl());
    await evil.evaluate(
      `fetch('http://127.0.0.1:${host.port}/session', { method: 'POST', mode: 'no-cors', credentials: 'include', body: JSON.stringify({ token: ${JSON.stringify(token)} }) }).then((r) => r.type, () => 'blocked')`,
    );
    expect((await exchangeLink(host, JSON.stringify({ token }))).status).toBe(200);
    expect(fake.calls.filter((c) => c.method !== 'getSnapshot' && c.method !== 'queryReceipts' && c.method !== 'listPolicyRules')).toEqual([]);
  } finally {
    await context.close();
    await new Promise((r) => server.close(r));
  }
});

test('a synthetic click() on "Approve once" or "Deny" in the console page decides nothing and is flagged; the person\'s real click decides', async () => {
  const page = await browser().newPage();
  try {
    await page.goto(host.newConsoleUrl());
    await consoleReady(page);
    await page.getByTestId('end-of-request').scrollIntoViewIfNeeded();
    await expect(page.getByTestId('approve-button')).toBeEnabled(); // armed: only isTrusted stands in the way
    // What another extension's content script did (issue 9 item 4): click() and a dispatched MouseEvent.
    await page.evaluate(`document.querySelector('[data-testid="approve-button"]').click()`);
    await page.evaluate(`document.querySelector('[data-testid="approve-button"]').dispatchEvent(new MouseEvent('click', { bubbles: true }))`);
    await page.evaluate(`document.querySelector('[data-testid="deny-button"]').click()`);
    await expect(page.getByTestId('untrusted-click')).toContainText('did not come from your mouse or keyboard was ignored');
    await expect(page.getByRole('dialog')).toBeVisible();
    // Round trip on the same socket, so a decision sent before it would have arrived by now.
    await page.getByTestId('close-button').click();
    await page.getByTestId('nav-receipts').click();
    await page.getByTestId('verify-ledger').click();
    await expect(page.getByTestId('verify-report')).toContainText('Chain intact');
    expect(fake.calls.filter((c) => c.method === 'decideApproval')).toEqual([]);
    expect(fake.receipts.filter((r) => r.event === 'approved' || r.event === 'denied')).toEqual([]);

    // The person (Playwright's click is real input: isTrusted) still decides.
    await page.getByTestId('nav-approvals').click();
    await page.getByTestId(`review-${fake.approvals[0]!.requestId}`).click();
    await page.getByTestId('end-of-request').scrollIntoViewIfNeeded();
    await page.getByTestId('approve-button').click();
    await expect(page.getByRole('dialog')).toHaveCount(0);
    expect(fake.calls.filter((c) => c.method === 'decideApproval')).toHaveLength(1);
  } finally {
    await page.close();
  }
});

test('what the web host cannot tell apart (documented, docs/hosts.md): a script in the console’s OWN tab rides its session cookie; the console says so', async () => {
  const page = await browser().newPage();
  try {
    await page.goto(host.newConsoleUrl());
    await consoleReady(page);
    await expect(page.getByTestId('web-host-notice')).toContainText('cannot be told apart from you');
    await expect(page.getByTestId('web-host-notice')).toContainText('desktop app');
    expect(await scriptOpensSocket(page, host.port)).toBe('welcome');
  } finally {
    await page.close();
  }
});
