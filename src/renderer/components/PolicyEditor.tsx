/**
 * The policy editor: the person's local rules, in the order the console checks
 * them (the first match wins), with add and remove. Presentational: the rules
 * and shared tabs come in as props, changes go out through callbacks; the
 * console checks every rule again and may refuse it.
 *
 * What no rule can do is said on the page, because an editor that offers
 * "allow" must not suggest it skips review: a mutation is always reviewed, and a
 * low-impact mutation is allowed only by a rule for one shared tab.
 */
import { useState } from 'react';
import { POLICY_ACTIONS, POLICY_FACULTIES, TOOL_KINDS, type PolicyAction, type PolicyFaculty, type PolicyRule, type ToolKind } from '../../shared/policy';
import type { ErrorInfo } from '../../shared/result';
import type { SharedTab } from '../../shared/types';
import { ruleEffect } from '../stores/policy';

const KIND_LABEL: Record<ToolKind, string> = {
  read: 'read',
  'low-impact-mutation': 'low-impact mutation (focus, hover, scroll)',
  mutation: 'mutation',
};

/** A labelled `<select>` of "Any" (`*`) or one of `options`; the value stays typed (no cast of the DOM's string). */
function AnyOf<T extends string>(p: { label: string; testId: string; value: T | '*'; options: readonly T[]; labelOf: (o: T) => string; onChange: (v: T | '*') => void }) {
  return (
    <label>
      {p.label}
      <select value={p.value} onChange={(e) => p.onChange(p.options.find((o) => o === e.target.value) ?? '*')} data-testid={p.testId}>
        <option value="*">Any</option>
        {p.options.map((o) => (
          <option key={o} value={o}>
            {p.labelOf(o)}
          </option>
        ))}
      </select>
    </label>
  );
}

function tabLabel(tabs: SharedTab[], tabId: number | undefined): string {
  if (tabId === undefined) return 'any';
  const t = tabs.find((x) => x.tabId === tabId);
  return t ? `${t.title || 'Untitled'} (tab ${tabId})` : `tab ${tabId}`;
}

export interface PolicyEditorProps {
  rules: PolicyRule[] | null;
  /** The tabs shared now: a tab rule is made for one of them. */
  sharedTabs: SharedTab[];
  busy: boolean;
  offline?: boolean;
  error: ErrorInfo | null;
  /** Resolves true when the console kept the rule (the form is then cleared). */
  onAdd(rule: PolicyRule): Promise<boolean>;
  onRemove(index: number): void;
}

