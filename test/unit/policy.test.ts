/**
 * Policy floors (docs/design.md, "Trust rules"): three kinds of agent tool; reads
 * allowed, low-impact mutations reviewed unless allowed for one shared tab,
 * mutations and invocations always reviewed; page annotations never lower the
 * level; rules may deny. Each floor is attacked with the rule that would break it.
 */
import { describe, expect, it } from 'vitest';
import { AGENT_TOOLS } from '../../src/main/core/agent/tools';
import { ToolRouter, TOOL_KINDS, type PolicyQuery, type ToolKind } from '../../src/main/core/policy';

const allHints = { readOnlyHint: true, untrustedContentHint: false, consequentialHint: false, debugging: false };
const SHOP = 'https://shop.example';
/** A low-impact mutation on shared tab 7 at the shop (what a scroll will ask). */
const scroll: PolicyQuery = { faculty: 'semantic', operation: 'scroll', kind: 'low-impact-mutation', origin: SHOP, tabId: 7 };
/** The kind the console's own tool table gives a tool: the only source of a kind. */
const kindOf = (name: string): ToolKind => {
  const t = AGENT_TOOLS.find((x) => x.name === name);
  if (!t) throw new Error(`no agent tool ${name}`);
  return t.kind;
};

describe('ToolRouter: defaults', () => {
  it('has exactly three kinds', () => {
    expect(TOOL_KINDS).toEqual(['read', 'low-impact-mutation', 'mutation']);
  });

  it('reads are allowed; low-impact mutations, mutations and invocations need review', () => {
    const r = new ToolRouter();
    expect(r.decide({ faculty: 'list-tabs', kind: 'read' }).action).toBe('allow');
    expect(r.decide({ faculty: 'webmcp-discover', kind: 'read', origin: SHOP, tabId: 7 }).action).toBe('allow');
    expect(r.decide(scroll)).toMatchObject({ action: 'review', ruleIndex: null });
    expect(r.decide({ faculty: 'webmcp-invoke', kind: 'mutation', toolName: 'x' }).action).toBe('review');
    expect(r.decide({ faculty: 'semantic', operation: 'click', kind: 'mutation' }).action).toBe('review');
  });

  it('the invoke faculty is a mutation whatever kind the caller passed', () => {
    const r = new ToolRouter([{ tabId: 7, origin: SHOP, action: 'allow' }]);
    for (const kind of TOOL_KINDS) {
      expect(r.decide({ faculty: 'webmcp-invoke', kind, origin: SHOP, tabId: 7, toolName: 'buy' }).action).toBe('review');
    }
    expect(ToolRouter.effectiveKind({ faculty: 'webmcp-invoke', kind: 'read' })).toBe('mutation');
  });

  it('an unknown kind counts as a mutation (fail closed)', () => {
    const r = new ToolRouter([{ tabId: 7, origin: SHOP, action: 'allow' }]);
    expect(r.decide({ ...scroll, kind: 'peek' as ToolKind }).action).toBe('review');
  });

  it('a review rule on a read fails closed (deny): there is no approval dialog for reads', () => {
    const r = new ToolRouter([{ faculty: 'list-tabs', action: 'review' }]);
    expect(r.decide({ faculty: 'list-tabs', kind: 'read' }).action).toBe('deny');
  });
});

