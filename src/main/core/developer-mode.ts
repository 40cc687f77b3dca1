/**
 * Developer mode (issue 11 item 2; design.md, capability ladder rung 6): the
 * switch that makes the raw-JavaScript faculty's agent tools exist at all.
 *
 * - **Never persisted.** Off at every start, whatever settings.json says
 *   (older consoles wrote `developerMode` there; it is read as off and written
 *   back as `false`).
 * - **On only by the person**, through the trusted-input gate
 *   (./trusted-input.ts: the API call that switches it on is gated by the host;
 *   no agent call reaches this module at all).
 * - **Off again by itself** after `idleMs()` with neither a press of the
 *   person's in the console window (`touch`, fed by the Electron host) nor a
 *   raw-JavaScript call (`touch`, by that faculty).
 * - **Tools appear only while on**: `developerTools` are added to the agent tool
 *   registry when it goes on and removed when it goes off; the registry
 *   announces each change, and the endpoint sends MCP
 *   `notifications/tools/list_changed` (MCP 2025-06-18, "Tools").
 * - Every switch is reported once to `onSwitch` (the core writes the
 *   `developer-mode-on` / `developer-mode-off` receipt, with who and why, and
 *   tells the UI).
 *
 * Timers are injected so the idle rule is tested without sleeping.
 */
import type { AgentToolRegistry } from './agent/registry';
import type { AgentTool } from './agent/tool';

/** Who switched developer mode, and why (the receipt's detail). */
export type DeveloperModeSwitch =
  | { on: true; by: 'person' }
  | { on: false; by: 'person' }
  | { on: false; by: 'console'; why: 'idle-timeout'; idleMs: number }
  | { on: false; by: 'console'; why: 'stop' };

/** A cancellable timer (setTimeout's shape). */
export interface IdleTimer {
  cancel(): void;
}

export interface DeveloperModeOptions {
  /** The agent tool registry the developer tools join while the mode is on. */
  tools: AgentToolRegistry;
  /** Tools that exist only while developer mode is on (page_run_script); a call while it is off is refused with `developer-mode-off`. */
  developerTools?: readonly AgentTool[];
  /** The idle time (ms), read each time the timer is armed (the person may change it). */
  idleMs: () => number;
  /** Told of every switch, after it happened; its failure is swallowed. */
  onSwitch: (s: DeveloperModeSwitch) => void;
  /** Arm a timer (default: setTimeout, unref'd). */
  setTimer?: (fn: () => void, ms: number) => IdleTimer;
}

/** The developer mode switch of one running console. */
export class DeveloperMode {
  private state = false;
  private timer: IdleTimer | null = null;
  private armedMs = 0;
  private readonly setTimer: (fn: () => void, ms: number) => IdleTimer;

  constructor(private readonly opts: DeveloperModeOptions) {
    for (const t of opts.developerTools ?? []) {
      opts.tools.setDormant(t.name, {
        faculty: t.faculty,
        code: 'developer-mode-off',
        message: `${t.name} exists only while the person has developer mode on in the console, and it is off now; nothing was done.`,
      });
    }
    this.setTimer =
      opts.setTimer ??
      ((fn, ms) => {
        const t = setTimeout(fn, ms);
        t.unref?.();
        return { cancel: () => clearTimeout(t) };
      });
  }

  /** Whether developer mode is on now. */
  get on(): boolean {
    return this.state;
  }

  /**
   * Switch on, as the person (the caller has passed the trusted-input gate).
   * Already on: only re-arms the idle timer.
   */
  switchOn(): void {
    if (this.state) return this.touch();
    this.state = true;
    for (const t of this.opts.developerTools ?? []) if (!this.opts.tools.get(t.name)) this.opts.tools.add(t);
    this.arm();
    this.tell({ on: true, by: 'person' });
  }

  /**
   * Switch off (always allowed: it only takes power away). Already off: nothing happens.
   * @param cause `person` (the console's switch), or `stop` (the console stops or Stop everything).
   */
  switchOff(cause: 'person' | 'stop' = 'person'): void {
    this.off(cause === 'person' ? { on: false, by: 'person' } : { on: false, by: 'console', why: 'stop' });
  }

  /** The person pressed something in the console window, or a raw-JavaScript call ran: the idle time starts again. */
  touch(): void {
    if (this.state) this.arm();
  }

  /** Stop the timer without a switch (the console is closing; the mode dies with the process). */
  dispose(): void {
    this.timer?.cancel();
    this.timer = null;
  }

  private arm(): void {
    this.timer?.cancel();
    this.armedMs = this.opts.idleMs();
    this.timer = this.setTimer(() => this.off({ on: false, by: 'console', why: 'idle-timeout', idleMs: this.armedMs }), this.armedMs);
  }

  private off(s: DeveloperModeSwitch): void {
    if (!this.state) return;
    this.state = false;
    this.timer?.cancel();
    this.timer = null;
    for (const t of this.opts.developerTools ?? []) this.opts.tools.remove(t.name);
    this.tell(s);
  }

  private tell(s: DeveloperModeSwitch): void {
    try {
      this.opts.onSwitch(s);
    } catch {
      /* the listener's failure is its own */
    }
  }
}
