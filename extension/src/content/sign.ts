/**
 * The sign in a shared tab's page (issue 8, item 8; docs/extension.md, "The sign in the page"):
 * a small fixed badge, "Shared with Echo Console", drawn by the extension in the top frame of
 * every shared tab, and a stronger state, "Agent action running…" with an outline around the
 * viewport, while a dispatch runs in that tab. ISOLATED world, injected by the service worker
 * (background/sign.ts) into the top document only; answers only `echo:sign:*` messages
 * (lib/messages.ts ToSign).
 *
 * How it resists the page (what it cannot resist is written in docs/extension.md):
 *  - the drawing is in a CLOSED shadow root (the page's `host.shadowRoot` is null and its
 *    selectors do not reach inside); the host is a plain `<div>` (a custom element name could be
 *    defined by the page, whose constructor would then run on our node);
 *  - the host's own style is a `:host { … !important }` rule in the shadow root's adopted style
 *    sheet: for important declarations the inner (shadow) context wins over the outer one, so
 *    no page style sheet nor `style` attribute overrides it (CSS Cascade 5, "Context"); a
 *    constructed style sheet is not subject to the page's CSP; attributes the page adds to the
 *    host are removed;
 *  - it is shown in the top layer (`popover=manual` + `showPopover()`), and raised again
 *    (hide + show moves it to the top of the top layer) when the page opens its own popover or
 *    dialog or goes fullscreen, or hides ours; re-attached when the page removes the host;
 *  - every such repair spends from a budget (MAX_REPAIRS per REPAIR_WINDOW_MS): a page that
 *    fights back forever cannot make this loop; past the budget the sign waits for the next window.
 * It does not change the page's layout (top layer, fixed) nor take its clicks (`pointer-events: none`).
 */
import { ok, type Result } from '../../../src/shared/result';
import type { SignState, ToSign } from '../lib/messages';

const INSTANCE_KEY = '__echoConsoleSign';
/** Repairs (re-attach, re-style, raise) allowed per window. */
export const MAX_REPAIRS = 40;
/** The repair budget's window (ms). */
export const REPAIR_WINDOW_MS = 5_000;

const TEXT: Record<Exclude<SignState, 'hidden'>, string> = {
  shared: 'Shared with Echo Console',
  running: 'Agent action running\u2026',
};

const SHADOW_CSS = `
:host { all: initial !important; display: block !important; position: fixed !important; inset: 0 !important;
  width: 100vw !important; height: 100vh !important; max-width: none !important; max-height: none !important;
  margin: 0 !important; padding: 0 !important; border: 0 !important; background: transparent !important;
  overflow: visible !important; pointer-events: none !important; user-select: none !important;
  visibility: visible !important; opacity: 1 !important; z-index: 2147483647 !important; }
.frame { position: fixed; inset: 0; pointer-events: none; box-sizing: border-box; border: 0 solid #d93025; }
.frame.running { border-width: 4px; }
.pill { position: fixed; right: 12px; bottom: 12px; pointer-events: none; display: flex; align-items: center; gap: 8px;
  font: 600 13px/1.2 system-ui, sans-serif; padding: 7px 12px; border-radius: 16px; color: #fff; background: #1a73e8;
  box-shadow: 0 1px 4px rgba(0,0,0,.4); white-space: nowrap; letter-spacing: normal; text-transform: none; }
.pill.running { background: #d93025; font-size: 14px; padding: 9px 14px; }
.dot { width: 8px; height: 8px; border-radius: 50%; background: #fff; }
`;

interface Drawn {
  host: HTMLElement;
  frame: HTMLElement;
  pill: HTMLElement;
  text: HTMLElement;
}

let state: SignState = 'hidden';
let drawn: Drawn | null = null;
let repairs = 0;
let windowStart = 0;
let observers: MutationObserver[] = [];
let docListenersOn = false;

/** Spend one repair; false when this window's budget is gone (then the next window retries). */
function spend(): boolean {
  const now = Date.now();
  if (now - windowStart >= REPAIR_WINDOW_MS) {
    windowStart = now;
    repairs = 0;
  }
  if (repairs >= MAX_REPAIRS) {
    scheduleRetry(windowStart + REPAIR_WINDOW_MS - now);
    return false;
  }
  repairs += 1;
  return true;
}

let exhaustedTimer: ReturnType<typeof setTimeout> | undefined;
function scheduleRetry(ms: number): void {
  if (exhaustedTimer !== undefined) return;
  exhaustedTimer = setTimeout(() => {
    exhaustedTimer = undefined;
    if (state !== 'hidden') repair();
  }, Math.max(ms, 0) + 1);
}

