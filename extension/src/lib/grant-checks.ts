/**
 * The checks EVERY `dispatch` request passes right before it acts, whatever
 * its faculty, in their fixed order (docs/design.md, "Trust rules";
 * docs/extension.md, "Dispatch: the refusal order"). Pure: every effect (MAC
 * check, clock, nonce store, tabs, frames, the page's URLs, hashing, and the
 * faculty's own checks) is an injected dependency, so the order is unit-tested
 * (test/unit/extension-grant-checks.test.ts) and the same code runs in the
 * service worker.
 *
 * Cheap and unforgeable checks come first; the nonce is consumed (durably,
 * before anything can be dispatched) as soon as the grant is known authentic,
 * unexpired and addressed to this very request, so a grant is spent even when a
 * later check refuses: a grant is for one attempt, never two.
 */
import { LIMITS } from '../../../src/shared/limits';
import { validateGrantShape, type ConsoleRequest, type DispatchTarget } from '../../../src/shared/protocol';
import type { Grant, RefusalCode } from '../../../src/shared/types';

/** The fields of a `dispatch` ConsoleRequest the checks read: derived from the one contract (src/shared/protocol.ts). */
export type DispatchFields = Omit<Extract<ConsoleRequest, { op: 'dispatch' }>, 'op' | 'timeoutMs'>;

/** The exact URLs of the tab's top document and of the acting frame, as the content module read them (`location.href`). */
export interface PageUrls {
  tab: string;
  frame: string;
}

/** What a faculty's own pre-dispatch check answers: what to hand to the page, or a refusal. */
export type FacultyCheckOutcome<P> = { ok: true; prepared: P } | { ok: false; refusal: RefusalCode; message: string };

/** The part of a dispatch faculty the generic checks use (background/faculties/registry.ts DispatchFaculty). */
export interface FacultyChecks<P> {
  /** The subject hash of `subject` (WebMCP: its descriptorHash); must equal `grant.subjectHash`. May throw for a bad subject. */
  subjectHash(subject: Record<string, unknown>): Promise<string>;
  /** The faculty's own checks in the target document (step 8); `origin` is the shared origin. */
  check(target: DispatchTarget, subject: Record<string, unknown>, origin: string): Promise<FacultyCheckOutcome<P>>;
}

/** The effects the checks need. Each may be slow; none should throw (a throw is a refusal, decided by the caller). */
export interface GrantCheckDeps {
  /** HMAC check with the pairing key (src/shared/grant.ts `verifyGrantMac` through the link). */
  verifyGrant(grant: Grant): Promise<boolean>;
  /** ms since the epoch. */
  now(): number;
  /** Atomically: `false` if `nonce` was used before; otherwise record it durably and answer `true`. */
  consumeNonce(nonce: string, expiresAt: number): Promise<boolean>;
  /** The shared tab's origin, or `null` when the tab is not shared. */
  sharedOrigin(tabId: number): Promise<string | null>;
  /** The document the frame holds now (chrome.webNavigation.getFrame), or `null` when there is no such frame. */
  frameDocument(tabId: number, frameId: number): Promise<{ documentId: string; origin: string } | null>;
  /**
   * The exact URLs `boundUrlHash` covers, from the faculty (its record of a discovery's read, or read now
   * in the target document); `null` when they cannot be had. The page-side runner requires them again.
   */
  pageUrls(target: DispatchTarget, boundUrlHash: string): Promise<PageUrls | null>;
  /** `urlHash` of src/shared/canonical.ts. */
  urlHash(tab: string, frame: string): Promise<string>;
  /** argumentsHash of src/shared/canonical.ts; throws for non-JSON values. */
  argumentsHash(args: unknown): Promise<string>;
  /** UTF-8 bytes of the canonical JSON of the arguments (for LIMITS.maxArgumentsBytes); throws for non-JSON values. */
  argumentsBytes(args: unknown): number;
}

/** The first refusal, or what to dispatch: the faculty's prepared value and the URLs that were checked (the page compares them again). */
export type GrantCheckOutcome<P> = { ok: true; prepared: P; urls: PageUrls } | { ok: false; refusal: RefusalCode; message: string };

/** The grant fields compared with the request's, in this order. */
const BOUND_FIELDS = ['faculty', 'operation', 'tabId', 'frameId', 'documentId'] as const;

