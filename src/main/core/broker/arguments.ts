/**
 * Step 1 of a reviewed action, shapeArguments: what every faculty's arguments
 * must be before anything else looks at them (docs/design.md, "Trust rules":
 * bounded input), and the private copy the rest of the pipeline works on.
 */
import { argumentsHash as hashArguments, canonicalJson } from '../../../shared/canonical';
import { nodeSha256 } from '../digest';
import { LIMITS, jsonDepth, utf8Bytes } from '../../../shared/limits';

/** Step 1's result: the arguments as a private copy parsed from their canonical text, or why not. */
export type Shaped =
  | { ok: true; args: Record<string, unknown>; hash: string; bytes: number }
  | { ok: false; code: string; message: string; hash: string | null; bytes: number };

/**
 * Step 1, shapeArguments: the arguments must be a JSON object within
 * LIMITS.maxArgumentsBytes (canonical JSON) and LIMITS.maxArgumentsDepth (the
 * link carries no deeper). What is validated, shown, granted and dispatched
 * afterwards is a copy parsed from the canonical text: exactly what was hashed.
 */
export async function shapeArguments(raw: unknown): Promise<Shaped> {
  let canon: string;
  let hash: string;
  try {
    canon = canonicalJson(raw);
    hash = await hashArguments(raw, nodeSha256);
  } catch (e) {
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return { ok: false, code: 'invalid-arguments', message: '`arguments` must be a JSON object.', hash: null, bytes: 0 };
    return { ok: false, code: 'invalid-arguments', message: `\`arguments\` is not plain JSON: ${e instanceof Error ? e.message : String(e)}.`, hash: null, bytes: 0 };
  }
  const bytes = utf8Bytes(canon);
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return { ok: false, code: 'invalid-arguments', message: '`arguments` must be a JSON object.', hash, bytes };
  if (bytes > LIMITS.maxArgumentsBytes) return { ok: false, code: 'arguments-too-large', message: `\`arguments\` is ${bytes} bytes of canonical JSON; the limit is ${LIMITS.maxArgumentsBytes}.`, hash, bytes };
  const args = JSON.parse(canon) as Record<string, unknown>;
  if (jsonDepth(args, LIMITS.maxArgumentsDepth) > LIMITS.maxArgumentsDepth) {
    return { ok: false, code: 'arguments-too-deep', message: `\`arguments\` is nested deeper than ${LIMITS.maxArgumentsDepth} levels; the link to the extension carries no deeper arguments.`, hash, bytes };
  }
  return { ok: true, args, hash, bytes };
}
