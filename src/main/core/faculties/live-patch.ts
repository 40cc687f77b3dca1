/**
 * The console side of Live Patch (faculty `live-patch`, operations `patch` and `revert`; issue 11
 * item 1; src/shared/live-patch.ts; docs/live-patch.md).
 *
 *  - patch: the edits go through the ONE allow-list (patchEditsProblem) FIRST, before the page is
 *    asked anything (`patch-forbidden`, naming the edit); then the target is resolved as every
 *    semantic mutation's (`semantic-target`/`resolve`, ./semantic.ts checkResolved: `target-blocked`
 *    before the person is asked). The grant binds the target (subject hash: its fingerprint hash;
 *    the ref travels in the link subject) and the edits (arguments hash). The dialog shows the
 *    target's evidence and picture and every edit in words. The readback: the patch held (the
 *    record read two frames later equals the one read right after applying) → `readback-confirmed`,
 *    then `patched` (patchId, prior- and after-state hashes); the patch is listed as active.
 *  - revert: `{patchIds}` of one document, newest first, from the console's list of active patches
 *    (`patch-unknown` for one it does not list). The page restores; the readback compares each
 *    state with its prior-state hash → `reverted` per patch, or `revert-mismatch` (and the request
 *    fails with that code). Either way the patch is no longer active.
 *  - patches end with the document: a new document in the patch's frame, a tab no longer shared,
 *    drops them from the list (LivePatches.frameNavigated, dropTabs); the page's own record dies
 *    with the document.
 */
import { err, ok, type Result } from '../../../shared/result';
import {
  describeEdit, patchArgumentsProblem, patchEditsProblem, revertSubjectHash, PATCH_BOUNDS, PATCH_ID, type LivePatchInfo, type PatchEdit,
} from '../../../shared/live-patch';
import { fingerprintHash, type FingerprintQuery } from '../../../shared/semantic-target';
import { tabIdFields, type ActionFaculty, type ActionRequestBase, type ActionValue, type ReadbackJudgement, type ResolvedAction } from '../broker/faculty';
import { checkResolved, pictureEvidence, resolveRefusal, snapshotAgain } from './semantic';

const HEX64 = /^[0-9a-f]{64}$/;

/** A patch as the agent asks it: a target (`ref` or `fingerprint`), and `{edits}` in `arguments`. */
export interface PatchRequest extends ActionRequestBase {
  tabId: number;
  ref?: string;
  fingerprint?: FingerprintQuery;
  arguments: Record<string, unknown>;
}

/** A revert as the agent (or the person) asks it: these patches, or every active patch of the tab. */
export interface RevertRequest extends ActionRequestBase {
  tabId: number;
  patchIds?: string[];
  all?: boolean;
}

/**
 * The active Live Patches of the shared tabs, in memory only (a console restart forgets them; the
 * pages keep theirs until their document ends, docs/live-patch.md). Oldest first per tab.
 */
export class LivePatches {
  private readonly byId = new Map<string, LivePatchInfo>();
  private readonly listeners = new Set<(all: LivePatchInfo[]) => void>();

  /** Every active patch (copies), or those of one tab; oldest first. */
  list(tabId?: number): LivePatchInfo[] {
    return [...this.byId.values()].filter((p) => tabId === undefined || p.tabId === tabId).map((p) => structuredClone(p));
  }

  get(patchId: string): LivePatchInfo | undefined {
    const p = this.byId.get(patchId);
    return p ? structuredClone(p) : undefined;
  }

  add(p: LivePatchInfo): void {
    this.byId.set(p.patchId, structuredClone(p));
    this.changed();
  }

  /** Forget these patches (reverted, or gone with their document). */
  remove(patchIds: readonly string[]): void {
    let any = false;
    for (const id of patchIds) any = this.byId.delete(id) || any;
    if (any) this.changed();
  }

  /** A frame holds `documentId` now: the patches of any other document in that frame ended with it. */
  frameNavigated(e: { tabId: number; frameId: number; documentId: string }): void {
    this.remove([...this.byId.values()].filter((p) => p.tabId === e.tabId && p.frameId === e.frameId && p.documentId !== e.documentId).map((p) => p.patchId));
  }

