/**
 * Faculty `semantic-read` (read), operation `snapshot`, arguments
 * `{maxBytes?, ref?}`: the semantic snapshot of a shared tab (issue 10 item 2;
 * docs/semantic-snapshot.md; the value is src/shared/types.ts
 * SemanticSnapshot). The `semantic` content module (content/semantic.ts) is
 * injected on demand into the top document and the first MAX_SNAPSHOT_FRAMES
 * same-origin frames and walks each; this file hands each document its ref
 * tag, puts each frame's snapshot where its iframe is, gives a cross-origin
 * frame one line with its origin (never injected), and cuts the whole to the
 * budget (src/shared/snapshot.ts assembleSnapshot).
 *
 * With `ref`, the snapshot starts at that element: the live document whose tag
 * the ref carries answers; none (the document is gone) is `navigated`; a tag
 * never handed out is `ref-unknown`; an element that left the DOM is
 * `ref-stale`. Only for shared tabs (`tab-not-shared`); a top document that
 * left the shared origin ends sharing, as page-info does.
 */
import { err, ok, type Result } from '../../../../src/shared/result';
import {
  assembleSnapshot, crossOriginLine, NOT_READ_LINE, parseRef, REF_PATTERN, SNAPSHOT_BYTES, tagNumber, tagOf, type FrameContent, type FramePart, type SnapshotPart,
} from '../../../../src/shared/snapshot';
import type { SemanticSnapshot } from '../../../../src/shared/types';
import { stripUrl } from '../../../../src/shared/url';
import type { SemanticReport, ToSemantic, ToSemanticRead } from '../../lib/messages';
import { injectInto, isAboutFrameUrl, liveFrames, type FrameInfo } from '../tabs';
import type { ReadFaculty } from './registry';
import { checkOf, checkQueryArgs, chromeQueryDeps, extractOf, QUERY_OPERATIONS, type QueryDeps } from './semantic-query';

/** The content module's name (extension/src/content/semantic.ts); later semantic faculties share it, and so its refs. */
export const SEMANTIC_MODULE = 'semantic';
/** Same-origin frames read per snapshot; further ones are `not-read` lines. */
export const MAX_SNAPSHOT_FRAMES = 32;
/** A frame that does not answer within this time is `not-read` (ms). */
const ANSWER_TIMEOUT_MS = 10_000;
/** chrome.storage.session key of the last document tag handed out (a number; never goes back within the browser session). */
const TAG_KEY = 'semantic:lastTag';

type Snap = Extract<SemanticReport, { kind: 'snapshot' }>;

/** The effects of the faculty (chrome calls), injectable for tests. */
export interface SemanticDeps {
  frames(tabId: number): Promise<FrameInfo[]>;
  inject(tabId: number, documentIds: string[]): Promise<Set<string>>;
  /** Ask one document; null when it did not answer in time, an error NO_RECEIVER when no module of ours listens there. */
  ask(tabId: number, frame: { frameId: number; documentId: string }, msg: ToSemantic): Promise<Result<SemanticReport> | null>;
  /** A new document tag number (1, 2, …; never one handed out before in this browser session). */
  nextTag(): Promise<number>;
  /** The last tag number handed out (0: none). */
  lastTag(): Promise<number>;
}

/**
 * The error code of an ask that no `semantic` module answered: the document
 * has none yet (the message was refused, or only another module listened).
 * Then the module is injected and asked again (askInjecting).
 */
export const NO_RECEIVER = 'no-receiver';

/**
 * Ask one document of the `semantic` module (the snapshot's messages and the reads').
 * @returns its answer; an error NO_RECEIVER when no module of ours listens there; null when
 *   no answer came within `timeoutMs` (ms).
 */
export async function askFrame(tabId: number, frame: { frameId: number; documentId: string }, msg: ToSemantic | ToSemanticRead, timeoutMs = ANSWER_TIMEOUT_MS): Promise<Result<SemanticReport> | null> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const a = await Promise.race([
      chrome.tabs.sendMessage(tabId, msg, { frameId: frame.frameId, documentId: frame.documentId }) as Promise<Result<SemanticReport> | undefined>,
      new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), timeoutMs))),
    ]);
    return a === undefined ? err(NO_RECEIVER, 'no semantic module answered') : a;
  } catch {
    // "Receiving end does not exist" (nothing of ours there) or "message port closed" (another module only).
    return err(NO_RECEIVER, 'no semantic module answered');
  } finally {
    clearTimeout(timer);
  }
}

