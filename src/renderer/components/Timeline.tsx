/**
 * The request timeline (docs/timeline.md): one row per request (time, agent,
 * faculty and operation, tool or target, origin, tab, outcome, duration, who
 * decided), newest first, filtered and paged by the console on the ledger's
 * request index; a row expands into its step trail, every receipt with its
 * hashes and detail (ReceiptDetail, the receipts view's own rendering).
 * Presentational: state is in stores/timeline.ts.
 *
 * - Virtualized with @tanstack/react-virtual, like the receipts table: a
 *   every row is measured (a collapsed one has one fixed height in pages.css;
 *   ROW_PX is the estimate before it is measured).
 * - Older pages load as the end of the list comes near.
 * - Live tail: new requests are put on top; when the person has scrolled down,
 *   the scroll position moves by the rows added, so what they look at stays.
 * - `data-query` / `data-ready` / `data-counted` attributes name the filter
 *   generation shown, for tests and the bench to wait on (never timed in tests).
 */
import { useVirtualizer } from '@tanstack/react-virtual';
import { memo, useEffect, useId, useRef, useState, type FormEvent, type MouseEvent, type ReactNode } from 'react';
import { fingerprint } from '../../shared/canonical';
import { FACULTIES, OUTCOME_EVENTS, RECEIPT_EVENTS, type Receipt } from '../../shared/receipt';
import type { RequestFilter, RequestSummary } from '../../shared/request-summary';
import type { ErrorInfo } from '../../shared/result';
import { FACULTY_LABELS, actorLabel, eventTone, reasonOf } from '../receipt-view';
import { TIMELINE_MAX_ROWS, type Trail } from '../stores/timeline';
import { formatCount, formatTime, revealInvisible } from '../text';
import { ReceiptDetail } from './ReceiptList';
import { useKeepReading } from './keep-reading';
import { NewerHidden } from './NewerHidden';

export interface TimelineProps {
  filter: RequestFilter;
  query: number;
  rows: RequestSummary[];
  loading: boolean;
  loaded: boolean;
  hasMore: boolean;
  error: ErrorInfo | null;
  total: number | null;
  countedQuery: number;
  expanded: string[];
  trails: Record<string, Trail>;
  focusReceipt: string | null;
  notice: string | null;
  /** Newer requests than the top row are not held (stores/timeline.ts `newerHidden`): said above the list, with the way back. */
  newerHidden: boolean;
  offline: boolean;
  /** Agent token names, offered in the agent filter. */
  agents: string[];
  onFilter(f: RequestFilter): void;
  onMore(): void;
  /** Back to the newest requests (when `newerHidden`). */
  onShowNewest(): void;
  onToggle(requestId: string): void;
  onOpenRequest(requestId: string): void;
  /**
   * What an open row (no outcome yet) shows beside its outcome: the Stop of a request in flight
   * (issue 12 item 5; src/renderer/stop-request.tsx `StopRequest`, which renders nothing when the request is not in
   * flight). Keep it stable (useCallback): the rows are memoized.
   */
  renderStop?(requestId: string): ReactNode;
}

const COLUMNS = ['Time', 'Agent', 'Faculty · operation', 'Tool or target', 'Origin', 'Tab', 'Outcome', 'Duration', 'Decided by'] as const;
/**
 * A collapsed row's height (px): `.timeline .request-row td` is 32 px high in pages.css, its
 * bottom border collapsed into it. It is the virtualizer's estimate before a row is measured, so
 * the first render's measurements agree with it (an estimate 1 px off made every row in view
 * resize at once, and the list render and lay out a second time before its first paint).
 */
export const ROW_PX = 32;
/** Load the next page when this few rows are left below the view. */
const LOAD_AHEAD_ROWS = 60;

const DECIDER_LABELS: Record<string, string> = { person: 'you', policy: 'policy rule', console: 'console (refused)', timeout: 'nobody (expired)' };

/** ms as "850 ms", "12.4 s", "3 min 05 s". */
export function shortDuration(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
}

const none = <span className="muted">—</span>;

function OutcomePill(props: { outcome: RequestSummary['outcome'] }) {
  return props.outcome ? <span className={`pill pill-${eventTone(props.outcome)}`}>{props.outcome}</span> : <span className="pill pill-idle">open</span>;
}

