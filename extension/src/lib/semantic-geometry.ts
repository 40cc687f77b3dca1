/**
 * Where things are on screen, for the picture of a semantic target (issue 10
 * item 6; docs/semantic-controls.md, "The target's picture"). One document
 * answers for itself, in the top document's viewport coordinates (CSS px):
 * the target's visible box (when the target is in this document) and the
 * boxes to black out (password fields, credential, one-time-code and card
 * fields, private elements, cross-origin frames). The service worker crops
 * the captured tab to the target and paints the masks black
 * (background/picture.ts).
 *
 * These boxes never leave the extension: the agent is never given screen
 * coordinates, and the console only gets the finished picture.
 * Runs in the isolated world; reads the DOM only, changes nothing.
 */
import { PRIVATE_ATTRIBUTE } from '../../../src/shared/snapshot';
import { fieldBlocked } from './semantic-roles';
import { composedElements } from './semantic-target';
import type { Box, GeometryReport } from '../../../src/shared/semantic-picture';

export type { Box, GeometryReport };

/** Masks one document reports at most; past it the picture is not taken (fail closed). */
export const MAX_MASKS = 500;

const round = (n: number) => Math.round(n * 100) / 100;

/** The intersection of two boxes, or null when it is empty. */
export function intersect(a: Box, b: Box): Box | null {
  const x = Math.max(a.x, b.x);
  const y = Math.max(a.y, b.y);
  const r = Math.min(a.x + a.w, b.x + b.w);
  const bt = Math.min(a.y + a.h, b.y + b.h);
  return r > x && bt > y ? { x: round(x), y: round(y), w: round(r - x), h: round(bt - y) } : null;
}

/** One step from a frame up to its parent: the iframe's content-box offset in the parent, and the parent's viewport (CSS px). */
export interface FrameStep {
  dx: number;
  dy: number;
  parent: { w: number; h: number };
}

/**
 * The steps from `win` up to the top document, walking `frameElement` (each iframe's content box:
 * its border box plus its border and padding). Null when an ancestor is not readable (a
 * cross-origin parent: the worker never asks such frames) or the chain is deeper than 32.
 */
export function frameChain(win: Window): FrameStep[] | null {
  const steps: FrameStep[] = [];
  let w: Window = win;
  for (let i = 0; w !== w.top; i++) {
    if (i >= 32) return null;
    let fe: Element | null;
    try {
      fe = w.frameElement;
    } catch {
      return null;
    }
    const parent = fe?.ownerDocument.defaultView;
    if (!fe || !parent) return null;
    const r = fe.getBoundingClientRect();
    const cs = parent.getComputedStyle(fe);
    steps.push({
      dx: r.left + (fe as HTMLElement).clientLeft + (parseFloat(cs.paddingLeft) || 0),
      dy: r.top + (fe as HTMLElement).clientTop + (parseFloat(cs.paddingTop) || 0),
      parent: { w: parent.innerWidth, h: parent.innerHeight },
    });
    w = parent;
  }
  return steps;
}

/** `box` (in the viewport of the frame whose chain is `steps`, of size `own`) in the top's viewport, clipped at every level; null when nothing of it is visible. */
export function toTop(box: Box, own: { w: number; h: number }, steps: readonly FrameStep[]): Box | null {
  let b = intersect(box, { x: 0, y: 0, w: own.w, h: own.h });
  for (const s of steps) {
    if (!b) return null;
    b = intersect({ x: b.x + s.dx, y: b.y + s.dy, w: b.w, h: b.h }, { x: 0, y: 0, w: s.parent.w, h: s.parent.h });
  }
  return b;
}

/** Whether `el` is a box to black out: a blocked field, a private element (not inside another one), or a frame whose document is not ours to read. */
function masked(el: Element): boolean {
  if (fieldBlocked(el)) return true;
  if (el.hasAttribute(PRIVATE_ATTRIBUTE)) return true;
  if (el.localName === 'iframe' || el.localName === 'frame' || el.localName === 'object' || el.localName === 'embed') {
    try {
      return !(el as HTMLIFrameElement).contentDocument;
    } catch {
      return true;
    }
  }
  return false;
}

/**
 * This document's report: the target's visible box (null when `target` is null or out of view)
 * and the boxes to black out. Errors (thrown): the frame chain is unreadable, the document has
 * too many elements to scan (composedElements), or more than MAX_MASKS masks; the worker then
 * takes no picture.
 */
export function geometry(doc: Document, target: Element | null): GeometryReport {
  const win = doc.defaultView;
  if (!win) throw new Error('the document has no window');
  const steps = frameChain(win);
  if (!steps) throw new Error("the frame's position in the page cannot be read");
  const own = { w: win.innerWidth, h: win.innerHeight };
  const top = steps.length ? (steps[steps.length - 1] as FrameStep).parent : own;
  const boxOf = (el: Element): Box | null => {
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.height > 0 ? toTop({ x: r.left, y: r.top, w: r.width, h: r.height }, own, steps) : null;
  };
  const masks: Box[] = [];
  const root = doc.documentElement;
  if (root) {
    for (const el of composedElements(root)) {
      if (!masked(el)) continue;
      const b = boxOf(el);
      if (!b) continue;
      if (masks.length >= MAX_MASKS) throw new Error('the page has too many fields to black out');
      masks.push(b);
    }
  }
  return { viewport: { w: top.w, h: top.h }, target: target ? boxOf(target) : null, hasTarget: target !== null, masks };
}
