/**
 * The console side of faculty `semantic` (issue 10 items 1, 4, 5, 6; rung 3 of
 * the capability ladder, semantic controls; docs/semantic-controls.md): click,
 * hover, focus and scroll on one element of a shared tab, by a ref from
 * page_snapshot or by a (partial) fingerprint.
 *
 *  - resolveSubject asks the extension (`semantic-target`/`resolve`) for the
 *    target in that tab: its frame, document, exact-URL hash and full
 *    fingerprint. A blocked surface is refused `target-blocked`, a target whose
 *    form is a declarative WebMCP tool listed now `narrower-capability-available`
 *    (naming the tool), both before the person is asked. The subject hash the
 *    grant binds is the fingerprint hash (src/shared/semantic-target.ts); the
 *    link subject carries the target's ref too (even when the agent gave a
 *    fingerprint), so the dispatch acts on that element only (identity plus
 *    fingerprint) — a new element with the same description is `target-changed`.
 *  - key (page_key): the target is the element focused now, resolved by the extension
 *    (`resolve {focused: true}`), with the same blocked, ladder and binding rules; its
 *    link subject says `focused: true`, so the dispatch requires that element to still
 *    hold the focus. Its one argument `{key}` (src/shared/semantic-key.ts) is bound by
 *    the grant's arguments hash.
 *  - validate: click, hover, focus and scroll take no arguments; type takes `{text}`, key `{key}`
 *    (src/shared/semantic-target.ts semanticArgumentsProblem), bound by the grant's arguments hash;
 *    type's target must have a typable role (TYPABLE_ROLES), checked before the person is asked.
 *  - readback: the console judges the extension's observations itself
 *    (`judgeReadback`): `readback-confirmed`, or `readback-mismatch` and the
 *    request fails; success only after a confirmed readback.
 * The extension's half is extension/src/background/faculties/semantic.ts and semantic-target.ts.
 */
import { err, ok, type Result } from '../../../shared/result';
import {
  fingerprintHash, fingerprintProblem, isReadbackObservations, judgeReadback, semanticArgumentsProblem, TYPABLE_ROLES, type Fingerprint, type FingerprintQuery,
  type ReadbackObservations, type ResolvedTarget, type SemanticOperation, type TargetEvidence,
} from '../../../shared/semantic-target';
import { MAX_URL_CHARS } from '../../../shared/url';
import { keyArgumentsProblem } from '../../../shared/semantic-key';
import type { ApprovalSubject } from '../../../shared/ipc';
import { tabIdFields, type ActionFaculty, type ActionRequestBase, type ActionValue, type FacultyEnv, type ResolvedAction } from '../broker/faculty';
import { takeTargetPicture } from './semantic-picture';

/** A semantic mutation as the agent asks it: `ref` or `fingerprint`, never both. */
export interface SemanticRequest extends ActionRequestBase {
  tabId: number;
  ref?: string;
  fingerprint?: FingerprintQuery;
  /** `{}` (what click, hover, focus and scroll act on is the subject), or `{text}` for type. */
  arguments: Record<string, unknown>;
}

const HEX64 = /^[0-9a-f]{64}$/;
const BLOCKED = new Set(['password', 'password-form', 'credential-field', 'private', 'cross-origin-frame']);

/** What the agent is told to do when its view of the page is stale. */
export const snapshotAgain = (tabId: number): string => `call page_snapshot {"tabId": ${tabId}} again and use a ref from its answer`;

