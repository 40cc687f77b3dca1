/**
 * Faculty `page-info` (read), operation `info`, arguments `{}`: what a shared
 * tab shows now (src/shared/types.ts PageInfo). The top document and the first
 * MAX_PAGE_INFO_READS same-origin frames are read in the page by the `page-info` content module
 * (content/page-info.ts, injected on demand into exactly those documents):
 * URL (stripped before it leaves), `document.title` as it is now (so a page
 * without `<title>` has `""`, never an old title) and whether
 * `document.modelContext.getTools` exists. A cross-origin frame is never
 * injected: only its origin (from chrome.webNavigation.getAllFrames) is told.
 * Same-origin frames past the reads are listed with the browser's URL and no
 * WebMCP claim; frames past MAX_PAGE_INFO_FRAMES are counted in `framesOmitted`.
 * Only for shared tabs (`tab-not-shared` otherwise); a top document that left
 * the shared origin ends sharing, as discovery does.
 */
import { err, ok, type Result } from '../../../../src/shared/result';
import type { PageInfo } from '../../../../src/shared/types';
import { stripUrl } from '../../../../src/shared/url';
import type { PageInfoReport, ToPageInfo } from '../../lib/messages';
import { injectInto, liveFrames, type FrameInfo } from '../tabs';
import { isEmptyObject, type ReadFaculty } from './registry';

/** The content module's name (extension/src/content/page-info.ts). */
export const PAGE_INFO_MODULE = 'page-info';
/** Frames listed per answer; the rest are left out (a page could nest thousands). */
export const MAX_PAGE_INFO_FRAMES = 256;
/** Same-origin frames read in the page per answer; further ones are listed from webNavigation only. */
export const MAX_PAGE_INFO_READS = 32;
/** Titles are cut to this many UTF-16 units. */
export const MAX_TITLE_CHARS = 1024;
/** A frame that does not answer within this time is listed as not read (ms). */
const ANSWER_TIMEOUT_MS = 5_000;

/** The effects of the faculty (chrome calls), injectable for tests. */
export interface PageInfoDeps {
  frames(tabId: number): Promise<FrameInfo[]>;
  inject(tabId: number, documentIds: string[]): Promise<Set<string>>;
  ask(tabId: number, frame: { frameId: number; documentId: string }): Promise<PageInfoReport | null>;
}

async function askFrame(tabId: number, frame: { frameId: number; documentId: string }): Promise<PageInfoReport | null> {
  const msg: ToPageInfo = { type: 'echo:page-info:read' };
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const answer = await Promise.race([
      chrome.tabs.sendMessage(tabId, msg, { frameId: frame.frameId, documentId: frame.documentId }) as Promise<Result<PageInfoReport>>,
      new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), ANSWER_TIMEOUT_MS))),
    ]);
    return answer && answer.ok ? cleanReport(answer.value) : null;
  } catch {
    return null;
  } finally {
    clearTimeout(timer);
  }
}

/** A content report with the right types, or `null`. */
function cleanReport(v: unknown): PageInfoReport | null {
  const r = v as Partial<PageInfoReport> | null;
  if (!r || typeof r.url !== 'string' || typeof r.title !== 'string' || typeof r.origin !== 'string') return null;
  return { url: r.url, title: r.title.slice(0, MAX_TITLE_CHARS), origin: r.origin, webmcp: r.webmcp === true };
}

const chromeDeps: PageInfoDeps = {
  frames: liveFrames,
  inject: (tabId, ids) => injectInto(tabId, ids, PAGE_INFO_MODULE),
  ask: askFrame,
};

/**
 * Build the PageInfo of a tab whose shared origin is `origin`.
 * Errors: `navigated` (the top left the origin), `no-document` (no live or readable top document).
 */
export async function pageInfoOf(tabId: number, origin: string, deps: PageInfoDeps = chromeDeps): Promise<Result<PageInfo>> {
  const frames = await deps.frames(tabId);
  const top = frames.find((f) => f.frameId === 0);
  if (!top) return err('no-document', 'the tab has no live top-level document');
  if (top.origin !== origin) return err('navigated', 'the tab is no longer at the shared origin');
  const toRead = frames.filter((f) => f.origin === origin).slice(0, MAX_PAGE_INFO_READS);
  const injected = await deps.inject(tabId, toRead.map((f) => f.documentId));
  const reports = new Map<number, PageInfoReport | null>();
  await Promise.all(toRead.map(async (f) => reports.set(f.frameId, injected.has(f.documentId) ? await deps.ask(tabId, f) : null)));
  const topReport = reports.get(0);
  if (!topReport) return err('no-document', 'the top document could not be read');
  if (topReport.origin !== origin) return err('no-document', 'the top document has another (e.g. sandboxed, opaque) origin');
  const info: PageInfo = {
    tabId,
    url: stripUrl(topReport.url),
    title: topReport.title,
    origin,
    documentId: top.documentId,
    webmcp: topReport.webmcp,
    frames: [],
  };
  const sub = frames.filter((x) => x.frameId !== 0);
  if (sub.length > MAX_PAGE_INFO_FRAMES) info.framesOmitted = sub.length - MAX_PAGE_INFO_FRAMES;
  for (const f of sub.slice(0, MAX_PAGE_INFO_FRAMES)) {
    if (f.origin !== origin) {
      info.frames.push({ frameId: f.frameId, sameOrigin: false, origin: f.origin });
      continue;
    }
    const r = reports.get(f.frameId);
    // Not read (past MAX_PAGE_INFO_READS, or it did not answer): the browser's URL, and no claim of WebMCP.
    if (r === undefined || r === null) info.frames.push({ frameId: f.frameId, sameOrigin: true, url: stripUrl(f.url), documentId: f.documentId, webmcp: false });
    // A same-URL frame with an opaque origin (sandbox) is not same-origin: its origin only.
    else if (r.origin !== origin) info.frames.push({ frameId: f.frameId, sameOrigin: false, origin: r.origin });
    else info.frames.push({ frameId: f.frameId, sameOrigin: true, url: stripUrl(r.url), documentId: f.documentId, webmcp: r.webmcp });
  }
  return ok(info);
}

/** The page-info faculty; `deps` default to chrome. */
export function pageInfo(deps: PageInfoDeps = chromeDeps): ReadFaculty {
  return {
    id: 'page-info',
    kind: 'read',
    operations: ['info'],
    contentModule: PAGE_INFO_MODULE,
    checkRequest: (_operation, args) => (isEmptyObject(args) ? null : 'info takes no arguments ({})'),
    async read(_operation, tabId, _args, services) {
      const shared = await services.sharedTab(tabId);
      if (!shared) return err('tab-not-shared', 'the tab is not shared');
      const r = await pageInfoOf(tabId, shared.origin, deps);
      if (!r.ok && r.error.code === 'navigated') {
        await services.endSharing(tabId);
        return err('tab-not-shared', 'the tab left the shared origin; sharing ended');
      }
      return r;
    },
  };
}
