/**
 * The console side of the `webmcp-invoke` faculty (rung 3 of the capability
 * ladder, docs/design.md): run one exact page tool descriptor. Its subject is
 * the descriptor from the latest discovery of the tab; the subject hash the
 * grant binds is its `descriptorHash` (for a declarative form tool, the hash
 * of the descriptorHash and the form's effective values, action, method and
 * `toolautosubmit`, read in the page: src/shared/form.ts); the arguments are validated with ajv
 * against the exact reviewed `inputSchema` (the browser does not validate them,
 * docs/browser-facts.md). The extension's half is
 * extension/src/background/faculties/webmcp-invoke.ts.
 */
import { stripUrl } from '../../../shared/url';
import { err, ok, type Result } from '../../../shared/result';
import type { ToolDescriptor } from '../../../shared/types';
import { formBinding, formSubject, formSubjectHash, type FormSubject } from '../../../shared/form';
import type { ActionFaculty, ActionRequestBase, ActionValue, FacultyEnv, ResolvedAction } from '../broker/faculty';

/** `webmcp_invoke` as the agent asks it. */
export interface InvokeRequest extends ActionRequestBase {
  tabId: number;
  /** Needed only when the same descriptor is offered by several frames. */
  frameId?: number;
  name: string;
  descriptorHash: string;
  /**
   * The `documentId` discovery gave for this descriptor (optional). When given it
   * must be the resolved descriptor's document, else the request is refused
   * (`navigated`: the page moved to a new document since that discovery).
   */
  documentId?: string;
  /** Passed to `executeTool` exactly as reviewed and hashed. */
  arguments: Record<string, unknown>;
  operationId?: string;
}

const HEX64 = /^[0-9a-f]{64}$/;

/** What the agent is told to do when its view of the page is stale. */
export const discoverAgain = (tabId: number): string => `call webmcp_discover {"tabId": ${tabId}} again`;

/** Resolve (tabId, frameId?, name, descriptorHash, documentId?) against the latest discovery. */
export function resolveDescriptor(req: InvokeRequest, env: FacultyEnv): Result<ToolDescriptor> {
  const again = `Call webmcp_discover {"tabId": ${req.tabId}} again and use a descriptorHash from its answer.`;
  const d = env.discoveries.get(req.tabId);
  if (!d) {
    return err('descriptor-unknown', `There is no current discovery of tab ${req.tabId} (never discovered, or the page navigated or changed its tools since). ${again}`);
  }
  const sameName = d.tools.filter((t) => t.name === req.name && (req.frameId === undefined || t.frameId === req.frameId));
  const exact = sameName.filter((t) => t.descriptorHash === req.descriptorHash);
  if (exact.length === 0) {
    const why = sameName.length
      ? `the tool ${JSON.stringify(req.name)} exists but its descriptor changed (a different descriptorHash)`
      : `no tool named ${JSON.stringify(req.name)}${req.frameId !== undefined ? ` in frame ${req.frameId}` : ''} is in the latest discovery of tab ${req.tabId}`;
    return err('descriptor-unknown', `Unknown or changed descriptor: ${why}. ${again}`);
  }
  let matches = exact;
  if (req.documentId !== undefined) {
    // The agent names the document it discovered in: the call runs there or nowhere.
    matches = exact.filter((t) => t.documentId === req.documentId);
    if (matches.length === 0) {
      const given = typeof req.documentId === 'string' ? JSON.stringify(req.documentId.slice(0, 128)) : 'an invalid documentId';
      return err(
        'navigated',
        `The page moved to a new document since the discovery that gave documentId ${given}; nothing was done. ` +
          `Call webmcp_discover {"tabId": ${req.tabId}} again and use the documentId and descriptorHash from its answer.`,
      );
    }
  }
  if (matches.length > 1) {
    return err('descriptor-ambiguous', `Several frames (${matches.map((t) => t.frameId).join(', ')}) offer this exact descriptor; pass frameId to choose one.`);
  }
  return ok(matches[0] as ToolDescriptor);
}

