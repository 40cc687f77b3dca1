/**
 * Showing untrusted text (page tool titles, descriptions, schemas; agent
 * arguments) as plain text: React text nodes only, never markup. Invisible
 * characters that could hide or reorder what the person reads (bidi overrides,
 * zero-width characters, C0/C1 controls other than newline and tab) are made
 * visible as `⟨U+XXXX⟩` instead of being passed through or silently removed.
 */

const INVISIBLE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u00ad\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b-\u200f\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb]/g;

/** Replace invisible and direction-changing characters with a visible `⟨U+XXXX⟩` marker. */
export function revealInvisible(text: string): string {
  return text.replace(INVISIBLE, (c) => `⟨U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}⟩`);
}

/** Pretty JSON of an untrusted value, with invisible characters revealed; never throws. */
export function prettyJson(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    text = '(not representable as JSON)';
  }
  return revealInvisible(text);
}

/** `m:ss` (or `h:mm:ss`) of a duration in ms, floored at 0. */
export function formatDuration(ms: number): string {
  const total = Math.max(0, Math.ceil(ms / 1000));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = String(total % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${s}` : `${m}:${s}`;
}

/** Local date and time of ms since the epoch, e.g. `2026-04-02 14:05:09`. */
export function formatTime(ms: number): string {
  const d = new Date(ms);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

/**
 * Time left before an approval request expires (ms), never more than the
 * request's own timeout: the UI clock ticks once a second, so a tick taken just
 * before the request arrived would otherwise show "2:01 left" for a 2 min timeout.
 */
export function timeLeftMs(a: { createdAt: number; expiresAt: number }, now: number): number {
  return Math.min(a.expiresAt - a.createdAt, a.expiresAt - now);
}
