/**
 * The semantic snapshot's contract (issue 10 items 2 and 5; docs/semantic-snapshot.md):
 * its byte budget, the shape of a ref, the blocked-surface rules that do not
 * need a DOM, and the assembly of the per-frame texts into one bounded text.
 * Pure TypeScript: the extension's content module and service worker, the
 * console's agent tool and the unit tests share it.
 *
 * The text format, one node per line, indented one space per level:
 *
 *   <role>[:<input type>][ "<name>"][ =<value>][ [<state> ...]][ #<ref>]
 *   "<text>"
 *
 * Names, values and page text are JSON string literals, so page text can
 * never forge a role line, a ref or the truncation marker (a text line always
 * starts with `"`). No coordinates, URLs or attribute values other than these.
 */
import { truncateUtf8, utf8Length } from './bounds';

/** The budget of one snapshot, in UTF-8 bytes of its text. */
export const SNAPSHOT_BYTES = {
  /** When the agent names none: about 16k tokens, enough for a long article or a large form. */
  default: 64 * 1024,
  /** The least an agent may ask for: a marker and a few lines. */
  min: 256,
  /** The most: LIMITS.maxResultBytes (256 KiB), the bound of every result handed to the agent. */
  max: 256 * 1024,
} as const;

/**
 * The attribute a page sets on an element to keep it (and everything inside)
 * out of every read: the snapshot shows one `[blocked private]` line with its
 * role only, no name, no text, no ref. Any value, including the empty one.
 */
export const PRIVATE_ATTRIBUTE = 'data-echo-private';

/**
 * `autocomplete` tokens that name a credential, a one-time code or card data
 * (HTML, "Autofill": the autofill field names). A field carrying any of them is
 * blocked: no value, no ref. `username` is not here: alone it is no secret,
 * and inside a form holding a password it is blocked with the whole form.
 */
export const BLOCKED_AUTOCOMPLETE: ReadonlySet<string> = new Set([
  'current-password',
  'new-password',
  'one-time-code',
  'cc-name',
  'cc-given-name',
  'cc-additional-name',
  'cc-family-name',
  'cc-number',
  'cc-exp',
  'cc-exp-month',
  'cc-exp-year',
  'cc-csc',
  'cc-type',
  'webauthn',
]);

/** Whether an `autocomplete` attribute value names a blocked field (any token, any case). */
export function autocompleteBlocked(value: string | null | undefined): boolean {
  if (!value) return false;
  return value.toLowerCase().split(/\s+/).some((t) => BLOCKED_AUTOCOMPLETE.has(t));
}

/** The kinds of credential a field's own words can name (credentialWords). */
export type CredentialWords = 'password' | 'card' | 'one-time-code';

