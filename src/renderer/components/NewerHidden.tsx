/**
 * Said above a list whose newest rows were let go (a store's bounded window: stores/timeline.ts,
 * stores/receipts.ts; docs/timeline.md "A bounded window"): newer ones exist and are not shown,
 * why, and the way back to them. `testId` prefixes the notice's (`<testId>-newer-hidden`) and
 * its button's (`<testId>-show-newest`) test ids.
 */
export function NewerHidden(props: { what: 'requests' | 'receipts'; max: number; testId: string; onShowNewest(): void }) {
  return (
    <p className="notice" role="status" data-testid={`${props.testId}-newer-hidden`}>
      Newer {props.what} are not shown: this list holds {props.max.toLocaleString('en')} {props.what} at a time, and these are older ones.{' '}
      <button type="button" className="btn btn-small" data-testid={`${props.testId}-show-newest`} onClick={props.onShowNewest}>
        Show the newest
      </button>
    </p>
  );
}
