/**
 * Discovery of a shared tab's page tools (docs/design.md, "The capability ladder", 1). Same-origin
 * with the top-level document only, decided twice for each frame: the frame's
 * URL origin from chrome.webNavigation must equal the top document's origin
 * (else the frame is not even injected), and the content script's `self.origin`
 * must too (a sandboxed same-URL frame has an opaque origin). Everything the
 * content script reports is validated again here (lib/inspect.ts) before it
 * is hashed and listed.
 */
import { LIMITS, utf8Bytes } from '../../../src/shared/limits';
import { err, ok, type Result } from '../../../src/shared/result';
import { descriptorHashInput, sha256Hex, urlHash } from '../../../src/shared/canonical';
import type { DiscoveryResult, DiscoveryViolation, ToolDescriptor, WebMcpSupport } from '../../../src/shared/types';
import { stripUrl } from '../../../src/shared/url';
import { boundMessage, confusableIndexes, inspectTool, type RawTool } from '../lib/inspect';
import type { FrameReport, PageUrlsValue, ToWebMcp } from '../lib/messages';
import { injectInto, isAboutFrameUrl, liveFrames, type FrameInfo } from './tabs';
import { seenDescriptors, seenUrls } from './preimages';
import { PAGE_FACT_LIMITS, type PageLintFacts } from '../../../src/shared/page-lint';

/** At most this many same-origin frames are asked per discovery; the rest are reported (`too-many-frames`). */
export const MAX_FRAMES_PER_DISCOVERY = 32;
/** A frame that does not answer within this time is reported (`frame-timeout`) (ms). */
export const FRAME_ANSWER_TIMEOUT_MS = 5_000;
/** Violations listed per discovery; more are summarised in one `too-many-violations` entry. */
export const MAX_VIOLATIONS = 256;
/**
 * Exact URLs longer than this (UTF-16 units) are not hashed: the content
 * script's report is refused as URL-less, so its tools cannot be granted.
 * Chrome itself caps URLs at 2 MiB; 64 Ki keeps the worker's work bounded.
 */
export const MAX_EXACT_URL_CHARS = 64 * 1024;
/** Room left in the link message for its envelope (`{type:'response', id, result:{ok, value}}`), in bytes. */
const ENVELOPE_BYTES = 4 * 1024;

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T | 'timeout'> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => resolve('timeout'), ms);
    p.then(
      (v) => {
        clearTimeout(t);
        resolve(v);
      },
      (e) => {
        clearTimeout(t);
        reject(e);
      },
    );
  });
}

/**
 * Ask one document for its report (only the tools named `name`, when given).
 * `null` when it cannot be reached (gone, or no content script).
 */
export async function askFrame(tabId: number, frame: { frameId: number; documentId: string }, name?: string): Promise<Result<FrameReport> | 'timeout' | null> {
  try {
    const msg: ToWebMcp = name === undefined ? { type: 'echo:webmcp:discover' } : { type: 'echo:webmcp:discover', name };
    const answer = await withTimeout(
      chrome.tabs.sendMessage(tabId, msg, { frameId: frame.frameId, documentId: frame.documentId }) as Promise<Result<FrameReport>>,
      FRAME_ANSWER_TIMEOUT_MS,
    );
    return answer ?? null;
  } catch {
    return null;
  }
}

/** The URLs a content script reported, if they are two strings of at most MAX_EXACT_URL_CHARS. */
export function cleanUrls(u: unknown): PageUrlsValue | null {
  const x = u as Partial<PageUrlsValue> | null | undefined;
  if (!x || typeof x.tab !== 'string' || typeof x.frame !== 'string') return null;
  if (x.tab.length > MAX_EXACT_URL_CHARS || x.frame.length > MAX_EXACT_URL_CHARS) return null;
  return { tab: x.tab, frame: x.frame };
}

/**
 * Ask the WebMCP content module of one document for its exact URLs now
 * (grant checks, step 7); inject it once when no one answers. `null` when the
 * document cannot be reached or its top is not readable.
 */
