/**
 * Developer mode (issue 11 item 2; src/main/core/developer-mode.ts): never
 * persisted (off at every start, even after an older console wrote "on"),
 * switched on only by the person through the trusted-input gate, off again by
 * itself after the idle time (the person may set it), with receipts saying who
 * and why; its tools exist only while it is on, and each change is announced.
 * The core runs for real with the Electron host's input gate fed by the test;
 * only the idle timer is injected (no sleeping).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createConsoleCore, type ConsoleCore } from '../../src/main/core';
import { AgentToolRegistry } from '../../src/main/core/agent/registry';
import { defineAgentTool } from '../../src/main/core/agent/tool';
import { DeveloperMode, type DeveloperModeSwitch } from '../../src/main/core/developer-mode';
import { createInputGate } from '../../src/main/core/trusted-input';
import type { ConsoleEvent } from '../../src/shared/ipc';
import { FakeLink } from './broker.fixtures';

/** Timers the test fires by hand: the latest armed one, its length (ms) and whether it was cancelled. */
class HandTimers {
  armed: Array<{ fn: () => void; ms: number; cancelled: boolean }> = [];
  readonly set = (fn: () => void, ms: number) => {
    const t = { fn, ms, cancelled: false };
    this.armed.push(t);
    return { cancel: () => void (t.cancelled = true) };
  };
  /** The one live timer (armed and not cancelled). */
  live() {
    const live = this.armed.filter((t) => !t.cancelled);
    expect(live.length).toBeLessThanOrEqual(1);
    return live[0];
  }
}

let cores: ConsoleCore[] = [];
let dirs: string[] = [];
afterEach(async () => {
  for (const c of cores.splice(0)) await c.stop();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function start(dir: string, timers: HandTimers) {
  const gate = createInputGate();
  const core = createConsoleCore({ dataDir: dir, mcpPort: 0, link: new FakeLink(), inputGate: gate, developerModeTimer: timers.set });
  await core.start();
  cores.push(core);
  const events: ConsoleEvent[] = [];
  core.onEvent((e) => events.push(e));
  /** The person presses a key in the console window, then asks for developer mode on. */
  const switchOnAsThePerson = async () => {
    gate.noteInput('keyDown');
    return core.api.updateSettings({ developerMode: true });
  };
  return { core, gate, events, switchOnAsThePerson };
}

describe('developer mode', () => {
  it('is never persisted: on in one run, off in the next; an older file that says "on" starts off and is written back off', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'echo-devmode-'));
    dirs.push(dir);
    const timers = new HandTimers();
    const first = await start(dir, timers);
    expect(await first.switchOnAsThePerson()).toMatchObject({ ok: true, value: { developerMode: true } });
    expect(first.core.developerMode.on).toBe(true);
    expect(JSON.parse(readFileSync(join(dir, 'settings.json'), 'utf8')).developerMode).toBe(false);
    await first.core.stop();
    cores = [];

    // An older console wrote `true`: read as off, and the file no longer says on.
    const file = join(dir, 'settings.json');
    writeFileSync(file, JSON.stringify({ ...JSON.parse(readFileSync(file, 'utf8')), developerMode: true }));
    const second = await start(dir, timers);
    expect(second.core.developerMode.on).toBe(false);
    expect((await second.core.api.getSnapshot()).ok && (await second.core.api.getSnapshot())).toMatchObject({ value: { settings: { developerMode: false } } });
    expect(JSON.parse(readFileSync(file, 'utf8')).developerMode).toBe(false);
  });

  it('switches itself off after the idle time with no press of the person: receipted as the console, why and after how long; a press re-arms the time; the person may set it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'echo-devmode-'));
    dirs.push(dir);
    const timers = new HandTimers();
    const { core, events, switchOnAsThePerson } = await start(dir, timers);
    expect((await core.api.updateSettings({ developerModeIdleMinutes: 5 })).ok).toBe(true);
    expect((await switchOnAsThePerson()).ok).toBe(true);
    expect(core.ledger.query({ event: 'developer-mode-on', limit: 1 }).receipts[0]).toMatchObject({ actor: { kind: 'person' }, detail: { on: true, by: 'person' } });
    expect(timers.live()?.ms).toBe(5 * 60_000);

    // A press in the console window (the Electron host calls touch) starts the idle time again.
    const before = timers.live()!;
    core.developerMode.touch();
    expect(before.cancelled).toBe(true);
    expect(timers.live()).not.toBe(before);

    timers.live()!.fn();
    expect(core.developerMode.on).toBe(false);
    expect(core.ledger.query({ event: 'developer-mode-off', limit: 1 }).receipts[0]).toMatchObject({
      actor: { kind: 'console' },
      detail: { on: false, by: 'console', why: 'idle-timeout', idleMs: 5 * 60_000 },
    });
    expect(events.some((e) => e.kind === 'settings' && e.settings.developerMode === false)).toBe(true);
    expect(timers.live()).toBeUndefined();
    // Off by the person: the person is the actor.
    expect((await switchOnAsThePerson()).ok).toBe(true);
    expect((await core.api.updateSettings({ developerMode: false })).ok).toBe(true);
    expect(core.ledger.query({ event: 'developer-mode-off', limit: 1 }).receipts[0]).toMatchObject({ actor: { kind: 'person' }, detail: { by: 'person' } });
    // Bounds of the idle time are the API's schema.
    expect(await core.api.updateSettings({ developerModeIdleMinutes: 0 })).toMatchObject({ ok: false, error: { code: 'invalid-params' } });
    expect(await core.api.updateSettings({ developerModeIdleMinutes: 481 })).toMatchObject({ ok: false, error: { code: 'invalid-params' } });
  });

  it('its tools exist only while it is on, and each switch is announced to the registry (tools/list_changed)', () => {
    const tools = new AgentToolRegistry();
    const raw = defineAgentTool({
      name: 'page_run_script_test',
      title: 'test',
      description: 'a developer tool for this test',
      inputSchema: { type: 'object', additionalProperties: false, properties: {} } as const,
      kind: 'mutation',
      faculty: 'console',
      handle: async () => ({ content: [] }),
    });
    let announced = 0;
    tools.onChange(() => void announced++);
    const switches: DeveloperModeSwitch[] = [];
    const timers = new HandTimers();
    const mode = new DeveloperMode({ tools, developerTools: [raw], idleMs: () => 1_000, onSwitch: (s) => switches.push(s), setTimer: timers.set });
    expect(tools.get(raw.name)).toBeUndefined();
    mode.switchOn();
    expect(tools.get(raw.name)).toBe(raw);
    expect(announced).toBe(1);
    mode.switchOn(); // already on: no second switch, no second announcement
    expect(switches).toEqual([{ on: true, by: 'person' }]);
    expect(announced).toBe(1);
    timers.live()!.fn();
    expect(tools.get(raw.name)).toBeUndefined();
    expect(announced).toBe(2);
    expect(switches.at(-1)).toEqual({ on: false, by: 'console', why: 'idle-timeout', idleMs: 1_000 });
    mode.switchOff(); // already off: nothing
    expect(switches).toHaveLength(2);
  });
});
