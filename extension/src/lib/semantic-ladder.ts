/**
 * Whether the ladder (issue 10 item 1: "the semantic path stays open when the
 * tool is unusable or blocked"; docs/semantic-controls.md, "The lifecycle", step 1) applies
 * to a declarative WebMCP tool listed by `document.modelContext.getTools()`: only
 * when webmcp_invoke could use that tool. A tool discovery leaves out (over a
 * limit of src/shared/limits.ts, lib/inspect.ts inspectTool), one of several
 * with the same name (webmcp_invoke answers `tool-ambiguous`), one past the
 * first LIMITS.maxToolsPerFrame of the frame, or a blocked one, is not usable:
 * refusing the semantic path for it would let a hostile page lock the agent out
 * of both. Pure: runs on what the page listed.
 */
import { LIMITS } from '../../../src/shared/limits';
import { inspectTool, rawToolOf } from './inspect';
import type { ToolAnnotations } from '../../../src/shared/types';

/** A listed tool as getTools() gives it (WebMCP draft); fields read one by one, page data UNTRUSTED. */
export interface ListedTool {
  name?: unknown;
  title?: unknown;
  description?: unknown;
  inputSchema?: unknown;
  annotations?: unknown;
  origin?: unknown;
}

/**
 * Whether the tool named `name` among `mine` (the tools listed for this document, in listing order)
 * is one webmcp_invoke could use: exactly one of that name, within the first LIMITS.maxToolsPerFrame,
 * passing inspectTool for `origin` (this document's origin) and not blocked.
 */
export function usableLadderTool(mine: readonly ListedTool[], name: string, origin: string): boolean {
  const idx = mine.flatMap((t, i) => (t && t.name === name ? [i] : []));
  if (idx.length !== 1 || (idx[0] as number) >= LIMITS.maxToolsPerFrame) return false;
  const t = mine[idx[0] as number] as ListedTool;
  // A declarative form's tool; passwordField false, since a target in a password form is refused target-blocked before the ladder is asked.
  const raw = rawToolOf(t, () => 'declarative', false);
  try {
    const r = inspectTool(raw, origin);
    return r.ok && r.value.blocked === undefined;
  } catch {
    return false;
  }
}
