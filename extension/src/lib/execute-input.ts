/**
 * The form in which `document.modelContext.executeTool` takes a tool's input,
 * read off the tool itself. Chromium 156 (the current draft) reports
 * `inputSchema` as an object and takes the input as an object; Chromium 150
 * (Debian 12's main archive) reports `inputSchema` as a JSON string and takes
 * the input as a JSON string too — given an object it rejects with
 * "UnknownError: Failed to parse input arguments" before the tool runs
 * (docs/browser-facts.md, "WebMCP: running tools"). The same arguments, hashed
 * and approved as an object, are handed over in the build's own form.
 */

/**
 * What to pass as `executeTool`'s input for a tool whose `getTools()` entry
 * reported `inputSchema` as given.
 * @returns `args` itself, or `JSON.stringify(args)` when the build reports schemas as strings.
 */
export function executeInput(reportedInputSchema: unknown, args: Record<string, unknown>): Record<string, unknown> | string {
  return typeof reportedInputSchema === 'string' ? JSON.stringify(args) : args;
}
