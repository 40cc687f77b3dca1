/**
 * Raw JavaScript (faculty `raw-js`, operation `run`; issue 11 item 3; rung 5 of the capability
 * ladder; docs/raw-javascript.md): what the console, the extension and the renderer share.
 *
 *  - The grant binds the script by its **code hash**: SHA-256 of the exact code's UTF-8 bytes
 *    (`scriptHash`), as the grant's subject hash; the arguments `{code, world}` are bound by their
 *    arguments hash as every faculty's. The link subject is `{codeHash}`; the extension hashes the
 *    code it is about to run again and refuses a mismatch.
 *  - `world` is `MAIN` (chrome.scripting.executeScript, the page's own world) or `USER_SCRIPT`
 *    (chrome.userScripts.execute): never the extension's isolated world, where chrome.storage
 *    holds the pairing key.
 *  - What a run answers (`ScriptOutput`) is bounded here (RAW_SCRIPT_BOUNDS), redacted by the
 *    pipeline (src/shared/bounds.ts boundText) and labelled untrusted for the agent.
 */
import { sha256Hex, webCryptoSha256, type Sha256 } from './canonical';

/** The worlds a script may run in (never ISOLATED: chrome.storage is readable there). */
export const RAW_SCRIPT_WORLDS = ['MAIN', 'USER_SCRIPT'] as const;
export type RawScriptWorld = (typeof RAW_SCRIPT_WORLDS)[number];

/**
 * Bounds of a script and of what its run answers.
 *  - `codeBytes`: UTF-8 bytes of the code (64 KiB: a console line or a page-sized snippet; the
 *    dialog shows every byte of it);
 *  - `valueChars`: the returned value's JSON (or String()) preview, UTF-16 units;
 *  - `consoleEntries` / `consoleEntryChars`: console.log/info/warn/error/debug calls kept, and
 *    the characters of each;
 *  - `errorChars`: a thrown error's message and stack.
 * Together (with JSON escaping) they stay under LIMITS.maxResultBytes (256 KiB), so the pipeline's
 * bound never cuts a run's answer into unreadable JSON.
 */
export const RAW_SCRIPT_BOUNDS = { codeBytes: 64 * 1024, valueChars: 16 * 1024, consoleEntries: 100, consoleEntryChars: 1_000, errorChars: 4_000 } as const;

/**
 * How long a run may take after it was dispatched before its outcome is unknown (ms). Synchronous
 * page code cannot be interrupted (no `debugger` permission): the console stops waiting, records
 * `outcome-unknown`, and the page may still be running it.
 */
export const RAW_SCRIPT_TIMEOUT_MS = 10_000;

/** One console call captured during a run. */
export interface ScriptConsoleEntry {
  level: 'log' | 'info' | 'warn' | 'error' | 'debug';
  /** The arguments, each as JSON or String(), joined by spaces; cut to consoleEntryChars. */
  text: string;
}

/**
 * What one run answered (page text: UNTRUSTED). `returned`: the code's completion value (a
 * returned promise awaited); `threw`: an exception (its message, name and stack cut).
 */
export interface ScriptOutput {
  status: 'returned' | 'threw';
  /** `typeof` the value (`undefined`, `object`, …), or of the thrown value. */
  valueType: string;
  /** The value as JSON when it has one, else String(value); cut to valueChars (`valueTruncated`). */
  value: string | null;
  valueTruncated: boolean;
  /** For `threw`: `Name: message` and the stack, cut. */
  error: string | null;
  console: ScriptConsoleEntry[];
  /** Console calls past `consoleEntries`, counted, not kept. */
  consoleOmitted: number;
  /** How long the code ran in the page (ms; awaited promise included). */
  elapsedMs: number;
}

/** The code hash the grant binds: SHA-256 of the code's exact UTF-8 bytes (64 lowercase hex). */
export function scriptHash(code: string, sha256: Sha256 = webCryptoSha256): Promise<string> {
  return sha256Hex(code, sha256);
}

const utf8 = new TextEncoder();

/**
 * Why `args` are not the arguments of a run (`{code, world}` exactly: code a non-empty string of
 * at most RAW_SCRIPT_BOUNDS.codeBytes UTF-8 bytes; world MAIN or USER_SCRIPT), or null. The one
 * check of the console (before the person is asked) and of the extension (before it runs).
 */
