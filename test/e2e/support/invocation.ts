/**
 * Helpers every end-to-end fixture shares for invoking page tools: the page-side
 * execution counter (the proof that a refused request never ran the page's tool)
 * and the fields of a v2 grant and a `dispatch` request (faculty `webmcp-invoke`) for one discovered tool.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { Page } from '@playwright/test';
import { argumentsHash } from '../../../src/shared/canonical';
import type { ConsoleRequest } from '../../../src/shared/protocol';
import type { Grant, ToolDescriptor } from '../../../src/shared/types';

/**
 * Init script for the page's MAIN world: counts executions per tool name in
 * `window.__echoExecCount` by wrapping `registerTool`'s `execute`. The descriptor,
 * and so its hash, is unchanged.
 */
export const EXEC_COUNTER = `(() => {
  const mc = document.modelContext;
  if (!mc) return;
  const proto = Object.getPrototypeOf(mc);
  const register = proto.registerTool;
  if (typeof register !== 'function' || register.__echoCounted) return;
  const counts = (window.__echoExecCount = window.__echoExecCount || {});
  const wrapped = function (tool, options) {
    if (tool && typeof tool === 'object' && typeof tool.execute === 'function') {
      const execute = tool.execute;
      const name = String(tool.name);
      tool = Object.assign({}, tool, { execute: function (...args) { counts[name] = (counts[name] || 0) + 1; return execute.apply(this, args); } });
    }
    return register.call(this, tool, options);
  };
  wrapped.__echoCounted = true;
  proto.registerTool = wrapped;
})();`;

/** How often the page ran its tool `name` since it loaded (needs EXEC_COUNTER as an init script). */
export function execCount(page: Page, name: string): Promise<number> {
  return page.evaluate((n) => ((globalThis as unknown as { __echoExecCount?: Record<string, number> }).__echoExecCount ?? {})[n] ?? 0, name);
}

/** The `dispatch` ConsoleRequest (src/shared/protocol.ts). */
export type DispatchRequest = Extract<ConsoleRequest, { op: 'dispatch' }>;

/**
 * Unsigned v2 grant fields binding `args` to `tool` for the `webmcp-invoke`
 * faculty (subjectHash = descriptorHash, urlHash = the descriptor's, i.e. the
 * exact URLs at discovery): fresh requestId and nonce, 30 s expiry; `over`
 * replaces any field.
 */
export async function grantFields(tool: ToolDescriptor, args: Record<string, unknown>, over: Partial<Omit<Grant, 'mac'>> = {}): Promise<Omit<Grant, 'mac'>> {
  if (!tool.urlHash) throw new Error(`tool ${tool.name} was discovered without urlHash`);
  return {
    requestId: randomUUID(),
    faculty: 'webmcp-invoke',
    operation: 'invoke',
    tabId: tool.tabId,
    frameId: tool.frameId,
    documentId: tool.documentId,
    origin: tool.origin,
    urlHash: tool.urlHash,
    subjectHash: tool.descriptorHash,
    argumentsHash: await argumentsHash(args),
    nonce: randomBytes(16).toString('hex'),
    expiresAt: Date.now() + 30_000,
    ...over,
  };
}

/** The `dispatch` request (faculty `webmcp-invoke`, operation `invoke`) for `tool` carrying a signed grant. */
export function invokeRequestFor(tool: ToolDescriptor, args: Record<string, unknown>, grant: Grant, timeoutMs: number): DispatchRequest {
  return {
    op: 'dispatch',
    faculty: 'webmcp-invoke',
    operation: 'invoke',
    target: { tabId: tool.tabId, frameId: tool.frameId, documentId: tool.documentId },
    subject: { toolName: tool.name, descriptorHash: tool.descriptorHash },
    arguments: args,
    grant,
    timeoutMs,
  };
}
