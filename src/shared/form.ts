/**
 * The form subject of a declarative WebMCP tool (`<form toolname>`): what the
 * person approves is what will actually be submitted (docs/design.md, trust
 * rules; issue 8 item 4).
 *
 * Chromium 156's `executeTool` on a declarative tool fills only the fields the
 * agent named; every other field keeps the value it had, from the page or an
 * earlier call (docs/browser-facts.md, "WebMCP: declarative forms"). So the
 * subject shows and binds the *effective* values: the agent's arguments
 * merged over what the form holds now for every other field, plus where the
 * form submits (action, method) and whether approving submits it
 * (`toolautosubmit`).
 *
 * One copy, used by the extension (which reads the form in the very document,
 * at resolve time and again in the task that calls `executeTool`) and by the
 * console (which shows it and hashes it into the subject hash the grant binds).
 * Pure, platform-neutral.
 */
import { canonicalJson, sha256Hex, type Sha256, webCryptoSha256 } from './canonical';

/** At most this many submitted fields are read; a bigger form is refused (`form-too-large`). */
export const MAX_FORM_FIELDS = 128;
/** At most this many UTF-16 code units per field value; a longer one is refused (`form-too-large`): binding a cut value would bind less than is sent. */
export const MAX_FORM_VALUE_CHARS = 4096;

/**
 * What a file input contributes, shown and bound in place of the file (its
 * bytes and name are never read): `[file: N bytes]`, or `[no file]` for an
 * empty file input. Password fields never get here: a form holding one is
 * blocked (`tool-blocked`).
 */
export function fileToken(size: number | null): string {
  return size === null ? '[no file]' : `[file: ${size} bytes]`;
}

/**
 * A form as the extension read it in its document. `fields` is what
 * `new FormData(form)` gives now, grouped by name in document order (a name
 * submitted several times, e.g. checkboxes or a multiple select, has several
 * values; an unchecked checkbox is absent, as it is from the submission).
 */
export interface FormSnapshot {
  /** The form's action URL, stripped for display (src/shared/url.ts stripUrl). */
  action: string;
  /** SHA-256 hex of the exact `form.action` (what is bound; the exact URL is never sent to the console). */
  actionHash: string;
  /** `form.method`: `get`, `post` or `dialog`. */
  method: string;
  /** Whether the form has `toolautosubmit` (approving submits it) or not (approving fills it; the person presses the page's button). */
  autosubmit: boolean;
  /** name → submitted values. */
  fields: Record<string, string[]>;
}

/** One effective value: the agent's argument as given, or what the form holds for a field the agent did not give. */
export interface EffectiveValue {
  name: string;
  /** The agent's argument (any JSON) or the form's submitted value(s) (string, or string[] for a repeated name). */
  value: unknown;
  /** `agent`: from the arguments; `form`: kept from the page or an earlier call. */
  from: 'agent' | 'form';
}

/** What the approval shows and the subject hash binds for a form tool. */
export interface FormSubject {
  action: string;
  actionHash: string;
  method: string;
  autosubmit: boolean;
  /** Every field that will be submitted, in the form's order, then arguments that name no field of it. */
  values: EffectiveValue[];
}

/**
 * The effective values: every field of the form (document order), the agent's
 * argument where it gave one, else what the form holds now; then arguments
 * naming no submitted field (e.g. an unchecked checkbox the agent checks).
 */
export function effectiveValues(fields: Record<string, string[]>, args: Record<string, unknown>): EffectiveValue[] {
  const out: EffectiveValue[] = [];
  const own = (o: object, k: string) => Object.prototype.hasOwnProperty.call(o, k);
  for (const name of Object.keys(fields)) {
    if (own(args, name)) out.push({ name, value: args[name], from: 'agent' });
    else {
      const v = fields[name] ?? [];
      out.push({ name, value: v.length === 1 ? v[0] : v, from: 'form' });
    }
  }
  for (const name of Object.keys(args)) if (!own(fields, name)) out.push({ name, value: args[name], from: 'agent' });
  return out;
}

/** The form subject of `snapshot` filled with `args`. */
export function formSubject(snapshot: FormSnapshot, args: Record<string, unknown>): FormSubject {
  return { action: snapshot.action, actionHash: snapshot.actionHash, method: snapshot.method, autosubmit: snapshot.autosubmit, values: effectiveValues(snapshot.fields, args) };
}

/**
 * What is bound of a form subject (the display-only stripped action left out,
 * its exact hash kept). The extension compares the form it reads right before
 * `executeTool` with exactly this.
 */
export function formBinding(f: FormSubject): FormBinding {
  return { actionHash: f.actionHash, method: f.method, autosubmit: f.autosubmit, values: f.values };
}

/** The bound part of a FormSubject: what the extension receives and compares with the form right before `executeTool`. */
export interface FormBinding {
  actionHash: string;
  method: string;
  autosubmit: boolean;
  values: EffectiveValue[];
}

/**
 * The subject hash a grant binds for a declarative tool: SHA-256 of the
 * canonical JSON of `{descriptorHash, form: formBinding(form)}`. An imperative
 * tool's subject hash stays its descriptorHash.
 */
export async function formSubjectHash(descriptorHash: string, form: FormBinding, sha256: Sha256 = webCryptoSha256): Promise<string> {
  return sha256Hex(canonicalJson({ descriptorHash, form: formBinding(form as FormSubject) }), sha256);
}

/** Whether `v` has the shape of a FormBinding (the worker checks a dispatch's subject with it). */
export function isFormBinding(v: unknown): v is FormBinding {
  const b = v as FormBinding;
  if (!b || typeof b !== 'object' || Object.keys(b).length !== 4) return false;
  if (typeof b.actionHash !== 'string' || !/^[0-9a-f]{64}$/.test(b.actionHash) || typeof b.method !== 'string' || typeof b.autosubmit !== 'boolean') return false;
  return Array.isArray(b.values) && b.values.length <= 2 * MAX_FORM_FIELDS && b.values.every((x) => x && typeof x === 'object' && typeof x.name === 'string' && (x.from === 'agent' || x.from === 'form'));
}

/** Whether `v` has the shape of a FormSnapshot within the limits above (a hostile page answers through the extension). */
export function isFormSnapshot(v: unknown): v is FormSnapshot {
  const s = v as FormSnapshot;
  if (!s || typeof s !== 'object') return false;
  if (typeof s.action !== 'string' || s.action.length > 2048 || typeof s.actionHash !== 'string' || !/^[0-9a-f]{64}$/.test(s.actionHash)) return false;
  if (typeof s.method !== 'string' || s.method.length > 16 || typeof s.autosubmit !== 'boolean') return false;
  if (!s.fields || typeof s.fields !== 'object' || Array.isArray(s.fields)) return false;
  const names = Object.keys(s.fields);
  if (names.length > MAX_FORM_FIELDS) return false;
  return names.every((n) => n.length <= 256 && Array.isArray(s.fields[n]) && (s.fields[n] as unknown[]).every((x) => typeof x === 'string' && x.length <= MAX_FORM_VALUE_CHARS));
}
