/**
 * Page lint for WebMCP authors (issue 12 item 6): the ONE list of rules, with ids, and the pure
 * checks behind them. Shown per shared tab in the console's tool inspector (docs/inspector.md).
 *
 * Where each check runs:
 *  - `page` rules need the DOM (a form's controls and its submit button, the page's scripts): the
 *    extension's WebMCP content script gathers bounded facts in each same-origin frame
 *    (`PageLintFacts`, extension/src/lib/page-lint-facts.ts, using `legacyApiMentions` below to scan
 *    scripts where they are), and the console judges them with `lintPage`;
 *  - `console` rules need only what discovery already reports (descriptors and violations,
 *    src/shared/types.ts DiscoveryResult): `lintDiscovery` runs in the console.
 * Both are pure and run here, in src/shared, so every rule is unit-tested on hostile input
 * (test/unit/page-lint.test.ts).
 *
 * Page text is UNTRUSTED: a finding's `detail` is the console's own sentence; the page's words
 * appear in it only quoted and cut (`quote`). A finding never changes what the console does: the
 * trust rules stay the console's (a password form is blocked whether or not it is linted).
 */
import type { DiscoveryResult, ToolDescriptor } from './types';
import { nameSkeleton } from './tool-name';

/** Every rule id. */
export const LINT_RULE_IDS = [
  'legacy-api',
  'form-sensitive-field',
  'autosubmit-consequential',
  'schema-missing',
  'schema-open',
  'description-empty',
  'description-long',
  'schema-huge',
  'schema-ref',
  'name-collision',
  'hidden-instructions',
] as const;
export type LintRuleId = (typeof LINT_RULE_IDS)[number];

/** Where a rule's facts come from: the page's DOM (gathered by the extension) or discovery's descriptors (the console). */
export type LintSource = 'page' | 'console';

/** A link to the part of the WebMCP draft or Chrome's guidance a rule rests on. `section` names the part in words. */
export interface LintReference {
  label: string;
  href: string;
  section: string;
}

/** One lint rule: what it flags and why, for the page's author. */
export interface LintRule {
  id: LintRuleId;
  title: string;
  source: LintSource;
  /** `error`: an agent or a person can be harmed; `warning`: agents will use the tool badly. */
  severity: 'error' | 'warning';
  why: string;
  refs: LintReference[];
}

/** The WebMCP repository's security and privacy considerations (anchors from its own table of contents). */
const SP = 'https://github.com/webmachinelearning/webmcp/blob/main/docs/security-privacy-considerations.md';
const DRAFT = 'https://webmachinelearning.github.io/webmcp/';
const CHROME_BP = 'https://developer.chrome.com/docs/ai/webmcp/best-practices';
const CHROME_DECL = 'https://developer.chrome.com/docs/ai/webmcp/declarative-api';
const CHROME_UPDATES = 'https://developer.chrome.com/docs/ai/webmcp/updates';

/** A description longer than this (characters) is flagged `description-long`; the console refuses more than LIMITS.maxDescriptionBytes. */
export const LONG_DESCRIPTION_CHARS = 1_000;
/** A schema whose JSON is longer than this (UTF-8 bytes, 8 KiB) is flagged `schema-huge`; discovery drops more than LIMITS.maxSchemaBytes. */
export const HUGE_SCHEMA_BYTES = 8 * 1024;
/** A schema with more properties than this (counted at every level) is flagged `schema-huge`. */
export const HUGE_SCHEMA_PROPERTIES = 50;
/** At most this many findings per inspection; more are counted in the last one. */
export const MAX_FINDINGS = 200;

