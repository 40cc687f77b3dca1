/**
 * Policy: the console's local decision for every agent call, before anything
 * reaches the person or the page (docs/design.md, "Trust rules").
 *
 * A `ToolRouter` holds local rules (by faculty, origin and page tool name) that
 * answer 'allow' | 'review' | 'deny'. Two floors no rule can lower:
 *  - every WebMCP invocation (`faculty: 'webmcp-invoke'`) and every call whose
 *    agent-tool `kind` is a mutation (low-impact or not) is at least 'review' (a one-use approval);
 *    a rule may deny it, never skip review;
 *  - page annotations (readOnlyHint, ...) are claims made by the page: they are
 *    recorded and shown, and NEVER lower the level. (They are not used to raise
 *    it either: review is already the floor for anything they could describe.)
 * Reads (list_tabs, webmcp_discover) default to 'allow' (with receipts). A
 * 'review' rule on a read is answered 'deny': the console has no approval
 * dialog for reads, and failing closed beats silently allowing.
 */
import type { Faculty } from '../../../shared/receipt';
import type { ToolAnnotations } from '../../../shared/types';

export type PolicyAction = 'allow' | 'review' | 'deny';

/** Whether an agent-facing tool reads or mutates (declared once in the agent tool table). */
export type ToolKind = 'read' | 'low-impact-mutation' | 'mutation';

/**
 * One local rule. Every present matcher must match; absent matchers match all.
 * `origin` is an exact origin (`https://shop.example`) or `*`; `tool` is an exact
 * page tool name or `*`.
 */
export interface PolicyRule {
  faculty?: Faculty | '*';
  origin?: string;
  tool?: string;
  action: PolicyAction;
  /** Shown to the agent and recorded when the rule denies. */
  reason?: string;
}

/** What the policy is asked about. */
export interface PolicyQuery {
  faculty: Faculty;
  /** From the agent tool table, never from the page. */
  kind: ToolKind;
  origin?: string | null;
  toolName?: string | null;
  /** Page claims: accepted for the record, never used to lower the level. */
  annotations?: ToolAnnotations;
}

export interface PolicyDecision {
  action: PolicyAction;
  /** Index of the rule that matched, or null for the default. */
  ruleIndex: number | null;
  /** Why, in words for the agent and the receipt. */
  reason: string;
}

const RANK: Record<PolicyAction, number> = { allow: 0, review: 1, deny: 2 };

/** JSON Schema of a rule list, for settings-file validation (ajv). */
export const POLICY_RULES_SCHEMA = {
  type: 'array',
  maxItems: 1000,
  items: {
    type: 'object',
    additionalProperties: false,
    required: ['action'],
    properties: {
      faculty: { type: 'string', maxLength: 64 },
      origin: { type: 'string', maxLength: 2048 },
      tool: { type: 'string', maxLength: 128 },
      action: { enum: ['allow', 'review', 'deny'] },
      reason: { type: 'string', maxLength: 500 },
    },
  },
} as const;

/**
 * Decides allow / review / deny. The first matching rule wins, then the floors
 * are applied (see the file header). Pure and synchronous.
 */
export class ToolRouter {
  private rules: PolicyRule[];

  constructor(rules: PolicyRule[] = []) {
    this.rules = [...rules];
  }

  /** Replace the rule list (e.g. after the settings file changed). */
  setRules(rules: PolicyRule[]): void {
    this.rules = [...rules];
  }

  getRules(): PolicyRule[] {
    return [...this.rules];
  }

  /** The level required for `q`; never lower than the floors. */
  decide(q: PolicyQuery): PolicyDecision {
    const floor = ToolRouter.floor(q);
    const idx = this.rules.findIndex((r) => matches(r, q));
    const rule = idx >= 0 ? this.rules[idx] : undefined;
    let action: PolicyAction = rule ? rule.action : floor;
    let reason = rule
      ? (rule.reason ?? `local rule #${idx + 1} (${rule.action})`)
      : floor === 'review'
        ? 'every page tool invocation and every mutation needs the person\'s one-use approval'
        : 'reads of shared tabs are allowed';
    if (RANK[action] < RANK[floor]) {
      // A rule may not skip review for an invocation or a mutation.
      action = floor;
      reason = `${reason}; raised to review: invocations and mutations are always reviewed`;
    }
    if (action === 'review' && q.kind === 'read' && q.faculty !== 'webmcp-invoke') {
      action = 'deny';
      reason = `${reason}; reads cannot be reviewed, so this one is denied (fail closed)`;
    }
    return { action, ruleIndex: rule ? idx : null, reason };
  }

  /** The minimum level for a query, independent of rules and of page annotations. */
  static floor(q: Pick<PolicyQuery, 'faculty' | 'kind'>): PolicyAction {
    return q.kind !== 'read' || q.faculty === 'webmcp-invoke' ? 'review' : 'allow';
  }
}

function matches(r: PolicyRule, q: PolicyQuery): boolean {
  if (r.faculty !== undefined && r.faculty !== '*' && r.faculty !== q.faculty) return false;
  if (r.origin !== undefined && r.origin !== '*' && r.origin !== (q.origin ?? null)) return false;
  if (r.tool !== undefined && r.tool !== '*' && r.tool !== (q.toolName ?? null)) return false;
  return true;
}
