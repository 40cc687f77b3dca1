/**
 * The Live Patch allow-list (src/shared/live-patch.ts patchEditsProblem; issue 11 item 1, "Unit tests
 * of the patch allow-list with hostile inputs"; docs/trust-rules.md rule 16): every hostile edit is
 * refused and named; the closed set passes. The console, the service worker and the page call this
 * same function.
 */
import { describe, expect, it } from 'vitest';
import {
  patchArgumentsProblem, patchEditsProblem, patchEditProblem, patchValueProblem, revertSubjectHash, revertSubjectProblem, PATCH_BOUNDS,
} from '../../src/shared/live-patch';
import { canonicalJson, sha256Hex } from '../../src/shared/canonical';

const refused = (edit: unknown) => patchEditsProblem([edit]);

describe('Live Patch allow-list: the closed set passes', () => {
  it.each([
    { op: 'set-text', text: 'Out of stock — call us' },
    { op: 'set-text', text: '' },
    { op: 'set-attribute', name: 'title', value: 'Meeting at 10:30' },
    { op: 'set-attribute', name: 'class', value: 'big warn-2' },
    { op: 'set-attribute', name: 'hidden', value: '' },
    { op: 'set-attribute', name: 'aria-label', value: 'Close the offer' },
    { op: 'remove-attribute', name: 'aria-describedby' },
    { op: 'set-style', property: 'color', value: 'rgb(200, 0, 0)' },
    { op: 'set-style', property: 'outline', value: '3px solid #ff00ff' },
    { op: 'set-style', property: 'font-size', value: '120%' },
    { op: 'insert', element: 'note', position: 'after', text: 'Checked by the agent' },
    { op: 'insert', element: 'highlight', position: 'prepend', text: 'new' },
    { op: 'hide' },
    { op: 'show' },
  ])('%j', (edit) => {
    expect(refused(edit)).toBeNull();
  });

  it('a list of several edits passes, and the arguments are exactly {edits}', () => {
    const edits = [{ op: 'set-text', text: 'A' }, { op: 'hide' }];
    expect(patchArgumentsProblem('patch', { edits })).toBeNull();
    expect(patchArgumentsProblem('patch', { edits, more: 1 })).toMatch(/exactly \{edits\}/);
    expect(patchArgumentsProblem('revert', {})).toBeNull();
    expect(patchArgumentsProblem('revert', { edits })).toMatch(/no arguments/);
  });
});

