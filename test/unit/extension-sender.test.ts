import { describe, expect, it } from 'vitest';
import { classifySender } from '../../extension/src/lib/sender';

const self = { extensionId: 'abjcbldekikalfjmmiemkjeemkfphege', popupPath: '/popup/popup.html' };
const own = `chrome-extension://${self.extensionId}`;

describe('classifySender', () => {
  it('recognises our popup by id, origin and path', () => {
    expect(classifySender({ id: self.extensionId, origin: own, url: `${own}/popup/popup.html` }, self)).toEqual({ kind: 'popup' });
    expect(classifySender({ id: self.extensionId, origin: own, url: `${own}/popup/popup.html`, tab: { id: 3 } }, self)).toEqual({ kind: 'popup' });
  });

  it('recognises our content script in a web frame', () => {
    expect(
      classifySender({ id: self.extensionId, origin: 'https://a.example', url: 'https://a.example/x', tab: { id: 4 }, frameId: 2, documentId: 'D1' }, self),
    ).toEqual({ kind: 'content', tabId: 4, frameId: 2, documentId: 'D1', origin: 'https://a.example' });
  });

  it.each([
    ['another extension', { id: 'otherextensionidxxxxxxxxxxxxxxxx', origin: own, url: `${own}/popup/popup.html` }],
    ['a web page claiming the popup URL', { id: self.extensionId, origin: 'https://evil.example', url: `${own}/popup/popup.html`, tab: { id: 1 }, frameId: 0 }],
    ['our other extension pages', { id: self.extensionId, origin: own, url: `${own}/other.html` }],
    ['the popup URL with another origin field', { id: self.extensionId, origin: 'chrome-extension://zzzz', url: `${own}/popup/popup.html` }],
    ['a content script without a document', { id: self.extensionId, origin: 'https://a.example', tab: { id: 1 }, frameId: 0 }],
    ['a content script without a tab', { id: self.extensionId, origin: 'https://a.example', frameId: 0, documentId: 'D' }],
    ['an opaque origin', { id: self.extensionId, origin: 'null', tab: { id: 1 }, frameId: 0, documentId: 'D' }],
    ['a file page', { id: self.extensionId, origin: 'file://', tab: { id: 1 }, frameId: 0, documentId: 'D' }],
    ['nothing', undefined],
  ])('refuses %s', (_what, sender) => {
    expect(classifySender(sender as never, self).kind).toBe('unknown');
  });

  it('trusts origin over url: a web frame whose URL looks like ours is content of that web origin', () => {
    const c = classifySender({ id: self.extensionId, origin: 'https://a.example', url: `${own}/popup/popup.html`, tab: { id: 1 }, frameId: 0, documentId: 'D' }, self);
    expect(c).toMatchObject({ kind: 'content', origin: 'https://a.example' });
  });
});
