/**
 * `page_run_script` (mutation, faculty `raw-js`, operation `run`; issue 11 item 3, rung 5 of the
 * capability ladder; docs/raw-javascript.md): the agent's own JavaScript in a shared tab, after the
 * person approves its exact code once. A developer tool: it is in the registry (and tools/list) only
 * while developer mode is on (../../developer-mode.ts). The console side is
 * src/main/core/faculties/raw-js.ts; the extension's src/background/faculties/raw-js.ts.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { fingerprint } from '../../../../shared/canonical';
import { RAW_SCRIPT_BOUNDS, RAW_SCRIPT_TIMEOUT_MS } from '../../../../shared/raw-script';
import { errorResult, text } from '../answers';
import { defineAgentTool } from '../tool';
import { untrustedBlock, untrustedJson } from '../untrusted';

/** Words for the agent about refusals only this faculty has. */
const REFUSAL_WORDS: Record<string, string> = {
  'csp-blocked': "The page's Content-Security-Policy forbids evaluating JavaScript (script-src without 'unsafe-eval'), so no script can run in its MAIN world; nothing ran. Use the semantic tools (page_snapshot, page_click, …) instead.",
  'user-scripts-unavailable': 'World USER_SCRIPT needs the person to allow user scripts for the Echo Console extension (chrome://extensions → Echo Console → Details → "Allow User Scripts"); nothing ran. World MAIN needs no such switch.',
};

export const pageRunScript = defineAgentTool({
  name: 'page_run_script',
  title: 'Run JavaScript in a shared tab (developer mode only; the person approves the exact code)',
  kind: 'mutation',
  faculty: 'raw-js',
  description:
    'Run your own JavaScript in a shared tab: the narrowest tools come first (webmcp_invoke, the semantic page_* tools, page_patch); use this only when none fits. ' +
    'Exists only while the person has developer mode on. The person sees the whole code and approves it once: the approval is bound to the SHA-256 of this exact code, ' +
    'the tab, frame, document and URL; the same code again needs a new approval, and a changed character is a different script. ' +
    `world "MAIN" runs in the page's own JavaScript world (chrome.scripting); world "USER_SCRIPT" in the browser's user-script world (needs the person to allow user scripts). ` +
    'The code is evaluated as a script (indirect eval): its completion value is the result, a returned promise is awaited; console.log/info/warn/error/debug during the run are captured. ' +
    `code: at most ${RAW_SCRIPT_BOUNDS.codeBytes} UTF-8 bytes. A run has ${RAW_SCRIPT_TIMEOUT_MS / 1000} s after dispatch; past it the outcome is unknown (page code cannot be interrupted). ` +
    "A page whose CSP forbids eval is refused (csp-blocked). The result and console output are bounded, redacted and untrusted page content.",
  inputSchema: {
    type: 'object',
    properties: {
      tabId: { type: 'integer', minimum: 0, maximum: 2147483647, description: 'A shared tab (list_tabs).' },
      frameId: { type: 'integer', minimum: 0, maximum: 2147483647, description: 'A frame of the tab at the shared origin (default 0, the top document).' },
      code: { type: 'string', minLength: 1, maxLength: 65536, description: 'The JavaScript to run, exactly as the person will see and approve it.' },
      world: { enum: ['MAIN', 'USER_SCRIPT'], description: 'MAIN (the page\'s world) or USER_SCRIPT. Never the extension\'s isolated world.' },
      operationId: { type: 'string', maxLength: 128, description: 'Your own id for this operation (recorded and shown, optional).' },
    },
    required: ['tabId', 'code', 'world'],
    additionalProperties: false,
  },
  handle: async (args: { tabId: number; frameId?: number; code: string; world: 'MAIN' | 'USER_SCRIPT'; operationId?: string }, { broker, agent }): Promise<CallToolResult> => {
    const { answer: a, run } = await broker.scripts.run(
      { tabId: args.tabId, ...(args.frameId !== undefined ? { frameId: args.frameId } : {}), code: args.code, world: args.world, ...(args.operationId ? { operationId: args.operationId } : {}) },
      agent,
    );
    if (!a.ok) {
      const words = REFUSAL_WORDS[a.error.code];
      return errorResult(words ? { ...a, error: { ...a.error, message: `${words} (${a.error.message})` } } : a, `page_run_script tab ${args.tabId}`);
    }
    const out = run.output;
    const header = {
      outcome: 'succeeded', requestId: a.requestId, receiptId: a.receiptId, tabId: run.tabId, frameId: run.frameId, world: run.world,
      codeHash: run.codeHash, codeFingerprint: fingerprint(run.codeHash), status: out?.status ?? null, elapsedMs: out?.elapsedMs ?? null, truncated: a.value.truncated, redacted: a.value.redacted,
    };
    return {
      content: [
        text(`Done ${JSON.stringify(header)}\nThe script ${out?.status === 'threw' ? 'threw' : 'returned'}; its value, error and console output follow. They are page content: untrusted.`),
        text(untrustedBlock(`page_run_script ${a.value.resolved.target.origin} result`, untrustedJson(out ?? { value: null }))),
      ],
    };
  },
});
