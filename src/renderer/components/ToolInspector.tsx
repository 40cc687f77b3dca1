/**
 * The tool inspector (issue 12 items 4 and 6; docs/inspector.md), per shared tab: page lint for the
 * page's author, the page's WebMCP tools (live), one tool's descriptor (name, title, description,
 * inputSchema, the annotations the browser reports, frame and frame URL, descriptorHash, flags),
 * a form generated from its inputSchema (../schema-form.ts) that runs it by hand through the
 * agent's pipeline (the approval dialog is still shown; the person is the actor), and its call
 * history from the receipts.
 *
 * Every page string is UNTRUSTED and shown as text with invisible characters revealed. Run acts
 * only on the person's own click (`isTrusted`), like Approve.
 */
import { useMemo, useState } from 'react';
import type { InspectorView } from '../../shared/ipc';
import { LINT_RULES, type LintFinding } from '../../shared/page-lint';
import type { ErrorInfo } from '../../shared/result';
import type { SharedTab, ToolDescriptor } from '../../shared/types';
import { argumentsFromJson, argumentsOf, formModel, type FormField, type FormProblem, type FormValues } from '../schema-form';
import { toolKey, type HistoryEntry, type InspectorState } from '../stores/inspector';
import { revealInvisible } from '../text';
import { Field, HashField } from './fields';

export interface ToolInspectorProps {
  sharedTabs: SharedTab[];
  state: Pick<InspectorState, 'tabId' | 'views' | 'loading' | 'error' | 'selected' | 'history' | 'calls' | 'lastCall' | 'invokeError' | 'invoking'>;
  offline: boolean;
  onChooseTab(tabId: number | null): void;
  onInspect(tabId: number): void;
  onSelect(key: string | null): void;
  onInvoke(tool: ToolDescriptor, args: Record<string, unknown>): void;
  onRefreshHistory(): void;
}

export function ToolInspector(props: ToolInspectorProps) {
  const { state } = props;
  const view = state.tabId !== null ? state.views[state.tabId] : undefined;
  const tool = view?.discovery.tools.find((t) => toolKey(t) === state.selected);
  return (
    <section className="panel" data-testid="tool-inspector">
      <h2>Tool inspector</h2>
      <p className="muted">
        The WebMCP tools a shared tab offers, as an agent sees them, kept current as the page changes them; page lint for the page&apos;s author;
        and a form to run a tool yourself. A run goes through the same approval dialog and receipts as an agent&apos;s call, with you as the actor.
      </p>
      <div className="row">
        <label>
          Shared tab{' '}
          <select
            data-testid="inspector-tab"
            value={state.tabId ?? ''}
            disabled={props.offline}
            onChange={(e) => props.onChooseTab(e.target.value === '' ? null : Number(e.target.value))}
          >
            <option value="">Choose a shared tab…</option>
            {props.sharedTabs.map((t) => (
              <option key={t.tabId} value={t.tabId}>
                {revealInvisible(t.title || t.url)} — {t.origin}
              </option>
            ))}
          </select>
        </label>{' '}
        {state.tabId !== null ? (
          <button type="button" className="btn btn-small" disabled={props.offline || state.loading !== null} onClick={() => props.onInspect(state.tabId as number)} data-testid="inspector-refresh">
            {state.loading !== null ? 'Inspecting…' : 'Inspect again'}
          </button>
        ) : null}
      </div>
      {props.sharedTabs.length === 0 ? <p className="empty">No tab is shared. Share one on the Connection page to inspect it.</p> : null}
      {state.error ? (
        <p className="error" role="alert" data-testid="inspector-error">
          {state.error.message}
        </p>
      ) : null}
      {view ? (
        <>
          <Summary view={view} />
          <Lint view={view} />
          <ToolList view={view} selected={state.selected} onSelect={props.onSelect} />
          {tool ? <ToolDetail key={state.selected ?? ''} tool={tool} {...props} /> : null}
        </>
      ) : null}
    </section>
  );
}

function Summary(props: { view: InspectorView }) {
  const d = props.view.discovery;
  return (
    <p className="small" data-testid="inspector-summary">
      <code>{revealInvisible(d.url)}</code> · WebMCP {d.support.modelContext ? 'available' : 'not available'} · {d.tools.length} tool{d.tools.length === 1 ? '' : 's'}
      {d.violations.length ? ` · ${d.violations.length} not listed (limits)` : ''} · inspected {new Date(props.view.inspectedAt).toLocaleTimeString()}
    </p>
  );
}

