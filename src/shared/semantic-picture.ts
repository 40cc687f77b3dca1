/**
 * The picture of a semantic target (issue 10 item 6; docs/semantic-controls.md,
 * "The target's picture"): what the extension answers for `semantic-target`
 * `picture`, and what the approval dialog is told. The picture is kept in the
 * console's memory only; the receipt `approval-shown` holds its SHA-256.
 */

/** Bounds of a picture: the crop around the target (CSS px), its size (px of the PNG) and bytes. */
export const PICTURE_BOUNDS = {
  /** Margin around the target, CSS px. */
  marginCss: 48,
  /** Largest crop, CSS px. */
  cssWidth: 640,
  cssHeight: 400,
  /** Smallest crop, CSS px (context around a small target), when the viewport is that large. */
  minCssWidth: 480,
  minCssHeight: 240,
  /** Largest PNG, px (scaled down past it). */
  maxWidthPx: 1280,
  maxHeightPx: 800,
  /** Largest PNG, bytes. */
  maxBytes: 2 * 1024 * 1024,
} as const;

/** A box in the top document's viewport, CSS px (never given to the agent). */
export interface Box {
  x: number;
  y: number;
  w: number;
  h: number;
}

/** What one document of the tab answers to `echo:semantic:geometry` (extension/src/lib/semantic-geometry.ts). */
export interface GeometryReport {
  /** The top document's viewport (CSS px): what captureVisibleTab captures. */
  viewport: { w: number; h: number };
  /** The target's box clipped to what is visible of its frame and of the top viewport; null when the target is not in this document or not in view. */
  target: Box | null;
  /** Whether this document holds the target (even out of view). */
  hasTarget: boolean;
  /** Boxes to black out, clipped to the top viewport (empty boxes left out). */
  masks: Box[];
}

/** Why no picture was taken. */
export type PictureReason =
  /** The shared tab is not the active tab of its window (captureVisibleTab captures only that one). */
  | 'tab-not-active'
  | 'window-minimized'
  | 'window-unknown'
  /** The target is not in the visible part of the page; nothing is scrolled before approval. */
  | 'out-of-view'
  /** The target's element left its document between the look-up and the picture. */
  | 'target-gone'
  /** A document of the tab did not report its boxes, so its secret fields could not be blacked out. */
  | 'page-unreadable'
  /** More same-origin frames than are asked (fail closed). */
  | 'too-many-frames'
  /** The page moved between the two reports around the capture, twice. */
  | 'page-moving'
  /** Chrome refused the capture (e.g. more than two captures a second). */
  | 'capture-failed'
  | 'too-large'
  /** The console found the extension's answer malformed. */
  | 'bad-answer'
  /** The look-up itself failed (the link's error). */
  | 'unavailable';

export const PICTURE_REASONS: readonly PictureReason[] = [
  'tab-not-active', 'window-minimized', 'window-unknown', 'out-of-view', 'target-gone', 'page-unreadable', 'too-many-frames', 'page-moving',
  'capture-failed', 'too-large', 'bad-answer', 'unavailable',
];

/** The extension's answer to `picture` (PNG bytes as base64). */
export type PictureAnswer = { status: 'captured'; png: string; width: number; height: number } | { status: 'none'; reason: PictureReason; message?: string };

/** What the approval view says about the picture: its hash and size (the bytes are fetched by hash), or why there is none. */
export type TargetPicture = { status: 'captured'; sha256: string; width: number; height: number; bytes: number } | { status: 'none'; reason: PictureReason };

/** Plain words for each reason, as the dialog shows them. */
export const PICTURE_REASON_WORDS: Record<PictureReason, string> = {
  'tab-not-active': 'the shared tab is not the active tab of its window, and Chrome can only capture that one',
  'window-minimized': "the tab's window is minimized",
  'window-unknown': "the tab's window could not be found",
  'out-of-view': 'the target is outside the visible part of the page (nothing is scrolled before you approve)',
  'target-gone': 'the target left the page while the picture was taken',
  'page-unreadable': 'a part of the page did not answer, so its secret fields could not be blacked out',
  'too-many-frames': 'the page has too many frames to black out their secret fields',
  'page-moving': 'the page kept moving while the picture was taken',
  'capture-failed': 'Chrome refused the capture (at most two captures a second)',
  'too-large': 'the picture was too large',
  'bad-answer': "the extension's picture was malformed",
  unavailable: 'the picture could not be asked for',
};

/**
 * The crop around the target box `t` in the viewport (CSS px): the target with
 * PICTURE_BOUNDS.marginCss on each side, at least minCss* and at most css* wide and high (centred
 * on the target, so a large target is cut evenly), kept inside the viewport. Whole CSS px.
 */
export function cropBox(t: Box, viewport: { w: number; h: number }): Box {
  const B = PICTURE_BOUNDS;
  const side = (start: number, size: number, min: number, max: number, limit: number): [number, number] => {
    const want = Math.min(Math.max(size + 2 * B.marginCss, min), max, limit);
    const s = Math.max(0, Math.min(start + size / 2 - want / 2, limit - want));
    return [Math.floor(s), Math.max(1, Math.floor(want))];
  };
  const [x, w] = side(t.x, t.w, B.minCssWidth, B.cssWidth, viewport.w);
  const [y, h] = side(t.y, t.h, B.minCssHeight, B.cssHeight, viewport.h);
  return { x, y, w, h };
}
