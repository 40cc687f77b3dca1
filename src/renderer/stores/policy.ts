/**
 * The person's policy rules as the console reports them, and adding or
 * removing one. The console checks every rule again (and fills a tab rule's
 * origin); this store only keeps what it answered.
 */
import { createStore } from 'zustand/vanilla';
import type { ConsoleApi } from '../../shared/ipc';
import type { PolicyRule } from '../../shared/policy';
import type { ErrorInfo } from '../../shared/result';

/**
 * What an allow rule cannot do, given the floors (src/main/core/policy), in a sentence
 * for the editor; null when the rule does what it says.
 */
export function ruleEffect(r: PolicyRule): string | null {
  if (r.action !== 'allow') return null;
  if (r.faculty === 'webmcp-invoke' || r.kind === 'mutation') return 'Mutations and page tool invocations are always reviewed: this allow changes nothing for them.';
  if (r.tabId === undefined && r.kind === 'low-impact-mutation') return 'A low-impact mutation is allowed only by a rule for one shared tab: without a tab this stays reviewed.';
  if (r.tabId === undefined && r.kind !== 'read') return 'Allows reads only: mutations stay reviewed, and low-impact mutations need a rule for one tab.';
  return null;
}

export interface PolicyState {
  /** null until the first answer. */
  rules: PolicyRule[] | null;
  loading: boolean;
  /** Adding or removing right now. */
  busy: boolean;
  error: ErrorInfo | null;
  setRules(rules: PolicyRule[]): void;
  load(): Promise<void>;
  /** Append one rule (the console checks it last). */
  add(rule: PolicyRule): Promise<boolean>;
  /** Remove the rule shown at `index` (refused by the console if the list changed meanwhile). */
  remove(index: number): Promise<void>;
}

/** Create the policy store over the console API. */
export function createPolicyStore(api: Pick<ConsoleApi, 'listPolicyRules' | 'addPolicyRule' | 'removePolicyRule'>) {
  return createStore<PolicyState>()((set, get) => ({
    rules: null,
    loading: false,
    busy: false,
    error: null,
    setRules: (rules) => set({ rules }),
    async load() {
      set({ loading: true });
      const r = await api.listPolicyRules();
      set(r.ok ? { loading: false, rules: r.value } : { loading: false, error: r.error });
    },
    async add(rule) {
      set({ busy: true, error: null });
      const r = await api.addPolicyRule({ rule });
      set(r.ok ? { busy: false, rules: r.value } : { busy: false, error: r.error });
      return r.ok;
    },
    async remove(index) {
      const rule = get().rules?.[index];
      if (!rule) return;
      set({ busy: true, error: null });
      const r = await api.removePolicyRule({ index, rule });
      if (r.ok) return set({ busy: false, rules: r.value });
      set({ busy: false, error: r.error });
      // The list changed under us: show the console's current one.
      if (r.error.code === 'policy-rule-changed') await get().load();
    },
  }));
}

export type PolicyStore = ReturnType<typeof createPolicyStore>;
