/** Settings: the approval timeout, and developer mode's switch. Presentational. */
import { useEffect, useState } from 'react';
import type { ConsoleSettings } from '../../shared/ipc';
import type { ErrorInfo } from '../../shared/result';
import { TIMEOUT_BOUNDS_S } from '../stores/settings';
import { DeveloperModeSwitch } from './DeveloperModeSwitch';

export function SettingsPanel(p: {
  settings: ConsoleSettings | null;
  saving: boolean;
  saved: boolean;
  offline?: boolean;
  error: ErrorInfo | null;
  onSaveTimeout(seconds: number): void;
  /** Developer mode's switch (./DeveloperModeSwitch.tsx). */
  developerMode?: { busy: boolean; error: ErrorInfo | null; onSwitch(on: boolean): void };
}) {
  const current = p.settings ? Math.round(p.settings.approvalTimeoutMs / 1000) : null;
  const [value, setValue] = useState(current === null ? '' : String(current));
  useEffect(() => {
    if (current !== null) setValue(String(current));
  }, [current]);

  return (
    <section className="panel" aria-labelledby="settings-h">
      <h2 id="settings-h">Settings</h2>
      <form
        className="settings-form"
        onSubmit={(e) => {
          e.preventDefault();
          p.onSaveTimeout(Number(value));
        }}
      >
        <label htmlFor="approval-timeout">Approval timeout (seconds)</label>
        <p className="muted small">How long a request waits for your decision before it expires and the agent is told so.</p>
        <div className="row">
          <input
            id="approval-timeout"
            type="number"
            min={TIMEOUT_BOUNDS_S.min}
            max={TIMEOUT_BOUNDS_S.max}
            step={1}
            value={value}
            onChange={(e) => setValue(e.target.value)}
            data-testid="approval-timeout"
          />
          <button type="submit" className="btn" disabled={p.saving || !p.settings || p.offline} data-testid="save-settings">
            {p.saving ? 'Saving…' : 'Save'}
          </button>
          {p.saved ? <span className="muted small">Saved.</span> : null}
        </div>
        {p.error ? (
          <p className="error" role="alert">
            {p.error.message}
          </p>
        ) : null}
      </form>
      {p.settings && p.developerMode ? (
        <DeveloperModeSwitch
          on={p.settings.developerMode}
          idleMinutes={p.settings.developerModeIdleMinutes}
          busy={p.developerMode.busy}
          offline={p.offline}
          error={p.developerMode.error}
          onSwitch={p.developerMode.onSwitch}
        />
      ) : null}
    </section>
  );
}
