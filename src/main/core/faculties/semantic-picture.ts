/**
 * The console side of the target's picture (issue 10 item 6;
 * docs/semantic-controls.md, "The target's picture"): asked of the extension
 * (`semantic-target`/`picture`, extension/src/background/faculties/semantic-picture.ts)
 * only when the person is about to be asked, checked here (a PNG whose header
 * says the size the answer claims, within PICTURE_BOUNDS), hashed (SHA-256 of
 * the PNG bytes), and kept in memory only (PictureStore) for the dialog to
 * fetch by hash (ConsoleApi.getTargetPicture). The receipt `approval-shown`
 * holds the hash, never the picture. No picture never fails the request: the
 * dialog says why there is none.
 */
import { createHash } from 'node:crypto';
import { PICTURE_BOUNDS, PICTURE_REASONS, type PictureReason, type TargetPicture } from '../../../shared/semantic-picture';
import type { FacultyEnv } from '../broker/faculty';

/** A checked picture. */
export interface Picture {
  png: Buffer;
  width: number;
  height: number;
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * The extension's `picture` answer checked: a PNG (signature, then an IHDR chunk whose width and
 * height are the answer's) of at most PICTURE_BOUNDS bytes and pixels; or the reason it has none
 * (its own reason, or `bad-answer` when malformed).
 */
export function checkPictureAnswer(v: unknown): Picture | PictureReason {
  const a = v as { status?: unknown; png?: unknown; width?: unknown; height?: unknown; reason?: unknown } | null;
  if (!a || typeof a !== 'object') return 'bad-answer';
  if (a.status === 'none') return PICTURE_REASONS.includes(a.reason as PictureReason) ? (a.reason as PictureReason) : 'bad-answer';
  if (a.status !== 'captured' || typeof a.png !== 'string') return 'bad-answer';
  if (a.png.length > Math.ceil(PICTURE_BOUNDS.maxBytes / 3) * 4 || a.png.length % 4 !== 0 || !BASE64.test(a.png)) return 'bad-answer';
  const png = Buffer.from(a.png, 'base64');
  if (png.length < 33 || png.length > PICTURE_BOUNDS.maxBytes || !png.subarray(0, 8).equals(PNG_SIGNATURE)) return 'bad-answer';
  if (png.readUInt32BE(8) !== 13 || png.toString('latin1', 12, 16) !== 'IHDR') return 'bad-answer';
  const width = png.readUInt32BE(16);
  const height = png.readUInt32BE(20);
  if (width !== a.width || height !== a.height || width < 1 || height < 1 || width > PICTURE_BOUNDS.maxWidthPx || height > PICTURE_BOUNDS.maxHeightPx) return 'bad-answer';
  return { png, width, height };
}

/** Pictures kept at most (the oldest is dropped past it); each at most PICTURE_BOUNDS.maxBytes. */
export const MAX_PICTURES = 16;

/**
 * The pictures of the approvals shown lately, in memory only, by SHA-256 (64 lowercase hex) of
 * their PNG bytes. Bounded: MAX_PICTURES, oldest first out. Nothing is written to disk.
 */
export class PictureStore {
  private readonly byHash = new Map<string, Picture>();

  /** Keep `p`; answers its SHA-256. */
  put(p: Picture): string {
    const sha256 = createHash('sha256').update(p.png).digest('hex');
    this.byHash.delete(sha256);
    this.byHash.set(sha256, p);
    while (this.byHash.size > MAX_PICTURES) this.byHash.delete(this.byHash.keys().next().value as string);
    return sha256;
  }

  /** The picture with that hash, or null (never taken, or dropped since). */
  get(sha256: string): Picture | null {
    return this.byHash.get(sha256) ?? null;
  }

  get size(): number {
    return this.byHash.size;
  }
}

/**
 * Ask for, check and keep the picture of the resolved target `t` of tab `tabId`: the view the
 * dialog shows (its hash and size, or why there is none). Never throws, never fails the request.
 */
export async function takeTargetPicture(
  env: Pick<FacultyEnv, 'read' | 'pictures'>,
  tabId: number,
  t: { ref: string; frameId: number; documentId: string },
  signal?: AbortSignal,
): Promise<TargetPicture> {
  let answer: unknown;
  try {
    const r = await env.read('semantic-target', 'picture', tabId, { ref: t.ref, frameId: t.frameId, documentId: t.documentId }, signal);
    if (!r.ok) return { status: 'none', reason: 'unavailable' };
    answer = r.value;
  } catch {
    return { status: 'none', reason: 'unavailable' };
  }
  const p = checkPictureAnswer(answer);
  if (typeof p === 'string') return { status: 'none', reason: p };
  return { status: 'captured', sha256: env.pictures.put(p), width: p.width, height: p.height, bytes: p.png.length };
}