// Short tokens count only between non-letters ("pin" in "user_pin", not in "pinned"; "otp" not in "hotpot");
// camelCase names are split first ("otpCode", "cardCvc", "userPin"). "PIN code" is India's postal code
// (Chromium's kZipCodeRe has `pin.?code`): the field of every Indian address form, not a PIN.
const CREDENTIAL_WORDS: ReadonlyArray<[CredentialWords, RegExp]> = [
  ['password', /pass.?(?:word|wd|phrase|code)|(?<![a-z])(?:pwd|psw)(?![a-z])|(?<![a-z])pin(?![a-z])(?![\s_.-]?code)|passwort|kennwort|contrase[ñn]a|mot.?de.?passe|senha|пароль/i],
  ['card', /(?:card|cc|credit).?(?:number|num(?![a-z])|no(?![a-z])|#)|ccnum|card.?digits|kartennummer|n[uú]mero.?de.?(?:la.?)?tarjeta|num[ée]ro.?de.?carte/i],
  ['card', /security.?(?:code|value|number)|card.?(?:code|pin|identification|verification)|verification.?(?:value|number)|(?<![a-z])(?:cvn|cvv|cvc|csc|cvd|ccv)(?![a-z])|c-v-v|c[oó]digo.?de.?segur(?:idad|an[cç]a)|sicherheitscode|kartenpr[uü]fnummer|pr[uü]fnummer|cryptogramme|codice.?di.?sicurezza/i],
  ['one-time-code', /one.?time|(?<![a-z])(?:otp|otc|totp|2fa|mfa)(?![a-z])|sms.?(?:code|token|pin)|code.?we.?(?:texted|sent|emailed)|(?:verification|verify|auth(?:entication|enticator)?|login|sign.?in|access|recovery|backup|two.?factor).?codes?/i],
];

/**
 * Which credential a field's own words name, or null: its `name`, `id`, `placeholder` and accessible
 * name (the caller joins them). For fields the page gave no `autocomplete` token, in the manner of
 * Chromium's autofill and password-manager field heuristics (components/autofill/core/common/
 * autofill_regex_constants.h `kCardCvcRe`, components/password_manager/core/common/
 * password_manager_constants.h `kOneTimePwdRe`; our own, narrower patterns):
 *  - `password`: a password the person showed with a "show password" toggle (the field is then
 *    `type=text`), a PIN or a passcode;
 *  - `card`: a card number (also one of four fields of one), a security code (CVC);
 *  - `one-time-code`: a texted or one-time verification code, an authenticator app's code, a
 *    recovery or backup code (each signs in once, as a password does).
 * Not: "promo code", "postal code", "PIN code" (India's), "passport number", "pinned". A page can always word a field so
 * that no pattern matches: `autocomplete` tokens and `data-echo-private` stay the page's way to say it.
 */
export function credentialWords(words: string): CredentialWords | null {
  const split = words.replace(/(\p{Ll})(\p{Lu})/gu, '$1 $2').replace(/(\p{Lu})(\p{Lu}\p{Ll})/gu, '$1 $2');
  for (const [kind, re] of CREDENTIAL_WORDS) if (re.test(split)) return kind;
  return null;
}

// ---- refs -------------------------------------------------------------------------

/**
 * A ref: the document's tag (lower-case letters) then the element's number in
 * that document (`a12`, `c3`, `ab105`). The service worker hands each document
 * a tag from one counter that never goes back (bijective base 26 of 1, 2, …),
 * and each document numbers its elements from a counter that never resets, so
 * a ref names one element of one document and is never reused.
 */
export const REF_PATTERN = /^([a-z]{1,6})([1-9][0-9]{0,8})$/;

/** The tag of document number `n` (1 → `a`, 26 → `z`, 27 → `aa`). @throws RangeError for n < 1 or not an integer. */
export function tagOf(n: number): string {
  if (!Number.isSafeInteger(n) || n < 1) throw new RangeError(`a document tag number must be a positive integer, got ${n}`);
  let s = '';
  while (n > 0) {
    n -= 1;
    s = String.fromCharCode(97 + (n % 26)) + s;
    n = Math.floor(n / 26);
  }
  return s;
}

/** The number of a tag (inverse of tagOf); 0 when `tag` is not lower-case letters. */
export function tagNumber(tag: string): number {
  if (!/^[a-z]{1,6}$/.test(tag)) return 0;
  let n = 0;
  for (const c of tag) n = n * 26 + (c.charCodeAt(0) - 96);
  return n;
}

/** A ref split into its document tag and element number, or null when it is not a ref. */
export function parseRef(ref: string): { tag: string; id: number } | null {
  const m = typeof ref === 'string' ? REF_PATTERN.exec(ref) : null;
  return m ? { tag: m[1] as string, id: Number(m[2]) } : null;
}

// ---- lines ------------------------------------------------------------------------

/** A JSON string literal of page text (quotes, backslashes and controls escaped; `<`/`>` too, so no tag survives). */
export function quote(s: string): string {
  return JSON.stringify(s).replace(/</g, '\\u003c').replace(/>/g, '\\u003e');
}

/** What one element line says (see the header for the format). */
export interface NodeLine {
  role: string;
  /** The input type, for inputs whose type changes what a value means (`date`, `email`, `password`, …). */
  type?: string;
  name?: string;
  value?: string;
  states?: string[];
  ref?: string;
}

/**
 * A role as a line may print it. An explicit role is the page's own token
 * (`role="…"`): kept when it is a plain word (ARIA roles, DPUB's `doc-*`, a
 * page's `my.widget`), otherwise its other characters are dropped, so it can
 * never open a text line (`"`), a marker (`[`), a ref (`#`) or a value (`=`);
 * `generic` when nothing is left. At most 48 characters.
 */
export function safeRole(role: string): string {
  const kept = role.toLowerCase().replace(/[^a-z0-9_.-]/g, '').slice(0, 48);
  return /^[a-z]/.test(kept) ? kept : 'generic';
}

/** One element line, without indentation. The role is printed through `safeRole`. */
export function formatLine(n: NodeLine): string {
  let s = safeRole(n.role) + (n.type ? `:${n.type}` : '');
  if (n.name) s += ` ${quote(n.name)}`;
  if (n.value !== undefined && n.value !== '') s += ` =${quote(n.value)}`;
  if (n.states && n.states.length) s += ` [${n.states.join(' ')}]`;
  if (n.ref) s += ` #${n.ref}`;
  return s;
}

/** The ref at the end of an element line, if any (a text line ends with `"` and never matches). */
export function lineRef(line: string): string | null {
  const m = / #([a-z]{1,6}[1-9][0-9]{0,8})$/.exec(line);
  return m ? (m[1] as string) : null;
}

// ---- assembly ---------------------------------------------------------------------

/**
 * The place of a child frame's content in its parent's snapshot. `frameKey`:
 * the child document's key, read by the parent's module from the child's
 * isolated world (same-origin frames only; null when unreadable, i.e.
 * cross-origin, or not injected); `srcOrigin`: the origin of the iframe's
 * `src` as the parent's markup says it (a hint to tell cross-origin frames
 * apart, never shown); `depth`: the indentation of the frame's lines.
 */
export interface FramePart {
  frameKey: string | null;
  srcOrigin: string | null;
  depth: number;
}

/** A piece of one frame's snapshot: text lines, or the place of a child frame's content. */
export type SnapshotPart = { text: string } | FramePart;

/** What a frame placeholder becomes: that frame's parts (read; `frameId` is the frame they come from), or one line saying why not. */
export type FrameContent = { frameId: number; parts: SnapshotPart[] } | { line: string };

/** The line under an iframe whose document was not read (not answered, past the frame limit, about:blank). */
export const NOT_READ_LINE = 'not-read';

/** The one line under a cross-origin iframe: its origin only (issue 10 item 2). */
export function crossOriginLine(origin: string): string {
  return `cross-origin ${quote(origin)}`;
}

/** The assembled snapshot text. */
export interface AssembledSnapshot {
  text: string;
  truncated: boolean;
  /** UTF-8 bytes of `text`. */
  bytes: number;
}

/**
 * The line that ends a cut snapshot. It starts with `[`, which neither a role
 * line nor a text line does, so page text cannot forge it.
 */
export function truncationMarker(maxBytes: number, openRefs: string[]): string {
  const zoom = openRefs.length ? ` zoom into ${openRefs.slice(0, 8).join(', ')} (innermost first, open where the cut fell) with page_snapshot {ref}` : ' zoom into a ref above with page_snapshot {ref}';
  return `[truncated: the snapshot holds more than ${maxBytes} bytes;${zoom}, or ask for a larger maxBytes]`;
}

/** Prefix every line of `text` with `depth` spaces. */
function indent(text: string, depth: number): string {
  if (depth <= 0 || text === '') return text;
  const pad = ' '.repeat(depth);
  return text
    .split('\n')
    .map((l) => (l === '' ? l : pad + l))
    .join('\n');
}

/**
 * Put the frames' contents in place of their placeholders (recursively, each
 * frame at most once: a cycle or a repeat becomes NOT_READ_LINE) and cut the
 * result to `maxBytes` UTF-8 bytes at a line boundary, ending with
 * truncationMarker when anything was left out.
 * @param root the frame the snapshot starts in, and its parts.
 * @param contentOf what a placeholder inside frame `inFrame` becomes (undefined: not read).
 * @param alreadyTruncated a frame's module already stopped early.
 */
export function assembleSnapshot(
  root: { frameId: number; parts: SnapshotPart[] },
  contentOf: (p: FramePart, inFrame: number) => FrameContent | undefined,
  maxBytes: number,
  alreadyTruncated = false,
): AssembledSnapshot {
  const out: string[] = [];
  const used = new Set<number>([root.frameId]);
  let size = 0;
  // Stop building well past the budget: the cut below needs only the prefix.
  const enough = () => size > maxBytes * 2 + 1024;
  const line = (t: string) => {
    out.push(t);
    size += t.length + 1;
  };
  const emit = (parts: SnapshotPart[], frameId: number, depth: number): void => {
    for (const p of parts) {
      if (enough()) return;
      if ('text' in p) {
        if (p.text !== '') line(indent(p.text, depth));
        continue;
      }
      const c = contentOf(p, frameId);
      if (c && 'parts' in c && !used.has(c.frameId)) {
        used.add(c.frameId);
        emit(c.parts, c.frameId, depth + p.depth);
      } else line(indent(c && 'line' in c ? c.line : NOT_READ_LINE, depth + p.depth));
    }
  };
  emit(root.parts, root.frameId, 0);
  const whole = out.join('\n');
  const wholeBytes = utf8Length(whole);
  if (!alreadyTruncated && !enough() && wholeBytes <= maxBytes) return { text: whole, truncated: false, bytes: wholeBytes };
  return cutAtLine(whole, maxBytes);
}

/** Cut `text` to `maxBytes` (marker included) at the last whole line, naming the refs open at the cut. */
export function cutAtLine(text: string, maxBytes: number): AssembledSnapshot {
  // The marker's room first (its refs are at most 8 × 16 bytes).
  const room = Math.max(0, maxBytes - utf8Length(truncationMarker(maxBytes, [])) - 8 * 16 - 1);
  let head = truncateUtf8(text, room).text;
  const nl = head.lastIndexOf('\n');
  // A cut inside a line drops that line (never half a name or value).
  if (head.length < text.length && text[head.length] !== '\n') head = nl >= 0 ? head.slice(0, nl) : '';
  const marker = truncationMarker(maxBytes, openRefsAt(head));
  const t = head ? `${head}\n${marker}` : marker;
  return { text: t, truncated: true, bytes: utf8Length(t) };
}

/** The refs of the last line of `head` and of its ancestors (by indentation), innermost first: the containers the cut may have fallen in. */
export function openRefsAt(head: string): string[] {
  const lines = head.split('\n');
  const refs: string[] = [];
  let depth = Infinity;
  for (let i = lines.length - 1; i >= 0 && depth > 0; i--) {
    const l = lines[i] as string;
    const d = l.length - l.trimStart().length;
    if (d >= depth) continue;
    depth = d;
    // The last line too: it may be a container whose children fell past the cut.
    const r = lineRef(l);
    if (r) refs.push(r);
  }
  return refs;
}
