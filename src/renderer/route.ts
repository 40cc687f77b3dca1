/**
 * The console's deep links (docs/timeline.md): a URL fragment naming a view, so
 * the agent's answers, the approval dialog and the person can point at one
 * request or one receipt.
 *
 * - `#/timeline` the request timeline; with `?request=<id>` one request, opened;
 *   with filters (`origin`, `agent`, `faculty`, `tool`, `outcome`, `event`, `q`,
 *   `from`, `to`) the timeline filtered so;
 * - `#/receipt/<id>` the request holding that receipt, opened at it.
 *
 * In the web host the fragment also carries the session id (`session=…`,
 * src/renderer/transport/token.ts), which sessionFromFragment reads from either
 * form; `routeFragment` keeps it. Pure functions, testable without a browser.
 */
import { FACULTIES, OUTCOME_EVENTS, RECEIPT_EVENTS, type Faculty, type ReceiptEvent } from '../shared/receipt';
import type { RequestFilter, RequestOutcomeFilter } from '../shared/request-summary';
import { SESSION_FRAGMENT_KEY } from '../shared/web-wire';

export type Route =
  | { view: 'timeline'; filter: RequestFilter; request: string | null }
  | { view: 'receipt'; receiptId: string };

const ID_RE = /^[A-Za-z0-9._:-]{1,128}$/;
const FACULTY_SET: ReadonlySet<string> = new Set(FACULTIES);
const EVENT_SET: ReadonlySet<string> = new Set(RECEIPT_EVENTS);
const OUTCOME_SET: ReadonlySet<string> = new Set([...OUTCOME_EVENTS, 'open']);

function text(v: string | null, max: number): string | undefined {
  return v !== null && v.length >= 1 && v.length <= max ? v : undefined;
}

function ms(v: string | null): number | undefined {
  if (v === null || !/^\d{1,16}$/.test(v)) return undefined;
  return Number(v);
}

/**
 * The route a fragment names, or null when it names none (`#session=…`, `#token=…`, empty).
 * Unknown or malformed parameters are dropped, never passed on.
 */
export function parseRoute(hash: string): Route | null {
  const h = hash.replace(/^#/, '');
  if (!h.startsWith('/')) return null;
  const q = h.indexOf('?');
  const amp = h.indexOf('&');
  const end = q >= 0 ? q : amp >= 0 ? amp : h.length;
  const path = h.slice(0, end);
  const params = new URLSearchParams(end < h.length ? h.slice(end + 1) : '');
  const receipt = /^\/receipt\/(.+)$/.exec(path);
  if (receipt) {
    let id: string;
    try {
      id = decodeURIComponent(receipt[1] as string);
    } catch {
      return null;
    }
    return ID_RE.test(id) ? { view: 'receipt', receiptId: id } : null;
  }
  if (path !== '/timeline') return null;
  const request = params.get('request');
  const filter: RequestFilter = {};
  const set = <K extends keyof RequestFilter>(k: K, v: RequestFilter[K] | undefined) => {
    if (v !== undefined) filter[k] = v;
  };
  set('origin', text(params.get('origin'), 2048));
  set('agent', text(params.get('agent'), 200));
  set('toolName', text(params.get('tool'), 128));
  set('text', text(params.get('q'), 200));
  const faculty = params.get('faculty');
  if (faculty !== null && FACULTY_SET.has(faculty)) filter.faculty = faculty as Faculty;
  const outcome = params.get('outcome');
  if (outcome !== null && OUTCOME_SET.has(outcome)) filter.outcome = outcome as RequestOutcomeFilter;
  const event = params.get('event');
  if (event !== null && EVENT_SET.has(event)) filter.event = event as ReceiptEvent;
  set('from', ms(params.get('from')));
  set('to', ms(params.get('to')));
  return { view: 'timeline', filter, request: request !== null && ID_RE.test(request) ? request : null };
}

/** The fragment for a route, keeping the web host's session id when there is one. */
export function routeFragment(route: Route, sessionId: string | null): string {
  const params = new URLSearchParams();
  let path: string;
  if (route.view === 'receipt') path = `/receipt/${encodeURIComponent(route.receiptId)}`;
  else {
    path = '/timeline';
    const f = route.filter;
    if (route.request) params.set('request', route.request);
    if (f.origin) params.set('origin', f.origin);
    if (f.agent) params.set('agent', f.agent);
    if (f.faculty) params.set('faculty', f.faculty);
    if (f.toolName) params.set('tool', f.toolName);
    if (f.outcome) params.set('outcome', f.outcome);
    if (f.event) params.set('event', f.event);
    if (f.text) params.set('q', f.text);
    if (f.from !== undefined) params.set('from', String(f.from));
    if (f.to !== undefined) params.set('to', String(f.to));
  }
  if (sessionId) params.set(SESSION_FRAGMENT_KEY, sessionId);
  const qs = params.toString();
  return `#${path}${qs ? `?${qs}` : ''}`;
}
