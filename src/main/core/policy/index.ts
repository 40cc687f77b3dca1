/**
 * Policy: the console's local decision for every agent call, before anything
 * reaches the person or the page (docs/design.md, "Trust rules": "Agent tools are of
 * three kinds ... No rule lowers a mutation's review.").
 *
 * A `ToolRouter` holds local rules (src/shared/policy.ts: by faculty, kind,
 * origin, tab and page tool name) that answer 'allow' | 'review' | 'deny'; the
 * first matching rule wins, then the floors apply. The kind is the agent tool's
 * declared kind (src/main/core/agent/tools/), never a claim of the page.
 *
 *  - `read`: allowed by default (with receipts). A 'review' on a read is
 *    answered 'deny': the console has no approval dialog for reads, and failing
 *    closed beats silently allowing.
 *  - `low-impact-mutation` (focus, hover, scroll): 'review' by default. An
 *    'allow' rule lowers it only when the rule names exactly one tab (`tabId`,
 *    bound to the tab's origin at the rule's creation); an origin-wide or
 *    wildcard 'allow' is raised back to 'review'.
 *  - `mutation`: always at least 'review'; no rule lowers it (a rule may deny).
 *    The faculty 'webmcp-invoke' is a mutation whatever kind the caller passed
 *    (a defensive floor), and so is any kind this file does not know.
 *
 * Page annotations (readOnlyHint, ...) are claims made by the page: they are
 * recorded and shown, and NEVER lower the level. (They are not used to raise it
 * either: review is already the floor for anything they could describe.)
 */
import type { Faculty } from '../../../shared/receipt';
import type { ToolAnnotations } from '../../../shared/types';
import type { PolicyAction, PolicyRule, ToolKind } from '../../../shared/policy';

export { POLICY_ACTIONS, POLICY_FACULTIES, POLICY_RULES_SCHEMA, POLICY_RULE_SCHEMA, TOOL_KINDS, isExactOrigin, policyRuleProblem } from '../../../shared/policy';
export type { PolicyAction, PolicyFaculty, PolicyRule, ToolKind } from '../../../shared/policy';

/** What the policy is asked about. */
export interface PolicyQuery {
  faculty: Faculty;
  /** The operation within the faculty ('discover', 'invoke', 'focus', ...): recorded in the reason, not matched. */
  operation?: string;
  /** From the agent tool table, never from the page. */
  kind: ToolKind;
  /** The origin of the page the call is about (the tab's top document), when known. */
  origin?: string | null;
  /** The shared tab the call is about, when it is about one. */
  tabId?: number | null;
  toolName?: string | null;
  /** Page claims: accepted for the record, never used to lower the level. */
  annotations?: ToolAnnotations;
}

export interface PolicyDecision {
  action: PolicyAction;
  /** Index of the rule that matched in `getRules()`, or null for the default. */
  ruleIndex: number | null;
  /** Why, in words for the agent and the receipt. */
  reason: string;
}

const RANK: Record<PolicyAction, number> = { allow: 0, review: 1, deny: 2 };

/**
 * Decides allow / review / deny. The first matching rule wins, then the floors
 * are applied (see the file header). Pure and synchronous.
 */
export class ToolRouter {
  private rules: PolicyRule[];

  constructor(rules: PolicyRule[] = []) {
    this.rules = structuredClone(rules);
  }

  /** Replace the rule list (the console's rule editor; the very next decision uses it). */
  setRules(rules: PolicyRule[]): void {
    this.rules = structuredClone(rules);
  }

  /** A copy of the rules, in the order they are checked. */
  getRules(): PolicyRule[] {
    return structuredClone(this.rules);
  }

  /** The level required for `q`; never lower than the floors. */
  decide(q: PolicyQuery): PolicyDecision {
    const kind = ToolRouter.effectiveKind(q);
    const floor = ToolRouter.floor(q);
    const idx = this.rules.findIndex((r) => matches(r, q, kind));
    const rule = idx >= 0 ? this.rules[idx] : undefined;
    const what = q.operation ? `${q.faculty} ${q.operation}` : q.faculty;
    let action: PolicyAction = rule ? rule.action : floor;
    let reason = rule
      ? (rule.reason ?? `local rule #${idx + 1} (${rule.action})`)
      : kind === 'read'
        ? 'reads of shared tabs are allowed'
        : kind === 'low-impact-mutation'
          ? `${what} is a low-impact mutation: it needs the person's approval unless they allowed it for this tab`
          : "every page tool invocation and every mutation needs the person's one-use approval";
    if (RANK[action] < RANK[floor]) {
      // Only a low-impact mutation can be lowered, and only by a rule that names this one tab.
      const tabAllow = kind === 'low-impact-mutation' && rule !== undefined && isTabRule(rule) && rule.tabId === q.tabId;
      if (!tabAllow) {
        action = floor;
        reason =
          kind === 'low-impact-mutation'
            ? `${reason}; raised to review: a low-impact mutation is allowed only by a rule for one shared tab`
            : `${reason}; raised to review: invocations and mutations are always reviewed`;
      }
    }
    if (action === 'review' && kind === 'read') {
      action = 'deny';
      reason = `${reason}; reads cannot be reviewed, so this one is denied (fail closed)`;
    }
    return { action, ruleIndex: rule ? idx : null, reason };
  }

  /**
   * The kind the floors use: the declared kind, except that a WebMCP invocation is
   * always a mutation, and an unknown kind counts as a mutation (fail closed).
   */
  static effectiveKind(q: Pick<PolicyQuery, 'faculty' | 'kind'>): ToolKind {
    if (q.faculty === 'webmcp-invoke') return 'mutation';
    return q.kind === 'read' || q.kind === 'low-impact-mutation' ? q.kind : 'mutation';
  }

  /** The level for a query without rules, independent of page annotations: allow for reads, review otherwise. */
  static floor(q: Pick<PolicyQuery, 'faculty' | 'kind'>): PolicyAction {
    return ToolRouter.effectiveKind(q) === 'read' ? 'allow' : 'review';
  }
}

/** A rule that names one tab at one exact origin (policyRuleProblem refuses a tab rule without one). */
function isTabRule(r: PolicyRule): r is PolicyRule & { tabId: number; origin: string } {
  return r.tabId !== undefined && r.origin !== undefined && r.origin !== '*';
}

/** Whether every matcher of `r` matches; the kind matched is the effective one (an invocation is a mutation). */
function matches(r: PolicyRule, q: PolicyQuery, kind: ToolKind): boolean {
  if (r.faculty !== undefined && r.faculty !== '*' && r.faculty !== q.faculty) return false;
  if (r.kind !== undefined && r.kind !== '*' && r.kind !== kind) return false;
  if (r.origin !== undefined && r.origin !== '*' && r.origin !== (q.origin ?? null)) return false;
  if (r.tabId !== undefined) {
    // A tab rule without its origin never matches (fail closed); with it, only while the tab is still there.
    if (!isTabRule(r) || r.tabId !== (q.tabId ?? null)) return false;
  }
  if (r.tool !== undefined && r.tool !== '*' && r.tool !== (q.toolName ?? null)) return false;
  return true;
}
