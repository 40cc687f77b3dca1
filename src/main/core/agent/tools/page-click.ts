/**
 * `page_click` (mutation, faculty `semantic`, operation `click`; issue 10, rung 3 of
 * the capability ladder, semantic controls; docs/semantic-controls.md). The
 * schema, handler and answer are shared by the four semantic mutation tools
 * (../semantic-tool.ts); the console side of the faculty is
 * src/main/core/faculties/semantic.ts.
 */
import { defineAgentTool } from '../tool';
import { SEMANTIC_TOOL_SCHEMA, semanticDescription, semanticHandler } from '../semantic-tool';

export const pageClick = defineAgentTool({
  name: 'page_click',
  title: 'Click an element of a shared tab (needs approval)',
  kind: 'mutation',
  faculty: 'semantic',
  description: semanticDescription(
    'Click one element of a shared tab (a button, link, checkbox, ...), after the person approves this one click. Before the click the target is scrolled into view and must be actionable (visible, stable, enabled, receiving pointer events) and pass a hit test at its visible centre: if another element covers it, the click is refused (target-covered) naming the covering element with its ref, so you can close the overlay first.',
    'A click is always reviewed by the person.',
  ),
  inputSchema: SEMANTIC_TOOL_SCHEMA,
  handle: semanticHandler('click'),
});
