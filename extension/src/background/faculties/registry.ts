/**
 * The faculty registry of the service worker (issue 7, item 4): every way the
 * extension reads or acts in a page is a faculty, declared once in its own file
 * next to this one, with
 *  - its id (the receipt Faculty, e.g. `webmcp-invoke`) and the operations it declares;
 *  - its request check (the shape of `arguments`, and of `subject` for a dispatch);
 *  - for a dispatch faculty: its subject hash (bound by `grant.subjectHash`), its
 *    own pre-dispatch checks (run after the generic ones of lib/grant-checks.ts),
 *    and its page-side runner;
 *  - the isolated-world content module it runs in (extension/src/content/<module>.ts,
 *    built to content/<module>.js; it answers only `echo:<module>:*` messages).
 *
 * The worker core (../core.ts) looks a faculty up by id and never switches on
 * faculty names: an unknown id is `unknown-faculty`, an operation the faculty
 * does not declare (or a `read` of a dispatch faculty, and the reverse) is
 * `unknown-operation`.
 */
import { err, ok, type Result } from '../../../../src/shared/result';
import { FORMATS, type DispatchTarget } from '../../../../src/shared/protocol';
import type { RefusalCode, SharedTab } from '../../../../src/shared/types';
import type { FacultyChecks, PageUrls } from '../../lib/grant-checks';
import type { ExecuteValue } from '../../lib/messages';

/** What the worker core offers a faculty (chrome.* beyond this is the faculty's own). */
export interface FacultyServices {
  /** The shared record of a tab; `undefined` when the tab is not shared. */
  sharedTab(tabId: number): Promise<SharedTab | undefined>;
  /** End the sharing of a tab (e.g. its top document left the shared origin). */
  endSharing(tabId: number): Promise<void>;
}

interface FacultyBase {
  /** The faculty id: FORMATS.facultyName, unique in the registry. */
  readonly id: string;
  /** The operations it declares: FORMATS.facultyName each. */
  readonly operations: readonly string[];
  /** Its content module's file name in extension/src/content (without `.ts`). */
  readonly contentModule: string;
}

/** A faculty that only reads (no grant, no page change): answers the `read` op (and `discover` for `webmcp-discover`). */
export interface ReadFaculty extends FacultyBase {
  readonly kind: 'read';
  /** `null` when `args` are what `operation` takes, otherwise why not (answered as `bad-request`). */
  checkRequest(operation: string, args: Record<string, unknown>): string | null;
  /** Read. Only for shared tabs (`tab-not-shared` otherwise); the value is plain JSON, page text in it untrusted. */
  read(operation: string, tabId: number, args: Record<string, unknown>, services: FacultyServices): Promise<Result<unknown>>;
}

/** What the page-side runner of a dispatch faculty is given. */
export interface RunMessage<P> {
  /** The grant's requestId: `abort` names it. */
  requestId: string;
  operation: string;
  /** What the faculty's own check prepared (WebMCP: the tool name and its canonical descriptor). */
  prepared: P;
  /** The exact URLs whose hash matched the grant: the content module requires them again in the task that acts. */
  urls: PageUrls;
  args: Record<string, unknown>;
  /** The dispatch's timeout (ms): a runner that waits for the person (a form without toolautosubmit) ends its own wait before it. */
  timeoutMs?: number;
}

/** A faculty that acts under a one-use grant: answers the `dispatch` op. */
export interface DispatchFaculty<P = unknown> extends FacultyBase, FacultyChecks<P> {
  readonly kind: 'dispatch';
  /** `null` when `subject` and `args` are what `operation` takes, otherwise why not (answered as `bad-request`). */
  checkRequest(operation: string, subject: Record<string, unknown>, args: Record<string, unknown>): string | null;
  /**
   * The exact tab and frame URLs the grant's `boundUrlHash` covers: this
   * worker's record of what a discovery hashed (background/preimages.ts), or
   * read now by the faculty's content module in the target document; `null`:
   * unreachable. The generic checks hash the answer and compare it with the
   * grant; the page-side runner MUST then require these exact URLs in the task
   * that acts (`RunMessage.urls`), since this answer need not be a fresh read.
   */
  pageUrls(target: DispatchTarget, boundUrlHash: string): Promise<PageUrls | null>;
  /**
   * Run in the page: sends the faculty's message to exactly the target document.
   * Rejects when it could not be delivered. The content module answers
   * `aborted`, `tool-failed`, `navigated` (its own last URL comparison) or one
   * of the faculty's codes (see `refusalFor`).
   */
  execute(target: DispatchTarget, msg: RunMessage<P>): Promise<Result<ExecuteValue>>;
  /** Abort the run of `requestId` in that document (best effort). */
  abort(target: DispatchTarget, requestId: string): void;
  /** The refusal for one of the faculty's own content-side error codes; `null` for an unknown code. */
  refusalFor(code: string): RefusalCode | null;
  /**
   * The words of one of its refusals worth passing on (e.g. `target-covered`: what covers the
   * target, page text the console labels untrusted), or null for the dispatcher's own words.
   */
  refusalText?(code: RefusalCode, message: string): string | null;
}

/** Any faculty. */
export type Faculty = ReadFaculty | DispatchFaculty<unknown>;

/** Faculty lookup by id. */
export class FacultyRegistry {
  private readonly byId = new Map<string, Faculty>();

  /**
   * @throws Error when an id or operation is not FORMATS.facultyName, an id is
   *   registered twice, or a faculty declares no operation (a programming error, at worker start).
   */
  constructor(faculties: readonly Faculty[]) {
    for (const f of faculties) {
      if (!FORMATS.facultyName.test(f.id)) throw new Error(`faculty id ${JSON.stringify(f.id)} is not [a-z0-9-]{1,64}`);
      if (this.byId.has(f.id)) throw new Error(`faculty ${f.id} is registered twice`);
      if (f.operations.length === 0 || !f.operations.every((o) => FORMATS.facultyName.test(o))) throw new Error(`faculty ${f.id} declares bad operations`);
      if (!/^[a-z0-9-]{1,64}$/.test(f.contentModule)) throw new Error(`faculty ${f.id} names a bad content module`);
      this.byId.set(f.id, f);
    }
  }

  /** The ids, in registration order. */
  ids(): string[] {
    return [...this.byId.keys()];
  }

  /**
   * The faculty `id` if it declares `operation` for requests of `kind`.
   * Errors: `unknown-faculty`, `unknown-operation`.
   */
  resolve(id: string, operation: string, kind: 'read'): Result<ReadFaculty>;
  resolve(id: string, operation: string, kind: 'dispatch'): Result<DispatchFaculty<unknown>>;
  resolve(id: string, operation: string, kind: 'read' | 'dispatch'): Result<Faculty> {
    const f = typeof id === 'string' ? this.byId.get(id) : undefined;
    if (!f) return err('unknown-faculty', `no faculty ${JSON.stringify(String(id).slice(0, 64))}`);
    if (f.kind !== kind || typeof operation !== 'string' || !f.operations.includes(operation)) {
      return err('unknown-operation', `faculty ${f.id} has no ${kind} operation ${JSON.stringify(String(operation).slice(0, 64))}`);
    }
    return ok(f);
  }
}

/** Whether `v` is a plain object with no keys: the arguments of an operation that takes none. */
export function isEmptyObject(v: unknown): boolean {
  return !!v && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 0;
}
