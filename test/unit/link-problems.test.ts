/**
 * Version skew and broken pairings in plain words (src/shared/link-core/problems.ts),
 * and how the two UIs carry them: the console's link label (badge and
 * Connection panel) and the popup's state.
 */
import { describe, expect, it } from 'vitest';
import { pairAgainProblem, versionProblem } from '../../src/shared/link-core';
import { popupLinkState } from '../../extension/src/lib/link-state';
import { linkLabel } from '../../src/renderer/stores/connection';

describe('versionProblem', () => {
  it('names the side to update, from either side\'s view', () => {
    expect(versionProblem('console', 2, 1)).toMatchObject({ code: 'extension-outdated', message: expect.stringMatching(/^Update the Echo Console extension.*v1, the console v2/) });
    expect(versionProblem('console', 2, 3).code).toBe('console-outdated');
    expect(versionProblem('extension', 2, 3).code).toBe('extension-outdated');
    expect(versionProblem('extension', 2, 1)).toMatchObject({ code: 'console-outdated', message: expect.stringMatching(/^Update Echo Console/) });
    // A v1 console never names its version in version-mismatch: it is the older one.
    expect(versionProblem('extension', 2, null)).toMatchObject({ code: 'console-outdated', message: expect.stringMatching(/older one/) });
  });
});

describe('the console\'s label', () => {
  const now = 1_000_000;
  it('says what to do, not just "version mismatch" or "refused"', () => {
    const problem = versionProblem('console', 2, 1);
    expect(linkLabel({ state: 'version-mismatch', paired: true, problem }, now)).toEqual({ tone: 'bad', text: 'Update the extension', detail: problem.message });
    expect(linkLabel({ state: 'version-mismatch', paired: true, problem: versionProblem('console', 2, 3) }, now).text).toBe('Update Echo Console');
    expect(linkLabel({ state: 'refused', paired: true, problem: pairAgainProblem('x') }, now)).toMatchObject({ tone: 'bad', text: 'Pair again', detail: 'Pair again: x' });
    // While a code waits, the label stays "awaiting pairing" and the detail says why it is needed.
    expect(linkLabel({ state: 'awaiting-pairing', paired: true, pairingCode: '123 456', problem: pairAgainProblem('y') }, now)).toMatchObject({ text: 'Awaiting pairing', detail: 'Pair again: y' });
  });
});

describe('the popup\'s state', () => {
  it('carries the problem through, and refuses anything that is not one', () => {
    const problem = versionProblem('extension', 2, 3);
    expect(popupLinkState({ state: 'version-mismatch', paired: true, problem, error: { code: 'version-mismatch', message: 'm' } }, 0, 15_000)).toEqual({
      state: 'version-mismatch',
      paired: true,
      message: 'm',
      problem,
    });
    expect(popupLinkState({ state: 'refused', paired: true, problem: { code: 'rm -rf', message: 'x' } }, 0, 15_000).problem).toBeUndefined();
    expect(popupLinkState({ state: 'refused', paired: true, problem: { code: 'pair-again', message: 42 } }, 0, 15_000).problem).toBeUndefined();
  });
});
