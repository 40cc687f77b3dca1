/**
 * Faculty `webmcp-invoke` (dispatch), operation `invoke`: run one exact page
 * tool under a one-use grant (docs/design.md, capability 2).
 *  - subject: `{toolName, descriptorHash}`; its subject hash IS the
 *    descriptorHash (so `grant.subjectHash` = the descriptor the person saw);
 *  - arguments: the JSON object handed to `executeTool` as it is;
 *  - own checks, after the generic ones (lib/grant-checks.ts): a fresh discovery
 *    in that very document finds exactly one tool with that name
 *    (0 → `tool-missing`, >1 → `tool-ambiguous`) whose descriptorHash is the
 *    subject's (→ `descriptor-changed`) and that is not blocked (→ `tool-blocked`);
 *  - page-side runner: content/webmcp.ts `echo:webmcp:execute`, which checks the
 *    tool's canonical descriptor and the exact URLs again in the task that calls
 *    `executeTool`.
 */
import { LIMITS } from '../../../../src/shared/limits';
import { FORMATS } from '../../../../src/shared/protocol';
import type { Result } from '../../../../src/shared/result';
import type { RefusalCode } from '../../../../src/shared/types';
import type { ExecuteValue, ToWebMcp } from '../../lib/messages';
import { askUrls, toolsNamedIn, type FoundTool } from '../discovery';
import { WEBMCP_MODULE } from '../tabs';
import type { DispatchFaculty } from './registry';
import { count } from '../stats';

/** What the check hands to the page: the tool's name and the canonical descriptor it must still have. */
export interface WebMcpPrepared {
  toolName: string;
  canonical: string;
}

/** The rediscovery the check uses (injectable for tests): the tools named `name` in exactly `target`, `null` when it is gone. */
export type ToolsNamed = (target: { tabId: number; frameId: number; documentId: string }, name: string, origin: string) => Promise<FoundTool[] | null>;

function subjectOf(subject: Record<string, unknown>): { toolName: string; descriptorHash: string } {
  return { toolName: subject.toolName as string, descriptorHash: subject.descriptorHash as string };
}

/** The content module's own refusal codes (lib/messages.ts ExecuteErrorCode) and what they mean here. */
const REFUSALS: Readonly<Record<string, RefusalCode>> = {
  'tool-missing': 'tool-missing',
  'no-webmcp': 'tool-missing',
  'tool-ambiguous': 'tool-ambiguous',
  'descriptor-changed': 'descriptor-changed',
  'tool-blocked': 'tool-blocked',
};

/** The webmcp-invoke faculty; `toolsNamed` defaults to a fresh discovery through the content module. */
export function webmcpInvoke(toolsNamed: ToolsNamed = toolsNamedIn): DispatchFaculty<WebMcpPrepared> {
  return {
    id: 'webmcp-invoke',
    kind: 'dispatch',
    operations: ['invoke'],
    contentModule: WEBMCP_MODULE,
    checkRequest(_operation, subject) {
      const keys = Object.keys(subject ?? {});
      if (keys.length !== 2 || !keys.includes('toolName') || !keys.includes('descriptorHash')) return 'subject must be {toolName, descriptorHash}';
      const s = subjectOf(subject);
      if (typeof s.toolName !== 'string' || !LIMITS.toolNamePattern.test(s.toolName)) return 'subject.toolName is not a valid tool name';
      if (typeof s.descriptorHash !== 'string' || !FORMATS.hex64.test(s.descriptorHash)) return 'subject.descriptorHash is not 64 lowercase hex characters';
      return null;
    },
    async subjectHash(subject) {
      const h = subjectOf(subject).descriptorHash;
      if (typeof h !== 'string' || !FORMATS.hex64.test(h)) throw new Error('no descriptorHash');
      return h;
    },
    async check(target, subject, origin) {
      const s = subjectOf(subject);
      count('rediscoveries'); // the bench's proof that no dispatch skipped the fresh discovery (stats.ts)
      const found = await toolsNamed(target, s.toolName, origin);
      if (found === null) return { ok: false, refusal: 'navigated', message: 'the document went away during rediscovery' };
      if (found.length === 0) return { ok: false, refusal: 'tool-missing', message: 'the page no longer offers this tool' };
      if (found.length > 1) return { ok: false, refusal: 'tool-ambiguous', message: `the page offers ${found.length} tools with this name` };
      const tool = found[0] as FoundTool;
      if (tool.descriptorHash !== s.descriptorHash) return { ok: false, refusal: 'descriptor-changed', message: 'the tool changed since it was approved' };
      if (tool.blocked) return { ok: false, refusal: 'tool-blocked', message: `the tool is blocked (${tool.blocked})` };
      return { ok: true, prepared: { toolName: s.toolName, canonical: tool.canonical } };
    },
    pageUrls: (target) => askUrls(target),
    execute(target, m) {
      const msg: ToWebMcp = { type: 'echo:webmcp:execute', requestId: m.requestId, toolName: m.prepared.toolName, expected: m.prepared.canonical, urls: m.urls, args: m.args };
      return chrome.tabs.sendMessage(target.tabId, msg, { frameId: target.frameId, documentId: target.documentId }) as Promise<Result<ExecuteValue>>;
    },
    abort(target, requestId) {
      const msg: ToWebMcp = { type: 'echo:webmcp:abort', requestId };
      chrome.tabs.sendMessage(target.tabId, msg, { frameId: target.frameId, documentId: target.documentId }).catch(() => undefined);
    },
    refusalFor: (code) => (Object.prototype.hasOwnProperty.call(REFUSALS, code) ? (REFUSALS[code] as RefusalCode) : null),
  };
}
