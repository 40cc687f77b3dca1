/**
 * The targets' pictures the approval dialog shows (issue 10 item 6;
 * docs/semantic-controls.md, "The target's picture"): fetched by hash from
 * the console (ConsoleApi.getTargetPicture), checked against that hash here
 * (SHA-256 of the PNG bytes, the hash the `approval-shown` receipt holds), and
 * shown through a blob URL (the renderer's CSP allows `img-src blob:` only for
 * this). At most MAX_PICTURE_URLS are kept; older ones are revoked.
 */
import { createStore } from 'zustand/vanilla';
import type { ConsoleApi } from '../../shared/ipc';

/** One picture as the view shows it. */
export type PictureEntry =
  | { status: 'loading' }
  | { status: 'ready'; url: string; width: number; height: number }
  | { status: 'error'; message: string };

export interface PicturesState {
  /** By SHA-256 (64 lowercase hex). */
  entries: Record<string, PictureEntry>;
  /** Fetch and check the picture with that hash, once; later calls do nothing. */
  load(sha256: string): Promise<void>;
}

/** Pictures kept as blob URLs at most. */
export const MAX_PICTURE_URLS = 16;

/** How blob URLs are made and freed (the browser's URL by default; tests may pass their own). */
export interface BlobUrls {
  create(bytes: Uint8Array): string;
  revoke(url: string): void;
}

const BROWSER_URLS: BlobUrls = {
  create: (bytes) => URL.createObjectURL(new Blob([bytes as Uint8Array<ArrayBuffer>], { type: 'image/png' })),
  revoke: (url) => URL.revokeObjectURL(url),
};

/** SHA-256 of `bytes` as 64 lowercase hex (Web Crypto). */
export async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const d = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>));
  return Array.from(d, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** Create the pictures store over the console API. */
export function createPicturesStore(api: Pick<ConsoleApi, 'getTargetPicture'>, urls: BlobUrls = BROWSER_URLS) {
  const order: string[] = [];
  return createStore<PicturesState>()((set, get) => {
    const put = (sha256: string, e: PictureEntry) => set({ entries: { ...get().entries, [sha256]: e } });
    return {
      entries: {},
      async load(sha256) {
        if (!/^[0-9a-f]{64}$/.test(sha256) || get().entries[sha256]) return;
        put(sha256, { status: 'loading' });
        const r = await api.getTargetPicture({ sha256 });
        if (!r.ok) return put(sha256, { status: 'error', message: r.error.message });
        let bytes: Uint8Array;
        try {
          bytes = Uint8Array.from(atob(r.value.png), (c) => c.charCodeAt(0));
        } catch {
          return put(sha256, { status: 'error', message: 'The picture could not be read.' });
        }
        if ((await sha256Hex(bytes)) !== sha256) return put(sha256, { status: 'error', message: 'The picture does not match the hash it was shown with; it is not shown.' });
        put(sha256, { status: 'ready', url: urls.create(bytes), width: r.value.width, height: r.value.height });
        order.push(sha256);
        while (order.length > MAX_PICTURE_URLS) {
          const old = order.shift() as string;
          const e = get().entries[old];
          if (e?.status === 'ready') urls.revoke(e.url);
          const { [old]: _gone, ...rest } = get().entries;
          set({ entries: rest });
        }
      },
    };
  });
}

export type PicturesStore = ReturnType<typeof createPicturesStore>;
