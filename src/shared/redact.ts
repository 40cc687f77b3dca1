/**
 * Redaction of likely secrets before anything is stored (receipt details in the
 * ledger) or shown (tool results in the extension and the console). Pure
 * TypeScript with no node: imports: it runs in Node, Electron and the extension.
 *
 * A secret is replaced whole by a marker `"[redacted:<rule>]"`; nothing of it is
 * kept (no prefix, no length), so a marker reveals only which rule fired.
 * Redaction fails closed: when in doubt (a 40-hex string, a cycle, nesting too
 * deep to walk) the value is hidden, because a false positive costs the person a
 * glance at the page while a false negative stores a credential forever.
 * Kept whole though over 500 lines: one redaction policy (keys, text rules, walk) that is reviewed and changed as one.
 */

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
// Sensitive keys

/**
 * Normalised key names (lower case; `-`, `_`, `.` and white space removed) whose
 * values are secret, mapped to the rule name used in the marker.
 */
const EXACT_KEYS: ReadonlyMap<string, string> = new Map([
  ['password', 'password'],
  ['passwd', 'password'],
  ['pwd', 'password'],
  ['pass', 'password'],
  ['passcode', 'password'],
  ['passphrase', 'password'],
  ['pin', 'pin'],
  ['pincode', 'pin'],
  ['token', 'token'],
  ['accesstoken', 'token'],
  ['refreshtoken', 'token'],
  ['idtoken', 'token'],
  ['secret', 'secret'],
  ['clientsecret', 'secret'],
  ['secretid', 'secret'], // Vault AppRole secret_id: a credential despite the "id"
  ['credential', 'secret'],
  ['credentials', 'secret'],
  ['authorization', 'authorization'],
  ['proxyauthorization', 'authorization'],
  ['cookie', 'cookie'],
  ['setcookie', 'cookie'],
  ['session', 'session'],
  ['sessionid', 'session'],
  ['otp', 'otp'],
  ['totp', 'otp'],
  ['apikey', 'apikey'],
  ['xapikey', 'apikey'],
  ['privatekey', 'privatekey'],
  ['cvv', 'card'],
  ['cvc', 'card'],
]);

/**
 * Suffixes that make a compound key sensitive (`db_password`, `githubToken`,
 * `x-auth-token`, `stripeSecret`, `PHPSESSID`). Chosen so that ordinary keys do
 * not end with them: `max_tokens` ends in "tokens", not "token", and is kept.
 */
const KEY_SUFFIXES: ReadonlyArray<readonly [string, string]> = [
  ['password', 'password'],
  ['passwd', 'password'],
  ['passcode', 'password'],
  ['passphrase', 'password'],
  ['secret', 'secret'],
  ['token', 'token'],
  ['apikey', 'apikey'],
  ['privatekey', 'privatekey'],
  ['sessionid', 'session'],
  ['sessid', 'session'],
  ['cookie', 'cookie'],
  ['authorization', 'authorization'],
];

/** Lower case, with `-`, `_`, `.` and white space removed: "X-Api-Key" → "xapikey". */
function normaliseKey(key: string): string {
  return key.toLowerCase().replace(/[-_.\s]/g, '');
}

/**
 * The rule name when `key` names a secret (case-insensitive, ignoring `-`, `_`,
 * `.` and spaces; exact names and a few suffixes, see EXACT_KEYS and
 * KEY_SUFFIXES), else null. "password", "API key", "x-api-key", "client_secret",
 * "db_password" are sensitive; "token_count", "max_tokens", "pinned" are not.
 */
export function sensitiveKeyRule(key: string): string | null {
  const k = normaliseKey(key);
  if (k === '') return null;
  const exact = EXACT_KEYS.get(k);
  if (exact) return exact;
  for (const [suffix, rule] of KEY_SUFFIXES) if (k.endsWith(suffix)) return rule;
  return null;
}

// ---------------------------------------------------------------------------
// Secrets inside strings

/** Luhn (ISO/IEC 7812-1 Annex B) check over a string of digits. */
export function luhnValid(digits: string): boolean {
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return false;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return digits.length > 0 && sum % 10 === 0;
}

/**
 * Whether a digit string is card-like: 13–19 digits (ISO/IEC 7812 PAN lengths),
 * a first digit 2–6 (the major issuer ranges: Mastercard 2/5, Amex/JCB/Diners 3,
 * Visa 4, Discover/UnionPay 6; this keeps epoch-millisecond timestamps, which
 * start with 1, out) and a valid Luhn check digit.
 */