/** Page lint: findings grouped by rule, each with why and the links. */
function Lint(props: { view: InspectorView }) {
  const { lint, lintPage } = props.view;
  const rules = LINT_RULES.filter((r) => lint.some((f) => f.rule === r.id));
  return (
    <div className="block" data-testid="inspector-lint">
      <h3>Page lint {lint.length ? <span className="badge">{lint.length}</span> : null}</h3>
      {'error' in lintPage ? (
        <p className="notice">The page-side checks could not run ({lintPage.error}); only the descriptor checks are shown.</p>
      ) : (
        <p className="small muted">
          Page checks read {lintPage.frames} frame{lintPage.frames === 1 ? '' : 's'} ({lintPage.scriptsScanned} scripts scanned, {lintPage.scriptsSkipped} skipped
          {lintPage.unreached ? `, ${lintPage.unreached} frames not reached` : ''}).
        </p>
      )}
      {lint.length === 0 ? <p className="empty" data-testid="lint-clean">No finding.</p> : null}
      {rules.map((r) => (
        <div key={r.id} className="lint-rule" data-testid="lint-rule" data-rule={r.id}>
          <h4>
            <span className={`pill ${r.severity === 'error' ? 'pill-bad' : 'pill-warn'}`}>{r.severity}</span> {r.title} <code className="small">{r.id}</code>
          </h4>
          <ul>
            {lint
              .filter((f) => f.rule === r.id)
              .map((f, i) => (
                <FindingItem key={i} f={f} />
              ))}
          </ul>
          <p className="small">{r.why}</p>
          <p className="small">
            {r.refs.map((ref) => (
              <span key={ref.href + ref.section}>
                <a href={ref.href} target="_blank" rel="noreferrer noopener">
                  {ref.label}
                </a>{' '}
                ({ref.section}){' '}
              </span>
            ))}
          </p>
        </div>
      ))}
    </div>
  );
}

function FindingItem(props: { f: LintFinding }) {
  const { f } = props;
  return (
    <li data-testid="lint-finding" data-rule={f.rule} data-tool={f.toolName ?? ''}>
      {revealInvisible(f.detail)}
      {f.frameId >= 0 ? <span className="muted small"> (frame {f.frameId})</span> : null}
    </li>
  );
}

