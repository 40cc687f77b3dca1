/**
 * The console side of `page_fill` (faculty `semantic`, operation `fill`; issue 10 item 6, "One
 * approval for a form fill"; src/shared/semantic-fill.ts; docs/semantic-controls.md, "Type and
 * fill"): several fields of one form set by ONE reviewed action, each as page_type sets it.
 *
 *  - resolveSubject resolves every field as the single-target tools do (`semantic-target`/`resolve`,
 *    ./semantic.ts checkResolved): each must be found, not blocked (`target-blocked`), not in a form
 *    that is a WebMCP tool listed now (`narrower-capability-available`), of a role that takes a value
 *    (`target-unsupported`); all in ONE document and ONE form (their fingerprints' `form` equal:
 *    the same form name, or all outside any form; the extension checks the very form element again
 *    right before it sets anything), each field once. Refused before the person is asked.
 *  - the grant binds every field (the subject hash over their fingerprint hashes, in order) and
 *    every value (the arguments hash of `{values}`).
 *  - the readback: every re-found field must hold its value (judgeReadback `type` per field);
 *    otherwise `readback-mismatch` naming the fields that do not. Submission stays a separate click.
 */
import { err, ok, type Result } from '../../../shared/result';
import { fillArgumentsProblem, fillSubjectHash, FILL_MAX_FIELDS } from '../../../shared/semantic-fill';
import { fingerprintHash, isReadbackObservations, judgeReadback, type FingerprintQuery, type ReadbackObservations, type ResolvedTarget } from '../../../shared/semantic-target';
import { tabIdFields, type ActionFaculty, type ActionRequestBase, type ActionValue, type ResolvedAction } from '../broker/faculty';
import { pictureEvidence, resolveActionTarget, snapshotAgain } from './semantic';

/** A fill as the agent asks it: the fields (each a ref or a fingerprint) and, in `arguments`, their values in the same order. */
export interface SemanticFillRequest extends ActionRequestBase {
  tabId: number;
  fields: Array<{ ref?: string; fingerprint?: FingerprintQuery }>;
  /** `{values: string[]}`, one per field. */
  arguments: Record<string, unknown>;
}

const fieldWord = (i: number, n: number) => (n === 1 ? 'The field' : `Field ${i + 1}`);

/** The extension's observations per field, checked; null when malformed. */
function fieldObservations(v: ActionValue, count: number): ReadbackObservations[] | null {
  try {
    const x = JSON.parse(v.result ?? 'null') as { readback?: { observations?: unknown }; trustedInput?: unknown };
    const o = x?.readback?.observations;
    return x.trustedInput === false && Array.isArray(o) && o.length === count && o.every(isReadbackObservations) ? (o as ReadbackObservations[]) : null;
  } catch {
    return null;
  }
}

/** The console's judgement of a fill's readback: confirmed when every re-found field holds its value. */
export function fillReadbackOf(v: ActionValue): { event: 'readback-confirmed' | 'readback-mismatch'; detail: Record<string, unknown>; message: string } {
  const s = v.resolved.subject;
  const count = s.type === 'semantic-fill' ? s.fields.length : 0;
  const o = fieldObservations(v, count);
  if (!o) return { event: 'readback-mismatch', detail: { reason: 'malformed-readback' }, message: 'The fill was dispatched, but its readback could not be read; inspect the page (page_snapshot) before retrying.' };
  const missed = o.map((x, i) => ({ i, verdict: judgeReadback('type', x) })).filter((x) => !x.verdict.confirmed).map((x) => x.i + 1);
  if (missed.length === 0) return { event: 'readback-confirmed', detail: { effect: `values-set:${count}`, observations: o }, message: '' };
  return {
    event: 'readback-mismatch',
    detail: { expected: 'every field to hold its value', fieldsNotHolding: missed, observations: o },
    message: `The fill was dispatched (synthetic events, trustedInput false), but the readback did not find the value set in field${missed.length === 1 ? '' : 's'} ${missed.join(', ')} (the page may have rewritten or refused it). Inspect the page (page_snapshot) before retrying.`,
  };
}

/** The `fill` operation of faculty `semantic`. */
export function semanticFillFaculty(): ActionFaculty<SemanticFillRequest> {
  return {
    faculty: 'semantic',
    operation: 'fill',
    agentTool: 'page_fill',
    verb: 'fill several fields of a form of the page',
    initialFields: tabIdFields,
    async resolveSubject(req, env, signal): Promise<Result<ResolvedAction>> {
      const fields = Array.isArray(req.fields) ? req.fields : [];
      if (fields.length < 1 || fields.length > FILL_MAX_FIELDS) return err('invalid-arguments', `Give 1 to ${FILL_MAX_FIELDS} fields.`);
      const values = Array.isArray((req.arguments as { values?: unknown }).values) ? ((req.arguments as { values: unknown[] }).values) : [];
      const found: ResolvedTarget[] = [];
      for (const [i, f] of fields.entries()) {
        const which = fieldWord(i, fields.length);
        if ((f.ref === undefined) === (f.fingerprint === undefined)) return err('invalid-arguments', `${which}: give exactly one of ref (from page_snapshot) or fingerprint.`);
        const one = await resolveActionTarget(env, req.tabId, f.ref !== undefined ? { ref: f.ref } : { fingerprint: f.fingerprint as FingerprintQuery }, { who: which, tool: 'page_fill', typable: true, label: which }, signal);
        if (!one.ok) return one;
        const t = one.value;
        const first = found[0];
        if (first && (t.frameId !== first.frameId || t.documentId !== first.documentId)) return err('invalid-arguments', `${which} is in another document than field 1: page_fill sets the fields of one form of one document. Nothing was asked or done.`);
        if (first && t.fingerprint.form !== first.fingerprint.form) return err('invalid-arguments', `${which} is in another form than field 1: page_fill sets the fields of one form (fill each form on its own). Nothing was asked or done.`);
        if (found.some((x) => x.ref === t.ref)) return err('invalid-arguments', `${which} is a field listed before: give each field once. Nothing was asked or done.`);
        found.push(t);
      }
      const t0 = found[0] as ResolvedTarget;
      const hash = await fillSubjectHash(found.map((t) => t.fingerprint));
      const subjectFields = await Promise.all(
        found.map(async (t, i) => ({ ref: t.ref as string, fingerprint: t.fingerprint, fingerprintHash: await fingerprintHash(t.fingerprint), text: typeof values[i] === 'string' ? (values[i] as string) : '' })),
      );
      return ok({
        target: { tabId: req.tabId, frameId: t0.frameId, documentId: t0.documentId, origin: t0.origin, urlHash: t0.urlHash, tabUrl: t0.tabUrl, frameUrl: t0.frameUrl },
        subjectHash: hash,
        subjectKey: hash,
        subject: { type: 'semantic-fill', operation: 'fill', formName: t0.fingerprint.form ?? null, fields: subjectFields, trustedInput: false },
        linkSubject: { fields: found.map((t) => ({ fingerprint: t.fingerprint, ref: t.ref })) },
        receiptFields: { origin: t0.origin, frameId: t0.frameId, documentId: t0.documentId },
        policy: {},
      });
    },
    validate(r, args) {
      const count = Array.isArray(r.linkSubject.fields) ? r.linkSubject.fields.length : 0;
      const problem = fillArgumentsProblem(args, count);
      return problem === null ? ok({ fields: count }) : err('invalid-arguments', `page_fill: ${problem}.`);
    },
    lookAgain: snapshotAgain,
    readback: fillReadbackOf,
    evidence: pictureEvidence,
  };
}
