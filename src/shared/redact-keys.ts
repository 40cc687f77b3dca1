/**
 * Which key names mark a secret, and which a digest or an id, for redaction
 * (src/shared/redact.ts): the walk over values, the JSON scan of result text
 * (src/shared/redact-json.ts, through redact.ts's hooks) and the text rules
 * (`password=…` in text) all ask these same questions here. Pure TypeScript.
 */


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

/**
 * Normalised keys whose values are digests or identifiers, not secrets: the
 * base64 rule does not apply under them. Digests ("sha", "sha256",
 * "descriptorHash", "checksum", "etag", "commit", "integrity") and ids
 * ("documentId", "requestId", "traceId"). A key that is itself sensitive
 * ("sessionId") is hidden before this is consulted.
 */
const KEEP_KEY = /(?:hash|sha\d*|digest|checksum|etag|commit|integrity|id)(?:e?s)?$/;

/** Whether `key` (null: no key, an array's top or a root) names a digest or an id (KEEP_KEY): its value skips the base64 rule. */
export function isDigestKey(key: string | null): boolean {
  return key !== null && KEEP_KEY.test(normaliseKey(key));
}

/** Names of the name/value pair fields in HAR-like header lists: `{name: "Cookie", value: "…"}`. */
const PAIR_NAME_FIELDS = ['name', 'key', 'header'] as const;

/**
 * The rule for an object's `value` when the object is a name/value pair whose name is
 * sensitive (`{name: "Authorization", value: "…"}`; PAIR_NAME_FIELDS), else null.
 */
export function pairNameRule(obj: object): string | null {
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