/** The rules, in the order the inspector lists them. */
export const LINT_RULES: readonly LintRule[] = [
  {
    id: 'legacy-api',
    title: 'Legacy navigator.modelContext / provideContext',
    source: 'page',
    severity: 'warning',
    why:
      'The current draft and Chrome expose WebMCP on document.modelContext with registerTool; navigator.modelContext and provideContext ' +
      'were removed (provideContext replaced every tool at once, so any script could take over the list). Code that uses them registers nothing in current Chrome.',
    refs: [
      { label: 'Chrome: WebMCP updates', href: CHROME_UPDATES, section: 'API changes' },
      { label: 'WebMCP draft', href: DRAFT, section: 'The ModelContext interface (document.modelContext)' },
    ],
  },
  {
    id: 'form-sensitive-field',
    title: 'Declarative form holds a password or card field',
    source: 'page',
    severity: 'error',
    why:
      'The browser turns every field of a tool form into a plain string parameter, passwords and card numbers included: the agent is asked to type a secret ' +
      'it should never hold. Echo Console blocks forms with a password field; other agents may not. Keep sign-in and payment forms out of WebMCP.',
    refs: [
      { label: 'WebMCP security and privacy', href: `${SP}#3-privacy-leakage-through-over-parameterization`, section: '3. Privacy Leakage Through Over-Parameterization' },
      { label: 'Chrome: Declarative API', href: CHROME_DECL, section: 'Tool registration' },
    ],
  },
  {
    id: 'autosubmit-consequential',
    title: 'toolautosubmit on a consequential form',
    source: 'page',
    severity: 'error',
    why:
      'With toolautosubmit the form is submitted as soon as the agent fills it, with no press by the person on the page. For a form that pays, deletes or sends, ' +
      'leave toolautosubmit off so the person presses the button themselves.',
    refs: [
      { label: 'Chrome: Declarative API', href: CHROME_DECL, section: 'Tool registration (toolautosubmit)' },
      { label: 'WebMCP security and privacy', href: `${SP}#2-misrepresentation-of-intent`, section: '2. Misrepresentation of Intent' },
    ],
  },
  {
    id: 'schema-missing',
    title: 'Imperative tool without inputSchema',
    source: 'console',
    severity: 'warning',
    why:
      'Without an inputSchema the agent must guess the arguments, and the browser does not validate them against anything. Declare each parameter with its type.',
    refs: [{ label: 'Chrome: WebMCP best practices', href: CHROME_BP, section: 'Design your schemas and handle input' }],
  },
  {
    id: 'schema-open',
    title: 'inputSchema without additionalProperties: false',
    source: 'console',
    severity: 'warning',
    why:
      'An object schema that allows extra properties lets an agent pass arguments the tool never declared (the browser passes them through unvalidated). ' +
      'Set additionalProperties: false so only declared parameters reach your code.',
    refs: [{ label: 'Chrome: WebMCP best practices', href: CHROME_BP, section: 'Design your schemas and handle input' }],
  },
  {
    id: 'description-empty',
    title: 'Empty description',
    source: 'console',
    severity: 'warning',
    why: 'The description is what the agent reads to decide whether and when to call the tool. Say what it does and when to use it.',
    refs: [{ label: 'Chrome: WebMCP best practices', href: CHROME_BP, section: 'Use clear language and semantic code' }],
  },
  {
    id: 'description-long',
    title: 'Very long description',
    source: 'console',
    severity: 'warning',
    why:
      `A description over ${LONG_DESCRIPTION_CHARS} characters costs every agent context on every page load, and long texts are where injected instructions hide. ` +
      'Agents and clients may cut or refuse it (Echo Console refuses more than 4 KiB).',
    refs: [
      { label: 'Chrome: WebMCP best practices', href: CHROME_BP, section: 'Use clear language and semantic code' },
      { label: 'WebMCP security and privacy', href: `${SP}#consider-restricting-maximum-input-lengths`, section: 'Consider restricting maximum input lengths' },
    ],
  },
  {
    id: 'schema-huge',
    title: 'Huge inputSchema',
    source: 'console',
    severity: 'warning',
    why:
      `A schema over ${HUGE_SCHEMA_BYTES / 1024} KiB or ${HUGE_SCHEMA_PROPERTIES} properties is hard for an agent to fill and for a person to review; clients cap schema size and depth ` +
      '(Echo Console drops schemas over 64 KiB or 16 levels). Split the tool, or accept the person\u2019s raw input as a string.',
    refs: [
      { label: 'Chrome: WebMCP best practices', href: CHROME_BP, section: 'Design your schemas and handle input' },
      { label: 'WebMCP security and privacy', href: `${SP}#consider-restricting-maximum-input-lengths`, section: 'Consider restricting maximum input lengths' },
    ],
  },
  {
    id: 'schema-ref',
    title: 'inputSchema uses $ref',
    source: 'console',
    severity: 'warning',
    why:
      'The browser accepts $ref as it is, but many agents and validators do not resolve references (remote ones never), so the parameters they point to are ' +
      'unknown to the agent. Inline the definitions.',
    refs: [{ label: 'Chrome: WebMCP best practices', href: CHROME_BP, section: 'Design your schemas and handle input' }],
  },
  {
    id: 'name-collision',
    title: 'Tool name used in several frames',
    source: 'console',
    severity: 'warning',
    why:
      'A same-origin iframe\u2019s tools are listed beside the top document\u2019s. Two tools with one name (or names that read alike) make the agent and the person ' +
      'guess which one runs. Give each tool one unique name.',
    refs: [{ label: 'Chrome: WebMCP best practices', href: CHROME_BP, section: 'Create a tool strategy' }],
  },
  {
    id: 'hidden-instructions',
    title: 'Hidden-instruction text',
    source: 'console',
    severity: 'error',
    why:
      'Tool text that speaks to the agent ("ignore previous instructions", "already approved"), or hides text in zero-width, tag, bidi-control characters or ' +
      'HTML comments, is tool poisoning: agents may obey it. Describe the tool; never instruct the agent.',
    refs: [{ label: 'WebMCP security and privacy', href: `${SP}#1-metadata--description-attacks-tool-poisoning`, section: 'Metadata / Description Attacks (Tool Poisoning)' }],
  },
];

