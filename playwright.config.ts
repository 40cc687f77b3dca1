// End-to-end tests only: real Debian Chromium (WebMCP on) with the real built
// extension loaded. Browsers are never downloaded (docs/browser-facts.md,
// "Running Chromium here"); CHROMIUM_PATH
// overrides /usr/bin/chromium. Two workers, one per core: each test launches its
// own browser, core and data folder (nothing is shared between files but the
// throw-away ledger key folder below, keyed by data folder), and most of a test's
// time is waiting on the page, the link or a timer, so two files at once finish
// sooner than one after the other. Tests inside a file still
// run in order (fullyParallel false): some files build on their own earlier steps.
// No test asserts a time, so a busy machine makes them slower, not red.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from '@playwright/test';

// The ledger's signing keys of the tests' throw-away data folders go to a throw-away folder,
// never the person's ~/.local/state/echo-console-keys (src/main/core/ledger/key-holder.ts).
process.env.ECHO_CONSOLE_LEDGER_KEY_DIR ??= mkdtempSync(join(tmpdir(), 'echo-test-keys-'));

export default defineConfig({
  testDir: 'test/e2e',
  testMatch: /.*\.spec\.ts$/,
  fullyParallel: false,
  workers: 2,
  retries: 0,
  timeout: 90_000,
  expect: { timeout: 15_000 },
  reporter: [['list']],
  outputDir: 'test-results',
});
