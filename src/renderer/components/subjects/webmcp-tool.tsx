/**
 * The subject view of a WebMCP tool call: the tool's name and title, what the
 * browser reports of its annotations (hints only: the console treats every
 * page tool call as a change; Chromium fills in defaults once a page gives any,
 * docs/browser-facts.md), the extension's flags on its text, its description
 * and its input schema — all
 * the page's own words, UNTRUSTED, shown as text with invisible and bidi
 * characters revealed (../../text.ts), never as markup.
 */
import type { WebMcpToolSubject } from '../../../shared/ipc';
import type { FormSubject } from '../../../shared/form';
import type { ToolAnnotations } from '../../../shared/types';
import { prettyJson, revealInvisible } from '../../text';

const ANNOTATION_LABELS: Record<keyof ToolAnnotations, string> = {
  readOnlyHint: 'read-only',
  untrustedContentHint: 'returns untrusted content',
  consequentialHint: 'consequential',
  debugging: 'debugging tool',
};

/** What each flag of extension/src/lib/inspect.ts (and discovery's `confusable-name`) means, for the person. */
export const FLAG_LABELS: Readonly<Record<string, string>> = {
  'hidden-instructions': 'Text that speaks to the agent instead of describing the tool (possible prompt injection).',
  'zero-width': 'Zero-width characters (invisible in most views; shown revealed here).',
  'bidi-control': 'Bidirectional control characters (can make text read in another order than it is stored).',
  'control-chars': 'Control characters.',
  'tag-chars': 'Unicode tag characters (invisible text a model may still read).',
  'html-comment': 'An HTML comment in the text.',
  'mixed-script': 'Words mixing Latin with look-alike letters of another script.',
  'confusable-name': 'A name that looks like another tool’s name on this page.',
};

export function WebMcpToolHeading({ subject: s }: { subject: WebMcpToolSubject }) {
  return (
    <>
      <code data-testid="field-tool-name">{revealInvisible(s.toolName)}</code>
      <span className="dialog-title" data-testid="field-title">
        {s.title ? revealInvisible(s.title) : '(no title)'}
      </span>
    </>
  );
}

/**
 * A form tool: what will actually be submitted (every effective value, with where it comes from),
 * where (the action, stripped, and the method) and whether approving submits it (issue 8 item 4).
 */
export function FormSubjectView({ form }: { form: FormSubject }) {
  return (
    <section className="block warning" data-testid="field-form">
      <h3>This tool is a form on the page</h3>
      <p data-testid="field-form-autosubmit" data-autosubmit={String(form.autosubmit)}>
        {form.autosubmit ? (
          <strong>Approving submits this form at once.</strong>
        ) : (
          <strong>Approving fills the form; you then press the page’s own button to submit it. The agent’s call waits for that.</strong>
        )}
      </p>
      <p>
        It submits with <code data-testid="field-form-method">{form.method.toUpperCase()}</code> to{' '}
        <code data-testid="field-form-action">{revealInvisible(form.action)}</code>
      </p>
      <h3>
        Everything it will submit <span className="tag">untrusted text</span>
      </h3>
      <table className="form-values" data-testid="field-form-values">
        <tbody>
          {form.values.map((v) => (
            <tr key={v.name} data-name={v.name} data-from={v.from}>
              <th scope="row">
                <code>{revealInvisible(v.name)}</code>
              </th>
              <td>
                <code data-testid="form-value">{typeof v.value === 'string' ? revealInvisible(v.value) : revealInvisible(JSON.stringify(v.value))}</code>
              </td>
              <td className="muted small">{v.from === 'agent' ? 'from the agent' : 'already in the form (the page or an earlier call): kept'}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <p className="muted small">
        Fields the agent did not give keep the value the form holds now. Right before it acts, the extension reads the form
        again and refuses if any of this differs. A file is shown as its size only.
      </p>
    </section>
  );
}

export function WebMcpToolBody({ subject: s }: { subject: WebMcpToolSubject }) {
  const annotations = s.annotations;
  return (
    <>
      {s.form ? <FormSubjectView form={s.form} /> : null}
      <section className="block untrusted">
        <h3>
          What the browser reports about this tool <span className="tag">hints only</span>
        </h3>
        <div data-testid="field-annotations">
          {annotations && Object.keys(annotations).length > 0 ? (
            <ul className="claims">
              {(Object.keys(ANNOTATION_LABELS) as (keyof ToolAnnotations)[])
                .filter((k) => annotations[k] !== undefined)
                .map((k) => (
                  <li key={k}>
                    The browser reports: {ANNOTATION_LABELS[k]} — <strong>{annotations[k] ? 'yes' : 'no'}</strong>
                  </li>
                ))}
            </ul>
          ) : (
            <p className="muted">The browser reports no annotations for this tool.</p>
          )}
        </div>
        <p className="muted small">
          When a page gives any annotation, Chromium reports all of them, filling in its own defaults: a “no” may be the
          browser’s default rather than the page’s word. Echo Console treats every page tool call as a change, whatever is reported.
        </p>
      </section>

      {s.flags && s.flags.length > 0 ? (
        <section className="block warning" data-testid="field-flags">
          <h3>The extension flagged this tool’s text</h3>
          <ul>
            {s.flags.map((f) => (
              <li key={f} data-flag={f}>
                {FLAG_LABELS[f] ?? f}
              </li>
            ))}
          </ul>
          <p className="muted small">Flags never change the text above: read it with them in mind.</p>
        </section>
      ) : null}

      <section className="block untrusted">
        <h3>
          The page’s description <span className="tag">untrusted text</span>
        </h3>
        <p className="page-text" data-testid="field-description">
          {s.description ? revealInvisible(s.description) : '(no description)'}
        </p>
      </section>

      <section className="block untrusted">
        <h3>
          The page’s input schema <span className="tag">untrusted text</span>
        </h3>
        <pre className="code" data-testid="field-schema">
          {prettyJson(s.inputSchema)}
        </pre>
      </section>
    </>
  );
}
