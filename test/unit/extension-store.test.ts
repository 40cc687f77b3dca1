import { describe, expect, it } from 'vitest';
import { NONCE_KEY_PREFIX, NonceStore, SharingStore, type NonceArea } from '../../extension/src/background/store';
import { popupLinkState } from '../../extension/src/lib/link-state';
import { boundResult, truncateUtf8 } from '../../src/shared/bounds';
import { LIMITS, utf8Bytes } from '../../src/shared/limits';

/** chrome.storage.session stand-in that survives "worker restarts" (new store objects over the same area). */
function area(): NonceArea & { data: Record<string, unknown>; writes: number; written: Array<Record<string, unknown>> } {
  const a = {
    data: {} as Record<string, unknown>,
    writes: 0,
    written: [] as Array<Record<string, unknown>>,
    async get(key: string | null) {
      if (key === null) return structuredClone(a.data);
      return key in a.data ? { [key]: structuredClone(a.data[key]) } : {};
    },
    async set(items: Record<string, unknown>) {
      a.writes += 1;
      a.written.push(structuredClone(items));
      Object.assign(a.data, structuredClone(items));
    },
    async remove(keys: string[]) {
      for (const k of keys) delete a.data[k];
    },
  };
  return a;
}

/** The nonces recorded in the area, one item each. */
const stored = (a: { data: Record<string, unknown> }) => Object.keys(a.data).filter((k) => k.startsWith(NONCE_KEY_PREFIX)).map((k) => k.slice(NONCE_KEY_PREFIX.length));

describe('NonceStore', () => {
  it('accepts a nonce once, also across a worker restart', async () => {
    const a = area();
    const s1 = new NonceStore(a, () => 1000);
    expect(await s1.consume('n1', 31_000)).toBe(true);
    expect(await s1.consume('n1', 31_000)).toBe(false);
    const s2 = new NonceStore(a, () => 2000); // a restarted worker
    expect(await s2.consume('n1', 31_000)).toBe(false);
    expect(await s2.consume('n2', 31_000)).toBe(true);
  });

  it('is atomic for concurrent uses of one nonce', async () => {
    const s = new NonceStore(area(), () => 0);
    const results = await Promise.all(Array.from({ length: 10 }, () => s.consume('same', 1000)));
    expect(results.filter(Boolean).length).toBe(1);
  });

  it('records the nonce before answering true (write awaited first)', async () => {
    const a = area();
    const s = new NonceStore(a, () => 0);
    await s.consume('n', 1000);
    expect(a.writes).toBe(1);
    expect(stored(a)).toEqual(['n']);
  });

  it('writes one small item per use, whatever the number of nonces already used', async () => {
    const a = area();
    const s = new NonceStore(a, () => 0);
    for (let i = 0; i < 50; i++) await s.consume(`n${i}`, 1000);
    expect(a.written.at(-1)).toEqual({ [`${NONCE_KEY_PREFIX}n49`]: 1000 });
    expect(stored(a)).toHaveLength(50);
  });

  it('still knows the nonces an earlier version kept in one map (an update within a browser session)', async () => {
    const a = area();
    a.data.usedNonces = { old: 31_000 };
    const s = new NonceStore(a, () => 1000);
    expect(await s.consume('old', 31_000)).toBe(false);
    expect(await s.consume('fresh', 31_000)).toBe(true);
  });

  it('reads storage once per worker, writes on every use, and keeps a nonce unused when its write fails', async () => {
    const a = area();
    let reads = 0;
    const get = a.get.bind(a);
    a.get = async (key: string | null) => (reads++, get(key));
    const s = new NonceStore(a, () => 0);
    expect(await s.consume('n1', 1000)).toBe(true);
    expect(await s.consume('n2', 1000)).toBe(true);
    expect(await s.consume('n1', 1000)).toBe(false);
    expect(reads).toBe(1);
    expect(a.writes).toBe(2);
    const set = a.set.bind(a);
    a.set = async () => {
      throw new Error('quota');
    };
    await expect(s.consume('n3', 1000)).rejects.toThrow('quota');
    a.set = set;
    expect(stored(a)).toEqual(['n1', 'n2']);
    expect(await s.consume('n3', 1000)).toBe(true);
  });

  it('forgets nonces long after their grant expired', async () => {
    const a = area();
    let now = 0;
    const s = new NonceStore(a, () => now);
    await s.consume('old', 1000);
    now = 1000 + 6 * 60_000;
    await s.consume('new', now + 1000);
    await Promise.resolve(); // the removal is not awaited by consume
    expect(stored(a)).toEqual(['new']);
    // A restarted worker does not see the forgotten one either.
    expect(await new NonceStore(a, () => now).consume('new', now + 1000)).toBe(false);
  });
});

