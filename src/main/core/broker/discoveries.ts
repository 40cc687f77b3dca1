/**
 * What the broker remembers between agent calls: the latest discovery of each
 * shared tab (WebMCP descriptors resolve only from it) and the outcome-unknown
 * blocks (docs/design.md, "Trust rules": after a timeout once dispatch began,
 * the agent must inspect the page before the same action may be retried).
 *
 * A block is keyed by (tab, document, faculty subject key): for WebMCP the
 * subject key is the tool name. A new discovery of the tab lifts its blocks;
 * blocks recovered from the ledger at start (broker/recovery.ts) are added here.
 */
import type { DiscoveryResult } from '../../../shared/types';

/** The latest discoveries and the outcome-unknown blocks. */
export class Discoveries {
  private readonly latest = new Map<number, DiscoveryResult>();
  /** `${tabId}|${documentId}|${subjectKey}` → requestId of the request whose outcome is unknown. */
  private readonly blocks = new Map<string, string>();

  /** The latest discovery of a tab, if any. */
  get(tabId: number): DiscoveryResult | undefined {
    return this.latest.get(tabId);
  }

  /** Remember a discovery as the latest of its tab, and lift that tab's blocks (the agent looked again). */
  put(d: DiscoveryResult): void {
    this.latest.set(d.tabId, d);
    for (const key of [...this.blocks.keys()]) if (key.startsWith(`${d.tabId}|`)) this.blocks.delete(key);
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

  /** The request whose unknown outcome blocks this subject in this document, if any. */
  blockedBy(tabId: number, documentId: string, subjectKey: string): string | undefined {
    return this.blocks.get(`${tabId}|${documentId}|${subjectKey}`);
  }

  /** Block a subject in a document until the tab is discovered again. */
  block(tabId: number, documentId: string, subjectKey: string, requestId: string): void {
    this.blocks.set(`${tabId}|${documentId}|${subjectKey}`, requestId);
  }
}
