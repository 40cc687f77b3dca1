/**
 * Argument validation against a page tool's reviewed `inputSchema` (docs/design.md,
 * "Trust rules": the browser does not validate arguments, docs/browser-facts.md,
 * "WebMCP: running tools").
 *
 * The schema comes from a page and is hostile until proven otherwise:
 *  - size and depth are checked before ajv sees it (LIMITS.maxSchemaBytes,
 *    LIMITS.maxSchemaDepth): a deep schema could exhaust the stack of the
 *    compiler, a huge one its memory;
 *  - each schema is compiled by a fresh Ajv instance, so `$id`s of one page
 *    cannot collide with or poison another's, and nothing accumulates;
 *  - compiling and validating run under a wall-clock budget (node:vm timeout),
 *    so a catastrophic `pattern` (ReDoS, e.g. `^(a+)+$`) interrupts instead of
 *    freezing the console;
 *  - every ajv compile error (a `$ref` to nowhere, an unknown keyword, a
 *    wrong `$schema`) is a refusal, never a crash; no schema is ever fetched
 *    (no `loadSchema`);
 *  - `format`: the formats ajv-formats knows are checked (email, date, time,
 *    uri, …). Any other `format` is an annotation (JSON Schema 2020-12
 *    Validation §7.2: an unknown format must not fail validation), except a
 *    value Chromium writes itself: for `<input type=time|datetime-local|month|
 *    week|color>` in a declarative tool, Chromium 156 puts a regular
 *    expression in `format` (docs/browser-facts.md, "WebMCP: declarative
 *    tools"). A format that starts with `^`, ends with `$` and compiles as a
 *    `u`-flag RegExp is enforced as that pattern, under the same budget as
 *    `pattern` (`regexFormat`).
 * `schemaProblem` answers the same compile's verdict without arguments, so a
 * discovery can mark a tool unusable before any call (broker/index.ts).
 * Compiled validators are cached by `descriptorHash` (the hash covers the
 * schema), bounded LRU.
 *
 * Dialect: JSON Schema 2020-12 (Ajv2020), the default dialect of MCP tool
 * schemas, unless the schema's `$schema` names draft-07 (what zod-to-json-schema
 * emits) or 2019-09; any other `$schema` is refused. Ajv strict mode is on (unknown keywords and ignored
 * constructs are errors; unknown formats are registered first, as above) except two sub-rules that only judge schema style and
 * would refuse harmless page schemas: `strictTypes` (e.g. `properties` without
 * `type: "object"`; arguments are always an object anyway) and `strictRequired`
 * (a required name without a `properties` entry is still enforced).
 */
import vm from 'node:vm';
import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { LIMITS, jsonDepth, utf8Bytes } from '../../../shared/limits';

/**
 * One failing argument path. `message` is ajv's, and quotes the page's schema
 * (a `pattern`, a required property's name, a `format`): page text, which the
 * agent only ever sees inside an untrusted block (src/main/core/agent/answers.ts).
 */
export interface ArgumentIssue {
  /** JSON Pointer into the arguments ("" for the root), from ajv's `instancePath`. */
  instancePath: string;
  message: string;
}

/**
 * Why a page's schema cannot be used. `message` is the console's own words and
 * never quotes the schema; `pageText` is the part that does (ajv's compile error
 * naming an unknown keyword or property, the declared `$schema` value), which
 * reaches the agent only inside an untrusted block (issue 8 item 5: page text
 * in error messages stays inside the block like all other page text).
 */
export interface SchemaProblem {
  message: string;
  pageText?: string;
}

/** The JSON Schema dialects accepted for page schemas. */
export type Dialect = 'draft-2020-12' | 'draft-2019-09' | 'draft-07';

export type ValidationOutcome =
  | { ok: true; dialect: Dialect }
  | { ok: false; code: 'invalid-arguments'; message: string; issues: ArgumentIssue[] }
  | ({ ok: false; code: 'schema-rejected' } & SchemaProblem);

