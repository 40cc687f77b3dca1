/**
 * The approval dialog: everything the person needs to approve exactly one
 * invocation, once. Presentational: state and actions come in as props.
 *
 * Safety choices:
 * - Every page-provided string (title, description, schema, tab title) and the
 *   agent's arguments are React text nodes, never markup, with invisible and
 *   bidi characters revealed (text.ts); they are labelled as the page's words.
 * - Focus starts on the dialog itself, not on a button, and no element submits
 *   on Enter: a stray Enter approves nothing.
 * - "Approve once" is armed only after `ARM_DELAY_MS`, so a click meant for
 *   something else as the dialog appears cannot approve it.
 * - Escape closes the dialog without deciding; the request stays pending.
 * - While the console is unreachable (`offline`) neither button decides: the
 *   decision could not be delivered, and the dialog says so.
 */
import { useEffect, useId, useRef, useState, type KeyboardEvent, type ReactNode } from 'react';
import { fingerprint } from '../../shared/canonical';
import type { ApprovalView } from '../../shared/ipc';
import type { ErrorInfo } from '../../shared/result';
import type { ToolAnnotations } from '../../shared/types';
import { formatDuration, prettyJson, revealInvisible, timeLeftMs } from '../text';

/** How long "Approve once" stays disabled after the dialog opens (ms). */
export const ARM_DELAY_MS = 1000;

export interface ApprovalDialogProps {
  approval: ApprovalView;
  now: number;
  busy: boolean;
  /** The console is unreachable: no decision can be delivered. */
  offline?: boolean;
  error: ErrorInfo | null;
  onApprove(): void;
  onDeny(reason: string): void;
  onClose(): void;
}

const ANNOTATION_LABELS: Record<keyof ToolAnnotations, string> = {
  readOnlyHint: 'read-only',
  untrustedContentHint: 'returns untrusted content',
  consequentialHint: 'consequential',
  debugging: 'debugging tool',
};

function Field(props: { label: string; children: ReactNode; wide?: boolean }) {
  return (
    <div className={props.wide ? 'field field-wide' : 'field'}>
      <dt>{props.label}</dt>
      <dd>{props.children}</dd>
    </div>
  );
}

function HashField(props: { label: string; hash: string; testId: string }) {
  return (
    <Field label={props.label} wide>
      <span className="hash-line">
        <span className="fingerprint" data-testid={`${props.testId}-fingerprint`} title="Short fingerprint: the first 12 hex digits">
          {fingerprint(props.hash)}
        </span>
        <code className="hash" data-testid={`${props.testId}`}>
          {props.hash}
        </code>
      </span>
    </Field>
  );
}

