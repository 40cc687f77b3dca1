/**
 * What the broker remembers between agent calls: the latest discovery of each
 * shared tab (WebMCP descriptors resolve only from it) and the outcome-unknown
 * blocks (docs/design.md, "Trust rules": after a timeout once dispatch began,
 * the agent must inspect the page before the same action may be retried).
 *
 * A block is keyed by (faculty, tab, document, subject key): for WebMCP the
 * subject key is the tool name. Only a look by the same faculty lifts it — a
 * WebMCP discovery lifts the tab's `webmcp-invoke` blocks, never another
 * faculty's (a discovery says nothing about an element a hover may have
 * touched). Blocks recovered from the ledger at start (broker/recovery.ts) are
 * added here.
 *
 * Same-document navigation (`pushState`, `replaceState`, a fragment) keeps the
 * document and its tools: the discovery stays valid for every descriptor, but
 * the URLs it read are no longer the page's. Such frames are "moved" (a move
 * of the top frame moves every frame: a tool's urlHash covers the tab's URL
 * too) until a `locate` of the frame brings its URL and hash up to date
 * (`relocate`). A new document in a frame drops that frame's tools (the top
 * frame: the whole discovery).
 */
import type { Faculty } from '../../../shared/receipt';
import type { DiscoveryResult, FrameLocation, ToolDescriptor } from '../../../shared/types';

/** How a tab's tools changed since the agent's own discovery: tool names (page text: UNTRUSTED). */
export interface ToolChanges {
  /** Same name in the same frame and document, another descriptorHash. */
  changed: string[];
  /** Gone from their frame. */
  left: string[];
  /** New in their frame. */
  added: string[];
}

const toolKey = (t: ToolDescriptor): string => JSON.stringify([t.frameId, t.documentId, t.name]);
/** Discovery violations that mean a frame was not heard from (extension/src/background/discovery.ts), not that its tools left. */
const UNREACHED = new Set(['frame-timeout', 'frame-unreachable', 'too-many-frames']);
/** At most this many names per list of a ToolChanges (a page may churn hundreds). */
const MAX_CHANGED_NAMES = 64;

/**
 * Whether `fresh` did not hear from a tool at all, so that its absence from `fresh.tools` says
 * nothing about the page (silence is not departure). The extension's discovery
 * (extension/src/background/discovery.ts, extension/src/content/webmcp.ts) reports why it left
 * tools out:
 *  - a frame not heard from (`frame-timeout`, `frame-unreachable`, `too-many-frames`): every tool
 *    of that frame;
 *  - a tool cut by a limit and named (`message-too-large`, `too-many-tools` with `name`): that tool;
 *  - tools past the per-frame limit and not named (`too-many-tools` without `name`): every tool of
 *    that frame;
 *  - the violations list itself cut (`too-many-violations`): which frames went unheard is not
 *    known, so no absence says anything.
 */
export function unheardIn(fresh: DiscoveryResult): (frameId: number, name: string) => boolean {
  if (fresh.violations.some((v) => v.reason === 'too-many-violations')) return () => true;
  const unreached = new Set(fresh.violations.filter((v) => UNREACHED.has(v.reason) || (v.reason === 'too-many-tools' && v.name === undefined)).map((v) => v.frameId));
  const cut = new Set(fresh.violations.filter((v) => (v.reason === 'message-too-large' || v.reason === 'too-many-tools') && v.name !== undefined).map((v) => JSON.stringify([v.frameId, v.name])));
  return (frameId, name) => unreached.has(frameId) || cut.has(JSON.stringify([frameId, name]));
}

const key = (faculty: Faculty, tabId: number, documentId: string, subjectKey: string): string => JSON.stringify([faculty, tabId, documentId, subjectKey]);

/** The latest discoveries and the outcome-unknown blocks. */
export class Discoveries {
  private readonly latest = new Map<number, DiscoveryResult>();
  /** tabId → frames whose URL changed in the same document since the latest discovery or locate. */
  private readonly moved = new Map<number, Set<number>>();
  /** tabId → how its tools changed since the agent's own discovery. */
  private readonly changes = new Map<number, ToolChanges>();
  /** tabId → bumped by every change of what is known of the tab (`put`, a navigation, `forget`, `relocate`, `refresh`). */
  private readonly generations = new Map<number, number>();

