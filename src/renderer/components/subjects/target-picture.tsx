/**
 * The target's picture in the approval dialog of a semantic action (issue 10
 * item 6; docs/semantic-controls.md, "The target's picture"): the crop the
 * extension took of the visible tab, the target outlined, password and other
 * secret fields and cross-origin frames blacked out, with its SHA-256 (the hash
 * the `approval-shown` receipt holds); or why there is none. The bytes are
 * fetched by hash and checked against it (../../stores/pictures.ts).
 */
import { createContext, useContext, useEffect } from 'react';
import { useStore } from 'zustand';
import { PICTURE_REASON_WORDS, type TargetPicture } from '../../../shared/semantic-picture';
import type { PicturesStore } from '../../stores/pictures';

/** The pictures store; absent (null) where the dialog is drawn without a console (it then says so). */
export const PicturesContext = createContext<PicturesStore | null>(null);

function Captured({ picture: p, store }: { picture: Extract<TargetPicture, { status: 'captured' }>; store: PicturesStore }) {
  const entry = useStore(store, (s) => s.entries[p.sha256]);
  const load = useStore(store, (s) => s.load);
  useEffect(() => {
    void load(p.sha256);
  }, [load, p.sha256]);
  if (!entry || entry.status === 'loading') return <p data-testid="field-target-picture-status">Loading the picture…</p>;
  if (entry.status === 'error') return <p data-testid="field-target-picture-status">The picture cannot be shown: {entry.message}</p>;
  return (
    <img
      className="target-picture"
      data-testid="field-target-picture"
      src={entry.url}
      width={entry.width}
      height={entry.height}
      alt="The target on the page, outlined; secret fields blacked out"
    />
  );
}

export function TargetPictureView({ picture }: { picture: TargetPicture | undefined }) {
  const store = useContext(PicturesContext);
  return (
    <section className="block" data-testid="field-target-picture-block">
      <h3>The target on screen</h3>
      {!picture ? (
        <p data-testid="field-target-picture-status">No picture was taken.</p>
      ) : picture.status === 'none' ? (
        <p data-testid="field-target-picture-status">No picture: {PICTURE_REASON_WORDS[picture.reason] ?? picture.reason}.</p>
      ) : (
        <>
          {store ? <Captured picture={picture} store={store} /> : <p data-testid="field-target-picture-status">The picture cannot be fetched here.</p>}
          <p>
            Taken just now from the tab as it shows on screen, cropped to the target (outlined). Password, one-time-code and card fields,
            private parts and other sites&apos; frames are blacked out. Kept in memory only; the receipt holds its hash:
          </p>
          <code className="hash" data-testid="field-target-picture-hash">
            {picture.sha256}
          </code>
        </>
      )}
    </section>
  );
}
