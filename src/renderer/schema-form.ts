/**
 * The tool inspector's form generator (docs/inspector.md, "The invoke form"): a small generator over
 * the JSON Schema kinds Chromium produces for WebMCP tools, instead of a form library. Why not
 * @rjsf/core: its validator (ajv) compiles schemas with `new Function`, which the console's strict
 * Content-Security-Policy forbids (src/main/csp.ts), and the arguments are validated by the console's
 * pipeline with ajv anyway, against the exact reviewed schema, before the person is asked.
 *
 * Kinds: string (text; `format` date, time, email, uri as their inputs; Chromium 156's regular
 * expression in `format` shown as a hint), enum / `anyOf` of `const` (radio for up to 4 options,
 * else a select; titles as labels), number and integer (min, max, step), boolean (checkbox), and
 * an object of these (a fieldset, nested up to MAX_FORM_DEPTH). Anything else (arrays, `$ref`,
 * unions of types) is a JSON text field of its own. The person can always edit the whole
 * arguments as JSON instead.
 *
 * Page text (titles, descriptions, option labels) is UNTRUSTED: the component shows it as text.
 * Pure functions; unit-tested in test/unit/schema-form.test.ts.
 */

/** Fieldsets nest at most this deep; deeper objects are JSON text fields. */
export const MAX_FORM_DEPTH = 4;
/** At most this many fields per object (more are left to the JSON editor). */
export const MAX_FORM_FIELDS = 100;

interface Base {
  /** The property name (page text). */
  key: string;
  /** `a/b/c`: the path of property names from the arguments object (each escaped as JSON Pointer: ~0, ~1). */
  path: string;
  label: string;
  description: string;
  required: boolean;
}

export type FormField =
  | (Base & { kind: 'text'; input: 'text' | 'date' | 'time' | 'email' | 'url' | 'textarea'; hint: string | null; minLength?: number; maxLength?: number })
  | (Base & { kind: 'number'; integer: boolean; min?: number; max?: number; step?: number })
  | (Base & { kind: 'boolean' })
  | (Base & { kind: 'choice'; widget: 'radio' | 'select'; options: Array<{ value: unknown; label: string }> })
  | (Base & { kind: 'object'; fields: FormField[]; omitted: number })
  | (Base & { kind: 'json' });

/** What the generator made of a whole inputSchema. */
export interface FormModel {
  fields: FormField[];
  /** Properties not turned into fields (past MAX_FORM_FIELDS). */
  omitted: number;
  /** The schema is not an object schema with properties: only the JSON editor applies. */
  jsonOnly: boolean;
}

