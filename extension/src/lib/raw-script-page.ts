/**
 * The page side of a raw-JavaScript run (faculty `raw-js`; src/shared/raw-script.ts;
 * docs/raw-javascript.md): ONE self-contained function, injected as it is into the page's MAIN
 * world by chrome.scripting.executeScript({func, args, world: 'MAIN'}), and serialised with its
 * arguments into the source that chrome.userScripts.execute runs in the USER_SCRIPT world.
 *
 * It must not close over anything (executeScript serialises only the function's own text): the
 * bounds come in as an argument. In order:
 *  1. the frame's URL must be the exact one the grant's URL hash covered (else `navigated`);
 *  2. a probe `(0, eval)('void 0')` — no code of the agent's yet — says whether the page's CSP
 *     forbids evaluation (`script-src` without 'unsafe-eval': an EvalError) → `csp-blocked`;
 *  3. console.log/info/warn/error/debug are wrapped for the run (and restored after), the code is
 *     evaluated by indirect eval (global scope, its completion value is the value), a returned
 *     promise is awaited; a throw is the answer `threw`, never a failure of ours.
 * Everything answered is bounded here (value, console entries, error) and again by the console.
 */

/** The bounds the page function applies (src/shared/raw-script.ts RAW_SCRIPT_BOUNDS). */
export interface PageBounds {
  valueChars: number;
  consoleEntries: number;
  consoleEntryChars: number;
  errorChars: number;
}

/** What the page function answers. `output` is a ScriptOutput (src/shared/raw-script.ts). */
export type PageRunAnswer =
  | { kind: 'navigated'; url: string }
  | { kind: 'csp-blocked'; message: string }
  | { kind: 'ran'; output: Record<string, unknown> };

/**
 * Run `code` in the world this function was injected into. Self-contained (see the header).
 * @param code       the exact code the grant's hash binds.
 * @param expectedUrl the frame URL the grant's URL hash covered (`location.href` must equal it).
 * @param bounds     PageBounds.
 */
export async function runScriptInPage(code: string, expectedUrl: string, bounds: PageBounds): Promise<PageRunAnswer> {
  const href = String((globalThis as unknown as { location: { href: string } }).location.href);
  if (href !== expectedUrl) return { kind: 'navigated', url: href.slice(0, 2048) };
  const indirectEval = eval;
  try {
    indirectEval('void 0');
  } catch (e) {
    return { kind: 'csp-blocked', message: String(e instanceof Error ? e.message : e).slice(0, 500) };
  }
  const show = (v: unknown): string => {
    if (typeof v === 'string') return v;
    if (typeof v === 'undefined' || typeof v === 'function' || typeof v === 'symbol' || typeof v === 'bigint') return String(v);
    try {
      const j = JSON.stringify(v);
      return j === undefined ? String(v) : j;
    } catch {
      try {
        return String(v);
      } catch {
        return '[unprintable]';
      }
    }
  };
  const entries: Array<{ level: string; text: string }> = [];
  let omitted = 0;
  const levels = ['log', 'info', 'warn', 'error', 'debug'] as const;
  const c = console as unknown as Record<string, (...a: unknown[]) => void>;
  const saved = levels.map((l) => c[l]);
  for (const level of levels) {
    const original = c[level];
    c[level] = function (...a: unknown[]) {
      if (entries.length < bounds.consoleEntries) entries.push({ level, text: a.map(show).join(' ').slice(0, bounds.consoleEntryChars) });
      else omitted++;
      return original?.apply(console, a);
    };
  }
  const started = performance.now();
  let status: 'returned' | 'threw' = 'returned';
  let value: unknown;
  let error: string | null = null;
  try {
    value = await indirectEval(code);
  } catch (e) {
    status = 'threw';
    value = e;
    const name = e instanceof Error ? e.name : 'Thrown';
    const message = e instanceof Error ? e.message : show(e);
    const stack = e instanceof Error && typeof e.stack === 'string' ? `\n${e.stack}` : '';
    error = `${name}: ${message}${stack}`.slice(0, bounds.errorChars);
  } finally {
    levels.forEach((l, i) => (c[l] = saved[i] as (...a: unknown[]) => void));
  }
  const text = status === 'returned' ? show(value) : null;
  return {
    kind: 'ran',
    output: {
      status,
      valueType: typeof value,
      value: text === null ? null : text.slice(0, bounds.valueChars),
      valueTruncated: text !== null && text.length > bounds.valueChars,
      error,
      console: entries,
      consoleOmitted: omitted,
      elapsedMs: Math.round(performance.now() - started),
    },
  };
}
