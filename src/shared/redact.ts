/**
 * Redaction of likely secrets before anything is stored (receipt details in the
 * ledger) or shown (tool results in the extension and the console). Pure
 * TypeScript with no node: imports: it runs in Node, Electron and the extension.
 *
 * A secret is replaced whole by a marker `"[redacted:<rule>]"`; nothing of it is
 * kept (no prefix, no length), so a marker reveals only which rule fired.
 * Redaction fails closed: when in doubt (a random-looking base64 run, a cycle, nesting too
 * deep to walk) the value is hidden, because a false positive costs the person a
 * glance at the page while a false negative stores a credential forever.
 * This file holds the text rules and the walk over values; which key names mark a secret (or a digest)
 * is src/shared/redact-keys.ts, the JSON scan it uses on result text src/shared/redact-json.ts, the
 * shape tests src/shared/redact-shapes.ts.
 */
import { redactJsonText as scanJson, type JsonRedactHooks } from './redact-json';
import { isDigestKey, pairNameRule, sensitiveKeyRule } from './redact-keys';
import { cardLike, credentialShaped, luhnValid, randomLooking, secretShaped } from './redact-shapes';

export { luhnValid, sensitiveKeyRule };

/** Marker that replaces a secret: `[redacted:<rule>]`. */
export function redactionMarker(rule: string): string {
  return `[redacted:${rule}]`;
}

/** Result of `redact`: a redacted copy and whether anything was hidden. */
export interface Redacted<T = unknown> {
  value: T;
  redacted: boolean;
}

// ---------------------------------------------------------------------------
// Secrets inside strings

/** Rules whose label alone makes the next word a secret (`Password: correcthorse`); the others need secretShaped values. */
const STRONG_LABEL_RULES = new Set(['password', 'pin', 'otp', 'secret', 'apikey', 'privatekey', 'card']);

/** A text rule: `may` is a cheap necessary condition for `re` to match (skips the rule on most short strings of a large JSON result). */
type TextRule = { rule: string; may: RegExp; re: RegExp; replace: (m: string, ...groups: string[]) => string | null };

const M = redactionMarker;

/**
 * The text rules, applied in this order (earlier rules consume their match, so a
 * JWT is not also reported as base64). Each `replace` returns the replacement or
 * null to keep the match.
 */
