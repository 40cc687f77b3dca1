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
 */
import type { Faculty } from '../../../shared/receipt';
import type { DiscoveryResult } from '../../../shared/types';

const key = (faculty: Faculty, tabId: number, documentId: string, subjectKey: string): string => JSON.stringify([faculty, tabId, documentId, subjectKey]);

/** The latest discoveries and the outcome-unknown blocks. */
export class Discoveries {
  private readonly latest = new Map<number, DiscoveryResult>();
  /** key(faculty, tab, document, subject) → the request whose outcome is unknown, and its faculty and tab. */
  private readonly blocks = new Map<string, { requestId: string; faculty: Faculty; tabId: number }>();

  /** The latest discovery of a tab, if any. */
  get(tabId: number): DiscoveryResult | undefined {
    return this.latest.get(tabId);
  }

  /** Remember a WebMCP discovery as the latest of its tab, and lift that tab's `webmcp-invoke` blocks (the agent looked again). */
  put(d: DiscoveryResult): void {
    this.latest.set(d.tabId, d);
    this.lift('webmcp-invoke', d.tabId);
  }

  /** The agent looked at a tab again with `faculty`'s own look: lift that faculty's blocks in the tab. */
  lift(faculty: Faculty, tabId: number): void {
    for (const [k, b] of [...this.blocks]) if (b.faculty === faculty && b.tabId === tabId) this.blocks.delete(k);
  }

  /** Drop the latest discovery of a tab (its blocks stay until a new discovery). */
  forget(tabId: number): void {
    this.latest.delete(tabId);
  }

  /** Forget every tab not in `shared`. */
  keepOnly(shared: ReadonlySet<number>): void {
    for (const tabId of [...this.latest.keys()]) if (!shared.has(tabId)) this.latest.delete(tabId);
  }

  /**
   * A frame navigated or changed its tools: the latest discovery no longer
   * describes that frame (the top frame: the whole tab), so the agent must discover again.
   */
  frameChanged(e: { tabId: number; frameId: number }): void {
    const d = this.latest.get(e.tabId);
    if (!d) return;
    if (e.frameId === 0) this.latest.delete(e.tabId);
    else this.latest.set(e.tabId, { ...d, tools: d.tools.filter((t) => t.frameId !== e.frameId) });
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
