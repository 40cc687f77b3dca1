/**
 * The developer console's line editor (issue 11 item 4): what the person types
 * into the xterm terminal, turned into a JavaScript source to run, with
 * history and multi-line input. Pure: it receives xterm's `onData` strings and
 * answers with effects (bytes to write to the terminal, a source to submit, an
 * interrupt), so it is unit-tested without a terminal.
 *
 * Keys (the byte sequences xterm sends, xterm.js `onData`, VT100/xterm
 * "PC-Style Function Keys"):
 * - printable text: inserted at the cursor; Backspace (DEL `\x7f`, or `\b`) and
 *   Delete (`\x1b[3~`) erase; ←/→ move, Home/End (`\x1b[H`, `\x1bOH`, Ctrl+A;
 *   `\x1b[F`, `\x1bOF`, Ctrl+E) go to the start/end of the current line;
 * - ↑/↓: within a multi-line input, move between its lines; on its first/last
 *   line, walk the history (the unsent input is kept as a draft);
 * - Enter (`\r`): submits when the source is complete JavaScript
 *   (`isCompleteSource`), else starts a continuation line, as Node's REPL does;
 *   Shift+Enter (`newline()`, fed by the terminal's key handler) always starts a
 *   new line;
 * - a bracketed paste (`\x1b[200~` … `\x1b[201~`, xterm's DECSET 2004) is
 *   inserted as text, its line breaks kept, never submitted;
 * - Ctrl+C (`\x03`): `interrupt` (the terminal stops waiting for a run, or
 *   drops the current input); Ctrl+L (`\x0c`): clear the screen; Ctrl+U: erase
 *   the line before the cursor.
 *
 * Rendering redraws the whole input after each change: the cursor goes back to
 * the first row of the input (its row is remembered), the rest of the screen is
 * cleared (`ESC [ J`) and the prompts and lines are written again, wrapping at
 * `cols`. Widths count UTF-16 code units as one column each; wide (CJK, emoji)
 * characters may misplace the cursor, never the text.
 */
import { isCompleteSource } from './complete-source';

/** What the terminal must do after an input. */
export type EditorEffect =
  | { kind: 'write'; data: string }
  /** The person submitted a whole source (its lines joined by "\n"). */
  | { kind: 'submit'; source: string }
  /** Ctrl+C: stop waiting for the running line, if one runs (the input was dropped). */
  | { kind: 'interrupt' };

/** A prompt: what is written, and its width in columns (it may hold colour escapes). */
export interface Prompt {
  text: string;
  width: number;
}

/** The most lines of history kept (oldest forgotten first). Kept in memory only: code may hold secrets. */
export const HISTORY_LIMIT = 500;

const PASTE_START = '\x1b[200~';
const PASTE_END = '\x1b[201~';

/** The keys this editor knows, by the sequence xterm sends. */
const KEYS: Record<string, (e: LineEditor) => void> = {
  '\x1b[D': (e) => e.moveBy(-1),
  '\x1b[C': (e) => e.moveBy(1),
  '\x1b[A': (e) => e.up(),
  '\x1b[B': (e) => e.down(),
  '\x1b[H': (e) => e.home(),
  '\x1bOH': (e) => e.home(),
  '\x01': (e) => e.home(),
  '\x1b[F': (e) => e.end(),
  '\x1bOF': (e) => e.end(),
  '\x05': (e) => e.end(),
  '\x7f': (e) => e.backspace(),
  '\b': (e) => e.backspace(),
  '\x1b[3~': (e) => e.deleteForward(),
  '\x15': (e) => e.eraseToStart(),
};

/**
 * One terminal's input line(s) and history. Feed it `input(data)` and apply the
 * returned effects in order.
 */
export class LineEditor {
  private buffer = '';
  private cursor = 0;
  private readonly history: string[] = [];
  /** Index into `history` while walking it; null when editing a fresh input. */
  private historyAt: number | null = null;
  private draft = '';
  /** The cursor's row, counted from the input's first row, as last rendered. */
  private renderedRow = 0;
  /** Whether the input is on screen (false while a line runs, after submit). */
  private shown = false;
  private pasting = false;
  private out: EditorEffect[] = [];

  /**
   * @param prompt the first line's prompt (re-read at each render: it may show the bound tab).
   * @param cols the terminal's width in columns (re-read at each render: the fit addon changes it).
   */
  constructor(
    private readonly prompt: () => Prompt,
    private readonly cols: () => number,
    private readonly continuation: Prompt = { text: '… ', width: 2 },
  ) {}

  /** The current (unsubmitted) input. */
  get text(): string {
    return this.buffer;
  }

  /** The history, oldest first. */
  get lines(): readonly string[] {
    return this.history;
  }

  /** Show the prompt and the input (after a run ended, or at start). */
  show(): EditorEffect[] {
    this.showInput();
    return this.flush();
  }

