/**
 * What this service worker's discoveries hashed, kept by hash: a
 * descriptorHash's canonical descriptor JSON, and a urlHash's exact tab and
 * frame URLs (src/shared/canonical.ts `sha256Hex`, `urlHash`).
 *
 * A grant binds hashes (src/shared/grant.ts `subjectHash`, `urlHash`), and the
 * page-side runner needs the values they cover to compare them with the
 * document in the task that acts (content/webmcp.ts `execute`). Every such
 * hash the console can bind came from a discovery in this worker, so the
 * values are here and a dispatch needs no extra round trip to the page before
 * the one that acts (issue 7, item 10: each such trip cost about 1–2 ms).
 *
 * This is a record of preimages, never of freshness: an entry says "these
 * bytes hash to that", nothing about the page now. Freshness is the page-side
 * runner's own comparison (exact canonical descriptor, exact URLs, right
 * before `executeTool`). The worker re-hashes an entry before using it. An
 * entry that is missing (the worker restarted since the discovery, or it was
 * evicted) sends the dispatch back to reading the page (faculties/webmcp-invoke.ts).
 *
 * Bounded: least recently used entries go first once the values held exceed
 * `maxChars` UTF-16 code units in all.
 */
import type { PageUrlsValue } from '../lib/messages';

/** A bounded map from a hash (64 lowercase hex) to the value it was computed over. */
export class Preimages<V> {
  private readonly entries = new Map<string, { value: V; chars: number }>();
  private chars = 0;

  /**
   * @param maxChars the most UTF-16 code units the held values may take in all
   * @param sizeOf a value's size in UTF-16 code units
   */
  constructor(
    private readonly maxChars: number,
    private readonly sizeOf: (v: V) => number,
  ) {}

  /** Keep `value` under `hash` (the caller computed the hash from the value); a value larger than the whole budget is not kept. */
  remember(hash: string, value: V): void {
    const chars = this.sizeOf(value) + hash.length;
    const old = this.entries.get(hash);
    if (old) {
      this.entries.delete(hash);
      this.chars -= old.chars;
    }
    if (chars > this.maxChars) return;
    this.entries.set(hash, { value, chars });
    this.chars += chars;
    for (const [k, e] of this.entries) {
      if (this.chars <= this.maxChars) break;
      this.entries.delete(k);
      this.chars -= e.chars;
    }
  }

  /** The value kept under `hash`, or `undefined`; a hit becomes the most recently used. */
  get(hash: string): V | undefined {
    const e = this.entries.get(hash);
    if (!e) return undefined;
    this.entries.delete(hash);
    this.entries.set(hash, e);
    return e.value;
  }

  /** How many entries are held (tests). */
  get size(): number {
    return this.entries.size;
  }
}

/** descriptorHash → canonical descriptor JSON, from this worker's discoveries (4 M code units: ~60 tools at the largest schema LIMITS allows). */
export const seenDescriptors = new Preimages<string>(4_000_000, (s) => s.length);

/** urlHash → the exact tab and frame URLs, from this worker's discoveries. */
export const seenUrls = new Preimages<PageUrlsValue>(1_000_000, (u) => u.tab.length + u.frame.length);

/** A form's actionHash → its exact action URL, from this worker's form reads (background/form-ask.ts). */
export const seenActions = new Preimages<string>(1_000_000, (s) => s.length);