/**
 * Run the checks in order and answer the first refusal, or what to dispatch.
 * Order (each line: what is compared → refusal code):
 *  1. grant shape (src/shared/protocol.ts `validateGrantShape`, the one shape check) and MAC → `grant-invalid`
 *  2. grant fields = request fields: faculty, operation, target tabId, frameId,
 *     documentId, and subjectHash = faculty.subjectHash(request.subject) → `grant-invalid`
 *  3. `now < expiresAt` → `grant-expired`
 *  4. nonce unused (and now recorded durably) → `grant-reused`
 *  5. the tab is shared → `tab-not-shared`
 *  6. the frame still holds `documentId`, at the grant's origin, same-origin with the shared tab → `navigated`
 *  7. the exact tab and frame URLs the faculty answers for `grant.urlHash` hash to it → `navigated`;
 *     the page-side runner then requires exactly these URLs in the task that acts → `navigated`
 *     (same-document `pushState`/`replaceState`/fragment changes keep the documentId; this catches them)
 *  8. the faculty's own checks (WebMCP: one tool of that name and descriptor hash, not blocked) → the faculty's code
 *  9. the arguments are a JSON object within LIMITS.maxArgumentsBytes hashing to `argumentsHash` → `arguments-mismatch`
 */
export async function checkBeforeDispatch<P>(req: DispatchFields, faculty: FacultyChecks<P>, deps: GrantCheckDeps): Promise<GrantCheckOutcome<P>> {
  const refuse = (refusal: RefusalCode, message: string): GrantCheckOutcome<P> => ({ ok: false, refusal, message });
  const shape = validateGrantShape(req.grant, 'grant');
  if (shape !== null) return refuse('grant-invalid', `the grant is malformed (${shape})`);
  const g = req.grant;
  if (!(await deps.verifyGrant(g))) return refuse('grant-invalid', 'the grant MAC does not verify with the pairing key');
  const t = req.target;
  const asked = { faculty: req.faculty, operation: req.operation, tabId: t?.tabId, frameId: t?.frameId, documentId: t?.documentId };
  const mismatched: string[] = BOUND_FIELDS.filter((k) => g[k] !== asked[k]);
  let subjectHash: string | null = null;
  try {
    subjectHash = await faculty.subjectHash(req.subject);
  } catch {
    /* no hash: mismatched below */
  }
  if (subjectHash !== g.subjectHash) mismatched.push('subjectHash');
  if (mismatched.length > 0) return refuse('grant-invalid', `the grant is for another ${mismatched.join(', ')}`);
  if (!(deps.now() < g.expiresAt)) return refuse('grant-expired', 'the grant expired before dispatch');
  // Steps 4–6 wait on the browser. The reads of 5 and 6 have no effect, so they run side by side
  // with the nonce's durable write and are judged in order once all are in (a throw is the
  // caller's refusal). Step 7 may reach into the page, so it waits until the tab is known shared.
  const [fresh, sharedOrigin, doc] = await Promise.all([
    deps.consumeNonce(g.nonce, g.expiresAt),
    deps.sharedOrigin(t.tabId),
    deps.frameDocument(t.tabId, t.frameId),
  ]);
  if (!fresh) return refuse('grant-reused', 'this grant was already used');
  if (sharedOrigin === null) return refuse('tab-not-shared', 'the tab is not shared');
  if (!doc || doc.documentId !== t.documentId) return refuse('navigated', 'the frame holds another document now');
  if (doc.origin !== g.origin || doc.origin !== sharedOrigin) return refuse('navigated', 'the frame is not at the approved origin');
  const urls = await deps.pageUrls(t, g.urlHash);
  if (urls === null) return refuse('navigated', 'the document cannot be reached to read its URL');
  if ((await deps.urlHash(urls.tab, urls.frame)) !== g.urlHash) return refuse('navigated', 'the page URL changed since approval');
  const own = await faculty.check(t, req.subject, sharedOrigin);
  if (!own.ok) return refuse(own.refusal, own.message);
  const args = req.arguments;
  if (!args || typeof args !== 'object' || Array.isArray(args)) return refuse('arguments-mismatch', 'the arguments are not an object');
  let hash: string;
  try {
    if (deps.argumentsBytes(args) > LIMITS.maxArgumentsBytes) return refuse('arguments-mismatch', 'the arguments are too large');
    hash = await deps.argumentsHash(args);
  } catch {
    return refuse('arguments-mismatch', 'the arguments have no canonical JSON form');
  }
  if (hash !== g.argumentsHash) return refuse('arguments-mismatch', 'the arguments differ from the approved ones');
  return { ok: true, prepared: own.prepared, urls };
}
