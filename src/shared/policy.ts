/**
 * The policy's vocabulary, shared by the core (src/main/core/policy decides,
 * src/main/core/settings stores) and the renderer (the rule editor): the three
 * kinds of agent tool, the actions, the rule shape, its JSON Schema and the
 * checks a rule must pass beyond the schema. Pure TypeScript, no Node API.
 *
 * The kind of a call always comes from the console's own agent tool table
 * (src/main/core/agent/tools/), never from the page or a rule (docs/design.md,
 * "Trust rules": "Agent tools are of three kinds ...").
 */
import { FACULTIES, type Faculty } from './receipt';

/**
 * The kinds of agent tool, least to most consequential:
 * - `read`: looks, changes nothing (list_tabs, webmcp_discover); allowed by default;
 * - `low-impact-mutation`: changes only what the person sees, not what the site
 *   stores (focus, hover, scroll); reviewed unless the person allowed it for ONE shared tab;
 * - `mutation`: everything else (a page tool invocation, click, type, ...); always reviewed.
 */
export const TOOL_KINDS = ['read', 'low-impact-mutation', 'mutation'] as const;
export type ToolKind = (typeof TOOL_KINDS)[number];

/** What the policy answers: run without asking, ask the person (one-use approval), or refuse. */
export const POLICY_ACTIONS = ['allow', 'review', 'deny'] as const;
export type PolicyAction = (typeof POLICY_ACTIONS)[number];

/** The faculties a rule may name: the agent-facing capabilities of the ladder ('link' and 'console' are the console's own events). */
export type PolicyFaculty = Exclude<Faculty, 'link' | 'console'>;
export const POLICY_FACULTIES: readonly PolicyFaculty[] = FACULTIES.filter((f): f is PolicyFaculty => f !== 'link' && f !== 'console');

/**
 * One local rule. Every present matcher must match; an absent matcher (or `*`)
 * matches everything. The first matching rule wins; then the floors apply
 * (src/main/core/policy): a rule never lowers a mutation, and lowers a
 * low-impact mutation only when it names one tab.
 */
export interface PolicyRule {
  faculty?: PolicyFaculty | '*';
  /** The agent tool's declared kind (from the tool table). */
  kind?: ToolKind | '*';
  /** An exact origin as `URL.origin` writes it (`https://shop.example`), or `*`. Required (exact) with `tabId`. */
  origin?: string;
  /**
   * One shared tab (Chrome's tabId). A tab rule matches only while that tab is at
   * `origin` (the tab's origin when the rule was made), and the console drops it
   * when the tab stops being shared (which includes a navigation to another origin).
   */
  tabId?: number;
  /** An exact page tool name (WebMCP), or `*`. */
  tool?: string;
  action: PolicyAction;
  /** Shown to the agent and recorded when the rule decides. */
  reason?: string;
}

/** Bounds of a rule list and its strings (settings.json and the console API). */
export const POLICY_LIMITS = { maxRules: 1000, maxOriginLength: 2048, maxToolLength: 128, maxReasonLength: 500 } as const;

/** JSON Schema of one rule (ajv, strict). The checks a schema cannot say are in `policyRuleProblem`. */
export const POLICY_RULE_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['action'],
  properties: {
    faculty: { enum: [...POLICY_FACULTIES, '*'] },
    kind: { enum: [...TOOL_KINDS, '*'] },
    origin: { type: 'string', minLength: 1, maxLength: POLICY_LIMITS.maxOriginLength },
    tabId: { type: 'integer', minimum: 0, maximum: 2_147_483_647 },
    tool: { type: 'string', minLength: 1, maxLength: POLICY_LIMITS.maxToolLength },
    action: { enum: [...POLICY_ACTIONS] },
    reason: { type: 'string', maxLength: POLICY_LIMITS.maxReasonLength },
  },
} as const;

/** JSON Schema of a rule list (settings.json `policyRules`). */
export const POLICY_RULES_SCHEMA = { type: 'array', maxItems: POLICY_LIMITS.maxRules, items: POLICY_RULE_SCHEMA } as const;

/**
 * Whether `s` is an origin exactly as `new URL(...).origin` serialises it
 * (lower-case scheme and host, default port omitted, no path): a rule with any
 * other spelling would silently never match, which for a deny rule is fail-open.
 * Only http(s) origins: the agent never sees other schemes.
 */
export function isExactOrigin(s: string): boolean {
  if (!/^https?:\/\//.test(s)) return false;
  try {
    return new URL(s).origin === s;
  } catch {
    return false;
  }
}

/**
 * What is wrong with a schema-valid rule, in a sentence, or null when nothing is:
 * `origin` must be `*` or an exact origin; a tab rule must name the tab's exact
 * origin (never `*`); `tool` must be `*` or a name WebMCP accepts
 * (`[A-Za-z0-9_.-]{1,128}`, docs/browser-facts.md, "WebMCP: names and handles").
 */
export function policyRuleProblem(r: PolicyRule): string | null {
  if (r.origin !== undefined && r.origin !== '*' && !isExactOrigin(r.origin)) return `origin ${JSON.stringify(r.origin.slice(0, 100))} is not "*" or an exact http(s) origin such as https://shop.example`;
  if (r.tabId !== undefined && (r.origin === undefined || r.origin === '*')) return 'a tab rule must name the exact origin of the tab';
  if (r.tool !== undefined && r.tool !== '*' && !/^[A-Za-z0-9_.-]{1,128}$/.test(r.tool)) return `tool ${JSON.stringify(r.tool.slice(0, 100))} is not "*" or a page tool name`;
  return null;
}
