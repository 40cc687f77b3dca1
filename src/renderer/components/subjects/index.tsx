/**
 * The subject views of the approval dialog: one per `ApprovalSubject` type
 * (src/shared/ipc.ts). A faculty that adds a subject type adds its view to
 * SUBJECT_VIEWS; the compiler refuses a type without one.
 */
import type { ReactNode } from 'react';
import type { ApprovalSubject } from '../../../shared/ipc';
import { WebMcpToolBody, WebMcpToolHeading } from './webmcp-tool';
import { SemanticTargetBody, SemanticTargetHeading } from './semantic-target';
import { SemanticFillBody, SemanticFillHeading } from './semantic-fill';
import { LivePatchBody, LivePatchHeading } from './live-patch';
import { RawScriptBody, RawScriptHeading } from './raw-script';

type ViewsOf<S extends { type: string }> = {
  [T in S['type']]: { heading(s: Extract<S, { type: T }>): ReactNode; body(s: Extract<S, { type: T }>): ReactNode };
};

const SUBJECT_VIEWS: ViewsOf<ApprovalSubject> = {
  'webmcp-tool': { heading: (s) => <WebMcpToolHeading subject={s} />, body: (s) => <WebMcpToolBody subject={s} /> },
  'semantic-target': { heading: (s) => <SemanticTargetHeading subject={s} />, body: (s) => <SemanticTargetBody subject={s} /> },
  'semantic-fill': { heading: (s) => <SemanticFillHeading subject={s} />, body: (s) => <SemanticFillBody subject={s} /> },
  'live-patch': { heading: (s) => <LivePatchHeading subject={s} />, body: (s) => <LivePatchBody subject={s} /> },
  'raw-script': { heading: (s) => <RawScriptHeading subject={s} />, body: (s) => <RawScriptBody subject={s} /> },
};

function viewOf<S extends ApprovalSubject>(s: S): { heading(s: S): ReactNode; body(s: S): ReactNode } {
  return SUBJECT_VIEWS[s.type as S['type']] as unknown as { heading(s: S): ReactNode; body(s: S): ReactNode };
}

/** The dialog's title for this subject (e.g. the tool name and its title). */
export function SubjectHeading({ subject }: { subject: ApprovalSubject }) {
  return <>{viewOf(subject).heading(subject)}</>;
}

/** The sections describing what the faculty acts on. */
export function SubjectView({ subject }: { subject: ApprovalSubject }) {
  return <>{viewOf(subject).body(subject)}</>;
}