let tagChain: Promise<number> = Promise.resolve(0);
/** The chrome effects (the one tag counter every semantic read shares). */
export const chromeDeps: SemanticDeps = {
  frames: liveFrames,
  inject: (tabId, ids) => injectInto(tabId, ids, SEMANTIC_MODULE),
  ask: askFrame,
  // One at a time, so two snapshots never hand out the same number; a failed
  // write fails that snapshot only (the number was not stored, so none is spent twice).
  nextTag: () =>
    (tagChain = tagChain
      .catch(() => 0)
      .then(async () => {
        const last = Number((await chrome.storage.session.get(TAG_KEY))[TAG_KEY] ?? 0) || 0;
        await chrome.storage.session.set({ [TAG_KEY]: last + 1 });
        return last + 1;
      })),
  lastTag: async () => Number((await chrome.storage.session.get(TAG_KEY))[TAG_KEY] ?? 0) || 0,
};

/**
 * A new document tag (semantic-read's own counter, so never one handed out before in this browser
 * session), for a document a fingerprint look-up found its target in before any snapshot
 * (semantic-target.ts resolveTarget): the target then has a ref the grant binds.
 */
export const nextDocumentTag = async (): Promise<string> => tagOf(await chromeDeps.nextTag());

/** A report with the right shape, or null. */
function cleanSnap(r: Result<SemanticReport> | null): Snap | null {
  if (!r || !r.ok || !r.value || r.value.kind !== 'snapshot') return null;
  const v = r.value;
  if (typeof v.tag !== 'string' || typeof v.key !== 'string' || !Array.isArray(v.parts) || typeof v.origin !== 'string' || typeof v.url !== 'string') return null;
  const parts: SnapshotPart[] = [];
  const strOrNull = (x: unknown) => (typeof x === 'string' ? x.slice(0, 2048) : null);
  for (const p of v.parts as unknown[]) {
    const q = p as Record<string, unknown>;
    if (q && typeof q.text === 'string') parts.push({ text: q.text });
    else if (q && Number.isSafeInteger(q.depth)) parts.push({ frameKey: strOrNull(q.frameKey), srcOrigin: strOrNull(q.srcOrigin), depth: Math.min(Math.max(q.depth as number, 0), 512) });
  }
  return { kind: 'snapshot', tag: v.tag, key: v.key, parts, truncated: v.truncated === true, refs: Number.isSafeInteger(v.refs) ? v.refs : 0, origin: v.origin, url: v.url };
}

/**
 * Ask a document, injecting the `semantic` module first only when none
 * answered (NO_RECEIVER): a document already holding it (every snapshot after
 * its first) is not injected again. Injecting on every snapshot cost about
 * 7 ms of a 13 ms snapshot of a small page (snapshot bench, 2026-12-02).
 * Null when the module could not be injected or did not answer.
 */
async function askInjecting(tabId: number, f: { frameId: number; documentId: string }, msg: ToSemantic, deps: SemanticDeps): Promise<Result<SemanticReport> | null> {
  const a = await deps.ask(tabId, f, msg);
  if (!a || a.ok || a.error.code !== NO_RECEIVER) return a;
  if (!(await deps.inject(tabId, [f.documentId])).has(f.documentId)) return null;
  const b = await deps.ask(tabId, f, msg);
  return b && !b.ok && b.error.code === NO_RECEIVER ? null : b;
}

/** The snapshot of one document, handing it a tag first when it has none. */
async function snapshotFrame(tabId: number, f: FrameInfo, maxBytes: number, deps: SemanticDeps): Promise<Snap | null> {
  const first = await askInjecting(tabId, f, { type: 'echo:semantic:snapshot', maxBytes }, deps);
  if (first?.ok && first.value.kind === 'need-tag') return cleanSnap(await deps.ask(tabId, f, { type: 'echo:semantic:snapshot', maxBytes, tag: tagOf(await deps.nextTag()) }));
  return cleanSnap(first);
}

