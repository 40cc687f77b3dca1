import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';

// The ledger's signing keys of the tests' throw-away data folders go to a throw-away folder,
// never the person's ~/.local/state/echo-console-keys (src/main/core/ledger/key-holder.ts).
process.env.ECHO_CONSOLE_LEDGER_KEY_DIR ??= mkdtempSync(join(tmpdir(), 'echo-test-keys-'));

export default defineConfig({
  test: {
    include: ['test/unit/**/*.test.ts', 'test/unit/**/*.test.tsx'],
    environment: 'node',
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
