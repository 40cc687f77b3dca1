/**
 * Faculty `semantic` (dispatch), operations click, hover, focus, scroll (issue 10
 * items 1, 3, 4, 5, 6; docs/semantic-controls.md): one semantic mutation under
 * a one-use grant.
 *  - subject: `{fingerprint, ref}` (the console always binds the target's ref, even
 *    when the agent gave a fingerprint: the dispatch acts on that element only,
 *    identity plus fingerprint); its subject hash is the fingerprint hash
 *    (src/shared/semantic-target.ts `fingerprintHash`), so the grant binds the
 *    described element the person reviewed; the grant's `operation` binds the
 *    operation (a hover grant presented as a click is `grant-invalid`, by the
 *    generic checks of lib/grant-checks.ts);
 *  - arguments: `{}`, and `{text}` for type (src/shared/semantic-target.ts semanticArgumentsProblem;
 *    the grant binds them by the arguments hash);
 *    operation `key` (page_key): `{key}` with key in ALLOWED_KEYS
 *    (src/shared/semantic-key.ts), bound by the grant's arguments hash (a Tab grant
 *    presented with Enter is `arguments-mismatch`), and subject
 *    `{fingerprint, ref, focused: true}`: the element of the ref must still hold the focus;
 *  - own checks, after the generic ones: in that very document the target is
 *    found again (the ref's element with the same fingerprint, or the one element
 *    with it: else `target-changed`; `ref-stale`), is not blocked
 *    (`target-blocked`) and is not owned by a declarative WebMCP tool listed now
 *    (`narrower-capability-available`);
 *  - page-side runner: `echo:semantic:act` does all of that again in the task
 *    that acts, then actionability and the hit test (`not-actionable`,
 *    `target-covered`), starts the readback's watch and fires the synthetic
 *    events; then a SEPARATE message, `echo:semantic:readback`, re-finds the
 *    target by fingerprint and reports what changed (or the frame's new
 *    document). The result (JSON) is src/shared/semantic-target.ts
 *    SemanticActResult less the verdict, which the console judges itself.
 */
import { err, ok, type Result } from '../../../../src/shared/result';
import {
  fingerprintHash, isFingerprint, isSemanticOperation, SEMANTIC_OPERATIONS, semanticArgumentsProblem, targetChangedWords, type Fingerprint, type ReadbackObservations, type SemanticOperation,
} from '../../../../src/shared/semantic-target';
import { REF_PATTERN } from '../../../../src/shared/snapshot';
import { fillArgumentsProblem, fillSubjectHash, fillSubjectProblem, type FillTarget } from '../../../../src/shared/semantic-fill';
import type { DispatchTarget } from '../../../../src/shared/protocol';
import type { AllowedKey } from '../../../../src/shared/semantic-key';
import type { RefusalCode } from '../../../../src/shared/types';
import { stripUrl } from '../../../../src/shared/url';
import type { PageUrlsValue } from '../../lib/messages';
import type { ExecuteValue } from '../../lib/messages';
import type { TargetReport, ToSemanticAction } from '../../lib/semantic-messages';
import { frameDocument, injectInto } from '../tabs';
import type { DispatchFaculty } from './registry';
import { SEMANTIC_MODULE } from './semantic-read';
import { askSemantic } from './semantic-target';

/** What the check hands to the runner: one target, or (operation fill) every field. */
export type SemanticPrepared = { fingerprint: Fingerprint; ref?: string; fingerprintHash: string } | { fill: FillTarget[] };

/** The content module's refusal codes and what they are here. */
const REFUSALS: Readonly<Record<string, RefusalCode>> = {
  'target-changed': 'target-changed',
  'ref-stale': 'ref-stale',
  'ref-unknown': 'target-changed',
  'target-blocked': 'target-blocked',
  'narrower-capability-available': 'narrower-capability-available',
  'not-actionable': 'not-actionable',
  'target-covered': 'target-covered',
};

const subjectOf = (s: Record<string, unknown>) => ({ fingerprint: s.fingerprint as Fingerprint, ref: s.ref as string | undefined, focused: s.focused === true });

type CheckOne = { ok: true } | { ok: false; refusal: RefusalCode; message: string };

/**
 * One target found again in that very document: the ref's element (or the one element) with that fingerprint, not blocked, no narrower tool.
 * Also Live Patch's check (./live-patch.ts).
 * `focused` (page_key): the ref's element must also be the one holding the focus now.
 */
