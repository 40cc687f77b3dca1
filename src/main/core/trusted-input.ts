/**
 * The trusted-input gate (design.md trust rule 19; issue 9 item 4): "A decision
 * (approve, deny), switching developer mode on, and a developer-console line
 * count only from the person's trusted input in the console; a script's
 * synthetic click or a direct API call never does."
 *
 * One module for every such action, so the developer console (issue 11) uses the
 * same gate for its lines:
 *
 *  - `gatedActionOf(method, payload)` says which console API calls are gated:
 *    `decideApproval` (approve and deny alike), `revertPatches`, `stopRequest`, `stopScript`,
 *    `stopEverything` and `reloadTab` (docs/stop.md), `updateSettings` that switches
 *    developer mode ON (off is always allowed: it only takes power away), and
 *    the future developer-console line.
 *  - `createInputGate` is the gate of a host that SEES the person's input: the
 *    Electron host feeds it the console window's `before-input-event` (keys) and
 *    `input-event` (mouse, touch) from the main process, which no script in the
 *    page can fake (a synthetic DOM event never reaches them). A gated call
 *    passes only within `windowMs` after such an event, and each event admits at
 *    most one gated call. The sender check (the console window's main frame) is
 *    the host's, before this.
 *  - `RENDERER_ATTESTED_GATE` is the gate of a host that cannot see input (the
 *    loopback web host, and the core's default): decisions pass on the renderer's
 *    own `event.isTrusted` check, which a script in the console's own tab can
 *    bypass by calling the API directly (said plainly in docs/hosts.md and in the
 *    console); switching developer mode on, and developer-console lines, are
 *    refused there outright: use the desktop app. `rendererAttestedGate({developerMode: true})`
 *    is that gate for a web host the person started with `--developer-mode`
 *    (src/main/web/index.ts): developer mode on and console lines then pass on the
 *    renderer's word too, exactly as decisions do, and the start lines say so.
 *
 * Plain Node, no 'electron' import; the clock is injected so the window is tested
 * without sleeps.
 */
import { err, ok, type Result } from '../../shared/result';

/** An action only the person's own input may cause. */
export type GatedAction = 'decision' | 'developer-mode-on' | 'developer-console-line';

/**
 * Which gated action a console API call is, if any.
 * @param method  the ConsoleApi method name (already routed by the host).
 * @param payload the call's payload, already validated by the core.
 * @returns the action, or null for a call anyone holding the session may make.
 */
export function gatedActionOf(method: string, payload: unknown): GatedAction | null {
  // A Revert in the console's Live Patches panel is the person's decision on a page action: the
  // pipeline takes the person's press as its approval (broker revertPatches, AgentContext.byPerson).
  // A manual invoke from the tool inspector starts a request in the person's name: only their own
  // press may (its approval dialog is still shown and decided through this gate too). Stop (one
  // request, or everything) and the tab reload it offers are the person's decisions too (issue 12
  // item 5): a script in the console's page must not stop, deny or reload for them.
  if (
    method === 'decideApproval' ||
    method === 'revertPatches' ||
    method === 'invokeTool' ||
    method === 'stopRequest' ||
    method === 'stopScript' ||
    method === 'stopEverything' ||
    method === 'reloadTab'
  ) {
    return 'decision';
  }
  if (method === 'updateSettings' && payload !== null && typeof payload === 'object' && (payload as { developerMode?: unknown }).developerMode === true) {
    return 'developer-mode-on';
  }
  if (method === 'runConsoleLine') return 'developer-console-line';
  return null;
}

/** A host's answer to "may this gated action happen now?". */
export interface TrustedInputGate {
  /**
   * Admit one gated action, or refuse it.
   * @returns `{ok: true}` (and the input that admitted it is spent), or
   *   `no-trusted-input` (no real input on the console window within the window,
   *   or it was already spent), or `trusted-input-unavailable` (this host cannot
   *   see input, and the action is too strong to take on the renderer's word).
   */
  admit(action: GatedAction): Result<null>;
}

/** Default length of the window after a real input event in which one gated action may pass (ms). */
export const TRUSTED_INPUT_WINDOW_MS = 2_000;

/**
 * Input event types that are the person pressing something: Electron's
 * `Input.type` (`before-input-event`: keyDown, keyUp) and `InputEvent.type`
 * (`input-event`). Moves, wheels, enter/leave and scroll gestures are not: a
 * pointer resting on the window must not arm anything.
 */
export const PRESS_INPUT_TYPES: ReadonlySet<string> = new Set([
  'mouseDown',
  'mouseUp',
  'rawKeyDown',
  'keyDown',
  'keyUp',
  'char',
  'gestureTap',
  'touchStart',
  'touchEnd',
  'pointerDown',
  'pointerUp',
]);

/** The gate of a host that sees real input (the Electron host); feed it with `noteInput`. */
export interface InputGate extends TrustedInputGate {
  /**
   * Record one input event the main process saw on the console window.
   * @param type Electron's `Input.type` / `InputEvent.type` (e.g. `mouseDown`, `keyDown`).
   * @returns whether it counts as a press (PRESS_INPUT_TYPES) and armed the gate.
   */
  noteInput(type: unknown): boolean;
}

/**
 * Build the gate of a host that sees real input.
 * @param opts.windowMs how long after a press one gated action may pass (ms; default TRUSTED_INPUT_WINDOW_MS).
 * @param opts.now      the clock (ms since the epoch; default Date.now), injected by tests.
 */
export function createInputGate(opts: { windowMs?: number; now?: () => number } = {}): InputGate {
  const windowMs = opts.windowMs ?? TRUSTED_INPUT_WINDOW_MS;
  const now = opts.now ?? Date.now;
  let pressedAt: number | null = null;
  return {
    noteInput(type) {
      if (typeof type !== 'string' || !PRESS_INPUT_TYPES.has(type)) return false;
      pressedAt = now();
      return true;
    },
    admit(action) {
      const t = now();
      // Spent on first use: one press admits at most one gated action.
      const fresh = pressedAt !== null && t >= pressedAt && t - pressedAt <= windowMs;
      pressedAt = null;
      if (fresh) return ok(null);
      return err('no-trusted-input', `${ACTION_WORDS[action]} counts only right after your own click or key press in the console window; this one came without it, so nothing was done.`);
    },
  };
}

/**
 * The gate of a host that cannot see input (the loopback web host; the core's
 * default). Decisions pass on the renderer's `event.isTrusted` check alone;
 * developer mode on and developer-console lines are refused.
 */
export const RENDERER_ATTESTED_GATE: TrustedInputGate = rendererAttestedGate();

/**
 * The gate of a host that cannot see input, with the person's opt-in.
 * @param opts.developerMode the person started the web host with `--developer-mode`: switching
 *   developer mode on and developer-console lines pass on the renderer's word (its `event.isTrusted`
 *   check), as decisions always do there; a script in the console's own tab can then do them too,
 *   which the start lines and docs/hosts.md say. Default false: both refused (`trusted-input-unavailable`).
 */
export function rendererAttestedGate(opts: { developerMode?: boolean } = {}): TrustedInputGate {
  return {
    admit(action) {
      if (action === 'decision' || opts.developerMode === true) return ok(null);
      return err(
        'trusted-input-unavailable',
        `${ACTION_WORDS[action]} is only possible in the desktop app, or in a web host the person started with --developer-mode: in a browser tab the console cannot tell your input from a script's.`,
      );
    },
  };
}

const ACTION_WORDS: Record<GatedAction, string> = {
  decision: 'A decision on a request',
  'developer-mode-on': 'Switching developer mode on',
  'developer-console-line': 'A developer-console line',
};