  private bump(tabId: number): void {
    this.generations.set(tabId, (this.generations.get(tabId) ?? 0) + 1);
  }

  /**
   * The tab's generation: a refresh started at one generation may only apply while it is still
   * current (`refresh`'s `startedAt`), so an answer that took longer than a newer discovery or a
   * navigation cannot overwrite them.
   */
  generation(tabId: number): number {
    return this.generations.get(tabId) ?? 0;
  }
  /** key(faculty, tab, document, subject) → the request whose outcome is unknown, and its faculty and tab. */
  private readonly blocks = new Map<string, { requestId: string; faculty: Faculty; tabId: number }>();

  /** The latest discovery of a tab, if any. */
  get(tabId: number): DiscoveryResult | undefined {
    return this.latest.get(tabId);
  }

  /** Remember a WebMCP discovery as the latest of its tab, and lift that tab's `webmcp-invoke` blocks (the agent looked again). */
  put(d: DiscoveryResult): void {
    this.latest.set(d.tabId, d);
    this.moved.delete(d.tabId);
    this.changes.delete(d.tabId);
    this.bump(d.tabId);
    this.lift('webmcp-invoke', d.tabId);
  }

  /**
   * A discovery the console made itself because the page said its tools
   * changed. It replaces the latest one of the same top document (unchanged
   * descriptors keep their hash, so the agent's view of them stays valid; the
   * URLs are read anew, so no frame is moved any more) and adds what changed to
   * `changesSinceLook`. A frame the fresh discovery did not reach (it timed out,
   * could not be asked, or was past the limits) keeps its tools: silence is not
   * departure. A discovery of another top document drops the tab's (the
   * navigation's own event says so too). Blocks stay.
   * @param startedAt the tab's `generation` when this discovery was asked for: when anything
   *   changed since (the agent discovered, the page navigated), the answer is stale and ignored.
   * @returns what changed in this refresh, or undefined when there was nothing (current) to refresh.
   */
  refresh(fresh: DiscoveryResult, startedAt: number): ToolChanges | undefined {
    if (this.generation(fresh.tabId) !== startedAt) return undefined;
    const d = this.latest.get(fresh.tabId);
    if (!d) return undefined;
    if (d.documentId !== fresh.documentId) {
      this.forget(fresh.tabId);
      return undefined;
    }
    const unheard = unheardIn(fresh);
    const kept = d.tools.filter((t) => unheard(t.frameId, t.name) && !fresh.tools.some((n) => n.frameId === t.frameId && n.name === t.name));
    fresh = kept.length > 0 ? { ...fresh, tools: [...fresh.tools, ...kept] } : fresh;
    const before = new Map(d.tools.map((t) => [toolKey(t), t.descriptorHash]));
    const after = new Map(fresh.tools.map((t) => [toolKey(t), t.descriptorHash]));
    const name = (k: string) => (JSON.parse(k) as [number, string, string])[2];
    const now: ToolChanges = { changed: [], left: [], added: [] };
    for (const [k, h] of before) {
      const n = after.get(k);
      if (n === undefined) now.left.push(name(k));
      else if (n !== h) now.changed.push(name(k));
    }
    for (const k of after.keys()) if (!before.has(k)) now.added.push(name(k));
    this.latest.set(fresh.tabId, fresh);
    this.moved.delete(fresh.tabId);
    this.bump(fresh.tabId);
    if (now.changed.length + now.left.length + now.added.length > 0) {
      const acc = this.changes.get(fresh.tabId) ?? { changed: [], left: [], added: [] };
      const merge = (a: string[], b: string[]) => [...new Set([...a, ...b])].slice(0, MAX_CHANGED_NAMES);
      this.changes.set(fresh.tabId, { changed: merge(acc.changed, now.changed), left: merge(acc.left, now.left), added: merge(acc.added, now.added) });
    }
    return now;
  }

  /** How the tab's tools changed since the agent's own latest discovery, or undefined when they did not (or it never looked). */
  changesSinceLook(tabId: number): ToolChanges | undefined {
    const c = this.changes.get(tabId);
    return c ? { changed: [...c.changed], left: [...c.left], added: [...c.added] } : undefined;
  }

