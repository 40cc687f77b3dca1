/**
 * The subject view of a form fill (faculty `semantic`, operation `fill`, page_fill; issue 10 item 6,
 * "One approval for a form fill"): every field the fill sets, in order, with the text it will hold,
 * each field's page-derived description (role, accessible name, label, input type, name attribute)
 * and fingerprint hash, and the first field's picture. Field descriptions are the page's words and
 * the texts are the agent's: both UNTRUSTED, shown as text with invisible and bidi characters
 * revealed (../../text.ts). Submission is not part of it.
 */
import type { SemanticFillSubject } from '../../../shared/ipc';
import { revealInvisible } from '../../text';
import { TargetPictureView } from './target-picture';

export function SemanticFillHeading({ subject: s }: { subject: SemanticFillSubject }) {
  return (
    <>
      <code data-testid="field-semantic-operation">fill</code>
      <span className="dialog-title" data-testid="field-title">
        Fill {s.fields.length} field{s.fields.length === 1 ? '' : 's'} of {s.formName !== null ? `the form the page names “${revealInvisible(s.formName)}”` : 'the page (outside any form)'}
      </span>
    </>
  );
}

export function SemanticFillBody({ subject: s }: { subject: SemanticFillSubject }) {
  return (
    <section className="block" data-testid="field-semantic-fill">
      <h3>The fields and what each will hold (page text and agent text, untrusted)</h3>
      <table className="fill-fields">
        <thead>
          <tr>
            <th>#</th>
            <th>Field</th>
            <th>New value</th>
          </tr>
        </thead>
        <tbody>
          {s.fields.map((f, i) => {
            const fp = f.fingerprint;
            const extra = [fp.label !== undefined ? `label “${fp.label}”` : '', fp.type !== undefined ? `type ${fp.type}` : '', fp.nameAttribute !== undefined ? `name=${fp.nameAttribute}` : '', `ref ${f.ref}`].filter(Boolean).join(', ');
            return (
              <tr key={f.ref} data-testid="fill-field">
                <td>{i + 1}</td>
                <td>
                  <code>{revealInvisible(`${fp.role} “${fp.name || '(no name)'}”`)}</code>
                  <div className="muted">{revealInvisible(extra)}</div>
                  <code className="hash" title="fingerprint hash">
                    {f.fingerprintHash}
                  </code>
                </td>
                <td>
                  <pre className="code" data-testid="fill-value">
                    {f.text === '' ? '(empty: the field is cleared)' : revealInvisible(f.text)}
                  </pre>
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      <p data-testid="field-semantic-notes">
        Each value replaces what the field holds. Nothing is submitted. The extension sends synthetic events (not your keyboard: trustedInput
        false). Right before setting anything it finds every field again in that very document and in the same form, and refuses if one changed.
      </p>
      <TargetPictureView picture={s.picture} />
    </section>
  );
}
