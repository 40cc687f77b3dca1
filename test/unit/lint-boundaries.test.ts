// The import boundaries of eslint.config.js (issue 7, item 8), proven to fire:
// each case lints a few lines as if they were a file in that folder, with the
// repository's own config through ESLint's Node API. If a rule is dropped or
// its pattern stops matching, the case that expects it fails.
import path from 'node:path';
import { ESLint } from 'eslint';
import { beforeAll, describe, expect, it } from 'vitest';

const ROOT = path.resolve(__dirname, '../..');
let eslint: ESLint;

beforeAll(() => {
  eslint = new ESLint({ cwd: ROOT, overrideConfigFile: path.join(ROOT, 'eslint.config.js') });
});

/** The `no-restricted-imports` messages for `code` linted as the file `file` (repo-relative). */
async function restricted(file: string, code: string): Promise<string[]> {
  const [r] = await eslint.lintText(code, { filePath: path.join(ROOT, file) });
  const fatal = r!.messages.filter((m) => m.fatal);
  expect(fatal, `${file} parses`).toEqual([]);
  return r!.messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

const NODE = /src\/shared imports no Node module/;
const ELECTRON = /must not import 'electron'|no 'electron' imports here/;
const HOSTS = /never import the core or the hosts/;
const USERS = /src\/shared imports nothing from the parts that use it/;

describe('lint boundaries', () => {
  it.each<[string, string, RegExp]>([
    // src/shared: no Node module, no electron, no core or hosts, no renderer or extension
    ['src/shared/x.ts', "import { createHash } from 'node:crypto';", NODE],
    ['src/shared/x.ts', "import { readFileSync } from 'fs';", NODE],
    ['src/shared/x.ts', "import { readFile } from 'fs/promises';", NODE],
    ['src/shared/x.ts', "export { join } from 'path';", NODE],
    ['src/shared/x.ts', "import type { Buffer } from 'node:buffer';", NODE],
    ['src/shared/x.ts', "import { app } from 'electron';", ELECTRON],
    ['src/shared/x.ts', "import { sha256HexSync } from '../main/core/digest';", HOSTS],
    ['src/shared/x.ts', "import { EXTENSION_ID } from '../renderer/text';", USERS],
    ['src/shared/x.ts', "import { x } from '../../extension/src/lib/sender';", USERS],
    // src/main/core: no electron
    ['src/main/core/x.ts', "import { app } from 'electron';", ELECTRON],
    ['src/main/core/bridge/x.ts', "import { ipcMain } from 'electron/main';", ELECTRON],
    // the renderer: no core, no hosts, no electron
    ['src/renderer/transport/x.ts', "import type { EchoApi } from '../../preload/api';", HOSTS],
    ['src/renderer/x.ts', "import { createConsoleCore } from '../main/core';", HOSTS],
    ['src/renderer/stores/x.ts', "import { resolveSocketPath } from '../../native-host/socket-path';", HOSTS],
    ['src/renderer/components/X.tsx', "import { startWebHost } from '../../main/web/server';\nexport const X = () => null;", HOSTS],
    ['src/renderer/x.ts', "import { ipcRenderer } from 'electron';", ELECTRON],
    // the extension: no core, no hosts, no electron
    ['extension/src/background/x.ts', "import { Broker } from '../../../src/main/core/broker';", HOSTS],
    ['extension/src/lib/x.ts', "import type { EchoApi } from '../../../src/preload/index';", HOSTS],
    ['extension/src/content/x.ts', "import { relay } from '../../../src/native-host/relay';", HOSTS],
    ['extension/src/popup/x.ts', "import { shell } from 'electron';", ELECTRON],
  ])('%s: %s is refused', async (file, code, why) => {
    const messages = await restricted(file, code);
    expect(messages.length, messages.join('\n')).toBeGreaterThan(0);
    expect(messages.some((m) => why.test(m)), messages.join('\n')).toBe(true);
  });

  it.each<[string, string]>([
    ['src/shared/x.ts', "import { LIMITS } from './limits';\nimport canonicalize from 'canonicalize';"],
    ['src/main/core/x.ts', "import { createHash } from 'node:crypto';\nimport { LIMITS } from '../../shared/limits';"],
    ['src/renderer/transport/x.ts', "import type { EchoApi } from '../../shared/ipc';\nimport { WS_PATH } from '../../shared/web-wire';"],
    ['extension/src/background/x.ts', "import { boundResult } from '../../../src/shared/bounds';\nimport { senderKind } from '../lib/sender';"],
    ['src/main/web/x.ts', "import { app } from 'electron';\nimport { createConsoleCore } from '../core';"],
  ])('%s: allowed imports pass', async (file, code) => {
    expect(await restricted(file, code)).toEqual([]);
  });
});
