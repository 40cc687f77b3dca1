/**
 * A generated ledger for the request timeline's tests and bench (docs/timeline.md):
 * realistic requests (WebMCP invocations with the whole lifecycle, semantic clicks,
 * reads, refusals, denials, failures, outcome-unknowns) by three agents over fifty
 * sites, with console events between them, written through the ledger's own
 * `appendBatch` (so the hash chain and the request index are the real ones) with a
 * clock that advances 2.6 s per receipt (about 30 days per million receipts).
 *
 * Known selectivities, for filters that match a known share of the requests:
 * ONE_PERCENT_ORIGIN is every 100th request, RARE_ORIGIN every 10,000th,
 * ABSENT_ORIGIN none. `expectedMatches` says how many of the first n requests
 * that is.
 */
import { Ledger } from '../../src/main/core/ledger/index';
import type { Faculty, ReceiptEvent, ReceiptInput } from '../../src/shared/receipt';

export const TIMELINE_T0 = 1_760_000_000_000;
export const TIMELINE_STEP_MS = 2_600;
export const TIMELINE_AGENTS = ['Claude Desktop', 'Cursor', 'Claude Code'] as const;
export const TIMELINE_SITES = Array.from({ length: 50 }, (_, i) => `https://site-${i}.example`);
export const TIMELINE_TOOLS = Array.from({ length: 30 }, (_, i) => `tool_${i}`);
/** Every 100th request (index ≡ 37 mod 100). */
export const ONE_PERCENT_ORIGIN = 'https://one-percent.example';
/** Every 10,000th request (index ≡ 5,037 mod 10,000). */
export const RARE_ORIGIN = 'https://rare.example';
/** No request. */
export const ABSENT_ORIGIN = 'https://absent.example';
/** A reason only the denied requests carry (every 10th request is denied). */
export const DENY_REASON = 'not on my bank account';

/** How many of requests 0..n-1 have index ≡ rem (mod mod). */
export function expectedMatches(n: number, mod: number, rem: number): number {
  return n > rem ? Math.floor((n - 1 - rem) / mod) + 1 : 0;
}

/** The origin of request i. */
export function originOf(i: number): string {
  if (i % 10_000 === 5_037) return RARE_ORIGIN;
  if (i % 100 === 37) return ONE_PERCENT_ORIGIN;
  return TIMELINE_SITES[(i * 7) % TIMELINE_SITES.length] as string;
}

/** The receipts of request i, in order. */
export function requestInputs(i: number): ReceiptInput[] {
  const requestId = `req-${i.toString(36)}-${(i * 2654435761 % 2 ** 32).toString(16)}`;
  const origin = originOf(i);
  const tabId = 100 + (i % 9);
  const agent = { kind: 'agent' as const, name: TIMELINE_AGENTS[i % 3] as string, tokenId: `tok_${(i % 3).toString(16).padStart(16, '0')}`, clientName: 'mcp-client', version: '1.0.0' };
  const kind = i % 10;
  const base = { requestId, origin, tabId, frameId: 0, documentId: `doc-${Math.floor(i / 20)}` };
  const at = (event: ReceiptEvent, faculty: Faculty, more: Partial<ReceiptInput> = {}): ReceiptInput => ({ ...base, event, faculty, actor: agent, ...more });
  if (kind === 9) {
    // A read: list_tabs, no review.
    return [at('requested', 'list-tabs', { operation: 'list', origin: null, tabId: null }), at('succeeded', 'list-tabs', { operation: 'list', origin: null, tabId: null, detail: { tabs: 3 } })];
  }
  if (kind === 8) {
    // A semantic click, reviewed, confirmed by readback.
    const s = { operation: 'click', subjectHash: 'c'.repeat(64), argumentsHash: 'd'.repeat(64) };
    return [
      at('requested', 'semantic', s), at('validated', 'semantic', s), at('approval-shown', 'semantic', s),
      at('approved', 'semantic', { ...s, actor: { kind: 'person' } }), at('dispatched', 'semantic', s),
      at('succeeded', 'semantic', s), at('readback-confirmed', 'semantic', s),
    ];
  }
  const toolName = TIMELINE_TOOLS[(i * 13) % TIMELINE_TOOLS.length] as string;
  const w = { toolName, operation: 'invoke', descriptorHash: 'a'.repeat(64), subjectHash: 'a'.repeat(64), argumentsHash: 'b'.repeat(64) };
  if (kind === 7) return [at('requested', 'webmcp-invoke', w), at('refused', 'webmcp-invoke', { ...w, actor: { kind: 'console' }, detail: { code: 'invalid-arguments', message: 'quantity must be an integer' } })];
  const head = [at('requested', 'webmcp-invoke', w), at('validated', 'webmcp-invoke', w), at('approval-shown', 'webmcp-invoke', w)];
  if (kind === 6) return [...head, at('denied', 'webmcp-invoke', { ...w, actor: { kind: 'person' }, detail: { reason: DENY_REASON } })];
  const byRule = kind === 5;
  const approved = at('approved', 'webmcp-invoke', byRule ? { ...w, actor: { kind: 'console' }, detail: { byRule: 0, policy: 'allow reads' } } : { ...w, actor: { kind: 'person' } });
  const ending =
    kind === 4 ? at('failed', 'webmcp-invoke', { ...w, actor: { kind: 'extension' }, detail: { error: { code: 'tool-error', message: 'the page tool threw' } } })
    : kind === 3 ? at('outcome-unknown', 'webmcp-invoke', { ...w, actor: { kind: 'extension' }, detail: { reason: 'timeout after dispatch' } })
    : at('succeeded', 'webmcp-invoke', { ...w, actor: { kind: 'extension' }, detail: { result: { ok: true } } });
  return [...head, approved, at('dispatched', 'webmcp-invoke', w), ending];
}

export interface GeneratedTimeline {
  /** Receipts written (exactly the number asked). */
  receipts: number;
  /** Requests begun (the last may be cut short). */
  requests: number;
  /** Receipts with no request (console events). */
  consoleEvents: number;
}

/**
 * Write `receipts` receipts into a new ledger at `file` (requests, and a console
 * event every 500 receipts), in batches of `batch` through `appendBatch`, then close it.
 * @returns what was written.
 */
export function generateTimelineLedger(file: string, receipts: number, opts: { batch?: number; onProgress?(done: number): void } = {}): GeneratedTimeline {
  let t = TIMELINE_T0;
  const ledger = new Ledger(file, { now: () => (t += TIMELINE_STEP_MS) });
  const batchSize = opts.batch ?? 5_000;
  let written = 0;
  let request = 0;
  let consoleEvents = 0;
  let pending: ReceiptInput[] = [];
  try {
    while (written + pending.length < receipts) {
      if ((written + pending.length) % 500 === 499) {
        pending.push({ requestId: null, event: 'link-connected', faculty: 'link', actor: { kind: 'console' } });
        consoleEvents++;
      } else {
        for (const r of requestInputs(request)) {
          if (written + pending.length >= receipts) break;
          pending.push(r);
        }
        request++;
      }
      if (pending.length >= batchSize) {
        ledger.appendBatch(pending);
        written += pending.length;
        pending = [];
        opts.onProgress?.(written);
      }
    }
    if (pending.length) ledger.appendBatch(pending);
    written += pending.length;
  } finally {
    ledger.close();
  }
  return { receipts: written, requests: request, consoleEvents };
}
