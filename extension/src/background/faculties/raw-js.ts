/**
 * Faculty `raw-js` (dispatch), operation `run` (issue 11 item 3; src/shared/raw-script.ts;
 * docs/raw-javascript.md): the agent's (or the person's developer-console) JavaScript, run once
 * under a one-use grant bound to the code's SHA-256.
 *  - subject `{codeHash}` (the grant's subject hash), arguments `{code, world}` (its arguments
 *    hash); before running, the code is hashed again here and must equal `codeHash`.
 *  - `MAIN`: chrome.scripting.executeScript({world: 'MAIN', func: runScriptInPage}) in exactly
 *    the granted frame and document; the page's CSP applies (a page that forbids eval answers
 *    `csp-blocked`, never a silent nothing).
 *  - `USER_SCRIPT`: chrome.userScripts.execute({world: 'USER_SCRIPT', js: [{code}]}) with the
 *    same page function serialised around the code. `chrome.userScripts` exists only when the
 *    person allowed user scripts for this extension (chrome://extensions → the extension →
 *    "Allow User Scripts"); without it: `user-scripts-unavailable`. Headless Chromium offers no
 *    way to allow it (FACTS), so that path is unit-tested with the API replaced.
 *  - Never the ISOLATED world: the extension's own world holds chrome.storage and the pairing key.
 * The runner requires the exact frame URL the grant covered in the task that runs the code.
 * Synchronous page code cannot be interrupted (no `debugger`): `abort` does nothing; the
 * dispatcher's timeout makes the outcome unknown.
 */
import { err, ok, type Result } from '../../../../src/shared/result';
import { RAW_SCRIPT_BOUNDS, scriptArgumentsProblem, scriptHash, type RawScriptWorld } from '../../../../src/shared/raw-script';
import type { DispatchTarget } from '../../../../src/shared/protocol';
import type { RefusalCode } from '../../../../src/shared/types';
import type { ExecuteValue } from '../../lib/messages';
import { runScriptInPage, type PageBounds, type PageRunAnswer } from '../../lib/raw-script-page';
import { askUrls } from '../discovery';
import { seenUrls } from '../preimages';
import type { DispatchFaculty } from './registry';
import { WEBMCP_MODULE } from '../tabs';

const HEX64 = /^[0-9a-f]{64}$/;

const PAGE_BOUNDS: PageBounds = {
  valueChars: RAW_SCRIPT_BOUNDS.valueChars,
  consoleEntries: RAW_SCRIPT_BOUNDS.consoleEntries,
  consoleEntryChars: RAW_SCRIPT_BOUNDS.consoleEntryChars,
  errorChars: RAW_SCRIPT_BOUNDS.errorChars,
};

/** The chrome APIs the runner uses, replaceable in tests (chrome.userScripts is absent in headless Chromium). */
export interface RawJsDeps {
  /** chrome.scripting.executeScript, MAIN world. */
  executeMain(target: DispatchTarget, code: string, expectedUrl: string): Promise<unknown>;
  /** chrome.userScripts, or undefined when the person has not allowed user scripts. */
  userScripts(): { execute(injection: UserScriptInjection): Promise<Array<{ result?: unknown; error?: string }>> } | undefined;
}

/** The shape of chrome.userScripts.execute's injection (Chrome 135+; developer.chrome.com/docs/extensions/reference/api/userScripts#method-execute). */
export interface UserScriptInjection {
  target: { tabId: number; frameIds: number[] } | { tabId: number; documentIds: string[] };
  js: Array<{ code: string }>;
  world: 'USER_SCRIPT';
  injectImmediately?: boolean;
}

const chromeDeps: RawJsDeps = {
  async executeMain(target, code, expectedUrl) {
    const [frame] = await chrome.scripting.executeScript({
      target: { tabId: target.tabId, documentIds: [target.documentId] },
      world: 'MAIN',
      func: runScriptInPage,
      args: [code, expectedUrl, PAGE_BOUNDS],
    });
    return frame?.result;
  },
  userScripts: () => (chrome as unknown as { userScripts?: ReturnType<RawJsDeps['userScripts']> }).userScripts,
};

/**
 * The source chrome.userScripts.execute runs: the page function's own text applied to the code,
 * the URL and the bounds as JSON literals (no other text of the agent's is spliced in).
 */
export function userScriptSource(code: string, expectedUrl: string): string {
  return `(${runScriptInPage.toString()})(${JSON.stringify(code)}, ${JSON.stringify(expectedUrl)}, ${JSON.stringify(PAGE_BOUNDS)})`;
}

