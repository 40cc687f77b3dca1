/**
 * The WebMCP faculty's content script: discovery and dispatch inside one
 * document. Injected by the service worker (chrome.scripting.executeScript)
 * only into same-origin frames of shared tabs, in the default ISOLATED world:
 * Chromium 156's isolated world sees the page's tools and can run them
 * (docs/browser-facts.md, "Extensions: the isolated world"), and a page script cannot reach this world's objects, so a page
 * cannot fake `document.modelContext` for us (its polyfills live in the MAIN
 * world and are invisible here).
 *
 * Built as a classic IIFE (content scripts cannot be ES modules). Runs once per
 * document: a second injection only re-attaches the tool-change watcher.
 *
 * Never calls `provideContext` or any legacy `navigator.modelContext*` method:
 * those are only reported (WebMcpSupport.legacyApi).
 */
import { LIMITS, utf8Bytes } from '../../../src/shared/limits';
import { canonicalJson, descriptorHashInput } from '../../../src/shared/canonical';
import { truncateUtf8, utf8Length } from '../../../src/shared/bounds';
import { err, ok, type Result } from '../../../src/shared/result';
import type { ToolAnnotations, WebMcpSupport } from '../../../src/shared/types';
import { boundMessage, inspectTool, rawToolOf, reportName, type RawTool } from '../lib/inspect';
import { executeInput } from '../lib/execute-input';
import type { ExecuteErrorCode, ExecuteValue, FrameReport, ToWebMcp } from '../lib/messages';
import { readPageUrls, sameUrls } from '../lib/page-urls';
import { ChangeThrottle } from '../lib/change-throttle';
import { readFormNow, restoreControls, saveControls } from '../lib/form-read';
import { formBinding, formSubject, type FormBinding } from '../../../src/shared/form';
import { collectPageLintFacts } from '../lib/page-lint-facts';
import { fieldBlocked, formHoldsPassword } from '../lib/semantic-roles';

/** The slice of a tool object `getTools()` returns (WebMCP draft; docs/browser-facts.md, "WebMCP: listing tools"). Read property by property. */
interface PageTool {
  name?: unknown;
  window?: unknown;
  source?: unknown;
  title?: unknown;
  description?: unknown;
  inputSchema?: unknown;
  annotations?: unknown;
  origin?: unknown;
}

/** The slice of `document.modelContext` we use (WebMCP draft, `ModelContext`). */
interface ModelContextLike extends EventTarget {
  getTools(): Promise<PageTool[]>;
  /** The input is an object (current draft, Chromium 156) or a JSON string (Chromium 150): lib/execute-input.ts. */
  executeTool(tool: PageTool, input: object | string, options?: { signal?: AbortSignal }): Promise<unknown>;
  ontoolchange?: unknown;
}

/**
 * Whether this document registered the tool. Chromium 156's getTools() in a
 * frame also lists the tools of SAME-ORIGIN frames of the page (probed: a
 * same-origin iframe's tool appears in the top document's list and the other
 * way round; cross-origin ones do not), each with `window` = the registering
 * document's window (`source` from Chrome 160, developer.chrome.com/docs/ai/webmcp/updates).
 * Each frame reports only its own, so a tool is listed once, with its own
 * frameId and documentId. A build without either property lists per document
 * (docs/browser-facts.md, "WebMCP: listing tools").
 */
function registeredHere(t: PageTool): boolean {
  const x = t as { source?: unknown; window?: unknown };
  const src = x.source ?? x.window;
  return src === undefined || src === null || src === window;
}

const INSTANCE_KEY = '__echoConsoleWebmcp';

type Instance = { attach(): void };

function modelContext(): ModelContextLike | null {
  let mc: unknown;
  try {
    mc = (document as unknown as { modelContext?: unknown }).modelContext;
  } catch {
    return null;
  }
  if (!mc || typeof mc !== 'object') return null;
  const m = mc as Partial<ModelContextLike>;
  return typeof m.getTools === 'function' ? (mc as ModelContextLike) : null;
}

