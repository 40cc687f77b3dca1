// The developer console's line editor (src/renderer/terminal/line-editor.ts), driven by the byte
// sequences xterm sends, with a real headless xterm as its screen: what the person sees is read
// back from the terminal's buffer, so a wrong cursor movement shows as wrong text.
import { Terminal } from '@xterm/headless';
import { describe, expect, it } from 'vitest';
import { isCompleteSource } from '../../src/renderer/terminal/complete-source';
import { HISTORY_LIMIT, LineEditor, type EditorEffect } from '../../src/renderer/terminal/line-editor';

const UP = '\x1b[A';
const DOWN = '\x1b[B';
const LEFT = '\x1b[D';
const HOME = '\x1b[H';
const END = '\x1b[F';
const paste = (s: string) => `\x1b[200~${s}\x1b[201~`;

function setup(cols = 40) {
  const term = new Terminal({ cols, rows: 20, allowProposedApi: true });
  const editor = new LineEditor(() => ({ text: '\x1b[32m>\x1b[0m ', width: 2 }), () => term.cols);
  const submitted: string[] = [];
  let interrupts = 0;
  const apply = async (effects: EditorEffect[]) => {
    for (const e of effects) {
      if (e.kind === 'write') await new Promise<void>((r) => term.write(e.data, r));
      else if (e.kind === 'submit') submitted.push(e.source);
      else interrupts += 1;
    }
  };
  const type = (data: string) => apply(editor.input(data));
  const screen = () => {
    const b = term.buffer.active;
    const out: string[] = [];
    for (let i = 0; i < b.length; i++) out.push(b.getLine(i)!.translateToString(true));
    while (out.length && out[out.length - 1] === '') out.pop();
    return out;
  };
  const cursor = () => ({ row: term.buffer.active.cursorY + term.buffer.active.viewportY, col: term.buffer.active.cursorX });
  return { term, editor, apply, type, screen, cursor, submitted, interrupts: () => interrupts };
}

describe('isCompleteSource (Node REPL rule)', () => {
  it.each([
    ['1 + 1', true],
    ['document.title', true],
    ['await fetch("/")', true],
    ['return 5', true],
    ['function f() {', false],
    ['[1, 2,', false],
    ['foo(', false],
    ['let x =  \n', false],
    ['`a\n', false],
    ['/* note', false],
    ['}', true], // a syntax error not at the end: sent, for the page to report
    ['"abc', true],
    ['1 +* 2', true],
  ])('%j → %s', (src, complete) => {
    expect(isCompleteSource(src)).toBe(complete);
  });
});

