/**
 * The approval dialog: everything the person needs to approve exactly one
 * request, once. The common part (who asks, where: origin, tab, frame,
 * document; the arguments and the hashes; the time left) is rendered here,
 * once for every faculty; what the faculty acts on is rendered by the
 * subject view of its type (./subjects). Presentational: state and actions
 * come in as props.
 *
 * Safety choices:
 * - Every page-provided string (title, description, schema, tab title) and the
 *   agent's arguments are React text nodes, never markup, with invisible and
 *   bidi characters revealed (text.ts); they are labelled as the page's words.
 * - Focus starts on the dialog itself, not on a button, and no element submits
 *   on Enter: a stray Enter approves nothing.
 * - "Approve once" is armed only after `ARM_DELAY_MS`, so a click meant for
 *   something else as the dialog appears cannot approve it; armed per request,
 *   so switching to another request disarms it in the same render.
 * - Escape closes the dialog without deciding; the request stays pending.
 * - While the console is unreachable (`offline`) neither button decides: the
 *   decision could not be delivered, and the dialog says so.
 * - Approve and Deny act only on the person's own input (`event.isTrusted`,
 *   trust rule 19): a script's `click()` decides nothing and the dialog says a
 *   click that was not the person's was ignored. This alone does not stop a script
 *   that calls the API directly: the hosts gate that (src/main/core/trusted-input.ts).
 */
import { useEffect, useId, useMemo, useRef, useState, type KeyboardEvent, type MouseEvent } from 'react';
import type { ApprovalView, InFlightView } from '../../shared/ipc';
import type { ReloadOffer } from '../stores/inflight';
import { StopButton } from './StopButton';
import type { ErrorInfo } from '../../shared/result';
import { routeFragment } from '../route';
import { sessionFromFragment } from '../transport/token';
import { confusableWords, formatDuration, hiddenCount, mixedScriptWords, prettyJson, revealInvisible, timeLeftMs } from '../text';
import { Field, HashField } from './fields';
import { SubjectHeading, SubjectView } from './subjects';

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

