/**
 * The agent endpoint's test world: the REAL console core (createConsoleCore) in a
 * fresh data folder, with an in-test extension link, its MCP endpoint on a free
 * port of 127.0.0.1, and an agent token made as the person makes one. Shared by the
 * unit tests that drive the endpoint with the SDK's client (agent-endpoint,
 * trust-agent, trust-quotas).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { createConsoleCore, type ConsoleCore, type ConsoleCoreOptions } from '../../src/main/core';
import type { ExtensionLink } from '../../src/main/core/ports';
import { createAgentToken } from './agent-token';

/** A started core, its data folder and the secret of the token named "vitest token". */
export interface AgentCore {
  dir: string;
  core: ConsoleCore;
  agentSecret: string;
}

/**
 * Start a core over `link` in a new temp folder (`prefix` names it), approvals expiring
 * after 30 s unless `more` says otherwise, and create the agent token "vitest token".
 */
export async function startAgentCore(prefix: string, link: ExtensionLink, more: Partial<ConsoleCoreOptions> = {}): Promise<AgentCore> {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const core = createConsoleCore({ dataDir: dir, mcpPort: 0, link, approvalTimeoutMs: 30_000, ...more });
  await core.start();
  return { dir, core, agentSecret: await createAgentToken(core.api, 'vitest token') };
}

/** Close the test's MCP clients (emptying `clients`), stop the core and remove its data folder. */
export async function stopAgentCore(core: ConsoleCore, dir: string, clients: Client[]): Promise<void> {
  for (const c of clients.splice(0)) await c.close().catch(() => undefined);
  await core.stop();
  rmSync(dir, { recursive: true, force: true });
}
