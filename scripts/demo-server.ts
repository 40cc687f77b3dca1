/**
 * `npm run demo`: serves the WebMCP demo and hostile pages on 127.0.0.1 and
 * prints their URLs. Ports: 8765 (demo), 8766 (hostile), 8767 (cross-origin),
 * overridable with --port= --hostile-port= --cross-origin-port= or
 * DEMO_PORT, DEMO_HOSTILE_PORT, DEMO_CROSS_ORIGIN_PORT (0 picks a free port).
 * --verbose logs each request. Open the pages in Chromium started with
 * --enable-features=WebMCPTesting. See docs/demo.md.
 */
import { DEFAULT_DEMO_PORTS, startDemoServers } from '../test/support/demo-servers';

function portFrom(flag: string, env: string, fallback: number): number {
  const arg = process.argv.find((a) => a.startsWith(`--${flag}=`));
  const raw = arg ? arg.slice(flag.length + 3) : process.env[env];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > 65535) {
    console.error(`demo: ${arg ? `--${flag}` : env} must be a port number from 0 to 65535, not "${raw}"`);
    process.exit(2);
  }
  return n;
}

const verbose = process.argv.includes('--verbose');
const servers = await startDemoServers({
  port: portFrom('port', 'DEMO_PORT', DEFAULT_DEMO_PORTS.port),
  hostilePort: portFrom('hostile-port', 'DEMO_HOSTILE_PORT', DEFAULT_DEMO_PORTS.hostilePort),
  crossOriginPort: portFrom('cross-origin-port', 'DEMO_CROSS_ORIGIN_PORT', DEFAULT_DEMO_PORTS.crossOriginPort),
  log: verbose ? (line) => console.log(line) : undefined,
}).catch((error: unknown) => {
  const code = (error as { code?: string }).code;
  console.error(code === 'EADDRINUSE' ? `demo: a port is already in use (${String(error)}); choose others with --port= etc.` : `demo: ${String(error)}`);
  process.exit(1);
});

console.log(`Echo Console demo pages (open in Chromium with --enable-features=WebMCPTesting)
  index          ${servers.demoOrigin}/
  demo origin    ${servers.demoOrigin}
  hostile origin ${servers.hostileOrigin}
  cross-origin   ${servers.crossOrigin}
`);
for (const page of servers.pages) {
  if (page.id !== 'index') console.log(`  ${page.id.padEnd(20)} ${page.url}`);
}
console.log('\nCtrl+C stops.');

const stop = () => {
  void servers.close().then(() => process.exit(0));
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
