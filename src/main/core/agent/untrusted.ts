/**
 * Labelling page-provided text for the agent (docs/design.md, "Trust rules": results
 * are labelled untrusted). Everything a page wrote (tool names, titles,
 * descriptions, schemas, annotations, results, tab titles) reaches the agent
 * only inside
 *
 *   <untrusted-page-content source="...">
 *   ...
 *   </untrusted-page-content>
 *
 * so an agent can tell data from instructions. A page must not be able to end
 * the block early: any look-alike of the delimiter inside page text (any case,
 * fullwidth letters, Unicode hyphens or underscores for '-', white space or
 * invisible format characters between the letters) is replaced by
 * `[delimiter-lookalike removed]`. JSON blocks additionally escape `<` and `>`
 * as \u003c and \u003e, which keeps the JSON equal in value and leaves no tag
 * at all.
 */

export const UNTRUSTED_TAG = 'untrusted-page-content';

/** The marker that replaces a delimiter look-alike in page text. */
export const LOOKALIKE_MARKER = '[delimiter-lookalike removed]';

const FILLER = '[\\p{Cf}\\p{Z}\\s]*';

function charClass(ch: string): string {
  if (ch === '-') return '[-_\\u2010-\\u2015\\u2212\\uFE58\\uFE63\\uFF0D\\uFF3F\\p{Z}\\s]';
  const lower = ch.toLowerCase();
  const upper = ch.toUpperCase();
  const fwLower = String.fromCodePoint(0xff41 + lower.charCodeAt(0) - 0x61);
  const fwUpper = String.fromCodePoint(0xff21 + upper.charCodeAt(0) - 0x41);
  return `[${lower}${upper}${fwLower}${fwUpper}]`;
}

const LOOKALIKE = new RegExp([...UNTRUSTED_TAG].map(charClass).join(FILLER), 'gu');

/** Replace every look-alike of the delimiter's name in `text`. */
export function neutraliseDelimiters(text: string): string {
  return text.replace(LOOKALIKE, LOOKALIKE_MARKER);
}

/** A `source` attribute value: printable ASCII without quotes or angle brackets, at most 200 chars. */
export function safeSource(source: string): string {
  return neutraliseDelimiters(source)
    .replace(/[^A-Za-z0-9 :/._#?=&@+,()[\]-]/g, '_')
    .slice(0, 200);
}

/**
 * Wrap untrusted page text in the delimited block.
 * @param source says where the text came from (console-made, sanitised again here).
 */
export function untrustedBlock(source: string, text: string): string {
  return `<${UNTRUSTED_TAG} source="${safeSource(source)}">\n${neutraliseDelimiters(text)}\n</${UNTRUSTED_TAG}>`;
}

/** JSON text for an untrusted block: pretty-printed, with `<` and `>` escaped inside strings. */
export function untrustedJson(value: unknown): string {
  return JSON.stringify(value, null, 2).replace(/</g, '\\u003c').replace(/>/g, '\\u003e');
}
