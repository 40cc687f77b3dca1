/**
 * The console API's policy methods (listPolicyRules, addPolicyRule,
 * removePolicyRule) and the tab-rule cleanup the sharing code calls
 * (`dropTabRules`, on Sharing's `onShareEnded`). createConsoleApi (./index.ts)
 * wraps each `work` function in its handler (payload validation against API_PAYLOAD_SCHEMAS of src/shared/api-schemas.ts,
 * a `refused` receipt for bad input or a failed call; docs/design.md, "Conventions" §2).
 *
 * The person's rules live in settings.json (`policyRules`). Every change is
 * persisted first, then handed to the core's ToolRouter (the very next decision
 * uses it, no restart), then receipted (`policy-changed`) and pushed to the
 * renderer (`policy-rules`). The core's extra rules (`opts.policyRules`, for
 * tests and tools) stay in front and are neither listed nor editable here.
 *
 * Tab rules: a rule naming a tab records the tab's origin when it is made and
 * matches only while the tab is at that origin (src/main/core/policy); it is
 * dropped when that share ends (unshared, closed, navigated to another origin,
 * or shared anew), receipted with actor console.
 */
import type { ConsoleEvent } from '../../../shared/ipc';
import { canonicalJson } from '../../../shared/canonical';
import { POLICY_LIMITS, isExactOrigin, policyRuleProblem, type PolicyRule } from '../../../shared/policy';
import type { Receipt, ReceiptInput } from '../../../shared/receipt';
import { err, ok, type Result } from '../../../shared/result';
import type { SharedTab } from '../../../shared/types';
import type { ToolRouter } from '../policy';
import type { SettingsStore } from '../settings';

/** What the policy methods need from the core. */
export interface PolicyApiParts {
  settings: SettingsStore;
  /** The core's router: its rules are always `[...extraRules, ...settings.policyRules]`. */
  router: ToolRouter;
  /** Rules from the core's options, checked before the person's; not editable here. */
  extraRules: readonly PolicyRule[];
  /** The tabs shared right now (a tab rule is made only for one of them). */
  sharedTabs(): SharedTab[];
  /** Write one receipt; null when the ledger could not. */
  receipt(input: ReceiptInput): Receipt | null;
  emit(e: ConsoleEvent): void;
}

/** The policy methods' work (already-validated payloads) plus the cleanup hook. */
export interface PolicyApi {
  list(): Result<PolicyRule[]>;
  add(p: { rule: PolicyRule }): Result<PolicyRule[]>;
  remove(p: { index: number; rule: PolicyRule }): Result<PolicyRule[]>;
  /**
   * Drop every rule that names `tabId` (call it when that tab's share ends).
   * Receipted once (`policy-changed`, actor console, detail `{change:'dropped', rules, reason}`)
   * when anything was dropped. Never throws (a failure is logged through `onError`).
   * @returns how many rules were dropped.
   */
  dropTabRules(tabId: number, reason: string): number;
}

/**
 * Build the policy methods over the core's parts, and put the person's rules into
 * the router (they are the settings file's, after the core's extra rules).
 * @param onError told when dropping tab rules failed (e.g. settings.json not writable).
 */
export function createPolicyApi(parts: PolicyApiParts, onError: (message: string, e: unknown) => void = () => {}): PolicyApi {
  const { settings, router } = parts;
  const extra = structuredClone([...parts.extraRules]);
  const current = () => settings.get().policyRules;
  /** Persist, then apply, then tell the renderer; the receipt is the caller's. */
  const commit = (rules: PolicyRule[]) => {
    settings.update({ policyRules: rules });
    router.setRules([...extra, ...rules]);
    parts.emit({ kind: 'policy-rules', rules: structuredClone(rules) });
  };
  const where = (r: PolicyRule) => ({ origin: r.origin !== undefined && r.origin !== '*' ? r.origin : null, tabId: r.tabId ?? null });
  router.setRules([...extra, ...current()]);

  return {
    list: () => ok(current()),

    add(p) {
      const rule: PolicyRule = structuredClone(p.rule);
      if (rule.tabId !== undefined) {
        const tab = parts.sharedTabs().find((t) => t.tabId === rule.tabId);
        if (!tab) return err('tab-not-shared', `Tab ${rule.tabId} is not shared; a tab rule is made for a shared tab only.`);
        if (!isExactOrigin(tab.origin)) return err('invalid-rule', `Tab ${rule.tabId} is not at an http(s) origin; no rule can name it.`);
        if (rule.origin === undefined) rule.origin = tab.origin;
        else if (rule.origin !== tab.origin) return err('tab-origin-mismatch', `Tab ${rule.tabId} is at ${tab.origin}, not ${rule.origin.slice(0, 200)}.`);
      }
      const problem = policyRuleProblem(rule);
      if (problem) return err('invalid-rule', `This rule cannot be used: ${problem}.`);
      const rules = current();
      if (rules.length >= POLICY_LIMITS.maxRules) return err('too-many-rules', `There are already ${POLICY_LIMITS.maxRules} rules; remove one first.`);
      rules.push(rule);
      commit(rules);
      parts.receipt({ requestId: null, event: 'policy-changed', faculty: 'console', actor: { kind: 'person' }, ...where(rule), detail: { change: 'added', index: rules.length - 1, rule } });
      return ok(rules);
    },

    remove(p) {
      const rules = current();
      const at = rules[p.index];
      if (!at || canonicalJson(at) !== canonicalJson(p.rule)) {
        return err('policy-rule-changed', `Rule #${p.index + 1} is not the rule shown any more (the list changed meanwhile); nothing was removed. Look again.`);
      }
      rules.splice(p.index, 1);
      commit(rules);
      parts.receipt({ requestId: null, event: 'policy-changed', faculty: 'console', actor: { kind: 'person' }, ...where(at), detail: { change: 'removed', index: p.index, rule: at } });
      return ok(rules);
    },

    dropTabRules(tabId, reason) {
      try {
        const rules = current();
        const dropped = rules.filter((r) => r.tabId === tabId);
        if (dropped.length === 0) return 0;
        const kept = rules.filter((r) => r.tabId !== tabId);
        // Out of the router first: a tab rule must not outlive its share even if settings.json cannot be written.
        router.setRules([...extra, ...kept]);
        commit(kept);
        parts.receipt({
          requestId: null,
          event: 'policy-changed',
          faculty: 'console',
          actor: { kind: 'console' },
          tabId,
          origin: dropped[0]?.origin ?? null,
          detail: { change: 'dropped', rules: dropped, reason },
        });
        return dropped.length;
      } catch (e) {
        onError(`could not drop the policy rules of tab ${tabId}`, e);
        return 0;
      }
    },
  };
}
