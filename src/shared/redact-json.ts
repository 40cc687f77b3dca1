/**
 * The structural half of redaction (src/shared/redact.ts): one forward pass
 * over JSON text with an explicit stack, no recursion and no parse tree, that
 * records edits (spans of the original text to replace) and applies them at
 * the end. So it works on a *prefix* of a JSON document (a result cut to the
 * byte cap), keeps the text it does not change byte for byte (formatting,
 * 16+ digit ids that JSON.parse would round), and costs O(n) time and O(n)
 * memory for the edits plus O(depth) for the stack, whatever the nesting.
 *
 * What to hide is decided by hooks (redact.ts supplies them); this file only
 * knows JSON (RFC 8259). Pure, no imports: it runs in Node, Electron and the extension.
 */

/** Decisions the scan asks for; every one is called with decoded JSON strings. */
export interface JsonRedactHooks {
  /** The rule name when `key` names a secret (its value is hidden whole, whatever its type but null and booleans), else null. */
  keyRule(key: string): string | null;
  /** A string value under `key` (null at the top level); returns its replacement, or null to keep it. */
  string(value: string, key: string | null): string | null;
  /** A number token under `key`, as written; returns a replacement string, or null to keep it. */
  number(raw: string, key: string | null): string | null;
  /** An object key; returns its replacement, or null to keep it. */
  key(key: string): string | null;
  /** Raw text the scan could not read as JSON (after a syntax error, or the tail of a string cut off at the end); returns it redacted. */
  text(raw: string): string;
  /** The marker for a rule: `[redacted:<rule>]`. */
  marker(rule: string): string;
}

/** Result of `redactJsonText`. */
export interface JsonScan {
  value: string;
  redacted: boolean;
  /** False when the text ended inside a value (a cut prefix) or was not JSON past some point: the rest was handled textually. */
  complete: boolean;
}

/** Names of the name/value pair fields in HAR-like header lists: `{name: "Cookie", value: "…"}`. */
const PAIR_NAME_FIELDS = new Set(['name', 'key', 'header']);

interface Frame {
  obj: boolean;
  /** The key this container sits under (arrays pass it to their elements). */
  key: string | null;
  /** Objects: the key whose value comes next. */
  member: string | null;
  /** Objects: redacted key texts already used here, to keep keys distinct. */
  used: Set<string> | null;
  /** Objects: a name/value pair whose name is sensitive (`{name: "Authorization", value: …}`). */
  pairRule: string | null;
  /** Objects: where the `value` member's value starts and ends, and the edit indexes around it. */
  value: { start: number; end: number; edits0: number; edits1: number } | null;
}

interface Edit {
  start: number;
  end: number;
  text: string;
}

const WS = /[ \t\n\r]*/y;
const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const LITERAL = /true|false|null/y;

/** Index just past the closing quote of the string starting at `i` (a `"`), or -1 when the text ends first. */
function stringEnd(s: string, i: number): number {
  let j = i + 1;
  for (;;) {
    const q = s.indexOf('"', j);
    if (q < 0) return -1;
    let bs = 0;
    for (let k = q - 1; k > i && s.charCodeAt(k) === 92; k--) bs++;
    if (bs % 2 === 0) return q + 1;
    j = q + 1;
  }
}

/** Index just past the value starting at `i` (brackets counted, strings skipped; not validated), or s.length when the text ends first. */
function valueEnd(s: string, i: number): number {
  const c = s[i];
  if (c === '"') {
    const e = stringEnd(s, i);
    return e < 0 ? s.length : e;
  }
  if (c !== '{' && c !== '[') {
    const m = /[^,\]}\s]*/y;
    m.lastIndex = i;
    m.exec(s);
    return m.lastIndex;
  }
  let depth = 0;
  for (let j = i; j < s.length; j++) {
    const d = s[j];
    if (d === '"') {
      const e = stringEnd(s, j);
      if (e < 0) return s.length;
      j = e - 1;
    } else if (d === '{' || d === '[') depth++;
    else if (d === '}' || d === ']') {
      depth--;
      if (depth === 0) return j + 1;
    }
  }
  return s.length;
}

