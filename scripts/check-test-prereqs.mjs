// Says plainly what is missing before the test suite starts, instead of a
// stack trace from deep inside Playwright. Chromium is never downloaded: it
// comes from the system (Debian: `apt-get install chromium`), or CHROMIUM_PATH.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/** The Chromium whose WebMCP shapes the tests pin (docs/browser-facts.md): executeTool takes an object there. */
const MIN_CHROMIUM_MAJOR = 156;

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
else {
  let version = '';
  try {
    version = execFileSync(chromium, ['--version'], { encoding: 'utf8', timeout: 20_000, stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    /* reported below as an unknown version */
  }
  const m = /(\d+)\.\d+\.\d+/.exec(version);
  if (!m || Number(m[1]) < MIN_CHROMIUM_MAJOR) {
    problems.push(
      `Chromium at ${chromium} is ${m ? `version ${m[1]}` : 'of an unknown version'}; the end-to-end tests need ${MIN_CHROMIUM_MAJOR} or newer ` +
        '(older builds take executeTool arguments as a JSON string). Debian 12: sudo apt-get update && sudo apt-get install -y chromium (bookworm-security has 156).',
    );
  }
}
if (problems.length) {
  for (const p of problems) console.error(`echo-console: ${p}`);
  process.exit(1);
}
