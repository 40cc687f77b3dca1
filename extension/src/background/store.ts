/**
 * The service worker's durable state, in chrome.storage.session: which tabs are
 * shared and which grant nonces were used. storage.session lives in memory for
 * the browser session and survives service worker restarts
 * (developer.chrome.com/docs/extensions/reference/api/storage#property-session);
 * by default only trusted extension contexts (not content scripts) can read it.
 *
 * Writes are serialised through one queue so that two events (or two requests
 * carrying the same nonce) never interleave a read-modify-write.
 */
import type { SharedTab } from '../../../src/shared/types';

/** The subset of chrome.storage.StorageArea used here (injectable for tests). */
export interface KeyValueArea {
  get(key: string): Promise<Record<string, unknown>>;
  set(items: Record<string, unknown>): Promise<void>;
}

const SHARED_KEY = 'sharedTabs';
const NONCE_KEY = 'usedNonces';

/** Used nonces are kept this long past their grant's expiry (ms), to absorb clock steps. */
const NONCE_GRACE_MS = 5 * 60_000;

/** A tiny async mutex: runs `fn` after every earlier call has settled. */
export class Queue {
  private tail: Promise<unknown> = Promise.resolve();
  run<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.tail.then(fn, fn);
    this.tail = next.catch(() => undefined);
    return next;
  }
}

/** Shared tabs by tab ID, persisted on every change. */
export class SharingStore {
  private readonly queue = new Queue();
  private cache: Map<number, SharedTab> | null = null;

  constructor(private readonly area: KeyValueArea) {}

  private async load(): Promise<Map<number, SharedTab>> {
    if (this.cache) return this.cache;
    const got = await this.area.get(SHARED_KEY);
    const list = Array.isArray(got[SHARED_KEY]) ? (got[SHARED_KEY] as SharedTab[]) : [];
    this.cache = new Map(list.filter((t) => t && Number.isInteger(t.tabId)).map((t) => [t.tabId, t]));
    return this.cache;
  }

  private async save(map: Map<number, SharedTab>): Promise<void> {
    await this.area.set({ [SHARED_KEY]: [...map.values()] });
  }

  /** All shared tabs, oldest share first. */
  list(): Promise<SharedTab[]> {
    return this.queue.run(async () => [...(await this.load()).values()].sort((a, b) => a.sharedAt - b.sharedAt));
  }

  get(tabId: number): Promise<SharedTab | undefined> {
    return this.queue.run(async () => (await this.load()).get(tabId));
  }

  /** Add or replace a shared tab. */
  put(tab: SharedTab): Promise<void> {
    return this.queue.run(async () => {
      const map = await this.load();
      map.set(tab.tabId, tab);
      await this.save(map);
    });
  }

  /** Change fields of a shared tab; answers false when it is not shared. */
  update(tabId: number, patch: Partial<Omit<SharedTab, 'tabId'>>): Promise<boolean> {
    return this.queue.run(async () => {
      const map = await this.load();
      const cur = map.get(tabId);
      if (!cur) return false;
      map.set(tabId, { ...cur, ...patch });
      await this.save(map);
      return true;
    });
  }

  /** Stop sharing; answers whether the tab was shared. */
  remove(tabId: number): Promise<boolean> {
    return this.queue.run(async () => {
      const map = await this.load();
      if (!map.delete(tabId)) return false;
      await this.save(map);
      return true;
    });
  }
}

/** The storage a NonceStore needs beyond KeyValueArea: chrome.storage's `get(null)` (every item) and `remove`. */
export interface NonceArea extends KeyValueArea {
  get(key: string | null): Promise<Record<string, unknown>>;
  remove(keys: string[]): Promise<void>;
}

/** How often expired nonces are looked for (ms). */
const PRUNE_EVERY_MS = 60_000;

/** Storage key prefix of one used nonce; the item's value is its grant's expiry (ms since the epoch). */
export const NONCE_KEY_PREFIX = 'usedNonce:';

/**
 * Used grant nonces. `consume` records a nonce and awaits the storage write
 * before it answers, so the dispatch that follows can never happen with the
 * nonce unrecorded: a worker restart mid-dispatch cannot make it usable again.
 *
 * One storage item per nonce (`usedNonce:<nonce>` → expiry): each use writes
 * one small item. A single map of every nonce of the last minutes made each
 * write grow with the rate of use (400 nonces: 1.4 ms a write against 0.5 ms
 * for one item, measured in the worker on a loaded 2-core machine).
 *
 * The record is read from storage once per worker and then mirrored in memory
 * (this store is its only writer; a restarted worker reads it afresh): the
 * storage read cost ~0.5 ms on every invocation. The mirror changes only after
 * the write succeeded, so memory never holds what storage does not. Expired
 * items (NONCE_GRACE_MS past their grant's expiry, which the expiry check
 * refuses before any nonce is looked at) are removed after a write, at most
 * once a minute, off the dispatch's path; a removal that fails leaves harmless
 * stale items. The map of earlier versions (`usedNonces`) is still read, so an
 * update within a browser session forgets no nonce (storage.session ends with
 * the session, and that map with it).
 */
export class NonceStore {
  private readonly queue = new Queue();
  private used: Map<string, number> | null = null;
  private prunedAt = 0;

  constructor(
    private readonly area: NonceArea,
    private readonly now: () => number = Date.now,
  ) {}

  private async load(): Promise<Map<string, number>> {
    const all = await this.area.get(null);
    const used = new Map<string, number>();
    const legacy = all[NONCE_KEY];
    if (legacy && typeof legacy === 'object') for (const [n, exp] of Object.entries(legacy as Record<string, unknown>)) used.set(n, Number(exp));
    for (const [k, exp] of Object.entries(all)) if (k.startsWith(NONCE_KEY_PREFIX)) used.set(k.slice(NONCE_KEY_PREFIX.length), Number(exp));
    return used;
  }

  /**
   * @param expiresAt the grant's expiry (ms since the epoch); the record is kept until NONCE_GRACE_MS after it.
   * @returns `true` when the nonce was unused (and is now recorded), `false` when it was used before.
   * @throws what the storage write throws (the nonce then stays unused).
   */
  consume(nonce: string, expiresAt: number): Promise<boolean> {
    return this.queue.run(async () => {
      if (this.used === null) this.used = await this.load();
      const used = this.used;
      if (used.has(nonce)) return false;
      await this.area.set({ [NONCE_KEY_PREFIX + nonce]: expiresAt });
      used.set(nonce, expiresAt);
      this.forgetExpired(used);
      return true;
    });
  }

  /**
   * Drop the nonces whose grants expired more than NONCE_GRACE_MS ago, from memory and (not awaited)
   * from storage; at most once per PRUNE_EVERY_MS, so a steady flow of uses makes one removal a minute.
   */
  private forgetExpired(used: Map<string, number>): void {
    const t = this.now();
    if (t - this.prunedAt < PRUNE_EVERY_MS) return;
    this.prunedAt = t;
    const old: string[] = [];
    for (const [n, exp] of used) if (!(exp + NONCE_GRACE_MS > t)) old.push(n);
    if (old.length === 0) return;
    for (const n of old) used.delete(n);
    void this.area.remove(old.map((n) => NONCE_KEY_PREFIX + n)).catch(() => undefined);
  }
}
