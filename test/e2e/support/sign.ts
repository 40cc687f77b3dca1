/// <reference types="chrome" />
/**
 * Helpers for the tests of the sign in a shared tab (extension/src/content/sign.ts,
 * extension/src/background/sign.ts): read the sign as the extension drew it (through the
 * extension's isolated world: `chrome.dom.openOrClosedShadowRoot` opens the closed root), the
 * toolbar badge of a tab, the page's own attacks on resources/hostile/effects.html, and the
 * colour of one pixel of what the browser rendered (a screenshot decoded in a blank page).
 */
import type { Page } from '@playwright/test';
import type { LinkWorld } from './link-fixture';

/** The sign as the extension's isolated world sees it in the tab's top document, or null when there is no host. */
export interface SignSeen {
  /** The host is shown in the top layer (`:popover-open`). */
  open: boolean;
  /** The text inside the closed shadow root. */
  text: string | null;
  /** The host is the last child of `<html>`. */
  last: boolean;
}

/** Read the sign of `tabId` (null: no host in the top document). */
export async function signOf(world: LinkWorld, tabId: number): Promise<SignSeen | null> {
  const w = await world.worker();
  return w.evaluate(async (id) => {
    const [r] = await chrome.scripting.executeScript({
      target: { tabId: id, frameIds: [0] },
      func: () => {
        interface El {
          tagName: string;
          hasAttribute(n: string): boolean;
          matches(s: string): boolean;
        }
        const doc = (globalThis as unknown as { document: { documentElement: { children: ArrayLike<El>; lastElementChild: El | null } } }).document;
        const host = [...Array.from(doc.documentElement.children)].filter((e) => e.tagName === 'DIV' && e.hasAttribute('popover')).pop();
        if (!host) return null;
        const root = (chrome.dom as unknown as { openOrClosedShadowRoot(e: unknown): { textContent: string | null } | null }).openOrClosedShadowRoot(host);
        return { open: host.matches(':popover-open'), text: root?.textContent ?? null, last: doc.documentElement.lastElementChild === host };
      },
    });
    return (r?.result ?? null) as SignSeen | null;
  }, tabId);
}

/** The toolbar badge text of `tabId` (chrome.action.getBadgeText). */
export async function badgeOf(world: LinkWorld, tabId: number): Promise<string> {
  const w = await world.worker();
  return w.evaluate((id) => chrome.action.getBadgeText({ tabId: id }), tabId);
}

/** Run one of the page's attacks (`window.__hostileSign[name]()` in effects.html), from the page's own world. */
export function hostile(page: Page, name: string): Promise<unknown> {
  return page.evaluate((n) => (globalThis as unknown as { __hostileSign: Record<string, () => unknown> }).__hostileSign[n]?.(), name);
}

/** The colour [r, g, b] of pixel (x, y) of what `page` shows now, decoded in `scratch` (a blank page). */
export async function pixelOf(page: Page, scratch: Page, x: number, y: number): Promise<[number, number, number]> {
  // A tab in the background is not painted (headless too): the scratch page must not be in front.
  await page.bringToFront();
  const png = (await page.screenshot()).toString('base64');
  return scratch.evaluate(
    async ({ b64, px, py }) => {
      interface Ctx {
        drawImage(i: unknown, x: number, y: number): void;
        getImageData(x: number, y: number, w: number, h: number): { data: ArrayLike<number> };
      }
      const g = globalThis as unknown as {
        Image: new () => { src: string; width: number; height: number; decode(): Promise<void> };
        document: { createElement(t: 'canvas'): { width: number; height: number; getContext(k: '2d'): Ctx } };
      };
      const img = new g.Image();
      img.src = `data:image/png;base64,${b64}`;
      await img.decode();
      const c = g.document.createElement('canvas');
      c.width = img.width;
      c.height = img.height;
      const ctx = c.getContext('2d');
      ctx.drawImage(img, 0, 0);
      const d = ctx.getImageData(px, py, 1, 1).data;
      return [d[0], d[1], d[2]] as [number, number, number];
    },
    { b64: png, px: x, py: y },
  );
}

/** Whether `c` is within `tol` of `want` in every channel. */
export function near(c: readonly number[], want: readonly number[], tol = 24): boolean {
  return want.every((v, i) => Math.abs((c[i] ?? -999) - v) <= tol);
}

/** The sign's colours (content/sign.ts): "shared" blue, "running" red; the page's cover in effects.html is green. */
export const COLOURS = { shared: [0x1a, 0x73, 0xe8], running: [0xd9, 0x30, 0x25], pageCover: [0, 255, 0] } as const;
