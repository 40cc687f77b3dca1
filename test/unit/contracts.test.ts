// One copy of every contract (issue 7, item 7): each test here scans the
// sources (src/, extension/src/, bin/) and fails when a second definition of a
// shared contract appears beside the one module that owns it.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { INVOCATION_OUTCOMES, OUTCOME_EVENTS, RECEIPT_EVENTS, isOutcomeEvent } from '../../src/shared/receipt';

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
      } else if (SOURCE_EXT.test(e.name) && !/\.d\.m?ts$/.test(e.name)) {
        // Declarations (.d.ts, .d.mts) define types, not a second implementation.
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
    expect(files).toContain('extension/src/background/dispatch.ts');
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

describe('one outcome list (src/shared/receipt.ts)', () => {
  // A run of three or more quoted strings separated only by `,` or `|` (an array
  // literal, a union type, the arguments of oneOf(...)) made of outcome names alone
  // is a second outcome list. Lists of other things that happen to contain
  // outcomes (REASON_EVENTS, RECEIPT_EVENTS) hold non-outcome names too.
  const RUN = /(?:(['"])[a-z-]+\1\s*[,|]\s*(?:\/\/[^\n]*\n\s*)?){2,}(['"])[a-z-]+\2/g;
  const outcomeLists = (text: string): string[] =>
    [...text.matchAll(RUN)].map((m) => m[0]).filter((run) => {
      const names = [...run.matchAll(/['"]([a-z-]+)['"]/g)].map((n) => n[1]!);
      return names.every((n) => isOutcomeEvent(n));
    });

  it('finds a list written the old ways (so the scan can fail)', () => {
    expect(outcomeLists("type Outcome = 'succeeded' | 'failed' | 'outcome-unknown' | 'refused' | 'cancelled';")).toHaveLength(1);
    expect(outcomeLists("oneOf('succeeded', 'failed', 'outcome-unknown')")).toHaveLength(1);
    expect(outcomeLists("const REASONS = ['refused', 'denied', 'pairing-rejected'];")).toHaveLength(0);
  });
  it('has INVOCATION_OUTCOMES and OUTCOME_EVENTS as its only lists', () => {
    const found = ALL.flatMap(([f, text]) => outcomeLists(text).map((run) => `${f}: ${run.replace(/\s+/g, ' ')}`));
    expect(found).toEqual([`src/shared/receipt.ts: 'succeeded', 'failed', 'outcome-unknown', 'refused', 'cancelled'`]);
  });
  it('derives the ending events from the invocation outcomes, and both are receipt events', () => {
    expect(OUTCOME_EVENTS.slice(0, INVOCATION_OUTCOMES.length)).toEqual([...INVOCATION_OUTCOMES]);
    for (const o of OUTCOME_EVENTS) expect(RECEIPT_EVENTS).toContain(o);
  });
});

describe('one data-dir rule (src/main/data-dir.mjs)', () => {
  const OWNER = 'src/main/data-dir.mjs';
  it('is the only source that reads ECHO_CONSOLE_DATA_DIR or joins a folder ending in echo-console', () => {
    const reads = /env\s*(\.\s*ECHO_CONSOLE_DATA_DIR|\[\s*['"]ECHO_CONSOLE_DATA_DIR['"]\s*\])/;
    const joins = /join\([^()]*(\([^()]*\)[^()]*)*['"]echo-console['"]\s*\)/;
    const rule = /Application Support['"]\s*,\s*['"]echo-console['"]|env\.APPDATA|XDG_CONFIG_HOME\s*(\|\||\?\?)/;
    expect(filesMatching(reads)).toEqual([OWNER]);
    expect(filesMatching(joins)).toEqual([]); // the owner joins DATA_DIR_NAME, nobody joins the literal
    expect(filesMatching(rule).filter((f) => f !== OWNER)).toEqual([]);
    expect(filesMatching(/function\s+(resolveDataDir|defaultDataDir)\b/)).toEqual([OWNER]);
  });
  it('finds the old copies written the old ways (so the scan can fail)', () => {
    expect("return path.join(env.XDG_CONFIG_HOME || path.join(home, '.config'), 'echo-console');").toMatch(/join\([^()]*(\([^()]*\)[^()]*)*['"]echo-console['"]\s*\)/);
    expect('if (env.ECHO_CONSOLE_DATA_DIR) return').toMatch(/env\s*(\.\s*ECHO_CONSOLE_DATA_DIR)/);
  });
  it('is imported by both hosts and the stdio command', () => {
    const importers = filesMatching(/import\s*\{[^}]*\bresolveDataDir\b[^}]*\}\s*from\s*['"][./]+(main\/)?(src\/main\/)?data-dir\.mjs['"]/);
    expect(importers).toEqual(['bin/echo-console-mcp.mjs', 'src/main/index.ts', 'src/main/web/index.ts']);
  });
});

describe('one console-API payload table (src/shared/api-schemas.ts), validated once in the core', () => {
  // A schema table names ConsoleApi methods as keys whose values are schemas
  // (`shareTab: {`, `shareTab: obj(`), or spells the decision enum; CHANNELS
  // (`shareTab: 'tabs:share'`) and api objects (`shareTab: handler(`, `shareTab: (p) =>`) do not.
  const TABLE = /\b(shareTab|decideApproval|updateSettings|confirmPairing)\s*:\s*(\{|obj\(|schema\()|enum\s*:\s*\[\s*['"]approve['"]\s*,\s*['"]deny['"]/;
  it('finds a table written the old ways (so the scan can fail)', () => {
    expect("shareTab: obj({ tabId: tabIdSchema }, ['tabId']),").toMatch(TABLE);
    expect("  decideApproval: {\n    type: 'object',").toMatch(TABLE);
    expect("shareTab: 'tabs:share',").not.toMatch(TABLE);
    expect("shareTab: handler('shareTab', async (p) => {").not.toMatch(TABLE);
  });
  it('has exactly one table', () => {
    expect(filesMatching(TABLE)).toEqual(['src/shared/api-schemas.ts']);
  });
  it('compiles and runs it in one place, the core, and the hosts do not validate', () => {
    expect(filesMatching(/\bAPI_PAYLOAD_SCHEMAS\s*[[:=]|import[^;]*\bAPI_PAYLOAD_SCHEMAS\b/)).toEqual(['src/main/core/api/payloads.ts', 'src/shared/api-schemas.ts']);
    expect(filesMatching(/\bvalidateApiPayload\s*\(/)).toEqual(['src/main/core/api/index.ts', 'src/main/core/api/payloads.ts']);
    for (const host of ['src/main/ipc.ts', 'src/main/web/server.ts', 'src/main/api-dispatch.ts']) {
      const text = ALL.find(([f]) => f === host)?.[1];
      expect(text, host).toBeDefined();
      expect(text, host).not.toMatch(/from\s+['"]ajv['"]|\.compile\(/);
    }
  });
});

describe('the web host wire contract lives in src/shared/web-wire.ts', () => {
  it('defines the WebSocket messages, path, close codes and token key only there', () => {
    const defs = /export\s+(const|type|interface)\s+(WS_CLOSE|WS_PATH|WsClientMessage|WsServerMessage|TOKEN_FRAGMENT_KEY)\b/;
    expect(filesMatching(defs)).toEqual(['src/shared/web-wire.ts']);
  });
  it('defines window.echo (EchoApi) once, beside ConsoleApi', () => {
    expect(filesMatching(/interface\s+EchoApi\b|type\s+EchoApi\s*=/)).toEqual(['src/shared/ipc.ts']);
  });
});

describe('one grant shape check (src/shared/protocol.ts validateGrantShape)', () => {
  it('no other module checks the fields of a grant itself: every side calls validateGrantShape', () => {
    // A hand-written grant check reads the grant's own fields with type tests, as the
    // extension's old `isGrantShaped` did (`typeof x.nonce === 'string' && HEX32.test(x.nonce)`).
    const handWritten = /(function\s+isGrantShaped\b|typeof\s+(g|x|grant)\.(nonce|mac|subjectHash|urlHash)\s*===|HEX(32|64)\.test\(\s*(g|x|grant)\.(nonce|mac|subjectHash|urlHash|argumentsHash)\))/;
    expect(filesMatching(handWritten)).toEqual([]);
    // Exactly one definition, and both the signer and the extension's checks use it.
    expect(filesMatching(/export const validateGrantShape\b/)).toEqual(['src/shared/protocol.ts']);
    expect(filesMatching(/validateGrantShape\(/)).toEqual(expect.arrayContaining(['src/shared/grant.ts', 'extension/src/lib/grant-checks.ts']));
    // The scan can fail: the extension's old check matches it.
    expect(handWritten.test("typeof x.nonce === 'string' && HEX32.test(x.nonce)")).toBe(true);
  });
});
