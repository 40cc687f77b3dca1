/**
 * Faculty `webmcp-invoke` (dispatch), operation `invoke`: run one exact page
 * tool under a one-use grant (docs/design.md, capability 2).
 *  - subject: `{toolName, descriptorHash}`; its subject hash IS the
 *    descriptorHash (so `grant.subjectHash` = the descriptor the person saw);
 *    a declarative (form) tool's is `{toolName, descriptorHash, form}`, whose
 *    hash also covers the form's effective values, action, method and
 *    `toolautosubmit` (src/shared/form.ts), compared with the form in the
 *    acting task (`form-changed`);
 *  - arguments: the JSON object handed to `executeTool` as it is;
 *  - own checks, after the generic ones (lib/grant-checks.ts): the canonical
 *    descriptor that hashes to the subject's descriptorHash, from this worker's
 *    discoveries (background/preimages.ts, re-hashed here); without one, a
 *    discovery in that very document must find exactly one tool with that name
 *    (0 → `tool-missing`, >1 → `tool-ambiguous`) whose descriptorHash is the
 *    subject's (→ `descriptor-changed`) and that is not blocked (→ `tool-blocked`);
 *  - the exact URLs the grant's urlHash covers: from this worker's discoveries,
 *    or read in the document (discovery.ts `askUrls`);
 *  - page-side runner: content/webmcp.ts `echo:webmcp:execute`. It is the fresh
 *    rediscovery right before dispatch: in the task that calls `executeTool` it
 *    lists the tools again and requires the exact URLs, exactly one tool of
 *    that name among those the frame registered, its exact canonical descriptor,
 *    and no password field (`navigated`, `tool-missing`, `tool-ambiguous`,
 *    `descriptor-changed`, `tool-blocked`). The worker counts it as the
 *    rediscovery (stats.ts) when the page's answer shows it ran.
 */
import { LIMITS } from '../../../../src/shared/limits';
import { FORMATS } from '../../../../src/shared/protocol';
import type { Result } from '../../../../src/shared/result';
import type { RefusalCode } from '../../../../src/shared/types';
import type { ExecuteValue, ToWebMcp } from '../../lib/messages';
import { sha256Hex } from '../../../../src/shared/canonical';
import { askUrls, toolsNamedIn, type FoundTool } from '../discovery';
import { seenActions, seenDescriptors, seenUrls, type Preimages } from '../preimages';
import { askForm } from '../form-ask';
import { WEBMCP_MODULE } from '../tabs';
import type { DispatchFaculty } from './registry';
import { count } from '../stats';
import { formSubjectHash, isFormBinding, type FormBinding } from '../../../../src/shared/form';

/** What the check hands to the page: the tool's name and the canonical descriptor it must still have. */
export interface WebMcpPrepared {
  toolName: string;
  canonical: string;
  /** A declarative tool's bound form (src/shared/form.ts), compared with the form in the acting task. */
  form?: FormBinding;
  /** With `form`: the exact action URL that hashes to `form.actionHash`. */
  formAction?: string;
}

/**
 * The exact action URL whose hash is `actionHash`: from this worker's form reads (preimages.ts),
 * else read again in that document (background/form-ask.ts, which remembers it). `null`: the form
 * there does not submit to it now.
 */
export async function formActionOf(target: { tabId: number; frameId: number; documentId: string }, toolName: string, actionHash: string): Promise<string | null> {
  const known = seenActions.get(actionHash);
  if (known !== undefined && (await sha256Hex(known)) === actionHash) return known;
  const read = await askForm(target, toolName);
  if (!read.ok || read.value.actionHash !== actionHash) return null;
  return seenActions.get(actionHash) ?? null;
}

/** How long a waiting form's runner waits for the person within a dispatch of `timeoutMs`: the dispatch's timeout less a margin (1/5, at most 5 s) for the answer to come back. */
export function formWaitMs(timeoutMs: number): number {
  return Math.max(1, timeoutMs - Math.min(5_000, Math.floor(timeoutMs / 5)));
}

/** The rediscovery the check uses (injectable for tests): the tools named `name` in exactly `target`, `null` when it is gone. */
export type ToolsNamed = (target: { tabId: number; frameId: number; documentId: string }, name: string, origin: string) => Promise<FoundTool[] | null>;

function subjectOf(subject: Record<string, unknown>): { toolName: string; descriptorHash: string; form?: FormBinding } {
  return { toolName: subject.toolName as string, descriptorHash: subject.descriptorHash as string, ...(subject.form !== undefined ? { form: subject.form as FormBinding } : {}) };
}

/** The content module's own refusal codes (lib/messages.ts ExecuteErrorCode) and what they mean here. */
const REFUSALS: Readonly<Record<string, RefusalCode>> = {
  'tool-missing': 'tool-missing',
  'no-webmcp': 'tool-missing',
  'tool-ambiguous': 'tool-ambiguous',
  'descriptor-changed': 'descriptor-changed',
  'tool-blocked': 'tool-blocked',
  'form-changed': 'form-changed',
};

/** The page's answers that come after its fresh getTools() in the acting task: the rediscovery ran (content/webmcp.ts `execute`). */
const AFTER_REDISCOVERY = new Set(['tool-missing', 'tool-ambiguous', 'descriptor-changed', 'tool-blocked', 'navigated', 'tool-failed', 'aborted', 'form-changed', 'form-wait-timeout', 'form-cancelled', 'submitted-no-answer']);

/** What the faculty knows from this worker's discoveries (background/preimages.ts); injectable for tests. */
export interface SeenPreimages {
  descriptors: Pick<Preimages<string>, 'get'>;
  urls: Pick<Preimages<{ tab: string; frame: string }>, 'get'>;
}

