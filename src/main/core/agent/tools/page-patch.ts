/**
 * `page_patch` (mutation, faculty `live-patch`, operation `patch`; issue 11 item 1, rung 4 of the
 * capability ladder; docs/live-patch.md): a declared, reversible edit of one element of a shared
 * tab, approved once by the person, undone by page_revert. The console side is
 * src/main/core/faculties/live-patch.ts; the allow-list src/shared/live-patch.ts.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { PATCH_BOUNDS, PATCH_STYLE_PROPERTIES, type PatchEdit } from '../../../../shared/live-patch';
import type { FingerprintQuery } from '../../../../shared/semantic-target';
import { livePatchFaculty } from '../../faculties/live-patch';
import { errorResult, text } from '../answers';
import { SEMANTIC_TOOL_SCHEMA } from '../semantic-tool';
import { defineAgentTool } from '../tool';
import { untrustedBlock, untrustedJson } from '../untrusted';

export const pagePatch = defineAgentTool({
  name: 'page_patch',
  title: 'Change how one element of a shared tab looks, reversibly (a Live Patch; needs approval)',
  kind: 'mutation',
  faculty: 'live-patch',
  description:
    'Apply a Live Patch: a declared, reversible edit of one element of a shared tab (target by ref from page_snapshot, or by fingerprint), ' +
    `after the person approves it once, seeing the target and every edit. edits: 1 to ${PATCH_BOUNDS.edits} of ONLY these: ` +
    `{op:"set-text", text} (an element holding text only, at most ${PATCH_BOUNDS.text} characters); ` +
    '{op:"set-attribute", name, value} and {op:"remove-attribute", name} for title, class, hidden and aria-* only; ' +
    `{op:"set-style", property, value} for ${[...PATCH_STYLE_PROPERTIES].join(', ')} (values of letters, digits, # % . , ( ) + - and spaces; functions rgb/rgba/hsl/hsla only); ` +
    `{op:"insert", element:"note"|"highlight", position:"before"|"after"|"prepend"|"append", text} (our own element, text only, at most ${PATCH_BOUNDS.noteText} characters); {op:"hide"}; {op:"show"}. ` +
    'Anything else is refused (patch-forbidden) before the person is asked: never scripts, on* handlers, href, src, action, formaction, the style attribute, URLs or script schemes in any value, iframes, form values (use page_type). ' +
    'Password fields, forms holding one, credential fields and private parts are refused (target-blocked). The answer gives the patchId (for page_revert) and the SHA-256 of the prior and after states; ' +
    'success only when a readback found the page holding the patch. Patches end with the document (a reload or navigation drops them).',
  inputSchema: {
    type: 'object',
    properties: {
      ...SEMANTIC_TOOL_SCHEMA.properties,
      // Each edit is judged by the ONE allow-list (src/shared/live-patch.ts), which names a refused edit: the schema only bounds the list.
      edits: { type: 'array', minItems: 1, maxItems: 64, items: { type: 'object' }, description: 'The edits, in order (the closed set above).' },
    },
    required: ['tabId', 'edits'],
    additionalProperties: false,
  },
  handle: async (args: { tabId: number; ref?: string; fingerprint?: FingerprintQuery; edits: PatchEdit[]; operationId?: string }, { broker, agent }): Promise<CallToolResult> => {
    const a = await broker.action(
      livePatchFaculty,
      { tabId: args.tabId, ...(args.ref !== undefined ? { ref: args.ref } : {}), ...(args.fingerprint !== undefined ? { fingerprint: args.fingerprint } : {}), arguments: { edits: args.edits }, ...(args.operationId ? { operationId: args.operationId } : {}) },
      agent,
    );
    if (!a.ok) return errorResult(a, `page_patch tab ${args.tabId}`);
    const v = a.value;
    const t = v.resolved.target;
    const s = v.resolved.subject;
    const x = JSON.parse(v.result ?? '{}') as { patchId?: string; priorHash?: string; afterHash?: string };
    const header = {
      outcome: 'succeeded', operation: 'patch', requestId: a.requestId, receiptId: a.receiptId, tabId: t.tabId,
      patchId: x.patchId, priorHash: x.priorHash, afterHash: x.afterHash, edits: s.type === 'live-patch' ? s.edits.length : 0, readback: 'confirmed', effect: 'patch-held',
    };
    const evidence = s.type === 'live-patch' ? { ref: s.ref, role: s.fingerprint?.role, name: s.fingerprint?.name, fingerprintHash: s.fingerprintHash, frameId: t.frameId, documentId: t.documentId, url: t.frameUrl } : {};
    return {
      content: [
        text(`Done ${JSON.stringify(header)}\nRevert it with page_revert {"tabId": ${t.tabId}, "patchId": ${JSON.stringify(x.patchId)}}. The target's evidence follows; its name and URL are page text and untrusted:`),
        text(untrustedBlock(`page_patch ${t.origin} target`, untrustedJson(evidence))),
      ],
    };
  },
});