export function ApprovalDialog({ approval: a, now, busy, offline = false, error, onApprove, onDeny, onClose }: ApprovalDialogProps) {
  const titleId = useId();
  const dialogRef = useRef<HTMLDivElement>(null);
  const [reason, setReason] = useState('');
  const [armed, setArmed] = useState(false);
  const left = timeLeftMs(a, now);
  const expired = left <= 0;

  // Focus the dialog itself (not a button) whenever a new request is shown, and re-arm.
  useEffect(() => {
    setReason('');
    setArmed(false);
    dialogRef.current?.focus();
    const t = setTimeout(() => setArmed(true), ARM_DELAY_MS);
    return () => clearTimeout(t);
  }, [a.requestId]);

  const onKeyDown = (e: KeyboardEvent<HTMLDivElement>) => {
    if (e.key === 'Escape') {
      e.preventDefault();
      onClose();
      return;
    }
    if (e.key === 'Tab' && dialogRef.current) {
      // Keep focus inside the modal dialog.
      const focusable = [...dialogRef.current.querySelectorAll<HTMLElement>('button:not([disabled]), input, [tabindex="0"]')];
      if (focusable.length === 0) return;
      const first = focusable[0]!;
      const last = focusable[focusable.length - 1]!;
      if (e.shiftKey && (document.activeElement === first || document.activeElement === dialogRef.current)) {
        e.preventDefault();
        last.focus();
      } else if (!e.shiftKey && document.activeElement === last) {
        e.preventDefault();
        first.focus();
      }
    }
  };

  const annotations = a.annotations;
  return (
    <div className="overlay">
      <div
        ref={dialogRef}
        className="dialog"
        role="dialog"
        aria-modal="true"
        aria-labelledby={titleId}
        tabIndex={-1}
        onKeyDown={onKeyDown}
        data-testid="approval-dialog"
      >
        <header className="dialog-head">
          <div>
            <p className="eyebrow">
              <span data-testid="field-agent">{revealInvisible(a.agent.name)}</span>
              {a.agent.version ? <span className="muted"> {revealInvisible(a.agent.version)}</span> : null} asks to run a page tool
            </p>
            <h2 id={titleId}>
              <code data-testid="field-tool-name">{revealInvisible(a.toolName)}</code>
              <span className="dialog-title" data-testid="field-title">
                {a.title ? revealInvisible(a.title) : '(no title)'}
              </span>
            </h2>
          </div>
          <div className={expired ? 'timer timer-expired' : left < 15_000 ? 'timer timer-low' : 'timer'} data-testid="field-time-left" aria-live="off">
            {expired ? 'Expired' : `${formatDuration(left)} left`}
          </div>
        </header>

        <div className="dialog-body">
          <dl className="fields">
            <Field label="Origin">
              <code data-testid="field-origin">{a.origin}</code>
            </Field>
            <Field label="Frame">
              <code data-testid="field-frame">{a.frameId === 0 ? '0 (top frame)' : String(a.frameId)}</code>
            </Field>
            <Field label="Document">
              <code className="hash" data-testid="field-document-id">
                {a.documentId}
              </code>
            </Field>
            <Field label={`Tab ${a.tab.tabId}`} wide>
              <span data-testid="field-tab-title">{revealInvisible(a.tab.title) || '(untitled)'}</span>
              <code className="subtle" data-testid="field-tab-url">
                {revealInvisible(a.tab.url)}
              </code>
            </Field>
            <HashField label="Descriptor hash" hash={a.descriptorHash} testId="field-descriptor-hash" />
            <HashField label="Arguments hash" hash={a.argumentsHash} testId="field-arguments-hash" />
            {a.operationId ? (
              <Field label="Operation">
                <code data-testid="field-operation-id">{revealInvisible(a.operationId)}</code>
              </Field>
            ) : null}
          </dl>

          <section className="block">
            <h3>Arguments</h3>
            <pre className="code" data-testid="field-arguments">
              {prettyJson(a.arguments)}
            </pre>
          </section>

          <section className="block untrusted">
            <h3>
              The page’s claims <span className="tag">hints only</span>
            </h3>
            <div data-testid="field-annotations">
              {annotations && Object.keys(annotations).length > 0 ? (
                <ul className="claims">
                  {(Object.keys(ANNOTATION_LABELS) as (keyof ToolAnnotations)[])
                    .filter((k) => annotations[k] !== undefined)
                    .map((k) => (
                      <li key={k}>
                        The page says: {ANNOTATION_LABELS[k]} — <strong>{annotations[k] ? 'yes' : 'no'}</strong>
                      </li>
                    ))}
                </ul>
              ) : (
                <p className="muted">The page makes no claims about this tool.</p>
              )}
            </div>
            <p className="muted small">Echo Console treats every page tool call as a change, whatever the page claims.</p>
          </section>

          <section className="block untrusted">
            <h3>
              The page’s description <span className="tag">untrusted text</span>
            </h3>
            <p className="page-text" data-testid="field-description">
              {a.description ? revealInvisible(a.description) : '(no description)'}
            </p>
          </section>

          <section className="block untrusted">
            <h3>
              The page’s input schema <span className="tag">untrusted text</span>
            </h3>
            <pre className="code" data-testid="field-schema">
              {prettyJson(a.inputSchema)}
            </pre>
          </section>
        </div>

        <footer className="dialog-foot">
          {offline ? (
            <p className="error" role="alert" data-testid="approval-offline">
              The console is not reachable, so this request cannot be approved or denied until the page reconnects.
            </p>
          ) : null}
          {error ? (
            <p className="error" role="alert" data-testid="approval-error">
              {error.message}
            </p>
          ) : null}
          <label className="reason">
            <span>Reason for denying (optional)</span>
            <input
              type="text"
              maxLength={500}
              value={reason}
              onChange={(e) => setReason(e.target.value)}
              data-testid="deny-reason"
              autoComplete="off"
            />
          </label>
          <div className="actions">
            <button type="button" className="btn" onClick={onClose} data-testid="close-button">
              Later
            </button>
            <button type="button" className="btn btn-danger" disabled={busy || offline} onClick={() => onDeny(reason)} data-testid="deny-button">
              Deny
            </button>
            <button
              type="button"
              className="btn btn-primary"
              disabled={busy || offline || expired || !armed}
              onClick={onApprove}
              data-testid="approve-button"
            >
              Approve once
            </button>
          </div>
        </footer>
      </div>
    </div>
  );
}
