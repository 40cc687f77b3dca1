import { describe, expect, it } from 'vitest';
import {
  peekProtocolVersion,
  PROTOCOL_VERSION,
  validateConsoleToExtension,
  validateExtensionToConsole,
  validateHostToConsole,
  validateHostToExtension,
  validateRequestValue,
} from '../../src/shared/protocol';

const H32 = 'a'.repeat(32);
const H64 = 'b'.repeat(64);
const PUB = 'B' + 'A'.repeat(86) + '=';
const EXT = 'abjcbldekikalfjmmiemkjeemkfphege';
const grant = {
  requestId: 'r1',
  faculty: 'webmcp-invoke',
  operation: 'invoke',
  tabId: 1,
  frameId: 0,
  documentId: 'DOC',
  origin: 'https://a.example',
  urlHash: H64,
  subjectHash: H64,
  argumentsHash: H64,
  nonce: H32,
  expiresAt: 1,
  mac: H64,
};
const invoke = {
  op: 'dispatch',
  faculty: 'webmcp-invoke',
  operation: 'invoke',
  target: { tabId: 1, frameId: 0, documentId: 'DOC' },
  subject: { toolName: 'add', descriptorHash: H64 },
  arguments: { a: 1 },
  grant,
  timeoutMs: 1000,
};

const goodFromExt: unknown[] = [
  { type: 'hello', protocolVersion: 1, extensionId: EXT, extensionVersion: '0.1.0', pairingId: null },
  { type: 'hello', protocolVersion: 1, extensionId: EXT, extensionVersion: '1.2.3.4', pairingId: H32 },
  { type: 'pair-begin', publicKey: PUB, commitment: H64 },
  { type: 'pair-reveal', nonce: H32 },
  { type: 'auth-begin', pairingId: H32, nonce: H32 },
  { type: 'auth-response', proof: H64 },
  { type: 'response', id: 'abc', result: { ok: true, value: { any: ['json', 1, null] } } },
  { type: 'response', id: 'abc', result: { ok: false, error: { code: 'tool-missing', message: 'x', detail: { a: 1 } } } },
  { type: 'event', event: { kind: 'tools-changed', tabId: 1, frameId: 0, documentId: 'D' } },
  { type: 'event', event: { kind: 'navigated', tabId: 1, frameId: 0, documentId: 'D', url: 'https://x/' } },
  { type: 'event', event: { kind: 'tabs-changed', tabs: [{ tabId: 1, windowId: 1, title: 't', url: 'u', origin: 'o', documentId: 'd', sharedAt: 5 }] } },
  { type: 'unpair' },
  { type: 'ping', seq: 0 },
  { type: 'pong', seq: 7 },
  { type: 'error', code: 'bad-message', message: 'why' },
];

const badFromExt: [string, unknown, RegExp][] = [
  ['not an object', 'hello', /expected an object/],
  ['array', [], /expected an object/],
  ['unknown type', { type: 'nope' }, /unknown type/],
  ['missing field', { type: 'hello', protocolVersion: 1, extensionId: EXT, extensionVersion: '1' }, /pairingId: missing/],
  ['extra field', { type: 'unpair', x: 1 }, /x: unexpected field/],
  ['bad extension id', { type: 'hello', protocolVersion: 1, extensionId: 'ABC', extensionVersion: '1', pairingId: null }, /extensionId/],
  ['short nonce', { type: 'pair-reveal', nonce: 'abc' }, /nonce/],
  ['uppercase hex', { type: 'auth-response', proof: 'B'.repeat(64) }, /proof/],
  ['public key wrong length', { type: 'pair-begin', publicKey: 'AAAA', commitment: H64 }, /publicKey/],
  ['negative seq', { type: 'ping', seq: -1 }, /seq/],
  ['fractional seq', { type: 'ping', seq: 1.5 }, /seq/],
  ['string seq', { type: 'pong', seq: '1' }, /seq/],
  ['bad request id', { type: 'response', id: 'a b', result: { ok: true, value: 1 } }, /\.id/],
  ['result without ok', { type: 'response', id: 'a', result: { value: 1 } }, /result\.ok/],
  ['result ok true without value', { type: 'response', id: 'a', result: { ok: true } }, /value: missing/],
  ['error without message', { type: 'response', id: 'a', result: { ok: false, error: { code: 'x' } } }, /message: missing/],
  ['error code with spaces', { type: 'error', code: 'a b', message: '' }, /code/],
  ['huge error message', { type: 'error', code: 'x', message: 'm'.repeat(5000) }, /message: length/],
  ['unknown event', { type: 'event', event: { kind: 'boom' } }, /unknown kind/],
  ['negative tab id', { type: 'event', event: { kind: 'tools-changed', tabId: -1, frameId: 0, documentId: 'D' } }, /tabId/],
  ['empty document id', { type: 'event', event: { kind: 'tools-changed', tabId: 1, frameId: 0, documentId: '' } }, /documentId/],
  ['tabs not array', { type: 'event', event: { kind: 'tabs-changed', tabs: {} } }, /expected an array/],
];

