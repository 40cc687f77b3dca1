/**
 * Faculty `semantic-target` (read). Operation `picture` is the target's picture
 * for the dialog (./semantic-picture.ts). Operation `resolve`, arguments `{ref}`,
 * `{fingerprint}` (a partial Fingerprint) or `{focused: true}` (page_key: the
 * element focused now, lib/semantic-focus.ts): the console's look-up of the target
 * of a semantic mutation before it asks the person (issue 10 items 1, 5, 6;
 * docs/semantic-controls.md). Not an agent tool of its own: the console calls
 * it while resolving page_click/hover/focus/scroll (src/main/core/faculties/semantic.ts).
 *
 * It asks the `semantic` content module (the snapshot's, so a ref is the very
 * element the snapshot named) in the tab's top document and its first
 * MAX_SNAPSHOT_FRAMES same-origin frames; cross-origin frames are never
 * injected, so nothing in them can be a target. Answers
 * src/shared/semantic-target.ts ResolvedTarget: the target's frame, document,
 * stripped URLs and exact-URL hash, its ref (a document never snapshotted is
 * handed a tag first, so an unblocked target always has one), fingerprint, and whether it is
 * blocked or owned by a narrower WebMCP tool. Errors: `tab-not-shared`,
 * `navigated` (the top left the shared origin, or the ref's document is gone),
 * `ref-unknown`, `ref-stale`, `target-unsupported`, `target-missing`,
 * `target-ambiguous` (detail.refs), `no-document`.
 */
import { canonicalJson, urlHash } from '../../../../src/shared/canonical';
import { err, ok, type Result } from '../../../../src/shared/result';
import { parseRef, REF_PATTERN, tagNumber } from '../../../../src/shared/snapshot';
import { fingerprintProblem, type FingerprintQuery, type ResolvedTarget } from '../../../../src/shared/semantic-target';
import { stripUrl } from '../../../../src/shared/url';
import type { TargetMatch, TargetReport, ToSemanticAction, ToSemanticGeometry } from '../../lib/semantic-messages';
import type { ToLivePatch } from '../../lib/live-patch-messages';
import { injectInto, isAboutFrameUrl, liveFrames, type FrameInfo } from '../tabs';
import { MAX_SNAPSHOT_FRAMES, nextDocumentTag, SEMANTIC_MODULE } from './semantic-read';
import type { ReadFaculty } from './registry';
import { checkPictureArgs, takePicture, type PictureArgs } from './semantic-picture';

/** A frame that does not answer within this time is left out (ms). */
const ANSWER_TIMEOUT_MS = 10_000;
/** chrome.storage.session key of the last document tag handed out (semantic-read.ts TAG_KEY). */
const TAG_KEY = 'semantic:lastTag';

/** Ask one document of the tab; null when it did not answer. */
export async function askSemantic<T>(tabId: number, frame: { frameId: number; documentId: string }, msg: ToSemanticAction | ToSemanticGeometry | ToLivePatch, timeoutMs = ANSWER_TIMEOUT_MS): Promise<Result<T> | null> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const r = await Promise.race([
      chrome.tabs.sendMessage(tabId, msg, { frameId: frame.frameId, documentId: frame.documentId }) as Promise<Result<T>>,
      new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), timeoutMs))),
    ]);
    return r && typeof r === 'object' ? r : null;
  } catch {
    return null;
  } finally {
    clearTimeout(timer);
  }
}

/** `null` when `args` are what `resolve` takes (exactly one of `ref`, `fingerprint`, or `focused: true` for page_key), otherwise why not. */
export function checkResolveArgs(args: Record<string, unknown>): string | null {
  const keys = Object.keys(args);
  if (keys.length === 1 && keys[0] === 'focused') return args.focused === true ? null : 'focused must be true';
  if (keys.length !== 1 || (keys[0] !== 'ref' && keys[0] !== 'fingerprint')) return 'resolve takes exactly one of ref, fingerprint';
  if (args.ref !== undefined && (typeof args.ref !== 'string' || !REF_PATTERN.test(args.ref))) return 'ref must be a ref from a snapshot (e.g. a12)';
  if (args.fingerprint !== undefined) return fingerprintProblem(args.fingerprint, true);
  return null;
}

/**
 * The frames of `frames` a target may be looked for in: the top and the frames at `origin` whose
 * every ancestor up to the top is at `origin` too (not about: documents). A same-origin frame
 * nested inside a cross-origin one is left out: the snapshot never shows it, and its hit test
 * cannot see the cross-origin frame above it (review finding 8). Sorted as given.
 */
export function framesToAsk(frames: readonly FrameInfo[], origin: string): FrameInfo[] {
  const byId = new Map(frames.map((f) => [f.frameId, f]));
  const chainOk = (f: FrameInfo): boolean => {
    for (let cur: FrameInfo | undefined = f, i = 0; cur && i < 64; i++) {
      if (cur.origin !== origin || (cur.frameId !== 0 && isAboutFrameUrl(cur.url))) return false;
      if (cur.frameId === 0) return true;
      cur = byId.get(cur.parentFrameId);
    }
    return false;
  };
  return frames.filter((f) => f.frameId === 0 || chainOk(f));
}

type Found = { frame: FrameInfo; report: Extract<TargetReport, { kind: 'targets' }> };

/** The ResolvedTarget of one match in one frame, or null when its URLs could not be read. */
async function resolvedOf(f: Found, m: TargetMatch): Promise<ResolvedTarget | null> {
  const u = f.report.urls;
  if (!u || typeof u.tab !== 'string' || typeof u.frame !== 'string') return null;
  return {
    frameId: f.frame.frameId,
    documentId: f.frame.documentId,
    origin: f.report.origin,
    tabUrl: stripUrl(u.tab),
    frameUrl: stripUrl(u.frame),
    urlHash: await urlHash(u.tab, u.frame),
    ref: m.ref,
    fingerprint: m.fingerprint,
    blocked: m.blocked,
    narrower: m.narrower,
  };
}