function TrailStep(props: { r: Receipt; open: boolean; onToggle(): void; onOpenRequest(id: string): void; offline: boolean }) {
  const { r } = props;
  const reason = reasonOf(r);
  return (
    <li className={props.open ? 'trail-step open' : 'trail-step'} data-testid="trail-step" data-receipt-id={r.id}>
      <button type="button" className="expander trail-line" aria-expanded={props.open} onClick={props.onToggle} data-testid="trail-step-toggle">
        <span aria-hidden="true" className="chevron">
          {props.open ? '▾' : '▸'}
        </span>
        <span className="muted">#{r.seq}</span>
        <span>{formatTime(r.time)}</span>
        <span className={`pill pill-${eventTone(r.event)}`}>{r.event}</span>
        <span className="actor">{actorLabel(r.actor)}</span>
        <code className="hash" title={r.hash}>
          {fingerprint(r.hash)}
        </code>
        {reason ? <span className="receipt-reason">{reason}</span> : null}
      </button>
      {props.open ? <ReceiptDetail r={r} onFind={props.onOpenRequest} offline={props.offline} /> : null}
    </li>
  );
}

function TrailView(props: { trail: Trail | undefined; focus: string | null; onOpenRequest(id: string): void; offline: boolean }) {
  const [open, setOpen] = useState<string[]>(() => (props.focus ? [props.focus] : []));
  const focusRef = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (props.focus && props.trail?.receipts.some((r) => r.id === props.focus)) {
      focusRef.current?.querySelector(`[data-receipt-id="${CSS.escape(props.focus)}"]`)?.scrollIntoView({ block: 'nearest' });
    }
  }, [props.focus, props.trail]);
  if (!props.trail || (props.trail.loading && props.trail.receipts.length === 0)) return <p className="muted">Loading its receipts…</p>;
  if (props.trail.error) return <p className="error">{props.trail.error.message}</p>;
  const toggle = (id: string) => setOpen(open.includes(id) ? open.filter((x) => x !== id) : [...open, id]);
  return (
    <div ref={focusRef} className="trail" data-testid="request-trail">
      <p className="muted small">
        {props.trail.receipts.length} receipt{props.trail.receipts.length === 1 ? '' : 's'}, oldest first: each is a link of the ledger’s hash chain.
      </p>
      <ol className="trail-steps">
        {props.trail.receipts.map((r) => (
          <TrailStep key={r.id} r={r} open={open.includes(r.id)} onToggle={() => toggle(r.id)} onOpenRequest={props.onOpenRequest} offline={props.offline} />
        ))}
      </ol>
    </div>
  );
}

/**
 * One request: its row and, when open, its trail. Memoized (every prop is stable for a row
 * that did not change), so scrolling renders only the rows that come into view; the
 * virtualizer's ResizeObserver re-measures a row whose height changes.
 */
const RequestRows = memo(function RequestRows(props: {
  s: RequestSummary;
  index: number;
  open: boolean;
  trail: Trail | undefined;
  focus: string | null;
  offline: boolean;
  onToggle(id: string): void;
  onOpenRequest(id: string): void;
  renderStop?(id: string): ReactNode;
  measure(el: HTMLTableSectionElement | null): void;
}) {
  const { s, open } = props;
  const onRowClick = (e: MouseEvent<HTMLTableRowElement>) => {
    if ((e.target as HTMLElement).closest('button, a')) return;
    if (window.getSelection()?.toString()) return;
    props.onToggle(s.requestId);
  };
  const target = s.toolName ? <code>{revealInvisible(s.toolName)}</code> : <span className="faculty">{s.operation ?? FACULTY_LABELS[s.faculty]}</span>;
  return (
    <tbody ref={props.measure} data-index={props.index} className={open ? 'receipt-group open' : 'receipt-group'}>
      <tr className="receipt-row request-row" data-testid="request-row" data-request-id={s.requestId} onClick={onRowClick}>
        <td className="nowrap">
          <button
            type="button"
            className="expander"
            aria-expanded={open}
            aria-label={`${open ? 'Hide' : 'Show'} the steps of request ${s.requestId}`}
            onClick={() => props.onToggle(s.requestId)}
            data-testid="request-expand"
          >
            <span aria-hidden="true" className="chevron">
              {open ? '▾' : '▸'}
            </span>
            {formatTime(s.time)}
          </button>
        </td>
        <td className="actor" data-testid="request-agent">
          {s.agent ? revealInvisible(s.agent) : none}
        </td>
        <td className="nowrap">
          {FACULTY_LABELS[s.faculty] ?? s.faculty}
          {s.operation && s.operation !== FACULTY_LABELS[s.faculty] ? <span className="muted"> · {s.operation}</span> : null}
        </td>
        <td className="origin" data-testid="request-target">
          {target}
        </td>
        <td className="origin" title={s.origin ?? undefined} data-testid="request-origin">
          {s.origin ? <code>{revealInvisible(s.origin)}</code> : none}
        </td>
        <td>{s.tabId ?? none}</td>
        <td data-testid="request-outcome">
          <OutcomePill outcome={s.outcome} />
          {s.outcome === null && props.renderStop ? <span className="row-stop">{props.renderStop(s.requestId)}</span> : null}
        </td>
        <td className="nowrap">{shortDuration(s.durationMs)}</td>
        <td className="nowrap" data-testid="request-decider">
          {s.decidedBy ? DECIDER_LABELS[s.decidedBy] : none}
        </td>
      </tr>
      {open ? (
        <tr className="receipt-detail-row">
          <td colSpan={COLUMNS.length}>
            <p className="small">
              Request <code data-testid="request-id">{s.requestId}</code>
              {s.reason ? (
                <>
                  {' '}
                  · <span className="receipt-reason">{revealInvisible(s.reason)}</span>
                </>
              ) : null}
            </p>
            <TrailView trail={props.trail} focus={props.focus} onOpenRequest={props.onOpenRequest} offline={props.offline} />
          </td>
        </tr>
      ) : null}
    </tbody>
  );
});

