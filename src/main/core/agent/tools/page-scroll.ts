/**
 * `page_scroll` (low-impact-mutation, faculty `semantic`, operation `scroll`; issue 10, rung 3 of
 * the capability ladder, semantic controls; docs/semantic-controls.md). The
 * schema, handler and answer are shared by the four semantic mutation tools
 * (../semantic-tool.ts); the console side of the faculty is
 * src/main/core/faculties/semantic.ts.
 */
import { defineAgentTool } from '../tool';
import { SEMANTIC_TOOL_SCHEMA, semanticDescription, semanticHandler } from '../semantic-tool';

export const pageScroll = defineAgentTool({
  name: 'page_scroll',
  title: 'Scroll an element of a shared tab into view (reviewed)',
  kind: 'low-impact-mutation',
  faculty: 'semantic',
  description: semanticDescription(
    'Scroll a shared tab so that one element is in view (centred where possible).',
    'Scrolling is reviewed unless the person allowed low-impact actions for this tab.',
  ),
  inputSchema: SEMANTIC_TOOL_SCHEMA,
  handle: semanticHandler('scroll'),
});
