/**
 * Recall of our semantic snapshot against Playwright's aria snapshot (issue 10,
 * "Measured"; test/bench/snapshot.bench.ts): which share of what Playwright's
 * `locator('body').ariaSnapshot()` shows our `page_snapshot` text also holds.
 * Pure: both texts in, figures out; test/unit/snapshot-recall.test.ts covers it.
 *
 * Three figures, each a multiset recall (a node or token Playwright shows twice
 * must be held twice):
 * - **named nodes**: Playwright's nodes with a name, as (role, name); ours as
 *   (role, name) too, `h1`…`h6` read as `heading` and `textbox:date` as
 *   `textbox`. Reported for all roles and for the interactive ones
 *   (INTERACTIVE_ROLES; target 100%).
 * - **text tokens**: the words (runs of letters and digits, case kept) of
 *   Playwright's text: `- text:` lines and the text after a node's `: ` (a
 *   paragraph's text, a field's value); not its names (the figure above) nor
 *   its `/url` and `/placeholder` properties. Ours: the words of every string
 *   literal (names, values, text), since a label's text that Playwright shows
 *   as text is the field's name in ours.
 * - **headings**: (level, name) of Playwright's `heading "…" [level=N]`
 *   against our `hN "…"` lines.
 *
 * Names are compared with white space collapsed. Each figure lists up to 12
 * misses, so a person can see what was lost.
 */
import { jsonStringAt } from '../../src/shared/snapshot-lines';

/** Roles an agent acts on (WAI-ARIA widget roles with a name): the named-interactive figure, target 100%. */
export const INTERACTIVE_ROLES: ReadonlySet<string> = new Set([
  'button', 'link', 'checkbox', 'radio', 'switch', 'textbox', 'searchbox', 'combobox', 'listbox', 'option', 'slider', 'spinbutton',
  'tab', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'treeitem',
]);

/** One named node. */
export interface Named {
  role: string;
  name: string;
}

/** What a snapshot text holds, for the comparison. */
export interface Holdings {
  named: Named[];
  /** Text tokens (Playwright: text and values only; ours: every string literal). */
  tokens: string[];
  headings: Array<{ level: number; name: string }>;
  /** Lines read. */
  lines: number;
  /** Our truncation marker was present (never for Playwright). */
  truncated: boolean;
  /**
   * Ours only: UTF-8 bytes of every string literal, unescaped (names, values,
   * text): the least any rendering that keeps all of them could weigh, with
   * no byte for roles, refs, quotes, indentation or line ends.
   */
  stringBytes: number;
}

const collapse = (s: string) => s.replace(/\s+/g, ' ').trim();
const WORD = /[\p{L}\p{N}]+/gu;
export const tokensOf = (s: string): string[] => s.match(WORD) ?? [];


/** A YAML double-quoted scalar as Playwright writes it (yamlEscapeValueIfNeeded: JSON-like, plus `\xHH`), or the plain scalar. */
function yamlValue(v: string): string {
  if (!v.startsWith('"')) return v;
  const json = v.replace(/\\x([0-9a-fA-F]{2})/g, '\\u00$1');
  try {
    return JSON.parse(json) as string;
  } catch {
    return v.slice(1, -1);
  }
}

/**
 * Read Playwright's aria snapshot (the YAML of `ariaSnapshot()`,
 * playwright-core's renderAriaSnapshotAsYaml): `- key`, `- key: text` or
 * `- key:` with children; a key is `role ["name"] [attr]...`, single-quoted
 * as a whole when YAML needs it; `- text: …` and `- /url: …` are text and
 * properties.
 */
export function readPlaywright(yaml: string): Holdings {
  const out: Holdings = { named: [], tokens: [], headings: [], lines: 0, truncated: false, stringBytes: 0 };
  for (const raw of yaml.split('\n')) {
    const line = raw.trimStart();
    if (!line.startsWith('- ')) continue;
    out.lines++;
    let rest = line.slice(2);
    let key: string;
    let text: string | undefined;
    if (rest.startsWith("'")) {
      // A single-quoted key: '' is a quote; it ends at a lone quote.
      let j = 1;
      let k = '';
      for (; j < rest.length; j++) {
        if (rest[j] === "'") {
          if (rest[j + 1] === "'") (k += "'"), j++;
          else break;
        } else k += rest[j];
      }
      key = k;
      rest = rest.slice(j + 1);
      if (rest.startsWith(': ')) text = rest.slice(2);
    } else {
      // The name's literal may hold ': ' (Playwright quotes such keys, but read it anyway): look past it.
      const sp0 = rest.indexOf(' ');
      const lit0 = sp0 >= 0 && rest[sp0 - 1] !== ':' ? jsonStringAt(rest, sp0 + 1) : null;
      const colon = rest.indexOf(': ', lit0 ? lit0.end : 0);
      if (colon >= 0) (key = rest.slice(0, colon)), (text = rest.slice(colon + 2));
      else key = rest.endsWith(':') ? rest.slice(0, -1) : rest;
    }
    if (key.startsWith('/')) continue; // /url, /placeholder: properties, not page text we compare
    const sp = key.indexOf(' ');
    const role = sp < 0 ? key : key.slice(0, sp);
    if (role === 'text') {
      if (text !== undefined) out.tokens.push(...tokensOf(yamlValue(text)));
      continue;
    }
    const lit = sp < 0 ? null : jsonStringAt(key, sp + 1);
    if (lit && lit.value) {
      const name = collapse(lit.value);
      out.named.push({ role, name });
      if (role === 'heading') {
        const m = / \[level=(\d+)\]/.exec(key.slice(lit.end));
        out.headings.push({ level: m ? Number(m[1]) : 2, name });
      }
    }
    if (text !== undefined) out.tokens.push(...tokensOf(yamlValue(text)));
  }
  return out;
}

