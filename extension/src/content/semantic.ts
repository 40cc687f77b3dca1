/**
 * The `semantic` content module (ISOLATED world), for the `semantic-read`
 * faculty's `snapshot` (issue 10 item 2; docs/semantic-snapshot.md). Answers
 * `echo:semantic:snapshot` (lib/messages.ts ToSemantic) with this document's
 * snapshot parts (lib/semantic-walk.ts), or the subtree of one ref; and
 * `echo:semantic:extract` / `echo:semantic:check` (extract, wait, verify:
 * lib/semantic-reads.ts, docs/semantic-reads.md) over the same refs.
 *
 * It owns the document's refs: a tag the service worker hands it once (never
 * reused in the browser session), a counter that never resets while the
 * document lives, a WeakMap element → number (an element keeps its ref across
 * snapshots) and number → WeakRef (the page keeps its elements; a removed one
 * is `ref-stale`). A ref of another tag is not this document's (`notMine`);
 * the worker answers `navigated` when no live document owns it. A random
 * frame key, kept in this isolated world only, lets the parent document's walk
 * say which child frame sits at each iframe.
 *
 * Injected on demand into the same-origin documents of a shared tab; runs
 * once per document (a second injection finds the first instance). Changes
 * nothing in the page, except the approved semantic mutations and Live
 * Patches (`echo:patch:*`, lib/live-patch.ts, whose active patches live in
 * this document's isolated world and end with it).
 */
import { err, ok, type Result } from '../../../src/shared/result';
import { parseRef, SNAPSHOT_BYTES } from '../../../src/shared/snapshot';
import type { SemanticReport, ToSemantic, ToSemanticRead } from '../lib/messages';
import { FRAME_KEY_GLOBAL, walk } from '../lib/semantic-walk';
import { handleAction, isActionMessage, type RefAccess } from '../lib/semantic-handlers';
import { handlePatch, isPatchMessage } from '../lib/live-patch';
import { check, extract, type DocRefs } from '../lib/semantic-reads';
import { geometry, type GeometryReport } from '../lib/semantic-geometry';

const INSTANCE_KEY = '__echoConsoleSemantic';

/** This document's frame key: a parent's walk finds it through contentWindow (lib/semantic-walk.ts FRAME_KEY_GLOBAL). */
const frameKey: string = crypto.randomUUID();

/** This document's refs. */
const state = {
  tag: null as string | null,
  next: 1,
  ids: new WeakMap<Element, number>(),
  els: new Map<number, WeakRef<Element>>(),
};

function refFor(el: Element): string {
  let id = state.ids.get(el);
  if (id === undefined) {
    id = state.next++;
    state.ids.set(el, id);
    state.els.set(id, new WeakRef(el));
  }
  return `${state.tag}${id}`;
}

/** Forget refs whose element was collected (the number stays spent). */
function sweep(): void {
  if (state.els.size < 4096) return;
  for (const [id, w] of state.els) if (!w.deref()) state.els.delete(id);
}

function snapshot(m: Extract<ToSemantic, { type: 'echo:semantic:snapshot' }>): Result<SemanticReport> {
  const maxBytes = Number.isSafeInteger(m.maxBytes) ? Math.min(Math.max(m.maxBytes, SNAPSHOT_BYTES.min), SNAPSHOT_BYTES.max) : SNAPSHOT_BYTES.default;
  if (state.tag === null) {
    if (typeof m.tag !== 'string' || !/^[a-z]{1,6}$/.test(m.tag)) return ok({ kind: 'need-tag' });
    state.tag = m.tag;
  }
  let root: Element | null = document.body ?? document.documentElement;
  if (m.ref !== undefined) {
    const r = parseRef(m.ref);
    if (!r || r.tag !== state.tag) return ok({ kind: 'not-mine', tag: state.tag });
    if (r.id >= state.next) return err('ref-unknown', `no element of this document was given ref ${m.ref}`);
    root = state.els.get(r.id)?.deref() ?? null;
    // Connected through shadow roots counts: isConnected follows the composed tree.
    if (!root || !root.isConnected || root.ownerDocument !== document) return err('ref-stale', `the element of ref ${m.ref} has left the page`);
  }
  if (!root) return ok({ kind: 'snapshot', tag: state.tag, key: frameKey, parts: [], truncated: false, refs: 0, origin: String(self.origin), url: String(location.href) });
  const w = walk(root, { refFor }, maxBytes);
  sweep();
  return ok({ kind: 'snapshot', tag: state.tag, key: frameKey, parts: w.parts, truncated: w.truncated, refs: w.refs, origin: String(self.origin), url: String(location.href) });
}

