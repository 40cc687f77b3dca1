/**
 * The receipts view: the ledger check, a lookup by receipt id or request id,
 * and the receipt table (newest first, paged). Presentational.
 *
 * - Columns: #, time, event, actor ("agent · my-agent", "person", …), tool (or
 *   the faculty when there is no tool: "list tabs", "discover", "link",
 *   "console"), origin, and the reason for refused / denied / failed /
 *   outcome-unknown rows.
 * - Each row expands (its first cell's button, or a click on the row) into the
 *   full receipt: ids, hashes and the detail as plain-text JSON.
 * - The table is virtualized (@tanstack/react-virtual) inside its own scroll
 *   box: the list grows with every "Load older receipts" and every pushed
 *   receipt. Each receipt is one `<tbody>` (its row and, when expanded, its
 *   detail row), measured as rendered, so expanded rows keep their height.
 */
import { useVirtualizer } from '@tanstack/react-virtual';
import { useId, useMemo, useRef, useState, type MouseEvent, type ReactNode } from 'react';
import { fingerprint } from '../../shared/canonical';
import type { Receipt, VerifyReport } from '../../shared/receipt';
import type { ErrorInfo } from '../../shared/result';
import { actorLabel, eventTone, reasonOf, searchSummary, subjectLabel } from '../receipt-view';
import { RECEIPTS_MAX_ITEMS, type ReceiptSearch } from '../stores/receipts';
import { formatTime, prettyJson, revealInvisible } from '../text';
import { CopyButton } from './CopyButton';
import { LedgerProgressBar, VerifyDetails } from './LedgerPanel';
import { useKeepReading } from './keep-reading';
import { NewerHidden } from './NewerHidden';

export interface ReceiptListProps {
  items: Receipt[];
  loading: boolean;
  hasMore: boolean;
  error: ErrorInfo | null;
  verify: VerifyReport | null;
  verifying: boolean;
  verifyError: ErrorInfo | null;
  /** Receipts checked so far while Verify ledger runs. */
  verifyProgress?: { done: number; total: number } | null;
  /** The console is unreachable: nothing can be asked of it. */
  offline: boolean;
  expanded: string[];
  search: ReceiptSearch | null;
  /** Newer receipts than the top one are not held (stores/receipts.ts `newerHidden`): said above the list, with the way back. */
  newerHidden: boolean;
  onMore(): void;
  /** Back to the newest receipts (when `newerHidden`). */
  onShowNewest(): void;
  onVerify(): void;
  onToggle(id: string): void;
  onFind(id: string): void;
  onClearSearch(): void;
}

const COLUMNS = ['#', 'Time', 'Event', 'Actor', 'Tool', 'Origin', 'Reason'] as const;
/** Estimated height of a collapsed row (px); rows are measured once rendered. */
const ROW_ESTIMATE_PX = 37;

function Field(props: { label: string; children: ReactNode; wide?: boolean }) {
  return (
    <div className={props.wide ? 'field field-wide' : 'field'}>
      <dt>{props.label}</dt>
      <dd>{props.children}</dd>
    </div>
  );
}

const orNone = (v: string | number | null | undefined): ReactNode =>
  v === null || v === undefined || v === '' ? <span className="muted">—</span> : <code>{revealInvisible(String(v))}</code>;

