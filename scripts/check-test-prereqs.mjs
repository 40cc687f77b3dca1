// Says plainly what is missing before the test suite starts, instead of a
// stack trace from deep inside Playwright. Chromium is never downloaded: it
// comes from the system (Debian: `apt-get install chromium`), or CHROMIUM_PATH.
import { existsSync } from 'node:fs';

const chromium = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const major = Number(process.versions.node.split('.')[0]);
const problems = [];
if (major < 20) problems.push(`Node ${process.versions.node} is too old: Node 20 or newer is needed.`);
if (!existsSync(chromium)) {
  problems.push(
    `Chromium was not found at ${chromium}. Install it (Debian/Ubuntu: sudo apt-get install -y chromium)` +
      ' or set CHROMIUM_PATH to a Chromium 146+ binary. The end-to-end tests need it with WebMCP (they pass --enable-features=WebMCPTesting).',
  );
}
if (problems.length) {
  for (const p of problems) console.error(`echo-console: ${p}`);
  process.exit(1);
}