/**
 * Feature detection, never by trying an execution:
 * - `document.modelContext` with `executeTool` is the current draft, whose IDL
 *   declares `executeTool(tool, object input, options)`: argument form `object`
 *   (Chromium 156 rejects a JSON string there, docs/browser-facts.md,
 *   "WebMCP: running tools");
 * - `navigator.modelContextTesting.executeTool` is the older testing API that
 *   took a JSON string: form `json-string`, reported and never used.
 */
function detectSupport(): WebMcpSupport {
  const mc = modelContext();
  const nav = navigator as unknown as Record<string, unknown>;
  const legacyApi = 'modelContext' in navigator
    ? 'navigator.modelContext'
    : 'modelContextTesting' in navigator
      ? 'navigator.modelContextTesting'
      : null;
  let argumentForm: WebMcpSupport['argumentForm'] = null;
  if (mc && typeof mc.executeTool === 'function') argumentForm = 'object';
  else if (legacyApi === 'navigator.modelContextTesting' && typeof (nav.modelContextTesting as { executeTool?: unknown })?.executeTool === 'function') {
    argumentForm = 'json-string';
  }
  return { modelContext: mc !== null, legacyApi, argumentForm };
}


function formsByToolName(): Map<string, HTMLFormElement[]> {
  const map = new Map<string, HTMLFormElement[]>();
  for (const form of Array.from(document.querySelectorAll('form[toolname]'))) {
    if (!(form instanceof HTMLFormElement)) continue;
    const name = form.getAttribute('toolname') ?? '';
    map.set(name, [...(map.get(name) ?? []), form]);
  }
  return map;
}

/**
 * A field of the form (`form.elements`: ones tied in with `form=` too) that is a blocked surface by
 * itself, other than a password field: an `autocomplete` or own words naming a credential, a
 * one-time code or card data (semantic-roles.ts fieldBlocked, the semantic path's rule).
 */
function holdsCredentialField(form: HTMLFormElement): boolean {
  return Array.from(form.elements).some((el) => fieldBlocked(el));
}

/**
 * The RawTool of a listed tool, a declarative one blocked by its form as the semantic path blocks a
 * form (formHoldsPassword: `type=password` among its fields or inside it through shadow roots, a field
 * masked with CSS, one whose words say password though a "show password" toggle made it type=text).
 */
function readTool(t: PageTool, forms: Map<string, HTMLFormElement[]>): RawTool {
  const matching = forms.get(typeof t.name === 'string' ? t.name : String(t.name)) ?? [];
  return rawToolOf(
    t,
    (annotations) => (annotations === undefined && matching.length > 0 ? 'declarative' : 'imperative'),
    matching.some(formHoldsPassword),
    matching.some(holdsCredentialField),
  );
}

/**
 * Discover this document's tools with the limits applied (lib/inspect.ts); bounded to LIMITS.maxMessageBytes.
 * `name`: report only the tools (and violations) of that exact name, judged by the same rules as a
 * full discovery (the same first LIMITS.maxToolsPerFrame tools count). The rediscovery right before a
 * dispatch needs one name; inspecting and sending all 64 tools there cost ~2 ms per invocation.
 */