const RULES_BY_ID = new Map(LINT_RULES.map((r) => [r.id, r]));

/** The rule of an id. @throws Error for an id not in LINT_RULE_IDS (a programming error). */
export function lintRule(id: LintRuleId): LintRule {
  const r = RULES_BY_ID.get(id);
  if (!r) throw new Error(`unknown lint rule ${id}`);
  return r;
}

/** One finding: a rule, where it was seen, and the console's sentence about it. */
export interface LintFinding {
  rule: LintRuleId;
  /** The frame (0: the top document); -1 when the finding is about the whole tab. */
  frameId: number;
  /** The tool the finding is about, if any (UNTRUSTED page text, a valid tool name or cut to 128). */
  toolName?: string;
  /** The console's words; page text only inside `quote(...)`. */
  detail: string;
}

/** Page text quoted for a finding's detail: invisible and control characters shown as \u{…}, cut to `max` characters. */
export function quote(text: string, max = 80): string {
  const shown = [...text]
    .map((c) => (/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u.test(c) || (c.codePointAt(0) ?? 0) >= 0xe0000 ? `\\u{${(c.codePointAt(0) ?? 0).toString(16)}}` : c))
    .join('');
  return JSON.stringify(shown.length > max ? `${shown.slice(0, max)}…` : shown);
}

// ---- page facts ---------------------------------------------------------------------------

/** A mention of the legacy API found in one script. */
export interface LegacyApiMention {
  /** What was found. */
  what: 'navigator.modelContext' | 'navigator.modelContextTesting' | 'provideContext';
  /** `inline script N` (1-based, document order) or the script's URL, stripped (UNTRUSTED). */
  where: string;
}

/** One control of a declarative tool form, as the page has it (values never read). */
export interface LintFormField {
  /** `input` type (lower case), or `select` / `textarea`. */
  type: string;
  name: string;
  autocomplete: string;
  id: string;
}