export async function askUrls(target: { tabId: number; frameId: number; documentId: string }): Promise<PageUrlsValue | null> {
  const ask = async (): Promise<Result<PageUrlsValue> | null> => {
    try {
      const msg: ToWebMcp = { type: 'echo:webmcp:urls' };
      const r = await withTimeout(chrome.tabs.sendMessage(target.tabId, msg, { frameId: target.frameId, documentId: target.documentId }) as Promise<Result<PageUrlsValue>>, FRAME_ANSWER_TIMEOUT_MS);
      return r === 'timeout' ? null : (r ?? null);
    } catch {
      return null;
    }
  };
  let answer = await ask();
  if (answer === null) {
    if (!(await injectInto(target.tabId, [target.documentId])).has(target.documentId)) return null;
    answer = await ask();
  }
  return answer && answer.ok ? cleanUrls(answer.value) : null;
}

function isReport(v: unknown): v is FrameReport {
  const r = v as FrameReport;
  return !!r && typeof r.origin === 'string' && Array.isArray(r.tools) && Array.isArray(r.violations) && !!r.support && typeof r.support === 'object';
}

function cleanSupport(s: unknown): WebMcpSupport {
  const x = (s ?? {}) as Partial<WebMcpSupport>;
  return {
    modelContext: x.modelContext === true,
    legacyApi: x.legacyApi === 'navigator.modelContext' || x.legacyApi === 'navigator.modelContextTesting' ? x.legacyApi : null,
    argumentForm: x.argumentForm === 'object' || x.argumentForm === 'json-string' ? x.argumentForm : null,
  };
}

/** One validated, hashed tool of one frame. */
interface FrameTool {
  descriptor: ToolDescriptor;
  canonical: string;
}

/**
 * Validate a frame's report and turn its tools into descriptors: every tool is
 * checked again (inspectTool) against `origin`, then hashed (descriptorHash =
 * SHA-256 of the canonical JSON, src/shared/canonical.ts). Each descriptor
 * carries the frame's URL stripped (`frameUrl`) and `urlHash` of the exact top
 * and frame URLs the content script saw when it listed the tools (what a grant
 * binds); both are left out when the report has no URLs.
 */
export async function toolsOfReport(
  report: FrameReport,
  where: { tabId: number; frameId: number; documentId: string },
  origin: string,
  violations: DiscoveryViolation[],
): Promise<FrameTool[]> {
  const out: FrameTool[] = [];
  const urls = cleanUrls(report.urls);
  const located = urls ? { frameUrl: stripUrl(urls.frame), tabUrl: stripUrl(urls.tab), urlHash: await urlHash(urls.tab, urls.frame) } : null;
  if (urls && located) seenUrls.remember(located.urlHash, urls);
  for (const raw of report.tools.slice(0, LIMITS.maxToolsPerFrame)) {
    const checked = inspectTool(raw as RawTool, origin);
    if (!checked.ok) {
      violations.push({ frameId: where.frameId, ...checked.violation });
      continue;
    }
    const { tool, canonical, flags, blocked } = checked.value;
    const fields = descriptorHashInput(tool);
    const descriptor: ToolDescriptor = {
      name: fields.name,
      title: fields.title,
      description: fields.description,
      inputSchema: fields.inputSchema,
      origin: fields.origin,
      descriptorHash: await sha256Hex(canonical),
      tabId: where.tabId,
      frameId: where.frameId,
      documentId: where.documentId,
      kind: tool.kind === 'declarative' ? 'declarative' : 'imperative',
    };
    if (located) {
      descriptor.frameUrl = located.frameUrl;
      descriptor.tabUrl = located.tabUrl;
      descriptor.urlHash = located.urlHash;
    }
    if (tool.annotations != null) descriptor.annotations = tool.annotations;
    if (blocked) descriptor.blocked = blocked;
    if (flags.length > 0) descriptor.flags = flags;
    seenDescriptors.remember(descriptor.descriptorHash, canonical);
    out.push({ descriptor, canonical });
  }
  if (report.tools.length > LIMITS.maxToolsPerFrame) {
    violations.push({ frameId: where.frameId, reason: 'too-many-tools', detail: `${report.tools.length} tools reported` });
  }
  return out;
}

