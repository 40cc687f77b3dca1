/**
 * A form that waits for the person (issue 8 item 4), end to end: an MCP SDK client over Streamable
 * HTTP → the console → the real link and extension → real Chromium 156 on resources/demo/appointment
 * (request_callback has no toolautosubmit). After approval the form is filled and the agent's call
 * stays open with MCP progress notifications until:
 *  - the person presses the page's button (a Playwright click in the page): succeeded, with what the
 *    page's handler answered;
 *  - the page resets the form (Chromium cancels the call): cancelled, code form-cancelled;
 *  - the bounded wait ends (formWaitTimeoutMs, injected small here): cancelled, code
 *    form-wait-timeout, and the fields the agent filled are put back as they were (read back);
 * and `request_status {requestId}` tells each outcome from the receipts. Also the honest result of a
 * submit handler that prevents the default without respondWith (resources/hostile/form-tricks.html).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult, Progress } from '@modelcontextprotocol/sdk/types.js';
import type { Page } from '@playwright/test';
import { test, expect, until, type LinkWorld } from './support/link-fixture';
import { createAgentToken } from '../support/agent-token';

async function connect(world: LinkWorld): Promise<Client> {
  const client = new Client({ name: 'forms-waiting-e2e', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(world.core.endpoint.url), { requestInit: { headers: { Authorization: `Bearer ${await createAgentToken(world.core.api)}` } } }));
  return client;
}

const textOf = (r: CallToolResult) => r.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');

/** webmcp_discover + webmcp_invoke of request_callback through MCP, with progress collected; approves once it is shown. */
async function callAndApprove(world: LinkWorld, client: Client, tabId: number, args: Record<string, unknown>) {
  // The discovery the agent's call resolves against (the console keeps the latest per tab).
  const d = await world.core.broker.discover({ tabId }, { actor: { kind: 'agent', name: 'forms-waiting-e2e' }, kind: 'read' });
  const hash = d.ok ? d.value.tools.find((t) => t.name === 'request_callback')?.descriptorHash : undefined;
  if (!hash) throw new Error('request_callback not discovered');
  const progress: Progress[] = [];
  const call = client.callTool({ name: 'webmcp_invoke', arguments: { tabId, name: 'request_callback', descriptorHash: hash, arguments: args } }, undefined, {
    onprogress: (p) => progress.push(p),
    timeout: 120_000,
  }) as Promise<CallToolResult>;
  const view = await until(() => world.core.broker.approvals.list().find((v) => v.subject.toolName === 'request_callback'), 'the approval of request_callback');
  expect(view.subject.form).toMatchObject({ autosubmit: false });
  expect(await world.core.api.decideApproval({ requestId: view.requestId, decision: 'approve' })).toEqual({ ok: true, value: null });
  return { call, progress, requestId: view.requestId };
}

async function status(client: Client, requestId: string): Promise<Record<string, unknown>> {
  const r = (await client.callTool({ name: 'request_status', arguments: { requestId } })) as CallToolResult;
  expect(r.isError).toBeFalsy();
  return JSON.parse(r.content[0]?.type === 'text' ? r.content[0].text : 'null') as Record<string, unknown>;
}

const field = (page: Page, name: string) => page.locator(`#callback [name="${name}"]`);

test('the person presses the page’s button: the open call gets progress, then ends succeeded; a page reset ends it cancelled (form-cancelled); request_status tells both', async ({ world }) => {
  const { page, tabId } = await world.openShared(world.demo.url('appointment'));
  const client = await connect(world);
  try {
    {
      const { call, progress, requestId } = await callAndApprove(world, client, tabId, { day: '2026-12-16', at: '14:00', topic: 'results' });
      // Filled, and waiting for the person: the agent hears so while its call stays open.
      await expect(field(page, 'topic')).toHaveValue('results');
      await until(() => progress.length >= 1, 'a progress notification');
      expect(progress[0]).toMatchObject({ total: 300_000, message: expect.stringContaining("press the page's button") });
      expect(await status(client, requestId)).toMatchObject({ state: 'in-progress', events: expect.arrayContaining(['dispatched']) });
      const dispatched = world.receipts({ requestId }).find((r) => r.event === 'dispatched');
      expect(dispatched?.detail).toMatchObject({ awaitingPerson: true, timeoutMs: 300_000 });

      await page.getByTestId('callback-submit').click();
      const r = await call;
      expect(r.isError).toBeFalsy();
      expect(textOf(r)).toContain('"outcome":"succeeded"');
      expect(textOf(r)).toContain('"received":{"day":"2026-12-16","at":"14:00","topic":"results"}');
      await expect(page.getByTestId('callback-result')).toHaveAttribute('data-agent-invoked', 'true');
      expect(await status(client, requestId)).toMatchObject({ state: 'ended', outcome: 'succeeded' });
    }
    {
      const { call, requestId } = await callAndApprove(world, client, tabId, { day: '2026-12-17', at: '09:00' });
      await expect(field(page, 'at')).toHaveValue('09:00');
      await page.getByTestId('callback-reset').click();
      const r = await call;
      expect(r.isError).toBe(true);
      expect(textOf(r)).toMatch(/form-cancelled/);
      expect(textOf(r)).toMatch(/nothing was submitted/);
      expect(await status(client, requestId)).toMatchObject({ state: 'ended', outcome: 'cancelled', code: 'form-cancelled' });
      await expect(page.getByTestId('callback-result')).toHaveAttribute('data-count', '1');
    }
  } finally {
    await client.close();
  }
});

