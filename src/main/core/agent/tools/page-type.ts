/**
 * `page_type` (mutation, faculty `semantic`, operation `type`; issue 10 item 4, "Type"; rung 4 of
 * the capability ladder, semantic controls; docs/semantic-controls.md, "Type and fill"). The
 * target and the answer are those of every semantic mutation tool (../semantic-tool.ts); its one
 * argument, `text`, is bound by the grant's arguments hash. The page side is
 * extension/src/lib/semantic-type.ts.
 */
import { TYPE_TEXT_MAX } from '../../../../shared/semantic-target';
import { defineAgentTool } from '../tool';
import { SEMANTIC_TOOL_SCHEMA, semanticDescription, semanticHandler } from '../semantic-tool';

export const pageType = defineAgentTool({
  name: 'page_type',
  title: 'Set the value of a field of a shared tab (needs approval)',
  kind: 'mutation',
  faculty: 'semantic',
  description: semanticDescription(
    'Set the value of one field of a shared tab: a text, search, email, number, date or time input, a textarea, a select (by an option\'s label or value) or a contenteditable element. The text REPLACES what the field holds; it is set through the field\'s native setter with beforeinput, input and change events, so React and similar libraries see it (no per-key events). To set several fields of one form with one approval, use page_fill. Submitting stays a separate page_click.',
    'Typing is always reviewed by the person, who sees the text.',
  ),
  inputSchema: {
    ...SEMANTIC_TOOL_SCHEMA,
    properties: {
      ...SEMANTIC_TOOL_SCHEMA.properties,
      text: { type: 'string', maxLength: TYPE_TEXT_MAX, description: 'The value the field is to hold (replaces its value; for a select, an option\'s label as the page shows it, never its value).' },
    },
    required: ['tabId', 'text'],
  },
  handle: semanticHandler('type'),
});
