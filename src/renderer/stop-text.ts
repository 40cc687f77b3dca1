/**
 * The console's words for Stop and the badges (issue 12 items 5 and 7; docs/stop.md): what a
 * Stop does in each phase, what a Stop everything did, and the window or tab title with the
 * count of approvals waiting. Plain functions (no React), unit-tested in renderer-stop.test.ts.
 */
import type { InFlightPhase, StopEverythingReport } from '../shared/ipc';

/** What Stop does in each phase, in words for the button's title. */
export function stopWords(phase: InFlightPhase): string {
  return phase === 'dispatched'
    ? "Stop waiting and abort it in the page. The page's own code may still run, so its outcome will be unknown."
    : 'Stop it before it is dispatched: nothing is done in the page.';
}

/** One line for what a Stop everything did. */
export function stopReportText(r: StopEverythingReport): string {
  const n = (k: number, one: string, many: string) => `${k} ${k === 1 ? one : many}`;
  const parts = [
    n(r.denied.length, 'request denied', 'requests denied'),
    n(r.stopped.length, 'running request stopped', 'running requests stopped'),
    n(r.unshared.length, 'tab unshared', 'tabs unshared'),
    n(r.sessionsClosed, 'agent session closed', 'agent sessions closed'),
    r.developerModeSwitchedOff ? 'developer mode switched off' : 'developer mode was off',
  ];
  const failed = r.unshareFailed.length ? ` ${n(r.unshareFailed.length, 'tab', 'tabs')} could not be unshared (${r.unshareFailed.map((f) => `tab ${f.tabId}: ${f.code}`).join(', ')}): unshare them in the extension's popup.` : '';
  return `Stopped everything: ${parts.join(', ')}.${failed} Agent tokens stay valid; revoke one in Connection to keep its agent out.`;
}

/**
 * The window or tab title, so it shows even when the console is hidden behind other windows:
 * the count of approvals waiting first (issue 12 item 7: "(2) Echo Console"), then the
 * developer mode prefix while it is on (issue 11 item 2).
 */
export function consoleTitle(developerMode: boolean, pending = 0): string {
  const base = developerMode ? 'DEVELOPER MODE · Echo Console' : 'Echo Console';
  return pending > 0 ? `(${pending}) ${base}` : base;
}
