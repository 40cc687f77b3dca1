/**
 * The picture of a semantic target for the approval dialog (issue 10 item 6;
 * docs/semantic-controls.md, "The target's picture"): `semantic-target`'s
 * operation `picture`, arguments `{ref, frameId, documentId}` (the target the
 * console resolved a moment before).
 *
 * `chrome.tabs.captureVisibleTab` captures the ACTIVE tab of a window and
 * needs the `<all_urls>` host permission (docs/browser-facts.md; FACTS), so a
 * picture is taken only when the shared tab is the active tab of a window
 * that is not minimized, and only when the target is at least partly in view:
 * nothing is scrolled or changed before the person approves. Otherwise the
 * answer says why there is no picture.
 *
 * Every same-origin document of the tab that a target may live in reports its
 * boxes (lib/semantic-geometry.ts): the target's visible box and the boxes to
 * black out. The capture is taken between two such reports; if they differ
 * (the page moved) it is tried once more, then given up. The picture is
 * cropped to the target with a margin, the masks are painted black, and the
 * target is outlined. A document that does not answer, or a tab with more
 * same-origin frames than are asked, gives no picture (fail closed: a
 * password field there could not be blacked out).
 *
 * Answer: `{status: 'captured', png: base64, width, height}` (px of the PNG)
 * or `{status: 'none', reason}` (PictureReason). The console checks the PNG
 * and keeps it in memory only, with its hash in the receipt
 * (src/main/core/faculties/semantic-picture.ts).
 */
import { canonicalJson } from '../../../../src/shared/canonical';
import { err, ok, type Result } from '../../../../src/shared/result';
import { cropBox, PICTURE_BOUNDS, type Box, type GeometryReport, type PictureAnswer, type PictureReason } from '../../../../src/shared/semantic-picture';
import { injectInto, liveFrames, type FrameInfo } from '../tabs';
import { MAX_SNAPSHOT_FRAMES, SEMANTIC_MODULE } from './semantic-read';
import { askSemantic, framesToAsk } from './semantic-target';

/** What `picture` takes. */
export interface PictureArgs {
  ref: string;
  frameId: number;
  documentId: string;
}

/** `null` when `args` are what `picture` takes, otherwise why not. */
export function checkPictureArgs(args: Record<string, unknown>): string | null {
  const keys = Object.keys(args).sort().join(',');
  if (keys !== 'documentId,frameId,ref') return 'picture takes exactly ref, frameId, documentId';
  if (typeof args.ref !== 'string' || !/^[a-z]{1,6}[1-9][0-9]{0,8}$/.test(args.ref)) return 'ref must be a ref';
  if (!Number.isSafeInteger(args.frameId) || (args.frameId as number) < 0) return 'frameId must be a frame id';
  if (typeof args.documentId !== 'string' || args.documentId.length < 1 || args.documentId.length > 128) return 'documentId must be a document id';
  return null;
}

const none = (reason: PictureReason): Result<PictureAnswer> => ok({ status: 'none', reason });

/** Every asked document's report, or the reason there is none. */
async function reports(tabId: number, frames: FrameInfo[], args: PictureArgs): Promise<{ target: Box; viewport: GeometryReport['viewport']; masks: Box[] } | PictureReason> {
  const answers = await Promise.all(
    frames.map((f) => askSemantic<GeometryReport>(tabId, f, { type: 'echo:semantic:geometry', ...(f.documentId === args.documentId ? { ref: args.ref } : {}) }, 3_000)),
  );
  let target: Box | null = null;
  let found = false;
  let viewport: GeometryReport['viewport'] | null = null;
  const masks: Box[] = [];
  for (const a of answers) {
    if (!a || !a.ok || !a.value || !Array.isArray(a.value.masks)) return 'page-unreadable';
    if (a.value.hasTarget) {
      found = true;
      target = a.value.target;
    }
    viewport ??= a.value.viewport;
    masks.push(...a.value.masks);
  }
  if (!found) return 'target-gone';
  if (!target || !viewport) return 'out-of-view';
  return { target, viewport, masks };
}

/** The little of the canvas API used here (the worker's OffscreenCanvas; the DOM and WebWorker libs' declarations collide in this project's typecheck). */
interface Bitmap {
  width: number;
  height: number;
  close(): void;
}
interface Ctx2d {
  drawImage(img: Bitmap, sx: number, sy: number, sw: number, sh: number, dx: number, dy: number, dw: number, dh: number): void;
  fillRect(x: number, y: number, w: number, h: number): void;
  strokeRect(x: number, y: number, w: number, h: number): void;
  fillStyle: string;
  strokeStyle: string;
  lineWidth: number;
}
const canvasApi = globalThis as unknown as {
  createImageBitmap(b: Blob): Promise<Bitmap>;
  OffscreenCanvas: new (w: number, h: number) => { getContext(kind: '2d'): Ctx2d | null; convertToBlob(o: { type: string }): Promise<Blob> };
};

