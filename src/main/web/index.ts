/**
 * `npm run start:web`: the console without Electron. Runs the real console core
 * (data in `$ECHO_CONSOLE_DATA_DIR` or ~/.config/echo-console, the same folder
 * as the desktop app) and the loopback web host, and prints what the person
 * needs: the console URL (with its one-time link token in the fragment), the agent's
 * MCP endpoint and token, and the extension folder to load in Chrome.
 *
 * Port: `--port N` or `$ECHO_CONSOLE_WEB_PORT` (default 0: a free port). The
 * extension link's socket: `$ECHO_CONSOLE_SOCKET`, else the platform default.
 * `--developer-mode`: the person's opt-in to switching developer mode on in this
 * browser tab (refused without it; the start lines warn what it means; docs/hosts.md).
 */
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createConsoleCore } from '../core';
import type { RepairReport } from '../core/bridge/host-manifest';
import { resolveDataDir } from '../data-dir.mjs';
import { developerModeOptIn, developerModeStartLines, portFrom, startWebHost } from './server';
import { rendererAttestedGate } from '../core/trusted-input';

const RENDERER_DIR = fileURLToPath(new URL('../renderer/', import.meta.url));
const EXTENSION_DIR = path.resolve(fileURLToPath(new URL('../../extension/dist/', import.meta.url)));
/** The bundled native host (npm run build:tools), which Chrome starts through the manifests the core writes. */
const HOST_SCRIPT = fileURLToPath(new URL('../tools/native-host.mjs', import.meta.url));

async function main(): Promise<void> {
  const port = portFrom(process.argv.slice(2), process.env);
  const developerMode = developerModeOptIn(process.argv.slice(2));
  const dataDir = resolveDataDir();
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });

  // $ECHO_CONSOLE_SOCKET: the same override the native host honours (src/native-host/socket-path.ts).
  const core = createConsoleCore({
    dataDir,
    ...(process.env.ECHO_CONSOLE_SOCKET ? { socketPath: process.env.ECHO_CONSOLE_SOCKET } : {}),
    // This process is Node: the launcher runs the host with the same binary.
    nativeHost: { hostScript: HOST_SCRIPT, nodePath: process.execPath },
    // The browser tab's input cannot be seen: decisions on the renderer's word; developer mode on
    // (and developer-console lines) only with the person's --developer-mode.
    inputGate: rendererAttestedGate({ developerMode }),
  });
  // The web host binds first, so the core knows the console's own origin before the
  // extension can report any tab: a tab showing the console is never shared with the agent.
  const host = await startWebHost({ api: core.api, subscribe: (l) => core.onEvent(l), rendererDir: RENDERER_DIR, port });
  core.setConsoleOrigins(host.origins);
  try {
    await core.start();
  } catch (e) {
    await host.close();
    throw e;
  }

  const snap = await core.api.getSnapshot();
  const endpoint = snap.ok ? snap.value.endpoint : null;
  const lines = [
    'Echo Console is running (web host).',
    `  Console:       ${host.consoleUrl}`,
    `  MCP endpoint:  ${endpoint?.url ?? '(unavailable)'}`,
    // No secret here: each agent gets its own token, made in the console (issue 9 item 2).
    `  Agent tokens:  ${agentTokensLine(snap.ok ? snap.value.agentTokens.map((t) => t.name) : [])}`,
    existsSync(path.join(EXTENSION_DIR, 'manifest.json'))
      ? `  Extension:     ${EXTENSION_DIR}  (chrome://extensions → Developer mode → Load unpacked)`
      : `  Extension:     ${EXTENSION_DIR}  (not built yet: run \`npm run build:extension\`)`,
    `  Native host:   ${nativeHostLine(core.nativeHostReport)}`,
    `  Data:          ${dataDir}`,
    'Open the console URL in Chrome or Chromium. Press Ctrl+C to stop.',
    'The console URL works once: the first tab that opens it gets the session (in a cookie no script can read).',
    'Note: in a browser tab, a script running in the console’s own tab (another extension, for example) cannot be',
    'told apart from you and could approve for you. For approvals only you can make, use the desktop app (npm start).',
    ...developerModeStartLines(developerMode),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stdout.write(`\nStopping (${signal})…\n`);
    void Promise.allSettled([host.close(), Promise.resolve(core.stop())]).then(() => process.exit(0));
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

/** The agents' token names, or how to make the first one. */
function agentTokensLine(names: string[]): string {
  return names.length
    ? `${names.join(', ')}  (a new agent: Connection → Agent tokens → Create)`
    : 'none yet: in the console, Connection → Agent tokens → Create, one per agent';
}

/** Which browsers can now start the native host, in one line. */
function nativeHostLine(r: RepairReport | null): string {
  if (!r) return '(not written)';
  const manifests = r.items.filter((i) => i.kind === 'manifest' || i.kind === 'registry');
  const names: Record<string, string> = { chrome: 'Chrome', chromium: 'Chromium', edge: 'Edge', brave: 'Brave' };
  const label = (i: { browser?: string }) => names[i.browser ?? ''] ?? String(i.browser);
  const ready = [...new Set(manifests.filter((i) => i.action !== 'skipped' && i.action !== 'failed').map(label))];
  const failed = manifests.filter((i) => i.action === 'failed').map(label);
  if (ready.length === 0 && failed.length === 0) return 'no Chrome, Chromium, Edge or Brave profile found: start the browser once, then restart the console';
  return `registered for ${ready.join(', ') || 'none'}${failed.length ? ` (failed: ${failed.join(', ')})` : ''}`;
}

main().catch((e: unknown) => {
  process.stderr.write(`echo-console: could not start the web host: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
