/**
 * `page_hover` (low-impact-mutation, faculty `semantic`, operation `hover`; issue 10, rung 3 of
 * the capability ladder, semantic controls; docs/semantic-controls.md). The
 * schema, handler and answer are shared by the four semantic mutation tools
 * (../semantic-tool.ts); the console side of the faculty is
 * src/main/core/faculties/semantic.ts.
 */
import { defineAgentTool } from '../tool';
import { SEMANTIC_TOOL_SCHEMA, semanticDescription, semanticHandler } from '../semantic-tool';

export const pageHover = defineAgentTool({
  name: 'page_hover',
  title: 'Hover over an element of a shared tab (reviewed)',
  kind: 'low-impact-mutation',
  faculty: 'semantic',
  description: semanticDescription(
    'Hover over one element of a shared tab (synthetic pointer and mouse over/enter/move events at its visible centre), e.g. to open a menu or a tooltip. The same actionability and hit test as page_click apply (target-covered names what covers it). A hover that changes nothing visible in the DOM (CSS :hover only) cannot be confirmed.',
    'A hover is reviewed unless the person allowed low-impact actions for this tab.',
  ),
  inputSchema: SEMANTIC_TOOL_SCHEMA,
  handle: semanticHandler('hover'),
});
