/**
 * Incognito (issue 12 item 3; docs/extension.md, "Incognito"): the manifest keeps the
 * extension out of incognito windows ("incognito": "not_allowed"), and should it ever
 * see an incognito tab anyway, sharing refuses it before touching the tab's frames and
 * the share picker never lists it: nothing of it can be acted in or recorded.
 */
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { INCOGNITO_REFUSAL, Sharing, isIncognito } from '../../extension/src/background/tabs';
import type { SharingStore } from '../../extension/src/background/store';

const manifest = JSON.parse(readFileSync(new URL('../../extension/manifest.json', import.meta.url), 'utf8')) as { incognito?: string };

/** The chrome.* surface Sharing touches, with one incognito tab (id 7) and one ordinary tab (id 8). */
function fakeChrome() {
  const touched: string[] = [];
  const tabs = [
    { id: 7, windowId: 2, incognito: true, url: 'https://bank.example/account', title: 'Bank (incognito)' },
    { id: 8, windowId: 1, incognito: false, url: 'https://shop.example/', title: 'Shop' },
  ];
  return {
    touched,
    chrome: {
      tabs: {
        get: async (id: number) => {
          touched.push(`tabs.get ${id}`);
          const t = tabs.find((x) => x.id === id);
          if (!t) throw new Error('no tab');
          return t;
        },
        query: async () => tabs,
      },
      webNavigation: {
        getFrame: async () => {
          touched.push('webNavigation.getFrame');
          return null;
        },
        getAllFrames: async () => {
          touched.push('webNavigation.getAllFrames');
          return [];
        },
      },
    },
  };
}

function sharing(): { s: Sharing; puts: unknown[] } {
  const puts: unknown[] = [];
  const store = { list: async () => [], get: async () => null, put: async (x: unknown) => void puts.push(x) } as unknown as SharingStore;
  return { s: new Sharing(store, { emit: () => {} }), puts };
}

afterEach(() => vi.unstubAllGlobals());

describe('incognito tabs', () => {
  it('the manifest does not allow the extension in incognito windows (Chrome: Manifest - Incognito, "not_allowed")', () => {
    expect(manifest.incognito).toBe('not_allowed');
  });

  it('sharing an incognito tab is refused before its frames are read, and nothing is stored', async () => {
    const f = fakeChrome();
    vi.stubGlobal('chrome', f.chrome);
    const { s, puts } = sharing();
    const r = await s.share(7);
    expect(r).toEqual({ ok: false, error: expect.objectContaining({ code: 'not-shareable', message: INCOGNITO_REFUSAL }) });
    expect(f.touched).toEqual(['tabs.get 7']);
    expect(puts).toEqual([]);
  });

  it('the share picker never lists an incognito tab', async () => {
    vi.stubGlobal('chrome', fakeChrome().chrome);
    const { s } = sharing();
    expect((await s.shareable()).map((t) => t.tabId)).toEqual([8]);
    expect(isIncognito({ incognito: true })).toBe(true);
    expect(isIncognito({ incognito: false })).toBe(false);
  });
});