type Schema = Record<string, unknown>;
const isObj = (v: unknown): v is Schema => !!v && typeof v === 'object' && !Array.isArray(v);
const esc = (k: string) => k.replace(/~/g, '~0').replace(/\//g, '~1');
const KNOWN_FORMATS: Record<string, 'date' | 'time' | 'email' | 'url'> = { date: 'date', time: 'time', email: 'email', uri: 'url', url: 'url' };

/** The options of an enum, or of an `anyOf`/`oneOf` of `const` (Chromium's radio groups and selects), with their titles. */
function choices(s: Schema): Array<{ value: unknown; label: string }> | null {
  for (const key of ['anyOf', 'oneOf'] as const) {
    const list = s[key];
    if (Array.isArray(list) && list.length > 0 && list.every((x) => isObj(x) && 'const' in x)) {
      return (list as Schema[]).map((x) => ({ value: x.const, label: typeof x.title === 'string' && x.title ? x.title : JSON.stringify(x.const) }));
    }
  }
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum.map((v) => ({ value: v, label: typeof v === 'string' ? v : JSON.stringify(v) }));
  return null;
}

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

function field(key: string, path: string, s: unknown, required: boolean, depth: number): FormField {
  const base: Base = {
    key,
    path,
    label: isObj(s) && typeof s.title === 'string' && s.title ? s.title : key,
    description: isObj(s) && typeof s.description === 'string' ? s.description : '',
    required,
  };
  if (!isObj(s)) return { ...base, kind: 'json' };
  const options = choices(s);
  if (options) return { ...base, kind: 'choice', widget: options.length <= 4 ? 'radio' : 'select', options };
  if ('$ref' in s) return { ...base, kind: 'json' };
  switch (s.type) {
    case 'string': {
      const format = typeof s.format === 'string' ? s.format : null;
      const input = format && KNOWN_FORMATS[format] ? KNOWN_FORMATS[format] : (num(s.maxLength) ?? 0) > 200 ? 'textarea' : 'text';
      // Chromium 156 writes a regular expression into `format` (docs/browser-facts.md); a `pattern` is one too. Shown, not enforced here.
      const hint = format && !KNOWN_FORMATS[format] ? format : typeof s.pattern === 'string' ? s.pattern : null;
      const out: FormField = { ...base, kind: 'text', input, hint };
      if (num(s.minLength) !== undefined) out.minLength = num(s.minLength);
      if (num(s.maxLength) !== undefined) out.maxLength = num(s.maxLength);
      return out;
    }
    case 'number':
    case 'integer': {
      const out: FormField = { ...base, kind: 'number', integer: s.type === 'integer' || s.multipleOf === 1 };
      if (num(s.minimum) !== undefined) out.min = num(s.minimum);
      if (num(s.maximum) !== undefined) out.max = num(s.maximum);
      if (num(s.multipleOf) !== undefined) out.step = num(s.multipleOf);
      return out;
    }
    case 'boolean':
      return { ...base, kind: 'boolean' };
    case 'object': {
      if (depth >= MAX_FORM_DEPTH || !isObj(s.properties)) return { ...base, kind: 'json' };
      const inner = objectFields(s, path, depth + 1);
      return { ...base, kind: 'object', fields: inner.fields, omitted: inner.omitted };
    }
    default:
      return { ...base, kind: 'json' };
  }
}

function objectFields(s: Schema, path: string, depth: number): { fields: FormField[]; omitted: number } {
  const props = isObj(s.properties) ? s.properties : {};
  const required = new Set(Array.isArray(s.required) ? s.required.filter((x): x is string => typeof x === 'string') : []);
  const keys = Object.keys(props);
  return {
    fields: keys.slice(0, MAX_FORM_FIELDS).map((k) => field(k, path ? `${path}/${esc(k)}` : esc(k), props[k], required.has(k), depth)),
    omitted: Math.max(0, keys.length - MAX_FORM_FIELDS),
  };
}

/** The form for a tool's inputSchema (page data, any shape: never throws). */
export function formModel(schema: unknown): FormModel {
  if (!isObj(schema) || !(schema.type === 'object' || (schema.type === undefined && isObj(schema.properties))) || !isObj(schema.properties)) {
    // `{}` is Chromium's report of a tool without inputSchema: no fields, arguments `{}`.
    return { fields: [], omitted: 0, jsonOnly: !(isObj(schema) && Object.keys(schema).length === 0) };
  }
  const { fields, omitted } = objectFields(schema, '', 1);
  return { fields, omitted, jsonOnly: false };
}

/** What the person entered, by field path: text of text, number, choice (the option's index) and JSON fields; booleans as booleans. */
export type FormValues = Record<string, string | boolean>;

/** One problem with what the person entered, by field path. */
export interface FormProblem {
  path: string;
  message: string;
}

/**
 * The arguments object from the person's entries. Empty optional fields are left out (as a form
 * leaves them out); a required one is a problem. Numbers are parsed (integers checked); a choice
 * gives its option's value with its type; a JSON field is parsed.
 * Bounds and the schema's other rules are the console's to check (ajv, in the pipeline).
 */
export function argumentsOf(fields: readonly FormField[], values: FormValues): { ok: true; value: Record<string, unknown> } | { ok: false; problems: FormProblem[] } {
  const problems: FormProblem[] = [];
  const build = (list: readonly FormField[]): Record<string, unknown> => {
    const out: Record<string, unknown> = {};
    const put = (k: string, v: unknown) => Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
    for (const f of list) {
      const raw = values[f.path];
      const missing = () => {
        if (f.required) problems.push({ path: f.path, message: `${f.label} is required.` });
      };
      switch (f.kind) {
        case 'boolean':
          put(f.key, raw === true);
          break;
        case 'object': {
          const inner = build(f.fields);
          if (Object.keys(inner).length > 0 || f.required) put(f.key, inner);
          break;
        }
        case 'choice': {
          const i = typeof raw === 'string' && raw !== '' ? Number(raw) : NaN;
          const opt = Number.isInteger(i) ? f.options[i] : undefined;
          if (opt) put(f.key, opt.value);
          else missing();
          break;
        }
        case 'number': {
          const t = typeof raw === 'string' ? raw.trim() : '';
          if (t === '') {
            missing();
            break;
          }
          const n = Number(t);
          if (!Number.isFinite(n)) problems.push({ path: f.path, message: `${f.label} must be a number.` });
          else if (f.integer && !Number.isInteger(n)) problems.push({ path: f.path, message: `${f.label} must be a whole number.` });
          else put(f.key, n);
          break;
        }
        case 'json': {
          const t = typeof raw === 'string' ? raw.trim() : '';
          if (t === '') {
            missing();
            break;
          }
          try {
            put(f.key, JSON.parse(t));
          } catch {
            problems.push({ path: f.path, message: `${f.label} is not valid JSON.` });
          }
          break;
        }
        case 'text': {
          const t = typeof raw === 'string' ? raw : '';
          if (t === '') missing();
          else put(f.key, t);
          break;
        }
      }
    }
    return out;
  };
  const value = build(fields);
  return problems.length > 0 ? { ok: false, problems } : { ok: true, value };
}

/**
 * The arguments the person typed as JSON (the "Edit as JSON" mode): must be a JSON object.
 * @returns the object, or why not.
 */
export function argumentsFromJson(text: string): { ok: true; value: Record<string, unknown> } | { ok: false; problems: FormProblem[] } {
  let v: unknown;
  try {
    v = JSON.parse(text.trim() === '' ? '{}' : text);
  } catch (e) {
    return { ok: false, problems: [{ path: '', message: `Not valid JSON: ${e instanceof Error ? e.message : String(e)}` }] };
  }
  if (!isObj(v)) return { ok: false, problems: [{ path: '', message: 'The arguments must be a JSON object ({…}).' }] };
  return { ok: true, value: v };
}
