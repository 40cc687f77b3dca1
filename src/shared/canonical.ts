/**
 * Canonical JSON and the two hashes that bind an approval to exactly what was
 * reviewed. One implementation, used by the console (Node) and by the extension
 * (service worker, content scripts, pages): pinned by test/vectors/hashing.json.
 *
 * - Canonical JSON is RFC 8785 (JSON Canonicalization Scheme), produced by the
 *   `canonicalize` package (the reference implementation by the RFC's author).
 * - The digest is SHA-256 through a pluggable back end: WebCrypto
 *   (`crypto.subtle`, browsers and Node) or node:crypto (see src/main/core/digest.ts).
 * - Hashes are written as 64 lowercase hex characters.
 */
import canonicalizeImpl from 'canonicalize';

/** A SHA-256 back end: bytes in, 32-byte digest out. */
export type Sha256 = (data: Uint8Array) => Promise<Uint8Array>;

/** Thrown when a value has no canonical JSON form (undefined, functions, symbols, NaN, Infinity, BigInt, lone surrogates, Map/Set, cycles). */
export class CanonicalizationError extends Error {
  readonly code = 'not-canonicalizable';
}

/**
 * RFC 8785 canonical JSON text of `value`.
 * Rules (RFC 8785 §3.2): object keys sorted by UTF-16 code units, no white space,
 * numbers in ECMAScript shortest form (§3.2.2.3), strings with minimal escaping.
 * @throws CanonicalizationError for values JSON cannot carry, at any depth: NaN,
 *   ±Infinity, undefined (also as an object property or array element), array
 *   holes, functions, symbols, BigInt, non-plain objects other than arrays and
 *   objects with `toJSON` (Map, Set, typed arrays), lone surrogates in strings
 *   or keys (RFC 8785 §3.2.2.2 requires valid Unicode), cyclic structures.
 */
export function canonicalJson(value: unknown): string {
  if (value === undefined || typeof value === 'function' || typeof value === 'symbol' || typeof value === 'bigint') {
    throw new CanonicalizationError(`cannot canonicalize a value of type ${typeof value}`);
  }
  assertCanonicalizable(value, new Set());
  let text: string | undefined;
  try {
    text = canonicalizeImpl(value) as string | undefined;
  } catch (e) {
    throw new CanonicalizationError(e instanceof Error ? e.message : String(e));
  }
  if (typeof text !== 'string') throw new CanonicalizationError('value has no JSON form');
  return text;
}

// The library serialises NaN/Infinity as null (like JSON.stringify); a hash must
// never silently equate different inputs, so we refuse them, and cycles, first.
// The same holds for undefined, functions and symbols anywhere in the value
// (the library drops them from objects, writes null or nothing in arrays, and
// even emits the invalid text `{"f":undefined}` for a nested function), array
// holes (`[,1]` came out as the invalid text "[,1]"), and objects that
// JSON cannot carry (Map, Set, typed arrays: `new Map([[1,2]])` came out "{}").
function assertCanonicalizable(value: unknown, seen: Set<object>): void {
  switch (typeof value) {
    case 'number':
      if (!Number.isFinite(value)) throw new CanonicalizationError(`non-finite number ${value}`);
      return;
    case 'bigint':
      throw new CanonicalizationError('BigInt has no JSON form');
    case 'undefined':
    case 'function':
    case 'symbol':
      throw new CanonicalizationError(`a value of type ${typeof value} has no JSON form`);
    case 'string':
    case 'boolean':
      return;
  }
  if (value === null) return;
  const obj = value as object;
  if (seen.has(obj)) throw new CanonicalizationError('cyclic structure');
  seen.add(obj);
  const toJSON = (obj as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === 'function') {
    // Check what will be serialised (Date gives a string; a toJSON may give anything).
    assertCanonicalizable(toJSON.call(obj, ''), seen);
  } else if (Array.isArray(obj)) {
    for (let i = 0; i < obj.length; i++) {
      if (!(i in obj)) throw new CanonicalizationError(`array hole at index ${i}`);
      assertCanonicalizable(obj[i], seen);
    }
  } else {
    // Realm-independent test (extension content scripts see objects of other realms).
    const tag = Object.prototype.toString.call(obj);
    if (tag !== '[object Object]') throw new CanonicalizationError(`${tag} has no JSON form`);
    for (const v of Object.values(obj)) assertCanonicalizable(v, seen);
  }
  seen.delete(obj);
}