/** The extension's `resolve` answer checked field by field (it crossed the link), or why it is malformed. */
export function checkResolved(v: unknown): { ok: true; value: ResolvedTarget } | { ok: false; message: string } {
  const t = v as Partial<ResolvedTarget> | null;
  if (!t || typeof t !== 'object') return { ok: false, message: 'not an object' };
  if (!Number.isSafeInteger(t.frameId) || (t.frameId as number) < 0) return { ok: false, message: 'frameId' };
  for (const k of ['documentId', 'origin', 'tabUrl', 'frameUrl'] as const) if (typeof t[k] !== 'string' || (t[k] as string).length > MAX_URL_CHARS) return { ok: false, message: k };
  if (typeof t.urlHash !== 'string' || !HEX64.test(t.urlHash)) return { ok: false, message: 'urlHash' };
  if (t.ref !== null && (typeof t.ref !== 'string' || t.ref.length > 16)) return { ok: false, message: 'ref' };
  const fp = fingerprintProblem(t.fingerprint);
  if (fp !== null) return { ok: false, message: fp };
  if (t.blocked !== null && !BLOCKED.has(t.blocked as string)) return { ok: false, message: 'blocked' };
  if (t.narrower !== null && (typeof t.narrower !== 'string' || t.narrower.length > 128)) return { ok: false, message: 'narrower' };
  return { ok: true, value: t as ResolvedTarget };
}

const VERBS: Record<SemanticOperation, string> = {
  click: 'click an element of the page',
  hover: 'hover over an element of the page',
  focus: 'focus an element of the page',
  scroll: 'scroll an element of the page into view',
  type: 'type into a field of the page',
  key: 'press a key on the focused element of the page',
};

/** Refusals of `resolve` the agent can act on, with what to do next. */
export function resolveRefusal(code: string, message: string, tabId: number): Result<never> {
  switch (code) {
    case 'ref-stale':
    case 'ref-unknown':
    case 'navigated':
      return err(code, `${message}. Nothing was done; ${snapshotAgain(tabId)}.`);
    case 'target-missing':
    case 'target-ambiguous':
    case 'target-unsupported':
      return err(code, `${message}. Nothing was done.`);
    default:
      return err(code, `The target could not be found (${message}); nothing was done.`);
  }
}

/** How resolveActionTarget words its refusals: who the target is to the agent, the tool, and whether it must take a typed value. */
export interface TargetWords {
  /** "The target", "The focused element", "Field 2", …: the subject of the refusal's sentence. */
  who: string;
  /** The agent tool asking (`page_click`, `page_fill`, …). */
  tool: string;
  /** The target must have a role that takes a typed value (TYPABLE_ROLES): type and fill. */
  typable: boolean;
  /** Prefixed to the resolve's own refusals (`Field 2: …`); none for a single target. */
  label?: string;
}

/**
 * Resolve one target of a semantic action in the shared tab (`semantic-target`/`resolve`) and refuse,
 * before the person is asked, what may not be acted on: the resolve's refusals (resolveRefusal), a
 * malformed answer (`bad-answer`), a blocked surface (`target-blocked`), a target owned by a WebMCP
 * tool listed now (`narrower-capability-available`, naming it), a role that takes no typed value when
 * one is needed (`target-unsupported`), and an answer with no ref (the grant binds the element).
 * Shared by semanticFaculty and page_fill (./semantic-fill.ts), per field.
 */
export async function resolveActionTarget(
  env: FacultyEnv,
  tabId: number,
  args: Record<string, unknown>,
  w: TargetWords,
  signal?: AbortSignal,
): Promise<Result<ResolvedTarget & { ref: string }>> {
  const r = await env.read('semantic-target', 'resolve', tabId, args, signal);
  if (!r.ok) {
    const e = resolveRefusal(r.error.code, r.error.message, tabId);
    return w.label === undefined || e.ok ? e : err(e.error.code, `${w.label}: ${e.error.message}`);
  }
  const c = checkResolved(r.value);
  if (!c.ok) return err('bad-answer', `${w.label ?? w.who}: the extension's answer about it is malformed (${c.message}); nothing was done.`);
  const t = c.value;
  if (t.blocked) {
    return err('target-blocked', `${w.who} is a blocked surface (${t.blocked}): password fields, forms holding one, credential, one-time-code and card fields, private parts and cross-origin frames are never acted on. Nothing was asked or done.`);
  }
  if (t.narrower) {
    return err('narrower-capability-available', `${w.who} belongs to a form that the page offers as the WebMCP tool ${JSON.stringify(t.narrower)}: use it (webmcp_discover, then webmcp_invoke) instead of ${w.tool}. Nothing was asked or done.`);
  }
  if (w.typable && !TYPABLE_ROLES.has(t.fingerprint.role)) {
    return err('target-unsupported', `${w.who} is a ${t.fingerprint.role}, which takes no typed value: ${w.tool} sets text fields, number fields, selects and contenteditable elements (use page_click for checkboxes, radios and buttons). Nothing was asked or done.`);
  }
  // The grant binds the element the person reviewed: its ref (identity) beside its fingerprint, so the
  // dispatch acts on that element only, never on another that has the same description by then.
  if (t.ref === null) return err('bad-answer', `${w.label ?? w.who}: the extension's answer gave it no ref; nothing was done.`);
  return ok(t as ResolvedTarget & { ref: string });
}