async function discover(name?: string): Promise<FrameReport> {
  const origin = self.origin;
  const report: FrameReport = { origin, urls: readPageUrls(), support: detectSupport(), tools: [], violations: [] };
  const mc = modelContext();
  if (!mc) return report;
  let listed: PageTool[];
  try {
    listed = await mc.getTools();
    // The URLs the tools were listed under: read in the same task as the list arrived.
    report.urls = readPageUrls();
  } catch (e) {
    // e.g. an opaque-origin (sandboxed) document; the worker also refuses it by its origin.
    report.violations.push({ reason: 'webmcp-error', detail: boundedMessage(e).slice(0, 256) });
    return report;
  }
  const forms = formsByToolName();
  const all = (Array.isArray(listed) ? listed : []).filter(registeredHere);
  const wanted = (t: PageTool) => name === undefined || t.name === name;
  for (const t of all.slice(0, LIMITS.maxToolsPerFrame)) {
    if (!wanted(t)) continue;
    const raw = readTool(t, forms);
    const checked = inspectTool(raw, origin);
    if (checked.ok) report.tools.push(raw);
    else report.violations.push(checked.violation);
  }
  // Tools past the limit are named (up to another LIMITS.maxToolsPerFrame), then counted in one entry.
  const extra = all.slice(LIMITS.maxToolsPerFrame);
  for (const t of extra.slice(0, LIMITS.maxToolsPerFrame)) {
    if (!wanted(t)) continue;
    report.violations.push({ reason: 'too-many-tools', name: reportName(t.name), detail: `more than ${LIMITS.maxToolsPerFrame} tools in one frame` });
  }
  if (extra.length > LIMITS.maxToolsPerFrame && name === undefined) {
    report.violations.push({ reason: 'too-many-tools', detail: `${extra.length - LIMITS.maxToolsPerFrame} more tools not listed or named` });
  }
  boundMessage(report.tools, () => utf8Bytes(JSON.stringify(report)), LIMITS.maxMessageBytes - 64 * 1024, (t) =>
    report.violations.push({ reason: 'message-too-large', name: reportName(t.name) }),
  );
  return report;
}

const running = new Map<string, AbortController>();

function boundedMessage(e: unknown): string {
  const m = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  return m.length > 1000 ? `${m.slice(0, 999)}…` : m;
}

/**
 * Dispatch, and the rediscovery right before it: list getTools() again and,
 * in the task that calls `executeTool` (no await in between, so the tool run
 * is the tool checked, in the page that was checked; a `pushState` after the
 * worker's checks is refused here), require, in this order:
 *  1. the tab and frame URLs are still exactly `msg.urls` (the ones whose hash
 *     the worker compared with the grant's urlHash) → `navigated`;
 *  2. exactly one tool named `toolName` among those this frame registered
 *     (all of them count, so a second same-named tool is never hidden) →
 *     `tool-missing` / `tool-ambiguous`, and it is one of the first
 *     LIMITS.maxToolsPerFrame, as a discovery would list it → `tool-missing`;
 *  3. its canonical descriptor equals `expected` (the one whose hash the
 *     worker compared with the grant's subjectHash) → `descriptor-changed`;
 *  4. it is not a form holding a password field → `tool-blocked`.
 * These are the same rules as a discovery's (lib/inspect.ts): a descriptor
 * equal to one that passed them passes them, and its only other block is the
 * password field, a state of the form and not of the descriptor.
 */
async function execute(msg: Extract<ToWebMcp, { type: 'echo:webmcp:execute' }>): Promise<Result<ExecuteValue>> {
  const fail = (code: ExecuteErrorCode, message: string) => err(code, message);
  const mc = modelContext();
  if (!mc || typeof mc.executeTool !== 'function') return fail('no-webmcp', 'document.modelContext is not available');
  if (running.has(msg.requestId)) return fail('tool-failed', 'this request is already running');
  // Registered before the listing's await, so an abort that comes meanwhile is not lost (it would
  // answer "nothing to abort" and the tool would then run).
  const controller = new AbortController();
  running.set(msg.requestId, controller);
  try {
    return await checkAndRun(mc, msg, controller);
  } finally {
    running.delete(msg.requestId);
  }
}

