/**
 * Reading the snapshot's lines back (the format is src/shared/snapshot.ts
 * formatLine and docs/semantic-snapshot.md): a text line is one JSON string
 * literal; an element line is `role[:type][ "name"][ ="value"][ [states]][ #ref]`.
 * Used by the semantic reads (docs/semantic-reads.md) to match and extract
 * text over exactly the view the snapshot shows. Pure.
 */

/** One decoded line. */
export type DecodedLine =
  | { kind: 'text'; depth: number; text: string }
  | { kind: 'node'; depth: number; role: string; type?: string; name?: string; value?: string; states: string[]; ref?: string };

/** The JSON string literal starting at `s[i]` (`"`), and the index after it; null when malformed. */
export function jsonStringAt(s: string, i: number): { value: string; end: number } | null {
  if (s[i] !== '"') return null;
  let j = i + 1;
  while (j < s.length && s[j] !== '"') j += s[j] === '\\' ? 2 : 1;
  if (j >= s.length) return null;
  try {
    return { value: JSON.parse(s.slice(i, j + 1)) as string, end: j + 1 };
  } catch {
    return null;
  }
}

/** Decode one line of a frame's snapshot text; null for a line of neither shape (e.g. `not-read`, a marker). */
export function decodeLine(line: string): DecodedLine | null {
  const depth = line.length - line.trimStart().length;
  const s = line.slice(depth);
  if (s.startsWith('"')) {
    const t = jsonStringAt(s, 0);
    return t && t.end === s.length ? { kind: 'text', depth, text: t.value } : null;
  }
  // The role is a page's role token as written (no spaces; not starting with a quote or `[`, which are text and markers: `x_y`, `my.widget`), then `:type`.
  const m = /^[^\s"[]\S*/.exec(s);
  if (!m) return null;
  const head = m[0];
  const colon = head.indexOf(':', 1);
  const out: Extract<DecodedLine, { kind: 'node' }> = { kind: 'node', depth, role: colon > 0 ? head.slice(0, colon) : head, states: [] };
  if (colon > 0 && colon < head.length - 1) out.type = head.slice(colon + 1);
  let i = head.length;
  if (s.startsWith(' "', i)) {
    const n = jsonStringAt(s, i + 1);
    if (!n) return null;
    out.name = n.value;
    i = n.end;
  }
  if (s.startsWith(' ="', i)) {
    const v = jsonStringAt(s, i + 2);
    if (!v) return null;
    out.value = v.value;
    i = v.end;
  }
  const st = /^ \[([^\]]*)\]/.exec(s.slice(i));
  if (st) {
    out.states = (st[1] as string).split(' ').filter(Boolean);
    i += st[0].length;
  }
  const r = /^ #([a-z]{1,6}[1-9][0-9]{0,8})$/.exec(s.slice(i));
  if (r) out.ref = r[1];
  return out;
}

/**
 * The plain text of snapshot lines, one piece per line that says something:
 * a text line's text; an element line's `role name` and ` = value` when it has
 * a name or a value. Indentation, states and refs are dropped.
 */
export function plainPieces(text: string): string[] {
  const out: string[] = [];
  for (const line of text.split('\n')) {
    const d = line ? decodeLine(line) : null;
    if (!d) continue;
    if (d.kind === 'text') out.push(d.text);
    else if (d.name || d.value !== undefined) out.push(`${d.role}${d.name ? ` ${d.name}` : ''}${d.value !== undefined ? ` = ${d.value}` : ''}`);
  }
  return out;
}

/** Every string the view shows in snapshot lines: text lines, names and values, each its own piece (what text conditions match). */
export function viewStrings(text: string): string[] {
  const out: string[] = [];
  for (const line of text.split('\n')) {
    const d = line ? decodeLine(line) : null;
    if (!d) continue;
    if (d.kind === 'text') out.push(d.text);
    else {
      if (d.name) out.push(d.name);
      if (d.value !== undefined) out.push(d.value);
    }
  }
  return out;
}
