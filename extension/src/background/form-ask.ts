/**
 * The worker's read of a declarative tool's form in one exact document
 * (faculty `webmcp-discover`, operation `form`): asks the WebMCP content
 * module (`echo:webmcp:form`), injecting it once when nobody answers, and
 * checks the answer's shape (src/shared/form.ts isFormSnapshot): the page is
 * untrusted, and so is what its document answers.
 */
import { err, type Result } from '../../../src/shared/result';
import { sha256Hex } from '../../../src/shared/canonical';
import { isFormSnapshot, type FormSnapshot } from '../../../src/shared/form';
import { stripUrl } from '../../../src/shared/url';
import type { FormNow, ToWebMcp } from '../lib/messages';
import { MAX_EXACT_URL_CHARS } from './discovery';
import { seenActions } from './preimages';
import { injectInto } from './tabs';

/** A document that does not answer within this time is `navigated` (ms). */
const FORM_ANSWER_TIMEOUT_MS = 5_000;

/**
 * The form of `toolName` in exactly `target`'s document, read now.
 * Errors: `navigated` (the document cannot be reached), `tool-missing`,
 * `tool-ambiguous`, `form-too-large`, `bad-answer`.
 */
export async function askForm(target: { tabId: number; frameId: number; documentId: string }, toolName: string): Promise<Result<FormSnapshot>> {
  const msg: ToWebMcp = { type: 'echo:webmcp:form', toolName };
  const ask = async (): Promise<Result<unknown> | null> => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      const timeout = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), FORM_ANSWER_TIMEOUT_MS)));
      const answer = chrome.tabs.sendMessage(target.tabId, msg, { frameId: target.frameId, documentId: target.documentId }) as Promise<Result<unknown> | undefined>;
      return (await Promise.race([answer, timeout])) ?? null;
    } catch {
      return null;
    } finally {
      clearTimeout(timer);
    }
  };
  let answer = await ask();
  if (answer === null) {
    if (!(await injectInto(target.tabId, [target.documentId])).has(target.documentId)) return err('navigated', 'the document cannot be reached');
    answer = await ask();
  }
  if (answer === null) return err('navigated', 'the document did not answer');
  if (!answer.ok) return answer;
  const now = answer.value as Partial<FormNow> | null;
  if (!now || typeof now !== 'object' || typeof now.action !== 'string' || now.action.length > MAX_EXACT_URL_CHARS) return err('bad-answer', 'the page answered something that is not a form');
  // Hashed here (WebCrypto is unavailable to content scripts on plain-http pages); the exact action
  // is kept for the dispatch, whose page-side check compares strings (content/webmcp.ts formDiffers).
  const actionHash = await sha256Hex(now.action);
  seenActions.remember(actionHash, now.action);
  const snap = { action: stripUrl(now.action), actionHash, method: now.method, autosubmit: now.autosubmit, fields: now.fields };
  return isFormSnapshot(snap) ? { ok: true, value: snap } : err('bad-answer', 'the page answered something that is not a form snapshot');
}
