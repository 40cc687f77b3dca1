/**
 * docs/design.md, "Conventions" §6 ("sender classification in one place ... nothing else
 * reads sender.*; never trust sender.url alone") as a guard that fails the
 * moment other extension code starts reading a MessageSender, plus the
 * classifier against senders forged to look like ours. docs/trust-rules.md.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { classifySender } from '../../extension/src/lib/sender';

const ROOT = join(import.meta.dirname, '../../extension/src');
const files = (dir: string): string[] =>
  readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? files(p) : /\.tsx?$/.test(f) ? [p] : [];
  });

const self = { extensionId: 'abjcbldekikalfjmmiemkjeemkfphege', popupPath: '/popup/popup.html' };
const own = `chrome-extension://${self.extensionId}`;

describe('rule (CONVENTIONS §6): one function decides who sent a message', () => {
  it('no extension file but lib/sender.ts reads a MessageSender field', () => {
    const offenders: string[] = [];
    for (const f of files(ROOT)) {
      const rel = relative(ROOT, f);
      if (rel === join('lib', 'sender.ts')) continue;
      const src = readFileSync(f, 'utf8').replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '');
      if (/\bsender\s*(\?\.|\.|\[)/.test(src) || /\bMessageSender\b/.test(src)) offenders.push(rel);
    }
    expect(offenders).toEqual([]);
    // Not vacuous: the scan does find the classifier's own reads.
    expect(/\bsender\s*(\?\.|\.|\[)/.test(readFileSync(join(ROOT, 'lib/sender.ts'), 'utf8'))).toBe(true);
  });

  it.each([
    ['a content script of a web page that names our popup URL, with no origin', { id: self.extensionId, url: `${own}/popup/popup.html`, tab: { id: 1 }, frameId: 0, documentId: 'D' }],
    ['our id with a data: origin', { id: self.extensionId, origin: 'data:', url: `${own}/popup/popup.html` }],
    ['our id, our origin, the popup path with a query that hides another page', { id: self.extensionId, origin: own, url: `${own}/other.html?/popup/popup.html` }],
    ['an id that only starts like ours', { id: `${self.extensionId}x`, origin: own, url: `${own}/popup/popup.html` }],
    ['a chrome:// origin', { id: self.extensionId, origin: 'chrome://settings', tab: { id: 1 }, frameId: 0, documentId: 'D' }],
    ['a content script with a negative frame', { id: self.extensionId, origin: 'https://a.example', tab: { id: 1 }, frameId: -1, documentId: 'D' }],
    ['a prototype-polluted sender', JSON.parse(`{"__proto__":{"id":"${self.extensionId}","origin":"${own}","url":"${own}/popup/popup.html"}}`)],
  ])('refuses %s (neither our popup nor our content script)', (_what, sender) => {
    expect(classifySender(sender as never, self).kind).toBe('unknown');
  });
});