describe('validateExtensionToConsole', () => {
  it.each(goodFromExt.map((m) => [JSON.stringify(m).slice(0, 60), m]))('accepts %s', (_n, m) => {
    expect(validateExtensionToConsole(m)).toEqual({ ok: true, value: m });
  });
  it.each(badFromExt)('refuses %s', (_n, m, why) => {
    const r = validateExtensionToConsole(m);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error.code).toBe('bad-message');
      expect(r.error.message).toMatch(why);
    }
  });
  it('refuses non-JSON values that a structured clone could carry', () => {
    expect(validateExtensionToConsole({ type: 'response', id: 'a', result: { ok: true, value: Number.NaN } }).ok).toBe(false);
    expect(validateExtensionToConsole({ type: 'response', id: 'a', result: { ok: true, value: () => 1 } }).ok).toBe(false);
  });
  it('refuses values nested deeper than the limit', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 100; i++) deep = [deep];
    expect(validateExtensionToConsole({ type: 'response', id: 'a', result: { ok: true, value: deep } }).ok).toBe(false);
  });
  it('never throws on hostile input', () => {
    const hostile = { get type(): string { throw new Error('boom'); } };
    const r = validateExtensionToConsole(hostile);
    expect(r.ok).toBe(false);
  });
});

describe('validateConsoleToExtension', () => {
  const good: unknown[] = [
    { type: 'hello-ack', protocolVersion: 1, consoleVersion: '0.1.0', paired: false },
    { type: 'pair-offer', publicKey: PUB, nonce: H32 },
    { type: 'pair-result', accepted: true, pairingId: H32 },
    { type: 'pair-result', accepted: false },
    { type: 'auth-challenge', nonce: H32, proof: H64 },
    { type: 'auth-ok' },
    { type: 'request', id: 'r', request: { op: 'list-tabs' } },
    { type: 'request', id: 'r', request: { op: 'share-tab', tabId: 3 } },
    { type: 'request', id: 'r', request: { op: 'discover', tabId: 3 } },
    { type: 'request', id: 'r', request: { op: 'cancel', requestId: 'x' } },
    { type: 'request', id: 'r', request: invoke },
    { type: 'unpaired' },
    { type: 'error', code: 'version-mismatch', message: 'v' },
  ];
  it.each(good.map((m) => [JSON.stringify(m).slice(0, 60), m]))('accepts %s', (_n, m) => {
    expect(validateConsoleToExtension(m).ok).toBe(true);
  });

  const bad: [string, unknown, RegExp][] = [
    ['accepted without pairingId', { type: 'pair-result', accepted: true }, /pairingId: required/],
    ['unknown op', { type: 'request', id: 'r', request: { op: 'eval', code: '1' } }, /unknown op/],
    ['dispatch with bad faculty name', { type: 'request', id: 'r', request: { ...invoke, faculty: 'a b' } }, /faculty/],
    ['dispatch with bad operation', { type: 'request', id: 'r', request: { ...invoke, operation: 'Click!' } }, /operation/],
    ['dispatch with a subject that is no object', { type: 'request', id: 'r', request: { ...invoke, subject: [1] } }, /subject: expected an object/],
    ['grant without urlHash', { type: 'request', id: 'r', request: { ...invoke, grant: { ...grant, urlHash: undefined } } }, /urlHash: missing/],
    ['grant with the old toolName field', { type: 'request', id: 'r', request: { ...invoke, grant: { ...grant, toolName: 'add' } } }, /toolName: unexpected/],
    ['invoke with array arguments', { type: 'request', id: 'r', request: { ...invoke, arguments: [1] } }, /arguments: expected an object/],
    ['invoke with oversized arguments', { type: 'request', id: 'r', request: { ...invoke, arguments: { s: 'x'.repeat(70_000) } } }, /bytes exceed/],
    ['invoke with zero timeout', { type: 'request', id: 'r', request: { ...invoke, timeoutMs: 0 } }, /timeoutMs/],
    ['grant missing mac', { type: 'request', id: 'r', request: { ...invoke, grant: { ...grant, mac: undefined } } }, /mac: missing/],
    ['grant extra field', { type: 'request', id: 'r', request: { ...invoke, grant: { ...grant, extra: 1 } } }, /extra: unexpected/],
    ['grant with float expiry', { type: 'request', id: 'r', request: { ...invoke, grant: { ...grant, expiresAt: 1.5 } } }, /expiresAt/],
    ['extension-only message', { type: 'pair-begin', publicKey: PUB, commitment: H64 }, /unknown type/],
  ];
  it.each(bad)('refuses %s', (_n, m, why) => {
    const r = validateConsoleToExtension(m);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.message).toMatch(why);
  });
});