/** The whole receipt, as text (the receipts table and the request timeline's trails). */
export function ReceiptDetail(props: { r: Receipt; onFind(id: string): void; offline: boolean }) {
  const { r } = props;
  return (
    <div className="receipt-detail" data-testid="receipt-detail">
      <dl className="fields">
        <Field label="Receipt id" wide>
          <span className="row">
            <code data-testid="receipt-detail-id">{r.id}</code>
            <CopyButton value={r.id} label="Copy id" />
          </span>
        </Field>
        <Field label="Request id" wide>
          {r.requestId ? (
            <span className="row">
              <code data-testid="receipt-detail-request-id">{revealInvisible(r.requestId)}</code>
              <button type="button" className="btn btn-small" onClick={() => props.onFind(r.requestId as string)} disabled={props.offline}>
                Show this request’s receipts
              </button>
            </span>
          ) : (
            <span className="muted">— (not part of a request)</span>
          )}
        </Field>
        <Field label="Position">
          <code>#{r.seq}</code>
        </Field>
        <Field label="Time">
          <code>{new Date(r.time).toISOString()}</code>
        </Field>
        <Field label="Event">
          <code>{r.event}</code>
        </Field>
        <Field label="Faculty">
          <code>{r.faculty}</code>
        </Field>
        <Field label="Actor">
          {actorLabel(r.actor)}
          {r.actor?.version && r.actor.clientName === undefined ? <span className="muted"> {revealInvisible(r.actor.version)}</span> : null}
        </Field>
        <Field label="Tool">{orNone(r.toolName)}</Field>
        <Field label="Origin">{orNone(r.origin)}</Field>
        <Field label="Tab">{orNone(r.tabId)}</Field>
        <Field label="Frame">{orNone(r.frameId)}</Field>
        <Field label="Document">{orNone(r.documentId)}</Field>
        <Field label="Descriptor hash" wide>
          {orNone(r.descriptorHash)}
        </Field>
        <Field label="Arguments hash" wide>
          {orNone(r.argumentsHash)}
        </Field>
        <Field label="Previous hash" wide>
          <code className="hash">{r.prevHash}</code>
        </Field>
        <Field label="Hash" wide>
          <code className="hash" data-testid="receipt-detail-hash">
            {r.hash}
          </code>
        </Field>
        {r.payloadHash ? (
          <Field label="Payload hash" wide>
            <code className="hash">{r.payloadHash}</code>
          </Field>
        ) : null}
      </dl>
      <h3>Detail</h3>
      {r.erasedAt !== undefined ? (
        <p className="muted" data-testid="receipt-detail-erased">
          Payload erased by retention on {formatTime(r.erasedAt)}; its hash above still proves what it was.
        </p>
      ) : (
        <pre className="code" data-testid="receipt-detail-json">
          {prettyJson(r.detail)}
        </pre>
      )}
    </div>
  );
}

function ReceiptRows(props: { r: Receipt; index: number; rowIndex: number; open: boolean; onToggle(id: string): void; onFind(id: string): void; offline: boolean; measure(el: HTMLTableSectionElement | null): void }) {
  const { r, open } = props;
  const detailId = `receipt-detail-${r.id}`;
  const subject = subjectLabel(r);
  const reason = reasonOf(r);
  const onRowClick = (e: MouseEvent<HTMLTableRowElement>) => {
    // The button toggles by itself; a click that selected text is not a toggle.
    if ((e.target as HTMLElement).closest('button, a')) return;
    if (window.getSelection()?.toString()) return;
    props.onToggle(r.id);
  };
  return (
    <tbody ref={props.measure} data-index={props.index} className={open ? 'receipt-group open' : 'receipt-group'}>
      <tr data-testid="receipt-row" data-receipt-id={r.id} className="receipt-row" onClick={onRowClick} aria-rowindex={props.rowIndex}>
        <td className="muted nowrap">
          <button
            type="button"
            className="expander"
            aria-expanded={open}
            aria-controls={open ? detailId : undefined}
            aria-label={`${open ? 'Hide' : 'Show'} receipt #${r.seq} in full`}
            onClick={() => props.onToggle(r.id)}
            data-testid="receipt-expand"
          >
            <span aria-hidden="true" className="chevron">
              {open ? '▾' : '▸'}
            </span>
            {r.seq}
          </button>
        </td>
        <td className="nowrap">{formatTime(r.time)}</td>
        <td>
          <span className={`pill pill-${eventTone(r.event)}`}>{r.event}</span>
        </td>
        <td className="actor" data-testid="receipt-actor">
          {actorLabel(r.actor)}
        </td>
        <td data-testid="receipt-subject">{subject.isTool ? <code>{subject.text}</code> : <span className="faculty">{subject.text}</span>}</td>
        <td className="origin" title={r.origin ?? undefined}>
          {r.origin ? <code>{revealInvisible(r.origin)}</code> : <span className="muted">—</span>}
        </td>
        <td className="receipt-reason" data-testid="receipt-reason">
          {reason ?? <span className="muted">—</span>}
        </td>
      </tr>
      {open ? (
        <tr className="receipt-detail-row" id={detailId} aria-rowindex={props.rowIndex + 1}>
          <td colSpan={COLUMNS.length}>
            <ReceiptDetail r={r} onFind={props.onFind} offline={props.offline} />
          </td>
        </tr>
      ) : null}
    </tbody>
  );
}