const requestKey = (r: RequestSummary) => r.requestId;

function RequestTable(p: TimelineProps) {
  const scrollRef = useRef<HTMLDivElement>(null);
  const rows = p.rows;
  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => ROW_PX,
    getItemKey: (i) => rows[i]?.requestId ?? i,
    overscan: 12,
    // The box's height before it is measured (pages.css `.receipts-scroll`: max-height 100vh − 280px),
    // so the first render already holds the rows in view: without it the list renders empty, forces
    // a layout to read its box, then renders and lays out again (the first screenful,
    // `npm run bench -- timeline`). The real box replaces it as soon as it is read.
    initialRect: { width: 0, height: Math.max(120, window.innerHeight - 280) },
    // Every row is measured, collapsed ones too: answering ROW_PX for a collapsed row without
    // reading its box (d6e5d90) broke the live tail's scroll keeping (the row being read jumped
    // up by the new rows' height, console-timeline.spec.ts).
    measureElement: (el) => el.getBoundingClientRect().height,
  });
  // Live tail and the store's bounded window: the rows being read stay in place (keep-reading.ts).
  useKeepReading(scrollRef, virtualizer, rows, requestKey, p.query);
  const virtual = virtualizer.getVirtualItems();
  const lastIndex = virtual.at(-1)?.index ?? 0;
  const { hasMore, loading, onMore } = p;
  useEffect(() => {
    if (hasMore && !loading && lastIndex >= rows.length - LOAD_AHEAD_ROWS) onMore();
  }, [lastIndex, rows.length, hasMore, loading, onMore]);
  const top = virtual[0]?.start ?? 0;
  const bottom = Math.max(0, virtualizer.getTotalSize() - (virtual.at(-1)?.end ?? 0));
  const spacer = (height: number, key: string) =>
    height > 0 ? (
      <tbody aria-hidden="true" key={key}>
        <tr className="spacer">
          <td colSpan={COLUMNS.length} style={{ height }} />
        </tr>
      </tbody>
    ) : null;
  // Stable (a field of the virtualizer), so memoized rows are not re-rendered by a scroll.
  const measure = virtualizer.measureElement;
  return (
    <div className="receipts-scroll timeline-scroll" ref={scrollRef} data-testid="timeline-scroll">
      <table className="receipts timeline" data-testid="timeline-list" data-query={p.query} data-rows={rows.length} aria-rowcount={p.total ?? -1}>
        <caption className="visually-hidden">Requests, newest first</caption>
        <thead>
          <tr>
            {COLUMNS.map((c) => (
              <th scope="col" key={c}>
                {c}
              </th>
            ))}
          </tr>
        </thead>
        {spacer(top, 'top')}
        {virtual.map((v) => {
          const s = rows[v.index]!;
          return (
            <RequestRows
              key={s.requestId}
              s={s}
              index={v.index}
              open={p.expanded.includes(s.requestId)}
              trail={p.trails[s.requestId]}
              focus={p.focusReceipt}
              offline={p.offline}
              onToggle={p.onToggle}
              onOpenRequest={p.onOpenRequest}
              renderStop={p.renderStop}
              measure={measure}
            />
          );
        })}
        {spacer(bottom, 'bottom')}
      </table>
    </div>
  );
}

function toMs(local: string): number | undefined {
  if (!local) return undefined;
  const t = new Date(local).getTime();
  return Number.isFinite(t) ? t : undefined;
}

function toLocal(ms: number | undefined): string {
  if (ms === undefined) return '';
  const d = new Date(ms);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
}

