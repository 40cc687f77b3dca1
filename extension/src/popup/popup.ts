/**
 * The popup: link state (refreshed every second from the worker, whose
 * "connected" requires a fresh heartbeat), the pairing code while pairing, the
 * active tab with "Share this tab" / "Stop sharing", and the shared tabs.
 * Plain DOM; page titles and URLs are untrusted and only ever set as
 * textContent. No remote code (MV3 CSP `script-src 'self'`).
 */
import type { Result } from '../../../src/shared/result';
import type { FromPopup, PopupLinkState, PopupState } from '../lib/messages';

const $ = <T extends HTMLElement>(id: string): T => document.getElementById(id) as T;

/** Why a tab cannot be shared, in the person's words. */
const REASONS: Record<string, string> = {
  'browser-page': 'Browser pages (chrome://, about:, view-source:, devtools://) are never shared.',
  'extension-page': 'Extension pages are never shared.',
  'web-store': 'The Chrome Web Store is never shared.',
  file: 'Local files are never shared.',
  'not-http': 'Only web pages (http and https) can be shared.',
  'invalid-url': 'This tab has no page that can be shared.',
  incognito: 'Incognito tabs are never shared or recorded.',
};

const LINK_LABELS: Record<PopupLinkState['state'], [string, 'ok' | 'warn' | 'bad' | '']> = {
  connected: ['Connected to the console', 'ok'],
  connecting: ['Connecting to the console…', 'warn'],
  'awaiting-pairing': ['Pairing: confirmed here; now confirm the code in the console', 'warn'],
  'console-not-running': ['The console is not running. Start Echo Console.', 'bad'],
  'not-installed': ["Echo Console's native host is not registered for this browser.", 'bad'],
  disconnected: ['Not connected (no heartbeat from the console)', 'bad'],
  'version-mismatch': ['Version mismatch: update the console or the extension.', 'bad'],
  refused: ['The console refused this extension.', 'bad'],
  stopped: ['The link is stopped.', 'bad'],
  unknown: ['Link state unknown', 'warn'],
};

/**
 * What a problem only the person can fix says, above its explanation. Version skew and a
 * pairing that stopped working must never look like a silent "connecting" or a bare "refused".
 */
const PROBLEM_LABELS: Record<NonNullable<PopupLinkState['problem']>['code'], string> = {
  'extension-outdated': 'Update the extension: it is older than Echo Console.',
  'console-outdated': 'Update Echo Console: it is older than this extension.',
  'pair-again': 'Pair again: this pairing no longer works.',
};

async function ask<T>(msg: FromPopup): Promise<Result<T>> {
  try {
    return (await chrome.runtime.sendMessage(msg)) as Result<T>;
  } catch (e) {
    return { ok: false, error: { code: 'worker-unreachable', message: e instanceof Error ? e.message : String(e) } };
  }
}

function show(el: HTMLElement, visible: boolean): void {
  el.hidden = !visible;
}

function renderLink(link: PopupLinkState): void {
  const [label, tone] = LINK_LABELS[link.state] ?? LINK_LABELS.unknown;
  const problem = link.problem;
  // While pairing, the pairing label stays (the code is what to act on); the problem says why.
  // A new pairing waits for the person here as well as in the console (issue 9 item 1): whoever
  // answers on the console's socket is never trusted to confirm alone.
  const pairingLabel = link.state === 'awaiting-pairing' && link.awaitingLocalConfirmation === true ? 'Pairing: compare the codes, then confirm here and in the console' : label;
  $('link-label').textContent = problem && link.state !== 'awaiting-pairing' ? PROBLEM_LABELS[problem.code] : pairingLabel;
  $('link-dot').className = `dot ${problem && link.state !== 'awaiting-pairing' ? 'bad' : tone}`;
  $('link-dot').dataset.state = link.state;
  if (problem) $('link-dot').dataset.problem = problem.code;
  else delete $('link-dot').dataset.problem;
  const code = link.state === 'awaiting-pairing' ? link.pairingCode : undefined;
  show($('pairing'), !!code);
  $('pairing-code').textContent = code ?? '';
  show($('confirm-pairing'), !!code && link.awaitingLocalConfirmation === true);
  $('retry').textContent = problem?.code === 'pair-again' && link.state !== 'awaiting-pairing' ? 'Pair again' : 'Try again';
  show($('retry'), ['refused', 'version-mismatch', 'not-installed', 'console-not-running', 'disconnected', 'stopped'].includes(link.state));
  const message = problem?.message ?? link.message;
  show($('link-message'), !!message);
  $('link-message').textContent = message ?? '';
  show($('unpair'), link.paired);
  show($('unconfirmed-pairing'), link.paired && link.unconfirmedPairing === true);
}

let busy = false;
let lastError = '';

function render(s: PopupState): void {
  renderLink(s.link);
  $('version').textContent = `v${s.extensionVersion}`;
  const a = s.activeTab;
  $('active-title').textContent = a ? a.title || '(untitled)' : 'No active tab';
  $('active-url').textContent = a?.url ?? '';
  show($('share'), !!a && a.shareable && !a.shared);
  show($('unshare'), !!a && a.shared);
  const reason = a && !a.shareable ? REASONS[a.reason ?? ''] ?? 'This tab cannot be shared.' : lastError;
  show($('active-reason'), !!reason);
  $('active-reason').textContent = reason;
  const list = $('shared');
  list.replaceChildren(
    ...s.sharedTabs.map((t) => {
      const li = document.createElement('li');
      const span = document.createElement('span');
      span.textContent = t.title || t.url;
      span.title = t.url;
      const stop = document.createElement('button');
      stop.type = 'button';
      stop.textContent = 'Stop';
      stop.addEventListener('click', () => void act({ type: 'popup:unshare', tabId: t.tabId }));
      li.append(span, stop);
      return li;
    }),
  );
  show($('none-shared'), s.sharedTabs.length === 0);
}

let current: PopupState | null = null;

async function refresh(): Promise<void> {
  const r = await ask<PopupState>({ type: 'popup:state' });
  if (r.ok) {
    current = r.value;
    render(r.value);
  } else {
    renderLink({ state: 'unknown', paired: false, message: r.error.message });
  }
}

async function act(msg: FromPopup): Promise<void> {
  if (busy) return;
  busy = true;
  const r = await ask<unknown>(msg);
  lastError = r.ok ? '' : r.error.message;
  busy = false;
  await refresh();
}

$('share').addEventListener('click', () => {
  if (current?.activeTab) void act({ type: 'popup:share', tabId: current.activeTab.tabId });
});
$('unshare').addEventListener('click', () => {
  if (current?.activeTab) void act({ type: 'popup:unshare', tabId: current.activeTab.tabId });
});
$('unpair').addEventListener('click', () => void act({ type: 'popup:unpair' }));
$('retry').addEventListener('click', () => void act({ type: 'popup:retry' }));
$('pair-yes').addEventListener('click', () => void act({ type: 'popup:confirm-pairing', accept: true }));
$('pair-no').addEventListener('click', () => void act({ type: 'popup:confirm-pairing', accept: false }));

void refresh();
// The link state is live: refresh while the popup is open (it closes with the popup).
setInterval(() => void refresh(), 1000);
