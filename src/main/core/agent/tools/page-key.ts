/**
 * `page_key` (mutation, faculty `semantic`, operation `key`; issue 10 item 4
 * "Key"; docs/semantic-controls.md, "Key"): one navigation or control key
 * (src/shared/semantic-key.ts ALLOWED_KEYS) on the element focused now, after
 * the person approves that key. Synthetic key events perform no default
 * action (FACTS), so the extension performs the documented default itself and
 * says which (`keyDefault`). The answer is shared with the other semantic
 * mutation tools (../semantic-tool.ts semanticAnswer).
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { ALLOWED_KEYS } from '../../../../shared/semantic-key';
import { semanticFaculty } from '../../faculties/semantic';
import { tabIdSchema } from '../answers';
import { SEMANTIC_TOOL_SCHEMA, semanticAnswer, semanticDescription } from '../semantic-tool';
import { defineAgentTool } from '../tool';

const faculty = semanticFaculty('key');

export const pageKey = defineAgentTool({
  name: 'page_key',
  title: 'Press a navigation or control key in a shared tab (needs approval)',
  kind: 'mutation',
  faculty: 'semantic',
  description: semanticDescription(
    `Press one key on the element focused now in a shared tab (no ref or fingerprint: the target is the focused element, or the document when nothing is focused; move the focus with Tab or page_focus). Keys: ${ALLOWED_KEYS.join(', ')}; no characters (use page_type for text). The extension performs what the key would do and says which (keyDefault): Tab and Shift+Tab move the focus in the page's tab order (into shadow roots and same-origin frames); Enter activates a link or button, or submits the form of a field; Space activates a button, checkbox or radio, else scrolls; arrows, Home, End, PageUp and PageDown scroll (arrows move between radios of a group); Escape closes an open modal dialog. A focused password field, or any field of a form holding one, is refused, Enter included.`,
    'A key is always reviewed by the person, and the approval binds that key: the grant for Tab cannot press Enter.',
  ),
  inputSchema: {
    type: 'object',
    properties: {
      tabId: tabIdSchema,
      key: { type: 'string', enum: ALLOWED_KEYS, description: 'The key, spelled exactly as listed (Shift+Tab is Tab with Shift; Space is the space bar).' },
      operationId: SEMANTIC_TOOL_SCHEMA.properties.operationId,
    },
    required: ['tabId', 'key'],
    additionalProperties: false,
  } as const,
  handle: async (args, { broker, agent }): Promise<CallToolResult> => {
    const a = await broker.action(faculty, { tabId: args.tabId, arguments: { key: args.key }, ...(args.operationId ? { operationId: args.operationId } : {}) }, agent);
    return semanticAnswer('key', args.tabId, a);
  },
});