/** The refs as the mutations use them (lib/semantic-handlers.ts): the very elements the snapshot named. */
const refAccess: RefAccess = {
  tag: () => state.tag,
  refFor: (el) => (state.tag === null ? null : refFor(el)),
  adopt(tag) {
    if (state.tag === null && /^[a-z]{1,6}$/.test(tag)) state.tag = tag;
  },
  elementOf(ref) {
    const r = parseRef(ref);
    if (!r || state.tag === null || r.tag !== state.tag) return ok('not-mine');
    if (r.id >= state.next) return err('ref-unknown', `no element of this document was given ref ${ref}`);
    const el = state.els.get(r.id)?.deref() ?? null;
    if (!el || !el.isConnected || el.ownerDocument !== document) return err('ref-stale', `the element of ref ${ref} has left the page`);
    return ok(el);
  },
};

/** This document's refs as the reads beyond the snapshot use them (lib/semantic-reads.ts). */
const docRefs: DocRefs = {
  tag: () => state.tag,
  takeTag: (tag) => {
    if (state.tag === null) state.tag = tag;
  },
  resolve: (ref) => {
    const r = parseRef(ref);
    if (!r || r.tag !== state.tag) return { miss: 'not-mine' };
    if (r.id >= state.next) return { miss: 'unknown' };
    const el = state.els.get(r.id)?.deref();
    return el && el.isConnected && el.ownerDocument === document ? { el } : { miss: 'stale' };
  },
  refFor,
};

/**
 * Waits (a check with timeoutMs > 0) one document runs at once (review
 * finding 5): each re-check walks the view, and nothing else bounds how many
 * an agent starts. One more is refused `too-many-waits` at once.
 */
export const MAX_DOCUMENT_WAITS = 4;
let waits = 0;

const fail = (e: unknown) => err('content-error', e instanceof Error ? e.message.slice(0, 256) : 'semantic read failed');

/**
 * `echo:semantic:geometry {ref?}`: this document's boxes for the target's picture
 * (lib/semantic-geometry.ts); `ref` of another document counts as no target here.
 */
function geometryOf(m: { ref?: unknown }): Result<GeometryReport> {
  let el: Element | null = null;
  if (typeof m.ref === 'string') {
    const r = refAccess.elementOf(m.ref);
    if (!r.ok) return r;
    el = r.value === 'not-mine' ? null : r.value;
  }
  return ok(geometry(document, el));
}

/** Answers only `echo:semantic:*`; other modules share this isolated world. */
function onMessage(msg: unknown, _sender: unknown, sendResponse: (r: Result<unknown>) => void): boolean | undefined {
  if (isActionMessage(msg)) {
    void handleAction(msg, refAccess).then(sendResponse);
    return true;
  }
  // Live Patch (lib/live-patch.ts): here, so a patch's ref is the element the snapshot named.
  if (isPatchMessage(msg)) {
    void handlePatch(msg, refAccess).then(sendResponse);
    return true;
  }
  const m = msg as ToSemantic | ToSemanticRead;
  if (!m || typeof m !== 'object') return undefined;
  if (m.type === 'echo:semantic:check') {
    const waiting = Number.isSafeInteger(m.timeoutMs) && (m.timeoutMs as number) > 0;
    if (waiting && waits >= MAX_DOCUMENT_WAITS) {
      sendResponse(err('too-many-waits', `at most ${MAX_DOCUMENT_WAITS} waits run at once in one page: let one end first`));
      return undefined;
    }
    if (waiting) waits++;
    // Async (a wait): keep the channel open until it answers.
    check(m, docRefs)
      .finally(() => {
        if (waiting) waits--;
      })
      .then(sendResponse, (e: unknown) => sendResponse(fail(e)));
    return true;
  }
  if ((m as { type?: unknown }).type === 'echo:semantic:geometry') {
    try {
      sendResponse(geometryOf(m as { ref?: unknown }));
    } catch (e) {
      sendResponse(fail(e));
    }
    return undefined;
  }
  if (m.type !== 'echo:semantic:snapshot' && m.type !== 'echo:semantic:extract') return undefined;
  try {
    sendResponse(m.type === 'echo:semantic:snapshot' ? snapshot(m) : extract(m, docRefs));
  } catch (e) {
    sendResponse(fail(e));
  }
  return undefined;
}

const g = globalThis as unknown as Record<string, boolean | undefined>;
if (!g[INSTANCE_KEY]) {
  g[INSTANCE_KEY] = true;
  Object.defineProperty(globalThis, FRAME_KEY_GLOBAL, { value: frameKey, enumerable: false });
  chrome.runtime.onMessage.addListener(onMessage);
}
