/**
 * What a faculty's console-side steps may read (`FacultyEnv`, ./faculty.ts),
 * built once per pipeline: the shared tabs, the discoveries, the validator,
 * and the link reads a faculty makes while resolving its subject (`locate`,
 * `readForm`, and any read faculty's operation through `read`). Every link
 * read first waits until the receipts written so far are on disk
 * (docs/ledger.md, "Durability").
 */
import { isFormSnapshot } from '../../../shared/form';
import { err, ok, type Result } from '../../../shared/result';
import type { FrameLocation } from '../../../shared/types';
import { MAX_URL_CHARS } from '../../../shared/url';
import type { FacultyEnv } from './faculty';
import type { PipelineOptions } from './pipeline';
import { PictureStore } from '../faculties/semantic-picture';
import { LivePatches } from '../faculties/live-patch';

const HEX64 = /^[0-9a-f]{64}$/;

/** A `locate` answer of the shape src/shared/types.ts FrameLocation for exactly the frame and document asked, or null. */
function frameLocation(v: unknown, frameId: number, documentId: string | null): FrameLocation | null {
  const loc = v as Partial<FrameLocation> | null;
  if (!loc || typeof loc !== 'object' || loc.frameId !== frameId) return null;
  if (documentId === null ? typeof loc.documentId !== 'string' || loc.documentId.length < 1 || loc.documentId.length > 128 : loc.documentId !== documentId) return null;
  documentId = loc.documentId as string;
  if (typeof loc.tabUrl !== 'string' || typeof loc.frameUrl !== 'string' || typeof loc.urlHash !== 'string' || !HEX64.test(loc.urlHash)) return null;
  return { frameId, documentId, tabUrl: loc.tabUrl.slice(0, MAX_URL_CHARS), frameUrl: loc.frameUrl.slice(0, MAX_URL_CHARS), urlHash: loc.urlHash };
}

/**
 * The FacultyEnv of a pipeline with options `o`; `durableFirst` waits for the disk
 * (`ledger-unavailable` when it could not).
 */
export function facultyEnv(o: PipelineOptions, durableFirst: () => Promise<Result<void>>): FacultyEnv {
  const timeoutMs = o.readTimeoutMs ?? 15_000;
  const read: FacultyEnv['read'] = async (faculty, operation, tabId, args, signal) => {
    const first = await durableFirst();
    if (!first.ok) return first;
    return o.link.request({ op: 'read', faculty, operation, tabId, arguments: args }, { signal, timeoutMs });
  };
  return {
    discoveries: o.discoveries,
    sharing: o.sharing,
    validator: o.validator,
    pictures: o.pictures ?? new PictureStore(),
    patches: o.patches ?? new LivePatches(),
    read,
    locate: async (tabId, frameId, documentId, signal) => {
      const r = await read('webmcp-discover', 'locate', tabId, { frameId, documentId }, signal);
      if (!r.ok) return r;
      const loc = frameLocation(r.value, frameId, documentId);
      return loc ? ok(loc) : err('bad-answer', "the extension's answer to locate is not a FrameLocation of that frame and document");
    },
    readForm: async (tabId, frameId, documentId, toolName, signal) => {
      const r = await read('webmcp-discover', 'form', tabId, { frameId, documentId, toolName }, signal);
      if (!r.ok) return r;
      return isFormSnapshot(r.value) ? ok(r.value) : err('bad-answer', "the extension's answer to form is not a form snapshot");
    },
  };
}