describe('SharingStore', () => {
  const tab = (tabId: number, sharedAt: number) => ({ tabId, windowId: 1, title: 't', url: 'https://a.example/', origin: 'https://a.example', documentId: 'D', sharedAt });

  it('persists shares across a worker restart', async () => {
    const a = area();
    const s1 = new SharingStore(a);
    await s1.put(tab(2, 20));
    await s1.put(tab(1, 10));
    const s2 = new SharingStore(a);
    expect((await s2.list()).map((t) => t.tabId)).toEqual([1, 2]);
    expect(await s2.update(2, { documentId: 'E' })).toBe(true);
    expect(await s2.update(9, { documentId: 'E' })).toBe(false);
    expect(await s2.remove(1)).toBe(true);
    expect(await s2.remove(1)).toBe(false);
    expect((await new SharingStore(a).list()).map((t) => [t.tabId, t.documentId])).toEqual([[2, 'E']]);
  });
});

describe('popup link state', () => {
  it('never shows a stale "connected"', () => {
    expect(popupLinkState({ state: 'connected', paired: true, lastHeartbeatAt: 1000 }, 2000, 15_000).state).toBe('connected');
    expect(popupLinkState({ state: 'connected', paired: true, lastHeartbeatAt: 1000 }, 20_000, 15_000).state).toBe('disconnected');
    expect(popupLinkState({ state: 'connected', paired: true }, 20_000, 15_000).state).toBe('disconnected');
  });
  it('passes the pairing code and plain states through; unknown shapes stay unknown', () => {
    expect(popupLinkState({ state: 'awaiting-pairing', paired: false, pairingCode: '123 456' }, 0, 1)).toEqual({ state: 'awaiting-pairing', paired: false, pairingCode: '123 456' });
    expect(popupLinkState({ state: 'console-not-running', paired: true }, 0, 1).state).toBe('console-not-running');
    expect(popupLinkState({ state: 'weird' }, 0, 1).state).toBe('unknown');
    expect(popupLinkState(null, 0, 1).state).toBe('connecting');
  });
});

describe('result bounds', () => {
  it('cuts UTF-8 at a code point boundary', () => {
    expect(truncateUtf8('aé€😀', 3)).toEqual({ text: 'aé', truncated: true });
    expect(truncateUtf8('aé€😀', 100)).toEqual({ text: 'aé€😀', truncated: false });
    expect(truncateUtf8('😀😀', 5)).toEqual({ text: '😀', truncated: true });
  });
  it('redacts, then bounds to LIMITS.maxResultBytes', () => {
    const r = boundResult(JSON.stringify({ ok: true, password: 'hunter2' }), false);
    expect(r.redacted).toBe(true);
    expect(r.result).not.toContain('hunter2');
    const big = boundResult('x'.repeat(LIMITS.maxResultBytes + 10), false);
    expect(big.truncated).toBe(true);
    expect(utf8Bytes(big.result ?? '')).toBe(LIMITS.maxResultBytes);
    expect(boundResult(null, false)).toEqual({ result: null, truncated: false, redacted: false });
  });
});
