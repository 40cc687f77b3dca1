/**
 * What every agent tool's presentation shares (MCP spec 2025-06-18, "Tools":
 * tool errors are results with `isError: true`, not protocol errors, so the
 * model sees them). Console-made facts (ids, outcome, receipt) come first as
 * plain JSON; everything the page wrote follows inside an
 * untrusted-page-content block (./untrusted.ts). Each tool's own presentation
 * lives in its file under ./tools/.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { refusalDetail, type BrokerAnswer } from '../broker';
import { untrustedBlock, untrustedJson } from './untrusted';
import { requestLink } from '../../../shared/request-summary';

/** One MCP text content item. */
export const text = (t: string) => ({ type: 'text' as const, text: t });

/** The schema of a `tabId` argument (Chrome tab ids are positive int32). */
export const tabIdSchema = { type: 'integer', minimum: 0, maximum: 2_147_483_647, description: 'A tab id from list_tabs.' } as const;

/**
 * A tools/call refused by the agent token's call rate (issue 9 item 3, ./quotas.ts), as the
 * MCP tool error a handler gives: `Error (rate-limited): <message>`. The same text whether the
 * call came over HTTP (answered at the endpoint's door) or the agent socket (in the handler).
 */
export function rateLimitedResult(message: string): CallToolResult {
  return { isError: true, content: [text(`Error (rate-limited): ${message}`)] };
}

/** A refused or failed call as an MCP tool error, with failing paths and any page text labelled. */
export function errorResult(a: Extract<BrokerAnswer<unknown>, { ok: false }>, source: string): CallToolResult {
  const detail = refusalDetail(a.error.detail) ?? {};
  const lines = [`Error (${a.error.code}): ${a.error.message}`, `requestId: ${a.requestId}`, `receiptId: ${a.receiptId || '(none)'}`];
  // Where the person finds this request in the console (Timeline; docs/timeline.md, "Deep links").
  if (a.requestId) lines.push(`console: ${requestLink(a.requestId)}`);
  // The endpoint's own check of an agent tool's arguments: the console's schema, the console's words.
  if (detail.issues?.length && detail.issuesFromConsoleSchema) lines.push(`failing paths: ${JSON.stringify(detail.issues)}`);
  const content = [text(lines.join('\n'))];
  // ajv's messages on a page tool quote the page's schema (patterns, property and keyword names): page text, so inside the block.
  if (detail.issues?.length && !detail.issuesFromConsoleSchema) {
    content.push(text(`The failing paths, with what the page's schema says of them (untrusted):\n${untrustedBlock(`${source} failing paths`, untrustedJson(detail.issues))}`));
  }
  if (detail.untrustedText) {
    content.push(text(`The page's error text follows (untrusted):\n${untrustedBlock(source, detail.untrustedText)}`));
  }
  return { isError: true, content };
}