test('the wait ends before the person presses: cancelled (form-wait-timeout), the filled fields are put back, and request_status tells it', async ({ launchWorld }) => {
  const world = await launchWorld({ core: { formWaitTimeoutMs: 4_000, progressIntervalMs: 500 } });
  const { page, tabId } = await world.openShared(world.demo.url('appointment'));
  // What the person had typed before the agent's call.
  await field(page, 'topic').fill('my own words');
  const client = await connect(world);
  try {
    const { call, progress, requestId } = await callAndApprove(world, client, tabId, { day: '2026-12-18', at: '16:30', topic: 'agent topic' });
    await expect(field(page, 'topic')).toHaveValue('agent topic');
    const r = await call;
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/form-wait-timeout/);
    expect(textOf(r)).toMatch(/put back/);
    expect(progress.length).toBeGreaterThanOrEqual(1);
    // Put back as it was before the fill, so a later press does not send what the agent left.
    expect(await field(page, 'topic').inputValue()).toBe('my own words');
    expect(await field(page, 'day').inputValue()).toBe('');
    expect(await field(page, 'at').inputValue()).toBe('');
    const cancelled = world.receipts({ requestId }).find((x) => x.event === 'cancelled');
    expect(cancelled?.detail).toMatchObject({ code: 'form-wait-timeout', submitted: false, formRestored: true });
    expect(await status(client, requestId)).toMatchObject({ state: 'ended', outcome: 'cancelled', code: 'form-wait-timeout' });
    await expect(page.getByTestId('callback-result')).toHaveAttribute('data-count', '0');
    // Not an outcome-unknown: the same tool may be asked again at once.
    expect(world.core.broker.approvals.list()).toEqual([]);
  } finally {
    await client.close();
    await world.close();
  }
});

test('a submit handler that prevents the default without respondWith: succeeded with no result and a note saying so, in the receipt too', async ({ world }) => {
  const { page, tabId } = await world.openShared(`${world.demo.hostileOrigin}/hostile/form-tricks.html`);
  const agent = { actor: { kind: 'agent' as const, name: 'forms-e2e' }, kind: 'mutation' as const };
  const d = await world.core.broker.discover({ tabId }, { ...agent, kind: 'read' });
  if (!d.ok) throw new Error(d.error.message);
  const tool = d.value.tools.find((t) => t.name === 'handled_without_answer')!;
  const pending = world.core.broker.invoke({ tabId, name: tool.name, descriptorHash: tool.descriptorHash, arguments: { note: 'kept' } }, agent);
  const view = await until(() => world.core.broker.approvals.list().find((v) => v.subject.toolName === tool.name), 'the approval');
  expect(view.subject.form).toMatchObject({ autosubmit: true });
  await world.core.api.decideApproval({ requestId: view.requestId, decision: 'approve' });
  const a = await pending;
  expect(a).toMatchObject({ ok: true, value: { outcome: 'succeeded', result: null, note: 'handled-without-answer' } });
  expect(a.ok && a.value.navigatedTo).toBeFalsy();
  expect(world.receipts({ requestId: a.requestId }).find((r) => r.event === 'succeeded')?.detail).toMatchObject({ note: 'handled-without-answer' });
  await expect(page.getByTestId('handled-result')).toHaveAttribute('data-count', '1');
});

test('a waiting form that navigates when the person presses its button: the outcome says where the page went, as the browser saw it', async ({ world }) => {
  const { page, tabId } = await world.openShared(world.demo.url('appointment'));
  const agent = { actor: { kind: 'agent' as const, name: 'forms-e2e' }, kind: 'mutation' as const };
  const d = await world.core.broker.discover({ tabId }, { ...agent, kind: 'read' });
  if (!d.ok) throw new Error(d.error.message);
  const tool = d.value.tools.find((t) => t.name === 'leave_feedback')!;
  const pending = world.core.broker.invoke({ tabId, name: tool.name, descriptorHash: tool.descriptorHash, arguments: { visited: '2026-12-14', comment: 'fine' } }, agent);
  const view = await until(() => world.core.broker.approvals.list().find((v) => v.subject.toolName === tool.name), 'the approval');
  expect(view.subject.form).toMatchObject({ autosubmit: false, method: 'get', action: `${world.demo.demoOrigin}/appointment/` });
  expect(view.subject.form!.values.find((v) => v.name === 'thanks')).toEqual({ name: 'thanks', value: '1', from: 'form' });
  await world.core.api.decideApproval({ requestId: view.requestId, decision: 'approve' });
  await expect(page.locator('#feedback [name=comment]')).toHaveValue('fine');
  await page.getByTestId('feedback-submit').click();
  const a = await pending;
  const to = `${world.demo.demoOrigin}/appointment/?visited=2026-12-14&comment=fine&thanks=1`;
  // Which comes first, the browser's answer or the new document, is the browser's race: either way
  // the outcome names where the page went, and never claims an answer it did not get.
  if (a.ok) expect(a.value).toMatchObject({ outcome: 'succeeded', result: null, navigatedTo: to });
  else {
    expect(a.error.code).toBe('outcome-unknown');
    expect(world.receipts({ requestId: a.requestId }).find((r) => r.event === 'outcome-unknown')?.detail).toMatchObject({ reason: 'document-left', navigatedTo: to });
  }
  await page.waitForURL(/thanks=1/);
});