/** The frames below `frameId` (children, grandchildren, …). */
function descendants(frames: FrameInfo[], frameId: number): FrameInfo[] {
  const out: FrameInfo[] = [];
  const want = new Set([frameId]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const f of frames) if (!want.has(f.frameId) && want.has(f.parentFrameId)) (want.add(f.frameId), out.push(f), (grew = true));
  }
  return out;
}

/**
 * The snapshot of a tab whose shared origin is `origin`.
 * Errors: `navigated` (the top left the origin: `detail` says so; or the ref's document is gone),
 * `no-document`, `ref-unknown`, `ref-stale`.
 */
export async function snapshotOf(
  tabId: number,
  origin: string,
  args: { maxBytes?: number; ref?: string },
  deps: SemanticDeps = chromeDeps,
): Promise<Result<SemanticSnapshot>> {
  const maxBytes = args.maxBytes ?? SNAPSHOT_BYTES.default;
  const frames = await deps.frames(tabId);
  const top = frames.find((f) => f.frameId === 0);
  if (!top) return err('no-document', 'the tab has no live top-level document');
  if (top.origin !== origin) return err('navigated', 'the tab is no longer at the shared origin', { topLeft: true });
  const readable = frames.filter((f) => f.origin === origin && !isAboutFrameUrl(f.url));
  const toRead = [top, ...readable.filter((f) => f.frameId !== 0).slice(0, MAX_SNAPSHOT_FRAMES)];

  // The frames hold the module before any walk: a parent's walk reads each child's frame key from it. The
  // top (most pages' only document) is injected only when it does not answer (askInjecting).
  const frameDocs = toRead.filter((f) => f.frameId !== 0).map((f) => f.documentId);
  const injected = frameDocs.length ? await deps.inject(tabId, frameDocs) : new Set<string>();

  let root: FrameInfo = top;
  let rootSnap: Snap | null = null;
  let others = toRead.filter((f) => f.frameId !== 0);
  if (args.ref !== undefined) {
    const r = parseRef(args.ref);
    if (!r) return err('bad-request', 'ref is not a ref');
    if (tagNumber(r.tag) > (await deps.lastTag())) return err('ref-unknown', `ref ${args.ref} was never given out`);
    const answers = await Promise.all(
      toRead
        .filter((f) => f.frameId === 0 || injected.has(f.documentId))
        .map(async (f) => ({ f, a: await askInjecting(tabId, f, { type: 'echo:semantic:snapshot', maxBytes, ref: args.ref }, deps) })),
    );
    for (const { f, a } of answers) {
      if (!a) continue;
      if (!a.ok) {
        if (a.error.code === 'ref-stale' || a.error.code === 'ref-unknown') return err(a.error.code, a.error.message.slice(0, 256));
        continue;
      }
      const s = cleanSnap(a);
      if (s) ((root = f), (rootSnap = s));
    }
    if (!rootSnap) return err('navigated', `the document of ref ${args.ref} is no longer in this tab: take a new snapshot`);
    const below = new Set(descendants(frames, root.frameId).map((f) => f.frameId));
    others = others.filter((f) => below.has(f.frameId));
  } else {
    rootSnap = await snapshotFrame(tabId, top, maxBytes, deps);
  }
  if (!rootSnap) return err('no-document', 'the top document could not be read');
  if (rootSnap.origin !== origin) return err('no-document', 'the document has another (e.g. sandboxed, opaque) origin');

  const snaps = new Map<number, Snap | null>();
  await Promise.all(others.map(async (f) => snaps.set(f.frameId, injected.has(f.documentId) ? await snapshotFrame(tabId, f, maxBytes, deps) : null)));
  const byKey = new Map<string, { frameId: number; snap: Snap }>();
  for (const [frameId, sn] of snaps) if (sn) byKey.set(sn.key, { frameId, snap: sn });
  const counts = { read: 0, crossOrigin: 0, notRead: 0 };
  // A frame's module that stopped at its budget left text out even when the assembly fits.
  const truncated = rootSnap.truncated || [...snaps.values()].some((x) => x?.truncated);
  let refs = rootSnap.refs;
  const placed = new Set<number>();
  const contentOf = (p: FramePart, inFrame: number): FrameContent => {
    if (p.frameKey !== null) {
      const hit = byKey.get(p.frameKey);
      if (!hit || placed.has(hit.frameId)) return (counts.notRead++, { line: NOT_READ_LINE });
      placed.add(hit.frameId);
      // An opaque origin behind a same-origin URL (a sandbox): its origin only.
      if (hit.snap.origin !== origin) return (counts.crossOrigin++, { line: crossOriginLine(hit.snap.origin) });
      counts.read++;
      refs += hit.snap.refs;
      return { frameId: hit.frameId, parts: hit.snap.parts };
    }
    // Unreadable from the parent: a cross-origin child of that frame (webNavigation knows its origin;
    // the iframe's src tells which when there are several), never its content.
    const candidates = frames.filter((f) => f.parentFrameId === inFrame && f.origin !== origin && !isAboutFrameUrl(f.url) && !placed.has(f.frameId));
    const pick = candidates.find((f) => f.origin === p.srcOrigin) ?? (candidates.length === 1 && p.srcOrigin !== origin ? candidates[0] : undefined);
    if (!pick) return (counts.notRead++, { line: NOT_READ_LINE });
    placed.add(pick.frameId);
    counts.crossOrigin++;
    return { line: crossOriginLine(pick.origin) };
  };
  const cut = assembleSnapshot({ frameId: root.frameId, parts: rootSnap.parts }, contentOf, maxBytes, truncated);
  return ok({
    tabId,
    origin,
    url: stripUrl(top.url),
    documentId: top.documentId,
    ...(args.ref !== undefined ? { ref: args.ref } : {}),
    frameId: root.frameId,
    rootDocumentId: root.documentId,
    text: cut.text,
    truncated: cut.truncated,
    bytes: cut.bytes,
    maxBytes,
    refs,
    frames: counts,
  });
}