/**
 * Resolve the target in tab `tabId` shared at `origin`: by ref, by fingerprint, or (`focused`, page_key)
 * the element focused now in the one same-origin document that holds the tab's focus (the document itself
 * when nothing is focused); `target-missing` when no readable document holds it.
 */
export async function resolveTarget(tabId: number, origin: string, args: { ref?: string; fingerprint?: FingerprintQuery; focused?: true }): Promise<Result<ResolvedTarget>> {
  const frames = await liveFrames(tabId);
  const top = frames.find((f) => f.frameId === 0);
  if (!top) return err('no-document', 'the tab has no live top-level document');
  if (top.origin !== origin) return err('navigated', 'the tab is no longer at the shared origin');
  const readable = framesToAsk(frames, origin);
  const toAsk = [top, ...readable.filter((f) => f.frameId !== 0).slice(0, MAX_SNAPSHOT_FRAMES)];
  if (args.ref !== undefined) {
    const r = parseRef(args.ref);
    const last = Number((await chrome.storage.session.get(TAG_KEY))[TAG_KEY] ?? 0) || 0;
    if (!r || tagNumber(r.tag) > last) return err('ref-unknown', `ref ${args.ref} was never given out: take a snapshot (page_snapshot) and use its refs`);
  }
  const injected = await injectInto(tabId, toAsk.map((f) => f.documentId), SEMANTIC_MODULE);
  // `review`: the person is about to review this target: its readback's noise record starts afresh (lib/semantic-readback.ts prewatch).
  const msg: ToSemanticAction = args.focused
    ? { type: 'echo:semantic:target', focused: true, review: true }
    : args.ref !== undefined ? { type: 'echo:semantic:target', ref: args.ref, review: true } : { type: 'echo:semantic:target', query: args.fingerprint ?? {}, review: true };
  const answers = await Promise.all(toAsk.filter((f) => injected.has(f.documentId)).map(async (frame) => ({ frame, a: await askSemantic<TargetReport>(tabId, frame, msg) })));
  const found: Found[] = [];
  for (const { frame, a } of answers) {
    if (!a) continue;
    if (!a.ok) {
      if (['ref-stale', 'ref-unknown', 'target-unsupported'].includes(a.error.code)) return err(a.error.code, String(a.error.message).slice(0, 256));
      continue;
    }
    if (a.value && a.value.kind === 'targets' && Array.isArray(a.value.matches) && a.value.origin === origin) found.push({ frame, report: a.value });
  }
  const all = found.flatMap((f) => f.report.matches.map((m) => ({ f, m })));
  const total = found.reduce((n, f) => n + (Number.isSafeInteger(f.report.total) ? f.report.total : 0), 0);
  if (args.ref !== undefined && all.length === 0) return err('navigated', `the document of ref ${args.ref} is no longer in this tab: take a new snapshot`);
  if (args.focused && (total === 0 || all.length === 0)) return err('target-missing', 'no readable document of the tab holds the focus (a cross-origin frame may): focus an element first (page_focus)');
  if (total === 0 || all.length === 0) return err('target-missing', 'no element of the page has that fingerprint: take a snapshot (page_snapshot) and target by ref');
  if (total > 1) {
    const refs = all.map((x) => x.m.ref).filter((x): x is string => typeof x === 'string');
    return err('target-ambiguous', `${total} elements match that fingerprint${refs.length ? ` (refs ${refs.join(', ')})` : ''}: give more fields, or target one by ref`, { refs });
  }
  let one = all[0] as { f: Found; m: TargetMatch };
  if (one.m.ref === null && one.m.blocked === null) {
    // Its document was never snapshotted: hand it a tag and ask again, so the target has a ref and the
    // grant binds that element (identity plus fingerprint), not whichever element has the fingerprint later.
    const tag = await nextDocumentTag();
    const again = await askSemantic<TargetReport>(tabId, one.f.frame, args.focused ? { type: 'echo:semantic:target', focused: true, tag, review: true } : { type: 'echo:semantic:target', query: one.m.fingerprint, tag, review: true });
    const v = again && again.ok && again.value.kind === 'targets' ? again.value : null;
    const m = v && v.total === 1 && v.matches.length === 1 ? (v.matches[0] as TargetMatch) : null;
    if (!m || m.ref === null || canonicalJson(m.fingerprint) !== canonicalJson(one.m.fingerprint)) return err('target-missing', 'the target changed while it was looked up: take a snapshot (page_snapshot) and target by ref');
    one = { f: { frame: one.f.frame, report: v as Found['report'] }, m };
  }
  const resolved = await resolvedOf(one.f, one.m);
  return resolved ? ok(resolved) : err('navigated', "the target's document URL cannot be read");
}

/** The semantic-target faculty. */
export function semanticTarget(): ReadFaculty {
  return {
    id: 'semantic-target',
    kind: 'read',
    operations: ['resolve', 'picture'],
    contentModule: SEMANTIC_MODULE,
    checkRequest: (operation, args) => (operation === 'picture' ? checkPictureArgs(args) : checkResolveArgs(args)),
    async read(operation, tabId, args, services) {
      const shared = await services.sharedTab(tabId);
      if (!shared) return err('tab-not-shared', 'the tab is not shared');
      if (operation === 'picture') return takePicture(tabId, shared.origin, args as unknown as PictureArgs);
      return resolveTarget(tabId, shared.origin, args as { ref?: string; fingerprint?: FingerprintQuery; focused?: true });
    },
  };
}