/** The value of the JSON string token s[i, e), or null when its escapes are invalid. Tokens without a backslash are sliced, not parsed. */
function decodeAt(s: string, i: number, e: number): string | null {
  const raw = s.slice(i + 1, e - 1);
  return raw.includes('\\') ? decode(s.slice(i, e)) : raw;
}

function decode(token: string): string | null {
  try {
    const v: unknown = JSON.parse(token);
    return typeof v === 'string' ? v : null;
  } catch {
    return null;
  }
}

/**
 * Redact JSON text (or a prefix of it) in one pass.
 * - Values under sensitive keys (`hooks.keyRule`) are replaced whole by the
 *   marker as a JSON string, objects and arrays included; a value the text
 *   ends inside is hidden to the end (fail closed). So is the `value` of a
 *   name/value pair whose `name`/`key`/`header` is sensitive.
 * - Strings, numbers and keys go through their hooks (arrays pass their own key
 *   down, so `"commitIds": [...]` elements sit under `commitIds`).
 * - Containers nested `maxDepth` deep are hidden whole (`too-deep`).
 * - Where the text stops being JSON (a syntax error, trailing text) the edits
 *   so far are applied and the whole text goes through `hooks.text`; a string
 *   cut off by the end of the text has its raw tail go through `hooks.text`.
 * @returns null when `s` does not start (after white space) with `{` or `[`.
 */
