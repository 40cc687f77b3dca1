/**
 * The subject view of a WebMCP tool call: the tool's name and title, what the
 * browser reports of its annotations (hints only: the console treats every
 * page tool call as a change), its description and its input schema — all
 * the page's own words, UNTRUSTED, shown as text with invisible and bidi
 * characters revealed (../../text.ts), never as markup.
 */
import type { WebMcpToolSubject } from '../../../shared/ipc';
import type { ToolAnnotations } from '../../../shared/types';
import { prettyJson, revealInvisible } from '../../text';

const ANNOTATION_LABELS: Record<keyof ToolAnnotations, string> = {
  readOnlyHint: 'read-only',
  untrustedContentHint: 'returns untrusted content',
  consequentialHint: 'consequential',
  debugging: 'debugging tool',
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

export function WebMcpToolBody({ subject: s }: { subject: WebMcpToolSubject }) {
  const annotations = s.annotations;
  return (
    <>
      <section className="block untrusted">
        <h3>
          The page’s claims <span className="tag">hints only</span>
        </h3>
        <div data-testid="field-annotations">
          {annotations && Object.keys(annotations).length > 0 ? (
            <ul className="claims">
              {(Object.keys(ANNOTATION_LABELS) as (keyof ToolAnnotations)[])
                .filter((k) => annotations[k] !== undefined)
                .map((k) => (
                  <li key={k}>
                    The page says: {ANNOTATION_LABELS[k]} — <strong>{annotations[k] ? 'yes' : 'no'}</strong>
                  </li>
                ))}
            </ul>
          ) : (
            <p className="muted">The page makes no claims about this tool.</p>
          )}
        </div>
        <p className="muted small">Echo Console treats every page tool call as a change, whatever the page claims.</p>
      </section>

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
