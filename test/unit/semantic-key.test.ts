/**
 * The pure logic of page_key (issue 10 item 4 "Key"; src/shared/semantic-key.ts, the `key` rule of
 * src/shared/semantic-target.ts judgeReadback, the console's `semantic` faculty for `key`, and the
 * extension's request and subject checks): the allow-list checked by the tool's schema, the console and
 * the extension; the focused element as the target (blocked and ladder refused before the person is
 * asked); the grant binding the key (a Tab grant presented with Enter); the readback judgement.
 */
import { describe, expect, it } from 'vitest';
import { argumentsHash, canonicalJson, urlHash } from '../../src/shared/canonical';
import { ALLOWED_KEYS, DOCUMENT_TARGET_ROLE, isKeyObservation, keyArgumentsProblem, keyEventFields } from '../../src/shared/semantic-key';
import { fingerprintHash, isReadbackObservations, judgeReadback, type Fingerprint, type ReadbackObservations } from '../../src/shared/semantic-target';
import { semanticFaculty } from '../../src/main/core/faculties/semantic';
import { pageKey } from '../../src/main/core/agent/tools/page-key';
import { semantic } from '../../extension/src/background/faculties/semantic';
import { checkResolveArgs } from '../../extension/src/background/faculties/semantic-target';
import { checkBeforeDispatch, type GrantCheckDeps } from '../../extension/src/lib/grant-checks';
import type { Grant } from '../../src/shared/types';

const FP: Fingerprint = { role: 'textbox', name: 'Query', nameAttribute: 'q', form: 'Search', ancestors: [{ role: 'form', name: 'Search' }], nth: 0 };
const NONE: ReadbackObservations = { found: true, urlChanged: false, documentChanged: false, focused: false, focusMoved: false, editable: false, stateChanged: [], domChangesNear: 0, inViewport: false };

describe('the key argument', () => {
  it('is exactly {key} with key in the allow-list, spelled exactly; checked by the schema, the console and the extension alike', () => {
    expect(ALLOWED_KEYS).toEqual(['Tab', 'Shift+Tab', 'ArrowUp', 'ArrowDown', 'ArrowLeft', 'ArrowRight', 'Home', 'End', 'PageUp', 'PageDown', 'Escape', 'Enter', 'Space']);
    const bad: unknown[] = [{}, { key: 'a' }, { key: 'enter' }, { key: ' ' }, { key: 'Control+a' }, { key: 'Shift+Enter' }, { key: 'F5' }, { key: 'Backspace' }, { key: 'Delete' }, { key: ['Tab'] }, { key: 'Tab', repeat: 2 }, null, [], 'Tab'];
    const f = semanticFaculty('key');
    const ext = semantic();
    const subject = { fingerprint: FP, ref: 'a3', focused: true };
    for (const args of bad) {
      expect(keyArgumentsProblem(args), JSON.stringify(args)).not.toBeNull();
      if (args && typeof args === 'object' && !Array.isArray(args)) {
        expect(pageKey.check({ tabId: 1, ...args }), JSON.stringify(args)).not.toBeNull();
        expect(f.validate(null as never, args as Record<string, unknown>, null as never)).toMatchObject({ ok: false, error: { code: 'invalid-arguments' } });
        expect(ext.checkRequest('key', subject, args as Record<string, unknown>)).not.toBeNull();
      }
    }
    for (const key of ALLOWED_KEYS) {
      expect(keyArgumentsProblem({ key })).toBeNull();
      expect(pageKey.check({ tabId: 1, key })).toBeNull();
      expect(f.validate(null as never, { key }, null as never)).toEqual({ ok: true, value: { key } });
      expect(ext.checkRequest('key', subject, { key })).toBeNull();
    }
    expect(pageKey.check({ tabId: 1, key: 'Tab', ref: 'a3' })).not.toBeNull();
  });

  it('maps to the KeyboardEvent fields (UI Events key values)', () => {
    expect(keyEventFields('Shift+Tab')).toEqual({ key: 'Tab', code: 'Tab', shiftKey: true });
    expect(keyEventFields('Space')).toEqual({ key: ' ', code: 'Space', shiftKey: false });
    expect(keyEventFields('Enter')).toEqual({ key: 'Enter', code: 'Enter', shiftKey: false });
  });
});