/** `null` when `args` are what `snapshot` takes (`{maxBytes?: integer in SNAPSHOT_BYTES, ref?: REF_PATTERN}`), otherwise why not. */
export function checkSnapshotArgs(args: Record<string, unknown>): string | null {
  for (const k of Object.keys(args)) if (k !== 'maxBytes' && k !== 'ref') return `snapshot takes no argument ${JSON.stringify(k.slice(0, 64))}`;
  const m = args.maxBytes;
  if (m !== undefined && (!Number.isSafeInteger(m) || (m as number) < SNAPSHOT_BYTES.min || (m as number) > SNAPSHOT_BYTES.max)) {
    return `maxBytes must be an integer from ${SNAPSHOT_BYTES.min} to ${SNAPSHOT_BYTES.max}`;
  }
  if (args.ref !== undefined && (typeof args.ref !== 'string' || !REF_PATTERN.test(args.ref))) return 'ref must be a ref from a snapshot (e.g. a12)';
  return null;
}

/** The semantic-read faculty; `deps` (snapshot) and `queryDeps` (extract, wait, verify) default to chrome. */
export function semanticRead(deps: SemanticDeps = chromeDeps, queryDeps: QueryDeps = chromeQueryDeps): ReadFaculty {
  return {
    id: 'semantic-read',
    kind: 'read',
    operations: ['snapshot', ...QUERY_OPERATIONS],
    contentModule: SEMANTIC_MODULE,
    checkRequest: (operation, args) => (operation === 'snapshot' ? checkSnapshotArgs(args) : checkQueryArgs(operation, args)),
    async read(operation, tabId, args, services) {
      const shared = await services.sharedTab(tabId);
      if (!shared) return err('tab-not-shared', 'the tab is not shared');
      // extract, wait, verify: semantic-query.ts (docs/semantic-reads.md).
      const r: Result<unknown> =
        operation === 'extract'
          ? await extractOf(tabId, shared.origin, args as { ref?: string; selector?: string; maxBytes?: number }, queryDeps)
          : operation === 'wait' || operation === 'verify'
            ? await checkOf(tabId, shared.origin, operation, args, queryDeps)
            : await snapshotOf(tabId, shared.origin, { maxBytes: args.maxBytes as number | undefined, ref: args.ref as string | undefined }, deps);
      if (!r.ok && r.error.code === 'navigated' && (r.error.detail as { topLeft?: boolean } | undefined)?.topLeft) {
        await services.endSharing(tabId);
        return err('tab-not-shared', 'the tab left the shared origin; sharing ended');
      }
      return r;
    },
  };
}