type Compiled = { ok: true; validate: ValidateFunction; dialect: Dialect } | ({ ok: false } & SchemaProblem);

/** The dialect a schema declares with `$schema` (absent: 2020-12), or null when unsupported. */
export function schemaDialect(schema: object): Dialect | null {
  const declared = (schema as { $schema?: unknown }).$schema;
  if (declared === undefined) return 'draft-2020-12';
  if (typeof declared !== 'string') return null;
  const id = declared.replace(/^https?:\/\//, '').replace(/#$/, '');
  if (id === 'json-schema.org/draft/2020-12/schema') return 'draft-2020-12';
  if (id === 'json-schema.org/draft/2019-09/schema') return 'draft-2019-09';
  if (id === 'json-schema.org/draft-07/schema') return 'draft-07';
  return null;
}

export interface ValidatorOptions {
  /** Validators kept in the LRU cache (default 256). */
  maxCached?: number;
  /** Wall-clock budget for one compile or one validation (ms, default 250). */
  budgetMs?: number;
  /** Failing paths reported to the agent (default 20). */
  maxIssues?: number;
}

// One compiled script and one context, reused: a fresh context per call cost
// about 0.5 ms on every agent call (measured), for nothing the budget needs.
const BUDGET_SCRIPT = new vm.Script('try { box.out = box.fn(); } catch (e) { box.failed = true; box.error = e; }');
const budgetContext = vm.createContext({ box: null as unknown });

/**
 * Run `fn` with a budget of `budgetMs` ms of wall-clock time; V8 interrupts even
 * a backtracking RegExp (vm `timeout`). Not re-entrant (callers are synchronous).
 *
 * The budget is there to stop a hostile schema, which spends it all on the CPU.
 * A busy machine can also run out the clock with little work done (the thread
 * was not scheduled), which would refuse a good schema: so when an attempt timed
 * out having used less than half its budget of the process's CPU time
 * (`process.cpuUsage`, every thread counted, so a doubt counts as work), it is
 * tried again, at most `MAX_BUDGET_ATTEMPTS` times in all. A schema that really
 * is slow costs at most that many budgets.
 * @returns the value; or `timedOut` (the budget ran out) or the error `fn` threw.
 */
export function withBudget<T>(fn: () => T, budgetMs: number): { ok: true; value: T } | { ok: false; timedOut: boolean; error: unknown } {
  for (let attempt = 1; ; attempt++) {
    const box: { fn: () => T; out?: T; error?: unknown; failed: boolean } = { fn, failed: false };
    budgetContext.box = box;
    const cpuBefore = process.cpuUsage();
    try {
      BUDGET_SCRIPT.runInContext(budgetContext, { timeout: budgetMs });
    } catch (e) {
      // Only the watchdog throws out of the script itself.
      const cpu = process.cpuUsage(cpuBefore);
      const cpuMs = (cpu.user + cpu.system) / 1000;
      if (attempt < MAX_BUDGET_ATTEMPTS && cpuMs < budgetMs / 2) continue;
      return { ok: false, timedOut: true, error: e };
    } finally {
      budgetContext.box = null;
    }
    return box.failed ? { ok: false, timedOut: false, error: box.error } : { ok: true, value: box.out as T };
  }
}

/** Attempts `withBudget` makes when the clock, not the work, ran out (see there). */
export const MAX_BUDGET_ATTEMPTS = 3;

/**
 * Compiles and caches validators; validates argument objects.
 * Never throws: every problem is a `ValidationOutcome`.
 */
export class ArgumentValidator {
  private readonly cache = new Map<string, Compiled>();
  private readonly maxCached: number;
  private readonly budgetMs: number;
  private readonly maxIssues: number;

  constructor(opts: ValidatorOptions = {}) {
    this.maxCached = opts.maxCached ?? 256;
    this.budgetMs = opts.budgetMs ?? 250;
    this.maxIssues = opts.maxIssues ?? 20;
  }

  /** Number of cached validators (for tests of the bound). */
  get size(): number {
    return this.cache.size;
  }

  /**
   * Validate `args` against `schema`, compiling (or reusing, keyed by
   * `descriptorHash`) a validator.
   * @returns ok, or `invalid-arguments` with failing paths (`issues`, whose
   *   messages quote the schema; `message` is the console's own words), or
   *   `schema-rejected` when the page's schema cannot be used safely.
   */
  validate(descriptorHash: string, schema: unknown, args: unknown): ValidationOutcome {
    const compiled = this.compiled(descriptorHash, schema);
    if (!compiled.ok) return { ok: false, code: 'schema-rejected', message: compiled.message, ...(compiled.pageText ? { pageText: compiled.pageText } : {}) };
    const run = withBudget(() => compiled.validate(args) as boolean, this.budgetMs);
    if (!run.ok) {
      return run.timedOut
        ? { ok: false, code: 'schema-rejected', message: `validating the arguments took longer than ${this.budgetMs} ms (a hostile pattern in the page's schema?)` }
        : { ok: false, code: 'schema-rejected', message: 'validating the arguments against the page\'s schema failed', pageText: errorText(run.error) };
    }
    if (run.value) return { ok: true, dialect: compiled.dialect };
    const issues = (compiled.validate.errors ?? []).slice(0, this.maxIssues).map(toIssue);
    const more = (compiled.validate.errors?.length ?? 0) - issues.length;
    const paths = issues.map((i) => (i.instancePath || '(root)').slice(0, 130));
    return {
      ok: false,
      code: 'invalid-arguments',
      // The paths are the agent's own argument keys; what failed there quotes the page's schema and goes in `issues`.
      message: `arguments do not match the tool's inputSchema at ${[...new Set(paths)].join(', ')}${more > 0 ? ` (and ${more} more problems)` : ''}`,
      issues,
    };
  }

  /**
   * Whether the schema can be used at all: `null`, or why not (what a call
   * would get as `schema-rejected`). Compiles and caches, like `validate`.
   */
  schemaProblem(descriptorHash: string, schema: unknown): SchemaProblem | null {
    const compiled = this.compiled(descriptorHash, schema);
    return compiled.ok ? null : { message: compiled.message, ...(compiled.pageText ? { pageText: compiled.pageText } : {}) };
  }

  private compiled(descriptorHash: string, schema: unknown): Compiled {
    const hit = this.cache.get(descriptorHash);
    if (hit) {
      // LRU: re-insert as the newest.
      this.cache.delete(descriptorHash);
      this.cache.set(descriptorHash, hit);
      return hit;
    }
    const made = this.compile(schema);
    this.cache.set(descriptorHash, made);
    while (this.cache.size > this.maxCached) {
      const oldest = this.cache.keys().next().value;
      if (oldest === undefined) break;
      this.cache.delete(oldest);
    }
    return made;
  }

  private compile(schema: unknown): Compiled {
    // Chromium reports `{}` for a tool without a schema; canonical.ts does the same.
    const s = schema ?? {};
    if (typeof s === 'boolean') return { ok: false, message: 'a boolean inputSchema is not accepted for a page tool' };
    if (typeof s !== 'object' || Array.isArray(s)) return { ok: false, message: 'the inputSchema is not a JSON object' };
    let text: string;
    try {
      text = JSON.stringify(s);
    } catch (e) {
      return { ok: false, message: 'the inputSchema is not JSON', pageText: errorText(e) };
    }
    if (utf8Bytes(text) > LIMITS.maxSchemaBytes) {
      return { ok: false, message: `the inputSchema is larger than ${LIMITS.maxSchemaBytes} bytes` };
    }
    if (jsonDepth(s, LIMITS.maxSchemaDepth) > LIMITS.maxSchemaDepth) {
      return { ok: false, message: `the inputSchema is nested deeper than ${LIMITS.maxSchemaDepth} levels` };
    }
    const dialect = schemaDialect(s);
    if (!dialect) {
      return {
        ok: false,
        message: 'the inputSchema declares an unsupported $schema (supported: JSON Schema 2020-12, 2019-09, draft-07)',
        pageText: `$schema: ${JSON.stringify(String((s as { $schema?: unknown }).$schema)).slice(0, 120)}`,
      };
    }
    // Compile a private copy: the page's object must stay exactly as reviewed.
    const copy = JSON.parse(text) as { $schema?: string };
    // The dialect is chosen by class; ajv would otherwise look the meta-schema up by the exact URI spelling.
    delete copy.$schema;
    const formats = formatValues(copy);
    const run = withBudget(() => {
      const options: Options = {
        strict: true,
        strictTypes: false,
        strictRequired: false,
        allErrors: true,
        coerceTypes: false,
        useDefaults: false,
        removeAdditional: false,
        // Only OWN properties count: otherwise `required: ["constructor"]` is met by
        // Object.prototype.constructor, and `properties.toString` checks a function.
        ownProperties: true,
        validateSchema: true,
        addUsedSchema: false,
        logger: false,
      };
      const ajv = dialect === 'draft-07' ? new Ajv(options) : dialect === 'draft-2019-09' ? new Ajv2019(options) : new Ajv2020(options);
      addFormats(ajv);
      for (const f of formats) {
        if (f in ajv.formats) continue;
        // A Chromium pattern is enforced; any other unknown format is an annotation (always passes).
        ajv.addFormat(f, regexFormat(f) ?? true);
      }
      return ajv.compile(copy);
    }, this.budgetMs * 4);
    if (!run.ok) {
      return run.timedOut
        ? { ok: false, message: 'compiling the inputSchema took too long' }
        : { ok: false, message: 'the inputSchema cannot be compiled', pageText: errorText(run.error) };
    }
    // `$async: true` makes ajv compile a validator that returns a Promise (truthy, so
    // "valid") and rejects later, unhandled: a bypass and a crash. Page schemas are sync.
    if ((run.value as { $async?: unknown }).$async) return { ok: false, message: 'an asynchronous ($async) inputSchema is not accepted for a page tool' };
    return { ok: true, validate: run.value, dialect };
  }
}

/** Every string value of a `format` key in the schema (a bounded walk: the schema's depth is already checked). */
function formatValues(schema: unknown): Set<string> {
  const out = new Set<string>();
  const walk = (v: unknown, depth: number): void => {
    if (depth > LIMITS.maxSchemaDepth + 1 || v === null || typeof v !== 'object') return;
    if (Array.isArray(v)) {
      for (const x of v) walk(x, depth + 1);
      return;
    }
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
      if (k === 'format' && typeof x === 'string') out.add(x);
      else walk(x, depth + 1);
    }
  };
  walk(schema, 0);
  return out;
}

/**
 * A `format` value that is a regular expression Chromium wrote (`^…$`,
 * compiling with the `u` flag, as ajv compiles `pattern`), as a RegExp; `null`
 * for any other string (then the format is an annotation).
 * Chromium 156's time input gives `^([01][0-9]|2[0-3]):[0-5][0-9]$`.
 */
export function regexFormat(format: string): RegExp | null {
  if (format.length < 2 || !format.startsWith('^') || !format.endsWith('$')) return null;
  try {
    return new RegExp(format, 'u');
  } catch {
    return null;
  }
}

function toIssue(e: ErrorObject): ArgumentIssue {
  let message = e.message ?? e.keyword;
  if (e.keyword === 'additionalProperties' && typeof e.params.additionalProperty === 'string') {
    message = `${message}: ${JSON.stringify(e.params.additionalProperty).slice(0, 130)}`;
  }
  return { instancePath: e.instancePath, message: message.slice(0, 300) };
}

function errorText(e: unknown): string {
  const s = e instanceof Error ? e.message : String(e);
  return s.length > 300 ? `${s.slice(0, 300)}…` : s;
}
