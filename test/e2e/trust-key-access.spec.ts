/**
 * Trust rule (issue 9 item 9, docs/trust-rules.md): the pairing key in
 * chrome.storage.local is not readable from a content script. The attack:
 * code running in the extension's own isolated world in a page (where our
 * content modules run, inside the page's renderer process) asks
 * chrome.storage.local and chrome.storage.session for everything. Both must
 * refuse, while the service worker still reads the key it needs.
 */
import { randomBytes } from 'node:crypto';
import { PAIRING_STORAGE_KEY } from '../../extension/src/background/link';
import { expect, pairedTest } from './support/extension-fixture';
import { startTestPages, type TestPages } from './support/extension-pages';
import { tabIdOf } from './support/extension-helpers';

const test = pairedTest(randomBytes(32));
let pages: TestPages;

test.beforeAll(async () => {
  pages = await startTestPages();
  pages.set('/blank', '<!doctype html><title>A page</title><p>Nothing here.</p>');
});
test.afterAll(async () => {
  await pages.close();
});

test('a content script (the extension\'s isolated world in a page) cannot read chrome.storage.local or .session; the worker can', async ({ paired }) => {
  const page = await paired.context.newPage();
  await page.goto(`${pages.a}/blank`);
  const tabId = await tabIdOf(paired.worker, page);
  // The worker holds the pairing key (launchPairedExtension stored it before this start).
  const inWorker = await paired.worker.evaluate(async (k) => Object.keys(await chrome.storage.local.get(k)), PAIRING_STORAGE_KEY);
  expect(inWorker).toEqual([PAIRING_STORAGE_KEY]);
  // The attack, from the isolated world where the content modules run.
  const seen = await paired.worker.evaluate(async (id) => {
    const [r] = await chrome.scripting.executeScript({
      target: { tabId: id },
      world: 'ISOLATED',
      func: async () => {
        const tryRead = async (area: 'local' | 'session') => {
          try {
            const s = chrome.storage?.[area];
            if (!s) return { read: false, why: 'no such area' };
            const all = await s.get(null);
            return { read: true, keys: Object.keys(all) };
          } catch (e) {
            return { read: false, why: String(e) };
          }
        };
        return { local: await tryRead('local'), session: await tryRead('session') };
      },
    });
    return r?.result as { local: { read: boolean; keys?: string[]; why?: string }; session: { read: boolean; keys?: string[]; why?: string } };
  }, tabId);
  expect(seen.local, JSON.stringify(seen.local)).toMatchObject({ read: false });
  expect(seen.session, JSON.stringify(seen.session)).toMatchObject({ read: false });
  expect(seen.local.why).toMatch(/not allowed from this context/);
  expect(JSON.stringify(seen)).not.toContain(PAIRING_STORAGE_KEY);
});
