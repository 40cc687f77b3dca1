/**
 * One developer console session (issue 11 item 4): the line editor, the tab
 * the terminal is bound to, the person's runs, and the live lines of every
 * raw-JavaScript run (the agent's too). The xterm instance is outside: this
 * class only writes strings to it (`write`), so it is unit-tested against a
 * headless terminal. docs/raw-javascript.md, "Developer console".
 *
 * - **Bound to one shared tab, chosen in the terminal**: `.tabs` lists the
 *   shared tabs, `.tab <id>` binds one. Nothing runs while no tab is bound.
 *   When the bound tab stops being shared, the binding ends and the terminal
 *   says so.
 * - **A line runs as the person**: `backend.run` (the console API's
 *   person-run entry; the core checks developer mode and the trusted-input
 *   gate, rule 19). Only an Enter the browser marks trusted submits: the
 *   terminal's key handler reports it (`enterTrusted`); a line submitted by
 *   any other event is not sent, and the terminal says why.
 * - **Ctrl+C** while a line runs: `backend.stop` (the console stops waiting
 *   and records `outcome-unknown`, or `cancelled` when the line had not reached
 *   the page yet: synchronous page code cannot be interrupted). The terminal
 *   offers `.reload`, and prints the run's end when it comes.
 * - **Page text is untrusted**: every string that came from the page (results,
 *   console lines, error messages) goes through `revealInvisible`, so control
 *   characters, escape sequences and bidi marks show as markers and cannot
 *   move the cursor, recolour or rewrite what the terminal shows.
 */
import type { ScriptRun } from '../../shared/raw-script';
import type { ErrorInfo } from '../../shared/result';
import { revealInvisible } from '../text';
import { LineEditor, type EditorEffect } from './line-editor';

/** A shared tab, as much of it as the terminal shows. */
export interface TerminalTab {
  tabId: number;
  origin: string;
  title: string;
}

/** What the session needs from the console (src/renderer/stores/scripts.ts and the console API). */
export interface DeveloperConsoleBackend {
  /**
   * Run `code` in the tab as the person (ConsoleApi.runConsoleLine). Resolves with the run as it
   * ended, or with the call's refusal (developer mode off, no trusted input, …); never rejects.
   */
  run(tabId: number, code: string): Promise<ScriptRun | { refused: ErrorInfo }>;
  /** Stop waiting for a run (ConsoleApi.stopScript). */
  stop(runId: string): Promise<void>;
  /** Reload the tab (offered after a stop or an unknown outcome). */
  reload(tabId: number): Promise<{ ok: boolean; message?: string }>;
}

/** The person's line while it runs. */
interface RunningLine {
  tabId: number;
  stopped: boolean;
  /** The run's id, once the console reported it (Ctrl+C needs it). */
  runId: string | null;
}

const DIM = '\x1b[2m';
const RED = '\x1b[31m';
const YELLOW = '\x1b[33m';
const CYAN = '\x1b[36m';
const RESET = '\x1b[0m';

/** The most characters of one result or console line the terminal prints (the rest is cut, and said). */
export const PRINT_LIMIT = 20_000;

/** Page text made safe to write to the terminal: bounded, control and hidden characters shown as markers. */
export function untrustedText(text: string): string {
  const cut = text.length > PRINT_LIMIT ? `${text.slice(0, PRINT_LIMIT)}… (${text.length - PRINT_LIMIT} more characters not shown)` : text;
  return revealInvisible(cut);
}

const HELP = [
  'Developer console: JavaScript runs in the bound shared tab, as you, in the page (world MAIN).',
  '  .tabs          list the shared tabs',
  '  .tab <id>      bind this terminal to a shared tab',
  '  .reload        reload the bound tab',
  '  .clear         clear the screen',
  '  .help          this help',
  'Enter runs a complete source; Shift+Enter adds a line; ↑/↓ walk the history; Ctrl+C stops waiting.',
].join('\n');

/** The developer console's state machine; see the file header. */
export class DeveloperConsoleSession {
  private readonly editor: LineEditor;
  private tabs: readonly TerminalTab[] = [];
  private bound: TerminalTab | null = null;
  private running: RunningLine | null = null;
  /** A line stopped before its run id was known: stopped as soon as its run is reported. */
  private stopOnStart: RunningLine | null = null;
  /** What was printed of each run seen live: `started`, then `ended` (a run is printed once per phase). */
  private readonly seen = new Map<string, 'started' | 'ended'>();
  private lastEnterTrusted = false;

  /**
   * @param write writes to the terminal (xterm's `write`).
   * @param cols the terminal's width in columns.
   */
  constructor(
    private readonly write: (data: string) => void,
    cols: () => number,
    private readonly backend: DeveloperConsoleBackend,
  ) {
    this.editor = new LineEditor(() => this.prompt(), cols);
  }

