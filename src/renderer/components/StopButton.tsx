/**
 * Stop (issue 12 item 5; docs/stop.md), presentational:
 *  - `StopButton`: stop one request in flight. Reusable: the approval dialog shows it once a
 *    request is approved, and a timeline row may show it for any request in flight (wire it to
 *    `stores/inflight.ts` `stop(requestId)`; src/renderer/stop-request.tsx `StopRequest` is the container).
 *  - `StopEverythingButton`: the kill switch in the console header. No confirmation step: it only
 *    takes power away, and a kill switch is one act (docs/stop.md says why).
 *  - `ReloadOffers`: the tab reloads offered after a Stop that left an outcome unknown (for a tab no longer
 *    shared, as after Stop everything: the advice to reload it in Chrome, with no button).
 * Every button acts only on the person's own input (`event.isTrusted`, trust rule 19); the hosts
 * gate the API call too (src/main/core/trusted-input.ts).
 */
import { useState, type MouseEvent } from 'react';
import type { InFlightPhase } from '../../shared/ipc';
import { stopWords } from '../stop-text';
import type { ReloadOffer } from '../stores/inflight';

/** Run `act` only for the person's own click; else tell `ignored`. */
function byPerson(act: () => void, ignored: () => void) {
  return (e: MouseEvent<HTMLButtonElement>) => {
    if (e.nativeEvent.isTrusted !== true) return ignored();
    act();
  };
}

export interface StopButtonProps {
  requestId: string;
  phase: InFlightPhase;
  /** Already stopped (its end is being recorded), or another stop is underway. */
  disabled?: boolean;
  busy?: boolean;
  onStop(requestId: string): void;
}

/** Stop one request in flight. */
export function StopButton({ requestId, phase, disabled = false, busy = false, onStop }: StopButtonProps) {
  const [ignored, setIgnored] = useState(false);
  return (
    <>
      <button
        type="button"
        className="btn btn-danger"
        title={stopWords(phase)}
        disabled={disabled || busy}
        onClick={byPerson(() => onStop(requestId), () => setIgnored(true))}
        data-testid="stop-button"
        data-request-id={requestId}
      >
        {busy ? 'Stopping…' : 'Stop'}
      </button>
      {ignored ? (
        <span className="error" role="alert" data-testid="stop-untrusted-click">
          A click that did not come from your mouse or keyboard was ignored.
        </span>
      ) : null}
    </>
  );
}

/** The header's kill switch. */
export function StopEverythingButton(props: { busy: boolean; disabled: boolean; onStop(): void }) {
  const [ignored, setIgnored] = useState(false);
  return (
    <span className="stop-everything">
      <button
        type="button"
        className="btn btn-danger btn-small"
        title="Deny every waiting request, stop everything running, unshare every tab, close every agent session, switch developer mode off."
        disabled={props.busy || props.disabled}
        onClick={byPerson(props.onStop, () => setIgnored(true))}
        data-testid="stop-everything"
      >
        {props.busy ? 'Stopping…' : 'Stop everything'}
      </button>
      {ignored ? (
        <span className="error" role="alert" data-testid="stop-everything-untrusted-click">
          Ignored: that click did not come from you.
        </span>
      ) : null}
    </span>
  );
}

/** The reloads offered after stops that left an outcome unknown. */
export function ReloadOffers(props: { offers: ReloadOffer[]; busyTab: number | null; onReload(tabId: number): void; onDismiss(tabId: number): void }) {
  const [ignored, setIgnored] = useState(false);
  if (props.offers.length === 0) return null;
  return (
    <div className="notice reload-offers" role="status" data-testid="reload-offers">
      {props.offers.map((o) => o.unshared ? (
        <p key={o.tabId} data-testid="reload-offer" data-tab-id={o.tabId} data-unshared="true">
          A request in tab {o.tabId} was stopped after it was dispatched: its outcome is unknown, and the page&apos;s own code may
          still be running. The tab is no longer shared, so the console no longer acts on it: reload it in Chrome
          yourself to end that code (and anything unsaved on the page).{' '}
          <button type="button" className="btn btn-small btn-link" onClick={() => props.onDismiss(o.tabId)} data-testid="reload-dismiss">
            Dismiss
          </button>
        </p>
      ) : (
        <p key={o.tabId} data-testid="reload-offer" data-tab-id={o.tabId}>
          A request in tab {o.tabId} was stopped after it was dispatched: its outcome is unknown, and the page&apos;s own code may
          still be running. Reloading the tab ends that code (and anything unsaved on the page).{' '}
          <button type="button" className="btn btn-small" disabled={props.busyTab === o.tabId} onClick={byPerson(() => props.onReload(o.tabId), () => setIgnored(true))} data-testid="reload-tab">
            Reload tab {o.tabId}
          </button>{' '}
          <button type="button" className="btn btn-small btn-link" onClick={() => props.onDismiss(o.tabId)} data-testid="reload-dismiss">
            Not now
          </button>
        </p>
      ))}
      {ignored ? (
        <p className="error" role="alert">
          A click that did not come from your mouse or keyboard was ignored.
        </p>
      ) : null}
    </div>
  );
}