/** `execute` from the listing on, with its abort controller registered. */
async function checkAndRun(mc: ModelContextLike, msg: Extract<ToWebMcp, { type: 'echo:webmcp:execute' }>, controller: AbortController): Promise<Result<ExecuteValue>> {
  const fail = (code: ExecuteErrorCode, message: string) => err(code, message);
  const listed = await mc.getTools();
  // No await from here to executeTool: what is compared is what runs.
  if (controller.signal.aborted) return fail('aborted', 'the invocation was cancelled before it ran');
  if (!msg.urls || !sameUrls(msg.urls)) return fail('navigated', 'the page URL changed since it was checked');
  const mine = (Array.isArray(listed) ? listed : []).filter(registeredHere);
  const matches = mine.filter((t) => t.name === msg.toolName);
  if (matches.length === 0) return fail('tool-missing', 'the page no longer offers this tool');
  if (matches.length > 1) return fail('tool-ambiguous', 'the page offers several tools with this name');
  const tool = matches[0] as PageTool;
  if (mine.indexOf(tool) >= LIMITS.maxToolsPerFrame) return fail('tool-missing', `the tool is past the first ${LIMITS.maxToolsPerFrame} of this frame`);
  const raw = readTool(tool, formsByToolName());
  let canonical = '';
  try {
    canonical = canonicalJson(descriptorHashInput(raw));
  } catch {
    /* leaves '' which never equals `expected` */
  }
  if (canonical !== msg.expected) return fail('descriptor-changed', 'the tool changed since it was checked');
  if (raw.passwordField) return fail('tool-blocked', 'the form holds a password field');
  if (raw.kind === 'declarative' || msg.form) {
    const why = formDiffers(msg.toolName, msg.form, msg.formAction, msg.args);
    if (why) return fail('form-changed', why);
  }
  const form = raw.kind === 'declarative' ? ((formsByToolName().get(msg.toolName) ?? [])[0] ?? null) : null;
  return run(mc, tool, msg, controller, form);
}

/** The Chromium 156 message of a submit handler that prevented the default without respondWith (docs/browser-facts.md, "WebMCP: declarative forms"). */
const HANDLED_WITHOUT_ANSWER = /preventDefault\(\) on the 'submit' event, without also calling respondWith\(\)/;
/** Chromium 156's rejection when the page resets a form that waits for the person. */
const FORM_RESET = /cancelled by a form reset/;

/**
 * `executeTool`, and for a form tool what the browser does not do: a waiting form (no
 * toolautosubmit, `msg.waitMs`) is aborted when the person did not submit in time; a form the agent
 * filled but that was not submitted gets its controls back as they were (read back); whether a
 * submit event came is watched, so a timeout after a submit is never called "not submitted".
 */
async function run(mc: ModelContextLike, tool: PageTool, msg: Extract<ToWebMcp, { type: 'echo:webmcp:execute' }>, controller: AbortController, form: HTMLFormElement | null): Promise<Result<ExecuteValue>> {
  const fail = (code: ExecuteErrorCode, message: string, detail?: unknown) => err(code, message, detail);
  const saved = form ? saveControls(form) : [];
  let submitted = false;
  const onSubmit = () => (submitted = true);
  form?.addEventListener('submit', onSubmit, true);
  let timedOut = false;
  const timer = form && typeof msg.waitMs === 'number' ? setTimeout(() => ((timedOut = true), controller.abort()), msg.waitMs) : undefined;
  const putBack = () => ({ formRestored: restoreControls(saved) });
  const started = performance.now();
  try {
    const out = await mc.executeTool(tool, executeInput(tool.inputSchema, msg.args), { signal: controller.signal });
    let text: string | null = out == null ? null : typeof out === 'string' ? out : JSON.stringify(out) ?? null;
    const resultBytes = text === null ? 0 : utf8Length(text);
    let truncated = false;
    // Cut to the redaction cap only (src/shared/limits.ts): the worker redacts
    // this whole prefix structurally, then cuts to LIMITS.maxResultBytes. A cut
    // at the result limit here would break the JSON and hide nested secrets from the JSON-aware rules.
    if (text !== null) ({ text, truncated } = truncateUtf8(text, LIMITS.maxRedactInputBytes));
    return ok({ result: text, truncated, elapsedMs: Math.round(performance.now() - started), resultBytes });
  } catch (e) {
    const message = boundedMessage(e);
    const aborted = controller.signal.aborted || (e instanceof Error && e.name === 'AbortError');
    if (form && submitted && HANDLED_WITHOUT_ANSWER.test(message)) return fail('handled-without-answer', 'the page handled the submission itself and gave no answer');
    if (form && submitted && aborted) return fail('submitted-no-answer', 'the form was submitted, but the page did not answer in time');
    if (form && timedOut) return fail('form-wait-timeout', `the person did not submit the form within ${msg.waitMs} ms`, putBack());
    // The page reset the form itself: what it holds now is the page's choice, not put back.
    if (form && FORM_RESET.test(message)) return fail('form-cancelled', 'the page cancelled the form (form.reset())', { formRestored: false });
    if (aborted) return fail('aborted', 'the invocation was cancelled', form ? putBack() : undefined);
    return fail('tool-failed', message);
  } finally {
    clearTimeout(timer);
    form?.removeEventListener('submit', onSubmit, true);
  }
}

