/**
 * Policy floors (docs/design.md, "Trust rules"): invocations and mutations are always
 * reviewed, annotations never lower the level, rules may deny.
 */
import { describe, expect, it } from 'vitest';
import { ToolRouter } from '../../src/main/core/policy';

const allHints = { readOnlyHint: true, untrustedContentHint: false, consequentialHint: false, debugging: false };

describe('ToolRouter', () => {
  it('reads are allowed by default; invocations and mutations need review', () => {
    const r = new ToolRouter();
    expect(r.decide({ faculty: 'list-tabs', kind: 'read' }).action).toBe('allow');
    expect(r.decide({ faculty: 'webmcp-discover', kind: 'read', origin: 'https://a.example' }).action).toBe('allow');
    expect(r.decide({ faculty: 'webmcp-invoke', kind: 'mutation', toolName: 'x' }).action).toBe('review');
    // The invoke faculty is reviewed even if some caller marked it 'read'.
    expect(r.decide({ faculty: 'webmcp-invoke', kind: 'read', toolName: 'x' }).action).toBe('review');
    // Any mutation is reviewed, whatever the faculty.
    expect(r.decide({ faculty: 'semantic', kind: 'mutation' }).action).toBe('review');
  });

  it('page annotations never lower the level', () => {
    const r = new ToolRouter();
    expect(r.decide({ faculty: 'webmcp-invoke', kind: 'mutation', toolName: 'peek', annotations: allHints }).action).toBe('review');
  });

  it('an allow rule cannot skip review; a deny rule denies; first match wins', () => {
    const r = new ToolRouter([
      { origin: 'https://bank.example', action: 'deny', reason: 'no banking' },
      { faculty: '*', tool: '*', action: 'allow' },
    ]);
    const inv = r.decide({ faculty: 'webmcp-invoke', kind: 'mutation', origin: 'https://shop.example', toolName: 'buy', annotations: allHints });
    expect(inv.action).toBe('review');
    expect(inv.reason).toMatch(/raised to review/);
    const bank = r.decide({ faculty: 'webmcp-invoke', kind: 'mutation', origin: 'https://bank.example', toolName: 'pay' });
    expect(bank).toMatchObject({ action: 'deny', ruleIndex: 0, reason: 'no banking' });
    expect(r.decide({ faculty: 'webmcp-discover', kind: 'read', origin: 'https://bank.example' }).action).toBe('deny');
  });

  it('a review rule on a read fails closed (deny): there is no approval dialog for reads', () => {
    const r = new ToolRouter([{ faculty: 'list-tabs', action: 'review' }]);
    expect(r.decide({ faculty: 'list-tabs', kind: 'read' }).action).toBe('deny');
  });
});
