/** Settings: the approval timeout. Presentational. */
import { useEffect, useState } from 'react';
import type { ConsoleSettings } from '../../shared/ipc';
import type { ErrorInfo } from '../../shared/result';
import { TIMEOUT_BOUNDS_S } from '../stores/settings';

export function SettingsPanel(p: { settings: ConsoleSettings | null; saving: boolean; saved: boolean; offline?: boolean; error: ErrorInfo | null; onSaveTimeout(seconds: number): void }) {
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
      {p.settings ? (
        <p className="muted small">Developer mode is {p.settings.developerMode ? 'on' : 'off'}.</p>
      ) : null}
    </section>
  );
}