/** The filter form: text fields apply on Enter or Apply, lists at once. */
function Filters(props: { filter: RequestFilter; agents: string[]; offline: boolean; onFilter(f: RequestFilter): void }) {
  const [draft, setDraft] = useState<RequestFilter>(props.filter);
  const agentsId = useId();
  useEffect(() => setDraft(props.filter), [props.filter]);
  const text = (k: 'origin' | 'agent' | 'toolName' | 'text', label: string, extra: { list?: string; placeholder?: string } = {}) => (
    <label className="timeline-field">
      <span>{label}</span>
      <input
        type="text"
        value={draft[k] ?? ''}
        onChange={(e) => setDraft({ ...draft, [k]: e.target.value })}
        spellCheck={false}
        autoComplete="off"
        maxLength={k === 'origin' ? 2048 : 200}
        data-testid={`filter-${k}`}
        {...extra}
      />
    </label>
  );
  const pick = (k: 'faculty' | 'outcome' | 'event', label: string, values: readonly string[]) => (
    <label className="timeline-field">
      <span>{label}</span>
      <select
        value={draft[k] ?? ''}
        onChange={(e) => {
          const next = { ...draft, [k]: e.target.value || undefined } as RequestFilter;
          setDraft(next);
          props.onFilter(next);
        }}
        data-testid={`filter-${k}`}
      >
        <option value="">any</option>
        {values.map((v) => (
          <option key={v} value={v}>
            {v}
          </option>
        ))}
      </select>
    </label>
  );
  const submit = (e: FormEvent) => {
    e.preventDefault();
    props.onFilter(draft);
  };
  return (
    <form className="timeline-filters" role="search" aria-label="Filter requests" onSubmit={submit} data-testid="timeline-filters">
      {text('text', 'Search tool names and reasons', { placeholder: 'e.g. add_to_cart, denied because…' })}
      {text('origin', 'Origin', { placeholder: 'https://shop.example' })}
      {text('agent', 'Agent', { list: agentsId })}
      <datalist id={agentsId}>
        {props.agents.map((a) => (
          <option key={a} value={a} />
        ))}
      </datalist>
      {text('toolName', 'Tool')}
      {pick('faculty', 'Faculty', FACULTIES)}
      {pick('outcome', 'Outcome', [...OUTCOME_EVENTS, 'open'])}
      {pick('event', 'Has event', RECEIPT_EVENTS)}
      <label className="timeline-field">
        <span>From</span>
        <input type="datetime-local" value={toLocal(draft.from)} onChange={(e) => setDraft({ ...draft, from: toMs(e.target.value) })} data-testid="filter-from" />
      </label>
      <label className="timeline-field">
        <span>To</span>
        <input type="datetime-local" value={toLocal(draft.to)} onChange={(e) => setDraft({ ...draft, to: toMs(e.target.value) })} data-testid="filter-to" />
      </label>
      <div className="row timeline-actions">
        <button type="submit" className="btn" disabled={props.offline} data-testid="filter-apply">
          Apply
        </button>
        <button
          type="button"
          className="btn"
          disabled={props.offline}
          onClick={() => {
            setDraft({});
            props.onFilter({});
          }}
          data-testid="filter-clear"
        >
          Clear filters
        </button>
      </div>
    </form>
  );
}

function countLine(p: TimelineProps): string {
  if (p.error) return p.error.message;
  if (!p.loaded && p.loading) return 'Loading requests…';
  const shown = p.rows.length;
  if (p.total === null || p.countedQuery !== p.query) return shown === 0 && !p.loading ? 'No request matches.' : `${formatCount(shown)}${p.hasMore ? '+' : ''} requests shown; counting…`;
  if (p.total === 0) return 'No request matches.';
  return `${formatCount(p.total)} request${p.total === 1 ? '' : 's'} match${p.total === 1 ? 'es' : ''}, newest first.`;
}

export function Timeline(p: TimelineProps) {
  const ready = p.loaded && !p.loading ? p.query : -1;
  return (
    <section className="panel" aria-labelledby="timeline-h">
      <div className="panel-head">
        <h2 id="timeline-h">Timeline</h2>
      </div>
      <Filters filter={p.filter} agents={p.agents} offline={p.offline} onFilter={p.onFilter} />
      {p.notice ? (
        <p className="notice" role="status" data-testid="timeline-notice">
          {p.notice}
        </p>
      ) : null}
      <p
        className={p.error ? 'error' : 'search-status'}
        role="status"
        data-testid="timeline-count"
        data-ready={ready}
        data-counted={p.total !== null ? p.countedQuery : -1}
      >
        {countLine(p)}
      </p>
      {p.newerHidden ? <NewerHidden what="requests" max={TIMELINE_MAX_ROWS} testId="timeline" onShowNewest={p.onShowNewest} /> : null}
      {p.rows.length > 0 ? <RequestTable {...p} /> : null}
    </section>
  );
}
