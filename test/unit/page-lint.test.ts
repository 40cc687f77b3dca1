/**
 * Page lint (src/shared/page-lint.ts): every rule on what a page's author gets wrong, and on hostile
 * or odd input (page facts and descriptors come from the page: nothing may throw, page text is
 * quoted and cut, never obeyed).
 */
import { describe, expect, it } from 'vitest';
import {
  HUGE_SCHEMA_BYTES,
  LINT_RULES,
  LINT_RULE_IDS,
  LONG_DESCRIPTION_CHARS,
  MAX_FINDINGS,
  consequentialWords,
  legacyApiMentions,
  lintDiscovery,
  lintPage,
  lintTab,
  quote,
  schemaIsMissing,
  schemaIsOpen,
  schemaUsesRef,
  sensitiveFieldKinds,
  type LintFormFacts,
  type PageLintFacts,
} from '../../src/shared/page-lint';
import type { DiscoveryResult, ToolDescriptor } from '../../src/shared/types';

const tool = (over: Partial<ToolDescriptor> = {}): ToolDescriptor => ({
  name: 'search',
  title: 'Search',
  description: 'Searches the catalogue.',
  inputSchema: { type: 'object', properties: { q: { type: 'string' } }, additionalProperties: false },
  origin: 'http://shop.example',
  descriptorHash: 'a'.repeat(64),
  tabId: 1,
  frameId: 0,
  documentId: 'D',
  kind: 'imperative',
  ...over,
});
const discovery = (tools: ToolDescriptor[], extra: Partial<DiscoveryResult> = {}): Pick<DiscoveryResult, 'tools' | 'violations' | 'support'> => ({
  tools,
  violations: [],
  support: { modelContext: true, legacyApi: null, argumentForm: 'object' },
  ...extra,
});
const rules = (findings: { rule: string }[]) => findings.map((f) => f.rule);
const form = (over: Partial<LintFormFacts> = {}): LintFormFacts => ({ toolName: 'book', toolDescription: 'Books a table.', autosubmit: false, action: '/book', submitTexts: ['Book'], fields: [], ...over });
const frame = (over: Partial<PageLintFacts> = {}): PageLintFacts => ({ frameId: 0, legacyApi: [], forms: [], scripts: { scanned: 1, skipped: 0 }, ...over });

