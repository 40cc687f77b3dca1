/**
 * The developer console (issue 11 item 4): an xterm terminal, shown only while
 * developer mode is on, in which the person types JavaScript lines that run in
 * one shared tab through the raw-JavaScript faculty (src/renderer/terminal/session.ts
 * holds the behaviour; this component only hosts the terminal). The same
 * component serves Electron and the web host.
 *
 * - @xterm/xterm with its fit addon: the terminal fills its box and follows its
 *   size (a ResizeObserver calls `fit`).
 * - The key handler reports each Enter's `isTrusted` to the session before
 *   xterm turns it into data, so only the person's own Enter runs a line
 *   (rule 19; the core checks the trusted-input gate again); Shift+Enter adds a
 *   line.
 */
import { FitAddon } from '@xterm/addon-fit';
import { Terminal } from '@xterm/xterm';
import '@xterm/xterm/css/xterm.css';
import { useEffect, useRef } from 'react';
import type { ScriptRun } from '../../shared/raw-script';
import { DeveloperConsoleSession, type DeveloperConsoleBackend, type TerminalTab } from '../terminal/session';

export interface DeveloperConsoleProps {
  /** The shared tabs (the terminal binds to one of them). */
  tabs: readonly TerminalTab[];
  backend: DeveloperConsoleBackend;
  /** Subscribe to raw-JavaScript runs seen live; returns the unsubscribe. */
  subscribe(listener: (run: ScriptRun) => void): () => void;
}

/** The terminal; mounted while developer mode is on and the Developer console page is open. */
export function DeveloperConsole(p: DeveloperConsoleProps) {
  const box = useRef<HTMLDivElement | null>(null);
  const session = useRef<DeveloperConsoleSession | null>(null);
  const tabs = useRef(p.tabs);
  tabs.current = p.tabs;
  const { backend, subscribe } = p;

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const term = new Terminal({
      convertEol: false,
      cursorBlink: true,
      fontFamily: 'ui-monospace, "DejaVu Sans Mono", Menlo, Consolas, monospace',
      fontSize: 13,
      scrollback: 5000,
      screenReaderMode: true,
    });
    const fit = new FitAddon();
    term.loadAddon(fit);
    term.open(el);
    fit.fit();
    const s = new DeveloperConsoleSession((d) => term.write(d), () => term.cols, backend);
    session.current = s;
    term.attachCustomKeyEventHandler((ev) => {
      if (ev.type === 'keydown' && ev.key === 'Enter') {
        if (ev.shiftKey) {
          if (ev.isTrusted) s.newline();
          return false;
        }
        s.enterPressed(ev.isTrusted);
      }
      return true;
    });
    const data = term.onData((d) => s.data(d));
    s.start(tabs.current);
    term.focus();
    const resize = new ResizeObserver(() => fit.fit());
    resize.observe(el);
    const unsubscribe = subscribe((e) => s.scriptEvent(e));
    return () => {
      unsubscribe();
      resize.disconnect();
      data.dispose();
      session.current = null;
      term.dispose();
    };
  }, [backend, subscribe]);

  useEffect(() => {
    session.current?.tabsChanged(p.tabs);
  }, [p.tabs]);

  return (
    <section className="panel developer-console" aria-label="Developer console">
      <h2>Developer console</h2>
      <p className="hint">
        JavaScript you type here runs in the bound shared tab, in the page itself, as you. Each line is receipted with its SHA-256. What the page prints back is
        untrusted. Type <code>.help</code> for commands.
      </p>
      <div className="terminal-box" ref={box} data-testid="developer-console" />
    </section>
  );
}
