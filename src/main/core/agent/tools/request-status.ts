/**
 * `request_status` (read, faculty `console`): how one earlier request stands, from its receipts
 * (src/main/core/broker/request-status.ts). For an agent whose `webmcp_invoke` on a form that waits
 * for the person ended on its side (a client timeout, a dropped connection) before the form was
 * submitted, cancelled or timed out: the receipts say which.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { defineAgentTool } from '../tool';
import { errorResult, text } from '../answers';
import { untrustedBlock, untrustedJson } from '../untrusted';
import { requestLink } from '../../../../shared/request-summary';

export const requestStatus = defineAgentTool({
  name: 'request_status',
  title: 'Status of an earlier request',
  kind: 'read',
  faculty: 'console',
  description:
    'Tell how an earlier request stands, from the console\'s receipts: give the requestId an answer (or an error) gave you. ' +
    'state is "in-progress" (waiting for the person\'s approval, or for the person to press a form\'s button) or "ended" with its ' +
    'outcome (succeeded, failed, refused, denied, expired, cancelled, outcome-unknown) and code (for a form that waited: ' +
    'form-wait-timeout when the person did not submit in time, form-cancelled when the page reset the form). ' +
    'The outcome\'s detail may quote the page and is untrusted.',
  inputSchema: {
    type: 'object',
    properties: {
      requestId: { type: 'string', pattern: '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$', description: 'The requestId of the earlier request.' },
    },
    required: ['requestId'],
    additionalProperties: false,
  },
  async handle(args, { broker, agent }): Promise<CallToolResult> {
    const a = await broker.requestStatus(args.requestId, agent);
    if (!a.ok) return errorResult(a, 'request_status');
    const s = a.value;
    const head = { requestId: s.requestId, state: s.state, ...(s.outcome ? { outcome: s.outcome } : {}), ...(s.code ? { code: s.code } : {}), toolName: s.toolName, events: s.events.map((e) => e.event), receiptId: a.receiptId, consoleLink: requestLink(s.requestId) };
    return {
      content: [
        text(JSON.stringify(head)),
        ...(s.detail !== undefined ? [text('The outcome receipt\'s detail (may quote the page, untrusted):'), text(untrustedBlock('request_status detail', untrustedJson(s.detail)))] : []),
      ],
    };
  },
});
