// One copy of every contract (issue 7, item 7): each test here scans the
// sources (src/, extension/src/, bin/) and fails when a second definition of a
// shared contract appears beside the one module that owns it.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(__dirname, '../..');
const SOURCE_DIRS = ['src', 'extension/src', 'bin'];
const SOURCE_EXT = /\.(ts|tsx|mts|mjs|js)$/;

/** Every source file under SOURCE_DIRS, as [repo-relative path, text]. */
function sources(): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  const walk = (dir: string): void => {
    for (const e of readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
      const rel = `${dir}/${e.name}`;
      if (e.isDirectory()) {
        if (e.name !== 'node_modules' && e.name !== 'dist') walk(rel);
      } else if (SOURCE_EXT.test(e.name)) {
        out.push([rel, readFileSync(path.join(ROOT, rel), 'utf8')]);
      }
    }
  };
  for (const d of SOURCE_DIRS) walk(d);
  return out;
}

const ALL = sources();

/** The files whose text matches `re`. */
function filesMatching(re: RegExp): string[] {
  return ALL.filter(([, text]) => re.test(text)).map(([f]) => f).sort();
}

describe('the scan itself', () => {
  it('sees the sources of every part', () => {
    const files = ALL.map(([f]) => f);
    expect(files).toContain('src/main/core/index.ts');
    expect(files).toContain('extension/src/background/invoke.ts');
    expect(files).toContain('bin/echo-console-mcp.mjs');
    expect(files).toContain('src/renderer/App.tsx');
  });
});

describe('one UTF-8 truncation and one result bounding (src/shared/bounds.ts)', () => {
  it('defines truncateUtf8, boundText and boundResult only there', () => {
    const defs = /(function\s+(truncateUtf8|truncateUTF8|boundResult|boundText|shapeResult)\b|(const|let)\s+(truncateUtf8|boundResult|boundText|shapeResult)\s*=)/;
    expect(filesMatching(defs)).toEqual(['src/shared/bounds.ts']);
  });
  it('has no second byte-wise cut (TextDecoder over a sliced encoding) elsewhere', () => {
    const cut = /encode\([^)]*\)\s*\.(slice|subarray)\(/;
    expect(filesMatching(cut)).toEqual([]);
  });
});