/** Dependencies of discovery (the chrome calls), injectable for tests. */
export interface DiscoveryDeps {
  frames(tabId: number): Promise<FrameInfo[]>;
  inject(tabId: number, documentIds: string[]): Promise<Set<string>>;
  ask(tabId: number, frame: { frameId: number; documentId: string }, name?: string): Promise<Result<FrameReport> | 'timeout' | null>;
}

export const chromeDiscoveryDeps: DiscoveryDeps = { frames: liveFrames, inject: injectInto, ask: askFrame };

/**
 * Discover a shared tab whose shared origin is `sharedOrigin`.
 * Errors: `navigated` when the top document is no longer at that origin (the
 * caller ends sharing), `no-document` when the tab has no live top document.
 * Limits: LIMITS.maxToolsPerFrame, name/title/description/schema limits per
 * tool, MAX_FRAMES_PER_DISCOVERY, and the whole answer within
 * LIMITS.maxMessageBytes (tools dropped from the end as `message-too-large`).
 */
export async function discoverTab(tabId: number, sharedOrigin: string, deps: DiscoveryDeps = chromeDiscoveryDeps): Promise<Result<DiscoveryResult>> {
  const frames = await deps.frames(tabId);
  const top = frames.find((f) => f.frameId === 0);
  if (!top) return err('no-document', 'the tab has no live top-level document');
  if (top.origin !== sharedOrigin) return err('navigated', 'the tab is no longer at the shared origin');
  const violations: DiscoveryViolation[] = [];
  const sameOrigin: FrameInfo[] = [];
  for (const f of frames) {
    if (f.origin === sharedOrigin) sameOrigin.push(f);
    // An empty or srcdoc iframe is no violation: it is not asked (tabs.ts isAboutFrameUrl), and says nothing.
    else if (!isAboutFrameUrl(f.url)) violations.push({ frameId: f.frameId, reason: 'cross-origin-frame', detail: 'the frame is not same-origin with the top-level document' });
  }
  const asked = sameOrigin.slice(0, MAX_FRAMES_PER_DISCOVERY);
  for (const f of sameOrigin.slice(MAX_FRAMES_PER_DISCOVERY)) violations.push({ frameId: f.frameId, reason: 'too-many-frames' });
  const injected = await deps.inject(tabId, asked.map((f) => f.documentId));
  let support: WebMcpSupport = { modelContext: false, legacyApi: null, argumentForm: null };
  /** The tab's URL as the top frame's content script read it: the read every tool's `urlHash` covers. */
  let topUrlRead: string | null = null;
  const perFrame = await Promise.all(
    asked.map(async (f) => {
      if (!injected.has(f.documentId)) {
        violations.push({ frameId: f.frameId, reason: 'frame-unreachable', detail: 'the content script could not be injected' });
        return [];
      }
      const answer = await deps.ask(tabId, f);
      if (answer === 'timeout') {
        violations.push({ frameId: f.frameId, reason: 'frame-timeout' });
        return [];
      }
      if (!answer || !answer.ok || !isReport(answer.value)) {
        violations.push({ frameId: f.frameId, reason: 'frame-unreachable', detail: answer && !answer.ok ? answer.error.code : 'no answer' });
        return [];
      }
      const report = answer.value;
      if (report.origin !== sharedOrigin) {
        violations.push({ frameId: f.frameId, reason: 'cross-origin-frame', detail: 'the document has another (e.g. sandboxed, opaque) origin' });
        return [];
      }
      if (f.frameId === 0) {
        support = cleanSupport(report.support);
        if (report.urls && typeof report.urls.tab === 'string') topUrlRead = report.urls.tab;
      }
      for (const v of report.violations.slice(0, 3 * LIMITS.maxToolsPerFrame)) {
        violations.push({ frameId: f.frameId, reason: String(v.reason).slice(0, 64), ...(v.name !== undefined ? { name: String(v.name).slice(0, 128) } : {}), ...(v.detail !== undefined ? { detail: String(v.detail).slice(0, 256) } : {}) });
      }
      return toolsOfReport(report, { tabId, frameId: f.frameId, documentId: f.documentId }, sharedOrigin, violations);
    }),
  );
  const all = perFrame.flat();
  const confusable = confusableIndexes(all.map((t) => t.descriptor.name));
  all.forEach((t, i) => {
    if (confusable.has(i)) t.descriptor.flags = [...(t.descriptor.flags ?? []), 'confusable-name'].sort();
  });
  if (violations.length > MAX_VIOLATIONS) {
    const extra = violations.length - MAX_VIOLATIONS;
    violations.length = MAX_VIOLATIONS;
    violations.push({ frameId: -1, reason: 'too-many-violations', detail: `${extra} more not listed` });
  }
  const result: DiscoveryResult = {
    tabId,
    origin: sharedOrigin,
    // The URL the person is shown is the one the bound hash covers (the top's own read),
    // not webNavigation's from before the frames answered: a pushState in between must not
    // show one URL and bind another (review finding 2). webNavigation's only without a read.
    url: stripUrl(topUrlRead ?? top.url),
    documentId: top.documentId,
    support,
    tools: all.map((t) => t.descriptor),
    violations,
  };
  boundMessage(result.tools, () => utf8Bytes(JSON.stringify(result)), LIMITS.maxMessageBytes - ENVELOPE_BYTES, (t) =>
    violations.push({ frameId: t.frameId, reason: 'message-too-large', name: t.name }),
  );
  return ok(result);
}