function cardLike(digits: string): boolean {
  return digits.length >= 13 && digits.length <= 19 && /^[2-6]/.test(digits) && luhnValid(digits);
}

/**
 * Share of the "segments" of `s` that are at most two characters long, where a
 * segment is a maximal run of one word shape (`Word`, `word`, `WORD`, `123`) and
 * separators break segments. Random base64 switches shape every one to two
 * characters: measured over 20,000 random 40-character base64, base64url and
 * alphanumeric strings, 99.9 % had a share ≥ 0.43. Words, identifiers and slugs
 * stay low ("How-To-Configure-Nginx-2024" 0.20, "getUserAccountSettings…2FAEnabled"
 * 0.22, "iPhoneXSMaxCase…Wallet12" 0.27). 1 when `s` has no segment.
 */
function shortSegmentShare(s: string): number {
  const segments = s.match(/[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+/g) ?? [];
  if (segments.length === 0) return 1;
  return segments.filter((x) => x.length <= 2).length / segments.length;
}

/** Threshold of shortSegmentShare at and above which a run looks random. */
const RANDOM_SHORT_SHARE = 0.43;

/** A piece of a path that is not a secret by itself: empty, digits, hex or a UUID (ids), or word-like. */
function benignPiece(p: string): boolean {
  return p === '' || /^[0-9a-fA-F-]+$/.test(p) || shortSegmentShare(p) < RANDOM_SHORT_SHARE;
}

/**
 * Whether a run of base64/base64url characters looks random rather than like
 * words or a path: it mixes at least two of upper case, lower case and digits,
 * most of its segments are short (shortSegmentShare ≥ RANDOM_SHORT_SHARE), and
 * it is not a path (two or more `/`) whose pieces are all ids or words
 * ("/api/orders/507f1f77bcf86cd799439011/items", "/users/<uuid>/profile" stay).
 */
function randomLooking(run: string): boolean {
  const classes = Number(/[A-Z]/.test(run)) + Number(/[a-z]/.test(run)) + Number(/[0-9]/.test(run));
  if (classes < 2 || shortSegmentShare(run) < RANDOM_SHORT_SHARE) return false;
  const pieces = run.split('/');
  // A path has two or more slashes; one slash is as likely inside random base64.
  return !(pieces.length >= 3 && pieces.every(benignPiece));
}

/** Whether a token after `Bearer`/`Basic` is credential-shaped: has a digit, `=`/`+`/`/`, or an upper-case letter after the first character. */
function credentialShaped(tok: string): boolean {
  return /[0-9=+/]/.test(tok) || /.[A-Z]/.test(tok.replace(/^[A-Z]/, 'x')) || tok.length >= 24;
}

/** Whether a value after `token:` is secret-shaped (not a plain word of prose): 4+ characters with a digit, a symbol or an inner capital. */
function secretShaped(v: string): boolean {
  return v.length >= 4 && (/[^A-Za-z]/.test(v) || /.[A-Z]/.test(v));
}

/** Rules whose label alone makes the next word a secret (`Password: correcthorse`); the others need secretShaped values. */
const STRONG_LABEL_RULES = new Set(['password', 'pin', 'otp', 'secret', 'apikey', 'privatekey', 'card']);

type TextRule = { rule: string; re: RegExp; replace: (m: string, ...groups: string[]) => string | null };

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
    re: /-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY( BLOCK)?-----[\s\S]*?(?:-----END \1PRIVATE KEY\2-----|$)/g,
    replace: () => M('private-key'),
  },
  {
    // JSON Web Tokens (RFC 7519, compact JWS/JWE form): base64url of '{"' begins "eyJ".
    rule: 'jwt',
    re: /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)?/g,
    replace: () => M('jwt'),
  },
  {
    // HTTP Authorization credentials (RFC 6750 Bearer, RFC 7617 Basic): the scheme stays.
    rule: 'bearer',
    re: /\b(Bearer|bearer|BEARER|Basic|basic|BASIC|Token)(\s+)([A-Za-z0-9\-._~+/]{8,}=*)/g,
    replace: (_m, scheme, sp, tok) => (credentialShaped(tok) ? `${scheme}${sp}${M('bearer')}` : null),
  },
  {
    // Provider key shapes, from each provider's documentation:
    // OpenAI/Anthropic "sk-…", Stripe "sk_live_…"/"rk_test_…", GitHub "ghp_/gho_/ghu_/ghs_/ghr_…" and
    // "github_pat_…", GitLab "glpat-…", Slack "xox[abpors]-…", AWS access key ids "AKIA/ASIA…",
    // Google API keys "AIza…".
    rule: 'api-key',
    re: /(?<![A-Za-z0-9])(?:sk-[A-Za-z0-9_-]{16,}|(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}|glpat-[A-Za-z0-9_-]{20,}|xox[abpors]-[A-Za-z0-9-]{10,}|(?:AKIA|ASIA)[A-Z0-9]{16}|AIza[A-Za-z0-9_-]{35})(?![A-Za-z0-9])/g,
    replace: (m) => (/[0-9]/.test(m) ? M('api-key') : null), // every listed shape carries digits; "sk-learn-tutorial-for-beginners" does not
  },
  {
    // Passwords in URLs (RFC 3986 §3.2.1 userinfo, deprecated): the user name stays.
    rule: 'url-credentials',
    re: /\b([a-z][a-z0-9+.-]*:\/\/)([^/\s:@]*):([^/\s@]+)@/gi,
    replace: (_m, scheme, user) => `${scheme}${user}:${M('password')}@`,
  },
  {
    // `key=value` (URL queries, cookies, env files) and `"key": value` (JSON or
    // code in text) where the key names a secret (sensitiveKeyRule).
    rule: 'key-value',
    re: /(?<![A-Za-z0-9_.-])([A-Za-z][A-Za-z0-9_.-]{0,63})=('[^']*'|"[^"]*"|[^\s&;,"'<>]+)/g,
    replace: (_m, key) => {
      const rule = sensitiveKeyRule(key);
      return rule ? `${key}=${M(rule)}` : null;
    },
  },
  {
    rule: 'json-key-value',
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
    re: /(?<=^[ \t]*|["'])((?:proxy-)?authorization|(?:set-)?cookie|x-[A-Za-z0-9-]+)([ \t]*:[ \t]*)([^\s"'][^\r\n"']*)/gim,
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
    re: /(?<![A-Za-z0-9_.-])([A-Za-z][A-Za-z0-9_.-]{0,63})([ \t]*:[ \t]*)([^\s,;"'<>]+)/g,
    replace: (_m, key, sep, v) => {
      const rule = sensitiveKeyRule(key);
      if (!rule || v.startsWith('[redacted:')) return null;
      return STRONG_LABEL_RULES.has(rule) || secretShaped(v) ? `${key}${sep}${M(rule)}` : null;
    },
  },
  {
    // Long hex (≥ 32 characters, mixing letters and digits): API keys and
    // hex-encoded secrets. A 40-hex git SHA has the same shape as a classic
    // GitHub token (40 hex) and is hidden too (fail closed), as are 0x-prefixed
    // Ethereum keys (and, alas, addresses); digests and ids under digest- or
    // id-named keys are kept by `redact` (KEEP_HEX_KEY).
    rule: 'hex',
    re: /(?<![A-Za-z0-9])(?:0x)?[0-9a-fA-F]{32,}(?![A-Za-z0-9])/g,
    replace: (m) => (/[0-9]/.test(m) && /[a-fA-F]/.test(m.replace(/^0x/, '')) ? M('hex') : null),
  },
  {
    // Long base64 / base64url (≥ 40 characters, RFC 4648 §4 and §5 alphabets)
    // that mixes letters and digits and looks random (randomLooking).
    rule: 'base64',
    re: /(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{40,}={0,2}(?![A-Za-z0-9+/_=-])/g,
    replace: (m) => (randomLooking(m) ? M('base64') : null),
  },
  {
    // Card-like numbers: 13–19 digits, contiguous or grouped as printed on cards
    // (4-4-4-4, 4-6-5, 4-4-4-4-3) with one kind of separator (space or dash),
    // first digit 2–6, valid Luhn (cardLike).
    rule: 'card',
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
 * 6. hex runs of ≥ 32 characters, optionally `0x`-prefixed, mixing letters and
 *    digits. A 40-hex git SHA is hidden too: it has exactly the shape of a
 *    classic GitHub token (40 hex), and a false positive costs less than a
 *    stored credential; `redact` keeps hex under digest/id keys (KEEP_HEX_KEY);
 * 7. base64/base64url runs of ≥ 40 characters mixing at least two of upper
 *    case, lower case and digits, that look random (randomLooking) [RFC 4648 §4, §5];
 * 8. card-like numbers: 13–19 digits, contiguous or in printed groups
 *    (4-4-4-4, 4-6-5) with one separator kind, first digit 2–6 (major issuer
 *    ranges, keeps epoch-ms timestamps out), passing Luhn [ISO/IEC 7812-1 Annex B].
 * Ordinary text comes back unchanged: prose with "token" as a word, URLs
 * without credentials, UUIDs (hex groups are shorter than 32), ISO dates,
 * phone numbers, numbers failing Luhn or starting with 0, 1, 7, 8, 9, short
 * numbers, product ids, slugs and paths.
 * A string holding a JSON object or array (tool results arrive as JSON text) is
 * parsed and redacted structurally (see `redact`, so `{"session": {...}}` is
 * hidden whole); it is re-serialised compactly only if something was hidden.
 * Exception: JSON text with integers of 16+ digits, which JSON.parse would
 * round, gets the plain-text rules only (string and number values under
 * sensitive keys are still hidden; object values are not).
 * Pure and total: never throws, never mutates.
 * @returns the text with each secret replaced by `[redacted:<rule>]`, and whether any was.
 */
export function redactText(s: string): Redacted<string> {
  const json = redactJsonText(s);
  if (json) return json;
  return redactPlainText(s);
}

function redactPlainText(s: string): Redacted<string> {
  let out = s;
  let redacted = false;
  for (const r of TEXT_RULES) {
    r.re.lastIndex = 0;
    out = out.replace(r.re, (m: string, ...rest: unknown[]) => {
      const groups = rest.slice(0, -2).map((g) => (typeof g === 'string' ? g : ''));
      const rep = r.replace(m, ...groups);
      if (rep === null || rep === m) return m;
      redacted = true;
      return rep;
    });
  }
  return { value: out, redacted };
}

// Tool results arrive as JSON strings (docs/browser-facts.md, "WebMCP: running
// tools": executeTool resolves to a JSON string); parsing lets key rules see `{"session": {...}}` whole.
function redactJsonText(s: string): Redacted<string> | null {
  const t = s.trimStart();
  if (!(t.startsWith('{') || t.startsWith('['))) return null;
  // Integers of 16+ digits (snowflake ids) would lose precision through
  // JSON.parse and come back altered on re-serialisation: such text gets the
  // plain-text rules (which still hide `"password": "…"` pairs) instead.
  if (/[[:,]\s*-?[0-9]{16,}/.test(s)) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(s);
  } catch {
    return null;
  }
  const r = redact(parsed);
  return r.redacted ? { value: JSON.stringify(r.value), redacted: true } : { value: s, redacted: false };
}

// ---------------------------------------------------------------------------
// Structured values

/** Nesting deeper than this is replaced by `[redacted:too-deep]` (fail closed; keeps the walk off the stack limit). */
export const MAX_REDACT_DEPTH = 64;

/**
 * Normalised keys whose hex values are digests or identifiers, not secrets, and
 * are kept: digests ("sha", "sha256", "descriptorHash", "argumentsHash",
 * "checksum", "etag", "commit") and ids ("documentId": Chrome's document ids
 * are 32 hex characters; "requestId", "traceId"). A key that is itself
 * sensitive ("sessionId") is redacted before this is consulted.
 */
const KEEP_HEX_KEY = /(?:hash|sha\d*|digest|checksum|etag|commit|integrity|id)(?:e?s)?$/;

/** Names of the name/value pair fields in HAR-like header lists: `{name: "Cookie", value: "…"}`. */
const PAIR_NAME_FIELDS = ['name', 'key', 'header'] as const;

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
 *   `documentId`, …; KEEP_HEX_KEY) is kept whole.
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
    if (key !== null && KEEP_HEX_KEY.test(normaliseKey(key)) && /^(?:0x)?[0-9a-fA-F]{32,128}$/.test(value)) return value;
    const r = redactText(value);
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
  // Array elements keep the key they sit under, for KEEP_HEX_KEY ("commitIds": [...]).
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

function pairNameRule(obj: object): string | null {
  if (!Object.prototype.hasOwnProperty.call(obj, 'value')) return null;
  for (const f of PAIR_NAME_FIELDS) {
    const n = (obj as Record<string, unknown>)[f];
    if (Object.prototype.hasOwnProperty.call(obj, f) && typeof n === 'string') {
      const rule = sensitiveKeyRule(n);
      if (rule) return rule;
    }
  }
  return null;
}