/** The page's answer as the dispatcher's: `ran` → a result (JSON ScriptOutput); the others → their refusal codes. */
function answerOf(a: unknown, elapsedMs: number): Result<ExecuteValue> {
  const x = a as PageRunAnswer | null | undefined;
  if (!x || typeof x !== 'object') return err('content-error', 'the page function gave no answer');
  if (x.kind === 'navigated') return err('navigated', 'the frame is at another URL');
  if (x.kind === 'csp-blocked') {
    return err('csp-blocked', `The page's Content-Security-Policy forbids evaluating JavaScript (script-src without 'unsafe-eval'); nothing ran. The browser said: ${String(x.message).slice(0, 300)}`);
  }
  if (x.kind !== 'ran') return err('content-error', 'the page function gave a malformed answer');
  const result = JSON.stringify(x.output);
  return ok({ result, truncated: false, elapsedMs });
}

/** Run `code` in `world` in the target document; the grant checks passed. */
export async function runScript(target: DispatchTarget, code: string, world: RawScriptWorld, expectedUrl: string, deps: RawJsDeps = chromeDeps): Promise<Result<ExecuteValue>> {
  const started = Date.now();
  if (world === 'USER_SCRIPT') {
    const us = deps.userScripts();
    if (!us || typeof us.execute !== 'function') {
      return err('user-scripts-unavailable', 'User scripts are not allowed for the Echo Console extension, so a USER_SCRIPT run is impossible: the person must switch on "Allow User Scripts" for it (chrome://extensions → Echo Console → Details). Nothing ran; world MAIN needs no such switch.');
    }
    let res: Array<{ result?: unknown; error?: string }>;
    try {
      // documentIds pins the granted document: a navigation meanwhile fails the injection instead of running elsewhere.
      res = await us.execute({ target: { tabId: target.tabId, documentIds: [target.documentId] }, js: [{ code: userScriptSource(code, expectedUrl) }], world: 'USER_SCRIPT', injectImmediately: true });
    } catch (e) {
      return err('navigated', `the document could not be reached (${String(e instanceof Error ? e.message : e).slice(0, 200)})`);
    }
    const first = Array.isArray(res) ? res[0] : undefined;
    if (first?.error) return err('content-error', String(first.error).slice(0, 500));
    return answerOf(first?.result, Date.now() - started);
  }
  let result: unknown;
  try {
    result = await deps.executeMain(target, code, expectedUrl);
  } catch (e) {
    return err('navigated', `the document could not be reached (${String(e instanceof Error ? e.message : e).slice(0, 200)})`);
  }
  return answerOf(result, Date.now() - started);
}

/** What the check hands to the runner. */
export interface RawJsPrepared {
  codeHash: string;
}

const REFUSALS: Readonly<Record<string, RefusalCode>> = {
  'csp-blocked': 'csp-blocked',
  'user-scripts-unavailable': 'user-scripts-unavailable',
  'arguments-mismatch': 'arguments-mismatch',
};

/** The `raw-js` faculty. */
export function rawJs(deps: RawJsDeps = chromeDeps): DispatchFaculty<RawJsPrepared> {
  return {
    id: 'raw-js',
    kind: 'dispatch',
    operations: ['run'],
    // Nothing of ours runs in the page for a script: the URL read (pageUrls) uses the WebMCP module.
    contentModule: WEBMCP_MODULE,
    checkRequest(operation, subject, args) {
      if (operation !== 'run') return 'unknown operation';
      const keys = Object.keys(subject ?? {});
      if (keys.length !== 1 || typeof subject.codeHash !== 'string' || !HEX64.test(subject.codeHash)) return 'subject must be {codeHash}';
      return scriptArgumentsProblem(args);
    },
    subjectHash: async (subject) => subject.codeHash as string,
    async check(_target, subject) {
      return { ok: true, prepared: { codeHash: subject.codeHash as string } };
    },
    pageUrls: async (target, boundUrlHash) => seenUrls.get(boundUrlHash) ?? askUrls(target),
    async execute(target, m): Promise<Result<ExecuteValue>> {
      const { code, world } = m.args as { code: string; world: RawScriptWorld };
      // The grant binds the hash it was given; the code about to run must be the code hashed.
      if ((await scriptHash(code)) !== m.prepared.codeHash) return err('arguments-mismatch', 'the code is not the code whose hash was approved');
      return runScript(target, code, world, m.urls.frame, deps);
    },
    abort() {
      /* page code cannot be interrupted without `debugger`: the dispatch's timeout makes it outcome-unknown */
    },
    refusalFor: (code) => (Object.prototype.hasOwnProperty.call(REFUSALS, code) ? (REFUSALS[code] as RefusalCode) : null),
    refusalText: (code, message) => (code === 'csp-blocked' || code === 'user-scripts-unavailable' ? message.slice(0, 600) : null),
  };
}
