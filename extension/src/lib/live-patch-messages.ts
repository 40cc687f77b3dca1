/**
 * The messages of Live Patch (faculty `live-patch`; docs/live-patch.md) between the service worker
 * (background/faculties/live-patch.ts) and the `semantic` content module (lib/live-patch.ts). Kept
 * apart from the page code so the worker's types need no DOM. Every answer is a Result.
 */
import type { Fingerprint } from '../../../src/shared/semantic-target';
import type { PatchEdit } from '../../../src/shared/live-patch';
import type { PageUrlsValue } from './messages';

/** Worker → content module (content/semantic.ts answers them). Every answer is a Result. */
export type ToLivePatch =
  /** Apply a patch (its id: the console's request id) to the ref's element, with the approved fingerprint: PatchApplied. */
  | { type: 'echo:patch:apply'; patchId: string; ref: string; fingerprint: Fingerprint; edits: PatchEdit[]; urls: PageUrlsValue }
  /** The patch's readback: PatchReadback. */
  | { type: 'echo:patch:readback'; patchId: string }
  /** Revert these patches, in this order (newest first): `{done: true}`; `patch-unknown`, `patch-stacked`. */
  | { type: 'echo:patch:revert'; patchIds: string[]; urls: PageUrlsValue }
  /** The revert's readback: RevertReadback per patch, in order. */
  | { type: 'echo:patch:revert-readback'; patchIds: string[] };

/** What `apply` answers: the state hashes (SHA-256 of the canonical state record, src/shared/live-patch.ts patchStateHash). */
export interface PatchApplied {
  patchId: string;
  priorHash: string;
  afterHash: string;
}

/** What `readback` answers: whether the record now equals the one read right after applying. */
export interface PatchReadback {
  held: boolean;
  nowHash: string;
}

/** What the revert's readback answers per patch. */
export interface RevertReadback {
  patchId: string;
  priorHash: string;
  nowHash: string;
  /** The page is exactly as before the patch (nowHash === priorHash). */
  equal: boolean;
  /** At revert time the page no longer held the patch exactly (it changed what the patch touched, or around it). */
  pageChanged: boolean;
  /** The slots whose prior value was NOT put back because the page had changed them (e.g. `attr:title`, `text`). */
  leftAsThePageHasIt: string[];
}