describe('the rule list', () => {
  it('has one rule per id, each with why and at least one link to the draft or Chrome', () => {
    expect(LINT_RULES.map((r) => r.id)).toEqual([...LINT_RULE_IDS]);
    for (const r of LINT_RULES) {
      expect(r.why.length).toBeGreaterThan(40);
      expect(r.refs.length).toBeGreaterThan(0);
      for (const ref of r.refs) expect(ref.href).toMatch(/^https:\/\/(developer\.chrome\.com\/docs\/ai\/webmcp\/|webmachinelearning\.github\.io\/webmcp\/|github\.com\/webmachinelearning\/webmcp\/blob\/main\/docs\/security-privacy-considerations\.md#)/);
    }
  });
  it('a well-made tool and page give no finding', () => {
    expect(lintTab(discovery([tool()]), [frame({ forms: [form()] })])).toEqual([]);
  });
});

describe('legacy-api', () => {
  it('finds navigator.modelContext, modelContextTesting and provideContext in their usual spellings', () => {
    expect(legacyApiMentions('navigator.modelContext.registerTool({})')).toEqual(['navigator.modelContext']);
    expect(legacyApiMentions('window.navigator?.modelContext?.provideContext?.({tools})').sort()).toEqual(['navigator.modelContext', 'provideContext']);
    expect(legacyApiMentions("navigator['modelContextTesting'].executeTool(t, '{}')")).toEqual(['navigator.modelContextTesting']);
    expect(legacyApiMentions('mc.provideContext ( { tools: [] } )')).toEqual(['provideContext']);
    expect(legacyApiMentions('x["provideContext"](y)')).toEqual(['provideContext']);
  });
  it('does not flag the current API or look-alike identifiers', () => {
    expect(legacyApiMentions('document.modelContext.registerTool({name:"a"})')).toEqual([]);
    expect(legacyApiMentions('const navigator_modelContext = 1; my.provideContextual(); provideContexts();')).toEqual([]);
    expect(legacyApiMentions('')).toEqual([]);
    expect(legacyApiMentions(undefined as unknown as string)).toEqual([]);
  });
  it('a 512 KiB minified script is scanned without trouble', () => {
    const big = `${'a=1;'.repeat(128 * 1024)}navigator.modelContext`;
    expect(legacyApiMentions(big)).toEqual(['navigator.modelContext']);
  });
  it('page facts and the browser report both produce findings; the place is quoted with invisible characters shown', () => {
    const f = lintPage([frame({ legacyApi: [{ what: 'provideContext', where: 'inline script 1\u202e' }, { what: 'provideContext', where: 'inline script 1\u202e' }] })]);
    expect(f).toHaveLength(1);
    expect(f[0]).toMatchObject({ rule: 'legacy-api', frameId: 0 });
    expect(f[0]!.detail).toContain('\\u{202e}');
    expect(rules(lintDiscovery(discovery([], { support: { modelContext: false, legacyApi: 'navigator.modelContextTesting', argumentForm: 'json-string' } })))).toEqual(['legacy-api']);
  });
});

describe('form-sensitive-field', () => {
  it('password by type or autocomplete; card by autocomplete, name or id', () => {
    expect(sensitiveFieldKinds([{ type: 'PASSWORD', name: 'x', autocomplete: '', id: '' }])).toEqual(['password']);
    expect(sensitiveFieldKinds([{ type: 'text', name: 'otp', autocomplete: 'one-time-code', id: '' }])).toEqual(['password']);
    expect(sensitiveFieldKinds([{ type: 'text', name: 'n', autocomplete: 'billing cc-number', id: '' }])).toEqual(['card']);
    expect(sensitiveFieldKinds([{ type: 'text', name: 'card_number', autocomplete: '', id: '' }])).toEqual(['card']);
    expect(sensitiveFieldKinds([{ type: 'text', name: 'x', autocomplete: '', id: 'cvv2' }])).toEqual(['card']);
    expect(sensitiveFieldKinds([{ type: 'text', name: 'cardholder', autocomplete: 'cc-name', id: '' }, { type: 'email', name: 'email', autocomplete: 'email', id: '' }])).toEqual([]);
    expect(sensitiveFieldKinds([{ type: 'text', name: 'discard_reason', autocomplete: '', id: 'panel' }])).toEqual([]);
  });
  it('one finding per form naming both kinds; odd field shapes do not throw', () => {
    const f = lintPage([frame({ forms: [form({ toolName: 'checkout', fields: [{ type: 'password', name: 'p', autocomplete: '', id: '' }, { type: 'text', name: 'cc-number', autocomplete: '', id: '' }] })] })]);
    expect(f).toEqual([{ rule: 'form-sensitive-field', frameId: 0, toolName: 'checkout', detail: 'The form of "checkout" holds a card field and a password field.' }]);
    const odd = [frame({ forms: [{ toolName: null, fields: [null, { type: 7 }], submitTexts: 'x' } as unknown as LintFormFacts] })];
    expect(() => lintPage(odd)).not.toThrow();
  });
});

describe('autosubmit-consequential', () => {
  it('flags toolautosubmit forms that pay, delete or send, by name, description, action or button', () => {
    const cases: Array<Partial<LintFormFacts>> = [
      { toolName: 'payOrder' },
      { toolName: 'x', toolDescription: 'Deletes the account.' },
      { toolName: 'x', toolDescription: 'x', action: '/messages/send' },
      { toolName: 'x', toolDescription: 'x', action: '', submitTexts: ['Pay now'] },
      { toolName: 'remove_item' },
    ];
    for (const c of cases) expect(rules(lintPage([frame({ forms: [form({ ...c, autosubmit: true })] })])), JSON.stringify(c)).toEqual(['autosubmit-consequential']);
  });
  it('does not flag the same form without toolautosubmit, nor a harmless autosubmit form, nor words inside words', () => {
    expect(lintPage([frame({ forms: [form({ toolName: 'pay_order', autosubmit: false })] })])).toEqual([]);
    expect(lintPage([frame({ forms: [form({ toolName: 'search_flights', toolDescription: 'Finds flights.', action: '/search', submitTexts: ['Search'], autosubmit: true })] })])).toEqual([]);
    expect(consequentialWords(['repayment_calendar', 'sender_info', 'display'])).toEqual([]);
    expect(consequentialWords(['sendMessage', 'PAY-NOW'])).toEqual(['send', 'message', 'pay']);
  });
});

describe('schema-missing and schema-open', () => {
  it('an imperative tool without inputSchema (Chromium reports none; discovery carries {}) is schema-missing', () => {
    expect(schemaIsMissing({})).toBe(true);
    expect(schemaIsMissing(undefined)).toBe(true);
    expect(schemaIsMissing('{"type":"object"}')).toBe(true);
    expect(schemaIsMissing({ description: 'x' })).toBe(true);
    expect(schemaIsMissing({ type: 'object' })).toBe(false);
    expect(rules(lintDiscovery(discovery([tool({ inputSchema: {} })])))).toEqual(['schema-missing']);
  });
  it('an object schema without additionalProperties: false is schema-open; false, and non-object schemas, are not', () => {
    expect(schemaIsOpen({ type: 'object', properties: {} })).toBe(true);
    expect(schemaIsOpen({ properties: { a: {} } })).toBe(true);
    expect(schemaIsOpen({ type: 'object', additionalProperties: true })).toBe(true);
    expect(schemaIsOpen({ type: 'object', additionalProperties: {} })).toBe(true);
    expect(schemaIsOpen({ type: 'object', additionalProperties: false })).toBe(false);
    expect(schemaIsOpen({ type: 'string' })).toBe(false);
    expect(rules(lintDiscovery(discovery([tool({ inputSchema: { type: 'object', properties: {} } })])))).toEqual(['schema-open']);
  });
  it('declarative tools (the browser writes their schema) are not held to either', () => {
    expect(lintDiscovery(discovery([tool({ kind: 'declarative', inputSchema: { type: 'object', properties: { a: { type: 'string' } }, required: [] } })]))).toEqual([]);
  });
});

describe('descriptions', () => {
  it('empty, white space only (as a form with tooldescription="" gives), and over the limit', () => {
    expect(rules(lintDiscovery(discovery([tool({ description: '' })])))).toEqual(['description-empty']);
    expect(rules(lintDiscovery(discovery([tool({ description: ' \n\u00a0' })])))).toEqual(['description-empty']);
    expect(rules(lintDiscovery(discovery([tool({ description: 'x'.repeat(LONG_DESCRIPTION_CHARS) })])))).toEqual([]);
    expect(rules(lintDiscovery(discovery([tool({ description: 'x'.repeat(LONG_DESCRIPTION_CHARS + 1) })])))).toEqual(['description-long']);
  });
  it('a description discovery refused as too long is reported from the violation', () => {
    const d = discovery([], { violations: [{ frameId: 2, reason: 'description-too-long', name: 'essay', detail: '9000 bytes > 4096' }] });
    expect(lintDiscovery(d)).toEqual([{ rule: 'description-long', frameId: 2, toolName: 'essay', detail: '"essay" was not listed: description-too-long ("9000 bytes > 4096").' }]);
  });
  it('a non-string description (a hostile extension answer) does not throw', () => {
    expect(() => lintDiscovery(discovery([tool({ description: 5 as unknown as string })]))).not.toThrow();
  });
});

describe('schema-huge and schema-ref', () => {
  it('over 8 KiB or over 50 properties; a schema dropped for its size or depth', () => {
    const many = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`p${i}`, { type: 'string' }]));
    expect(rules(lintDiscovery(discovery([tool({ inputSchema: { type: 'object', properties: many, additionalProperties: false } })])))).toEqual(['schema-huge']);
    const big = { type: 'object', properties: { a: { type: 'string', enum: Array.from({ length: 900 }, (_, i) => `value-${i}`) } }, additionalProperties: false };
    expect(JSON.stringify(big).length).toBeGreaterThan(HUGE_SCHEMA_BYTES);
    expect(rules(lintDiscovery(discovery([tool({ inputSchema: big })])))).toEqual(['schema-huge']);
    expect(rules(lintDiscovery(discovery([], { violations: [{ frameId: 0, reason: 'schema-too-deep', name: 'deep' }] })))).toEqual(['schema-huge']);
  });
  it('$ref anywhere, but not a property that happens to be named $ref nor the word in a description', () => {
    expect(schemaUsesRef({ type: 'object', properties: { a: { $ref: '#/$defs/A' } } })).toBe(true);
    expect(schemaUsesRef({ allOf: [{ $ref: 'https://evil.example/s.json' }] })).toBe(true);
    expect(schemaUsesRef({ type: 'object', properties: { $ref: { type: 'string' } } })).toBe(false);
    expect(schemaUsesRef({ type: 'string', description: 'see $ref' })).toBe(false);
  });
  it('a cyclic or 10,000-deep value (never from JSON, but never trusted) is walked within bounds', () => {
    let deep: Record<string, unknown> = { $ref: '#' };
    for (let i = 0; i < 10_000; i++) deep = { properties: { a: deep } };
    expect(() => schemaUsesRef(deep)).not.toThrow();
    const cyclic: Record<string, unknown> = { type: 'object' };
    cyclic.properties = { self: cyclic };
    expect(() => lintDiscovery(discovery([tool({ inputSchema: cyclic })]))).not.toThrow();
  });
});