  /** The tab the terminal is bound to, if any. */
  get boundTabId(): number | null {
    return this.bound?.tabId ?? null;
  }

  /** Whether a person's line is running. */
  get busy(): boolean {
    return this.running !== null;
  }

  /** Start: the help line, the shared tabs, the prompt. */
  start(tabs: readonly TerminalTab[]): void {
    this.tabs = tabs;
    this.write('\x1b[?2004h'); // bracketed paste: a pasted line break is text, not Enter
    this.say(`${DIM}${HELP}${RESET}`);
    this.say(this.tabList());
    this.apply(this.editor.show());
  }

  /** The key handler saw an Enter keydown; `trusted` is the event's `isTrusted`. */
  enterPressed(trusted: boolean): void {
    this.lastEnterTrusted = trusted;
  }

  /** Shift+Enter. */
  newline(): void {
    this.apply(this.editor.newline());
  }

  /** Data from xterm's `onData`. */
  data(data: string): void {
    this.apply(this.editor.input(data));
  }

  /** The shared tabs changed: keep the binding while its tab is still shared. */
  tabsChanged(tabs: readonly TerminalTab[]): void {
    this.tabs = tabs;
    if (this.bound && !tabs.some((t) => t.tabId === this.bound!.tabId)) {
      const gone = this.bound;
      this.bound = null;
      this.print(`${YELLOW}Tab ${gone.tabId} is no longer shared: the terminal is not bound to a tab. Use .tab <id>.${RESET}`);
    } else if (this.bound) this.bound = tabs.find((t) => t.tabId === this.bound!.tabId) ?? null;
  }

  /**
   * A raw-JavaScript run as last reported (the `script-run` event). The person's own running line
   * gives its run id to Ctrl+C; the agent's runs are printed live: the code when first seen, the
   * outcome once it ended.
   */
  scriptEvent(run: ScriptRun): void {
    const ended = run.status !== 'running';
    if (run.actor === 'person') {
      // The first running run of the person's in the line's tab, not claimed before, is the line's.
      if (ended || this.seen.has(run.runId)) return;
      for (const line of [this.running, this.stopOnStart]) {
        if (!line || line.runId !== null || line.tabId !== run.tabId) continue;
        line.runId = run.runId;
        this.remember(run.runId, 'started');
        if (line.stopped) {
          this.stopOnStart = null;
          void this.backend.stop(run.runId); // Ctrl+C came before the run was known
        }
        return;
      }
      return;
    }
    const before = this.seen.get(run.runId);
    if (before === 'ended' || (before === 'started' && !ended)) return;
    const who = `[agent${run.agentName ? ` ${untrustedText(run.agentName)}` : ''}] tab ${run.tabId}`;
    const hash = `sha256 ${run.codeHash.slice(0, 12)}…`;
    let text = '';
    if (!before) text += `${CYAN}${who} runs a script in ${run.world} (${hash}):${RESET}\n${untrustedText(run.code)}`;
    if (ended) text += `${text ? '\n' : ''}${CYAN}${who} script ${hash} ended:${RESET}\n${this.outcomeText(run)}`;
    this.remember(run.runId, ended ? 'ended' : 'started');
    this.print(text);
  }

  private remember(runId: string, phase: 'started' | 'ended'): void {
    this.seen.set(runId, phase);
    if (this.seen.size > 200) this.seen.delete(this.seen.keys().next().value!);
  }

  // --- internals --------------------------------------------------------

  private prompt() {
    const label = this.bound ? `tab ${this.bound.tabId}` : 'no tab';
    return { text: `${this.bound ? CYAN : YELLOW}${label}${RESET} › `, width: label.length + 3 };
  }

  private apply(effects: readonly EditorEffect[]): void {
    for (const e of effects) {
      if (e.kind === 'write') this.write(e.data);
      else if (e.kind === 'submit') void this.submit(e.source);
      else void this.interrupt();
    }
  }

  /** Write text as the terminal's own output, above the input (or below a running line). */
  private print(text: string): void {
    this.apply(this.editor.print(text));
  }

  /** Write text before the prompt is shown (start-up). */
  private say(text: string): void {
    this.write(`${text.replace(/\r?\n/g, '\r\n')}\r\n`);
  }

  private tabList(): string {
    if (this.tabs.length === 0) return `${YELLOW}No tab is shared. Share a tab from the extension's popup, then .tab <id>.${RESET}`;
    const lines = this.tabs.map((t) => `  ${t.tabId}  ${untrustedText(t.origin)}  ${DIM}${untrustedText(t.title)}${RESET}`);
    return `Shared tabs:\n${lines.join('\n')}`;
  }

