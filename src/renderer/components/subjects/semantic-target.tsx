/**
 * The subject view of a semantic mutation (faculty `semantic`: click, hover,
 * focus, scroll; issue 10 item 6): the operation, the target's evidence — its
 * page-derived fingerprint (role, accessible name, label, input type, name
 * attribute, form, named ancestors, the item's text and its hash, position
 * among look-alikes) and the
 * fingerprint hash the grant binds — and the target's picture (./target-picture.tsx),
 * or why there is none. Names are the page's own words, UNTRUSTED,
 * shown as text with invisible and bidi characters revealed (../../text.ts).
 */
import type { SemanticTargetSubject } from '../../../shared/ipc';
import { revealInvisible } from '../../text';
import { TargetPictureView } from './target-picture';

const OPERATION_WORDS: Record<SemanticTargetSubject['operation'], string> = {
  click: 'Click',
  hover: 'Hover over',
  focus: 'Focus',
  scroll: 'Scroll into view',
  type: 'Type into',
  key: 'Press a key on',
};

export function SemanticTargetHeading({ subject: s }: { subject: SemanticTargetSubject }) {
  return (
    <>
      <code data-testid="field-semantic-operation">{s.operation}</code>
      <span className="dialog-title" data-testid="field-title">
        {OPERATION_WORDS[s.operation]} the {s.fingerprint.role} the page names “{revealInvisible(s.fingerprint.name) || '(no name)'}”
      </span>
    </>
  );
}

export function SemanticTargetBody({ subject: s }: { subject: SemanticTargetSubject }) {
  const fp = s.fingerprint;
  const rows: Array<[string, string]> = [
    ['Role', fp.role],
    ['Name', fp.name || '(none)'],
    ...(fp.label !== undefined ? ([['Label', fp.label]] as Array<[string, string]>) : []),
    ...(fp.type !== undefined ? ([['Input type', fp.type]] as Array<[string, string]>) : []),
    ...(fp.nameAttribute !== undefined ? ([['Name attribute', fp.nameAttribute]] as Array<[string, string]>) : []),
    ...(fp.form !== undefined ? ([['Form', fp.form]] as Array<[string, string]>) : []),
    ['Inside', fp.ancestors.length ? fp.ancestors.map((a) => `${a.role} “${a.name}”`).join(' › ') : '(no named container)'],
    // The row or card it acts in, by its text (a page may reuse the element for another row: the hash binds the text whole).
    ['In the item', fp.context ?? '(none: the target stands in no row or card with other text)'],
    ...(fp.contextHash !== undefined ? ([['Item text hash', fp.contextHash]] as Array<[string, string]>) : []),
    ['Position', fp.nth === 0 ? 'the first element with this description' : `element ${fp.nth + 1} of those with this description`],
    // The target's ref: the element the grant binds (resolved by the console even when the agent gave a fingerprint).
    ...(s.ref !== null ? ([['Ref', s.ref]] as Array<[string, string]>) : []),
  ];
  return (
    <section className="block" data-testid="field-semantic-target">
      <h3>The target (page text, untrusted)</h3>
      <dl className="fields">
        {rows.map(([k, v]) => (
          <div key={k} className="field">
            <dt>{k}</dt>
            <dd>
              <code>{revealInvisible(v)}</code>
            </dd>
          </div>
        ))}
        <div className="field">
          <dt>Fingerprint hash</dt>
          <dd>
            <code className="hash" data-testid="field-fingerprint-hash">
              {s.fingerprintHash}
            </code>
          </dd>
        </div>
      </dl>
      <p data-testid="field-semantic-notes">
        The extension sends synthetic events (not your keyboard or mouse: trustedInput false). Right before acting it finds the target again
        in that very document and refuses if it changed.
      </p>
      <TargetPictureView picture={s.picture} />
    </section>
  );
}