describe('the console side of page_key', () => {
  const good = { frameId: 0, documentId: 'DOC', origin: 'https://a.example', tabUrl: 'https://a.example/', frameUrl: 'https://a.example/', urlHash: 'a'.repeat(64), ref: 'a3', fingerprint: FP, blocked: null, narrower: null };
  const f = semanticFaculty('key');
  const env = (answer: unknown, asked: unknown[] = []) =>
    ({ read: async (...a: unknown[]) => (asked.push(a), { ok: true as const, value: answer }) }) as unknown as Parameters<typeof f.resolveSubject>[1];

  it('asks the extension for the focused element, and binds it with focused: true; a ref or fingerprint from the agent is refused', async () => {
    const asked: unknown[] = [];
    const r = await f.resolveSubject({ tabId: 1, arguments: { key: 'Enter' } }, env(good, asked));
    expect(asked[0]).toEqual(['semantic-target', 'resolve', 1, { focused: true }, undefined]);
    expect(r.ok && r.value).toMatchObject({ subjectHash: await fingerprintHash(FP), linkSubject: { fingerprint: FP, ref: 'a3', focused: true }, subject: { type: 'semantic-target', operation: 'key', ref: 'a3', trustedInput: false } });
    expect(await f.resolveSubject({ tabId: 1, ref: 'a3', arguments: { key: 'Enter' } }, env(good))).toMatchObject({ ok: false, error: { code: 'invalid-arguments' } });
    expect(await f.resolveSubject({ tabId: 1, fingerprint: { role: 'button' }, arguments: { key: 'Enter' } }, env(good))).toMatchObject({ ok: false, error: { code: 'invalid-arguments' } });
  });

  it('refuses a focused password field, a field of a password form and a focused field of a listed WebMCP form before the person is asked', async () => {
    for (const blocked of ['password', 'password-form']) {
      const r = await f.resolveSubject({ tabId: 1, arguments: { key: 'Enter' } }, env({ ...good, blocked }));
      expect(r).toMatchObject({ ok: false, error: { code: 'target-blocked' } });
      expect(!r.ok && r.error.message).toContain('focused element');
    }
    const ladder = await f.resolveSubject({ tabId: 1, arguments: { key: 'Enter' } }, env({ ...good, narrower: 'search_site' }));
    expect(ladder).toMatchObject({ ok: false, error: { code: 'narrower-capability-available' } });
    expect(!ladder.ok && ladder.error.message).toContain('"search_site"');
  });
});

describe('the extension side of page_key', () => {
  const f = semantic();

  it('takes the subject {fingerprint, ref, focused: true} for key only; the resolve takes {focused: true}', () => {
    expect(f.checkRequest('key', { fingerprint: FP, ref: 'a3' }, { key: 'Tab' })).toMatch(/subject/);
    expect(f.checkRequest('key', { fingerprint: FP, ref: 'a3', focused: false }, { key: 'Tab' })).toMatch(/focused/);
    expect(f.checkRequest('click', { fingerprint: FP, ref: 'a3', focused: true }, {})).toMatch(/subject/);
    expect(f.checkRequest('click', { fingerprint: FP, ref: 'a3' }, { key: 'Enter' })).toMatch(/arguments/);
    expect(checkResolveArgs({ focused: true })).toBeNull();
    expect(checkResolveArgs({ focused: 'yes' })).toMatch(/focused/);
    expect(checkResolveArgs({ focused: true, ref: 'a3' })).toMatch(/exactly one/);
  });

  it('a grant for Tab presented with Enter on the same focused element is arguments-mismatch; the grant is spent by that attempt', async () => {
    const urls = { tab: 'https://a.example/', frame: 'https://a.example/' };
    const grant: Grant = {
      requestId: 'k1', faculty: 'semantic', operation: 'key', tabId: 5, frameId: 0, documentId: 'DOC', origin: 'https://a.example',
      urlHash: await urlHash(urls.tab, urls.frame), subjectHash: await fingerprintHash(FP), argumentsHash: await argumentsHash({ key: 'Tab' }),
      nonce: '1'.repeat(32), expiresAt: Date.now() + 30_000, mac: 'f'.repeat(64),
    };
    const nonces = new Set<string>();
    const deps: GrantCheckDeps = {
      verifyGrant: async () => true,
      now: () => Date.now(),
      consumeNonce: async (n) => (nonces.has(n) ? false : (nonces.add(n), true)),
      sharedOrigin: async () => 'https://a.example',
      frameDocument: async () => ({ documentId: 'DOC', origin: 'https://a.example' }),
      pageUrls: async () => urls,
      urlHash: (t, fr) => urlHash(t, fr),
      argumentsHash: (a) => argumentsHash(a),
      argumentsBytes: (a) => canonicalJson(a).length,
    };
    const faculty = { subjectHash: f.subjectHash, check: async () => ({ ok: true as const, prepared: null }) };
    const req = { faculty: 'semantic', operation: 'key', target: { tabId: 5, frameId: 0, documentId: 'DOC' }, subject: { fingerprint: FP, ref: 'a3', focused: true }, arguments: { key: 'Enter' }, grant };
    expect(await checkBeforeDispatch(req, faculty, deps)).toMatchObject({ ok: false, refusal: 'arguments-mismatch' });
    expect(await checkBeforeDispatch({ ...req, arguments: { key: 'Tab' } }, faculty, deps)).toMatchObject({ ok: false, refusal: 'grant-reused' });
    // A fresh grant for Tab passes with Tab.
    expect(await checkBeforeDispatch({ ...req, arguments: { key: 'Tab' }, grant: { ...grant, nonce: '2'.repeat(32) } }, faculty, deps)).toMatchObject({ ok: true });
    // A click grant for the same element presented as a key is refused by the operation it binds.
    expect(await checkBeforeDispatch({ ...req, arguments: { key: 'Tab' }, grant: { ...grant, nonce: '3'.repeat(32), operation: 'click' } }, faculty, deps)).toMatchObject({ ok: false, refusal: 'grant-invalid' });
  });
});

