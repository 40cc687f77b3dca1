/**
 * How a receipt reads in the receipts table: who caused it, what it was about
 * (the tool, or the faculty when there is no tool), and why a request was
 * refused, denied, failed or ended unknown. Plain strings only (shown as React
 * text nodes), with invisible characters revealed: names, reasons and messages
 * can carry an agent's or a page's text.
 */
import type { Actor, Faculty, Receipt } from '../shared/receipt';
import { receiptReason } from '../shared/request-summary';
import type { ReceiptSearch } from './stores/receipts';
import { revealInvisible } from './text';

/** What the table says for a receipt without a tool name. */
export const FACULTY_LABELS: Record<Faculty, string> = {
  'webmcp-discover': 'discover',
  'webmcp-invoke': 'invoke',
  'list-tabs': 'list tabs',
  'page-info': 'page info',
  'semantic-read': 'page snapshot',
  semantic: 'semantic',
  'live-patch': 'live patch',
  'raw-js': 'raw JS',
  link: 'link',
  console: 'console',
};

/** Events whose receipt carries why (the one list: src/shared/request-summary.ts). */
export { REASON_EVENTS } from '../shared/request-summary';

/** Longest reason shown in the table (the expanded receipt has all of it). */
export const REASON_MAX_CHARS = 240;

/**
 * "agent · Claude Desktop (calls itself “my-agent” 1.0 — self-declared)", "person", "console",
 * "extension · <id>". An agent's name is its token's (the person's word); the client's own name
 * and version follow, marked self-declared (issue 9 item 2).
 */
export function actorLabel(actor: Actor | null | undefined): string {
  if (!actor || typeof actor.kind !== 'string') return 'unknown';
  const base = actor.name ? `${actor.kind} · ${revealInvisible(actor.name)}` : actor.kind;
  if (actor.kind !== 'agent' || typeof actor.clientName !== 'string') return base;
  const version = typeof actor.version === 'string' ? ` ${revealInvisible(actor.version)}` : '';
  return `${base} (calls itself “${revealInvisible(actor.clientName)}”${version} — self-declared)`;
}

/** The tool name, or else what the receipt was about. */
export function subjectLabel(r: Pick<Receipt, 'toolName' | 'faculty'>): { text: string; isTool: boolean } {
  if (r.toolName) return { text: revealInvisible(r.toolName), isTool: true };
  return { text: FACULTY_LABELS[r.faculty] ?? String(r.faculty), isTool: false };
}

/**
 * Why, from the receipt's detail (receiptReason, src/shared/request-summary.ts: the
 * same words the request index keeps), with invisible characters revealed and cut at
 * REASON_MAX_CHARS. Null for events that carry no reason, or when the detail says nothing.
 */
export function reasonOf(r: Pick<Receipt, 'event' | 'detail'>): string | null {
  const text = receiptReason(r.event, r.detail);
  if (text === null) return null;
  const shown = revealInvisible(text);
  return shown.length > REASON_MAX_CHARS ? `${shown.slice(0, REASON_MAX_CHARS - 1)}…` : shown;
}

/** Colour of an event's pill. */
export function eventTone(event: string): 'ok' | 'bad' | 'warn' | 'idle' {
  if (event === 'succeeded' || event === 'approved' || event === 'readback-confirmed' || event === 'patched' || event === 'reverted') return 'ok';
  if (event === 'failed' || event === 'refused' || event === 'denied' || event === 'readback-mismatch' || event === 'revert-mismatch') return 'bad';
  if (event === 'outcome-unknown' || event === 'expired' || event === 'cancelled') return 'warn';
  return 'idle';
}

/** What the lookup found, in one sentence. */
export function searchSummary(s: ReceiptSearch): string {
  const q = revealInvisible(s.query);
  if (s.status === 'searching') return s.scanned > 0 ? `Looking for ${q}… (${s.scanned} receipts checked)` : `Looking for ${q}…`;
  if (s.error) return s.error.message;
  const n = s.results.length;
  const receipts = `${n} receipt${n === 1 ? '' : 's'}`;
  if (s.matchedBy === 'request') return `Request ${q}: ${receipts}, newest first.`;
  if (s.matchedBy === 'receipt') return `Receipt ${q}, opened below, with ${n === 1 ? 'no other receipt of its request' : `the ${n - 1} other receipt${n === 2 ? '' : 's'} of its request`}.`;
  if (s.complete) return `No receipt and no request has the id ${q}.`;
  return `No request has the id ${q}, and no receipt among the newest ${s.scanned} has it (older receipts are not searched by receipt id).`;
}
