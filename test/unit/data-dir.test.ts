// The one data-dir rule (src/main/data-dir.mjs) that the Electron host, the web
// host and the stdio command all call.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: plain ESM JavaScript without type declarations
import * as bin from '../../bin/echo-console-mcp.mjs';
import { agentSocketPath, resolveDataDir } from '../../src/main/data-dir.mjs';

const HOME = '/home/me';

describe('resolveDataDir', () => {
  it.each<[string, Record<string, string>, string, string]>([
    ['Linux default', {}, 'linux', '/home/me/.config/echo-console'],
    ['Linux with XDG_CONFIG_HOME', { XDG_CONFIG_HOME: '/x/cfg' }, 'linux', '/x/cfg/echo-console'],
    ['an empty XDG_CONFIG_HOME is ignored (XDG spec: unset or empty)', { XDG_CONFIG_HOME: '' }, 'linux', '/home/me/.config/echo-console'],
    ['a relative XDG_CONFIG_HOME is ignored (XDG spec: must be absolute)', { XDG_CONFIG_HOME: 'cfg' }, 'linux', '/home/me/.config/echo-console'],
    ['a dot-relative XDG_CONFIG_HOME is ignored', { XDG_CONFIG_HOME: './cfg' }, 'freebsd', '/home/me/.config/echo-console'],
    ['macOS', { XDG_CONFIG_HOME: '/x/cfg' }, 'darwin', '/home/me/Library/Application Support/echo-console'],
    ['Windows with APPDATA', { APPDATA: 'C:\\Users\\me\\AppData\\Roaming' }, 'win32', 'C:\\Users\\me\\AppData\\Roaming\\echo-console'],
    ['Windows with an empty APPDATA', { APPDATA: '' }, 'win32', '\\home\\me\\AppData\\Roaming\\echo-console'],
    ['ECHO_CONSOLE_DATA_DIR wins', { ECHO_CONSOLE_DATA_DIR: '/data/echo', XDG_CONFIG_HOME: '/x/cfg' }, 'linux', '/data/echo'],
  ])('%s', (_what, env, platform, expected) => {
    expect(resolveDataDir(env, platform, HOME)).toBe(expected);
  });

  it('resolves a relative ECHO_CONSOLE_DATA_DIR against the working folder, and ignores an empty one', () => {
    expect(resolveDataDir({ ECHO_CONSOLE_DATA_DIR: 'rel/dir' }, 'linux', HOME)).toBe(path.resolve('rel/dir'));
    expect(resolveDataDir({ ECHO_CONSOLE_DATA_DIR: '' }, 'linux', HOME)).toBe('/home/me/.config/echo-console');
  });

  it('is always absolute', () => {
    for (const env of [{}, { XDG_CONFIG_HOME: '' }, { XDG_CONFIG_HOME: 'x' }, { ECHO_CONSOLE_DATA_DIR: 'y' }]) {
      expect(path.isAbsolute(resolveDataDir(env, 'linux', HOME))).toBe(true);
    }
  });

  it('is the very function the stdio command uses', () => {
    expect(bin.resolveDataDir).toBe(resolveDataDir);
  });
});

describe('agentSocketPath (the stdio command connects where the console listens; issue 9 item 2)', () => {
  it('is run/agent.sock in the data folder on Unix, and a named pipe per data folder on Windows', () => {
    expect(agentSocketPath('/home/me/.config/echo-console', 'linux')).toBe('/home/me/.config/echo-console/run/agent.sock');
    expect(agentSocketPath('/Users/me/Library/Application Support/echo-console', 'darwin')).toBe('/Users/me/Library/Application Support/echo-console/run/agent.sock');
    const a = agentSocketPath('C:\\Users\\me\\AppData\\Roaming\\echo-console', 'win32');
    expect(a).toMatch(/^\\\\\.\\pipe\\echo-console-agent-[0-9a-f]{16}$/);
    expect(agentSocketPath('C:\\other', 'win32')).not.toBe(a);
  });

  it('is the very function the stdio command uses', () => {
    expect(bin.agentSocketPath).toBe(agentSocketPath);
  });
});
