/**
 * The README's "Any MCP SDK client" sample, run as written (its endpoint URL swapped for the test
 * core's) with Node against the real MCP endpoint: it lists the tabs, and it ends its MCP session
 * when done (Streamable HTTP: `terminateSession` sends the DELETE, MCP 2025-06-18 "Session
 * Management"). `client.close()` alone only drops the connection, and every run left a session
 * open in the console until the endpoint's bound closed the agent's oldest one.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeEach, expect, it } from 'vitest';
import type { ConsoleCore } from '../../src/main/core';
import { startAgentCore, stopAgentCore } from '../support/agent-core';
import { FakeLink, sharedTab } from './broker.fixtures';

const root = (p: string) => fileURLToPath(new URL(`../../${p}`, import.meta.url));

let dir: string;
let core: ConsoleCore;
let agentSecret = '';
let scratch = '';

beforeEach(async () => {
  const link = new FakeLink();
  link.tabs = [sharedTab(7)];
  ({ dir, core, agentSecret } = await startAgentCore('echo-readme-agent-', link));
  // Inside the project, so that the sample's `@modelcontextprotocol/sdk` imports resolve as in the README's own folder.
  scratch = mkdtempSync(join(root('node_modules'), '.readme-agent-'));
});

afterEach(async () => {
  await stopAgentCore(core, dir, []);
  rmSync(scratch, { recursive: true, force: true });
});

it("the README's MCP SDK sample lists the tabs and leaves no MCP session open", async () => {
  const readme = readFileSync(root('README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('#### Any MCP SDK client'));
  const sample = /```js\n([\s\S]*?)```/.exec(section)?.[1];
  expect(sample).toContain("new URL('http://127.0.0.1:47821/mcp')");
  const file = join(scratch, 'agent.mjs');
  writeFileSync(file, sample!.replace('http://127.0.0.1:47821/mcp', core.endpoint.url));
  const run = await promisify(execFile)(process.execPath, [file], { env: { ...process.env, ECHO_CONSOLE_TOKEN: agentSecret }, timeout: 60_000 });
  expect(run.stdout).toMatch(/\b7\b/);
  // Each token's open sessions, as the console's Connection page counts them.
  expect(core.agentTokens().map((t) => t.sessions)).toEqual([0]);
});