describe('name-collision', () => {
  it('one name in two frames; look-alike names across frames; one finding per name', () => {
    const f = lintDiscovery(discovery([tool({ name: 'get_help' }), tool({ name: 'get_help', frameId: 3, documentId: 'E' }), tool({ name: 'get_help', frameId: 4, documentId: 'F' })]));
    expect(f).toEqual([{ rule: 'name-collision', frameId: -1, toolName: 'get_help', detail: '"get_help" is registered in frames 0, 3, 4.' }]);
    expect(rules(lintDiscovery(discovery([tool({ name: 'delete_all' }), tool({ name: 'de1ete-all', frameId: 1 })])))).toEqual(['name-collision']);
    expect(lintDiscovery(discovery([tool({ name: 'search' }), tool({ name: 'track' })]))).toEqual([]);
  });
});

describe('hidden-instructions', () => {
  it('from the discovery flags that mean hidden or agent-addressed text; mixed-script alone is not this rule', () => {
    expect(lintDiscovery(discovery([tool({ flags: ['hidden-instructions', 'html-comment'] })]))).toEqual([
      { rule: 'hidden-instructions', frameId: 0, toolName: 'search', detail: '"search"\'s text is flagged: hidden-instructions, html-comment.' },
    ]);
    expect(rules(lintDiscovery(discovery([tool({ flags: ['tag-chars'] })])))).toEqual(['hidden-instructions']);
    expect(lintDiscovery(discovery([tool({ flags: ['mixed-script', 'confusable-name'] })]))).toEqual([]);
  });
});