function build(): Drawn {
  const host = document.createElement('div');
  const root = host.attachShadow({ mode: 'closed' });
  const sheet = new CSSStyleSheet();
  sheet.replaceSync(SHADOW_CSS);
  root.adoptedStyleSheets = [sheet];
  const frame = document.createElement('div');
  frame.className = 'frame';
  const pill = document.createElement('div');
  pill.className = 'pill';
  pill.setAttribute('role', 'status');
  const dot = document.createElement('span');
  dot.className = 'dot';
  const text = document.createElement('span');
  pill.append(dot, text);
  root.append(frame, pill);
  return { host, frame, pill, text };
}

/** Is the host where it must be: connected, our attributes only, open in the top layer. */
function healthy(d: Drawn): boolean {
  return d.host.isConnected && d.host.parentNode === document.documentElement && d.host.getAttribute('popover') === 'manual' && d.host.matches(':popover-open');
}

/** Show (or raise) the host in the top layer. */
function raise(d: Drawn): void {
  try {
    if (d.host.matches(':popover-open')) d.host.hidePopover();
    d.host.showPopover();
  } catch {
    /* not connected or not a popover: the next repair puts it back */
  }
}

/** Put the host back as it must be (attached, styled, on top), within the budget. */
function repair(force = false): void {
  if (state === 'hidden') return;
  if (!drawn) drawn = build();
  const d = drawn;
  if (!force && !spend()) return;
  const root = document.documentElement;
  if (!root) return;
  unobserve(); // our own changes must not count as the page's
  if (d.host.parentNode !== root || root.lastElementChild !== d.host) root.append(d.host);
  // Only our attribute on the host: the page may add `style`, `hidden`, `inert`, `dir`…
  for (const a of [...d.host.getAttributeNames()]) if (a !== 'popover') d.host.removeAttribute(a);
  d.host.setAttribute('popover', 'manual');
  d.text.textContent = TEXT[state];
  d.frame.className = state === 'running' ? 'frame running' : 'frame';
  d.pill.className = state === 'running' ? 'pill running' : 'pill';
  raise(d);
  observe(d);
}

function observe(d: Drawn): void {
  const onChange = () => {
    if (state !== 'hidden' && (!healthy(d) || d.host.getAttributeNames().some((a) => a !== 'popover'))) repair();
  };
  const mo = new MutationObserver(onChange);
  mo.observe(d.host, { attributes: true });
  const top = document.documentElement;
  if (top) mo.observe(top, { childList: true });
  mo.observe(document, { childList: true });
  observers = [mo];
  d.host.addEventListener('toggle', onHostToggle);
  if (!docListenersOn) {
    // `toggle` does not bubble: listen in the capture phase to see the page's popovers and dialogs open.
    document.addEventListener('toggle', onPageToggle, true);
    document.addEventListener('fullscreenchange', onPageTopLayer, true);
    docListenersOn = true;
  }
}

function unobserve(): void {
  for (const o of observers) o.disconnect();
  observers = [];
  drawn?.host.removeEventListener('toggle', onHostToggle);
}

function onHostToggle(e: Event): void {
  if ((e as ToggleEvent).newState === 'closed' && state !== 'hidden') repair();
}

function onPageToggle(e: Event): void {
  if (!drawn || e.target === drawn.host || state === 'hidden') return;
  if ((e as ToggleEvent).newState === 'open') onPageTopLayer();
}

/** The page put something in the top layer (a popover, a modal dialog, fullscreen): raise ours above it. */
function onPageTopLayer(): void {
  if (state === 'hidden' || !drawn) return;
  if (spend()) {
    unobserve();
    raise(drawn);
    observe(drawn);
  }
}

function hide(): void {
  state = 'hidden';
  unobserve();
  if (docListenersOn) {
    document.removeEventListener('toggle', onPageToggle, true);
    document.removeEventListener('fullscreenchange', onPageTopLayer, true);
    docListenersOn = false;
  }
  if (drawn) {
    try {
      if (drawn.host.matches(':popover-open')) drawn.host.hidePopover();
    } catch {
      /* already gone */
    }
    drawn.host.remove();
  }
}

/** Answers only `echo:sign:*`; other modules share this isolated world. */
function onMessage(msg: unknown, _sender: unknown, sendResponse: (r: Result<unknown>) => void): undefined {
  const m = msg as ToSign;
  if (!m || typeof m !== 'object' || typeof m.type !== 'string' || !m.type.startsWith('echo:sign:')) return undefined;
  if (m.type === 'echo:sign:show' && (m.state === 'shared' || m.state === 'running')) {
    state = m.state;
    repair(true); // the worker's word is never rationed
  } else if (m.type === 'echo:sign:hide') hide();
  // `echo:sign:ping` (and the two above) answer the state: the worker's liveness probe of the page.
  sendResponse(ok({ state }));
  return undefined;
}

const g = globalThis as unknown as Record<string, boolean | undefined>;
if (!g[INSTANCE_KEY]) {
  g[INSTANCE_KEY] = true;
  chrome.runtime.onMessage.addListener(onMessage);
}