describe('the key readback judgement (success only after a confirmed readback)', () => {
  it.each<[string, Partial<ReadbackObservations>, string | null]>([
    ['Tab: focus on the element navigation chose', { focusMoved: true, key: { default: 'focus-moved', landed: true } }, 'focus-moved'],
    ['Tab past the last stop: the focus left', { focusMoved: true, key: { default: 'focus-left', landed: true } }, 'focus-left'],
    ['Tab: the page moved the focus elsewhere (a focus trap)', { focusMoved: true, key: { default: 'focus-moved', landed: false } }, 'focus-moved-elsewhere'],
    ['Tab: the focus did not move at all', { key: { default: 'focus-moved', landed: false } }, null],
    ['Enter on a button: the page answered near it', { domChangesNear: 1, key: { default: 'activated', landed: false } }, 'activated:dom-changed-near-target'],
    ['Enter on a button: nothing happened', { key: { default: 'activated', landed: false } }, null],
    ['Enter in a field: the form submitted and the page left', { documentChanged: true, found: false, key: { default: 'submitted', landed: false } }, 'document-changed'],
    ['Enter in a field: a single-page app changed the URL', { urlChanged: true, key: { default: 'submitted', landed: false } }, 'url-changed'],
    ['Space on a checkbox: checked', { stateChanged: ['checked'], key: { default: 'activated', landed: false } }, 'activated:state-changed:checked'],
    ['ArrowDown in a radio group: the next radio checked and focused', { focusMoved: true, key: { default: 'checked', landed: true } }, 'checked'],
    ['PageDown: the page scrolled', { key: { default: 'scrolled', landed: true } }, 'scrolled'],
    ['PageDown at the end of the page: nothing moved', { key: { default: 'scrolled', landed: false } }, null],
    ['Escape in a modal dialog: closed', { key: { default: 'dialog-closed', landed: true } }, 'dialog-closed'],
    ['Escape with no dialog: the page closed its own menu', { domChangesNear: 2, key: { default: 'none', landed: false } }, 'dom-changed-near-target'],
    ['Escape with no dialog and no reaction', { key: { default: 'none', landed: false } }, null],
    ['the page cancelled the keydown and did nothing', { key: { default: 'prevented', landed: false } }, null],
    ['the page cancelled the keydown and handled the key itself', { stateChanged: ['expanded'], key: { default: 'prevented', landed: false } }, 'state-changed:expanded'],
    ['no key observation at all', {}, null],
  ])('%s', (_what, o, effect) => {
    const v = judgeReadback('key', { ...NONE, ...o });
    if (effect === null) expect(v.confirmed).toBe(false);
    else expect(v).toEqual({ confirmed: true, effect });
  });

  it('checks the shape of the key observation', () => {
    expect(isKeyObservation({ default: 'focus-moved', landed: true })).toBe(true);
    expect(isKeyObservation({ default: 'typed', landed: true })).toBe(false);
    expect(isKeyObservation({ default: 'scrolled', landed: 'yes' })).toBe(false);
    expect(isKeyObservation({ default: 'scrolled', landed: true, extra: 1 })).toBe(false);
    expect(isReadbackObservations({ ...NONE, key: { default: 'scrolled', landed: true } })).toBe(true);
    expect(isReadbackObservations({ ...NONE, key: { default: 'landed' } })).toBe(false);
  });

  it('describes the document (nothing focused) with a role no page element can have', () => {
    expect(DOCUMENT_TARGET_ROLE).toMatch(/\s/); // roleOf takes the first token of role: never whitespace
    expect(DOCUMENT_TARGET_ROLE.length).toBeLessThanOrEqual(32);
  });
});