describe('ToolRouter: the floors under attack', () => {
  it('a wildcard allow does not lower a mutation', () => {
    const r = new ToolRouter([{ faculty: '*', kind: '*', origin: '*', tool: '*', action: 'allow' }]);
    const d = r.decide({ faculty: 'semantic', operation: 'click', kind: 'mutation', origin: SHOP, tabId: 7 });
    expect(d).toMatchObject({ action: 'review', ruleIndex: 0 });
    expect(d.reason).toMatch(/raised to review/);
  });

  it('an allow aimed at webmcp-invoke, even for one tab and one tool, does not skip review', () => {
    const r = new ToolRouter([{ faculty: 'webmcp-invoke', kind: 'mutation', origin: SHOP, tabId: 7, tool: 'buy', action: 'allow' }]);
    const d = r.decide({ faculty: 'webmcp-invoke', operation: 'invoke', kind: kindOf('webmcp_invoke'), origin: SHOP, tabId: 7, toolName: 'buy' });
    expect(d).toMatchObject({ action: 'review', ruleIndex: 0 });
  });

  it('an origin-wide or wildcard allow does not lower a low-impact mutation', () => {
    for (const rule of [{ origin: SHOP, action: 'allow' as const }, { origin: '*', kind: 'low-impact-mutation' as const, action: 'allow' as const }, { action: 'allow' as const }]) {
      const d = new ToolRouter([rule]).decide(scroll);
      expect(d, JSON.stringify(rule)).toMatchObject({ action: 'review', ruleIndex: 0 });
      expect(d.reason).toMatch(/only by a rule for one shared tab/);
    }
  });

  it('an allow for one shared tab lowers a low-impact mutation on that tab only, and only at its origin', () => {
    const r = new ToolRouter([{ tabId: 7, origin: SHOP, kind: 'low-impact-mutation', action: 'allow' }]);
    expect(r.decide(scroll)).toMatchObject({ action: 'allow', ruleIndex: 0 });
    // Another tab at the same origin: not allowed.
    expect(r.decide({ ...scroll, tabId: 8 })).toMatchObject({ action: 'review', ruleIndex: null });
    // The same tab after it navigated elsewhere: the rule no longer matches.
    expect(r.decide({ ...scroll, origin: 'https://bank.example' })).toMatchObject({ action: 'review', ruleIndex: null });
    // A call that names no tab is not that tab's.
    expect(r.decide({ ...scroll, tabId: null })).toMatchObject({ action: 'review', ruleIndex: null });
    // And it never reaches a real mutation on the same tab.
    expect(r.decide({ ...scroll, operation: 'click', kind: 'mutation' }).action).toBe('review');
  });

  it('a tab rule without an exact origin never matches (fail closed)', () => {
    const r = new ToolRouter([
      { tabId: 7, action: 'allow' },
      { tabId: 7, origin: '*', action: 'allow' },
    ]);
    expect(r.decide(scroll)).toMatchObject({ action: 'review', ruleIndex: null });
  });

  it("a rule claiming kind 'read' does not reach a mutation tool: the kind comes from the tool table", () => {
    const r = new ToolRouter([{ kind: 'read', action: 'allow' }]);
    expect(kindOf('webmcp_invoke')).toBe('mutation');
    const d = r.decide({ faculty: 'webmcp-invoke', operation: 'invoke', kind: kindOf('webmcp_invoke'), origin: SHOP, tabId: 7, toolName: 'buy', annotations: allHints });
    expect(d).toMatchObject({ action: 'review', ruleIndex: null });
    // Even when a caller mislabels the invocation 'read', the faculty floor holds.
    expect(r.decide({ faculty: 'webmcp-invoke', kind: 'read', origin: SHOP, toolName: 'buy' }).action).toBe('review');
    // The tool table marks the reads as reads.
    expect(kindOf('list_tabs')).toBe('read');
    expect(kindOf('webmcp_discover')).toBe('read');
  });

  it('page annotations (readOnlyHint) never lower the level', () => {
    const r = new ToolRouter([{ origin: SHOP, action: 'allow' }]);
    expect(r.decide({ faculty: 'webmcp-invoke', kind: 'mutation', origin: SHOP, toolName: 'peek', annotations: allHints }).action).toBe('review');
    expect(r.decide({ ...scroll, annotations: allHints }).action).toBe('review');
    expect(new ToolRouter().decide({ faculty: 'webmcp-invoke', kind: 'mutation', toolName: 'peek', annotations: allHints }).action).toBe('review');
  });

  it('a deny rule denies anything it matches; the first match wins', () => {
    const r = new ToolRouter([
      { origin: 'https://bank.example', action: 'deny', reason: 'no banking' },
      { tabId: 7, origin: SHOP, action: 'deny' },
      { faculty: '*', tool: '*', action: 'allow' },
    ]);
    const bank = r.decide({ faculty: 'webmcp-invoke', kind: 'mutation', origin: 'https://bank.example', toolName: 'pay' });
    expect(bank).toMatchObject({ action: 'deny', ruleIndex: 0, reason: 'no banking' });
    expect(r.decide({ faculty: 'webmcp-discover', kind: 'read', origin: 'https://bank.example' }).action).toBe('deny');
    expect(r.decide({ faculty: 'webmcp-discover', kind: 'read', origin: SHOP, tabId: 7 })).toMatchObject({ action: 'deny', ruleIndex: 1 });
    expect(r.decide({ faculty: 'webmcp-discover', kind: 'read', origin: SHOP, tabId: 8 })).toMatchObject({ action: 'allow', ruleIndex: 2 });
    expect(r.decide({ faculty: 'webmcp-invoke', kind: 'mutation', origin: SHOP, toolName: 'buy' })).toMatchObject({ action: 'review', ruleIndex: 2 });
  });

  it('a deny rule by kind matches an invocation as the mutation it is', () => {
    const r = new ToolRouter([{ kind: 'mutation', action: 'deny' }]);
    expect(r.decide({ faculty: 'webmcp-invoke', kind: 'read', toolName: 'x' }).action).toBe('deny');
    expect(r.decide({ faculty: 'list-tabs', kind: 'read' }).action).toBe('allow');
  });

  it('setRules applies to the very next decision; getRules hands out copies', () => {
    const r = new ToolRouter();
    expect(r.decide({ faculty: 'list-tabs', kind: 'read' }).action).toBe('allow');
    r.setRules([{ faculty: 'list-tabs', action: 'deny' }]);
    expect(r.decide({ faculty: 'list-tabs', kind: 'read' }).action).toBe('deny');
    const copy = r.getRules();
    copy[0]!.action = 'allow';
    expect(r.decide({ faculty: 'list-tabs', kind: 'read' }).action).toBe('deny');
  });
});
