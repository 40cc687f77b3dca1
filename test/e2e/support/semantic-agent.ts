/**
 * What the end-to-end tests of the semantic controls share (semantic-controls.spec.ts,
 * semantic-type.spec.ts): an MCP SDK client with a real agent token on the console's endpoint,
 * the ref of a snapshot line, one tool call approved (or shown never to be asked) through the
 * console API as the person would, and readers of the answers and receipts.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { expect } from '@playwright/test';
import type { ApprovalView } from '../../../src/shared/ipc';
import { createAgentToken } from '../../support/agent-token';
import { until, type LinkWorld } from './link-fixture';

/** The text of a tool answer's content, joined by newlines. */
export const textOf = (r: unknown): string => ((r as CallToolResult).content as Array<{ text: string }>).map((c) => c.text).join('\n');

/** The JSON header of a semantic tool's success (`Done {...}`). */
export const header = (r: CallToolResult): Record<string, unknown> => JSON.parse(/^Done (\{.*\})$/m.exec(textOf(r))![1]!) as Record<string, unknown>;

/** The receipt events of one request, oldest first. */
export const events = (world: LinkWorld, requestId: string): string[] => world.receipts({ requestId }).map((x) => x.event).reverse();

/** A connected MCP client holding a fresh agent token. */
export async function agent(world: LinkWorld): Promise<Client> {
  const client = new Client({ name: 'semantic-e2e', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(world.core.endpoint.url), { requestInit: { headers: { Authorization: `Bearer ${await createAgentToken(world.core.api)}` } } }),
  );
  return client;
}

/** The ref at the end of the first snapshot line matching `re`. */
export async function refOf(client: Client, tabId: number, re: RegExp): Promise<string> {
  const t = textOf(await client.callTool({ name: 'page_snapshot', arguments: { tabId } }));
  const line = t.split('\n').find((l) => re.test(l.trim()));
  expect(line, `a line matching ${re} in:\n${t}`).toBeTruthy();
  return /#([a-z]+[0-9]+)$/.exec(line!)![1]!;
}

/** A tool's answer and the approval view it showed (null when none was shown). */
export type Done = { r: CallToolResult; view: ApprovalView | null };

/**
 * Call `tool` as the agent; approve its request when it shows (after `beforeApprove`), or, when
 * `expectDialog` is false, assert none was shown (refused before the person is asked).
 */
export async function act(world: LinkWorld, client: Client, tool: string, args: Record<string, unknown>, o: { expectDialog?: boolean; beforeApprove?: (v: ApprovalView) => Promise<void> } = {}): Promise<Done> {
  const before = new Set(world.core.broker.approvals.list().map((v) => v.requestId));
  const pending = client.callTool({ name: tool, arguments: args }) as Promise<CallToolResult>;
  if (o.expectDialog === false) {
    const r = await pending;
    expect(world.core.broker.approvals.list().filter((v) => !before.has(v.requestId))).toEqual([]);
    return { r, view: null };
  }
  const view = await until(() => world.core.broker.approvals.list().find((v) => !before.has(v.requestId)), `the approval of ${tool}`);
  await o.beforeApprove?.(view);
  expect(await world.core.api.decideApproval({ requestId: view.requestId, decision: 'approve' })).toEqual({ ok: true, value: null });
  return { r: await pending, view };
}

/** The exact-URL hash of the tab's top document now, as the extension's resolve reads it (`fingerprint`: any one element of the page). */
export async function urlHashOf(world: LinkWorld, tabId: number, fingerprint: Record<string, unknown> = { role: 'button', name: 'Menu' }): Promise<string> {
  const r = await world.request({ op: 'read', faculty: 'semantic-target', operation: 'resolve', tabId, arguments: { fingerprint } });
  if (!r.ok) throw new Error(r.error.message);
  return (r.value as { urlHash: string }).urlHash;
}