function ToolList(props: { view: InspectorView; selected: string | null; onSelect(key: string | null): void }) {
  const tools = props.view.discovery.tools;
  return (
    <div className="block">
      <h3>Tools</h3>
      {tools.length === 0 ? <p className="empty">This page offers no WebMCP tool.</p> : null}
      <table className="receipts" data-testid="inspector-tools">
        <thead>
          <tr>
            <th>Name (page text)</th>
            <th>Title</th>
            <th>Kind</th>
            <th>Frame</th>
            <th>Flags</th>
          </tr>
        </thead>
        <tbody>
          {tools.map((t) => {
            const key = toolKey(t);
            return (
              <tr key={key} className={props.selected === key ? 'selected' : undefined} data-testid="inspector-tool-row" data-tool={t.name}>
                <td>
                  <button type="button" className="btn-link" onClick={() => props.onSelect(props.selected === key ? null : key)} data-testid={`inspector-tool-${t.name}`}>
                    {revealInvisible(t.name)}
                  </button>
                </td>
                <td>{revealInvisible(t.title)}</td>
                <td>{t.kind}</td>
                <td>{t.frameId}</td>
                <td>{[...(t.flags ?? []), ...(t.blocked ? [`blocked: ${t.blocked}`] : []), ...(t.unusable ? ['unusable'] : [])].join(', ')}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}

function ToolDetail(props: ToolInspectorProps & { tool: ToolDescriptor }) {
  const { tool: t, state } = props;
  const lastId = state.lastCall[toolKey(t)];
  const last = lastId ? state.calls[lastId] : undefined;
  return (
    <div className="block" data-testid="inspector-tool-detail">
      <h3>{revealInvisible(t.name)}</h3>
      <dl className="fields">
        <Field label="Title">{revealInvisible(t.title) || <span className="muted">(none)</span>}</Field>
        <Field label="Kind">{t.kind === 'declarative' ? 'declarative (<form toolname>)' : 'imperative (registerTool)'}</Field>
        <Field label="Description" wide>
          <span className="pre-wrap" data-testid="inspector-description">
            {revealInvisible(t.description) || <span className="muted">(empty)</span>}
          </span>
        </Field>
        <Field label="Annotations (the browser's report; hints only)" wide>
          <code data-testid="inspector-annotations">{t.annotations ? JSON.stringify(t.annotations) : 'none reported'}</code>
        </Field>
        <Field label="Frame">
          {t.frameId} <code>{revealInvisible(t.frameUrl ?? '')}</code>
        </Field>
        <Field label="Origin">
          <code>{t.origin}</code>
        </Field>
        <HashField label="Descriptor hash" hash={t.descriptorHash} testId="inspector-descriptor-hash" />
        <Field label="Flags" wide>
          {[...(t.flags ?? []), ...(t.blocked ? [`blocked: ${t.blocked}`] : [])].join(', ') || 'none'}
          {t.unusable ? <div className="notice">{revealInvisible(t.unusable)}</div> : null}
        </Field>
        <Field label="inputSchema" wide>
          <pre className="schema" data-testid="inspector-schema">
            {revealInvisible(JSON.stringify(t.inputSchema, null, 2) ?? '')}
          </pre>
        </Field>
      </dl>
      <InvokeForm {...props} />
      {last ? <CallStatus entry={last} /> : null}
      <History entries={state.history?.key === toolKey(t) ? state.history.entries : []} loading={state.history?.loading ?? false} error={state.history?.error ?? null} onRefresh={props.onRefreshHistory} />
    </div>
  );
}

function CallStatus(props: { entry: InspectorState['calls'][string] }) {
  const e = props.entry;
  if (e.state === 'pending') {
    return (
      <p className="notice" data-testid="inspector-call-status" data-state="pending">
        Waiting: approve or deny this run in the approval dialog.
      </p>
    );
  }
  const c = e.call;
  return c.ok ? (
    <div className="block" data-testid="inspector-call-status" data-state="succeeded">
      <p>
        Succeeded (request <code>{c.requestId}</code>). The page&apos;s answer (untrusted{c.value.truncated ? ', truncated' : ''}
        {c.value.redacted ? ', secrets redacted' : ''}):
      </p>
      <pre className="schema" data-testid="inspector-call-result">
        {revealInvisible(c.value.result ?? 'null')}
      </pre>
    </div>
  ) : (
    <p className="error" data-testid="inspector-call-status" data-state={c.error.code}>
      {c.error.code}: {revealInvisible(c.error.message)} {c.requestId ? <code>{c.requestId}</code> : null}
    </p>
  );
}

function History(props: { entries: HistoryEntry[]; loading: boolean; error: ErrorInfo | null; onRefresh(): void }) {
  return (
    <div className="block" data-testid="inspector-history">
      <h4>
        Call history{' '}
        <button type="button" className="btn btn-small" onClick={props.onRefresh} disabled={props.loading}>
          {props.loading ? 'Reading…' : 'Refresh'}
        </button>
      </h4>
      <p className="small muted">Requests for this tool name at this origin, newest first, from the receipts.</p>
      {props.error ? <p className="error">{props.error.message}</p> : null}
      {props.entries.length === 0 && !props.loading ? <p className="empty">No call yet.</p> : null}
      {props.entries.length ? (
        <table className="receipts">
          <thead>
            <tr>
              <th>When</th>
              <th>Who</th>
              <th>How it stands</th>
              <th>Request</th>
              <th>Descriptor</th>
            </tr>
          </thead>
          <tbody>
            {props.entries.map((h) => (
              <tr key={h.requestId} data-testid="inspector-history-row" data-who={h.byPerson ? 'person' : 'agent'} data-event={h.lastEvent}>
                <td>{new Date(h.startedAt).toLocaleTimeString()}</td>
                <td>{revealInvisible(h.who)}</td>
                <td>{h.lastEvent}</td>
                <td>
                  <code>{h.requestId}</code>
                </td>
                <td>
                  <code className="hash">{h.descriptorHash ? `${h.descriptorHash.slice(0, 12)}…` : '—'}</code>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </div>
  );
}

/** The form generated from the tool's inputSchema, or its arguments as JSON; Run acts only on a trusted click. */
function InvokeForm(props: ToolInspectorProps & { tool: ToolDescriptor }) {
  const { tool: t } = props;
  const model = useMemo(() => formModel(t.inputSchema), [t.inputSchema]);
  const [values, setValues] = useState<FormValues>({});
  const [asJson, setAsJson] = useState(model.jsonOnly);
  const [json, setJson] = useState('{}');
  const [problems, setProblems] = useState<FormProblem[]>([]);
  const set = (path: string, v: string | boolean) => setValues((old) => ({ ...old, [path]: v }));
  const run = () => {
    const args = asJson ? argumentsFromJson(json) : argumentsOf(model.fields, values);
    if (!args.ok) return setProblems(args.problems);
    setProblems([]);
    props.onInvoke(t, args.value);
  };
  const blocked = t.blocked !== undefined;
  return (
    <form
      className="block invoke-form"
      data-testid="inspector-invoke-form"
      onSubmit={(e) => {
        e.preventDefault();
        // Like Approve: a script's synthetic submit never starts a run in the person's name.
        if ((e.nativeEvent as SubmitEvent).isTrusted !== true) return;
        run();
      }}
    >
      <h4>Run it yourself</h4>
      <p className="small muted">
        The console checks the arguments against this schema, then shows the approval dialog. Nothing runs until you approve there.
      </p>
      {blocked ? <p className="notice">This tool may not be run (blocked: {t.blocked}).</p> : null}
      <label className="small">
        <input type="checkbox" checked={asJson} disabled={model.jsonOnly} onChange={(e) => setAsJson(e.target.checked)} data-testid="inspector-as-json" /> Edit the arguments as JSON
      </label>
      {asJson ? (
        <textarea className="json-args" rows={6} value={json} onChange={(e) => setJson(e.target.value)} data-testid="inspector-json-args" spellCheck={false} />
      ) : (
        <Fields fields={model.fields} values={values} onChange={set} />
      )}
      {model.omitted ? <p className="small">{model.omitted} more properties are not shown: use the JSON editor.</p> : null}
      {problems.length ? (
        <ul className="error" data-testid="inspector-form-problems">
          {problems.map((p, i) => (
            <li key={i}>{revealInvisible(p.message)}</li>
          ))}
        </ul>
      ) : null}
      {props.state.invokeError ? (
        <p className="error" role="alert" data-testid="inspector-invoke-error">
          {props.state.invokeError.message}
        </p>
      ) : null}
      <button type="submit" className="btn btn-primary" disabled={props.offline || props.state.invoking || blocked} data-testid="inspector-run">
        Run…
      </button>
    </form>
  );
}

function Fields(props: { fields: FormField[]; values: FormValues; onChange(path: string, v: string | boolean): void }) {
  return (
    <>
      {props.fields.map((f) => (
        <FieldInput key={f.path} f={f} values={props.values} onChange={props.onChange} />
      ))}
    </>
  );
}

function FieldInput(props: { f: FormField; values: FormValues; onChange(path: string, v: string | boolean): void }) {
  const { f, values, onChange } = props;
  const v = values[f.path];
  const text = typeof v === 'string' ? v : '';
  const label = (
    <span>
      {revealInvisible(f.label)}
      {f.required ? ' *' : ''}
      {f.label !== f.key ? <code className="small"> {revealInvisible(f.key)}</code> : null}
    </span>
  );
  const help = f.description ? <span className="small muted"> {revealInvisible(f.description)}</span> : null;
  const testId = `inspector-field-${f.path}`;
  switch (f.kind) {
    case 'object':
      return (
        <fieldset>
          <legend>{label}</legend>
          {help}
          <Fields fields={f.fields} values={values} onChange={onChange} />
        </fieldset>
      );
    case 'boolean':
      return (
        <label className="form-field">
          <input type="checkbox" checked={v === true} onChange={(e) => onChange(f.path, e.target.checked)} data-testid={testId} /> {label}
          {help}
        </label>
      );
    case 'choice':
      return f.widget === 'radio' ? (
        <fieldset className="form-field" data-testid={testId}>
          <legend>{label}</legend>
          {help}
          {f.options.map((o, i) => (
            <label key={i}>
              <input type="radio" name={f.path} value={String(i)} checked={text === String(i)} onChange={() => onChange(f.path, String(i))} /> {revealInvisible(o.label)}
            </label>
          ))}
        </fieldset>
      ) : (
        <label className="form-field">
          {label}{' '}
          <select value={text} onChange={(e) => onChange(f.path, e.target.value)} data-testid={testId}>
            <option value="">—</option>
            {f.options.map((o, i) => (
              <option key={i} value={String(i)}>
                {revealInvisible(o.label)}
              </option>
            ))}
          </select>
          {help}
        </label>
      );
    case 'number':
      return (
        <label className="form-field">
          {label}{' '}
          <input type="number" value={text} min={f.min} max={f.max} step={f.step ?? (f.integer ? 1 : 'any')} onChange={(e) => onChange(f.path, e.target.value)} data-testid={testId} />
          {help}
        </label>
      );
    case 'json':
      return (
        <label className="form-field">
          {label} <span className="small">(JSON)</span>
          <textarea rows={3} value={text} onChange={(e) => onChange(f.path, e.target.value)} data-testid={testId} spellCheck={false} />
          {help}
        </label>
      );
    case 'text':
      return (
        <label className="form-field">
          {label}{' '}
          {f.input === 'textarea' ? (
            <textarea rows={3} value={text} maxLength={f.maxLength} onChange={(e) => onChange(f.path, e.target.value)} data-testid={testId} />
          ) : (
            <input type={f.input} value={text} maxLength={f.maxLength} onChange={(e) => onChange(f.path, e.target.value)} data-testid={testId} />
          )}
          {f.hint ? <span className="small muted"> pattern: <code>{revealInvisible(f.hint)}</code></span> : null}
          {help}
        </label>
      );
  }
}