describe('findings', () => {
  it('come in rule order, bounded, the last saying how many more', () => {
    const tools = Array.from({ length: 300 }, (_, i) => tool({ name: `t${i}`, inputSchema: {}, description: '' }));
    const all = lintTab(discovery(tools), [frame({ legacyApi: [{ what: 'provideContext', where: 'inline script 1' }] })]);
    expect(all).toHaveLength(MAX_FINDINGS);
    expect(all[0]!.rule).toBe('legacy-api');
    expect(all[MAX_FINDINGS - 1]!.detail).toMatch(/\(402 more findings not listed\)$/);
  });
  it('quote shows page text as one JSON string, invisible characters spelled out, cut', () => {
    expect(quote('a\u200bb\u{e0041}')).toBe('"a\\\\u{200b}b\\\\u{e0041}"');
    expect(quote('x'.repeat(100), 10)).toBe(`"${'x'.repeat(10)}…"`);
  });
});

describe('the worker cleans a frame\u2019s facts (extension/src/background/discovery.ts cleanLintFacts)', () => {
  it('keeps only the known shapes, cuts strings, bounds lists, and takes the frame id from the worker', async () => {
    const { cleanLintFacts } = await import('../../extension/src/background/discovery');
    expect(cleanLintFacts(null, 3)).toBeNull();
    expect(cleanLintFacts({ forms: 'x', legacyApi: [] }, 3)).toBeNull();
    const hostile = {
      frameId: 0, // the page's claim: ignored
      legacyApi: [{ what: 'eval', where: 'x' }, { what: 'provideContext', where: 'y'.repeat(10_000) }, null],
      forms: Array.from({ length: 100 }, () => ({ toolName: 'n'.repeat(1000), autosubmit: 'yes', fields: Array.from({ length: 500 }, () => ({ type: { toString: () => 'password' } })), submitTexts: null })),
      scripts: { scanned: 1.5, skipped: -1 },
    };
    const c = cleanLintFacts(hostile, 3)!;
    expect(c.frameId).toBe(3);
    expect(c.legacyApi).toEqual([{ what: 'provideContext', where: 'y'.repeat(256) }]);
    expect(c.forms).toHaveLength(32);
    expect(c.forms[0]!.toolName).toHaveLength(256);
    expect(c.forms[0]!.autosubmit).toBe(false);
    expect(c.forms[0]!.fields).toHaveLength(64);
    expect(c.forms[0]!.submitTexts).toEqual([]);
    expect(c.scripts).toEqual({ scanned: 0, skipped: 0 });
    expect(() => lintPage([c])).not.toThrow();
  });
});
