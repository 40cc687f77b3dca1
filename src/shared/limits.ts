/**
 * Every numeric limit of Echo Console in one place. Each is a trust rule or a
 * protection against a hostile page or agent (docs/design.md, "Trust rules"); a
 * violation is reported with its reason, never silently truncated where it
 * would change meaning.
 */
/**
 * Bounds on the approval timeout a person may set (ms): 10 s to 1 h. The
 * settings file, the console API's schema (src/shared/api-schemas.ts) and the
 * settings form all use this one range.
 */
export const APPROVAL_TIMEOUT_RANGE = { min: 10_000, max: 3_600_000 } as const;

/**
 * Developer mode switches itself off after this many minutes with neither the
 * person's input in the console nor a raw-JavaScript call (issue 11 item 2):
 * 30 by default, 1 to 480 as the person sets it (settings file, console API).
 */
export const DEVELOPER_MODE_IDLE_MINUTES = { default: 30, min: 1, max: 480 } as const;

export const LIMITS = {
  /** Page tools listed per frame; more are reported as `too-many-tools`. */
  maxToolsPerFrame: 64,
  /** WebMCP tool names we accept (the draft allows more; we refuse look-alikes and controls). */
  toolNamePattern: /^[A-Za-z0-9_.-]{1,128}$/,
  /** Tool title, in UTF-16 code units. */
  maxTitleChars: 256,
  /** Tool description, in UTF-8 bytes (4 KiB). */
  maxDescriptionBytes: 4 * 1024,
  /** `inputSchema` serialised as JSON, in UTF-8 bytes (64 KiB). */
  maxSchemaBytes: 64 * 1024,
  /** `inputSchema` nesting depth (objects and arrays). */
  maxSchemaDepth: 16,
  /** One link message, in UTF-8 bytes of its JSON (1 MiB: Chrome's cap on host-to-browser native messages). */
  maxMessageBytes: 1024 * 1024,
  /** Arguments of one invocation, in UTF-8 bytes of their canonical JSON (64 KiB). */
  maxArgumentsBytes: 64 * 1024,
  /** Arguments nesting depth (objects and arrays, `{}` is 1): what the link carries, checked before the person is asked. */
  maxArgumentsDepth: 32,
  /** A tool result handed back to the agent, in UTF-8 bytes (256 KiB); longer is truncated and marked. */
  maxResultBytes: 256 * 1024,
  /**
   * The most of a tool result that is redacted (UTF-8 bytes, 4 MiB): the
   * extension's content module cuts a longer result here before it crosses to
   * the worker; redaction scans this whole prefix structurally (JSON-aware,
   * src/shared/redact-json.ts), and only then is the redacted text cut to
   * maxResultBytes. A secret nested anywhere in these 4 MiB is found; what lies
   * beyond is never read, never forwarded.
   */
  maxRedactInputBytes: 4 * 1024 * 1024,
  /** A receipt's `detail`, in UTF-8 bytes of its JSON (8 KiB); longer is truncated and marked. */
  maxReceiptDetailBytes: 8 * 1024,
  /** A grant is valid this long after it is issued (ms). */
  grantTtlMs: 30_000,
  /** An approval request waits this long for the person (ms), unless configured. */
  approvalTimeoutMs: 120_000,
  /** Dispatch of one invocation may take this long before it is `outcome-unknown` (ms). */
  dispatchTimeoutMs: 30_000,
  /** Heartbeat period on the link (ms). */
  heartbeatIntervalMs: 5_000,
  /** The link counts as connected only if a heartbeat answered within this window (ms). */
  heartbeatTimeoutMs: 15_000,
  /** After the first `toolchange` since the last check, wait this long before a fresh discovery (ms): one burst, one check. */
  toolChangeQuietMs: 100,
  /** At most one tool-change check per frame per this interval; while changes continue, one per interval (ms). */
  toolChangeMinIntervalMs: 1_000,
} as const;

const utf8 = new TextEncoder();

/** UTF-8 byte length of a string. */
export function utf8Bytes(s: string): number {
  return utf8.encode(s).length;
}

/** Nesting depth of a JSON value: a scalar is 0, `{}` and `[]` are 1. Stops counting past `limit + 1`. */
export function jsonDepth(value: unknown, limit: number = LIMITS.maxSchemaDepth): number {
  const walk = (v: unknown, d: number): number => {
    if (v === null || typeof v !== 'object' || d > limit) return d;
    let max = d + 1;
    for (const child of Array.isArray(v) ? v : Object.values(v as object)) {
      max = Math.max(max, walk(child, d + 1));
      if (max > limit + 1) break;
    }
    return max;
  };
  return walk(value, 0);
}