const receiptKey = (r: Receipt) => r.id;

function ReceiptTable(props: { rows: Receipt[]; expanded: string[]; offline: boolean; onToggle(id: string): void; onFind(id: string): void; caption: string }) {
  const scrollRef = useRef<HTMLDivElement>(null);
  const rows = props.rows;
  // Row numbers for assistive technology (only the rows in view are in the page):
  // the header is row 1, and an expanded receipt's detail row counts too.
  const rowIndexes = useMemo(() => {
    const open = new Set(props.expanded);
    const at: number[] = [];
    let next = 2;
    for (const r of rows) {
      at.push(next);
      next += open.has(r.id) ? 2 : 1;
    }
    return { at, total: next - 1 };
  }, [rows, props.expanded]);
  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => ROW_ESTIMATE_PX,
    getItemKey: (i) => rows[i]?.id ?? i,
    overscan: 10,
    measureElement: (el) => el.getBoundingClientRect().height,
  });
  // Pushed receipts on top, receipts let go from the top (the store's window), a new list: the
  // receipts being read stay in place (keep-reading.ts).
  useKeepReading(scrollRef, virtualizer, rows, receiptKey, null);
  const virtual = virtualizer.getVirtualItems();
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
  // A new callback on every render, so React hands each row to it again and it
  // is re-measured: expanding or collapsing a row changes its height (null
  // lets the virtualizer forget rows that left the page).
  const measure = (el: HTMLTableSectionElement | null) => virtualizer.measureElement(el);
  return (
    <div className="receipts-scroll" ref={scrollRef}>
      <table className="receipts" data-testid="receipt-list" aria-rowcount={rowIndexes.total}>
        <caption className="visually-hidden">{props.caption}</caption>
        <thead>
          <tr aria-rowindex={1}>
            {COLUMNS.map((c) => (
              <th scope="col" key={c}>
                {c}
              </th>
            ))}
          </tr>
        </thead>
        {spacer(top, 'top')}
        {virtual.map((v) => {
          const r = rows[v.index]!;
          return (
            <ReceiptRows
              key={r.id}
              r={r}
              index={v.index}
              rowIndex={rowIndexes.at[v.index]!}
              open={props.expanded.includes(r.id)}
              onToggle={props.onToggle}
              onFind={props.onFind}
              offline={props.offline}
              measure={measure}
            />
          );
        })}
        {spacer(bottom, 'bottom')}
      </table>
    </div>
  );
}

function SearchForm(props: { search: ReceiptSearch | null; offline: boolean; onFind(id: string): void; onClear(): void }) {
  const inputId = useId();
  const hintId = useId();
  const [value, setValue] = useState('');
  return (
    <form
      role="search"
      className="receipt-search"
      aria-label="Look up receipts"
      onSubmit={(e) => {
        e.preventDefault();
        props.onFind(value);
      }}
    >
      <label htmlFor={inputId}>Look up a receipt id or request id</label>
      <div className="row">
        <input
          id={inputId}
          type="search"
          value={value}
          onChange={(e) => setValue(e.target.value)}
          maxLength={200}
          spellCheck={false}
          autoComplete="off"
          aria-describedby={hintId}
          placeholder="e.g. the receiptId an agent was given"
          data-testid="receipt-search"
        />
        <button type="submit" className="btn" disabled={props.offline || value.trim() === '' || props.search?.status === 'searching'} data-testid="receipt-search-go">
          Find
        </button>
        {props.search ? (
          <button
            type="button"
            className="btn"
            onClick={() => {
              setValue('');
              props.onClear();
            }}
            data-testid="receipt-search-clear"
          >
            Show all receipts
          </button>
        ) : null}
      </div>
      <p className="muted small" id={hintId}>
        A request id shows every step of that request; a receipt id shows its request’s steps with that receipt opened.
      </p>
    </form>
  );
}

