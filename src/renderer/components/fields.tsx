/**
 * The labelled fields of the approval dialog and its subject views: a term and
 * its value, and a hash shown whole with its short fingerprint.
 */
import type { ReactNode } from 'react';
import { fingerprint } from '../../shared/canonical';

/** One labelled value in a `<dl>`. */
export function Field(props: { label: string; children: ReactNode; wide?: boolean }) {
  return (
    <div className={props.wide ? 'field field-wide' : 'field'}>
      <dt>{props.label}</dt>
      <dd>{props.children}</dd>
    </div>
  );
}

/** A SHA-256 hex hash, whole, with its 12-digit fingerprint (`${testId}-fingerprint`). */
export function HashField(props: { label: string; hash: string; testId: string }) {
  return (
    <Field label={props.label} wide>
      <span className="hash-line">
        <span className="fingerprint" data-testid={`${props.testId}-fingerprint`} title="Short fingerprint: the first 12 hex digits">
          {fingerprint(props.hash)}
        </span>
        <code className="hash" data-testid={`${props.testId}`}>
          {props.hash}
        </code>
      </span>
    </Field>
  );
}