/** The facts of one `<form toolname>` (all strings UNTRUSTED, each cut to 256 characters). */
export interface LintFormFacts {
  toolName: string;
  toolDescription: string;
  autosubmit: boolean;
  /** The action attribute as written (not resolved). */
  action: string;
  /** Text of its submit buttons (`button[type=submit]`, `input[type=submit]` values). */
  submitTexts: string[];
  /** At most 64 controls. */
  fields: LintFormField[];
}

/** What one frame's content script gathers for the page rules (extension/src/lib/page-lint-facts.ts). */
export interface PageLintFacts {
  frameId: number;
  legacyApi: LegacyApiMention[];
  /** At most 32 forms. */
  forms: LintFormFacts[];
  /** Scripts read, and those skipped (cross-origin, too large, past the count limit, unreadable). */
  scripts: { scanned: number; skipped: number };
}

/** Bounds of what the content script gathers (and what the console accepts from it). */
export const PAGE_FACT_LIMITS = { maxForms: 32, maxFields: 64, maxText: 256, maxScripts: 32, maxScriptBytes: 512 * 1024, maxMentions: 16, maxSubmitTexts: 8 } as const;

// Word boundaries by hand: `\b` treats `_` as a word character, so `navigator_modelContext` must not match,
// while `window.navigator.modelContext` and `navigator?.modelContext` must.
const LEGACY_PATTERNS: Array<[LegacyApiMention['what'], RegExp]> = [
  ['navigator.modelContextTesting', /(^|[^\w$])navigator\s*(\?\.|\.)\s*modelContextTesting(?![\w$])/],
  ['navigator.modelContextTesting', /(^|[^\w$])navigator\s*\[\s*['"`]modelContextTesting['"`]\s*\]/],
  ['navigator.modelContext', /(^|[^\w$])navigator\s*(\?\.|\.)\s*modelContext(?![\w$])/],
  ['navigator.modelContext', /(^|[^\w$])navigator\s*\[\s*['"`]modelContext['"`]\s*\]/],
  ['provideContext', /(^|[^\w$])provideContext(?![\w$])\s*(\(|\?\.\s*\()/],
  ['provideContext', /\[\s*['"`]provideContext['"`]\s*\]/],
];

/**
 * Which legacy WebMCP calls a script's source mentions: `navigator.modelContext`,
 * `navigator.modelContextTesting` (also as `navigator["…"]`) and `provideContext(`. A static scan,
 * as a linter's: it finds code that would run, and also code behind a feature test; a script that
 * builds the names at run time is not found. Each kind is reported once.
 * @param text the script's source (the caller bounds it, PAGE_FACT_LIMITS.maxScriptBytes).
 */
export function legacyApiMentions(text: string): Array<LegacyApiMention['what']> {
  if (typeof text !== 'string' || text.length === 0) return [];
  const found = new Set<LegacyApiMention['what']>();
  for (const [what, re] of LEGACY_PATTERNS) if (!found.has(what) && re.test(text)) found.add(what);
  return [...found];
}

const CARD_AUTOCOMPLETE = /(^|\s)cc-(number|csc|exp|exp-month|exp-year)(\s|$)/i;
const CARD_NAME = /(^|[^a-z])(card[-_ ]?(number|no|num)|cc[-_ ]?(number|num|no)|ccnum|cvv2?|cvc2?|csc|security[-_ ]?code|pan)([^a-z]|$)/i;

/**
 * The sensitive kinds among a form's controls: `password` (an `<input type=password>`, or
 * autocomplete current-password / new-password / one-time-code) and `card` (autocomplete cc-number,
 * cc-csc, cc-exp…, or a name or id that says card number, CVV, CVC). Sorted, each once.
 */
export function sensitiveFieldKinds(fields: readonly LintFormField[]): Array<'password' | 'card'> {
  const kinds = new Set<'password' | 'card'>();
  for (const f of fields) {
    if (!f || typeof f !== 'object') continue;
    const type = String(f.type ?? '').toLowerCase();
    const auto = String(f.autocomplete ?? '');
    if (type === 'password' || /(^|\s)(current-password|new-password|one-time-code)(\s|$)/i.test(auto)) kinds.add('password');
    if (CARD_AUTOCOMPLETE.test(auto) || CARD_NAME.test(String(f.name ?? '')) || CARD_NAME.test(String(f.id ?? ''))) kinds.add('card');
  }
  return [...kinds].sort();
}

/**
 * Words that make a form consequential: it pays, deletes or sends. Matched on whole words (any case,
 * `_`, `-` and camelCase split) of the tool name, its description, the action and the submit texts.
 */
const CONSEQUENTIAL = /^(pay|pays|paying|payment|payments|purchase|purchases|buy|buys|checkout|order|orders|transfer|transfers|withdraw|donate|subscribe|delete|deletes|deleting|remove|removes|erase|destroy|cancel|close|unsubscribe|send|sends|sending|submit|post|publish|share|invite|email|message|reply)$/;

/** Lower-case words of a text: camelCase, `_`, `-`, `/`, punctuation and spaces split it. */
function wordsOf(text: string): string[] {
  return String(text)
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}

/** The consequential words (pay, delete, send, …) in `texts`, each once, in the order found. */
export function consequentialWords(texts: readonly string[]): string[] {
  const out: string[] = [];
  for (const t of texts) for (const w of wordsOf(t)) if (CONSEQUENTIAL.test(w) && !out.includes(w)) out.push(w);
  return out;
}

/** The page rules over the facts of every frame. Never throws on odd facts (they come from the page's frames). */
export function lintPage(frames: readonly PageLintFacts[]): LintFinding[] {
  const out: LintFinding[] = [];
  for (const f of frames) {
    const seen = new Set<string>();
    for (const m of Array.isArray(f.legacyApi) ? f.legacyApi : []) {
      if (!m || typeof m !== 'object') continue;
      const key = `${m.what} ${m.where}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.push({ rule: 'legacy-api', frameId: f.frameId, detail: `${m.what} in ${quote(String(m.where))}.` });
    }
    for (const form of Array.isArray(f.forms) ? f.forms : []) {
      if (!form || typeof form !== 'object') continue;
      const toolName = String(form.toolName ?? '').slice(0, 128);
      const kinds = sensitiveFieldKinds(Array.isArray(form.fields) ? form.fields : []);
      if (kinds.length > 0) {
        out.push({ rule: 'form-sensitive-field', frameId: f.frameId, toolName, detail: `The form of ${quote(toolName)} holds ${kinds.map((k) => (k === 'password' ? 'a password field' : 'a card field')).join(' and ')}.` });
      }
      if (form.autosubmit === true) {
        const words = consequentialWords([toolName, String(form.toolDescription ?? ''), String(form.action ?? ''), ...(Array.isArray(form.submitTexts) ? form.submitTexts.map(String) : [])]);
        if (words.length > 0) {
          out.push({ rule: 'autosubmit-consequential', frameId: f.frameId, toolName, detail: `The form of ${quote(toolName)} has toolautosubmit and looks consequential (${words.slice(0, 4).map((w) => quote(w, 20)).join(', ')}).` });
        }
      }
    }
  }
  return out;
}

// ---- descriptor facts ----------------------------------------------------------------------

/** Flags (extension/src/lib/inspect.ts textFlags) that mean text addressed to the agent or hidden from the person. */
const HIDDEN_FLAGS = ['hidden-instructions', 'zero-width', 'tag-chars', 'bidi-control', 'html-comment', 'control-chars'] as const;

/** Whether a schema declares nothing: absent, not an object, or an object with neither `type` nor `properties` (Chromium reports a missing inputSchema as `{}`). */
export function schemaIsMissing(schema: unknown): boolean {
  if (schema === undefined || schema === null || typeof schema !== 'object' || Array.isArray(schema)) return true;
  const s = schema as Record<string, unknown>;
  return !('type' in s) && !('properties' in s) && !('anyOf' in s) && !('oneOf' in s) && !('allOf' in s) && !('$ref' in s);
}

/** Whether an object schema leaves additional properties open (its top level: `additionalProperties` is not `false`). */
export function schemaIsOpen(schema: unknown): boolean {
  if (schemaIsMissing(schema)) return false; // reported as schema-missing instead
  const s = schema as Record<string, unknown>;
  const isObject = s.type === 'object' || (s.type === undefined && typeof s.properties === 'object');
  return isObject && s.additionalProperties !== false;
}

/** Bounded walk of a JSON value (depth and node count), so a hostile schema cannot cost much. */
function walkJson(v: unknown, visit: (key: string | null, value: unknown) => void, maxNodes = 20_000, maxDepth = 64): void {
  let nodes = 0;
  const walk = (key: string | null, x: unknown, depth: number): void => {
    if (++nodes > maxNodes || depth > maxDepth) return;
    visit(key, x);
    if (Array.isArray(x)) for (const y of x) walk(null, y, depth + 1);
    else if (x && typeof x === 'object') for (const [k, y] of Object.entries(x)) walk(k, y, depth + 1);
  };
  walk(null, v, 0);
}

/** Whether the schema holds a `$ref` keyword anywhere (a key named `$ref` with a string value). */
export function schemaUsesRef(schema: unknown): boolean {
  let found = false;
  walkJson(schema, (k, v) => {
    if (k === '$ref' && typeof v === 'string') found = true;
  });
  return found;
}

/** The schema's size: UTF-8 bytes of its JSON, and properties declared at every level. */
export function schemaSize(schema: unknown): { bytes: number; properties: number } {
  let text = '';
  try {
    text = JSON.stringify(schema) ?? '';
  } catch {
    text = '';
  }
  let properties = 0;
  walkJson(schema, (k, v) => {
    if (k === 'properties' && v && typeof v === 'object' && !Array.isArray(v)) properties += Object.keys(v).length;
  });
  return { bytes: new TextEncoder().encode(text).length, properties };
}


/** Violations (discovery's DiscoveryViolation reasons) that mean a schema was too big to list. */
const HUGE_VIOLATIONS = new Set(['schema-too-large', 'schema-too-deep']);
const LONG_VIOLATIONS = new Set(['description-too-long']);

/** The console rules over one discovery of a tab. */
export function lintDiscovery(d: Pick<DiscoveryResult, 'tools' | 'violations' | 'support'>): LintFinding[] {
  const out: LintFinding[] = [];
  const tools: ToolDescriptor[] = Array.isArray(d.tools) ? d.tools : [];
  if (d.support?.legacyApi) out.push({ rule: 'legacy-api', frameId: 0, detail: `The browser offers ${d.support.legacyApi} in this tab.` });
  for (const t of tools) {
    const at = { frameId: t.frameId, toolName: t.name };
    const name = quote(t.name);
    if (t.kind === 'imperative') {
      if (schemaIsMissing(t.inputSchema)) out.push({ rule: 'schema-missing', ...at, detail: `${name} declares no inputSchema (the browser reports ${quote(JSON.stringify(t.inputSchema ?? null) ?? '', 40)}).` });
      else if (schemaIsOpen(t.inputSchema)) out.push({ rule: 'schema-open', ...at, detail: `${name}'s inputSchema does not set additionalProperties: false.` });
    }
    const desc = typeof t.description === 'string' ? t.description : '';
    if (desc.trim() === '') out.push({ rule: 'description-empty', ...at, detail: `${name} has ${desc === '' ? 'an empty description' : 'a description of white space only'}.` });
    else if ([...desc].length > LONG_DESCRIPTION_CHARS) out.push({ rule: 'description-long', ...at, detail: `${name}'s description has ${[...desc].length} characters (over ${LONG_DESCRIPTION_CHARS}).` });
    const size = schemaSize(t.inputSchema);
    if (size.bytes > HUGE_SCHEMA_BYTES || size.properties > HUGE_SCHEMA_PROPERTIES) {
      out.push({ rule: 'schema-huge', ...at, detail: `${name}'s inputSchema is ${size.bytes} bytes with ${size.properties} properties.` });
    }
    if (schemaUsesRef(t.inputSchema)) out.push({ rule: 'schema-ref', ...at, detail: `${name}'s inputSchema uses $ref.` });
    const hidden = (t.flags ?? []).filter((f) => (HIDDEN_FLAGS as readonly string[]).includes(f));
    if (hidden.length > 0) out.push({ rule: 'hidden-instructions', ...at, detail: `${name}'s text is flagged: ${hidden.join(', ')}.` });
  }
  // Tools discovery could not list: their size is the finding.
  for (const v of Array.isArray(d.violations) ? d.violations : []) {
    const toolName = typeof v.name === 'string' ? v.name.slice(0, 128) : undefined;
    const at = { frameId: v.frameId, ...(toolName !== undefined ? { toolName } : {}) };
    if (HUGE_VIOLATIONS.has(v.reason)) out.push({ rule: 'schema-huge', ...at, detail: `${quote(toolName ?? '')} was not listed: ${v.reason}${v.detail ? ` (${quote(v.detail, 60)})` : ''}.` });
    if (LONG_VIOLATIONS.has(v.reason)) out.push({ rule: 'description-long', ...at, detail: `${quote(toolName ?? '')} was not listed: ${v.reason}${v.detail ? ` (${quote(v.detail, 60)})` : ''}.` });
  }
  // Names across frames: the same name in two frames, or two names with one look-alike skeleton.
  const byName = new Map<string, Set<number>>();
  for (const t of tools) byName.set(t.name, (byName.get(t.name) ?? new Set()).add(t.frameId));
  for (const [n, frames] of byName) {
    if (frames.size > 1) out.push({ rule: 'name-collision', frameId: -1, toolName: n, detail: `${quote(n)} is registered in frames ${[...frames].sort((a, b) => a - b).join(', ')}.` });
  }
  const bySkeleton = new Map<string, Set<string>>();
  for (const n of byName.keys()) bySkeleton.set(nameSkeleton(n), (bySkeleton.get(nameSkeleton(n)) ?? new Set()).add(n));
  for (const names of bySkeleton.values()) {
    if (names.size > 1) {
      const list = [...names].sort();
      out.push({ rule: 'name-collision', frameId: -1, toolName: list[0] as string, detail: `${list.map((n) => quote(n)).join(' and ')} read alike.` });
    }
  }
  return out;
}

/**
 * Every finding of a tab, in LINT_RULES order (then frame, then tool), at most MAX_FINDINGS (the
 * last then says how many more there were).
 */
export function lintTab(d: Pick<DiscoveryResult, 'tools' | 'violations' | 'support'>, pageFacts: readonly PageLintFacts[]): LintFinding[] {
  const order = new Map(LINT_RULE_IDS.map((id, i) => [id, i]));
  const all = [...lintPage(pageFacts), ...lintDiscovery(d)].sort(
    (a, b) => (order.get(a.rule) ?? 0) - (order.get(b.rule) ?? 0) || a.frameId - b.frameId || (a.toolName ?? '').localeCompare(b.toolName ?? ''),
  );
  if (all.length <= MAX_FINDINGS) return all;
  const kept = all.slice(0, MAX_FINDINGS);
  const last = kept[MAX_FINDINGS - 1] as LintFinding;
  kept[MAX_FINDINGS - 1] = { ...last, detail: `${last.detail} (${all.length - MAX_FINDINGS + 1} more findings not listed)` };
  return kept;
}
