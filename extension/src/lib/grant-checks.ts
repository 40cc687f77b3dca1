/**
 * The checks an `invoke` request passes right before dispatch, in their fixed
 * order (docs/design.md, "Trust rules"; docs/extension.md, "Refusal order"). Pure:
 * every effect (MAC check, clock, nonce store, tabs, frames, rediscovery,
 * hashing) is an injected dependency, so the order is unit-tested
 * (test/unit/extension-grant-checks.test.ts) and the same code runs in the
 * service worker.
 *
 * Cheap and unforgeable checks come first; the nonce is consumed (durably,
 * before anything can be dispatched) as soon as the grant is known authentic,
 * unexpired and addressed to this request, so a grant is spent even when a
 * later check refuses: a grant is for one attempt, never two.
 */
import { LIMITS } from '../../../src/shared/limits';
import type { ConsoleRequest } from '../../../src/shared/protocol';
import type { Grant, RefusalCode } from '../../../src/shared/types';

/** The fields of an `invoke` ConsoleRequest the checks read: derived from the one contract (src/shared/protocol.ts). */
export type InvokeFields = Omit<Extract<ConsoleRequest, { op: 'invoke' }>, 'op' | 'timeoutMs'>;

/** A tool found by the fresh discovery in the target document. */
export interface FoundTool {
  /** Canonical JSON of the descriptor fields (what the hash covers); the content script re-checks it at dispatch. */
  canonical: string;
  descriptorHash: string;
  blocked?: string;
}

/** The effects the checks need. Each may be slow; none may throw (a throw is treated as a refusal by the caller). */
export interface GrantCheckDeps {
  /** HMAC check with the pairing key (src/shared/grant.ts through the link). */
  verifyGrant(grant: Grant): Promise<boolean>;
  /** ms since the epoch. */
  now(): number;
  /** Atomically: `false` if `nonce` was used before; otherwise record it durably and answer `true`. */
  consumeNonce(nonce: string, expiresAt: number): Promise<boolean>;
  /** The shared tab's origin, or `null` when the tab is not shared. */
  sharedOrigin(tabId: number): Promise<string | null>;
  /** The document the frame holds now (chrome.webNavigation.getFrame), or `null` when there is no such frame. */
  frameDocument(tabId: number, frameId: number): Promise<{ documentId: string; origin: string } | null>;
  /** Discover again in exactly this document; the tools named `name`. `null` when the document is gone. */
  toolsNamed(target: { tabId: number; frameId: number; documentId: string }, name: string): Promise<FoundTool[] | null>;
  /** argumentsHash of src/shared/canonical.ts; throws for non-JSON values. */
  argumentsHash(args: unknown): Promise<string>;
  /** UTF-8 bytes of the canonical JSON of the arguments (for LIMITS.maxArgumentsBytes); throws for non-JSON values. */
  argumentsBytes(args: unknown): number;
}

export type GrantCheckOutcome = { ok: true; tool: FoundTool } | { ok: false; refusal: RefusalCode; message: string };

const HEX32 = /^[0-9a-f]{32}$/;
const HEX64 = /^[0-9a-f]{64}$/;

/** Whether `g` has the shape of a Grant (types.ts). Anything else is `grant-invalid` before any crypto. */
export function isGrantShaped(g: unknown): g is Grant {
  if (!g || typeof g !== 'object') return false;
  const x = g as Record<string, unknown>;
  return (
    typeof x.requestId === 'string' && x.requestId.length > 0 && x.requestId.length <= 200 &&
    Number.isInteger(x.tabId) && Number.isInteger(x.frameId) &&
    typeof x.documentId === 'string' && typeof x.origin === 'string' && typeof x.toolName === 'string' &&
    typeof x.descriptorHash === 'string' && HEX64.test(x.descriptorHash) &&
    typeof x.argumentsHash === 'string' && HEX64.test(x.argumentsHash) &&
    typeof x.nonce === 'string' && HEX32.test(x.nonce) &&
    typeof x.expiresAt === 'number' && Number.isFinite(x.expiresAt) &&
    typeof x.mac === 'string' && HEX64.test(x.mac)
  );
}

/**
 * Run the checks in order and answer the first refusal, or the tool to dispatch.
 * Order (each line: what is compared → refusal code):
 *  1. grant shape and MAC (verifyGrant) → `grant-invalid`
 *  2. grant fields = request fields (tabId, frameId, documentId, toolName, descriptorHash) → `grant-invalid`
 *  3. `now < expiresAt` → `grant-expired`
 *  4. nonce unused (and now recorded) → `grant-reused`
 *  5. the tab is shared → `tab-not-shared`
 *  6. the frame still holds `documentId`, with the grant's origin, same-origin with the shared tab → `navigated`
 *  7. a fresh discovery in that document finds exactly one tool with that name
 *     (0 → `tool-missing`, >1 → `tool-ambiguous`) whose descriptorHash is the grant's → `descriptor-changed`
 *  8. the tool is not blocked (e.g. a password form) → `tool-blocked`
 *  9. the arguments are a JSON object within LIMITS.maxArgumentsBytes hashing to `argumentsHash` → `arguments-mismatch`
 */
export async function checkBeforeDispatch(req: InvokeFields, deps: GrantCheckDeps): Promise<GrantCheckOutcome> {
  const refuse = (refusal: RefusalCode, message: string): GrantCheckOutcome => ({ ok: false, refusal, message });
  const g = req.grant;
  if (!isGrantShaped(g)) return refuse('grant-invalid', 'the grant is malformed');
  if (!(await deps.verifyGrant(g))) return refuse('grant-invalid', 'the grant MAC does not verify with the pairing key');
  const mismatched = (['tabId', 'frameId', 'documentId', 'toolName', 'descriptorHash'] as const).filter((k) => g[k] !== req[k]);
  if (mismatched.length > 0) return refuse('grant-invalid', `the grant is for another ${mismatched.join(', ')}`);
  if (!(deps.now() < g.expiresAt)) return refuse('grant-expired', 'the grant expired before dispatch');
  if (!(await deps.consumeNonce(g.nonce, g.expiresAt))) return refuse('grant-reused', 'this grant was already used');
  const sharedOrigin = await deps.sharedOrigin(req.tabId);
  if (sharedOrigin === null) return refuse('tab-not-shared', 'the tab is not shared');
  const doc = await deps.frameDocument(req.tabId, req.frameId);
  if (!doc || doc.documentId !== req.documentId) return refuse('navigated', 'the frame holds another document now');
  if (doc.origin !== g.origin || doc.origin !== sharedOrigin) return refuse('navigated', 'the frame is not at the approved origin');
  const found = await deps.toolsNamed({ tabId: req.tabId, frameId: req.frameId, documentId: req.documentId }, req.toolName);
  if (found === null) return refuse('navigated', 'the document went away during rediscovery');
  if (found.length === 0) return refuse('tool-missing', 'the page no longer offers this tool');
  if (found.length > 1) return refuse('tool-ambiguous', `the page offers ${found.length} tools with this name`);
  const tool = found[0] as FoundTool;
  if (tool.descriptorHash !== g.descriptorHash) return refuse('descriptor-changed', 'the tool changed since it was approved');
  if (tool.blocked) return refuse('tool-blocked', `the tool is blocked (${tool.blocked})`);
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
  return { ok: true, tool };
}