export function redactJsonText(s: string, hooks: JsonRedactHooks, maxDepth: number): JsonScan | null {
  WS.lastIndex = 0;
  WS.exec(s);
  let i = WS.lastIndex;
  if (s[i] !== '{' && s[i] !== '[') return null;
  const edits: Edit[] = [];
  const stack: Frame[] = [];
  const hideSpan = (start: number, end: number, rule: string) => edits.push({ start, end, text: JSON.stringify(hooks.marker(rule)) });
  let complete = true;
  let broken = false;
  // After a scalar value completes in an object: a pair's `value` span is recorded.
  const valueDone = (end: number) => {
    const top = stack[stack.length - 1];
    if (top?.obj && top.member === 'value' && top.value && top.value.end < 0) {
      top.value.end = end;
      top.value.edits1 = edits.length;
    }
  };
  const closeObject = (f: Frame) => {
    if (f.pairRule && f.value) {
      const v = f.value;
      edits.splice(v.edits0, v.edits1 - v.edits0, { start: v.start, end: v.end, text: JSON.stringify(hooks.marker(f.pairRule)) });
    }
  };

  for (;;) {
    WS.lastIndex = i;
    WS.exec(s);
    i = WS.lastIndex;
    if (i >= s.length) {
      if (stack.length) complete = false;
      break;
    }
    const top = stack[stack.length - 1];
    const c = s[i];
    // Between members or elements: a separator, a close, or (objects) a key.
    if (top && (c === ',' || c === '}' || c === ']')) {
      if (c === ',') {
        i++;
        if (top.obj) top.member = null;
        continue;
      }
      if ((c === '}') !== top.obj) {
        broken = true;
        break;
      }
      stack.pop();
      if (top.obj) closeObject(top);
      i++;
      const parent = stack[stack.length - 1];
      valueDone(i);
      if (!parent) {
        WS.lastIndex = i;
        WS.exec(s);
        if (WS.lastIndex < s.length) broken = true; // trailing text after the document
        break;
      }
      continue;
    }
    if (top?.obj && top.member === null) {
      if (c !== '"') {
        broken = true;
        break;
      }
      const e = stringEnd(s, i);
      if (e < 0) {
        complete = false;
        break;
      }
      const k = decodeAt(s, i, e);
      if (k === null) {
        broken = true;
        break;
      }
      WS.lastIndex = e;
      WS.exec(s);
      if (s[WS.lastIndex] !== ':') {
        if (WS.lastIndex >= s.length) complete = false;
        else broken = true;
        break;
      }
      const rk = hooks.key(k);
      if (rk !== null) {
        top.used ??= new Set();
        let nk = rk;
        for (let n = 2; top.used.has(nk); n++) nk = `${rk}#${n}`;
        top.used.add(nk);
        edits.push({ start: i, end: e, text: JSON.stringify(nk) });
      }
      top.member = k;
      i = WS.lastIndex + 1;
      continue;
    }
    // A value.
    const key = top ? (top.obj ? top.member : top.key) : null;
    const rule = top?.obj && key !== null ? hooks.keyRule(key) : null;
    if (top?.obj && top.member === 'value') top.value = { start: i, end: -1, edits0: edits.length, edits1: -1 };
    if (rule !== null) {
      LITERAL.lastIndex = i;
      if (LITERAL.exec(s)) {
        i = LITERAL.lastIndex; // null and booleans carry no secret
      } else {
        const end = valueEnd(s, i);
        if (end >= s.length && (s[i] === '{' || s[i] === '[' || s[i] === '"')) complete = false;
        hideSpan(i, end, rule);
        i = end;
      }
      valueDone(i);
      if (!complete) break;
      continue;
    }
    if (c === '{' || c === '[') {
      if (stack.length >= maxDepth) {
        const end = valueEnd(s, i);
        if (end >= s.length) complete = false;
        hideSpan(i, end, 'too-deep');
        i = end;
        valueDone(i);
        if (!complete) break;
        continue;
      }
      stack.push({ obj: c === '{', key, member: null, used: null, pairRule: null, value: null });
      i++; // its end is recorded on the parent when it closes
      continue;
    }
    if (c === '"') {
      const e = stringEnd(s, i);
      if (e < 0) {
        // Cut inside a string: its raw tail is handled textually.
        const raw = s.slice(i + 1);
        const t = hooks.text(raw);
        if (t !== raw) edits.push({ start: i + 1, end: s.length, text: t });
        complete = false;
        break;
      }
      const v = decodeAt(s, i, e);
      if (v === null) {
        broken = true;
        break;
      }
      const r = hooks.string(v, key);
      if (r !== null) edits.push({ start: i, end: e, text: JSON.stringify(r) });
      if (top?.obj && key !== null && PAIR_NAME_FIELDS.has(key)) top.pairRule ??= hooks.keyRule(v);
      i = e;
    } else {
      NUMBER.lastIndex = i;
      LITERAL.lastIndex = i;
      const m = NUMBER.exec(s) ?? LITERAL.exec(s);
      if (!m) {
        broken = true;
        break;
      }
      if (m[0] !== 'true' && m[0] !== 'false' && m[0] !== 'null') {
        const r = hooks.number(m[0], key);
        if (r !== null) edits.push({ start: i, end: i + m[0].length, text: JSON.stringify(r) });
      }
      i += m[0].length;
    }
    valueDone(i);
  }
  // A container still open at a cut: close the pair bookkeeping of objects that were inside their `value`.
  if (!complete) {
    for (const f of stack) {
      if (f.obj && f.pairRule && f.member === 'value' && f.value) {
        edits.splice(f.value.edits0, edits.length - f.value.edits0, { start: f.value.start, end: s.length, text: JSON.stringify(hooks.marker(f.pairRule)) });
        break;
      }
    }
  }
  const out = apply(s, edits);
  if (broken) {
    const t = hooks.text(out);
    return { value: t, redacted: edits.length > 0 || t !== out, complete: false };
  }
  return { value: out, redacted: edits.length > 0, complete };
}

function apply(s: string, edits: readonly Edit[]): string {
  if (edits.length === 0) return s;
  const parts: string[] = [];
  let at = 0;
  for (const e of edits) {
    if (e.start < at) continue; // inside a span already replaced (defensive)
    parts.push(s.slice(at, e.start), e.text);
    at = e.end;
  }
  parts.push(s.slice(at));
  return parts.join('');
}