/** Crop, black out and outline: the PNG bytes. Runs in the service worker (OffscreenCanvas, createImageBitmap). */
async function paint(dataUrl: string, g: { target: Box; viewport: { w: number; h: number }; masks: Box[] }): Promise<{ png: Uint8Array; width: number; height: number }> {
  const bitmap = await canvasApi.createImageBitmap(await (await fetch(dataUrl)).blob());
  try {
    // Device pixels per CSS px of the capture (device scale and zoom).
    const scale = bitmap.width / Math.max(1, g.viewport.w);
    const crop = cropBox(g.target, g.viewport);
    const out = Math.min(1, PICTURE_BOUNDS.maxWidthPx / (crop.w * scale), PICTURE_BOUNDS.maxHeightPx / (crop.h * scale));
    const width = Math.max(1, Math.round(crop.w * scale * out));
    const height = Math.max(1, Math.round(crop.h * scale * out));
    const canvas = new canvasApi.OffscreenCanvas(width, height);
    const ctx = canvas.getContext('2d');
    if (!ctx) throw new Error('no 2d context');
    ctx.drawImage(bitmap, crop.x * scale, crop.y * scale, crop.w * scale, crop.h * scale, 0, 0, width, height);
    const k = scale * out;
    const at = (b: Box, pad: number) => [(b.x - crop.x - pad) * k, (b.y - crop.y - pad) * k, (b.w + 2 * pad) * k, (b.h + 2 * pad) * k] as const;
    ctx.fillStyle = '#000';
    for (const b of g.masks) ctx.fillRect(...at(b, 2));
    // The outline: a white band under a magenta one, visible on light and dark pages.
    ctx.lineWidth = 5;
    ctx.strokeStyle = '#ffffff';
    ctx.strokeRect(...at(g.target, 4));
    ctx.lineWidth = 3;
    ctx.strokeStyle = '#d6007a';
    ctx.strokeRect(...at(g.target, 4));
    const blob = await canvas.convertToBlob({ type: 'image/png' });
    return { png: new Uint8Array(await blob.arrayBuffer()), width, height };
  } finally {
    bitmap.close();
  }
}

/** Base64 of `bytes`. */
function base64(bytes: Uint8Array): string {
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

/**
 * captureVisibleTab, waited for once when Chrome's quota of captures per second
 * (MAX_CAPTURE_VISIBLE_TAB_CALLS_PER_SECOND, 2) refuses it. Throws Chrome's error otherwise.
 */
async function capture(windowId: number): Promise<string> {
  try {
    return await chrome.tabs.captureVisibleTab(windowId, { format: 'png' });
  } catch (e) {
    if (!/MAX_CAPTURE_VISIBLE_TAB_CALLS_PER_SECOND/.test(String(e instanceof Error ? e.message : e))) throw e;
    await new Promise((r) => setTimeout(r, QUOTA_WAIT_MS));
    return await chrome.tabs.captureVisibleTab(windowId, { format: 'png' });
  }
}

/** How long a capture refused by Chrome's per-second quota waits before its one retry (ms). */
const QUOTA_WAIT_MS = 600;

/** Take the picture of the target `args` in tab `tabId` shared at `origin`. */
export async function takePicture(tabId: number, origin: string, args: PictureArgs): Promise<Result<PictureAnswer>> {
  let tab: chrome.tabs.Tab;
  try {
    tab = await chrome.tabs.get(tabId);
  } catch {
    return err('tab-not-shared', 'the tab is gone');
  }
  if (!tab.active) return none('tab-not-active');
  try {
    const win = await chrome.windows.get(tab.windowId);
    if (win.state === 'minimized') return none('window-minimized');
  } catch {
    return none('window-unknown');
  }
  const frames = await liveFrames(tabId);
  const top = frames.find((f) => f.frameId === 0);
  if (!top || top.origin !== origin) return err('navigated', 'the tab is no longer at the shared origin');
  if (!frames.some((f) => f.frameId === args.frameId && f.documentId === args.documentId)) return err('navigated', "the target's document is no longer in the tab");
  const readable = framesToAsk(frames, origin);
  if (readable.length - 1 > MAX_SNAPSHOT_FRAMES) return none('too-many-frames');
  const injected = await injectInto(tabId, readable.map((f) => f.documentId), SEMANTIC_MODULE);
  if (readable.some((f) => !injected.has(f.documentId))) return none('page-unreadable');
  for (let attempt = 0; attempt < 2; attempt++) {
    const before = await reports(tabId, readable, args);
    if (typeof before === 'string') return none(before);
    let dataUrl: string;
    try {
      dataUrl = await capture(tab.windowId);
    } catch (e) {
      // E.g. Chrome's limit of captures per second twice in a row, or a permission the person withdrew.
      return ok({ status: 'none', reason: 'capture-failed', message: String(e instanceof Error ? e.message : e).slice(0, 200) });
    }
    // The capture is of the window's active tab: the shared tab must still be it.
    const still = await chrome.tabs.get(tabId).catch(() => null);
    if (!still || !still.active || still.windowId !== tab.windowId) return none('tab-not-active');
    const after = await reports(tabId, readable, args);
    if (typeof after === 'string') return none(after);
    if (canonicalJson(before) !== canonicalJson(after)) continue;
    const p = await paint(dataUrl, after);
    if (p.png.byteLength > PICTURE_BOUNDS.maxBytes) return none('too-large');
    return ok({ status: 'captured', png: base64(p.png), width: p.width, height: p.height });
  }
  return none('page-moving');
}