export function ApprovalDialog({ approval: a, now, busy, offline = false, error, onApprove, onDeny, onClose }: ApprovalDialogProps) {
  const titleId = useId();
  const dialogRef = useRef<HTMLDivElement>(null);
  const [reason, setReason] = useState('');
  // A click that was not the person's (a script's `click()`, a synthetic event) was ignored, for this request.
  const [ignoredFor, setIgnoredFor] = useState<string | null>(null);
  /** Run a decision only for the person's own input (trust rule 19). */
  const byPerson = (act: () => void) => (e: MouseEvent<HTMLButtonElement>) => {
    if (e.nativeEvent.isTrusted !== true) return setIgnoredFor(a.requestId);
    act();
  };
  // Armed FOR a request id, not a flag: when the dialog switches to another request, the first
  // render of the new one is already unarmed (a flag reset in an effect would leave "Approve once"
  // live for one painted frame, where a double click meant for the previous request lands).
  const [armedFor, setArmedFor] = useState<string | null>(null);
  // Every argument is shown whole (never clipped in a box of its own), so a long request needs
  // the dialog to scroll: Approve arms only once the person has seen its end (issue 9 item 5:
  // a long first key pushed the decisive `to` field out of view).
  const bodyRef = useRef<HTMLDivElement>(null);
  const [seenEndFor, setSeenEndFor] = useState<string | null>(null);
  const seenEnd = seenEndFor === a.requestId;
  const armed = armedFor === a.requestId && seenEnd;
  const checkEnd = () => {
    const b = bodyRef.current;
    if (b && b.scrollTop + b.clientHeight >= b.scrollHeight - 4) setSeenEndFor(a.requestId);
  };
  // Once per request, not at every tick of the dialog's one-second clock: the script check is per letter.
  const { argumentsText, hidden, mixed, confusable } = useMemo(() => {
    const raw = safeJson(a.arguments);
    return {
      argumentsText: prettyJson(a.arguments),
      hidden: hiddenCount(raw) + hiddenCount(a.tab.title) + hiddenCount(a.tab.url),
      mixed: mixedScriptWords(`${raw} ${a.tab.title}`),
      confusable: confusableWords(`${raw} ${a.tab.title}`),
    };
  }, [a.arguments, a.tab.title, a.tab.url]);
  const left = timeLeftMs(a, now);
  const expired = left <= 0;

  // Focus the dialog itself (not a button) whenever a new request is shown, and re-arm.
  useEffect(() => {
    setReason('');
    dialogRef.current?.focus();
    const id = a.requestId;
    const t = setTimeout(() => setArmedFor(id), ARM_DELAY_MS);
    if (bodyRef.current) bodyRef.current.scrollTop = 0;
    checkEnd(); // a request that fits needs no scrolling
    return () => clearTimeout(t);
  }, [a.requestId]);

  const onKeyDown = (e: KeyboardEvent<HTMLDivElement>) => {
    if (e.key === 'Escape') {
      e.preventDefault();
      onClose();
      return;
    }
    trapTab(e, dialogRef.current);
  };

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
        data-request-id={a.requestId}
      >
        <header className="dialog-head">
          <div>
            <p className="eyebrow">
              {/* Who asks is the token's name, set by the person; what the client calls itself is only its claim (issue 9 item 2). */}
              <span data-testid="field-agent">{revealInvisible(a.agent.name)}</span>
              {a.agent.clientName !== undefined || a.agent.version ? (
                <span className="muted" data-testid="field-agent-declared">
                  {' '}
                  (calls itself “{revealInvisible(a.agent.clientName ?? '')}”{a.agent.version ? ` ${revealInvisible(a.agent.version)}` : ''} — self-declared)
                </span>
              ) : null}{' '}
              asks to{' '}
              <span data-testid="field-verb">{a.verb}</span>
            </p>
            <h2 id={titleId}>
              <SubjectHeading subject={a.subject} />
            </h2>
          </div>
          <div className={expired ? 'timer timer-expired' : left < 15_000 ? 'timer timer-low' : 'timer'} data-testid="field-time-left" aria-live="off">
            {expired ? 'Expired' : `${formatDuration(left)} left`}
          </div>
        </header>

        <div className="dialog-body" ref={bodyRef} onScroll={checkEnd} data-testid="approval-body">
          {hidden > 0 || mixed.length > 0 || confusable.length > 0 ? (
            <div className="warning" role="alert" data-testid="hidden-text-warning">
              {hidden > 0 ? (
                <p>
                  The arguments or the tab hold <strong>{hidden}</strong> hidden character{hidden === 1 ? '' : 's'}, shown below as ⟨U+…⟩ or
                  ⟨hidden TAG text …⟩. A model may read text you cannot see: check what they say before approving.
                </p>
              ) : null}
              {mixed.length > 0 ? (
                <p data-testid="mixed-script-warning">
                  Words mixing scripts (look-alike letters):{' '}
                  {mixed.map((m, i) => (
                    <span key={i}>
                      {i > 0 ? ', ' : ''}
                      <code>{revealInvisible(m.word)}</code> ({m.scripts.join(' + ')})
                    </span>
                  ))}
                </p>
              ) : null}
              {confusable.length > 0 ? (
                <p data-testid="confusable-warning">
                  Words that read as plain Latin letters but are not (Unicode look-alikes):{' '}
                  {confusable.map((c, i) => (
                    <span key={i}>
                      {i > 0 ? ', ' : ''}
                      <code>{revealInvisible(c.word)}</code> reads as <code>{c.looksLike}</code>
                    </span>
                  ))}
                </p>
              ) : null}
            </div>
          ) : null}
          <dl className="fields">
            <Field label="Origin">
              <code data-testid="field-origin">{a.origin}</code>
            </Field>
            <Field label="Frame">
              <code data-testid="field-frame">{a.frame.frameId === 0 ? '0 (top frame)' : String(a.frame.frameId)}</code>
              {a.frame.url && a.frame.frameId !== 0 ? (
                <code className="subtle" data-testid="field-frame-url">
                  {revealInvisible(a.frame.url)}
                </code>
              ) : null}
            </Field>
            <Field label="Document">
              <code className="hash" data-testid="field-document-id">
                {a.documentId}
              </code>
            </Field>
            <Field label="Request">
              <RequestLink requestId={a.requestId} onFollow={onClose} testId="field-request-link" />
            </Field>
            <Field label={`Tab ${a.tab.tabId}`} wide>
              <span data-testid="field-tab-title">{revealInvisible(a.tab.title) || '(untitled)'}</span>
              <code className="subtle" data-testid="field-tab-url">
                {revealInvisible(a.tab.url)}
              </code>
            </Field>
            <Field label="Action">
              <code data-testid="field-faculty">
                {a.faculty} · {a.operation}
              </code>
            </Field>
            {a.subject.type === 'webmcp-tool' && a.subject.form ? (
              <>
                <HashField label="Descriptor hash" hash={a.subject.descriptorHash} testId="field-descriptor-hash" />
                <HashField label="Form subject hash" hash={a.subjectHash} testId="field-subject-hash" />
              </>
            ) : (
              <HashField label={a.subject.type === 'webmcp-tool' ? 'Descriptor hash' : 'Subject hash'} hash={a.subjectHash} testId="field-descriptor-hash" />
            )}
            <HashField label="Arguments hash" hash={a.argumentsHash} testId="field-arguments-hash" />
            {a.operationId ? (
              <Field label="Operation">
                <code data-testid="field-operation-id">{revealInvisible(a.operationId)}</code>
              </Field>
            ) : null}
          </dl>

          <section className="block">
            <h3>Arguments</h3>
            <pre className="code code-whole" data-testid="field-arguments">
              {argumentsText}
            </pre>
          </section>

          <SubjectView subject={a.subject} />
          <p className="muted end-of-request" data-testid="end-of-request">
            End of the request.
          </p>
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
          {ignoredFor === a.requestId ? (
            <p className="error" role="alert" data-testid="untrusted-click">
              A click that did not come from your mouse or keyboard was ignored: something running in this page tried to decide for you.
            </p>
          ) : null}
          {!seenEnd ? (
            <p className="muted" data-testid="scroll-to-arm">
              Scroll to the end of the request to approve it: every argument is shown whole.
            </p>
          ) : null}
          <div className="actions">
            <button type="button" className="btn" onClick={onClose} data-testid="close-button">
              Later
            </button>
            <button type="button" className="btn btn-danger" disabled={busy || offline} onClick={byPerson(() => onDeny(reason))} data-testid="deny-button">
              Deny
            </button>
            <button
              type="button"
              className="btn btn-primary"
              disabled={busy || offline || expired || !armed}
              onClick={byPerson(onApprove)}
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

/**
 * Keep Tab and Shift+Tab inside a modal dialog (WAI-ARIA Authoring Practices, "Dialog (Modal)":
 * Tab from the last focusable element goes to the first, Shift+Tab from the first to the last).
 * Counts links, enabled buttons, inputs and `tabindex="0"` (the request link too: Shift+Tab from it
 * once left the dialog). Does nothing for other keys or without a container.
 */
function trapTab(e: KeyboardEvent<HTMLDivElement>, container: HTMLElement | null): void {
  if (e.key !== 'Tab' || !container) return;
  const focusable = [...container.querySelectorAll<HTMLElement>('a[href], button:not([disabled]), input, [tabindex="0"]')];
  if (focusable.length === 0) return;
  const first = focusable[0]!;
  const last = focusable[focusable.length - 1]!;
  if (e.shiftKey && (document.activeElement === first || document.activeElement === container)) {
    e.preventDefault();
    last.focus();
  } else if (!e.shiftKey && document.activeElement === last) {
    e.preventDefault();
    first.focus();
  }
}

/**
 * The request's deep link (`#/timeline?request=<id>`, docs/timeline.md): following it closes the
 * dialog (an approval stays waiting in the list; a running request keeps running) and opens the
 * request's row, with its trail, in the timeline. In the web host it keeps the page's session id
 * (`&session=…`, as the address does), so a link opened in a new tab (Ctrl+click, middle click)
 * finds the session too; the id alone is not a credential (the HttpOnly cookie is, ../transport).
 */
function RequestLink(props: { requestId: string; onFollow(): void; testId: string }) {
  const href = routeFragment({ view: 'timeline', filter: {}, request: props.requestId }, sessionFromFragment(window.location.hash));
  const follow = (e: MouseEvent<HTMLAnchorElement>) => {
    // Opened elsewhere (a new tab or window): this dialog stays as it is.
    if (e.ctrlKey || e.metaKey || e.shiftKey || e.altKey || e.button !== 0) return;
    props.onFollow();
    // A link to the fragment the address already shows fires no hashchange (the desktop app's
    // fragment is the route alone, so after following this link once, or when the console was
    // opened on it): the deep link is followed all the same (audit-pages.tsx useDeepLinks).
    if (window.location.hash === href) window.dispatchEvent(new HashChangeEvent('hashchange', { oldURL: window.location.href, newURL: window.location.href }));
  };
  return (
    <a href={href} onClick={follow} title="Open this request in the timeline" data-testid={props.testId}>
      <code>{props.requestId}</code>
    </a>
  );
}

/** JSON text of an untrusted value for the hidden-character checks; never throws. */
function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return '';
  }
}