/**
 * Why the form of `toolName`, read now, is not the approved one (null when it is): its action
 * (exactly the string whose hash is bound, from the worker), method, `toolautosubmit`, and every effective
 * value (the arguments over what it holds now, src/shared/form.ts) must equal `expected`. A form
 * tool dispatched without a bound form is refused: what will be submitted was never shown.
 */
function formDiffers(toolName: string, expected: FormBinding | undefined, action: string | undefined, args: Record<string, unknown>): string | null {
  if (!expected || typeof action !== 'string') return 'this form tool was dispatched without its form values bound';
  const forms = formsByToolName().get(toolName) ?? [];
  if (forms.length !== 1) return 'the form of this tool is gone or doubled';
  const now = readFormNow(forms[0] as HTMLFormElement);
  if (typeof now === 'string') return now;
  if (now.action !== action) return 'the form submits to another address than the one approved';
  if (now.method !== expected.method) return `the form's method changed (${now.method}, approved ${expected.method})`;
  if (now.autosubmit !== expected.autosubmit) {
    return now.autosubmit ? 'the page added toolautosubmit: approving would now submit the form, which the person did not approve' : 'the page removed toolautosubmit since the approval';
  }
  const actual = formBinding(formSubject({ action: '', actionHash: expected.actionHash, method: now.method, autosubmit: now.autosubmit, fields: now.fields }, args));
  let same = false;
  try {
    same = canonicalJson(actual) === canonicalJson(expected);
  } catch {
    same = false;
  }
  return same ? null : 'the values the form would submit changed since the approval';
}

/** `echo:webmcp:form`: the form of `toolName` in this document, read now (lib/form-read.ts FormNow, exact action). */
async function readForm(toolName: string): Promise<Result<unknown>> {
  const forms = formsByToolName().get(toolName) ?? [];
  if (forms.length === 0) return err('tool-missing', 'no form of this tool in this document');
  if (forms.length > 1) return err('tool-ambiguous', 'several forms of this tool in this document');
  const now = readFormNow(forms[0] as HTMLFormElement);
  if (typeof now === 'string') return err('form-too-large', now);
  // The worker hashes and strips the action (background/form-ask.ts).
  return ok(now);
}

// ---- tool-change watcher -------------------------------------------------------------

let attached = false;
let lastFingerprint: string | null = null;
let observer: MutationObserver | null = null;
/** A `toolchange` came since the last notice: the list changed, even if it is back as it was. */
let toolchangeSeen = false;

async function fingerprint(): Promise<string> {
  const r = await discover();
  return JSON.stringify([r.tools.map((t) => [t.name, t.kind, t.passwordField, safeCanonical(t)]), r.violations]);
}

function safeCanonical(t: RawTool): string {
  try {
    return canonicalJson(descriptorHashInput(t));
  } catch {
    return '';
  }
}

/**
 * A fresh discovery, and a notice to the worker when the list differs from the last one, or a
 * `toolchange` came since the last notice (a tool that left and came back was missing meanwhile).
 */
function check(): void {
  if (!attached) return;
  const sawToolchange = toolchangeSeen;
  toolchangeSeen = false;
  void fingerprint().then(
    (fp) => {
      if (!attached || (fp === lastFingerprint && !sawToolchange)) return;
      lastFingerprint = fp;
      chrome.runtime.sendMessage({ type: 'echo:webmcp:tools-changed' }).catch(() => undefined);
    },
    () => undefined,
  );
}

