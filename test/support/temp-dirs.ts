/**
 * Temporary folders for a test file, removed after each test. Call `useTempDirs`
 * once at the top of the file (it registers the vitest `afterEach` that removes them).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach } from 'vitest';

/**
 * @param prefix the folder name's prefix under the OS temp folder (`echo-secrets-` → /tmp/echo-secrets-XXXXXX).
 * @returns a function that makes a new empty folder and returns its absolute path.
 */
export function useTempDirs(prefix: string): () => string {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  return () => {
    const d = mkdtempSync(path.join(tmpdir(), prefix));
    dirs.push(d);
    return d;
  };
}