  private async submit(source: string): Promise<void> {
    const trusted = this.lastEnterTrusted;
    this.lastEnterTrusted = false;
    const command = /^\s*\.(help|tabs|tab|clear|reload)\b\s*(.*)$/s.exec(source);
    if (command) return this.command(command[1]!, command[2]!.trim());
    if (!trusted) return this.end(`${RED}Not run: that Enter did not come from your keyboard.${RESET}`);
    if (!this.bound) return this.end(`${RED}Not run: no tab is bound. ${this.tabs.length ? 'Use .tab <id> (.tabs lists them).' : 'Share a tab first.'}${RESET}`);
    const tabId = this.bound.tabId;
    const running: RunningLine = { tabId, stopped: false, runId: null };
    this.running = running;
    const outcome = await this.backend.run(tabId, source);
    if (this.running === running) this.running = null;
    if (running.stopped) {
      // The stop already ended the line; its real end (cancelled before it reached the page, or
      // outcome unknown after) is shown above the prompt when it comes.
      if (!('refused' in outcome)) this.print(this.outcomeText(outcome));
      return;
    }
    if ('refused' in outcome) return this.end(`${RED}Not run (${outcome.refused.code}): ${untrustedText(outcome.refused.message)}${RESET}`);
    this.end(this.outcomeText(outcome));
  }

  private async command(name: string, arg: string): Promise<void> {
    switch (name) {
      case 'help':
        return this.end(HELP);
      case 'tabs':
        return this.end(this.tabList());
      case 'clear':
        this.write('\x1b[2J\x1b[3J\x1b[H');
        return this.end(null);
      case 'tab': {
        const id = Number(arg);
        const tab = /^\d+$/.test(arg) ? this.tabs.find((t) => t.tabId === id) : undefined;
        if (!tab) return this.end(`${RED}No shared tab ${JSON.stringify(arg)}.${RESET}\n${this.tabList()}`);
        this.bound = tab;
        return this.end(`Bound to tab ${tab.tabId}: ${untrustedText(tab.origin)} ${DIM}${untrustedText(tab.title)}${RESET}`);
      }
      case 'reload': {
        if (!this.bound) return this.end(`${RED}No tab is bound.${RESET}`);
        const r = await this.backend.reload(this.bound.tabId);
        return this.end(r.ok ? `Tab ${this.bound?.tabId ?? ''} reloads.` : `${RED}Not reloaded: ${untrustedText(r.message ?? 'refused')}${RESET}`);
      }
    }
  }

  private async interrupt(): Promise<void> {
    const run = this.running;
    if (!run || run.stopped) return;
    run.stopped = true;
    this.running = null;
    if (run.runId !== null) await this.backend.stop(run.runId);
    else this.stopOnStart = run;
    this.end(
      `${YELLOW}Stopped waiting. If the line had reached the page, its outcome is unknown: the page's code may still be running (synchronous code cannot be interrupted); .reload reloads the tab. Its end follows.${RESET}`,
    );
  }

  /** End a line: its output (if any), then the prompt again. */
  private end(text: string | null): void {
    if (text !== null && text !== '') this.write(`${text.replace(/\r?\n/g, '\r\n')}\r\n`);
    this.apply(this.editor.show());
  }

  /** A run's outcome as terminal lines: console output, then the value or the error (page text untrusted). */
  private outcomeText(run: ScriptRun): string {
    const lines: string[] = [];
    const out = run.output;
    for (const c of out?.console ?? []) {
      const colour = c.level === 'error' ? RED : c.level === 'warn' ? YELLOW : DIM;
      lines.push(`${colour}console.${c.level}:${RESET} ${untrustedText(c.text)}`);
    }
    if (out && out.consoleOmitted > 0) lines.push(`${DIM}(${out.consoleOmitted} more console lines not kept)${RESET}`);
    if (run.status === 'succeeded' && out?.status === 'returned') {
      // A string is shown quoted, as a REPL does, so "21" and 21 read apart; other values as the page gave them (JSON or String()).
      const shown = out.valueType === 'string' && out.value !== null ? JSON.stringify(out.value) : (out.value ?? out.valueType);
      lines.push(untrustedText(shown) + (out.valueTruncated ? `${DIM} (cut to the result limit)${RESET}` : ''));
    } else if (out?.status === 'threw') {
      lines.push(`${RED}Uncaught ${untrustedText(out.error ?? out.valueType)}${RESET}`);
    }
    if (run.error) {
      const unknown = run.error.code === 'outcome-unknown';
      lines.push(`${RED}${unknown ? 'Outcome unknown' : 'Error'} (${untrustedText(run.error.code)}): ${untrustedText(run.error.message)}${RESET}`);
    }
    if (run.offerReload) lines.push(`${YELLOW}The page may still be running it. Type .reload to reload the tab.${RESET}`);
    lines.push(`${DIM}untrusted page output · sha256 ${run.codeHash.slice(0, 12)}… · ${run.status}${RESET}`);
    return lines.join('\n');
  }
}
