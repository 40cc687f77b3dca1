/**
 * `page_focus` (low-impact-mutation, faculty `semantic`, operation `focus`; issue 10, rung 3 of
 * the capability ladder, semantic controls; docs/semantic-controls.md). The
 * schema, handler and answer are shared by the four semantic mutation tools
 * (../semantic-tool.ts); the console side of the faculty is
 * src/main/core/faculties/semantic.ts.
 */
import { defineAgentTool } from '../tool';
import { SEMANTIC_TOOL_SCHEMA, semanticDescription, semanticHandler } from '../semantic-tool';

export const pageFocus = defineAgentTool({
  name: 'page_focus',
  title: 'Focus an element of a shared tab (reviewed)',
  kind: 'low-impact-mutation',
  faculty: 'semantic',
  description: semanticDescription(
    'Move keyboard focus to one element of a shared tab (a field, button, link).',
    'Focus is reviewed unless the person allowed low-impact actions for this tab.',
  ),
  inputSchema: SEMANTIC_TOOL_SCHEMA,
  handle: semanticHandler('focus'),
});
