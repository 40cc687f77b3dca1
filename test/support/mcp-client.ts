/**
 * The agent's side in tests: the MCP SDK's own client over Streamable HTTP, as an
 * MCP client configured with the console's URL and an agent token would connect
 * (Authorization: Bearer <secret>; docs/agent-exchange.md).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

/**
 * A client connected (MCP `initialize` done) to the endpoint at `url` with the token `secret`.
 * The caller closes it.
 * @param clientInfo what the client declares in `initialize` (the self-declared name and version).
 * @throws the SDK's error when the endpoint refuses (a wrong token: 401).
 */
export async function connectAgent(url: string, secret: string, clientInfo: { name: string; version: string }): Promise<Client> {
  const client = new Client(clientInfo);
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${secret}` } } }));
  return client;
}

/** The text items of a tools/call result, joined by newlines. */
export const textOf = (r: unknown): string => ((r as CallToolResult).content as Array<{ type: string; text: string }>).map((c) => c.text).join('\n');