/**
 * `toolchange` (and form edits) → a check at most once per LIMITS.toolChangeMinIntervalMs, the first
 * LIMITS.toolChangeQuietMs after a change (lib/change-throttle.ts): a page that never stops changing
 * still gets one notice per interval, where a debounce gave none.
 */
const throttle = new ChangeThrottle(check, { quietMs: LIMITS.toolChangeQuietMs, minIntervalMs: LIMITS.toolChangeMinIntervalMs });

function onToolchange(): void {
  if (!attached) return;
  toolchangeSeen = true;
  throttle.poke();
}

function scheduleCheck(): void {
  if (attached) throttle.poke();
}

function touchesToolForm(m: MutationRecord): boolean {
  const t = m.target;
  if (t instanceof Element && t.closest('form[toolname]')) return true;
  for (const n of Array.from(m.addedNodes).concat(Array.from(m.removedNodes))) {
    if (n instanceof Element && (n.matches('form[toolname]') || n.querySelector('form[toolname]'))) return true;
  }
  return false;
}

function attach(): void {
  if (attached) return;
  attached = true;
  const mc = modelContext();
  mc?.addEventListener('toolchange', onToolchange);
  // Declarative tools change with the DOM; Chromium's toolchange is documented for registerTool
  // (docs/browser-facts.md, "WebMCP: registering tools").
  observer = new MutationObserver((records) => {
    if (records.some(touchesToolForm)) scheduleCheck();
  });
  observer.observe(document.documentElement, { subtree: true, childList: true, attributes: true, attributeFilter: ['toolname', 'tooldescription', 'toolparamdescription', 'type', 'name'] });
  void fingerprint().then((fp) => (lastFingerprint = fp), () => undefined);
}

function detach(): void {
  attached = false;
  modelContext()?.removeEventListener('toolchange', onToolchange);
  observer?.disconnect();
  observer = null;
  throttle.cancel();
  for (const c of running.values()) c.abort();
}

function respond(p: Promise<Result<unknown>>, sendResponse: (r: Result<unknown>) => void): true {
  p.then(sendResponse, (e) => sendResponse(err('content-error', boundedMessage(e))));
  return true;
}

/**
 * One listener; only this extension's service worker can address it
 * (runtime.onMessage is extension-internal). Answers only `echo:webmcp:*`
 * (lib/messages.ts ToWebMcp): other modules share this isolated world.
 */
function onMessage(msg: unknown, _sender: unknown, sendResponse: (r: Result<unknown>) => void): boolean | undefined {
  const m = msg as ToWebMcp;
  if (!m || typeof m !== 'object' || typeof m.type !== 'string') return undefined;
  switch (m.type) {
    case 'echo:webmcp:discover':
      return respond(discover(typeof m.name === 'string' ? m.name : undefined).then((r) => ok(r)), sendResponse);
    case 'echo:webmcp:urls': {
      const urls = readPageUrls();
      sendResponse(urls ? ok(urls) : err('navigated', 'the top document is not readable from this frame'));
      return undefined;
    }
    case 'echo:webmcp:execute':
      return respond(execute(m), sendResponse);
    case 'echo:webmcp:form':
      return respond(typeof m.toolName === 'string' ? readForm(m.toolName) : Promise.resolve(err('bad-request', 'toolName')), sendResponse);
    case 'echo:webmcp:abort': {
      const c = running.get(m.requestId);
      c?.abort();
      sendResponse(ok({ aborted: c !== undefined }));
      return undefined;
    }
    case 'echo:webmcp:lint':
      return respond(collectPageLintFacts().then((f) => ok(f)), sendResponse);
    case 'echo:webmcp:detach':
      detach();
      sendResponse(ok(null));
      return undefined;
    default:
      return undefined;
  }
}

const g = globalThis as unknown as Record<string, Instance | undefined>;
const existing = g[INSTANCE_KEY];
if (existing) {
  existing.attach();
} else {
  g[INSTANCE_KEY] = { attach };
  chrome.runtime.onMessage.addListener(onMessage);
  attach();
}
