/**
 * The target's picture (issue 10 item 6; docs/semantic-controls.md, "The target's picture"): the
 * console's check of the extension's answer (a PNG whose header says the size claimed, within
 * bounds), the in-memory store (bounded, by SHA-256), the evidence step that puts the picture's
 * hash in the subject and the `approval-shown` detail, the API that hands the bytes to the dialog,
 * the crop's geometry, and the renderer's store, which refuses bytes that do not hash to what it
 * was shown.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { checkPictureAnswer, MAX_PICTURES, PictureStore, takeTargetPicture } from '../../src/main/core/faculties/semantic-picture';
import { pictureEvidence } from '../../src/main/core/faculties/semantic';
import { cropBox, PICTURE_BOUNDS } from '../../src/shared/semantic-picture';
import { createPicturesStore } from '../../src/renderer/stores/pictures';
import type { ResolvedAction } from '../../src/main/core/broker/faculty';
import { ok, err } from '../../src/shared/result';
import { tinyPng } from '../support/png';

const answer = (png: Buffer, w: number, h: number) => ({ status: 'captured', png: png.toString('base64'), width: w, height: h });
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describe("the console's check of a picture", () => {
  it('takes a PNG whose header says the size the answer claims', () => {
    const png = tinyPng(5, 3);
    const p = checkPictureAnswer(answer(png, 5, 3));
    expect(typeof p === 'object' && p.png.equals(png)).toBe(true);
    expect(p).toMatchObject({ width: 5, height: 3 });
  });

  it('refuses what is not that: another size, not a PNG, bad base64, too large, unknown fields of status', () => {
    const png = tinyPng(5, 3);
    expect(checkPictureAnswer(answer(png, 6, 3))).toBe('bad-answer');
    expect(checkPictureAnswer(answer(Buffer.from('GIF89a' + 'x'.repeat(40)), 5, 3))).toBe('bad-answer');
    expect(checkPictureAnswer({ ...answer(png, 5, 3), png: '!!!!' })).toBe('bad-answer');
    expect(checkPictureAnswer({ ...answer(png, 5, 3), png: 'A'.repeat(Math.ceil(PICTURE_BOUNDS.maxBytes / 3) * 4 + 4) })).toBe('bad-answer');
    expect(checkPictureAnswer(answer(tinyPng(PICTURE_BOUNDS.maxWidthPx + 1, 1), PICTURE_BOUNDS.maxWidthPx + 1, 1))).toBe('bad-answer');
    expect(checkPictureAnswer({ status: 'captured' })).toBe('bad-answer');
    expect(checkPictureAnswer(null)).toBe('bad-answer');
    // The extension's own reasons pass; an unknown one does not.
    expect(checkPictureAnswer({ status: 'none', reason: 'tab-not-active' })).toBe('tab-not-active');
    expect(checkPictureAnswer({ status: 'none', reason: 'because' })).toBe('bad-answer');
  });
});

describe('the picture store', () => {
  it('keeps pictures by the SHA-256 of their bytes, at most MAX_PICTURES, oldest out first', () => {
    const s = new PictureStore();
    const first = tinyPng(1, 1, [1, 2, 3]);
    const h1 = s.put({ png: first, width: 1, height: 1 });
    expect(h1).toBe(sha(first));
    expect(s.get(h1)?.png.equals(first)).toBe(true);
    for (let i = 0; i < MAX_PICTURES; i++) s.put({ png: tinyPng(1, 1, [i, 9, 9]), width: 1, height: 1 });
    expect(s.size).toBe(MAX_PICTURES);
    expect(s.get(h1)).toBeNull();
  });
});

describe('the evidence step', () => {
  const resolved = (ref: string | null): ResolvedAction =>
    ({
      target: { tabId: 7, frameId: 3, documentId: 'DOC', origin: 'https://a.example', urlHash: 'a'.repeat(64), tabUrl: 'https://a.example/', frameUrl: 'https://a.example/f' },
      subjectHash: 'b'.repeat(64),
      subjectKey: 'b'.repeat(64),
      subject: { type: 'semantic-target', operation: 'click', ref, fingerprint: { role: 'button', name: 'Buy', ancestors: [], nth: 0 }, fingerprintHash: 'b'.repeat(64), trustedInput: false },
      linkSubject: {},
      receiptFields: {},
      policy: {},
    }) as ResolvedAction;

  it("asks the extension for the resolved target's picture in that frame and document, keeps it, and puts its hash in the subject and the receipt detail", async () => {
    const png = tinyPng(4, 2);
    const asked: unknown[] = [];
    const env = { pictures: new PictureStore(), read: async (...a: unknown[]) => (asked.push(a), ok(answer(png, 4, 2))) };
    const e = await pictureEvidence(resolved('a9'), env as never);
    expect(asked).toEqual([['semantic-target', 'picture', 7, { ref: 'a9', frameId: 3, documentId: 'DOC' }, undefined]]);
    const picture = { status: 'captured', sha256: sha(png), width: 4, height: 2, bytes: png.length };
    expect(e.subject).toMatchObject({ type: 'semantic-target', ref: 'a9', picture });
    expect(e.detail).toEqual({ picture });
    expect(env.pictures.get(sha(png))?.png.equals(png)).toBe(true);
  });

  it('says why there is no picture, and never fails the request: the link failed, the answer was malformed, the extension said why', async () => {
    const store = new PictureStore();
    const t = { ref: 'a9', frameId: 0, documentId: 'D' };
    expect(await takeTargetPicture({ pictures: store, read: async () => err('link-down', 'x') }, 1, t)).toEqual({ status: 'none', reason: 'unavailable' });
    expect(await takeTargetPicture({ pictures: store, read: async () => ok({ status: 'captured', png: 'xx' }) }, 1, t)).toEqual({ status: 'none', reason: 'bad-answer' });
    expect(await takeTargetPicture({ pictures: store, read: async () => ok({ status: 'none', reason: 'out-of-view' }) }, 1, t)).toEqual({ status: 'none', reason: 'out-of-view' });
    expect(await takeTargetPicture({ pictures: store, read: async () => Promise.reject(new Error('boom')) }, 1, t)).toEqual({ status: 'none', reason: 'unavailable' });
    expect(store.size).toBe(0);
    // A subject without a ref (an old view) asks nothing.
    const none = await pictureEvidence(resolved(null), { pictures: store, read: async () => Promise.reject(new Error('not asked')) } as never);
    expect(none.detail).toEqual({});
  });
});

describe('the crop', () => {
  it('is the target with a margin, at least the minimum and at most the maximum size, centred, inside the viewport', () => {
    const vp = { w: 1280, h: 720 };
    // A small checkbox: the minimum crop, centred on it.
    expect(cropBox({ x: 600, y: 300, w: 13, h: 13 }, vp)).toEqual({ x: 366, y: 186, w: 480, h: 240 });
    // Near the top-left corner: pushed inside the viewport.
    expect(cropBox({ x: 2, y: 2, w: 13, h: 13 }, vp)).toEqual({ x: 0, y: 0, w: 480, h: 240 });
    // A large target: cut to the maximum, centred on it.
    expect(cropBox({ x: 0, y: 0, w: 1200, h: 700 }, vp)).toEqual({ x: 280, y: 150, w: 640, h: 400 });
    // A viewport smaller than the minimum: the whole viewport.
    expect(cropBox({ x: 10, y: 10, w: 20, h: 20 }, { w: 300, h: 200 })).toEqual({ x: 0, y: 0, w: 300, h: 200 });
    // A medium target: its box plus the margin on each side.
    expect(cropBox({ x: 100, y: 100, w: 500, h: 200 }, vp)).toEqual({ x: 52, y: 52, w: 596, h: 296 });
  });
});

describe("the renderer's pictures store", () => {
  it('shows only bytes that hash to the hash it was shown with', async () => {
    const png = tinyPng(3, 3);
    const good = sha(png);
    const made: Uint8Array[] = [];
    const urls = { create: (b: Uint8Array) => (made.push(b), `blob:test/${made.length}`), revoke: () => undefined };
    const api = {
      getTargetPicture: async ({ sha256 }: { sha256: string }) => ok({ png: png.toString('base64'), width: 3, height: 3, asked: sha256 }),
    };
    const store = createPicturesStore(api, urls);
    await store.getState().load(good);
    expect(store.getState().entries[good]).toEqual({ status: 'ready', url: 'blob:test/1', width: 3, height: 3 });
    expect(Buffer.from(made[0]!).equals(png)).toBe(true);
    // The console (or anything between) hands other bytes for a hash: not shown.
    const other = 'e'.repeat(64);
    await store.getState().load(other);
    expect(store.getState().entries[other]).toMatchObject({ status: 'error', message: expect.stringMatching(/does not match/) });
    expect(made).toHaveLength(1);
  });

  it('revokes the oldest blob URLs past its bound, and says when the console has no such picture', async () => {
    const revoked: string[] = [];
    let n = 0;
    const pngs = new Map<string, Buffer>();
    for (let i = 0; i < 18; i++) {
      const p = tinyPng(1, 1, [i, 0, 0]);
      pngs.set(sha(p), p);
    }
    const api = {
      getTargetPicture: async ({ sha256 }: { sha256: string }) => {
        const p = pngs.get(sha256);
        return p ? ok({ png: p.toString('base64'), width: 1, height: 1 }) : err('picture-not-found', 'No picture with that hash is kept.');
      },
    };
    const store = createPicturesStore(api, { create: () => `blob:${++n}`, revoke: (u) => void revoked.push(u) });
    for (const h of pngs.keys()) await store.getState().load(h);
    expect(revoked).toEqual(['blob:1', 'blob:2']);
    expect(Object.keys(store.getState().entries)).toHaveLength(16);
    await store.getState().load('f'.repeat(64));
    expect(store.getState().entries['f'.repeat(64)]).toEqual({ status: 'error', message: 'No picture with that hash is kept.' });
  });
});