export async function checkOne(target: DispatchTarget, fingerprint: Fingerprint, ref: string | undefined, focused = false): Promise<CheckOne> {
  const msg: ToSemanticAction = ref !== undefined ? { type: 'echo:semantic:target', ref, ...(focused ? { focused: true as const } : {}) } : { type: 'echo:semantic:target', query: fingerprint };
  const a = await askSemantic<TargetReport>(target.tabId, target, msg);
  if (!a) return { ok: false, refusal: 'navigated', message: 'the document does not answer' };
  if (!a.ok) return { ok: false, refusal: REFUSALS[a.error.code] ?? 'target-changed', message: 'the target could not be found again' };
  if (a.value.kind !== 'targets') return { ok: false, refusal: 'navigated', message: 'the ref is not of this document' };
  const m = a.value.matches;
  const same = m.length === 1 && a.value.total === 1 && (await fingerprintHash(m[0]!.fingerprint).catch(() => '')) === (await fingerprintHash(fingerprint));
  if (!same) {
    // Which fields differ, in fixed words (the agent learns whether the row changed or the element did).
    const what = m.length === 1 && a.value.total === 1 ? targetChangedWords(fingerprint, m[0]!.fingerprint) : '';
    return { ok: false, refusal: 'target-changed', message: what ? `the target no longer has the approved fingerprint; changed: ${what}` : 'the target no longer has the approved fingerprint' };
  }
  if (m[0]!.blocked) return { ok: false, refusal: 'target-blocked', message: `the target is a blocked surface (${m[0]!.blocked})` };
  if (m[0]!.narrower) return { ok: false, refusal: 'narrower-capability-available', message: m[0]!.narrower };
  return { ok: true };
}

/** Observations when the document gave no readback: nothing found; a new document only when one was read. */
async function noReadback(target: DispatchTarget): Promise<ReadbackObservations> {
  const now = await frameDocument(target.tabId, target.frameId).catch(() => null);
  return { found: false, urlChanged: false, documentChanged: documentChangedAfter(now, target.documentId), focused: false, focusMoved: false, editable: false, stateChanged: [], domChangesNear: 0, inViewport: false };
}

/** The readback's wait for the page (ms). */
const READBACK_TIMEOUT_MS = 5_000;

/**
 * Whether the frame holds another document than `documentId` after an action whose readback got no
 * answer: only a document actually read and different counts. A failed look-up (`now` null) is
 * unknown, never a new document, so it cannot confirm a click (review finding 9).
 */
export function documentChangedAfter(now: { documentId: string } | null | undefined, documentId: string): boolean {
  return !!now && typeof now.documentId === 'string' && now.documentId !== documentId;
}

/** Run a fill (src/shared/semantic-fill.ts) in the target document, then its readback (a separate message, each field re-found by fingerprint). */
async function executeFill(target: DispatchTarget, requestId: string, fields: FillTarget[], values: string[], urls: PageUrlsValue): Promise<Result<ExecuteValue>> {
  const msg: ToSemanticAction = { type: 'echo:semantic:fill', requestId, urls, fields: fields.map((f, i) => ({ ref: f.ref, fingerprint: f.fingerprint, text: values[i] as string })) };
  const done = (await chrome.tabs.sendMessage(target.tabId, msg, { frameId: target.frameId, documentId: target.documentId })) as Result<{ done: true }> | undefined;
  if (!done || !done.ok) return (done ?? err('content-error', 'no answer')) as Result<ExecuteValue>;
  const rb = await askSemantic<ReadbackObservations[]>(target.tabId, target, { type: 'echo:semantic:fill-readback', requestId, fingerprints: fields.map((f) => f.fingerprint) }, READBACK_TIMEOUT_MS);
  const observations = rb && rb.ok && Array.isArray(rb.value) ? rb.value : await Promise.all(fields.map(() => noReadback(target)));
  const result = {
    operation: 'fill',
    evidence: { frameId: target.frameId, documentId: target.documentId, url: stripUrl(urls.frame), fields: await Promise.all(fields.map(async (f) => ({ role: f.fingerprint.role, name: f.fingerprint.name, fingerprintHash: await fingerprintHash(f.fingerprint) }))) },
    trustedInput: false,
    readback: { observations },
  };
  return ok({ result: JSON.stringify(result) } as ExecuteValue);
}

/** The exact tab and frame URLs read now by the `semantic` content module in the target document (injected when it is not there yet); null: unreachable. */
export async function semanticPageUrls(target: DispatchTarget): Promise<PageUrlsValue | null> {
  let a = await askSemantic<PageUrlsValue>(target.tabId, target, { type: 'echo:semantic:urls' });
  if (a === null && (await injectInto(target.tabId, [target.documentId], SEMANTIC_MODULE)).has(target.documentId)) {
    a = await askSemantic<PageUrlsValue>(target.tabId, target, { type: 'echo:semantic:urls' });
  }
  return a && a.ok && typeof a.value.tab === 'string' && typeof a.value.frame === 'string' ? { tab: a.value.tab, frame: a.value.frame } : null;
}