  /** Tabs no longer shared (or closed): their patches are forgotten. */
  dropTabs(tabIds: readonly number[]): void {
    const gone = new Set(tabIds);
    this.remove([...this.byId.values()].filter((p) => gone.has(p.tabId)).map((p) => p.patchId));
  }

  /** Called with every active patch after each change; returns the unsubscribe. */
  onChange(listener: (all: LivePatchInfo[]) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private changed(): void {
    const all = this.list();
    for (const l of this.listeners) {
      try {
        l(all);
      } catch {
        /* a listener's failure is its own */
      }
    }
  }
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The extension's patch result, checked; null when malformed. */
function patchResultOf(v: ActionValue): { patchId: string; priorHash: string; afterHash: string; held: boolean } | null {
  try {
    const x = JSON.parse(v.result ?? 'null') as unknown;
    if (!isObj(x) || x.trustedInput !== false || x.operation !== 'patch' || !isObj(x.readback)) return null;
    if (typeof x.patchId !== 'string' || !PATCH_ID.test(x.patchId)) return null;
    if (typeof x.priorHash !== 'string' || !HEX64.test(x.priorHash) || typeof x.afterHash !== 'string' || !HEX64.test(x.afterHash)) return null;
    return { patchId: x.patchId, priorHash: x.priorHash, afterHash: x.afterHash, held: x.readback.held === true };
  } catch {
    return null;
  }
}

/** The extension's revert readback, checked: one entry per patch in the order asked, or null. */
function revertResultOf(v: ActionValue, ids: readonly string[]): Array<{ patchId: string; priorHash: string; nowHash: string; equal: boolean; pageChanged: boolean; leftAsThePageHasIt: string[] }> | null {
  try {
    const x = JSON.parse(v.result ?? 'null') as unknown;
    if (!isObj(x) || x.trustedInput !== false || x.operation !== 'revert' || !isObj(x.readback) || !Array.isArray(x.readback.reverts)) return null;
    const r = x.readback.reverts as unknown[];
    if (r.length !== ids.length) return null;
    const out = [];
    for (const [i, e] of r.entries()) {
      if (!isObj(e) || e.patchId !== ids[i] || typeof e.priorHash !== 'string' || !HEX64.test(e.priorHash) || typeof e.nowHash !== 'string' || !HEX64.test(e.nowHash)) return null;
      const left = Array.isArray(e.leftAsThePageHasIt) ? e.leftAsThePageHasIt.filter((s): s is string => typeof s === 'string').slice(0, 32).map((s) => s.slice(0, 64)) : [];
      // The console judges equality itself from the two hashes; the page's own `equal` is not taken on its word.
      out.push({ patchId: ids[i] as string, priorHash: e.priorHash, nowHash: e.nowHash, equal: e.nowHash === e.priorHash, pageChanged: e.pageChanged === true, leftAsThePageHasIt: left });
    }
    return out;
  } catch {
    return null;
  }
}

/** The `patch` operation. */
export const livePatchFaculty: ActionFaculty<PatchRequest> = {
  faculty: 'live-patch',
  operation: 'patch',
  agentTool: 'page_patch',
  verb: 'change how an element of the page looks (a Live Patch, reversible)',
  initialFields: tabIdFields,
  async resolveSubject(req, env, signal): Promise<Result<ResolvedAction>> {
    // The allow-list first: a forbidden patch never reaches the page, let alone the person.
    const problem = patchEditsProblem((req.arguments as { edits?: unknown }).edits);
    if (problem !== null) return err('patch-forbidden', `Refused: ${problem.message}. A patch edits only text, title/class/hidden/aria-* attributes, allow-listed styles, our own notes, and hide/show (docs/live-patch.md). Nothing was asked or done.`);
    if ((req.ref === undefined) === (req.fingerprint === undefined)) return err('invalid-arguments', 'Give exactly one of ref (from page_snapshot) or fingerprint.');
    const r = await env.read('semantic-target', 'resolve', req.tabId, req.ref !== undefined ? { ref: req.ref } : { fingerprint: req.fingerprint as FingerprintQuery }, signal);
    if (!r.ok) return resolveRefusal(r.error.code, r.error.message, req.tabId);
    const c = checkResolved(r.value);
    if (!c.ok) return err('bad-answer', `The extension's answer about the target is malformed (${c.message}); nothing was done.`);
    const t = c.value;
    if (t.blocked) return err('target-blocked', `The target is a blocked surface (${t.blocked}): password fields, forms holding one, credential, one-time-code and card fields, private parts and cross-origin frames are never patched. Nothing was asked or done.`);
    if (t.ref === null) return err('bad-answer', "The extension's answer gave the target no ref; nothing was done.");
    const hash = await fingerprintHash(t.fingerprint);
    const edits = (req.arguments as { edits: PatchEdit[] }).edits;
    return ok({
      target: { tabId: req.tabId, frameId: t.frameId, documentId: t.documentId, origin: t.origin, urlHash: t.urlHash, tabUrl: t.tabUrl, frameUrl: t.frameUrl },
      subjectHash: hash,
      subjectKey: hash,
      subject: { type: 'live-patch', operation: 'patch', ref: t.ref, fingerprint: t.fingerprint, fingerprintHash: hash, edits, lines: edits.map(describeEdit), patches: [], trustedInput: false },
      linkSubject: { fingerprint: t.fingerprint, ref: t.ref },
      receiptFields: { origin: t.origin, frameId: t.frameId, documentId: t.documentId },
      policy: {},
    });
  },
  validate(_r, args) {
    const problem = patchArgumentsProblem('patch', args);
    return problem === null ? ok({ edits: (args.edits as unknown[]).length }) : err('patch-forbidden', `page_patch: ${problem}.`);
  },
  lookAgain: snapshotAgain,
  evidence: pictureEvidence,
  readback(v, env): ReadbackJudgement {
    const x = patchResultOf(v);
    const s = v.resolved.subject;
    if (!x || s.type !== 'live-patch' || s.ref === null || s.fingerprint === null) {
      return { event: 'readback-mismatch', detail: { reason: 'malformed-readback' }, message: 'The patch was dispatched, but its answer could not be read; inspect the page (page_snapshot) before retrying.' };
    }
    const t = v.resolved.target;
    env.patches.add({
      patchId: x.patchId, tabId: t.tabId, frameId: t.frameId, documentId: t.documentId, origin: t.origin, url: t.frameUrl,
      target: { ref: s.ref, role: s.fingerprint.role, name: s.fingerprint.name, fingerprintHash: s.fingerprintHash ?? '' },
      edits: s.edits, priorHash: x.priorHash, afterHash: x.afterHash, appliedAt: Date.now(), held: x.held,
    });
    const patched = { patchId: x.patchId, priorHash: x.priorHash, afterHash: x.afterHash, edits: s.edits.length, held: x.held };
    if (x.held) return { event: 'readback-confirmed', detail: { effect: 'patch-held', patchId: x.patchId, afterHash: x.afterHash }, message: '', also: [{ event: 'patched', detail: patched }] };
    return {
      event: 'readback-mismatch',
      detail: { expected: 'the page to hold the patch', patchId: x.patchId, afterHash: x.afterHash },
      also: [{ event: 'patched', detail: patched }],
      message: `The patch was applied, but the page changed the element again at once (the readback did not find the patched state). It is still recorded as patch ${x.patchId}: revert it with page_revert, and inspect the page (page_snapshot).`,
    };
  },
};

/** The `revert` operation (the agent's page_revert, and the person's Revert in the console). */
export const revertFaculty: ActionFaculty<RevertRequest> = {
  faculty: 'live-patch',
  operation: 'revert',
  agentTool: 'page_revert',
  verb: 'revert Live Patches of the page (put it back as it was)',
  initialFields: tabIdFields,
  async resolveSubject(req, env, signal): Promise<Result<ResolvedAction>> {
    const active = env.patches.list(req.tabId);
    let chosen: LivePatchInfo[];
    if (req.all === true) {
      if (req.patchIds !== undefined) return err('invalid-arguments', 'Give patchIds or all, not both.');
      if (active.length === 0) return err('patch-unknown', `Tab ${req.tabId} has no active Live Patch; nothing was done.`);
      // One document per revert: the newest patch's (a tab's patches are nearly always in its top document).
      const doc = active[active.length - 1] as LivePatchInfo;
      chosen = active.filter((p) => p.frameId === doc.frameId && p.documentId === doc.documentId);
    } else {
      const ids = Array.isArray(req.patchIds) ? req.patchIds : [];
      if (ids.length < 1 || ids.length > PATCH_BOUNDS.revertIds) return err('invalid-arguments', `Give 1 to ${PATCH_BOUNDS.revertIds} patchIds, or all: true.`);
      chosen = [];
      for (const id of ids) {
        const p = active.find((x) => x.patchId === id);
        if (!p) return err('patch-unknown', `Patch ${JSON.stringify(String(id).slice(0, 64))} is not active in tab ${req.tabId} (reverted already, never applied, or its document ended); nothing was done.`);
        if (chosen.some((c) => c.patchId === p.patchId)) return err('invalid-arguments', 'A patch is listed twice.');
        chosen.push(p);
      }
      const first = chosen[0] as LivePatchInfo;
      if (chosen.some((p) => p.frameId !== first.frameId || p.documentId !== first.documentId)) return err('invalid-arguments', 'These patches are in different documents: revert the patches of one document at a time.');
    }
    // Newest first, as the page reverts them.
    chosen.sort((a, b) => b.appliedAt - a.appliedAt);
    const first = chosen[0] as LivePatchInfo;
    const loc = await env.locate(req.tabId, first.frameId, first.documentId, signal);
    if (!loc.ok) {
      if (loc.error.code === 'navigated') {
        env.patches.remove(chosen.map((p) => p.patchId));
        return err('patch-unknown', 'The document these patches were applied to is gone: patches end with their document, so there is nothing to revert.');
      }
      return err(loc.error.code, `The patched document could not be reached (${loc.error.message}); nothing was done.`);
    }
    const ids = chosen.map((p) => p.patchId);
    const hash = await revertSubjectHash(ids);
    return ok({
      target: { tabId: req.tabId, frameId: first.frameId, documentId: first.documentId, origin: first.origin, urlHash: loc.value.urlHash, tabUrl: loc.value.tabUrl, frameUrl: loc.value.frameUrl },
      subjectHash: hash,
      subjectKey: hash,
      subject: { type: 'live-patch', operation: 'revert', ref: null, fingerprint: null, fingerprintHash: null, edits: [], lines: chosen.map((p) => `revert patch ${p.patchId} (${p.edits.length} edit${p.edits.length === 1 ? '' : 's'} on ${p.target.role} ${JSON.stringify(p.target.name)})`), patches: chosen, trustedInput: false },
      linkSubject: { patchIds: ids },
      receiptFields: { origin: first.origin, frameId: first.frameId, documentId: first.documentId },
      policy: {},
    });
  },
  validate(_r, args) {
    const problem = patchArgumentsProblem('revert', args);
    return problem === null ? ok({}) : err('invalid-arguments', `page_revert: ${problem}.`);
  },
  lookAgain: snapshotAgain,
  onStale(_tabId, _env) {
    /* the list is kept current by the navigation events (LivePatches.frameNavigated) */
  },
  readback(v, env): ReadbackJudgement {
    const s = v.resolved.subject;
    const ids = s.type === 'live-patch' ? s.patches.map((p) => p.patchId) : [];
    // Whatever came back, these patches are no longer active in the page (it restored what it could).
    env.patches.remove(ids);
    const r = revertResultOf(v, ids);
    if (!r) return { event: 'readback-mismatch', failCode: 'revert-mismatch', detail: { reason: 'malformed-readback' }, message: 'The revert was dispatched, but its readback could not be read: the page may not be as it was. Inspect it (page_snapshot).' };
    const also = r.map((x) => ({ event: x.equal ? ('reverted' as const) : ('revert-mismatch' as const), detail: x }));
    const bad = r.filter((x) => !x.equal);
    if (bad.length === 0) return { event: 'readback-confirmed', detail: { effect: `reverted:${r.length}` }, message: '', also };
    return {
      event: 'readback-mismatch',
      failCode: 'revert-mismatch',
      detail: { expected: 'each patched element equal to its prior-state hash', mismatched: bad.map((x) => x.patchId) },
      also,
      message:
        `The revert ran, but ${bad.length === 1 ? 'patch' : 'patches'} ${bad.map((x) => x.patchId).join(', ')} did not come back equal to the prior state: the page changed what the patch touched meanwhile` +
        ` (left as the page has it: ${[...new Set(bad.flatMap((x) => x.leftAsThePageHasIt))].join(', ') || 'around the element'}). Nothing of the page's own change was overwritten. Inspect the page (page_snapshot).`,
    };
  },
};