describe('LineEditor', () => {
  it('echoes typing after the prompt and submits a complete line on Enter', async () => {
    const t = setup();
    await t.apply(t.editor.show());
    await t.type('document.title');
    expect(t.screen()).toEqual(['> document.title']);
    expect(t.cursor()).toEqual({ row: 0, col: 16 });
    await t.type('\r');
    expect(t.submitted).toEqual(['document.title']);
    // The line stays on screen; the input is hidden until the run ends.
    expect(t.screen()).toEqual(['> document.title']);
    expect(t.cursor()).toEqual({ row: 1, col: 0 });
    await t.type('ignored while running');
    expect(t.screen()).toEqual(['> document.title']);
  });

  it('edits in the middle of the line: left, backspace, insert, delete, home, end', async () => {
    const t = setup();
    await t.apply(t.editor.show());
    await t.type('abcdef');
    await t.type(LEFT + LEFT + '\x7f' + 'X');
    expect(t.screen()).toEqual(['> abcXef']);
    expect(t.cursor().col).toBe(6);
    await t.type(HOME + '\x1b[3~');
    expect(t.screen()).toEqual(['> bcXef']);
    expect(t.cursor().col).toBe(2);
    await t.type(END + '!');
    expect(t.screen()).toEqual(['> bcXef!']);
    expect(t.editor.text).toBe('bcXef!');
  });

  it('an incomplete source continues on a new line, and is submitted whole once complete', async () => {
    const t = setup();
    await t.apply(t.editor.show());
    await t.type('function f() {\r');
    expect(t.submitted).toEqual([]);
    await t.type('  return 42;\r');
    expect(t.submitted).toEqual([]);
    await t.type('}\r');
    expect(t.submitted).toEqual(['function f() {\n  return 42;\n}']);
    expect(t.screen()).toEqual(['> function f() {', '…   return 42;', '… }']);
  });

  it('Shift+Enter starts a new line even in a complete source; ↑ moves within the input', async () => {
    const t = setup();
    await t.apply(t.editor.show());
    await t.type('const a = 1;');
    await t.apply(t.editor.newline());
    await t.type('a + 1');
    expect(t.screen()).toEqual(['> const a = 1;', '… a + 1']);
    await t.type(UP);
    expect(t.cursor()).toEqual({ row: 0, col: 7 });
    await t.type(END + ' // one');
    expect(t.editor.text).toBe('const a = 1; // one\na + 1');
    await t.type('\r');
    expect(t.submitted).toEqual(['const a = 1; // one\na + 1']);
  });

  it('walks the history with ↑ and ↓ and keeps the unsent draft', async () => {
    const t = setup();
    await t.apply(t.editor.show());
    for (const line of ['1', '2', '3']) {
      await t.type(`${line}\r`);
      await t.apply(t.editor.print(`${line}`));
      await t.apply(t.editor.show());
    }
    await t.type('dra');
    await t.type(UP);
    expect(t.editor.text).toBe('3');
    await t.type(UP + UP + UP);
    expect(t.editor.text).toBe('1');
    await t.type(DOWN);
    expect(t.editor.text).toBe('2');
    await t.type(DOWN + DOWN);
    expect(t.editor.text).toBe('dra');
    expect(t.screen().at(-1)).toBe('> dra');
    expect(t.editor.lines).toEqual(['1', '2', '3']);
  });

  it('keeps at most HISTORY_LIMIT entries and does not repeat the same line twice in a row', async () => {
    const t = setup();
    t.editor.show();
    for (let i = 0; i < HISTORY_LIMIT + 10; i++) {
      t.editor.input(`${i}\r`);
      t.editor.input(`${i}\r`);
      t.editor.show();
    }
    expect(t.editor.lines.length).toBe(HISTORY_LIMIT);
    expect(t.editor.lines[0]).toBe('10');
  });

  it('a bracketed paste keeps its line breaks and is never submitted by them', async () => {
    const t = setup();
    await t.apply(t.editor.show());
    await t.type(paste('const x = 1;\r\nx * 2'));
    expect(t.submitted).toEqual([]);
    expect(t.screen()).toEqual(['> const x = 1;', '… x * 2']);
    await t.type('\r');
    expect(t.submitted).toEqual(['const x = 1;\nx * 2']);
  });

  it('Ctrl+C drops the input with ^C and reports an interrupt; while a line runs it only interrupts', async () => {
    const t = setup();
    await t.apply(t.editor.show());
    await t.type('oops');
    await t.type('\x03');
    expect(t.interrupts()).toBe(1);
    expect(t.editor.text).toBe('');
    expect(t.screen()).toEqual(['> oops^C', '> ']);
    await t.type('while(true){}\r');
    await t.type('\x03');
    expect(t.interrupts()).toBe(2);
    expect(t.submitted).toEqual(['while(true){}']);
  });

  it('prints output above the input being typed, then draws the input again', async () => {
    const t = setup();
    await t.apply(t.editor.show());
    await t.type('half typ');
    await t.apply(t.editor.print('[agent] page_run_script on tab 7\nresult: 3'));
    expect(t.screen()).toEqual(['[agent] page_run_script on tab 7', 'result: 3', '> half typ']);
    expect(t.cursor()).toEqual({ row: 2, col: 10 });
  });

  it('wraps a line longer than the terminal and redraws it without leftovers', async () => {
    const t = setup(10);
    await t.apply(t.editor.show());
    await t.type('abcdefghijklmnopqrstu'); // 2 + 21 = 23 columns: three rows
    expect(t.screen()).toEqual(['> abcdefgh', 'ijklmnopqr', 'stu']);
    expect(t.cursor()).toEqual({ row: 2, col: 3 });
    await t.type(HOME);
    expect(t.cursor()).toEqual({ row: 0, col: 2 });
    await t.type('\x7f'.repeat(0) + '\x1b[3~'.repeat(5));
    expect(t.screen()).toEqual(['> fghijklm', 'nopqrstu']);
    await t.type(END + 'vw'); // 2 + 18 = 20: exactly two rows, the cursor at the start of a third
    expect(t.screen()).toEqual(['> fghijklm', 'nopqrstuvw']);
    expect(t.cursor()).toEqual({ row: 2, col: 0 });
    await t.type('\x7f\x7f\x7f');
    expect(t.screen()).toEqual(['> fghijklm', 'nopqrst']);
  });

  it('drops unknown escape sequences and control characters instead of inserting them', async () => {
    const t = setup();
    await t.apply(t.editor.show());
    await t.type('a\x1bOP\x1b[15~\x07b\x1b[1;5Cc');
    expect(t.editor.text).toBe('abc');
  });
});