/** SHA-256 through WebCrypto (`globalThis.crypto.subtle`): works in browsers, extension workers and Node 20. */
export const webCryptoSha256: Sha256 = async (data) => {
  const digest = await globalThis.crypto.subtle.digest('SHA-256', new Uint8Array(data));
  return new Uint8Array(digest);
};

/** Lowercase hex of bytes. */
export function toHex(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += b.toString(16).padStart(2, '0');
  return s;
}

const encoder = new TextEncoder();

/** SHA-256 of the UTF-8 bytes of `text`, as 64 lowercase hex characters. */
export async function sha256Hex(text: string, sha256: Sha256 = webCryptoSha256): Promise<string> {
  return toHex(await sha256(encoder.encode(text)));
}

/**
 * The fields of a WebMCP tool descriptor that a `descriptorHash` covers, as
 * `document.modelContext.getTools()` reports them (docs/browser-facts.md, "WebMCP: listing
 * tools"; WebMCP draft, "ModelContext.getTools").
 */
export interface DescriptorFields {
  name: string;
  title?: string | null;
  description?: string | null;
  inputSchema?: unknown;
  origin: string;
  annotations?: unknown;
}

/**
 * The exact object hashed for a descriptor. Normalisation, so that equal tools
 * hash equally on every build:
 * - `title`: missing, null or undefined becomes `""` (Chromium reports `""` when none was given);
 * - `description`: missing becomes `""`;
 * - `inputSchema`: missing or null becomes `{}` (Chromium reports an object, `{}` when none);
 *   a string (older builds and polyfills) is parsed as JSON, and kept as the string if it does not parse;
 * - `annotations`: missing or null becomes `{}` (declarative form tools have no
 *   `annotations` property at all, docs/browser-facts.md, "WebMCP: listing tools"); otherwise kept as reported.
 * Every other property (`window`, `execute`, ...) is ignored.
 */
export function descriptorHashInput(d: DescriptorFields): {
  name: string;
  title: string;
  description: string;
  inputSchema: unknown;
  origin: string;
  annotations: unknown;
} {
  let inputSchema: unknown = d.inputSchema ?? {};
  if (typeof inputSchema === 'string') {
    try {
      inputSchema = JSON.parse(inputSchema);
    } catch {
      /* keep the string: it is what the page declared */
    }
  }
  return {
    name: String(d.name),
    title: d.title == null ? '' : String(d.title),
    description: d.description == null ? '' : String(d.description),
    inputSchema,
    origin: String(d.origin),
    annotations: d.annotations ?? {},
  };
}

/**
 * `descriptorHash` = SHA-256 of the RFC 8785 canonical JSON of
 * `{name, title, description, inputSchema, origin, annotations}` (docs/design.md,
 * "Trust rules"), normalised as `descriptorHashInput` says.
 * @returns 64 lowercase hex characters.
 * @throws CanonicalizationError when the schema or annotations hold non-JSON values.
 */
export async function descriptorHash(d: DescriptorFields, sha256: Sha256 = webCryptoSha256): Promise<string> {
  return sha256Hex(canonicalJson(descriptorHashInput(d)), sha256);
}

/**
 * `argumentsHash` = SHA-256 of the RFC 8785 canonical JSON of the arguments
 * object exactly as it will be passed to `executeTool` (docs/design.md, "Trust rules").
 * @returns 64 lowercase hex characters.
 * @throws CanonicalizationError for non-JSON values.
 */
export async function argumentsHash(args: unknown, sha256: Sha256 = webCryptoSha256): Promise<string> {
  return sha256Hex(canonicalJson(args), sha256);
}

/**
 * `urlHash` = SHA-256 of the RFC 8785 canonical JSON of `{tab, frame}`, the EXACT
 * URLs (fragment included, nothing stripped) of the tab's top document and of the
 * frame that acts. The grant binds it (docs/design.md, "Trust rules"): a page whose
 * URL changed since review, even without a new document (`pushState`,
 * `replaceState`, a fragment), is refused before dispatch.
 * @returns 64 lowercase hex characters.
 */
export async function urlHash(tabUrl: string, frameUrl: string, sha256: Sha256 = webCryptoSha256): Promise<string> {
  return sha256Hex(canonicalJson({ tab: String(tabUrl), frame: String(frameUrl) }), sha256);
}

/** A short fingerprint for people: the first 12 hex characters, grouped in threes ("3f9a·c2e0·1b7d"). */
export function fingerprint(hash: string): string {
  return hash.slice(0, 12).replace(/(.{4})(?=.)/g, '$1·');
}
