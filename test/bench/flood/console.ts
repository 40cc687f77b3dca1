/**
 * The console under test for the flood bench (../flood.bench.ts), in its own
 * process so the flood's senders and the UI's timer do not share its event
 * loop: the real console core (ledger, broker, MCP endpoint with its per-agent
 * limits) and the real loopback web host, in a throw-away data folder. The
 * extension is not connected, so every allowed call still runs the pipeline
 * and writes its receipts (list_tabs answers link-down).
 *
 * Prints one JSON line on stdout: `{ mcpUrl, secrets: string[4],
 * web: { port, origin, consoleUrl } }`; then, for each line `elu` on stdin, one
 * line `{ active, idle }`: the main thread's event loop time busy and idle so far
 * (ms, performance.eventLoopUtilization()); stops on SIGTERM.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { createConsoleCore } from '../../../src/main/core';
import { startWebHost } from '../../../src/main/web/server';

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'echo-flood-'));
  process.env.ECHO_CONSOLE_LEDGER_KEY_DIR ??= join(dir, 'keys');
  const dataDir = join(dir, 'data');
  mkdirSync(dataDir, { mode: 0o700 });
  const renderer = join(dir, 'renderer');
  mkdirSync(renderer);
  writeFileSync(join(renderer, 'index.html'), '<!doctype html><title>Echo Console</title>');
  const core = createConsoleCore({ dataDir, mcpPort: 0, socketPath: join(dir, 'link.sock'), agentSocketPath: join(dir, 'agent.sock') });
  const host = await startWebHost({ api: core.api, subscribe: (l) => core.onEvent(l), rendererDir: renderer, port: 0 });
  core.setConsoleOrigins(host.origins);
  await core.start();
  const secrets: string[] = [];
  for (let i = 0; i < 4; i++) {
    const r = await core.api.createAgentToken({ name: `flooder ${i + 1}` });
    if (!r.ok) throw new Error(r.error.message);
    secrets.push(r.value.secret);
  }
  process.stdout.write(`${JSON.stringify({ mcpUrl: core.endpoint.url, secrets, web: { port: host.port, origin: host.origin, consoleUrl: host.newConsoleUrl() } })}\n`);
  createInterface({ input: process.stdin }).on('line', (l) => {
    if (l.trim() !== 'elu') return;
    const { active, idle } = performance.eventLoopUtilization();
    process.stdout.write(`${JSON.stringify({ active, idle })}\n`);
  });
  process.on('SIGTERM', () => {
    void Promise.allSettled([host.close(), Promise.resolve(core.stop())]).then(() => {
      rmSync(dir, { recursive: true, force: true });
      process.exit(0);
    });
  });
}

main().catch((e: unknown) => {
  process.stderr.write(`flood console: ${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(1);
});