describe('Live Patch allow-list: hostile edits are refused, naming the edit', () => {
  it.each([
    ['onclick', { op: 'set-attribute', name: 'onclick', value: 'alert(1)' }, /event handler/],
    ['ONCLICK', { op: 'set-attribute', name: 'ONCLICK', value: 'alert(1)' }, /event handler/],
    ['OnMouseOver', { op: 'set-attribute', name: 'OnMouseOver', value: 'x' }, /event handler/],
    [' onload (padded)', { op: 'set-attribute', name: ' onload', value: 'x' }, /event handler/],
    ['remove onclick', { op: 'remove-attribute', name: 'onclick' }, /event handler/],
    ['href', { op: 'set-attribute', name: 'href', value: '/pay' }, /not an allow-listed attribute/],
    ['xlink:href', { op: 'set-attribute', name: 'xlink:href', value: '#a' }, /not an allow-listed attribute/],
    ['src', { op: 'set-attribute', name: 'src', value: 'x.png' }, /not an allow-listed attribute/],
    ['srcdoc', { op: 'set-attribute', name: 'srcdoc', value: '<b>x</b>' }, /not an allow-listed attribute/],
    ['action', { op: 'set-attribute', name: 'action', value: '/steal' }, /not an allow-listed attribute/],
    ['formaction', { op: 'set-attribute', name: 'formaction', value: '/steal' }, /not an allow-listed attribute/],
    ['style attribute wholesale', { op: 'set-attribute', name: 'style', value: 'color:red' }, /not an allow-listed attribute/],
    ['value (a form value)', { op: 'set-attribute', name: 'value', value: 'x' }, /not an allow-listed attribute/],
    ['Title (case)', { op: 'set-attribute', name: 'Title', value: 'x' }, /not an allow-listed attribute/],
    ['aria with zero-width', { op: 'set-attribute', name: 'aria-\u200blabel', value: 'x' }, /not an allow-listed attribute/],
    ['aria- with digits', { op: 'set-attribute', name: 'aria-1', value: 'x' }, /not an allow-listed attribute/],
    ['javascript: in title', { op: 'set-attribute', name: 'title', value: 'javascript:alert(1)' }, /script or data URL scheme/],
    ['JaVa\\tScRiPt: in title', { op: 'set-attribute', name: 'title', value: 'JaVa\tScRiPt:alert(1)' }, /script or data URL scheme/],
    ['full-width javascript:', { op: 'set-attribute', name: 'title', value: 'ｊａｖａｓｃｒｉｐｔ：alert(1)' }, /script or data URL scheme/],
    ['data: in aria-label', { op: 'set-attribute', name: 'aria-label', value: 'data:text/html,<script>' }, /script or data URL scheme/],
    ['a URL in a note', { op: 'insert', element: 'note', position: 'after', text: 'verify at https://evil.example' }, /holds a URL/],
    ['url( in a style value', { op: 'set-style', property: 'background-color', value: 'url(https://x)' }, /url\(\)|holds a URL/],
    ['url( with spaces', { op: 'set-style', property: 'color', value: 'u r l (x)' }, /url\(\)|calls|character outside/],
    ['expression(', { op: 'set-style', property: 'color', value: 'expression(alert(1))' }, /expression\(\)/],
    ['var(', { op: 'set-style', property: 'color', value: 'var(--x)' }, /only rgb\(\)/],
    ['a CSS escape \\', { op: 'set-style', property: 'color', value: '\\75 rl(x)' }, /character outside/],
    ['!important', { op: 'set-style', property: 'color', value: 'red !important' }, /character outside/],
    ['; injection', { op: 'set-style', property: 'color', value: 'red; background: url(x)' }, /url|character outside/],
    ['style: display', { op: 'set-style', property: 'display', value: 'block' }, /not an allow-listed style property/],
    ['style: background (url-capable shorthand)', { op: 'set-style', property: 'background', value: 'red' }, /not an allow-listed style property/],
    ['style: content', { op: 'set-style', property: 'content', value: 'x' }, /not an allow-listed style property/],
    ['overlong text', { op: 'set-text', text: 'x'.repeat(PATCH_BOUNDS.text + 1) }, /longer than/],
    ['overlong attribute value', { op: 'set-attribute', name: 'title', value: 'x'.repeat(PATCH_BOUNDS.attributeValue + 1) }, /longer than/],
    ['overlong style value', { op: 'set-style', property: 'color', value: 'r'.repeat(PATCH_BOUNDS.styleValue + 1) }, /longer than/],
    ['bidi override in text', { op: 'set-text', text: 'pay \u202eevil' }, /control, bidi or zero-width/],
    ['NUL in text', { op: 'set-text', text: 'a\u0000b' }, /control, bidi or zero-width/],
    ['an unknown op', { op: 'set-html', html: '<img onerror=x>' }, /unknown op/],
    ['script op', { op: 'script', code: 'alert(1)' }, /unknown op/],
    ['iframe insert', { op: 'insert', element: 'iframe', position: 'after', text: 'x' }, /element must be/],
    ['insert position', { op: 'insert', element: 'note', position: 'replace', text: 'x' }, /position must be/],
    ['empty note', { op: 'insert', element: 'note', position: 'after', text: '   ' }, /empty/],
    ['an extra key', { op: 'hide', onclick: 'x' }, /exactly the keys/],
    ['a missing key', { op: 'set-attribute', name: 'title' }, /exactly the keys/],
    ['not an object', 'hide', /plain object/],
    ['an array', ['hide'], /plain object/],
    ['class with quotes', { op: 'set-attribute', name: 'class', value: 'a" onclick="x' }, /class names take/],
    ['hidden with junk', { op: 'set-attribute', name: 'hidden', value: 'javascript' }, /hidden\) the value must be/],
  ])('%s', (_label, edit, why) => {
    const p = refused(edit);
    expect(p).not.toBeNull();
    expect(p!.index).toBe(0);
    expect(p!.message).toMatch(/^edit 1 /);
    expect(p!.message).toMatch(why);
  });

  it('unicode escapes in JSON become the refused name itself', () => {
    const edits = JSON.parse('[{"op":"set-attribute","name":"\\u006f\\u006eclick","value":"x"},{"op":"set-attribute","name":"\\u0068ref","value":"x"}]') as unknown[];
    expect(patchEditsProblem(edits)?.message).toMatch(/"onclick" is an event handler/);
    expect(patchEditsProblem([edits[1]])?.message).toMatch(/"href" is not an allow-listed/);
  });

  it('proto keys: __proto__ as an own key (JSON), as the op, as a prototype, and constructor', () => {
    expect(patchEditsProblem(JSON.parse('[{"op":"hide","__proto__":{"op":"show"}}]'))?.message).toMatch(/exactly the keys/);
    expect(patchEditsProblem([{ op: '__proto__' }])?.message).toMatch(/unknown op/);
    expect(patchEditsProblem([{ op: 'constructor' }])?.message).toMatch(/unknown op/);
    expect(patchEditsProblem([{ op: 'toString' }])?.message).toMatch(/unknown op/);
    // An object whose op comes only through its prototype has no own keys: refused.
    expect(patchEditsProblem([Object.create({ op: 'hide' })])?.message).toMatch(/plain object/);
    expect(patchEditsProblem([{ op: 'set-style', property: '__proto__', value: 'red' }])?.message).toMatch(/not an allow-listed style property/);
    expect(patchEditsProblem([{ op: 'set-attribute', name: '__proto__', value: 'x' }])?.message).toMatch(/not an allow-listed attribute/);
    expect(patchArgumentsProblem('patch', JSON.parse('{"__proto__":{"edits":[{"op":"hide"}]}}'))).toMatch(/exactly \{edits\}/);
  });

  it('the list: not a list, empty, too many edits, too much text in all; the failing edit is named by position', () => {
    expect(patchEditsProblem('hide')?.message).toMatch(/must be a list/);
    expect(patchEditsProblem([])?.message).toMatch(/1 to 16 edits/);
    expect(patchEditsProblem(Array.from({ length: PATCH_BOUNDS.edits + 1 }, () => ({ op: 'hide' })))?.message).toMatch(/has 17/);
    expect(patchEditsProblem(Array.from({ length: 5 }, () => ({ op: 'set-text', text: 'x'.repeat(1_900) })))?.message).toMatch(/characters of text in all/);
    const p = patchEditsProblem([{ op: 'hide' }, { op: 'set-text', text: 'ok' }, { op: 'set-attribute', name: 'href', value: '#' }]);
    expect(p).toMatchObject({ index: 2 });
    expect(p!.message).toMatch(/^edit 3 \(set-attribute\) "href"/);
  });

  it('the value check alone: ordinary text with colons passes; schemes only where a scheme may start', () => {
    expect(patchValueProblem('Note: metadata: 5', 100)).toBeNull();
    expect(patchValueProblem('see vbscript:x', 100)).toMatch(/scheme/);
    expect(patchValueProblem('file:///etc/passwd', 100)).toMatch(/scheme/);
    expect(patchValueProblem(5, 100)).toMatch(/not a string/);
    expect(patchEditProblem({ op: 'show' })).toBeNull();
  });
});

describe('Live Patch revert subject', () => {
  it('is {patchIds}: distinct ids of a fixed charset, bounded; its hash binds the ids in order', async () => {
    expect(revertSubjectProblem({ patchIds: ['a-1', 'b_2'] })).toBeNull();
    expect(revertSubjectProblem({ patchIds: [] })).toMatch(/1 to 64/);
    expect(revertSubjectProblem({ patchIds: ['a', 'a'] })).toMatch(/twice/);
    expect(revertSubjectProblem({ patchIds: ['../x'] })).toMatch(/\[A-Za-z0-9_-\]/);
    expect(revertSubjectProblem({ patchIds: ['a'], more: 1 })).toMatch(/\{patchIds\}/);
    const h = await revertSubjectHash(['a', 'b']);
    expect(h).toBe(await sha256Hex(canonicalJson({ revert: ['a', 'b'] })));
    expect(h).not.toBe(await revertSubjectHash(['b', 'a']));
  });
});