/** The semantic faculty. */
export function semantic(): DispatchFaculty<SemanticPrepared> {
  return {
    id: 'semantic',
    kind: 'dispatch',
    operations: [...SEMANTIC_OPERATIONS, 'fill'],
    contentModule: SEMANTIC_MODULE,
    checkRequest(operation, subject, args) {
      if (operation === 'fill') {
        const problem = fillSubjectProblem(subject);
        return problem ?? fillArgumentsProblem(args ?? {}, (subject.fields as unknown[]).length);
      }
      if (!isSemanticOperation(operation)) return 'unknown operation';
      const keys = Object.keys(subject ?? {});
      const key = operation === 'key';
      // The ref is required: without it the dispatch would act on whichever element has the fingerprint then.
      // A key's subject says `focused: true` (its element must hold the focus); no other operation's does.
      const allowed = key ? ['fingerprint', 'ref', 'focused'] : ['fingerprint', 'ref'];
      if (keys.length !== allowed.length || !allowed.every((k) => keys.includes(k))) return `subject must be {${allowed.join(', ')}}`;
      if (key && subject.focused !== true) return 'subject.focused must be true';
      if (!isFingerprint(subject.fingerprint)) return 'subject.fingerprint is not a fingerprint';
      if (typeof subject.ref !== 'string' || !REF_PATTERN.test(subject.ref)) return 'subject.ref is not a ref';
      return semanticArgumentsProblem(operation as SemanticOperation, args ?? {});
    },
    // A fill's subject (`{fields}`, checkRequest made sure it goes with operation fill) hashes all its fields.
    subjectHash: async (subject) => (Array.isArray(subject.fields) ? fillSubjectHash((subject.fields as FillTarget[]).map((f) => f.fingerprint)) : fingerprintHash(subjectOf(subject).fingerprint)),
    async check(target, subject) {
      if (Array.isArray(subject.fields)) {
        const fields = subject.fields as FillTarget[];
        for (const [i, f] of fields.entries()) {
          const c = await checkOne(target, f.fingerprint, f.ref);
          if (!c.ok) return { ok: false, refusal: c.refusal, message: `field ${i + 1}: ${c.message}` };
        }
        return { ok: true, prepared: { fill: fields.map((f) => ({ fingerprint: f.fingerprint, ref: f.ref })) } };
      }
      const s = subjectOf(subject);
      const c = await checkOne(target, s.fingerprint, s.ref, s.focused);
      if (!c.ok) return c;
      return { ok: true, prepared: { fingerprint: s.fingerprint, ...(s.ref !== undefined ? { ref: s.ref } : {}), fingerprintHash: await fingerprintHash(s.fingerprint) } };
    },
    pageUrls: semanticPageUrls,
    async execute(target, m) {
      const p = m.prepared;
      if ('fill' in p) return executeFill(target, m.requestId, p.fill, (m.args as { values: string[] }).values, m.urls);
      const text = m.operation === 'type' ? (m.args as { text?: unknown }).text : undefined;
      const act: ToSemanticAction = {
        type: 'echo:semantic:act', requestId: m.requestId, operation: m.operation as SemanticOperation, fingerprint: p.fingerprint, urls: m.urls,
        ...(p.ref !== undefined ? { ref: p.ref } : {}), ...(typeof text === 'string' ? { text } : {}), ...(m.operation === 'key' ? { key: m.args.key as AllowedKey } : {}),
      };
      const done = (await chrome.tabs.sendMessage(target.tabId, act, { frameId: target.frameId, documentId: target.documentId })) as Result<{ done: true }> | undefined;
      if (!done || !done.ok) return (done ?? err('content-error', 'no answer')) as Result<ExecuteValue>;
      // The readback: a separate message, which re-finds the target by its fingerprint.
      const rb = await askSemantic<ReadbackObservations>(target.tabId, target, { type: 'echo:semantic:readback', requestId: m.requestId, fingerprint: p.fingerprint }, READBACK_TIMEOUT_MS);
      // No answer from that document: did the frame get another document (the click navigated)?
      const observations: ReadbackObservations = rb && rb.ok ? rb.value : await noReadback(target);
      const result = {
        operation: m.operation,
        evidence: { role: p.fingerprint.role, name: p.fingerprint.name, fingerprintHash: p.fingerprintHash, frameId: target.frameId, documentId: target.documentId, url: stripUrl(m.urls.frame) },
        trustedInput: false,
        readback: { observations },
      };
      return ok({ result: JSON.stringify(result) } as ExecuteValue);
    },
    abort() {
      /* a semantic action is one synchronous run of events: nothing to abort once it began */
    },
    refusalFor: (code) => (Object.prototype.hasOwnProperty.call(REFUSALS, code) ? (REFUSALS[code] as RefusalCode) : null),
    // target-blocked: the content script's fixed words with the reason ("field 2 is a blocked surface (password)"),
    // kept in the receipt so the person reads why; the console does not show it to the agent (not page-worded).
    refusalText: (code, message) => (code === 'target-covered' || code === 'narrower-capability-available' || code === 'not-actionable' || code === 'target-blocked' ? message.slice(0, 512) : null),
  };
}