/**
 * The webmcp-invoke faculty. `toolsNamed` (a discovery through the content
 * module) and `askPageUrls` serve a dispatch whose hashes `seen` does not hold.
 */
export function webmcpInvoke(
  toolsNamed: ToolsNamed = toolsNamedIn,
  seen: SeenPreimages = { descriptors: seenDescriptors, urls: seenUrls },
  askPageUrls: (target: { tabId: number; frameId: number; documentId: string }) => Promise<{ tab: string; frame: string } | null> = askUrls,
  actionOf: typeof formActionOf = formActionOf,
): DispatchFaculty<WebMcpPrepared> {
  /** The form part of what is prepared: the bound form and its exact action, or a refusal. */
  const withForm = async (target: { tabId: number; frameId: number; documentId: string }, s: ReturnType<typeof subjectOf>) => {
    if (!s.form) return {};
    const formAction = await actionOf(target, s.toolName, s.form.actionHash);
    return formAction === null ? null : { form: s.form, formAction };
  };
  const formMoved = { ok: false as const, refusal: 'form-changed' as const, message: 'the form submits to another address than the one approved' };
  return {
    id: 'webmcp-invoke',
    kind: 'dispatch',
    operations: ['invoke'],
    contentModule: WEBMCP_MODULE,
    checkRequest(_operation, subject) {
      const keys = Object.keys(subject ?? {});
      const withForm = keys.length === 3 && keys.includes('form');
      if ((keys.length !== 2 && !withForm) || !keys.includes('toolName') || !keys.includes('descriptorHash')) return 'subject must be {toolName, descriptorHash, form?}';
      const s = subjectOf(subject);
      if (withForm && !isFormBinding(s.form)) return 'subject.form is not a form binding {actionHash, method, autosubmit, values}';
      if (typeof s.toolName !== 'string' || !LIMITS.toolNamePattern.test(s.toolName)) return 'subject.toolName is not a valid tool name';
      if (typeof s.descriptorHash !== 'string' || !FORMATS.hex64.test(s.descriptorHash)) return 'subject.descriptorHash is not 64 lowercase hex characters';
      return null;
    },
    // A form tool's subject hash covers its bound form too (src/shared/form.ts formSubjectHash).
    async subjectHash(subject) {
      const s = subjectOf(subject);
      const h = s.descriptorHash;
      if (typeof h !== 'string' || !FORMATS.hex64.test(h)) throw new Error('no descriptorHash');
      return s.form ? formSubjectHash(h, s.form) : h;
    },
    async check(target, subject, origin) {
      const s = subjectOf(subject);
      const known = seen.descriptors.get(s.descriptorHash);
      if (known !== undefined && (await sha256Hex(known)) === s.descriptorHash) {
        // The page compares its tool with this exact text in the acting task (execute).
        const f = await withForm(target, s);
        if (f === null) return formMoved;
        return { ok: true, prepared: { toolName: s.toolName, canonical: known, ...f } };
      }
      const found = await toolsNamed(target, s.toolName, origin);
      if (found === null) return { ok: false, refusal: 'navigated', message: 'the document went away during rediscovery' };
      if (found.length === 0) return { ok: false, refusal: 'tool-missing', message: 'the page no longer offers this tool' };
      if (found.length > 1) return { ok: false, refusal: 'tool-ambiguous', message: `the page offers ${found.length} tools with this name` };
      const tool = found[0] as FoundTool;
      if (tool.descriptorHash !== s.descriptorHash) return { ok: false, refusal: 'descriptor-changed', message: 'the tool changed since it was approved' };
      if (tool.blocked) return { ok: false, refusal: 'tool-blocked', message: `the tool is blocked (${tool.blocked})` };
      const f = await withForm(target, s);
      if (f === null) return formMoved;
      return { ok: true, prepared: { toolName: s.toolName, canonical: tool.canonical, ...f } };
    },
    // The generic checks hash what this answers and compare it with the grant's urlHash.
    pageUrls: async (target, boundUrlHash) => seen.urls.get(boundUrlHash) ?? askPageUrls(target),
    async execute(target, m) {
      // A form without toolautosubmit waits for the person: its runner ends the wait itself, before the
      // dispatch's timeout, so the answer says the form was not submitted rather than "unknown".
      const waitMs = m.prepared.form && !m.prepared.form.autosubmit && m.timeoutMs !== undefined ? formWaitMs(m.timeoutMs) : undefined;
      const msg: ToWebMcp = { type: 'echo:webmcp:execute', requestId: m.requestId, toolName: m.prepared.toolName, expected: m.prepared.canonical, urls: m.urls, args: m.args, ...(m.prepared.form ? { form: m.prepared.form, formAction: m.prepared.formAction } : {}), ...(waitMs !== undefined ? { waitMs } : {}) };
      const answer = (await chrome.tabs.sendMessage(target.tabId, msg, { frameId: target.frameId, documentId: target.documentId })) as Result<ExecuteValue> | undefined;
      // The bench's proof that no dispatch skipped the fresh rediscovery (stats.ts): the page's answer says it ran.
      if (answer && (answer.ok || AFTER_REDISCOVERY.has(String(answer.error?.code)))) count('rediscoveries');
      return answer as Result<ExecuteValue>;
    },
    abort(target, requestId) {
      const msg: ToWebMcp = { type: 'echo:webmcp:abort', requestId };
      chrome.tabs.sendMessage(target.tabId, msg, { frameId: target.frameId, documentId: target.documentId }).catch(() => undefined);
    },
    refusalFor: (code) => (Object.prototype.hasOwnProperty.call(REFUSALS, code) ? (REFUSALS[code] as RefusalCode) : null),
  };
}
