/**
 * `page_revert` (low-impact mutation, faculty `live-patch`, operation `revert`; issue 11 item 1;
 * docs/live-patch.md): undo Live Patches of a shared tab, exactly, checked by a readback against
 * each patch's prior-state hash (`reverted`, or `revert-mismatch` when the page changed what the
 * patch touched). Reviewed unless the person allowed low-impact actions for that tab: a revert
 * puts the page back as the person had it. The person can also revert from the console.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { PATCH_BOUNDS } from '../../../../shared/live-patch';
import { revertFaculty } from '../../faculties/live-patch';
import { errorResult, tabIdSchema, text } from '../answers';
import { defineAgentTool } from '../tool';

export const pageRevert = defineAgentTool({
  name: 'page_revert',
  title: 'Revert Live Patches of a shared tab',
  kind: 'low-impact-mutation',
  faculty: 'live-patch',
  description:
    'Revert Live Patches applied with page_patch: {tabId, patchId} for one, {tabId, patchIds:[…]} for several of one document, or {tabId, all:true} for every active patch of the tab (its newest document). ' +
    'Patches are undone newest first; a later patch on the same element must be reverted with (or before) an earlier one (patch-stacked). Success only when the readback found each patched element equal to its prior-state hash; ' +
    'a page that changed what the patch touched gives revert-mismatch (its own change is kept, never overwritten). A patch whose document ended is gone already (patch-unknown).',
  inputSchema: {
    type: 'object',
    properties: {
      tabId: tabIdSchema,
      patchId: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$', description: 'The patchId page_patch answered.' },
      patchIds: { type: 'array', minItems: 1, maxItems: PATCH_BOUNDS.revertIds, items: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$' } },
      all: { type: 'boolean', const: true, description: 'Revert every active patch of the tab.' },
      operationId: { type: 'string', minLength: 1, maxLength: 128, pattern: '^[\\x21-\\x7e]+$' },
    },
    required: ['tabId'],
    additionalProperties: false,
  },
  handle: async (args: { tabId: number; patchId?: string; patchIds?: string[]; all?: boolean; operationId?: string }, { broker, agent }): Promise<CallToolResult> => {
    const given = [args.patchId !== undefined, args.patchIds !== undefined, args.all === true].filter(Boolean).length;
    const ids = args.patchId !== undefined ? [args.patchId] : args.patchIds;
    const a = given !== 1
      ? broker.rejectCall({ faculty: 'live-patch', agentTool: 'page_revert', actor: agent.actor, code: 'invalid-arguments', message: 'Give exactly one of patchId, patchIds or all: true.' })
      : await broker.action(revertFaculty, { tabId: args.tabId, ...(ids ? { patchIds: ids } : { all: true }), arguments: {}, ...(args.operationId ? { operationId: args.operationId } : {}) }, agent);
    if (!a.ok) return errorResult(a, `page_revert tab ${args.tabId}`);
    const s = a.value.resolved.subject;
    const reverted = s.type === 'live-patch' ? s.patches.map((p) => p.patchId) : [];
    const header = { outcome: 'succeeded', operation: 'revert', requestId: a.requestId, receiptId: a.receiptId, tabId: args.tabId, reverted, readback: 'confirmed', effect: 'equal-to-prior-state' };
    return { content: [text(`Done ${JSON.stringify(header)}`)] };
  },
});