/** A tool found by the fresh discovery in the target document (the WebMCP faculty's own check). */
export interface FoundTool {
  /** Canonical JSON of the descriptor fields (what the hash covers); the content script re-checks it at dispatch. */
  canonical: string;
  descriptorHash: string;
  blocked?: string;
}

/**
 * The rediscovery right before dispatch: ask exactly one document again and
 * answer the tools named `name` there (the webmcp-invoke faculty's check). `null` when the
 * document cannot be reached (it went away: `navigated`).
 */
export async function toolsNamedIn(
  target: { tabId: number; frameId: number; documentId: string },
  name: string,
  origin: string,
  deps: DiscoveryDeps = chromeDiscoveryDeps,
): Promise<FoundTool[] | null> {
  // Discovery injected the content script already; inject (~1 ms) only when no one answers.
  // Only this tool's name is asked for: a full report of 64 tools cost ~2 ms more per invocation.
  let answer = await deps.ask(target.tabId, target, name);
  if (answer === null) {
    const injected = await deps.inject(target.tabId, [target.documentId]);
    if (!injected.has(target.documentId)) return null;
    answer = await deps.ask(target.tabId, target, name);
  }
  if (answer === 'timeout' || !answer || !answer.ok || !isReport(answer.value)) return null;
  if (answer.value.origin !== origin) return null;
  const named = answer.value.tools.filter((t) => t && t.name === name);
  const violationsNamed = answer.value.violations.filter((v) => v.name === name);
  const found: FoundTool[] = [];
  for (const raw of named) {
    const checked = inspectTool(raw, origin);
    if (!checked.ok) continue;
    const f: FoundTool = { canonical: checked.value.canonical, descriptorHash: await sha256Hex(checked.value.canonical) };
    if (checked.value.blocked) f.blocked = checked.value.blocked;
    found.push(f);
  }
  // A same-named tool that broke a limit still exists on the page: never let it make the name look unique.
  for (let i = 0; i < violationsNamed.length; i++) found.push({ canonical: '', descriptorHash: '', blocked: 'limit' });
  return found;
}

