// The developer console's session (src/renderer/terminal/session.ts) with a real headless xterm as
// its screen. The backend here is the test's: the real one (the console API's person-run entry and
// the raw-JavaScript faculty) is driven end to end in test/e2e/developer-console.spec.ts.
import { Terminal } from '@xterm/headless';
import { describe, expect, it } from 'vitest';
import type { ScriptOutput, ScriptRun } from '../../src/shared/raw-script';
import { DeveloperConsoleSession, PRINT_LIMIT, untrustedText } from '../../src/renderer/terminal/session';

/** A run as the console reports it (src/shared/raw-script.ts). */
function run(over: Omit<Partial<ScriptRun>, 'output'> & { output?: Partial<ScriptOutput> | null } = {}): ScriptRun {
  const { output, ...rest } = over;
  return {
    runId: 'run-1', requestId: 'req-1', actor: 'person', tabId: 7, frameId: 0, world: 'MAIN', code: 'x', codeHash: 'ab'.repeat(32),
    status: 'succeeded', startedAt: 1, endedAt: 2, error: null, offerReload: false, ...rest,
    output: output === null ? null : { status: 'returned', valueType: 'string', value: null, valueTruncated: false, error: null, console: [], consoleOmitted: 0, elapsedMs: 1, ...output },
  };
}

const TABS = [
  { tabId: 7, origin: 'https://shop.example', title: 'Shop' },
  { tabId: 9, origin: 'https://bank.example', title: 'Bank' },
];

function setup() {
  const term = new Terminal({ cols: 80, rows: 30, allowProposedApi: true });
  const runs: { tabId: number; code: string }[] = [];
  const stops: string[] = [];
  let answer: (o: ScriptRun) => void = () => undefined;
  const backend = {
    run: (tabId: number, code: string) => {
      runs.push({ tabId, code });
      return new Promise<ScriptRun>((r) => (answer = r));
    },
    stop: async (runId: string) => {
      stops.push(runId);
    },
    reload: async () => ({ ok: true }),
  };
  const writes: Promise<void>[] = [];
  const s = new DeveloperConsoleSession((d) => writes.push(new Promise<void>((r) => term.write(d, r))), () => term.cols, backend);
  const settle = async () => {
    for (let i = 0; i < 5; i++) {
      await Promise.all(writes);
      await new Promise((r) => setTimeout(r, 0));
    }
  };
  const screen = () => {
    const b = term.buffer.active;
    const out: string[] = [];
    for (let i = 0; i < b.length; i++) out.push(b.getLine(i)!.translateToString(true));
    return out.join('\n').trimEnd();
  };
  /** Type a line and press Enter as the person (`trusted`) or as a script. */
  const enter = async (line: string, trusted = true) => {
    s.data(line);
    s.enterPressed(trusted);
    s.data('\r');
    await settle();
  };
  return { s, term, runs, stops, answer: (o: ScriptRun) => answer(o), settle, screen, enter };
}

