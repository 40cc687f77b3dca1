/**
 * The README's setup facts are the code's (issue 8 item 9): the native host manifest's name and
 * the folders the console writes it to (src/main/core/bridge/host-manifest.ts `manifestTargets`),
 * the popup's words it quotes (extension/src/popup/popup.ts, background/link-view.ts), and the
 * port-conflict message naming the settings file.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { BROWSERS, manifestTargets } from '../../src/main/core/bridge/host-manifest';
import { NATIVE_HOST_NAME } from '../../src/shared/protocol';
import { createConsoleCore } from '../../src/main/core';
import { FakeLink } from './broker.fixtures';

const root = (p: string) => fileURLToPath(new URL(`../../${p}`, import.meta.url));
const README = readFileSync(root('README.md'), 'utf8');

describe('README: the native host', () => {
  it('names the manifest and, for every browser and platform, the folder (or registry key) the console writes', () => {
    expect(README).toContain(`\`${NATIVE_HOST_NAME}.json\``);
    const rows = README.split('\n').filter((l) => l.trimStart().startsWith('| '));
    for (const [platform, home] of [['linux', '/home/u'], ['darwin', '/Users/u']] as const) {
      const base = platform === 'linux' ? `${home}/.config/` : `${home}/Library/Application Support/`;
      for (const t of manifestTargets({ platform, home, env: {} })) {
        const rel = t.manifestPath.slice(base.length).replace(`${NATIVE_HOST_NAME}.json`, '');
        expect(rows.some((r) => r.includes(`\`${rel}\``)), `${platform} ${t.browser}: ${rel}`).toBe(true);
      }
    }
    for (const t of manifestTargets({ platform: 'win32', home: 'C:\\Users\\u', env: {}, windowsManifestDir: 'C:\\d' })) {
      const key = (t as { registryKey?: string }).registryKey as string;
      const rel = key.replace('HKCU\\Software\\', '');
      expect(rows.some((r) => r.includes(`\`${rel}\``)), `win32 ${t.browser}: ${rel}`).toBe(true);
    }
    expect(BROWSERS.length).toBe(4);
    expect(README).toContain('`DIR/NativeMessagingHosts/`');
  });

  it("quotes the popup's words exactly", () => {
    const popup = readFileSync(root('extension/src/popup/popup.ts'), 'utf8') + readFileSync(root('extension/src/background/link-view.ts'), 'utf8');
    const section = README.slice(README.indexOf('What the popup says, and what to do:'), README.indexOf('4. **WebMCP**'));
    const quoted = [...section.matchAll(/"([^"]{12,})"/g)].map((m) => (m[1] as string).replace(/\s+/g, ' '));
    expect(quoted.length).toBeGreaterThanOrEqual(3);
    const source = popup.replace(/'\s*\+\s*'/g, '').replace(/\\'/g, "'");
    for (const q of quoted) expect(source, q).toContain(q);
  });
});

describe('the MCP port conflict', () => {
  it('names the settings file that holds mcpPort', async () => {
    const a = mkdtempSync(join(tmpdir(), 'echo-port-a-'));
    const b = mkdtempSync(join(tmpdir(), 'echo-port-b-'));
    const first = createConsoleCore({ dataDir: a, mcpPort: 0, link: new FakeLink() });
    await first.start();
    const port = Number(new URL(first.endpoint.url).port);
    const second = createConsoleCore({ dataDir: b, mcpPort: port, link: new FakeLink() });
    try {
      await expect(second.start()).rejects.toThrow(new RegExp(`MCP port ${port} .*already in use.*"mcpPort" in ${join(b, 'settings.json').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    } finally {
      await second.stop().catch(() => undefined);
      await first.stop();
      rmSync(a, { recursive: true, force: true });
      rmSync(b, { recursive: true, force: true });
    }
  });
});
