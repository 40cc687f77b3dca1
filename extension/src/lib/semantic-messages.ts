/**
 * The messages of the semantic MUTATIONS between the service worker
 * (background/faculties/semantic.ts, semantic-target.ts) and the `semantic`
 * content module (content/semantic.ts, lib/semantic-handlers.ts). Kept beside
 * lib/messages.ts (which holds the snapshot's `echo:semantic:snapshot`) so the
 * contract of the mutations is in one file. Every answer is a Result.
 */
import type { BlockedReason, Fingerprint, FingerprintQuery, ReadbackObservations, SemanticOperation } from '../../../src/shared/semantic-target';
import type { PageUrlsValue } from './messages';
import type { AllowedKey } from '../../../src/shared/semantic-key';

/** Worker → content module. */
export type ToSemanticAction =
  /** The exact tab and frame URLs now (PageUrlsValue; `navigated` when the top is not readable). */
  | { type: 'echo:semantic:urls' }
  /**
   * Find the target: the element of `ref` (answers `not-mine` for another document's ref,
   * `ref-stale`/`ref-unknown` errors), or the elements matching the fingerprint `query`. `tag`: a
   * fresh document tag (background/faculties/semantic-read.ts nextDocumentTag) the document adopts
   * when it has none yet, so every match gets a ref and the grant can bind the element itself.
   * `focused` (page_key): the key's target instead, lib/semantic-focus.ts focusedTarget — with `ref`,
   * that element must be it now (else `target-changed`); without, a document that does not hold the
   * focus answers no match.
   */
  | { type: 'echo:semantic:target'; ref?: string; query?: FingerprintQuery; tag?: string; focused?: true; review?: boolean }
  /**
   * Act on the target, in the task that acts: the exact `urls` again (`navigated`), the element of
   * `ref` or the one element with exactly `fingerprint` (`target-changed`, `ref-stale`), not blocked
   * (`target-blocked`), no narrower WebMCP tool (`narrower-capability-available`), actionable
   * (`not-actionable`), the hit test (`target-covered`); then the readback's watch and the events.
   * `text`: type only, the value to set (lib/semantic-type.ts; `not-typable`, `option-missing`).
   * Operation `key` (with `key`): the element of `ref` must hold the focus; no actionability or hit
   * test (keys go to the focused element); lib/semantic-key.ts.
   */
  | { type: 'echo:semantic:act'; requestId: string; operation: SemanticOperation; ref?: string; fingerprint: Fingerprint; urls: PageUrlsValue; text?: string; key?: AllowedKey }
  /** The readback after the action: re-find by `fingerprint`, compare with the watch (ReadbackObservations). */
  | { type: 'echo:semantic:readback'; requestId: string; fingerprint: Fingerprint }
  /**
   * A form fill (src/shared/semantic-fill.ts): every field found again as for `act` (by its ref, with its
   * fingerprint), not blocked, no narrower tool, actionable, all in ONE form element (or all outside any
   * form); each value checked (lib/semantic-type.ts typePlan) before ANY is set; then each set in turn.
   */
  | { type: 'echo:semantic:fill'; requestId: string; fields: Array<{ ref: string; fingerprint: Fingerprint; text: string }>; urls: PageUrlsValue }
  /** The fill's readback: each field re-found by its fingerprint (ReadbackObservations per field, in order). */
  | { type: 'echo:semantic:fill-readback'; requestId: string; fingerprints: Fingerprint[] };

/** Worker → content module: this document's boxes for the target's picture (lib/semantic-geometry.ts GeometryReport); `ref` when the target may be here. Answered by content/semantic.ts. */
export interface ToSemanticGeometry {
  type: 'echo:semantic:geometry';
  ref?: string;
}

/** One element a target search found. Page text in `fingerprint` is redacted and UNTRUSTED. */
export interface TargetMatch {
  /** Its ref, when the document has a ref tag (it was snapshotted, or adopted the ask's `tag`); null otherwise or when blocked. */
  ref: string | null;
  fingerprint: Fingerprint;
  /** Why it may not be acted on, or null. */
  blocked: BlockedReason | null;
  /** The declarative WebMCP tool that owns its form and is listed now, or null (the ladder). */
  narrower: string | null;
}

/** What `echo:semantic:target` answers inside its Result. */
export type TargetReport =
  /** The ref's tag is not this document's. */
  | { kind: 'not-mine' }
  | {
      kind: 'targets';
      /** `self.origin`. */
      origin: string;
      /** The exact URLs, read in the same task as the search. */
      urls: PageUrlsValue | null;
      /** Up to MAX_TARGET_MATCHES matches, in composed-tree order. */
      matches: TargetMatch[];
      /** How many matched in all. */
      total: number;
    };

/** Matches listed per document at most (the rest are counted). */
export const MAX_TARGET_MATCHES = 8;

/** What `echo:semantic:act` answers on success. */
export interface ActDone {
  done: true;
}

/** What `echo:semantic:readback` answers on success. */
export type ReadbackReport = ReadbackObservations;

/** The detail of a `target-covered` refusal: the covering element as the person would see it. */
export interface CoverDetail {
  role: string;
  name: string;
  ref: string | null;
}