/** The signed-checkpoint part of the core's summary (checkpoint, unsigned tail, witness; docs/ledger.md), after the chain line. */
function signedNote(summary: string | undefined): string {
  const rest = summary?.replace(/^\d+ receipts, chain intact; /, '');
  return rest && rest !== summary ? ` ${rest[0]?.toUpperCase()}${rest.slice(1)}.` : '';
}

export function ReceiptList(p: ReceiptListProps) {
  const rows = p.search ? p.search.results : p.items;
  return (
    <section className="panel" aria-labelledby="receipts-h">
      <div className="panel-head">
        <h2 id="receipts-h">Receipts</h2>
        <button type="button" className="btn" onClick={p.onVerify} disabled={p.verifying || p.offline} data-testid="verify-ledger">
          {p.verifying ? 'Verifying…' : 'Verify ledger'}
        </button>
      </div>
      {p.verifying && p.verifyProgress ? <LedgerProgressBar done={p.verifyProgress.done} total={p.verifyProgress.total} label="Verify" testId="verify-progress" /> : null}
      {p.verify ? (
        <p className={p.verify.ok ? 'verify verify-ok' : 'verify verify-bad'} role="status" data-testid="verify-report">
          {p.verify.ok
            ? `Chain intact: ${p.verify.count} receipt${p.verify.count === 1 ? '' : 's'}, head ${fingerprint(p.verify.headHash)}.${signedNote(p.verify.summary)}`
            : p.verify.problems?.length
              ? `Ledger check failed: ${p.verify.problems.map((x) => x.message).join('; ')}.`
              : `Chain broken at #${p.verify.firstBroken?.seq ?? '?'}: ${p.verify.firstBroken?.reason ?? 'unknown reason'} (${p.verify.count} receipts checked).`}
        </p>
      ) : null}
      {p.verify ? <VerifyDetails report={p.verify} /> : null}
      {p.verifyError ? (
        <p className="error" role="alert" data-testid="verify-error">
          {p.verifyError.message}
        </p>
      ) : null}
      <SearchForm search={p.search} offline={p.offline} onFind={p.onFind} onClear={p.onClearSearch} />
      {p.search ? (
        <p className={p.search.error ? 'error' : 'search-status'} role="status" data-testid="receipt-search-status">
          {searchSummary(p.search)}
        </p>
      ) : null}
      {p.error ? (
        <p className="error" role="alert" data-testid="receipts-error">
          {p.error.message}
        </p>
      ) : null}
      {p.newerHidden && !p.search ? <NewerHidden what="receipts" max={RECEIPTS_MAX_ITEMS} testId="receipts" onShowNewest={p.onShowNewest} /> : null}
      {rows.length === 0 ? (
        p.search || p.loading ? null : <p className="empty">No receipts yet.</p>
      ) : (
        <ReceiptTable
          rows={rows}
          expanded={p.expanded}
          offline={p.offline}
          onToggle={p.onToggle}
          onFind={p.onFind}
          caption={p.search ? 'Receipts found by the lookup, newest first' : 'Receipts, newest first'}
        />
      )}
      {p.search ? null : (
        <div className="panel-foot">
          {p.hasMore ? (
            <button type="button" className="btn" onClick={p.onMore} disabled={p.loading || p.offline} data-testid="receipts-more">
              {p.loading ? 'Loading…' : 'Load older receipts'}
            </button>
          ) : p.items.length > 0 ? (
            <span className="muted small">That is the first receipt.</span>
          ) : null}
        </div>
      )}
    </section>
  );
}