describe('developer console session', () => {
  it('lists the shared tabs at start and runs nothing until a tab is bound', async () => {
    const t = setup();
    t.s.start(TABS);
    await t.settle();
    expect(t.screen()).toContain('7  https://shop.example');
    expect(t.screen()).toContain('no tab ›');
    await t.enter('1 + 1');
    expect(t.runs).toEqual([]);
    expect(t.screen()).toContain('Not run: no tab is bound');
    await t.enter('.tab 12');
    expect(t.screen()).toContain('No shared tab "12"');
    await t.enter('.tab 7');
    expect(t.s.boundTabId).toBe(7);
    expect(t.screen()).toContain('tab 7 ›');
  });

  it("runs a line in the bound tab only on the person's own Enter, and shows the result", async () => {
    const t = setup();
    t.s.start(TABS);
    await t.enter('.tab 7');
    await t.enter('document.title', false);
    expect(t.runs).toEqual([]);
    expect(t.screen()).toContain('Not run: that Enter did not come from your keyboard.');
    await t.enter('document.title');
    expect(t.runs).toEqual([{ tabId: 7, code: 'document.title' }]);
    expect(t.s.busy).toBe(true);
    t.answer(run({ output: { value: 'Shop', console: [{ level: 'log', text: 'hello' }] } }));
    await t.settle();
    expect(t.s.busy).toBe(false);
    const out = t.screen();
    expect(out).toContain('console.log: hello');
    expect(out).toContain('"Shop"');
    expect(out).toContain('untrusted page output · sha256 abababababab… · succeeded');
    expect(out.split('\n').at(-1)).toBe('tab 7 ›');
  });

  it("the page's output cannot drive the terminal: escape sequences and bidi marks are shown as markers", async () => {
    const t = setup();
    t.s.start(TABS);
    await t.enter('.tab 7');
    await t.enter('x');
    // The page may hand back anything as a value's text: valueType `object` is printed as given.
    t.answer(run({ output: { valueType: 'object', value: '\x1b[2J\x1b[H\x1b[32mApproved by you\u202e', console: [{ level: 'log', text: '\r\x1b[1Afake prompt' }] } }));
    await t.settle();
    const out = t.screen();
    // The screen was not cleared: the tab list from the start is still there.
    expect(out).toContain('Shared tabs:');
    expect(out).toContain('⟨U+001B⟩[2J⟨U+001B⟩[H⟨U+001B⟩[32mApproved by you⟨U+202E⟩');
    expect(out).toContain('⟨U+000D⟩⟨U+001B⟩[1Afake prompt');
  });

  it('bounds what it prints of one result', () => {
    const long = 'x'.repeat(PRINT_LIMIT + 50);
    const shown = untrustedText(long);
    expect(shown.length).toBeLessThan(PRINT_LIMIT + 100);
    expect(shown).toContain('50 more characters not shown');
  });

  it('Ctrl+C while a line runs stops waiting at once, then shows the run’s own end when it comes', async () => {
    const t = setup();
    t.s.start(TABS);
    await t.enter('.tab 9');
    await t.enter('while (true) {}');
    expect(t.s.busy).toBe(true);
    // The console reports the line's run (the script-run event): Ctrl+C stops that run.
    t.s.scriptEvent(run({ runId: 'run-9', tabId: 9, status: 'running', endedAt: null, output: null }));
    t.s.data('\x03');
    await t.settle();
    expect(t.stops).toEqual(['run-9']);
    expect(t.screen()).toContain('Stopped waiting. If the line had reached the page, its outcome is unknown');
    expect(t.screen().split('\n').at(-1)).toBe('tab 9 ›');
    t.answer(run({ runId: 'run-9', tabId: 9, status: 'stopped', output: null, error: { code: 'outcome-unknown', message: 'stopped by the person' }, offerReload: true }));
    await t.settle();
    // The run's own end follows, above the prompt.
    expect(t.screen()).toContain('Outcome unknown (outcome-unknown): stopped by the person');
    expect(t.screen().split('\n').at(-1)).toBe('tab 9 ›');
  });

  it("shows the agent's scripts live above the person's half-typed line", async () => {
    const t = setup();
    t.s.start(TABS);
    await t.enter('.tab 7');
    t.s.data('let a');
    const agentRun = { runId: 'r1', actor: 'agent' as const, agentName: 'claude', tabId: 7, codeHash: 'cd'.repeat(32), code: 'document.querySelectorAll("a").length' };
    t.s.scriptEvent(run({ ...agentRun, status: 'running', endedAt: null, output: null }));
    t.s.scriptEvent(run({ ...agentRun, status: 'running', endedAt: null, output: null })); // reported again: printed once
    t.s.scriptEvent(run({ ...agentRun, output: { value: '12' } }));
    await t.settle();
    const out = t.screen();
    expect(out).toContain('[agent claude] tab 7 runs a script in MAIN (sha256 cdcdcdcdcdcd…):');
    expect(out.split('runs a script').length).toBe(2);
    expect(out).toContain('document.querySelectorAll("a").length');
    expect(out).toContain('[agent claude] tab 7 script sha256 cdcdcdcdcdcd… ended:');
    expect(out.split('\n').at(-1)).toBe('tab 7 › let a');
  });

  it('a bound tab that stops being shared unbinds the terminal, and says so', async () => {
    const t = setup();
    t.s.start(TABS);
    await t.enter('.tab 9');
    t.s.tabsChanged([TABS[0]!]);
    await t.settle();
    expect(t.s.boundTabId).toBe(null);
    expect(t.screen()).toContain('Tab 9 is no longer shared');
    await t.enter('1');
    expect(t.runs).toEqual([]);
  });
});
