/**
 * The subject view of a Live Patch (faculty `live-patch`; issue 11 item 1; docs/live-patch.md):
 *  - patch: the target's evidence (role, name, ref, fingerprint hash: page text, UNTRUSTED), every
 *    edit in words with its whole value (the agent's text, invisible characters revealed), and the
 *    target's picture as it is now, before the patch (nothing touches the page before approval);
 *  - revert: the patches it undoes, newest first.
 */
import type { LivePatchSubject } from '../../../shared/ipc';
import { revealInvisible } from '../../text';
import { TargetPictureView } from './target-picture';

export function LivePatchHeading({ subject: s }: { subject: LivePatchSubject }) {
  return (
    <>
      <code data-testid="field-patch-operation">{s.operation}</code>
      <span className="dialog-title" data-testid="field-title">
        {s.operation === 'patch'
          ? `Patch the ${s.fingerprint?.role ?? 'element'} the page names “${revealInvisible(s.fingerprint?.name ?? '') || '(no name)'}” (${s.edits.length} edit${s.edits.length === 1 ? '' : 's'}, reversible)`
          : `Revert ${s.patches.length} Live Patch${s.patches.length === 1 ? '' : 'es'}`}
      </span>
    </>
  );
}

export function LivePatchBody({ subject: s }: { subject: LivePatchSubject }) {
  return (
    <section className="block" data-testid="field-live-patch">
      {s.operation === 'patch' && s.fingerprint && (
        <>
          <h3>The target (page text, untrusted)</h3>
          <dl className="fields">
            <div className="field"><dt>Role</dt><dd><code>{revealInvisible(s.fingerprint.role)}</code></dd></div>
            <div className="field"><dt>Name</dt><dd><code>{revealInvisible(s.fingerprint.name) || '(none)'}</code></dd></div>
            {s.ref !== null && <div className="field"><dt>Ref</dt><dd><code>{s.ref}</code></dd></div>}
            <div className="field"><dt>Fingerprint hash</dt><dd><code className="hash">{s.fingerprintHash}</code></dd></div>
          </dl>
        </>
      )}
      <h3>{s.operation === 'patch' ? 'The edits (the agent’s, in order)' : 'The patches undone (newest first)'}</h3>
      <ol data-testid="field-patch-edits">
        {s.lines.map((l, i) => (
          <li key={i}><code>{revealInvisible(l)}</code></li>
        ))}
      </ol>
      <p data-testid="field-patch-notes">
        {s.operation === 'patch'
          ? 'Only how the page looks changes, in this document only: no script, link, URL or form value. Nothing has touched the page yet. You can revert it from the console (Live Patches), and it ends when the page reloads or navigates.'
          : 'The page is put back as it was before each patch; where the page changed something meanwhile, its change is kept and the receipt says revert-mismatch.'}
      </p>
      {s.operation === 'patch' && <TargetPictureView picture={s.picture} />}
    </section>
  );
}