export function scriptArgumentsProblem(args: unknown): string | null {
  if (!args || typeof args !== 'object' || Array.isArray(args)) return 'the arguments must be {code, world}';
  const a = args as Record<string, unknown>;
  const keys = Object.keys(a);
  if (keys.length !== 2 || !keys.includes('code') || !keys.includes('world')) return 'the arguments must be exactly {code, world}';
  if (typeof a.code !== 'string' || a.code.length === 0) return 'code must be a non-empty string';
  if (utf8.encode(a.code).length > RAW_SCRIPT_BOUNDS.codeBytes) return `code is longer than ${RAW_SCRIPT_BOUNDS.codeBytes} UTF-8 bytes`;
  if (a.world === 'ISOLATED') return "world ISOLATED is never offered: the extension's isolated world holds the pairing key; use MAIN or USER_SCRIPT";
  if (!RAW_SCRIPT_WORLDS.includes(a.world as RawScriptWorld)) return 'world must be MAIN or USER_SCRIPT';
  return null;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const LEVELS = new Set(['log', 'info', 'warn', 'error', 'debug']);
const cut = (s: unknown, n: number): string | null => (typeof s === 'string' ? s.slice(0, n) : null);

/**
 * A run's answer (the `result` JSON the extension sent, already redacted and bounded by the
 * pipeline) checked and bounded again here, or null when it is not a ScriptOutput. The console
 * trusts no side's cuts.
 */
export function scriptOutputOf(result: string | null): ScriptOutput | null {
  let x: unknown;
  try {
    x = JSON.parse(result ?? 'null');
  } catch {
    return null;
  }
  if (!isObj(x) || (x.status !== 'returned' && x.status !== 'threw') || !Array.isArray(x.console)) return null;
  const entries = x.console.filter((e): e is { level: ScriptConsoleEntry['level']; text: string } => isObj(e) && LEVELS.has(e.level as string) && typeof e.text === 'string');
  const kept = entries.slice(0, RAW_SCRIPT_BOUNDS.consoleEntries).map((e) => ({ level: e.level, text: e.text.slice(0, RAW_SCRIPT_BOUNDS.consoleEntryChars) }));
  const value = cut(x.value, RAW_SCRIPT_BOUNDS.valueChars);
  return {
    status: x.status,
    valueType: cut(x.valueType, 32) ?? 'undefined',
    value,
    valueTruncated: x.valueTruncated === true || (typeof x.value === 'string' && x.value.length > RAW_SCRIPT_BOUNDS.valueChars),
    error: cut(x.error, RAW_SCRIPT_BOUNDS.errorChars),
    console: kept,
    consoleOmitted: (Number.isSafeInteger(x.consoleOmitted) ? Math.max(0, x.consoleOmitted as number) : 0) + (entries.length - kept.length),
    elapsedMs: Number.isFinite(x.elapsedMs) ? Math.max(0, Math.round(x.elapsedMs as number)) : 0,
  };
}

/**
 * One raw-JavaScript run as the console UI sees it live (ConsoleEvent `script-runs`; the
 * developer console subscribes): the agent's and the person's alike. `code` is here for the
 * person's own console only; receipts carry `codeHash` and never the code.
 */
export interface ScriptRun {
  /** The console's id of the run (also the key of ConsoleApi.stopScript). */
  runId: string;
  /** The pipeline request's id, once known (receipts). */
  requestId: string | null;
  actor: 'agent' | 'person';
  /** The agent token's name for an agent's run. */
  agentName?: string;
  tabId: number;
  frameId: number;
  world: RawScriptWorld;
  code: string;
  codeHash: string;
  /** `running` until it ends; `stopped` is the person's Stop (its outcome is unknown). */
  status: 'running' | 'succeeded' | 'failed' | 'refused' | 'outcome-unknown' | 'stopped';
  startedAt: number;
  endedAt: number | null;
  output: ScriptOutput | null;
  /** Why it did not succeed: the error code and message (page words bounded and redacted). */
  error: { code: string; message: string } | null;
  /** After an unknown outcome: the page may still run it; reloading the tab is offered. */
  offerReload: boolean;
}