const TEXT_RULES: readonly TextRule[] = [
  {
    // PEM (RFC 7468) private key blocks, of any algorithm; an unterminated block
    // is hidden to the end of the text (fail closed).
    rule: 'private-key',
    may: /-----BEGIN/,
    re: /-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY( BLOCK)?-----[\s\S]*?(?:-----END \1PRIVATE KEY\2-----|$)/g,
    replace: () => M('private-key'),
  },
  {
    // JSON Web Tokens (RFC 7519, compact JWS/JWE form): base64url of '{"' begins "eyJ".
    rule: 'jwt',
    may: /eyJ/,
    re: /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)?/g,
    replace: () => M('jwt'),
  },
  {
    // HTTP Authorization credentials (RFC 6750 Bearer, RFC 7617 Basic): the scheme stays.
    rule: 'bearer',
    may: /bearer|basic|token/i,
    re: /\b(Bearer|bearer|BEARER|Basic|basic|BASIC|Token)(\s+)([A-Za-z0-9\-._~+/]{8,}=*)/g,
    replace: (_m, scheme, sp, tok) => (credentialShaped(tok) ? `${scheme}${sp}${M('bearer')}` : null),
  },
  {
    // Provider key shapes, from each provider's documentation:
    // OpenAI/Anthropic "sk-…", Stripe "sk_live_…"/"rk_test_…", GitHub "ghp_/gho_/ghu_/ghs_/ghr_…" and
    // "github_pat_…", GitLab "glpat-…", Slack "xox[abpors]-…", AWS access key ids "AKIA/ASIA…",
    // Google API keys "AIza…".
    rule: 'api-key',
    may: /sk-|[spr]k_|gh[pousr]_|github_pat_|glpat-|xox[abpors]-|AKIA|ASIA|AIza/,
    re: /(?<![A-Za-z0-9])(?:sk-[A-Za-z0-9_-]{16,}|(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}|glpat-[A-Za-z0-9_-]{20,}|xox[abpors]-[A-Za-z0-9-]{10,}|(?:AKIA|ASIA)[A-Z0-9]{16}|AIza[A-Za-z0-9_-]{35})(?![A-Za-z0-9])/g,
    replace: (m) => (/[0-9]/.test(m) ? M('api-key') : null), // every listed shape carries digits; "sk-learn-tutorial-for-beginners" does not
  },
  {
    // Webhook URLs whose path is the credential (Slack incoming webhooks,
    // Discord webhooks): unlike a share link, whoever holds one can post as the
    // owner, and nothing in the page asks the person to pass it on. The host stays.
    rule: 'webhook',
    may: /hooks\.slack\.com|discord(?:app)?\.com/,
    re: /\b(https:\/\/(?:hooks\.slack\.com\/(?:services|workflows|triggers)|(?:discord|discordapp)\.com\/api\/webhooks)\/)[A-Za-z0-9_/-]{16,}/g,
    replace: (_m, prefix) => `${prefix}${M('webhook')}`,
  },
  {
    // Passwords in URLs (RFC 3986 §3.2.1 userinfo, deprecated): the user name stays.
    rule: 'url-credentials',
    may: /:\/\/[^\s]*@/,
    // Bounded repeats (scheme 32, user and password 256): unbounded ones rescan a
    // long dotted run from every word start (quadratic; unit/redact-json "regex-hostile text").
    re: /\b([a-z][a-z0-9+.-]{0,31}:\/\/)([^/\s:@]{0,256}):([^/\s@]{1,256})@/gi,
    replace: (_m, scheme, user) => `${scheme}${user}:${M('password')}@`,
  },
  {
    // `key=value` (URL queries, cookies, env files) and `"key": value` (JSON or
    // code in text) where the key names a secret (sensitiveKeyRule).
    rule: 'key-value',
    may: /=/,
    re: /(?<![A-Za-z0-9_.-])([A-Za-z][A-Za-z0-9_.-]{0,63})=('[^']{0,1024}'|"[^"]{0,1024}"|[^\s&;,"'<>]+)/g,
    replace: (_m, key) => {
      const rule = sensitiveKeyRule(key);
      return rule ? `${key}=${M(rule)}` : null;
    },
  },
  {
    rule: 'json-key-value',
    may: /"\s*:/,
    re: /"([A-Za-z][A-Za-z0-9_. -]{0,63})"(\s*:\s*)("(?:[^"\\]|\\.)*"|-?\d[\d.eE+-]*)/g,
    replace: (_m, key, sep) => {
      const rule = sensitiveKeyRule(key);
      return rule ? `"${key}"${sep}"${M(rule)}"` : null;
    },
  },
  {
    // HTTP header lines (`Authorization: …`, `Cookie: …`, `X-Api-Key: …`) at the
    // start of a line or just inside a quote (`curl -H 'Cookie: …'`): the rest of
    // the line, or of the quoted text.
    rule: 'header',
    may: /:/,
    // The indent is bounded (64): an unbounded `^[ \t]*` look-behind rescans a
    // long run of spaces at every position (quadratic; pinned by unit/redact-json "regex-hostile text").
    re: /(?<=^[ \t]{0,64}|["'])((?:proxy-)?authorization|(?:set-)?cookie|x-[A-Za-z0-9-]+)([ \t]*:[ \t]*)([^\s"'][^\r\n"']*)/gim,
    replace: (_m, key, sep) => {
      const rule = sensitiveKeyRule(key);
      return rule ? `${key}${sep}${M(rule)}` : null;
    },
  },
  {
    // `password: hunter2` in prose or logs: after a password/pin/otp/secret/key
    // label any word; after token/session/cookie labels only secret-shaped values,
    // so that "token: a unit of text" stays.
    rule: 'labelled',
    may: /:/,
    re: /(?<![A-Za-z0-9_.-])([A-Za-z][A-Za-z0-9_.-]{0,63})([ \t]*:[ \t]*)([^\s,;"'<>]+)/g,
    replace: (_m, key, sep, v) => {
      const rule = sensitiveKeyRule(key);
      if (!rule || v.startsWith('[redacted:')) return null;
      return STRONG_LABEL_RULES.has(rule) || secretShaped(v) ? `${key}${sep}${M(rule)}` : null;
    },
  },
  {
    // Long base64 / base64url (≥ 40 characters, RFC 4648 §4 and §5 alphabets)
    // that mixes letters and digits and looks random (randomLooking).
    // Runs inside a URL (share links, ids in paths, data: images) or after a
    // digest label (SRI `sha384-…`, `Digest: sha-256=…`) are not this rule's
    // (redactPlainText skips them): a URL's credentials are other rules' job.
    rule: 'base64',
    may: /[A-Za-z0-9+/_-]{40}/,
    re: /(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{40,}={0,2}(?![A-Za-z0-9+/_=-])/g,
    // A hex run is a digest or an id as often as a key: see the note on hex in redactText.
    replace: (m) => (!/^(?:0x)?[0-9a-fA-F]+$/.test(m) && randomLooking(m) ? M('base64') : null),
  },
  {
    // Card-like numbers: 13–19 digits, contiguous or grouped as printed on cards
    // (4-4-4-4, 4-6-5, 4-4-4-4-3) with one kind of separator (space or dash),
    // first digit 2–6, valid Luhn (cardLike).
    rule: 'card',
    may: /[0-9]{4}/,
    // Standalone only: digits inside a UUID ("…-4316-9789-70255d…") or an id
    // ("c607044587168092019a…") are not a card.
    re: /(?<![0-9A-Za-z_-])(?:[0-9]{13,19}|[0-9]{4}([ -])[0-9]{4,6}(?:\1[0-9]{3,6}){1,3})(?![0-9A-Za-z_]|-[0-9A-Za-z])/g,
    replace: (m) => (cardLike(m.replace(/[ -]/g, '')) ? M('card') : null),
  },
];

/**
 * Redacts likely secrets inside a string. Rules, in order (sources in brackets;
 * each rule hides the whole match, an earlier rule's marker ends later matches):
 * 1. PEM private key blocks `-----BEGIN … PRIVATE KEY-----` to their END line,
 *    or to the end of the text when unterminated [RFC 7468];
 * 2. JWTs `eyJ….….…` (JWS, and five-part JWE) [RFC 7519, RFC 7516];
 * 3. `Bearer`/`Basic`/`Token` credentials of 8+ characters that look like one
 *    (a digit, `=`/`+`/`/`, an inner capital, or 24+ characters), the scheme
 *    kept [RFC 6750, RFC 7617];
 * 4. provider key shapes with at least one digit: `sk-…`, `sk_live_…`/`rk_test_…`,
 *    `ghp_/gho_/ghu_/ghs_/ghr_…`, `github_pat_…`, `glpat-…`, `xox[abpors]-…`,
 *    `AKIA…`/`ASIA…`, `AIza…` [each provider's key format documentation];
 * 5. passwords in URLs `scheme://user:pass@` [RFC 3986 §3.2.1];
 *    `key=value` (URL query, cookie, env file) and `"key": value` (JSON in
 *    text) where the key is sensitive (`sensitiveKeyRule`); HTTP header lines
 *    `Authorization: …`, `Cookie: …`, `X-…: …` with a sensitive name, to the end
 *    of the line; `password: word` (password, pin, otp, secret, api key
 *    labels) and `token: s3cr3t` (other sensitive labels, secret-shaped values only);
 *    Slack and Discord webhook URLs (the path is the credential; the host stays);
 * 6. base64/base64url runs of ≥ 40 characters mixing at least two of upper
 *    case, lower case and digits, that look random (randomLooking) [RFC 4648 §4, §5],
 *    except inside a URL (`http(s)://…` up to white space or a quote: share
 *    links, ids in paths; `data:…;base64,…` images) or right after a digest
 *    label (`sha256-`/`sha384-`/`sha512-` [W3C SRI], `sha-256=` [RFC 9530]);
 * 7. card-like numbers: 13–19 digits, contiguous or in printed groups
 *    (4-4-4-4, 4-6-5) with one separator kind, with an issuer prefix and a
 *    length that issuer uses (issuerLength), passing Luhn [ISO/IEC 7812-1 Annex B].
 * Hex runs are not hidden by shape: a 40-hex string is as likely a git commit
 * or a SHA-1 as a (retired, pre-2021) GitHub token, so hex secrets are found by
 * their label (`client_secret=…`, `"token": "…"`, `X-Api-Key: …`).
 * Ordinary text comes back unchanged: prose with "token" as a word, URLs
 * without credentials (share links included), UUIDs, hashes, data: images,
 * ISO dates, phone numbers, order numbers, numbers failing Luhn or an issuer's
 * length, short numbers, product ids, slugs and paths.
 * Text starting with `{` or `[` (tool results arrive as JSON text) is scanned
 * as JSON (src/shared/redact-json.ts), so `{"session": {...}}` is hidden
 * whole at any depth, including in a prefix cut from a longer document; the
 * text it does not change is kept byte for byte (formatting, 16+ digit ids).
 * Strings inside that hold JSON text themselves are scanned too, up to
 * MAX_JSON_IN_STRING levels (deeper ones get the plain-text rules).
 * Pure and total: never throws, never mutates. Time and memory are linear in
 * the length of `s`; callers bound `s` first (boundText: LIMITS.maxRedactInputBytes).
 * @param opts.cut `s` is a prefix cut from a longer text: the trailing partial
 *   word (which may be the first half of a secret no rule can recognise) is
 *   removed (dropTrailingPartial); `truncated`, not `redacted`, says so.
 * @returns the text with each secret replaced by `[redacted:<rule>]`, and whether any was.
 */
export function redactText(s: string, opts: { cut?: boolean } = {}): Redacted<string> {
  const r = redactTextAt(s, 0);
  return opts.cut ? { value: dropTrailingPartial(r.value), redacted: r.redacted } : r;
}

/** At most this many UTF-16 units of a trailing partial word are dropped at a cut; a longer run's head is already the base64 rule's. */
const MAX_PARTIAL_DROP = 1024;

/** `s` without its last run of word characters (no white space, quote, angle bracket or JSON punctuation), when that run is at most MAX_PARTIAL_DROP long, nor any digit groups just before it (half a spaced card number). */
function dropTrailingPartial(s: string): string {
  const stop = /[\s"'<>,;:{}[\]()]/;
  let i = s.length;
  while (i > 0 && s.length - i < MAX_PARTIAL_DROP && !stop.test(s[i - 1] as string)) i--;
  if (i > 0 && !stop.test(s[i - 1] as string)) return s; // a run longer than the drop: not a partial word
  const groups = /(?:[0-9]{1,6}[ -]){1,4}$/.exec(s.slice(Math.max(0, i - 40), i));
  return s.slice(0, i - (groups ? groups[0].length : 0));
}

/** JSON text inside JSON strings is scanned this many levels deep; deeper, the plain-text rules apply. */
export const MAX_JSON_IN_STRING = 4;

function redactTextAt(s: string, level: number): Redacted<string> {
  if (level < MAX_JSON_IN_STRING) {
    const json = scanJson(s, (HOOKS[level] ??= jsonHooks(level)), MAX_REDACT_DEPTH);
    if (json) return { value: json.value, redacted: json.redacted };
  }
  return redactPlainText(s);
}

/** jsonHooks per JSON-in-string level, made once. */
const HOOKS: JsonRedactHooks[] = [];

/** The hooks of the JSON scan: the same key and text rules as `redact` uses on parsed values. */
function jsonHooks(level: number): JsonRedactHooks {
  return {
    keyRule: sensitiveKeyRule,
    string: (v, key) => {
      const r = isDigestKey(key) ? redactPlainText(v, true) : redactTextAt(v, level + 1);
      return r.redacted ? r.value : null;
    },
    number: (raw) => (/^[0-9]{13,19}$/.test(raw) && cardLike(raw) ? M('card') : null),
    key: (k) => {
      const r = redactPlainText(k);
      return r.redacted ? r.value : null;
    },
    text: (raw) => redactPlainText(raw).value,
    marker: M,
  };
}

/** Spans of `s` where the base64 rule does not look: URLs, data: URLs, and values after a digest label. */
const BASE64_EXEMPT = /\b(?:https?|wss?|ftp):\/\/[^\s"'<>\\]+|\bdata:[a-z]+\/[a-z0-9.+-]+(?:;[a-z0-9-]+=[^;,\s"']*)*;base64,[A-Za-z0-9+/=]+|\b(?:sha(?:256|384|512)-|sha-(?:256|512)=|md5=)[A-Za-z0-9+/=]+/gi;

function exemptSpans(s: string): Array<[number, number]> {
  const spans: Array<[number, number]> = [];
  BASE64_EXEMPT.lastIndex = 0;
  for (let m = BASE64_EXEMPT.exec(s); m; m = BASE64_EXEMPT.exec(s)) spans.push([m.index, m.index + m[0].length]);
  return spans;
}

/** Whether [start, end) lies inside one of the sorted spans (binary search). */
function inSpans(spans: ReadonlyArray<[number, number]>, start: number, end: number): boolean {
  let lo = 0;
  let hi = spans.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const [a, b] = spans[mid] as [number, number];
    if (b <= start) lo = mid + 1;
    else if (a > start) hi = mid - 1;
    else return end <= b;
  }
  return false;
}

/**
 * A necessary condition for any text rule to match (one scan instead of a dozen
 * on the many short keys and values of a large JSON result): every rule needs a
 * PEM header, "eyJ", an auth scheme or "token", `=` or `:`, a run of 16
 * base64url/base64 characters, or two groups of 4 digits (a card). Keep it in step with TEXT_RULES.
 */
const MAY_MATCH = /-----BEGIN|eyJ|bearer|basic|token|[=:]|[A-Za-z0-9+/_-]{16}|[0-9]{4}[ -]?[0-9]{4}/i;

/**
 * The text rules over `s`. `keepRandom`: skip the base64 rule (a value under an
 * id or digest key, isDigestKey: `{"checksum": "<base64>"}` is a digest, not a key).
 */
function redactPlainText(s: string, keepRandom = false): Redacted<string> {
  if (!MAY_MATCH.test(s)) return { value: s, redacted: false };
  let out = s;
  let redacted = false;
  for (const r of TEXT_RULES) {
    if ((r.rule === 'base64' && keepRandom) || !r.may.test(out)) continue;
    const spans = r.rule === 'base64' ? exemptSpans(out) : null;
    r.re.lastIndex = 0;
    out = out.replace(r.re, (m: string, ...rest: unknown[]) => {
      const groups = rest.slice(0, -2).map((g) => (typeof g === 'string' ? g : ''));
      if (spans) {
        const at = rest[rest.length - 2] as number;
        if (inSpans(spans, at, at + m.length)) return m;
      }
      const rep = r.replace(m, ...groups);
      if (rep === null || rep === m) return m;
      redacted = true;
      return rep;
    });
  }
  return { value: out, redacted };
}

// ---------------------------------------------------------------------------
// Structured values

/** Nesting deeper than this is replaced by `[redacted:too-deep]` (fail closed; keeps the walk off the stack limit). */
export const MAX_REDACT_DEPTH = 64;

/**
 * Returns a redacted deep copy of `value`; the input is never mutated.
 * - Object values under sensitive keys (`sensitiveKeyRule`: password, passwd,
 *   passcode, pin, token, access_token, refresh_token, secret, client_secret,
 *   authorization, cookie, set-cookie, session, sessionid, otp, api key / apiKey /
 *   api_key / x-api-key, private_key, and compounds ending in password, secret,
 *   token, apikey, …) are replaced whole by `[redacted:<rule>]`, whatever their
 *   type, except null and booleans (which carry no secret). Name/value pairs
 *   (`{name: "Authorization", value: "…"}`) are treated the same way.
 * - Strings (values and keys) go through `redactText`; a hex string under a
 *   digest- or id-named key (`sha`, `commit`, `descriptorHash`, `etag`,
 *   `documentId`, …; isDigestKey) skips the base64 rule.
 * - Integers that are card-like (13–19 digits, first digit 2–6, Luhn) become
 *   `[redacted:card]`; other numbers, booleans and null are kept.
 * - Objects with `toJSON` (Date) are redacted through it; other objects are
 *   copied as plain objects of their own enumerable string keys (so
 *   `__proto__` stays an own data property); functions and symbols are kept
 *   as they are.
 * - A cycle's back reference becomes `[redacted:cycle]`; nesting beyond
 *   MAX_REDACT_DEPTH becomes `[redacted:too-deep]`; a value whose properties
 *   cannot be read (a throwing getter or proxy) becomes `[redacted:unreadable]`.
 *   Shared (non-cyclic) references are copied once each time they appear.
 * @returns `{value, redacted}`: the copy, and whether anything was hidden.
 */
export function redact(value: unknown): Redacted {
  const state = { redacted: false, ancestors: new Set<object>() };
  const out = walk(value, null, 0, state);
  return { value: out, redacted: state.redacted };
}

interface WalkState {
  redacted: boolean;
  ancestors: Set<object>;
}

function hide(state: WalkState, rule: string): string {
  state.redacted = true;
  return M(rule);
}

function walk(value: unknown, key: string | null, depth: number, state: WalkState): unknown {
  if (typeof value === 'string') {
    const r = isDigestKey(key) ? redactPlainText(value, true) : redactText(value);
    if (r.redacted) state.redacted = true;
    return r.value;
  }
  if (typeof value === 'number') {
    return Number.isSafeInteger(value) && value > 0 && cardLike(String(value)) ? hide(state, 'card') : value;
  }
  if (typeof value === 'bigint') return value > 0n && cardLike(value.toString()) ? hide(state, 'card') : value;
  if (value === null || typeof value !== 'object') return value;
  if (state.ancestors.has(value)) return hide(state, 'cycle');
  if (depth >= MAX_REDACT_DEPTH) return hide(state, 'too-deep');
  state.ancestors.add(value);
  try {
    return walkObject(value, key, depth, state);
  } catch {
    return hide(state, 'unreadable');
  } finally {
    state.ancestors.delete(value);
  }
}

function walkObject(value: object, key: string | null, depth: number, state: WalkState): unknown {
  const toJSON = (value as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === 'function') {
    return walk(toJSON.call(value), null, depth + 1, state);
  }
  // Array elements keep the key they sit under, for isDigestKey ("commitIds": [...]).
  if (Array.isArray(value)) return Array.from(value, (v) => walk(v, key, depth + 1, state));
  const entries = Object.entries(value);
  const pairRule = pairNameRule(value);
  const out: [string, unknown][] = [];
  const used = new Set<string>();
  for (const [k, v] of entries) {
    const rule = sensitiveKeyRule(k) ?? (k === 'value' ? pairRule : null);
    let nv: unknown;
    if (rule !== null && v !== null && v !== undefined && typeof v !== 'boolean') nv = hide(state, rule);
    else nv = walk(v, k, depth + 1, state);
    let nk = k;
    const rk = redactPlainText(k);
    if (rk.redacted) {
      state.redacted = true;
      nk = rk.value;
      for (let i = 2; used.has(nk); i++) nk = `${rk.value}#${i}`;
    }
    used.add(nk);
    out.push([nk, nv]);
  }
  // Object.fromEntries defines own data properties: a "__proto__" key stays data.
  return Object.fromEntries(out);
}