/**
 * Read our snapshot text (src/shared/snapshot.ts, the format): element lines
 * `role[:type][ "name"][ ="value"][ [states]][ #ref]`, text lines (a string
 * literal), `[truncated: …]`. Indentation is ignored.
 */
export function readOurs(text: string): Holdings {
  const out: Holdings = { named: [], tokens: [], headings: [], lines: 0, truncated: false, stringBytes: 0 };
  for (const raw of text.split('\n')) {
    const line = raw.trimStart();
    if (!line) continue;
    out.lines++;
    if (line.startsWith('[truncated')) {
      out.truncated = true;
      continue;
    }
    // Every string literal on the line, wherever it is: names, values, text.
    const strings: string[] = [];
    for (let i = line.indexOf('"'); i >= 0; ) {
      const lit = jsonStringAt(line, i);
      if (!lit) break;
      strings.push(lit.value);
      i = line.indexOf('"', lit.end);
    }
    for (const s of strings) {
      out.tokens.push(...tokensOf(s));
      out.stringBytes += new TextEncoder().encode(s).length;
    }
    if (line.startsWith('"')) continue;
    const m = /^([a-z][a-z0-9-]*)(?::[a-z-]+)? "/.exec(line);
    if (!m) continue;
    const lit = jsonStringAt(line, (m[0] as string).length - 1);
    if (!lit || !lit.value) continue;
    const name = collapse(lit.value);
    const h = /^h([1-9])$/.exec(m[1] as string);
    out.named.push({ role: h ? 'heading' : (m[1] as string), name });
    if (h) out.headings.push({ level: Number(h[1]), name });
  }
  return out;
}

/** A multiset recall: how many of `want` (with repeats) `have` holds, and up to 12 misses with their counts. */
export interface Recall {
  /** held / total (1 when total is 0). */
  recall: number;
  held: number;
  total: number;
  misses: Array<{ item: string; missing: number }>;
}

export function multisetRecall(want: readonly string[], have: readonly string[]): Recall {
  const pool = new Map<string, number>();
  for (const h of have) pool.set(h, (pool.get(h) ?? 0) + 1);
  const need = new Map<string, number>();
  for (const w of want) need.set(w, (need.get(w) ?? 0) + 1);
  let held = 0;
  const misses: Recall['misses'] = [];
  for (const [item, n] of need) {
    const got = Math.min(n, pool.get(item) ?? 0);
    held += got;
    if (got < n) misses.push({ item, missing: n - got });
  }
  misses.sort((a, b) => b.missing - a.missing || (a.item < b.item ? -1 : 1));
  const total = want.length;
  return { recall: total ? held / total : 1, held, total, misses: misses.slice(0, 12) };
}

const namedKey = (n: Named) => `${n.role} ${JSON.stringify(n.name)}`;

/** The comparison of one page. */
export interface RecallFigures {
  named: Recall;
  namedInteractive: Recall;
  /** Misses of `named` counted by role (all of them, not only the first 12). */
  namedMissesByRole: Record<string, number>;
  text: Recall;
  headings: Recall;
}

/** Compare our snapshot text with Playwright's aria snapshot of the same page. */
export function compareSnapshots(ours: string, playwright: string): RecallFigures & { ours: Holdings; playwright: Holdings } {
  const o = readOurs(ours);
  const p = readPlaywright(playwright);
  const named = multisetRecall(p.named.map(namedKey), o.named.map(namedKey));
  const inter = (xs: Named[]) => xs.filter((n) => INTERACTIVE_ROLES.has(n.role)).map(namedKey);
  const byRole: Record<string, number> = {};
  // Count every miss by role (multisetRecall keeps only 12 examples).
  const pool = new Map<string, number>();
  for (const n of o.named) pool.set(namedKey(n), (pool.get(namedKey(n)) ?? 0) + 1);
  for (const n of p.named) {
    const k = namedKey(n);
    const c = pool.get(k) ?? 0;
    if (c > 0) pool.set(k, c - 1);
    else byRole[n.role] = (byRole[n.role] ?? 0) + 1;
  }
  const hk = (h: { level: number; name: string }) => `h${h.level} ${JSON.stringify(h.name)}`;
  return {
    named,
    namedInteractive: multisetRecall(inter(p.named), inter(o.named)),
    namedMissesByRole: byRole,
    text: multisetRecall(p.tokens, o.tokens),
    headings: multisetRecall(p.headings.map(hk), o.headings.map(hk)),
    ours: o,
    playwright: p,
  };
}