  /** The agent looked at a tab again with `faculty`'s own look: lift that faculty's blocks in the tab. */
  lift(faculty: Faculty, tabId: number): void {
    for (const [k, b] of [...this.blocks]) if (b.faculty === faculty && b.tabId === tabId) this.blocks.delete(k);
  }

  /** Drop the latest discovery of a tab (its blocks stay until a new discovery). */
  forget(tabId: number): void {
    this.latest.delete(tabId);
    this.moved.delete(tabId);
    this.changes.delete(tabId);
    this.bump(tabId);
  }

  /** Forget every tab not in `shared`. */
  keepOnly(shared: ReadonlySet<number>): void {
    for (const tabId of [...this.latest.keys()]) if (!shared.has(tabId)) this.forget(tabId);
  }

  /**
   * A frame navigated (the extension's `navigated`, with the document it holds
   * now). A navigation within the document the discovery read keeps the tools
   * and marks the frame moved (the top frame: every frame). A new document
   * means the latest discovery no longer describes that frame (the top frame:
   * the whole tab), so the agent must discover again.
   */
  frameNavigated(e: { tabId: number; frameId: number; documentId: string }): void {
    const d = this.latest.get(e.tabId);
    if (!d) return;
    this.bump(e.tabId);
    const frameDoc = e.frameId === 0 ? d.documentId : d.tools.find((t) => t.frameId === e.frameId)?.documentId;
    if (frameDoc === e.documentId) {
      const moved = this.moved.get(e.tabId) ?? new Set<number>();
      if (e.frameId === 0) for (const f of [0, ...d.tools.map((t) => t.frameId)]) moved.add(f);
      else moved.add(e.frameId);
      this.moved.set(e.tabId, moved);
      return;
    }
    if (e.frameId === 0) this.forget(e.tabId);
    else {
      this.latest.set(e.tabId, { ...d, tools: d.tools.filter((t) => t.frameId !== e.frameId) });
      this.moved.get(e.tabId)?.delete(e.frameId);
    }
  }

  /** Whether the frame's URL changed in the same document since the latest discovery (or its last `relocate`). */
  hasMoved(tabId: number, frameId: number): boolean {
    return this.moved.get(tabId)?.has(frameId) ?? false;
  }

  /**
   * The frame's URLs as `locate` read them now: its tools take the new urlHash
   * and frame URL (frame 0: the discovery's URL too), and it is no longer moved.
   * Nothing changes when the discovery's frame holds another document.
   * @returns the updated discovery, or undefined when there is none for that document.
   */
  relocate(tabId: number, loc: FrameLocation): DiscoveryResult | undefined {
    const d = this.latest.get(tabId);
    if (!d) return undefined;
    const inFrame = d.tools.filter((t) => t.frameId === loc.frameId);
    if (loc.frameId === 0 ? d.documentId !== loc.documentId : inFrame.some((t) => t.documentId !== loc.documentId)) return undefined;
    const next: DiscoveryResult = {
      ...d,
      ...(loc.frameId === 0 ? { url: loc.tabUrl } : {}),
      tools: d.tools.map((t) => (t.frameId === loc.frameId ? { ...t, urlHash: loc.urlHash, frameUrl: loc.frameUrl, tabUrl: loc.tabUrl } : t)),
    };
    this.latest.set(tabId, next);
    this.moved.get(tabId)?.delete(loc.frameId);
    this.bump(tabId);
    return next;
  }

  /** The request whose unknown outcome blocks this faculty's subject in this document, if any. */
  blockedBy(faculty: Faculty, tabId: number, documentId: string, subjectKey: string): string | undefined {
    return this.blocks.get(key(faculty, tabId, documentId, subjectKey))?.requestId;
  }

  /** Block a faculty's subject in a document until the agent looks at the tab again with that faculty's look. */
  block(faculty: Faculty, tabId: number, documentId: string, subjectKey: string, requestId: string): void {
    this.blocks.set(key(faculty, tabId, documentId, subjectKey), { requestId, faculty, tabId });
  }
}