describe('host messages', () => {
  it('host-hello and host-error', () => {
    expect(validateHostToConsole({ type: 'host-hello', callerOrigin: `chrome-extension://${EXT}/`, hostVersion: '0.1.0', pid: 12 }).ok).toBe(true);
    expect(validateHostToConsole({ type: 'host-hello', callerOrigin: '', hostVersion: '0.1.0', pid: 12 }).ok).toBe(false);
    expect(validateHostToExtension({ type: 'host-error', code: 'console-not-running', message: 'm' }).ok).toBe(true);
    expect(validateHostToExtension({ type: 'host-error', code: 'other', message: 'm' }).ok).toBe(false);
  });
});

describe('response values by op', () => {
  const tab = { tabId: 1, windowId: 2, title: 't', url: 'https://a/', origin: 'https://a', documentId: 'D', sharedAt: 1, extraFromNewerExtension: true };
  const discovery = {
    tabId: 1,
    origin: 'https://a',
    url: 'https://a/',
    documentId: 'D',
    support: { modelContext: true, legacyApi: null, argumentForm: 'object' },
    tools: [
      { name: 'add', title: '', description: 'd', inputSchema: {}, origin: 'https://a', descriptorHash: H64, tabId: 1, frameId: 0, documentId: 'D', kind: 'declarative' },
    ],
    violations: [{ frameId: 2, reason: 'cross-origin-frame' }],
  };
  it.each([
    ['list-tabs', [tab], true],
    ['list-tabs', [{ ...tab, tabId: 'x' }], false],
    ['share-tab', tab, true],
    ['unshare-tab', null, true],
    ['unshare-tab', {}, false],
    ['discover', discovery, true],
    ['discover', { ...discovery, support: { ...discovery.support, argumentForm: 'xml' } }, false],
    ['dispatch', { outcome: 'succeeded', result: '{"sum":42}', elapsedMs: 3 }, true],
    ['dispatch', { outcome: 'refused', refusal: 'grant-expired' }, true],
    ['dispatch', { outcome: 'maybe' }, false],
    ['cancel', { cancelled: true }, true],
    ['cancel', { cancelled: 'yes' }, false],
  ] as const)('%s %j → %s', (op, value, expected) => {
    expect(validateRequestValue(op, value).ok).toBe(expected);
  });
});

describe('peekProtocolVersion', () => {
  it('reads the version of hello and hello-ack only', () => {
    expect(peekProtocolVersion({ type: 'hello', protocolVersion: 9, whatever: true })).toBe(9);
    expect(peekProtocolVersion({ type: 'hello-ack', protocolVersion: PROTOCOL_VERSION })).toBe(PROTOCOL_VERSION);
    expect(peekProtocolVersion({ type: 'ping', protocolVersion: 9 })).toBeNull();
    expect(peekProtocolVersion(null)).toBeNull();
  });
});