export function PolicyEditor(p: PolicyEditorProps) {
  const [origin, setOrigin] = useState('');
  const [tab, setTab] = useState('');
  const [faculty, setFaculty] = useState<PolicyFaculty | '*'>('*');
  const [kind, setKind] = useState<ToolKind | '*'>('*');
  const [tool, setTool] = useState('');
  const [action, setAction] = useState<PolicyAction>('deny');
  const [reason, setReason] = useState('');
  const chosenTab = tab === '' ? undefined : p.sharedTabs.find((t) => String(t.tabId) === tab);

  const draft = (): PolicyRule => {
    const rule: PolicyRule = { action };
    if (chosenTab) {
      rule.tabId = chosenTab.tabId;
      rule.origin = chosenTab.origin;
    } else if (origin.trim() !== '') rule.origin = origin.trim();
    if (faculty !== '*') rule.faculty = faculty;
    if (kind !== '*') rule.kind = kind;
    if (tool.trim() !== '') rule.tool = tool.trim();
    if (reason.trim() !== '') rule.reason = reason.trim();
    return rule;
  };
  const effect = ruleEffect(draft());
  const disabled = p.busy || p.offline || p.rules === null;

  return (
    <section className="panel" aria-labelledby="policy-h" data-testid="policy-editor">
      <h2 id="policy-h">Policy</h2>
      <p className="muted small">
        Local rules the console checks before anything reaches you or the page; the first matching rule wins. Reads are allowed unless a rule denies
        them. Low-impact mutations (focus, hover, scroll) ask you unless you allowed them for one shared tab; that rule ends when the tab stops being
        shared. Mutations and page tool invocations always ask you: a rule can deny them, never skip your approval. What a page claims about its
        tools never counts.
      </p>
      {p.rules === null ? (
        <p className="muted">Loading…</p>
      ) : p.rules.length === 0 ? (
        <p className="empty" data-testid="policy-empty">
          No rules: the defaults above apply.
        </p>
      ) : (
        <table className="receipts" data-testid="policy-rules">
          <thead>
            <tr>
              <th scope="col">#</th>
              <th scope="col">Origin</th>
              <th scope="col">Tab</th>
              <th scope="col">Faculty</th>
              <th scope="col">Kind</th>
              <th scope="col">Page tool</th>
              <th scope="col">Action</th>
              <th scope="col">Reason</th>
              <th scope="col">
                <span className="visually-hidden">Remove</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {p.rules.map((r, i) => (
              <tr key={`${i}:${JSON.stringify(r)}`} data-testid="policy-rule-row">
                <td>{i + 1}</td>
                <td data-testid="policy-rule-origin">{r.origin ?? 'any'}</td>
                <td data-testid="policy-rule-tab">{tabLabel(p.sharedTabs, r.tabId)}</td>
                <td data-testid="policy-rule-faculty">{r.faculty === undefined || r.faculty === '*' ? 'any' : r.faculty}</td>
                <td data-testid="policy-rule-kind">{r.kind === undefined || r.kind === '*' ? 'any' : KIND_LABEL[r.kind]}</td>
                <td>{r.tool ?? 'any'}</td>
                <td data-testid="policy-rule-action">
                  {r.action}
                  {ruleEffect(r) ? (
                    <span className="muted small" title={ruleEffect(r) ?? undefined}>
                      {' '}
                      (cannot skip review)
                    </span>
                  ) : null}
                </td>
                <td>{r.reason ?? ''}</td>
                <td>
                  <button type="button" className="btn btn-small btn-danger" disabled={disabled} onClick={() => p.onRemove(i)} data-testid={`policy-remove-${i}`} aria-label={`Remove rule ${i + 1}`}>
                    Remove
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}

      <form
        className="policy-form"
        aria-labelledby="policy-add-h"
        onSubmit={(e) => {
          e.preventDefault();
          void p.onAdd(draft()).then((kept) => {
            if (!kept) return;
            setOrigin('');
            setTab('');
            setTool('');
            setReason('');
          });
        }}
      >
        <h3 id="policy-add-h">Add a rule</h3>
        <div className="policy-fields">
          <label>
            Tab
            <select value={tab} onChange={(e) => setTab(e.target.value)} data-testid="policy-tab">
              <option value="">Any tab</option>
              {p.sharedTabs.map((t) => (
                <option key={t.tabId} value={String(t.tabId)}>
                  {`${t.title || 'Untitled'} — ${t.origin}`}
                </option>
              ))}
            </select>
          </label>
          <label>
            Origin
            <input
              type="text"
              placeholder="https://shop.example, * or empty for any"
              value={chosenTab ? chosenTab.origin : origin}
              disabled={chosenTab !== undefined}
              onChange={(e) => setOrigin(e.target.value)}
              data-testid="policy-origin"
              spellCheck={false}
            />
          </label>
          <AnyOf label="Faculty" testId="policy-faculty" value={faculty} options={POLICY_FACULTIES} labelOf={(f) => f} onChange={setFaculty} />
          <AnyOf label="Kind" testId="policy-kind" value={kind} options={TOOL_KINDS} labelOf={(k) => KIND_LABEL[k]} onChange={setKind} />
          <label>
            Page tool
            <input type="text" placeholder="exact name, or empty for any" value={tool} onChange={(e) => setTool(e.target.value)} data-testid="policy-tool" spellCheck={false} />
          </label>
          <label>
            Action
            <select value={action} onChange={(e) => setAction(e.target.value as PolicyAction)} data-testid="policy-action">
              {POLICY_ACTIONS.map((a) => (
                <option key={a} value={a}>
                  {a}
                </option>
              ))}
            </select>
          </label>
          <label className="field-wide">
            Reason (shown to the agent)
            <input type="text" maxLength={500} value={reason} onChange={(e) => setReason(e.target.value)} data-testid="policy-reason" />
          </label>
        </div>
        {effect ? (
          <p className="muted small" data-testid="policy-effect">
            {effect}
          </p>
        ) : null}
        <div className="row">
          <button type="submit" className="btn btn-primary" disabled={disabled} data-testid="policy-add">
            {p.busy ? 'Saving…' : 'Add rule'}
          </button>
        </div>
        {p.error ? (
          <p className="error" role="alert" data-testid="policy-error">
            {p.error.message}
          </p>
        ) : null}
      </form>
    </section>
  );
}