/**
 * A frame's page-lint facts as the worker passes them on: only the shapes of src/shared/page-lint.ts
 * PageLintFacts, every string cut and every list bounded (PAGE_FACT_LIMITS), `frameId` the worker's.
 * Null when the answer is not facts at all.
 */
export function cleanLintFacts(v: unknown, frameId: number): PageLintFacts | null {
  const x = v as Partial<PageLintFacts> | null;
  if (!x || typeof x !== 'object' || !Array.isArray(x.forms) || !Array.isArray(x.legacyApi)) return null;
  const s = (t: unknown) => String(t ?? '').slice(0, PAGE_FACT_LIMITS.maxText);
  const count = (n: unknown) => (Number.isSafeInteger(n) && (n as number) >= 0 ? (n as number) : 0);
  const WHAT = new Set(['navigator.modelContext', 'navigator.modelContextTesting', 'provideContext']);
  return {
    frameId,
    legacyApi: x.legacyApi
      .slice(0, PAGE_FACT_LIMITS.maxMentions)
      .filter((m) => m && WHAT.has((m as { what?: unknown }).what as string))
      .map((m) => ({ what: m.what, where: s(m.where) })),
    forms: x.forms.slice(0, PAGE_FACT_LIMITS.maxForms).map((f) => ({
      toolName: s(f?.toolName),
      toolDescription: s(f?.toolDescription),
      autosubmit: f?.autosubmit === true,
      action: s(f?.action),
      submitTexts: (Array.isArray(f?.submitTexts) ? f.submitTexts : []).slice(0, PAGE_FACT_LIMITS.maxSubmitTexts).map(s),
      fields: (Array.isArray(f?.fields) ? f.fields : []).slice(0, PAGE_FACT_LIMITS.maxFields).map((c) => ({ type: s(c?.type), name: s(c?.name), autocomplete: s(c?.autocomplete), id: s(c?.id) })),
    })),
    scripts: { scanned: count(x.scripts?.scanned), skipped: count(x.scripts?.skipped) },
  };
}

/**
 * Page lint's DOM facts of a shared tab (faculty `webmcp-discover`, operation `lint`): asked of the
 * same frames a discovery asks (same-origin with the top, at most MAX_FRAMES_PER_DISCOVERY), each
 * answer cleaned (`cleanLintFacts`). A frame that cannot be reached or does not answer in
 * FRAME_ANSWER_TIMEOUT_MS is left out and counted in `unreached`.
 * Errors: `navigated` (the top left the shared origin), `no-document`.
 */
export async function lintFactsOfTab(tabId: number, sharedOrigin: string, deps: Pick<DiscoveryDeps, 'frames' | 'inject'> = chromeDiscoveryDeps): Promise<Result<{ frames: PageLintFacts[]; unreached: number }>> {
  const frames = await deps.frames(tabId);
  const top = frames.find((f) => f.frameId === 0);
  if (!top) return err('no-document', 'the tab has no live top-level document');
  if (top.origin !== sharedOrigin) return err('navigated', 'the tab is no longer at the shared origin');
  const asked = frames.filter((f) => f.origin === sharedOrigin).slice(0, MAX_FRAMES_PER_DISCOVERY);
  const injected = await deps.inject(tabId, asked.map((f) => f.documentId));
  let unreached = 0;
  const out: PageLintFacts[] = [];
  await Promise.all(
    asked.map(async (f) => {
      if (!injected.has(f.documentId)) return void unreached++;
      try {
        const msg: ToWebMcp = { type: 'echo:webmcp:lint' };
        const r = await withTimeout(chrome.tabs.sendMessage(tabId, msg, { frameId: f.frameId, documentId: f.documentId }) as Promise<Result<unknown>>, FRAME_ANSWER_TIMEOUT_MS);
        const facts = r !== 'timeout' && r && r.ok ? cleanLintFacts(r.value, f.frameId) : null;
        if (facts) out.push(facts);
        else unreached++;
      } catch {
        unreached++;
      }
    }),
  );
  out.sort((a, b) => a.frameId - b.frameId);
  return ok({ frames: out, unreached });
}
