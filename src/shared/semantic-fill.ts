/**
 * The shared contract of `page_fill` (faculty `semantic`, operation `fill`; issue 10 item 6,
 * "One approval for a form fill"; docs/semantic-controls.md, "Type and fill"): several fields of
 * one form set by ONE reviewed action, each field as `type` sets it (extension/src/lib/semantic-type.ts).
 * Submitting stays a separate click.
 *
 *  - link subject: `{fields: [{fingerprint, ref}, …]}` (1 to FILL_MAX_FIELDS, distinct refs);
 *  - arguments: `{values: [string, …]}`, one per field in the same order, each at most
 *    TYPE_TEXT_MAX units and FILL_TEXT_TOTAL_MAX in all; bound by the grant's arguments hash;
 *  - subject hash (`fillSubjectHash`): SHA-256 of the canonical JSON `{"fill": [h1, h2, …]}` of the
 *    fields' fingerprint hashes in order, so the grant binds every field and their order, and can
 *    never equal one field's own fingerprint hash (a click's or type's subject hash).
 */
import { canonicalJson, sha256Hex, type Sha256, webCryptoSha256 } from './canonical';
import { fingerprintHash, fingerprintProblem, TYPE_TEXT_MAX, type Fingerprint } from './semantic-target';
import { REF_PATTERN } from './snapshot';

/** Most fields one fill sets (a long checkout form has about twenty). */
export const FILL_MAX_FIELDS = 32;
/** Most text one fill sets in all (UTF-16 units). */
export const FILL_TEXT_TOTAL_MAX = 64_000;

/** One field of a fill as the link carries it: its fingerprint and the ref the grant binds. */
export interface FillTarget {
  fingerprint: Fingerprint;
  ref: string;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Why `subject` is not a fill's link subject (`{fields: FillTarget[]}`, 1..FILL_MAX_FIELDS, distinct refs), or null. */
export function fillSubjectProblem(subject: unknown): string | null {
  if (!isObj(subject) || Object.keys(subject).length !== 1 || !Array.isArray(subject.fields)) return 'subject must be {fields}';
  const fields = subject.fields as unknown[];
  if (fields.length < 1 || fields.length > FILL_MAX_FIELDS) return `fields must list 1 to ${FILL_MAX_FIELDS} fields`;
  const refs = new Set<string>();
  for (const f of fields) {
    if (!isObj(f) || Object.keys(f).length !== 2 || typeof f.ref !== 'string' || !REF_PATTERN.test(f.ref)) return 'each field must be {fingerprint, ref}';
    const p = fingerprintProblem(f.fingerprint);
    if (p !== null) return p;
    if (refs.has(f.ref)) return 'a field is listed twice';
    refs.add(f.ref);
  }
  return null;
}

/** Why `args` are not a fill's arguments for `count` fields (`{values}`, strings, within bounds), or null. */
export function fillArgumentsProblem(args: unknown, count: number): string | null {
  if (!isObj(args) || Object.keys(args).length !== 1 || !Array.isArray(args.values)) return 'fill takes exactly {values}';
  const values = args.values as unknown[];
  if (values.length !== count) return `values must give one text per field (${count})`;
  let total = 0;
  for (const v of values) {
    if (typeof v !== 'string' || v.length > TYPE_TEXT_MAX) return `each value must be a string of at most ${TYPE_TEXT_MAX} characters`;
    total += v.length;
  }
  return total > FILL_TEXT_TOTAL_MAX ? `the values hold more than ${FILL_TEXT_TOTAL_MAX} characters in all` : null;
}

/**
 * The subject hash of a fill: SHA-256 (lowercase hex) of canonical JSON `{"fill": [fingerprintHash…]}`.
 * @throws Error when a fingerprint is malformed.
 */
export async function fillSubjectHash(fingerprints: readonly Fingerprint[], sha256: Sha256 = webCryptoSha256): Promise<string> {
  const hashes = await Promise.all(fingerprints.map((f) => fingerprintHash(f, sha256)));
  return sha256Hex(canonicalJson({ fill: hashes }), sha256);
}
