/**
 * The link problems only the person can fix, in the same plain words in the
 * console (LinkStatus.problem → Connection panel) and in the popup
 * (ExtLinkState.problem). One place, so both UIs say the same thing.
 */
import type { LinkProblem } from '../ipc';

/**
 * Which side must be updated when the two speak different link protocol versions.
 * @param side the side that noticed (`console` or `extension`).
 * @param ours that side's PROTOCOL_VERSION.
 * @param theirs the peer's version, or `null` when the peer did not say (only a v1
 *   console answers version-mismatch without `protocolVersion`: it is the older one).
 */
export function versionProblem(side: 'console' | 'extension', ours: number, theirs: number | null): LinkProblem {
  const consoleVersion = side === 'console' ? ours : theirs;
  const extensionVersion = side === 'extension' ? ours : theirs;
  const consoleOlder = side === 'extension' ? theirs === null || theirs < ours : theirs !== null && theirs > ours;
  const versions =
    consoleVersion !== null && extensionVersion !== null
      ? ` (the extension speaks link protocol v${extensionVersion}, the console v${consoleVersion})`
      : ` (the extension speaks link protocol v${extensionVersion ?? '?'}; the console speaks an older one)`;
  return consoleOlder
    ? { code: 'console-outdated', message: `Update Echo Console: it is older than the extension${versions}. Install the same release of both.` }
    : { code: 'extension-outdated', message: `Update the Echo Console extension: it is older than the console${versions}. Install the same release of both.` };
}

/** The pairing exists on one side but does not work (unknown to the other side, or its key does not verify). */
export function pairAgainProblem(why: string): LinkProblem {
  return { code: 'pair-again', message: `Pair again: ${why}` };
}
