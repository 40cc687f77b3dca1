/**
 * Faculty `live-patch` (dispatch), operations `patch` and `revert` (issue 11 item 1;
 * src/shared/live-patch.ts; docs/live-patch.md): a declared, reversible edit of one element of a
 * shared page, under a one-use grant, in the `semantic` content module's isolated world (its refs).
 *  - patch: subject `{fingerprint, ref}` (as every semantic mutation: subject hash = fingerprint
 *    hash, the grant binds the element); arguments `{edits}`, checked here by the ONE allow-list
 *    (patchEditsProblem) before anything, and bound by the arguments hash. The check finds the target
 *    again (semantic.ts checkOne: `target-changed`, `ref-stale`, `target-blocked`); the page applies
 *    the patch (lib/live-patch.ts) and answers its prior- and after-state hashes; a SEPARATE readback
 *    message says whether it held.
 *  - revert: subject `{patchIds}` (newest first; subject hash revertSubjectHash), arguments `{}`;
 *    the page restores and a separate readback compares each state with its prior-state hash.
 * The result (JSON) is judged by the console (src/main/core/faculties/live-patch.ts).
 */
import { err, ok, type Result } from '../../../../src/shared/result';
import { fingerprintHash, isFingerprint, type Fingerprint } from '../../../../src/shared/semantic-target';
import { REF_PATTERN } from '../../../../src/shared/snapshot';
import { patchArgumentsProblem, revertSubjectHash, revertSubjectProblem, type PatchEdit } from '../../../../src/shared/live-patch';
import type { RefusalCode } from '../../../../src/shared/types';
import { stripUrl } from '../../../../src/shared/url';
import type { ExecuteValue } from '../../lib/messages';
import type { PatchApplied, PatchReadback, RevertReadback, ToLivePatch } from '../../lib/live-patch-messages';
import type { DispatchFaculty } from './registry';
import { SEMANTIC_MODULE } from './semantic-read';
import { askSemantic } from './semantic-target';
import { checkOne, semanticPageUrls } from './semantic';

/** What the check hands to the runner. */
export type LivePatchPrepared = { patch: { fingerprint: Fingerprint; ref: string } } | { revert: string[] };

/** The content module's codes and what they are here. */
const REFUSALS: Readonly<Record<string, RefusalCode>> = {
  'target-changed': 'target-changed',
  'ref-stale': 'ref-stale',
  'ref-unknown': 'target-changed',
  'target-blocked': 'target-blocked',
  'not-actionable': 'not-actionable',
  'patch-forbidden': 'patch-forbidden',
  'patch-unknown': 'patch-unknown',
  'patch-stacked': 'patch-stacked',
};

/** The readback's wait for the page (ms). */
const READBACK_TIMEOUT_MS = 5_000;

const send = (target: { tabId: number; frameId: number; documentId: string }, msg: ToLivePatch) =>
  chrome.tabs.sendMessage(target.tabId, msg, { frameId: target.frameId, documentId: target.documentId }) as Promise<Result<unknown> | undefined>;

/** The `live-patch` faculty. */
export function livePatch(): DispatchFaculty<LivePatchPrepared> {
  return {
    id: 'live-patch',
    kind: 'dispatch',
    operations: ['patch', 'revert'],
    contentModule: SEMANTIC_MODULE,
    checkRequest(operation, subject, args) {
      if (operation === 'revert') return revertSubjectProblem(subject) ?? patchArgumentsProblem('revert', args ?? {});
      if (operation !== 'patch') return 'unknown operation';
      const keys = Object.keys(subject ?? {});
      if (keys.length !== 2 || !keys.includes('fingerprint') || !keys.includes('ref')) return 'subject must be {fingerprint, ref}';
      if (!isFingerprint(subject.fingerprint)) return 'subject.fingerprint is not a fingerprint';
      if (typeof subject.ref !== 'string' || !REF_PATTERN.test(subject.ref)) return 'subject.ref is not a ref';
      return patchArgumentsProblem('patch', args ?? {});
    },
    // checkRequest made sure the subject goes with its operation.
    subjectHash: async (subject) => (Array.isArray(subject.patchIds) ? revertSubjectHash(subject.patchIds as string[]) : fingerprintHash(subject.fingerprint as Fingerprint)),
    async check(target, subject) {
      if (Array.isArray(subject.patchIds)) return { ok: true, prepared: { revert: [...(subject.patchIds as string[])] } };
      const fingerprint = subject.fingerprint as Fingerprint;
      const ref = subject.ref as string;
      const c = await checkOne(target, fingerprint, ref);
      if (!c.ok) return c;
      return { ok: true, prepared: { patch: { fingerprint, ref } } };
    },
    pageUrls: semanticPageUrls,
    async execute(target, m): Promise<Result<ExecuteValue>> {
      const p = m.prepared;
      if ('revert' in p) {
        const done = await send(target, { type: 'echo:patch:revert', patchIds: p.revert, urls: m.urls });
        if (!done || !done.ok) return (done ?? err('content-error', 'no answer')) as Result<ExecuteValue>;
        const rb = await askSemantic<RevertReadback[]>(target.tabId, target, { type: 'echo:patch:revert-readback', patchIds: p.revert }, READBACK_TIMEOUT_MS);
        const result = { operation: 'revert', trustedInput: false, readback: rb && rb.ok && Array.isArray(rb.value) ? { reverts: rb.value } : { reverts: null } };
        return ok({ result: JSON.stringify(result) } as ExecuteValue);
      }
      const edits = (m.args as { edits: PatchEdit[] }).edits;
      const applied = (await send(target, { type: 'echo:patch:apply', patchId: m.requestId, ref: p.patch.ref, fingerprint: p.patch.fingerprint, edits, urls: m.urls })) as Result<PatchApplied> | undefined;
      if (!applied || !applied.ok) return (applied ?? err('content-error', 'no answer')) as Result<ExecuteValue>;
      const rb = await askSemantic<PatchReadback>(target.tabId, target, { type: 'echo:patch:readback', patchId: m.requestId }, READBACK_TIMEOUT_MS);
      const result = {
        operation: 'patch',
        patchId: applied.value.patchId,
        priorHash: applied.value.priorHash,
        afterHash: applied.value.afterHash,
        evidence: { role: p.patch.fingerprint.role, name: p.patch.fingerprint.name, fingerprintHash: await fingerprintHash(p.patch.fingerprint), frameId: target.frameId, documentId: target.documentId, url: stripUrl(m.urls.frame) },
        trustedInput: false,
        readback: rb && rb.ok ? { held: rb.value.held === true, nowHash: rb.value.nowHash } : { held: false, nowHash: null },
      };
      return ok({ result: JSON.stringify(result) } as ExecuteValue);
    },
    abort() {
      /* a patch is one synchronous run in the page: nothing to abort once it began */
    },
    refusalFor: (code) => (Object.prototype.hasOwnProperty.call(REFUSALS, code) ? (REFUSALS[code] as RefusalCode) : null),
    refusalText: (code, message) => (code === 'patch-forbidden' || code === 'not-actionable' || code === 'patch-stacked' || code === 'patch-unknown' || code === 'target-blocked' ? message.slice(0, 512) : null),
  };
}
