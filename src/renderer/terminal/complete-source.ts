/**
 * Whether a developer-console input is a whole JavaScript source, or waits for
 * more lines (issue 11 item 4: multi-line input). The rule is Node's REPL's
 * (lib/internal/repl/utils.js, `isRecoverableError`): parse with acorn; an
 * error at the very end of the input (an open bracket, block, or expression),
 * an unterminated template literal or comment means "more to come"; any other
 * syntax error is complete, and is sent, so that the page's own engine reports
 * it in its words.
 *
 * Parsed as a script in which top-level `await` and `return` are allowed,
 * since the raw-JavaScript faculty runs a line as the body of an async
 * function (docs/raw-javascript.md).
 */
import { parse } from 'acorn';

/** Sources longer than this (UTF-16 code units) are not parsed: they count as complete. */
export const PARSE_LIMIT = 200_000;

/**
 * @param source the input so far, lines joined by "\n".
 * @returns false when the parser ran out of input (Enter should start a new line), else true.
 */
export function isCompleteSource(source: string): boolean {
  if (source.length > PARSE_LIMIT) return true;
  try {
    parse(source, { ecmaVersion: 'latest', sourceType: 'script', allowAwaitOutsideFunction: true, allowReturnOutsideFunction: true });
    return true;
  } catch (e) {
    const err = e as { pos?: unknown; message?: unknown };
    const message = typeof err.message === 'string' ? err.message : '';
    if (message.startsWith('Unterminated template') || message.startsWith('Unterminated comment')) return false;
    return !(typeof err.pos === 'number' && err.pos >= source.trimEnd().length);
  }
}