/** The `semantic` faculty for one operation. */
export function semanticFaculty(operation: SemanticOperation): ActionFaculty<SemanticRequest> {
  return {
    faculty: 'semantic',
    operation,
    agentTool: `page_${operation}`,
    verb: VERBS[operation],
    initialFields: tabIdFields,
    async resolveSubject(req, env, signal): Promise<Result<ResolvedAction>> {
      const key = operation === 'key';
      if (key ? req.ref !== undefined || req.fingerprint !== undefined : (req.ref === undefined) === (req.fingerprint === undefined)) {
        return err('invalid-arguments', key ? 'page_key acts on the focused element: give no ref or fingerprint (focus one first with page_focus).' : 'Give exactly one of ref (from page_snapshot) or fingerprint.');
      }
      const args = key ? { focused: true } : req.ref !== undefined ? { ref: req.ref } : { fingerprint: req.fingerprint as FingerprintQuery };
      const found = await resolveActionTarget(env, req.tabId, args, { who: key ? 'The focused element' : 'The target', tool: `page_${operation}`, typable: operation === 'type' }, signal);
      if (!found.ok) return found;
      const t = found.value;
      const hash = await fingerprintHash(t.fingerprint);
      return ok({
        target: { tabId: req.tabId, frameId: t.frameId, documentId: t.documentId, origin: t.origin, urlHash: t.urlHash, tabUrl: t.tabUrl, frameUrl: t.frameUrl },
        subjectHash: hash,
        subjectKey: hash,
        subject: { type: 'semantic-target', operation, ref: t.ref, fingerprint: t.fingerprint, fingerprintHash: hash, trustedInput: false },
        linkSubject: { fingerprint: t.fingerprint, ref: t.ref, ...(key ? { focused: true } : {}) },
        receiptFields: { origin: t.origin, frameId: t.frameId, documentId: t.documentId },
        policy: {},
      });
    },
    validate(_r, args) {
      const problem = semanticArgumentsProblem(operation, args);
      if (problem !== null) return err('invalid-arguments', `page_${operation}: ${problem}.`);
      if (operation === 'key') return ok({ key: args.key });
      return ok({});
    },
    lookAgain: snapshotAgain,
    readback: (v) => readbackOf(operation, v),
    evidence: pictureEvidence,
  };
}

/**
 * The target's picture, taken when the person is about to be asked (./semantic-picture.ts): the
 * subject with it, and the `approval-shown` receipt's `picture` (its SHA-256 and size, or why none).
 * A fill's picture is of its first field (the form around it shows in the crop's margin); a Live Patch's
 * is of its target as it is BEFORE the patch (nothing touches the page before approval).
 */
export async function pictureEvidence(r: ResolvedAction, env: FacultyEnv, signal?: AbortSignal): Promise<{ subject: ApprovalSubject; detail: Record<string, unknown> }> {
  const s = r.subject;
  const ref = s.type === 'semantic-target' || s.type === 'live-patch' ? s.ref : s.type === 'semantic-fill' ? (s.fields[0]?.ref ?? null) : null;
  if (ref === null || (s.type !== 'semantic-target' && s.type !== 'semantic-fill' && s.type !== 'live-patch')) return { subject: s, detail: {} };
  const picture = await takeTargetPicture(env, r.target.tabId, { ref, frameId: r.target.frameId, documentId: r.target.documentId }, signal);
  return { subject: { ...s, picture }, detail: { picture } };
}

