/**
 * Faculty `webmcp-discover` (read), operations:
 *  - `discover`, arguments `{}`: the same-origin WebMCP tools of one shared tab
 *    (docs/design.md, capability 1; ../discovery.ts does the work in the
 *    `webmcp` content module). The link op `discover {tabId}` is this too.
 *  - `locate`, arguments `{frameId, documentId}`: where that frame is now (`documentId: null`:
 *    whatever document the frame holds now, for a subject that names only a frame: raw JavaScript)
 *    (src/shared/types.ts FrameLocation), read in that very document: after a
 *    same-document navigation the console asks this instead of discovering
 *    again, since the descriptors stayed. Errors: `tab-not-shared`, `navigated`
 *    (the frame holds another document, is at another origin, or cannot be read).
 *  - `form`, arguments `{frameId, documentId, toolName}`: the form of that
 *    declarative tool as it would be submitted now (src/shared/form.ts
 *    FormSnapshot), read in that very document; the console shows and binds it
 *    (the form subject, issue 8 item 4). Errors: `tab-not-shared`, `navigated`,
 *    `tool-missing`, `tool-ambiguous`, `form-too-large`, `bad-answer`.
 *  - `lint`, arguments `{}`: page lint's DOM facts of every same-origin frame (`{frames:
 *    PageLintFacts[], unreached}`, src/shared/page-lint.ts; ../discovery.ts lintFactsOfTab), for
 *    the console's tool inspector (docs/inspector.md). Errors: `tab-not-shared`, `navigated`, `no-document`.
 */
import { urlHash } from '../../../../src/shared/canonical';
import { err, ok, type Result } from '../../../../src/shared/result';
import type { FrameLocation } from '../../../../src/shared/types';
import { stripUrl } from '../../../../src/shared/url';
import { WEBMCP_MODULE, frameDocument } from '../tabs';
import { askUrls, discoverTab, lintFactsOfTab } from '../discovery';
import { seenUrls } from '../preimages';
import { isEmptyObject, type ReadFaculty } from './registry';
import { askForm } from '../form-ask';
import { LIMITS } from '../../../../src/shared/limits';

/** The effects of `locate`, injectable for tests. */
export interface LocateDeps {
  frameDocument(tabId: number, frameId: number): Promise<{ documentId: string; origin: string } | null>;
  pageUrls(target: { tabId: number; frameId: number; documentId: string }): Promise<{ tab: string; frame: string } | null>;
}

const chromeLocateDeps: LocateDeps = { frameDocument, pageUrls: askUrls };

/**
 * Where frame `frameId` of a shared tab at `origin` is now, if it still holds `documentId`.
 * The exact URLs are kept as the preimage of their hash (../preimages.ts) for the dispatch that follows.
 */
export async function locateFrame(tabId: number, origin: string, frameId: number, documentId: string | null, deps: LocateDeps = chromeLocateDeps): Promise<Result<FrameLocation>> {
  const doc = await deps.frameDocument(tabId, frameId);
  if (!doc || (documentId !== null && doc.documentId !== documentId)) return err('navigated', 'the frame holds another document now');
  documentId = doc.documentId;
  if (doc.origin !== origin) return err('navigated', 'the frame is not at the shared origin');
  const urls = await deps.pageUrls({ tabId, frameId, documentId });
  if (!urls) return err('navigated', 'the document cannot be reached to read its URL');
  const hash = await urlHash(urls.tab, urls.frame);
  seenUrls.remember(hash, urls);
  return ok({ frameId, documentId, tabUrl: stripUrl(urls.tab), frameUrl: stripUrl(urls.frame), urlHash: hash });
}

function locateArgsProblem(args: Record<string, unknown>): string | null {
  const keys = Object.keys(args);
  const docOk = args.documentId === null || (typeof args.documentId === 'string' && args.documentId.length >= 1 && args.documentId.length <= 128);
  if (keys.length !== 2 || !Number.isSafeInteger(args.frameId) || (args.frameId as number) < 0 || !docOk) {
    return 'locate takes {frameId: a frame id, documentId: a document id, or null for the one it holds now}';
  }
  return null;
}

function formArgsProblem(args: Record<string, unknown>): string | null {
  const { toolName, ...rest } = args;
  if (typeof toolName !== 'string' || !LIMITS.toolNamePattern.test(toolName) || typeof rest.documentId !== 'string' || locateArgsProblem(rest)) return 'form takes {frameId, documentId, toolName: a tool name}';
  return null;
}

/** The form of a declarative tool, in frame `frameId` if it still holds `documentId` at the shared origin. */
async function readForm(tabId: number, origin: string, args: Record<string, unknown>) {
  const frameId = args.frameId as number;
  const documentId = args.documentId as string;
  const doc = await frameDocument(tabId, frameId);
  if (!doc || doc.documentId !== documentId) return err('navigated', 'the frame holds another document now');
  if (doc.origin !== origin) return err('navigated', 'the frame is not at the shared origin');
  return askForm({ tabId, frameId, documentId }, args.toolName as string);
}

export const webmcpDiscover: ReadFaculty = {
  id: 'webmcp-discover',
  kind: 'read',
  operations: ['discover', 'locate', 'form', 'lint'],
  contentModule: WEBMCP_MODULE,
  checkRequest: (operation, args) =>
    operation === 'locate' ? locateArgsProblem(args) : operation === 'form' ? formArgsProblem(args) : isEmptyObject(args) ? null : `${operation} takes no arguments ({})`,
  async read(operation, tabId, args, services) {
    const shared = await services.sharedTab(tabId);
    if (!shared) return err('tab-not-shared', 'the tab is not shared');
    if (operation === 'locate') return locateFrame(tabId, shared.origin, args.frameId as number, args.documentId as string | null);
    if (operation === 'form') return readForm(tabId, shared.origin, args);
    if (operation === 'lint') return lintFactsOfTab(tabId, shared.origin);
    const r = await discoverTab(tabId, shared.origin);
    if (!r.ok && r.error.code === 'navigated') {
      await services.endSharing(tabId);
      return err('tab-not-shared', 'the tab left the shared origin; sharing ended');
    }
    return r;
  },
};
