/**
 * The shape tests behind redaction's text rules (src/shared/redact.ts): card
 * numbers (Luhn, issuer lengths), random-looking base64, credential- and
 * secret-shaped words. Pure, no imports: it runs in Node, Electron and the extension.
 */

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
 * Card lengths by issuer prefix (IIN), from the card schemes' published
 * ranges: Visa 4 (13, 16, 19); Mastercard 51–55 and 2221–2720 (16); Amex 34, 37
 * (15); Diners 300–305, 36, 38, 39 (14–16); JCB 3528–3589 (16–19); Discover
 * 6011, 644–649, 65 and UnionPay 62 (16–19); Maestro 50, 56–58, 63, 67 (13–19).
 * A 15-digit Walmart order number starting "200" or a 16-digit one starting
 * "81" is therefore not card-like whatever its check digit.
 */
function issuerLength(d: string): boolean {
  const n = d.length;
  const p2 = Number(d.slice(0, 2));
  const p4 = Number(d.slice(0, 4));
  if (d[0] === '4') return n === 13 || n === 16 || n === 19;
  if ((p2 >= 51 && p2 <= 55) || (p4 >= 2221 && p4 <= 2720)) return n === 16;
  if (p2 === 34 || p2 === 37) return n === 15;
  if ((p4 >= 3000 && p4 <= 3059) || p2 === 36 || p2 === 38 || p2 === 39) return n >= 14 && n <= 16;
  if (p4 >= 3528 && p4 <= 3589) return n >= 16 && n <= 19;
  if (p4 === 6011 || (p4 >= 6440 && p4 <= 6599) || p2 === 62) return n >= 16 && n <= 19;
  if (p2 === 50 || (p2 >= 56 && p2 <= 58) || p2 === 63 || p2 === 67) return n >= 13 && n <= 19;
  return false;
}

/**
 * Whether a digit string is card-like: 13–19 digits (ISO/IEC 7812 PAN lengths),
 * an issuer prefix with a length it issues (issuerLength; this keeps
 * epoch-millisecond timestamps, which start with 1, and most order numbers out)
 * and a valid Luhn check digit.
 */
export function cardLike(digits: string): boolean {
  return digits.length >= 13 && digits.length <= 19 && issuerLength(digits) && luhnValid(digits);
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
export function randomLooking(run: string): boolean {
  const classes = Number(/[A-Z]/.test(run)) + Number(/[a-z]/.test(run)) + Number(/[0-9]/.test(run));
  if (classes < 2 || shortSegmentShare(run) < RANDOM_SHORT_SHARE) return false;
  const pieces = run.split('/');
  // A path has two or more slashes; one slash is as likely inside random base64.
  return !(pieces.length >= 3 && pieces.every(benignPiece));
}

/** Whether a token after `Bearer`/`Basic` is credential-shaped: has a digit, `=`/`+`/`/`, or an upper-case letter after the first character. */
export function credentialShaped(tok: string): boolean {
  return /[0-9=+/]/.test(tok) || /.[A-Z]/.test(tok.replace(/^[A-Z]/, 'x')) || tok.length >= 24;
}

/** Whether a value after `token:` is secret-shaped (not a plain word of prose): 4+ characters with a digit, a symbol or an inner capital. */
export function secretShaped(v: string): boolean {
  return v.length >= 4 && (/[^A-Za-z]/.test(v) || /.[A-Z]/.test(v));
}