  /**
   * Write `text` above the input: the input is erased, the text written (its
   * line breaks made CRLF), and the input drawn again below it. While the input
   * is hidden (a line runs), the text is simply written.
   */
  print(text: string): EditorEffect[] {
    const data = text.replace(/\r?\n/g, '\r\n');
    if (!this.shown) {
      this.out.push({ kind: 'write', data });
      return this.flush();
    }
    this.erase();
    this.out.push({ kind: 'write', data: data.endsWith('\r\n') ? data : `${data}\r\n` });
    this.renderedRow = 0;
    this.render(false);
    return this.flush();
  }

  /** Shift+Enter: a new line in the input, whatever the source so far. */
  newline(): EditorEffect[] {
    if (this.shown) {
      this.insert('\n');
      this.render(true);
    }
    return this.flush();
  }

  /** Feed one `onData` string from xterm. */
  input(data: string): EditorEffect[] {
    let rest = data;
    while (rest.length > 0) {
      if (this.pasting) {
        const end = rest.indexOf(PASTE_END);
        const chunk = end === -1 ? rest : rest.slice(0, end);
        if (this.shown) this.insert(chunk.replace(/\r\n?/g, '\n').replace(/[\x00-\x08\x0b-\x1f\x7f]/g, ''));
        if (end === -1) break;
        this.pasting = false;
        rest = rest.slice(end + PASTE_END.length);
        continue;
      }
      if (rest.startsWith(PASTE_START)) {
        this.pasting = true;
        rest = rest.slice(PASTE_START.length);
        continue;
      }
      if (rest[0] === '\x03') {
        this.interrupt();
        rest = rest.slice(1);
        continue;
      }
      if (!this.shown) break; // a line runs: only Ctrl+C counts (typing ahead is dropped)
      if (rest[0] === '\x0c') {
        this.out.push({ kind: 'write', data: '\x1b[2J\x1b[3J\x1b[H' });
        this.renderedRow = 0;
        rest = rest.slice(1);
        continue;
      }
      if (rest[0] === '\r' || rest[0] === '\n') {
        this.enter();
        rest = rest.slice(rest.startsWith('\r\n') ? 2 : 1);
        continue;
      }
      const key = Object.keys(KEYS).find((k) => rest.startsWith(k));
      if (key) {
        KEYS[key]!(this);
        rest = rest.slice(key.length);
        continue;
      }
      if (rest[0] === '\x1b') {
        // An escape sequence this editor does not know (F-keys, Alt+…): dropped whole.
        const m = /^\x1b(\[[0-9;?]*[ -/]*[@-~]|O.|.)?/.exec(rest);
        rest = rest.slice(m ? m[0].length : 1);
        continue;
      }
      const m = /^[^\x00-\x1f\x7f]+/.exec(rest);
      if (m) {
        this.insert(m[0]);
        rest = rest.slice(m[0].length);
        continue;
      }
      rest = rest.slice(1); // another control character: ignored
    }
    if (this.shown) this.render(true);
    return this.flush();
  }

  // --- keys -------------------------------------------------------------

  /** @internal (KEYS) */
  moveBy(d: number): void {
    this.cursor = Math.max(0, Math.min(this.buffer.length, this.cursor + d));
  }

  /** @internal (KEYS) */
  home(): void {
    this.cursor = this.buffer.lastIndexOf('\n', this.cursor - 1) + 1;
  }

  /** @internal (KEYS) */
  end(): void {
    const nl = this.buffer.indexOf('\n', this.cursor);
    this.cursor = nl === -1 ? this.buffer.length : nl;
  }

  /** @internal (KEYS) */
  backspace(): void {
    if (this.cursor === 0) return;
    this.buffer = this.buffer.slice(0, this.cursor - 1) + this.buffer.slice(this.cursor);
    this.cursor -= 1;
  }

  /** @internal (KEYS) */
  deleteForward(): void {
    this.buffer = this.buffer.slice(0, this.cursor) + this.buffer.slice(this.cursor + 1);
  }

  /** @internal (KEYS) */
  eraseToStart(): void {
    const start = this.buffer.lastIndexOf('\n', this.cursor - 1) + 1;
    this.buffer = this.buffer.slice(0, start) + this.buffer.slice(this.cursor);
    this.cursor = start;
  }

  /** @internal (KEYS) ↑: the line above in this input, else the previous history entry. */
  up(): void {
    const start = this.buffer.lastIndexOf('\n', this.cursor - 1) + 1;
    if (start > 0) {
      const prevStart = this.buffer.lastIndexOf('\n', start - 2) + 1;
      this.cursor = Math.min(prevStart + (this.cursor - start), start - 1);
      return;
    }
    if (this.history.length === 0 || this.historyAt === 0) return;
    if (this.historyAt === null) {
      this.draft = this.buffer;
      this.historyAt = this.history.length;
    }
    this.historyAt -= 1;
    this.recall(this.history[this.historyAt]!);
  }

  /** @internal (KEYS) ↓: the line below in this input, else the next history entry (then the draft). */
  down(): void {
    const nl = this.buffer.indexOf('\n', this.cursor);
    if (nl !== -1) {
      const start = this.buffer.lastIndexOf('\n', this.cursor - 1) + 1;
      const nextEnd = this.buffer.indexOf('\n', nl + 1);
      this.cursor = Math.min(nl + 1 + (this.cursor - start), nextEnd === -1 ? this.buffer.length : nextEnd);
      return;
    }
    if (this.historyAt === null) return;
    this.historyAt += 1;
    if (this.historyAt >= this.history.length) {
      this.historyAt = null;
      this.recall(this.draft);
    } else this.recall(this.history[this.historyAt]!);
  }

  // --- internals --------------------------------------------------------

  private recall(text: string): void {
    this.buffer = text;
    this.cursor = text.length;
  }

  private insert(text: string): void {
    this.buffer = this.buffer.slice(0, this.cursor) + text + this.buffer.slice(this.cursor);
    this.cursor += text.length;
  }

  private enter(): void {
    const source = this.buffer;
    if (source.trim() !== '' && !isCompleteSource(source)) {
      this.cursor = this.buffer.length;
      this.insert('\n');
      return;
    }
    // Leave the input on screen as it was typed, cursor after it.
    this.cursor = this.buffer.length;
    this.render(true);
    this.out.push({ kind: 'write', data: '\r\n' });
    this.shown = false;
    this.renderedRow = 0;
    this.historyAt = null;
    this.draft = '';
    this.buffer = '';
    this.cursor = 0;
    if (source.trim() === '') {
      this.showInput();
      return;
    }
    if (this.history[this.history.length - 1] !== source) this.history.push(source);
    if (this.history.length > HISTORY_LIMIT) this.history.splice(0, this.history.length - HISTORY_LIMIT);
    this.out.push({ kind: 'submit', source });
  }

  private interrupt(): void {
    if (this.shown) {
      // Drop the input, as a shell does, and start a fresh prompt below it.
      this.cursor = this.buffer.length;
      this.render(true);
      this.out.push({ kind: 'write', data: '^C\r\n' });
      this.buffer = '';
      this.cursor = 0;
      this.historyAt = null;
      this.renderedRow = 0;
    }
    this.out.push({ kind: 'interrupt' });
  }

  private showInput(): void {
    this.shown = true;
    this.renderedRow = 0;
    this.render(false);
  }

  /** Move to the input's first row and clear from there to the end of the screen. */
  private erase(): void {
    const up = this.renderedRow > 0 ? `\x1b[${this.renderedRow}A` : '';
    this.out.push({ kind: 'write', data: `${up}\r\x1b[J` });
    this.renderedRow = 0;
  }

  private render(redraw: boolean): void {
    if (redraw) this.erase();
    const cols = Math.max(1, this.cols());
    const first = this.prompt();
    const lines = this.buffer.split('\n');
    let data = '';
    let row = 0; // the row the next line starts on
    let cursorRow = 0;
    let cursorCol = 0;
    let offset = 0; // index in buffer of the current line's start
    let endRow = 0;
    let endCol = 0;
    lines.forEach((line, i) => {
      const p = i === 0 ? first : this.continuation;
      data += (i > 0 ? '\r\n' : '') + p.text + line;
      const width = p.width + line.length;
      if (this.cursor >= offset && this.cursor <= offset + line.length) {
        const at = p.width + (this.cursor - offset);
        cursorRow = row + Math.floor(at / cols);
        cursorCol = at % cols;
      }
      endRow = row + Math.floor(width / cols);
      endCol = width % cols;
      row += Math.max(1, Math.ceil(width / cols));
      offset += line.length + 1;
    });
    // A last line that exactly fills its row leaves xterm's cursor in the pending-wrap state:
    // write a space, step back onto it and erase it, so the cursor really is at the start of the next row.
    if (endCol === 0 && endRow > 0 && endRow === row) data += ' \b\x1b[K';
    if (endRow > cursorRow) data += `\x1b[${endRow - cursorRow}A`;
    data += '\r';
    if (cursorCol > 0) data += `\x1b[${cursorCol}C`;
    this.out.push({ kind: 'write', data });
    this.renderedRow = cursorRow;
  }

  private flush(): EditorEffect[] {
    const out = this.out;
    this.out = [];
    // Adjacent writes are joined: one terminal write per input.
    const joined: EditorEffect[] = [];
    for (const e of out) {
      const last = joined[joined.length - 1];
      if (e.kind === 'write' && last?.kind === 'write') joined[joined.length - 1] = { kind: 'write', data: last.data + e.data };
      else joined.push(e);
    }
    return joined;
  }
}
