/**
 * Developer mode's switch in Settings (issue 11 item 2): "on" is a deliberate
 * act, confirmed after the console says what it allows; "off" is one press.
 * The host decides: switching on counts only right after the person's own
 * press in the desktop app's window (src/main/core/trusted-input.ts); the
 * loopback web host refuses it unless the person started it with
 * `--developer-mode`, and its refusal is shown as the host's words. Here, as for
 * Approve (trust rule 19), the confirmation acts only on the person's own click
 * (`event.isTrusted`): a script's `click()` switches nothing and is flagged.
 * Presentational.
 */
import { useState, type MouseEvent } from 'react';
import type { ErrorInfo } from '../../shared/result';

export function DeveloperModeSwitch(p: { on: boolean; idleMinutes: number; busy: boolean; offline?: boolean; error: ErrorInfo | null; onSwitch(on: boolean): void }) {
  const [confirming, setConfirming] = useState(false);
  // A click on the confirmation that was not the person's (a script's `click()`): ignored, and said.
  const [ignored, setIgnored] = useState(false);
  return (
    <section className="developer-mode-switch" aria-labelledby="devmode-h" data-testid="developer-mode-switch">
      <h3 id="devmode-h">Developer mode</h3>
      <p className="muted small">
        Developer mode is <strong>{p.on ? 'on' : 'off'}</strong>. It is never remembered: it is off whenever the console starts, and
        it switches itself off after {p.idleMinutes} minutes without your input here.
      </p>
      {p.on ? (
        <button type="button" className="btn" disabled={p.busy || p.offline} onClick={() => p.onSwitch(false)} data-testid="developer-mode-off">
          Switch developer mode off
        </button>
      ) : confirming ? (
        <div className="confirm" role="group" aria-label="Confirm developer mode" data-testid="developer-mode-confirm">
          <p>
            While developer mode is on, agents may ask to run their own JavaScript in a tab you shared, in the page itself. Each
            script still waits for your approval of its exact code, and every run is receipted. A script you approve can do anything
            the page can do, for as long as the page is open.
          </p>
          <div className="row">
            <button
              type="button"
              className="btn btn-danger"
              disabled={p.busy || p.offline}
              onClick={(e: MouseEvent<HTMLButtonElement>) => {
                if (e.nativeEvent.isTrusted !== true) return setIgnored(true);
                setIgnored(false);
                setConfirming(false);
                p.onSwitch(true);
              }}
              data-testid="developer-mode-confirm-on"
            >
              Switch developer mode on
            </button>
            <button type="button" className="btn" onClick={() => setConfirming(false)}>
              Cancel
            </button>
          </div>
        </div>
      ) : (
        <button type="button" className="btn" disabled={p.busy || p.offline} onClick={() => setConfirming(true)} data-testid="developer-mode-on-ask">
          Switch developer mode on…
        </button>
      )}
      {ignored ? (
        <p className="error" role="alert" data-testid="developer-mode-ignored">
          A click on “Switch developer mode on” that was not yours (a script’s) was ignored: developer mode stays off.
        </p>
      ) : null}
      {p.error ? (
        <p className="error" role="alert" data-testid="developer-mode-error">
          {p.error.message}
        </p>
      ) : null}
    </section>
  );
}
