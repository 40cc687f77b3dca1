/**
 * The page-side half of page lint (src/shared/page-lint.ts): the DOM facts of one document that the
 * console's `page` rules judge. Runs in the WebMCP content module (content/webmcp.ts), in the
 * isolated world, on `echo:webmcp:lint`. Reads, never changes the page; never reads a field's value.
 *
 * - Forms: every `<form toolname>` with its `toolautosubmit`, action, description, submit texts and
 *   its controls' type, name, id and autocomplete.
 * - Scripts: the legacy API is a MAIN-world call the isolated world cannot watch (docs/browser-facts.md,
 *   "Not pinned by a test" 7), so the scripts' sources are scanned statically, as a linter would:
 *   inline scripts' text, and same-origin external scripts fetched again (from the HTTP cache
 *   when it has them). Cross-origin scripts are skipped (counted), never fetched.
 * Everything is bounded by PAGE_FACT_LIMITS.
 */
import { PAGE_FACT_LIMITS, legacyApiMentions, type LegacyApiMention, type LintFormFacts, type PageLintFacts } from '../../../src/shared/page-lint';
import { stripUrl } from '../../../src/shared/url';

/** How long one script's fetch may take (ms): a slow script server must not hold the inspector. */
export const SCRIPT_FETCH_TIMEOUT_MS = 2_000;

const cut = (s: unknown): string => String(s ?? '').slice(0, PAGE_FACT_LIMITS.maxText);

/** The facts of one tool form (values never read). */
export function formFacts(form: HTMLFormElement): LintFormFacts {
  const controls = Array.from(form.elements).slice(0, PAGE_FACT_LIMITS.maxFields);
  const submitTexts: string[] = [];
  for (const el of controls) {
    if (submitTexts.length >= PAGE_FACT_LIMITS.maxSubmitTexts) break;
    if (el instanceof HTMLButtonElement && el.type === 'submit') submitTexts.push(cut(el.textContent?.trim()));
    else if (el instanceof HTMLInputElement && (el.type === 'submit' || el.type === 'image')) submitTexts.push(cut(el.value || el.alt));
  }
  return {
    toolName: cut(form.getAttribute('toolname')),
    toolDescription: cut(form.getAttribute('tooldescription')),
    autosubmit: form.hasAttribute('toolautosubmit'),
    action: cut(form.getAttribute('action')),
    submitTexts,
    fields: controls
      .filter((el): el is HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement => el instanceof HTMLInputElement || el instanceof HTMLSelectElement || el instanceof HTMLTextAreaElement)
      .map((el) => ({
        type: el instanceof HTMLInputElement ? el.type.toLowerCase() : el instanceof HTMLSelectElement ? 'select' : 'textarea',
        name: cut(el.getAttribute('name')),
        autocomplete: cut(el.getAttribute('autocomplete')),
        id: cut(el.id),
      })),
  };
}

/** A script's text, at most PAGE_FACT_LIMITS.maxScriptBytes; null when it cannot or may not be read. */
async function scriptText(script: HTMLScriptElement): Promise<string | null> {
  if (!script.src) return (script.textContent ?? '').slice(0, PAGE_FACT_LIMITS.maxScriptBytes);
  let url: URL;
  try {
    url = new URL(script.src, location.href);
  } catch {
    return null;
  }
  if (url.origin !== self.origin) return null;
  const ctl = new AbortController();
  const timer = setTimeout(() => ctl.abort(), SCRIPT_FETCH_TIMEOUT_MS);
  try {
    const res = await fetch(url.href, { signal: ctl.signal, credentials: 'same-origin', cache: 'force-cache' });
    if (!res.ok) return null;
    const declared = Number(res.headers.get('content-length') ?? '0');
    if (declared > PAGE_FACT_LIMITS.maxScriptBytes) return null;
    const text = await res.text();
    return text.length > PAGE_FACT_LIMITS.maxScriptBytes ? null : text;
  } catch {
    return null;
  } finally {
    clearTimeout(timer);
  }
}

/** The lint facts of this document (frameId is the worker's to set; -1 here). */
export async function collectPageLintFacts(): Promise<PageLintFacts> {
  const forms = Array.from(document.querySelectorAll('form[toolname]'))
    .filter((f): f is HTMLFormElement => f instanceof HTMLFormElement)
    .slice(0, PAGE_FACT_LIMITS.maxForms)
    .map(formFacts);
  const scripts = Array.from(document.scripts);
  const legacyApi: LegacyApiMention[] = [];
  let scanned = 0;
  let skipped = Math.max(0, scripts.length - PAGE_FACT_LIMITS.maxScripts);
  let inline = 0;
  const texts = await Promise.all(scripts.slice(0, PAGE_FACT_LIMITS.maxScripts).map(async (s) => ({ s, inline: s.src ? 0 : ++inline, text: await scriptText(s) })));
  for (const { s, inline: n, text } of texts) {
    if (text === null) {
      skipped++;
      continue;
    }
    scanned++;
    const where = s.src ? stripUrl(s.src) : `inline script ${n}`;
    for (const what of legacyApiMentions(text)) if (legacyApi.length < PAGE_FACT_LIMITS.maxMentions) legacyApi.push({ what, where: cut(where) });
  }
  return { frameId: -1, legacyApi, forms, scripts: { scanned, skipped } };
}
