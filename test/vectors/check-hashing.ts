/**
 * Checks src/shared/canonical.ts against test/vectors/hashing.json. Pure
 * TypeScript with no node: imports, so the very same code runs in the vitest
 * tests (Node, both digest back ends) and, bundled, inside a Chromium page
 * (test/e2e/hashing-vectors.spec.ts).
 */
import {
  CanonicalizationError,
  argumentsHash,
  canonicalJson,
  descriptorHash,
  descriptorHashInput,
  sha256Hex,
  type DescriptorFields,
  type Sha256,
} from '../../src/shared/canonical';

/** Re-exported so the browser bundle (whose entry is this file) carries the WebCrypto back end. */
export { webCryptoSha256 } from '../../src/shared/canonical';

/** One vector: the input as raw JSON text, the expected RFC 8785 text and its SHA-256 (hex). */
export interface HashingVector {
  name: string;
  kind: 'canonical' | 'descriptor' | 'arguments';
  note?: string;
  /** Raw JSON text; JSON.parse keeps -0, 1e21, escapes and an own `__proto__` key exact. */
  inputJson: string;
  canonical: string;
  sha256: string;
}

/** An input with no canonical form: canonicalJson must throw CanonicalizationError. */
export interface RejectVector {
  name: string;
  inputJson: string;
  note?: string;
}

/** The shape of test/vectors/hashing.json. */
export interface HashingVectorFile {
  source: string;
  format?: string;
  vectors: HashingVector[];
  rejects: RejectVector[];
}

/** What the implementation produced for one vector. */
export interface VectorResult {
  name: string;
  canonical: string;
  sha256: string;
}

/**
 * Runs one vector through the code under test: `canonicalJson` + `sha256Hex`
 * (kind canonical), `argumentsHash` (arguments) or `descriptorHashInput` +
 * `descriptorHash` (descriptor; an `execute` function is added, as on a real
 * registered tool, and must be ignored).
 * @throws whatever the implementation throws.
 */
export async function computeVector(v: HashingVector, sha256: Sha256): Promise<VectorResult> {
  const input: unknown = JSON.parse(v.inputJson);
  if (v.kind === 'descriptor') {
    // Spread, not Object.assign: it defines properties, so an own `__proto__` key would stay data.
    const d: DescriptorFields & { execute: () => void } = { ...(input as DescriptorFields), execute: () => undefined };
    return { name: v.name, canonical: canonicalJson(descriptorHashInput(d)), sha256: await descriptorHash(d, sha256) };
  }
  const canonical = canonicalJson(input);
  const hash = v.kind === 'arguments' ? await argumentsHash(input, sha256) : await sha256Hex(canonical, sha256);
  return { name: v.name, canonical, sha256: hash };
}

/**
 * Checks one vector: the implementation's text and hash must equal the expected
 * ones, and the expected hash must be the SHA-256 of the expected text (so an
 * edit to either field alone is caught even if the implementation changed too).
 * @returns a list of problems, empty when the vector passes.
 */
export async function checkVector(v: HashingVector, sha256: Sha256): Promise<string[]> {
  const problems: string[] = [];
  if ((await sha256Hex(v.canonical, sha256)) !== v.sha256) problems.push(`${v.name}: expected sha256 is not the SHA-256 of the expected canonical text`);
  let got: VectorResult;
  try {
    got = await computeVector(v, sha256);
  } catch (e) {
    problems.push(`${v.name}: threw ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`);
    return problems;
  }
  if (got.canonical !== v.canonical) problems.push(`${v.name}: canonical text ${JSON.stringify(got.canonical)} != expected ${JSON.stringify(v.canonical)}`);
  if (got.sha256 !== v.sha256) problems.push(`${v.name}: sha256 ${got.sha256} != expected ${v.sha256}`);
  return problems;
}

/** Checks that a reject vector makes `canonicalJson` throw CanonicalizationError. @returns problems, empty on pass. */
export function checkReject(r: RejectVector): string[] {
  const input: unknown = JSON.parse(r.inputJson);
  try {
    const text = canonicalJson(input);
    return [`${r.name}: expected CanonicalizationError, got ${JSON.stringify(text)}`];
  } catch (e) {
    return e instanceof CanonicalizationError ? [] : [`${r.name}: threw ${String(e)}, not CanonicalizationError`];
  }
}

/**
 * Checks every vector and reject of a parsed hashing.json with one digest back end.
 * @returns how many were checked and every problem found (empty when all pass).
 */
export async function checkAll(file: HashingVectorFile, sha256: Sha256): Promise<{ checked: number; problems: string[] }> {
  const problems: string[] = [];
  for (const v of file.vectors) problems.push(...(await checkVector(v, sha256)));
  for (const r of file.rejects) problems.push(...checkReject(r));
  return { checked: file.vectors.length + file.rejects.length, problems };
}