/** The `webmcp-invoke` faculty. */
export const webmcpInvoke: ActionFaculty<InvokeRequest> = {
  faculty: 'webmcp-invoke',
  operation: 'invoke',
  agentTool: 'webmcp_invoke',
  verb: 'run a page tool',
  initialFields: (req) => ({
    tabId: Number.isSafeInteger(req.tabId) ? req.tabId : null,
    frameId: Number.isSafeInteger(req.frameId) ? (req.frameId as number) : null,
    toolName: typeof req.name === 'string' ? req.name.slice(0, 128) : null,
    descriptorHash: typeof req.descriptorHash === 'string' && HEX64.test(req.descriptorHash) ? req.descriptorHash : null,
  }),
  async resolveSubject(req, env, signal): Promise<Result<ResolvedAction>> {
    const found = resolveDescriptor(req, env);
    if (!found.ok) return found;
    let tool = found.value;
    if (tool.blocked) return err('tool-blocked', `The tool is listed but may not be invoked (${tool.blocked}).`);
    // After a same-document navigation the descriptors stand, but the person must review, and the
    // grant bind, the page as it is now: read where the frame is (docs/broker.md, "Same-document navigation").
    const moved = env.discoveries.hasMoved(tool.tabId, tool.frameId);
    if (moved) {
      const loc = await env.locate(tool.tabId, tool.frameId, tool.documentId, signal);
      if (!loc.ok) {
        if (loc.error.code === 'navigated') {
          return err('navigated', `The page moved to a new document since the discovery; nothing was done. Call webmcp_discover {"tabId": ${req.tabId}} again.`);
        }
        return err(loc.error.code, `Where the page is now could not be read (${loc.error.message}); nothing was done.`);
      }
      const relocated = env.discoveries.relocate(tool.tabId, loc.value)?.tools.find((t) => t.frameId === tool.frameId && t.descriptorHash === tool.descriptorHash && t.name === tool.name);
      if (!relocated) return err('navigated', `The page moved to a new document since the discovery; nothing was done. Call webmcp_discover {"tabId": ${req.tabId}} again.`);
      tool = relocated;
    }
    if (!tool.urlHash || !HEX64.test(tool.urlHash)) {
      // An extension that does not report the URL hash cannot have the URL bound: refuse rather than bind less.
      return err('descriptor-unknown', `The discovery of tab ${req.tabId} did not report the page's URL hash (an outdated extension?); update the extension, then ${discoverAgain(req.tabId)}.`);
    }
    const discovery = env.discoveries.get(req.tabId);
    // A form tool: what will be submitted is every field of the form, not only the arguments (issue 8 item 4).
    let form: FormSubject | undefined;
    if (tool.kind === 'declarative') {
      const read = await env.readForm(tool.tabId, tool.frameId, tool.documentId, tool.name, signal);
      if (!read.ok) {
        if (read.error.code === 'navigated' || read.error.code === 'tool-missing' || read.error.code === 'tool-ambiguous') {
          return err(read.error.code === 'navigated' ? 'navigated' : 'descriptor-unknown', `The form of ${JSON.stringify(tool.name)} could not be read where it was discovered (${read.error.message}); nothing was done. ${discoverAgain(req.tabId)}.`);
        }
        return err(read.error.code, `The form of ${JSON.stringify(tool.name)} could not be read (${read.error.message}), so what it would submit cannot be shown; nothing was done.`);
      }
      form = formSubject(read.value, req.arguments);
    }
    const subjectHash = form ? await formSubjectHash(tool.descriptorHash, formBinding(form)) : tool.descriptorHash;
    return ok({
      target: {
        tabId: tool.tabId,
        frameId: tool.frameId,
        documentId: tool.documentId,
        origin: tool.origin,
        urlHash: tool.urlHash,
        // The tab's URL from the very read the hash covers (each frame reads the top's URL too);
        // for the top frame that is its own URL. An older extension without it: the discovery's.
        tabUrl: tool.tabUrl ?? (tool.frameId === 0 && tool.frameUrl ? tool.frameUrl : stripUrl(discovery?.url ?? '')),
        frameUrl: tool.frameUrl ?? (tool.frameId === 0 && discovery ? stripUrl(discovery.url) : ''),
      },
      subjectHash,
      subjectKey: tool.name,
      subject: {
        type: 'webmcp-tool',
        toolName: tool.name,
        title: tool.title,
        description: tool.description,
        inputSchema: structuredClone(tool.inputSchema),
        ...(tool.annotations ? { annotations: { ...tool.annotations } } : {}),
        descriptorHash: tool.descriptorHash,
        toolKind: tool.kind,
        ...(tool.flags?.length ? { flags: [...tool.flags] } : {}),
        ...(form ? { form: structuredClone(form) } : {}),
      },
      linkSubject: { toolName: tool.name, descriptorHash: tool.descriptorHash, ...(form ? { form: formBinding(form) } : {}) },
      receiptFields: { origin: tool.origin, frameId: tool.frameId, documentId: tool.documentId, toolName: tool.name, descriptorHash: tool.descriptorHash },
      policy: { toolName: tool.name, ...(tool.annotations ? { annotations: tool.annotations } : {}) },
      ...(moved ? { movedSinceLook: true } : {}),
    });
  },
  validate(r, args, env) {
    const subject = r.subject;
    if (subject.type !== 'webmcp-tool') return err('internal', 'not a page tool subject');
    const v = env.validator.validate(subject.descriptorHash, subject.inputSchema, args);
    if (v.ok) return ok({ dialect: v.dialect });
    if (v.code === 'invalid-arguments') return err('invalid-arguments', `${v.message}.`, { issues: v.issues });
    // The message is the console's own words; what quotes the page's schema travels as untrusted text.
    return err('schema-rejected', `The page's inputSchema for this tool cannot be used safely, so the tool cannot be invoked: ${v.message}.`, v.pageText ? { untrustedText: v.pageText } : undefined);
  },
  lookAgain: discoverAgain,
  onStale: (tabId, env) => env.discoveries.forget(tabId),
};

