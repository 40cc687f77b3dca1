/**
 * The subject view of a raw-JavaScript run (faculty `raw-js`; issue 11 item 3;
 * docs/raw-javascript.md): the WHOLE code, monospaced and highlighted, never clipped (the block
 * grows and the dialog scrolls, so Approve arms only once the person has seen its end), with
 * invisible and bidi characters revealed as everywhere in the dialog (../../text.ts
 * revealInvisible); its SHA-256 (what the grant binds) and short fingerprint; the world; and a
 * plain warning.
 *
 * Highlighting is highlight.js (core + the javascript language only). Its HTML output is never
 * inserted as markup: it is parsed off-document (DOMParser, which runs nothing) and rebuilt as
 * React `<span className>` and text nodes, so only the classes of its tokens survive.
 */
import hljs from 'highlight.js/lib/core';
import javascript from 'highlight.js/lib/languages/javascript';
import { useMemo, type ReactNode } from 'react';
import type { RawScriptSubject } from '../../../shared/ipc';
import { hiddenCount, revealInvisible } from '../../text';
import { Field, HashField } from '../fields';

hljs.registerLanguage('javascript', javascript);

/** highlight.js's token tree as React nodes: its spans (class names only) and text, nothing else. */
function toReact(node: Node, key: string): ReactNode {
  if (node.nodeType === Node.TEXT_NODE) return node.textContent;
  if (node.nodeType !== Node.ELEMENT_NODE) return null;
  const el = node as Element;
  const children = [...el.childNodes].map((c, i) => toReact(c, `${key}.${i}`));
  const cls = (el.getAttribute('class') ?? '').split(/\s+/).filter((c) => /^hljs-[a-z_-]+$/.test(c)).join(' ');
  return el.tagName === 'SPAN' ? <span key={key} className={cls || undefined}>{children}</span> : <span key={key}>{children}</span>;
}

/**
 * The code highlighted as JavaScript, with invisible characters revealed first (so a marker such
 * as ⟨U+202E⟩ shows where the character is, and highlighting cannot hide it).
 */
export function HighlightedCode({ code, testId }: { code: string; testId: string }) {
  const nodes = useMemo(() => {
    const html = hljs.highlight(revealInvisible(code), { language: 'javascript', ignoreIllegals: true }).value;
    const body = new DOMParser().parseFromString(`<body>${html}</body>`, 'text/html').body;
    return [...body.childNodes].map((c, i) => toReact(c, String(i)));
  }, [code]);
  return (
    <pre className="code-block hljs" data-testid={testId}>
      <code>{nodes}</code>
    </pre>
  );
}

export function RawScriptHeading({ subject: s }: { subject: RawScriptSubject }) {
  const lines = s.code.split('\n').length;
  return (
    <>
      <code data-testid="field-script-world">{s.world}</code>
      <span className="dialog-title" data-testid="field-title">
        Run the agent’s JavaScript in the page ({lines} line{lines === 1 ? '' : 's'}, {s.world === 'MAIN' ? 'the page’s own world' : 'the user-script world'})
      </span>
    </>
  );
}

export function RawScriptBody({ subject: s }: { subject: RawScriptSubject }) {
  const hidden = hiddenCount(s.code);
  return (
    <section className="block" data-testid="field-raw-script">
      <p className="warning" role="note" data-testid="field-script-warning">
        This is code, not a described action: it can do anything this page can do — read what it shows, change it, send it elsewhere, act as you on
        this site — for as long as the page is open. Approve only code you have read and understand. This approval is for this exact code,
        once, in this tab and document: a changed character needs a new approval.
      </p>
      {hidden > 0 && (
        <p className="warning" data-testid="field-script-hidden">
          The code holds {hidden} invisible or direction-changing character{hidden === 1 ? '' : 's'}, shown as ⟨U+…⟩ markers.
        </p>
      )}
      <h3>The whole code (the agent’s, exactly as it will run)</h3>
      <HighlightedCode code={s.code} testId="field-script-code" />
      <dl className="fields">
        <HashField label="Code SHA-256 (what the approval binds)" hash={s.codeHash} testId="field-script-hash" />
        <Field label="World">
          <code>{s.world}</code> {s.world === 'MAIN' ? '(the page’s own JavaScript world: the page’s CSP applies)' : '(the browser’s user-script world; needs user scripts allowed)'}
        </Field>
        <Field label="Time limit">
          {Math.round(s.timeoutMs / 1000)} s after it starts; past it, or after Stop, the outcome is unknown (page code cannot be interrupted).
        </Field>
      </dl>
    </section>
  );
}