/** The extension's result of a semantic dispatch, checked: the observations, or null when malformed. */
function observationsOf(v: ActionValue): ReadbackObservations | null {
  try {
    const x = JSON.parse(v.result ?? 'null') as { readback?: { observations?: unknown }; trustedInput?: unknown };
    const o = x?.readback?.observations;
    return x.trustedInput === false && isReadbackObservations(o) ? o : null;
  } catch {
    return null;
  }
}

/** The console's judgement of the readback (src/shared/semantic-target.ts judgeReadback); a page that left counts as a new document. */
export function readbackOf(operation: SemanticOperation, v: ActionValue): { event: 'readback-confirmed' | 'readback-mismatch'; detail: Record<string, unknown>; message: string } {
  const o = observationsOf(v);
  if (!o) return { event: 'readback-mismatch', detail: { reason: 'malformed-readback' }, message: 'The action was dispatched, but its readback could not be read; inspect the page (page_snapshot) before retrying.' };
  const seen: ReadbackObservations = { ...o, documentChanged: o.documentChanged || v.navigatedTo !== undefined };
  const verdict = judgeReadback(operation, seen);
  if (verdict.confirmed) return { event: 'readback-confirmed', detail: { effect: verdict.effect, observations: seen }, message: '' };
  return {
    event: 'readback-mismatch',
    detail: { expected: verdict.expected, observations: seen },
    message: `The ${operation} was dispatched (synthetic events, trustedInput false), but the readback did not see its effect: expected ${verdict.expected}. Inspect the page (page_snapshot) before retrying.`,
  };
}

/** A successful semantic mutation as the agent tools answer it. Page text (evidence.name, url) is UNTRUSTED. */
export interface SemanticValue {
  outcome: 'succeeded';
  operation: SemanticOperation;
  tabId: number;
  origin: string;
  ref: string | null;
  evidence: TargetEvidence;
  trustedInput: false;
  /** What the readback confirmed (e.g. `state-changed:checked`, `focused`, `url-changed`). */
  effect: string;
  /** Operation `key`: the default action the extension performed (src/shared/semantic-key.ts KeyDefault). */
  keyDefault?: string;
  elapsedMs?: number;
  /** The page left after the action, for this URL (stripped; UNTRUSTED). */
  navigatedTo?: string;
}

/** The pipeline's success (after a confirmed readback) as the semantic tools answer it. */
export function semanticValueOf(v: ActionValue): SemanticValue {
  const t = v.resolved.target;
  const s = v.resolved.subject;
  const fp: Fingerprint | null = s.type === 'semantic-target' ? s.fingerprint : null;
  const operation = s.type === 'semantic-target' ? s.operation : 'click';
  const rb = readbackOf(operation, v);
  return {
    outcome: 'succeeded',
    operation,
    tabId: t.tabId,
    origin: t.origin,
    ref: s.type === 'semantic-target' ? s.ref : null,
    evidence: { role: fp?.role ?? '', name: fp?.name ?? '', fingerprintHash: v.resolved.subjectHash, frameId: t.frameId, documentId: t.documentId, url: t.frameUrl },
    trustedInput: false,
    effect: typeof rb.detail.effect === 'string' ? rb.detail.effect : 'unknown',
    ...((rb.detail.observations as ReadbackObservations | undefined)?.key ? { keyDefault: (rb.detail.observations as ReadbackObservations).key!.default } : {}),
    ...(v.elapsedMs !== undefined ? { elapsedMs: v.elapsedMs } : {}),
    ...(v.navigatedTo !== undefined ? { navigatedTo: v.navigatedTo } : {}),
  };
}