/** A successful `webmcp_invoke`. `result` is UNTRUSTED page text. */
export interface InvokeValue {
  outcome: 'succeeded';
  tabId: number;
  frameId: number;
  documentId: string;
  origin: string;
  toolName: string;
  descriptorHash: string;
  argumentsHash: string;
  result: string | null;
  truncated: boolean;
  redacted: boolean;
  elapsedMs?: number;
  /** The tab's URL, stripped, as the person reviewed it (UNTRUSTED: the page chose it). */
  url: string;
  /** The URL changed in the same document between the agent's discovery and the request (it is now `url`). */
  movedSinceDiscovery: boolean;
  /** The page left after the tool answered, for this URL (stripped; UNTRUSTED). */
  navigatedTo?: string;
  /** New tabs the page opened while the tool ran (not shared; URLs stripped, UNTRUSTED), and how many more were not listed. */
  openedTabs?: Array<{ url: string }>;
  openedTabsOmitted?: number;
  /** `handled-without-answer`: the form's submit handler took the submission itself (preventDefault without respondWith) and gave no answer; `result` is null. */
  note?: 'handled-without-answer';
}

/** The pipeline's success as `webmcp_invoke` answers it: the descriptor's target, name and hashes, and the page's (untrusted) result. */
export function invokeValueOf(v: ActionValue): InvokeValue {
  const t = v.resolved.target;
  const subject = v.resolved.subject;
  // webmcp-invoke resolves only webmcp-tool subjects (resolveSubject above).
  const s = subject.type === 'webmcp-tool' ? subject : { toolName: '', descriptorHash: v.resolved.subjectHash };
  return {
    outcome: 'succeeded',
    tabId: t.tabId,
    frameId: t.frameId,
    documentId: t.documentId,
    origin: t.origin,
    toolName: s.toolName,
    descriptorHash: s.descriptorHash,
    argumentsHash: v.argumentsHash,
    result: v.result,
    truncated: v.truncated,
    redacted: v.redacted,
    ...(v.elapsedMs !== undefined ? { elapsedMs: v.elapsedMs } : {}),
    url: t.tabUrl,
    movedSinceDiscovery: v.resolved.movedSinceLook === true,
    ...(v.navigatedTo !== undefined ? { navigatedTo: v.navigatedTo } : {}),
    ...(v.effects?.openedTabs ? { openedTabs: v.effects.openedTabs } : {}),
    ...(v.effects?.openedTabsOmitted ? { openedTabsOmitted: v.effects.openedTabsOmitted } : {}),
    ...(v.note ? { note: v.note } : {}),
  };
}