export interface RunningDialogProps {
  requestId: string;
  /** The request while it is in flight (undefined once it ended). */
  request: InFlightView | undefined;
  /** The reload offered after the person stopped it after dispatch, if so. */
  offer: ReloadOffer | undefined;
  busy: boolean;
  offline: boolean;
  error: ErrorInfo | null;
  onStop(requestId: string): void;
  onReload(tabId: number): void;
  onClose(): void;
  /** The person followed the request's link to the timeline: stop showing the dialog, keep any reload offer (listed under the header). */
  onLeave(): void;
}

/**
 * The dialog after "Approve once": the approved request runs, with its Stop (issue 12 item 5),
 * until it ends. Stopped after dispatch, it says the outcome is unknown and offers the tab's
 * reload. Escape or "Close" leaves it running (the header's Stop everything still reaches it).
 */
export function RunningDialog({ requestId, request, offer, busy, offline, error, onStop, onReload, onClose, onLeave }: RunningDialogProps) {
  const titleId = useId();
  const ref = useRef<HTMLDivElement>(null);
  const [ignored, setIgnored] = useState(false);
  useEffect(() => ref.current?.focus(), [requestId]);
  const phase = request?.phase;
  return (
    <div className="overlay">
      <div
        ref={ref}
        className="dialog dialog-running"
        role="dialog"
        aria-modal="true"
        aria-labelledby={titleId}
        tabIndex={-1}
        onKeyDown={(e) => {
          if (e.key === 'Escape') {
            e.preventDefault();
            onClose();
            return;
          }
          trapTab(e, ref.current);
        }}
        data-testid="running-dialog"
        data-request-id={requestId}
        data-phase={phase ?? 'ended'}
      >
        <header className="dialog-head">
          <h2 id={titleId}>{request ? (request.stopping ? 'Stopping…' : phase === 'dispatched' ? 'Running in the page' : 'Approved: about to run') : offer ? 'Stopped: outcome unknown' : 'Ended'}</h2>
        </header>
        <div className="dialog-body">
          {request ? (
            <p data-testid="running-what">
              {request.faculty} · {request.operation} in tab {request.tabId}, asked by {revealInvisible(request.agent)}.{' '}
              {phase === 'dispatched' ? 'The extension is acting in the page now.' : 'It has not reached the page yet.'}
            </p>
          ) : null}
          {offer ? (
            <p data-testid="stopped-unknown">
              You stopped it after it was dispatched. The console stopped waiting and asked the page to abort, and the agent was told its
              outcome is unknown: the page&apos;s own code may still be running. Reloading tab {offer.tabId} ends that code (and anything
              unsaved on the page).{offer.unshared ? ' The tab is no longer shared, so the console no longer acts on it: reload it in Chrome yourself.' : ''}
            </p>
          ) : null}
          <p className="small">
            Request <RequestLink requestId={requestId} onFollow={onLeave} testId="running-request-link" />
          </p>
          {error ? (
            <p className="error" role="alert" data-testid="running-error">
              {error.message}
            </p>
          ) : null}
          {ignored ? (
            <p className="error" role="alert">
              A click that did not come from your mouse or keyboard was ignored.
            </p>
          ) : null}
        </div>
        <footer className="dialog-foot">
          <div className="actions">
            <button type="button" className="btn" onClick={onClose} data-testid="running-close">
              Close
            </button>
            {offer && !offer.unshared ? (
              <button
                type="button"
                className="btn btn-primary"
                disabled={busy || offline}
                onClick={(e) => (e.nativeEvent.isTrusted === true ? onReload(offer.tabId) : setIgnored(true))}
                data-testid="running-reload"
              >
                Reload tab {offer.tabId}
              </button>
            ) : null}
            {request ? <StopButton requestId={requestId} phase={request.phase} busy={busy} disabled={offline || request.stopping === true} onStop={onStop} /> : null}
          </div>
        </footer>
      </div>
    </div>
  );
}
